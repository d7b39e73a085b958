#!/usr/bin/env python3
"""Goldens for mlaspec's chat-template renderer: jinja2's rendering of the in-repo templates.

The environment is the one transformers' apply_chat_template builds: an
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loop-controls extension,
a tojson filter that calls json.dumps (no HTML escaping, ensure_ascii=False) and a
raise_exception global; the variables are messages, add_generation_prompt, tools, documents and
the special tokens.

    python3 python/golden/chat_templates.py            # writes tests/data/chat_templates/goldens.json
    python3 python/golden/chat_templates.py --check    # renders again, compares with the file;
                                                       # exit 77 when jinja2 is not importable

Templates: models/target's chat_template (the shipped model) and tests/data/chat_templates/*.jinja,
over fixed and seeded random conversations; then SNIPPETS (one-line templates, one construct
each) and 200 seeded random templates mixing every whitespace control, against one conversation.
"""

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "chat_templates"
OUT = DATA / "goldens.json"


def hf_environment():
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def templates():
    config = json.loads((ROOT / "models" / "target" / "tokenizer_config.json").read_text())
    out = [("shipped_target", config["chat_template"],
            {"bos_token": config["bos_token"], "eos_token": config["eos_token"]})]
    for path in sorted(DATA.glob("*.jinja")):
        out.append((path.stem, path.read_text(encoding="utf-8"),
                    {"bos_token": "<s>", "eos_token": "</s>"}))
    return out


QUOTES = "He said \"hi\" and {{ not a tag }} {% neither %} {# nor #} it's 'quoted' \\ back\n\tslash"
UNICODE = "héllo 世界 😀 \u200b مرحبا שלום e\u0301 \u00a0nbsp"
LONG = "The quick brown fox jumps over the lazy dog. " * 6

FIXED = [
    ("user", [("user", "Hello!")]),
    ("system_user", [("system", "You are terse."), ("user", "What is 2+2?")]),
    ("multi_turn", [("user", "Hi"), ("assistant", "Hello! How can I help?"), ("user", "Sum 3 and 4.")]),
    ("think", [("system", "Reason first."), ("user", "Q1"),
               ("assistant", "<think>step by step</think>The answer is 7."), ("user", "Q2")]),
    ("two_systems", [("system", "Rule one."), ("system", "Rule two."), ("user", "Go")]),
    ("unicode", [("user", UNICODE), ("assistant", UNICODE[::-1])]),
    ("empty_content", [("user", ""), ("assistant", ""), ("user", "  padded  ")]),
    ("quotes_braces", [("system", QUOTES), ("user", QUOTES)]),
    ("assistant_first", [("assistant", "I speak first."), ("user", "ok")]),
    ("tool_role", [("user", "weather?"), ("tool", "sunny")]),
    ("reverse_long", [("user", "/reverse abc😀d"), ("assistant", LONG), ("user", LONG)]),
    ("no_messages", []),
]

FRAGMENTS = ["Hello", "  ", "\n", "{{", "}}", "{%", "%}", "'", '"', "\\", "世界", "😀", "</think>",
             "/reverse ", "x" * 30, "\t", "é", "-", "+", "#}", "0", "None"]


def random_cases(seed, count):
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        n = rng.randint(1, 6)
        msgs = []
        for _ in range(n):
            role = rng.choice(["system", "user", "user", "assistant", "assistant", "tool"])
            content = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 8)))
            msgs.append((role, content))
        cases.append((f"random_{k}", msgs))
    return cases


TOOLS = [
    {"type": "function",
     "function": {"name": "get_weather", "description": "Weather for a city, in °C",
                  "parameters": {"type": "object",
                                 "properties": {"city": {"type": "string"},
                                                "days": {"type": "integer", "minimum": 1}},
                                 "required": ["city"]}}},
    {"type": "function", "function": {"name": "noop", "parameters": {}}},
]
TOOL_MESSAGES = [
    {"role": "system", "content": "Use tools."},
    {"role": "user", "content": "Weather in Paris for 2 days?"},
    {"role": "assistant", "content": "",
     "tool_calls": [{"type": "function",
                     "function": {"name": "get_weather",
                                  "arguments": {"days": 2, "city": "Paris", "ratio": 0.5,
                                                "tags": ["a", None, True]}}}]},
    {"role": "tool", "content": "{\"temp\": 21.5}"},
    {"role": "tool", "content": ""},
    {"role": "assistant", "content": "It is 21.5 °C."},
]


# One-line templates, each rendered once against SNIPPET_CONTEXT: the filters, tests, methods,
# operators, literals, loops and whitespace rules one by one.
SNIPPETS = [
    '{{ "%s" }}',
    '{{ [1,2,3]|join(", ") }}|{{ "abc"|list }}|{{ {"a":1}|list }}',
    '{{ "  hi  "|trim }}|{{ "xxhixx"|trim("x") }}',
    '{{ "Hello World"|lower }}|{{ "hello world"|title }}|{{ "hELLO"|capitalize }}',
    '{{ "a-b-c"|replace("-", "+", 1) }}|{{ "abc"|replace("", "_") }}',
    '{{ [3,1,2]|sort }}|{{ ["b","A","c"]|sort }}|{{ [3,1,2]|sort(reverse=true) }}',
    '{{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ []|first }}|',
    '{{ "42"|int + 1 }}|{{ "4.7"|int }}|{{ "x"|int(7) }}|{{ "2.5"|float }}|{{ 3|float }}',
    '{{ -3|abs }}|{{ (-3)|abs }}|{{ -3.5|abs }}',
    '{{ [1,2,3]|reverse|list }}|{{ "abc"|reverse }}',
    '{{ {"b":1,"a":2}|items|list }}|{{ {"b":1,"a":2}.keys()|list }}|{{ {"b":1}.values()|list }}',
    '{{ {"a":1}.get("a") }}|{{ {"a":1}.get("z") }}|{{ {"a":1}.get("z", 5) }}',
    '{{ "a,b,,c".split(",") }}|{{ " a  b ".split() }}|{{ "a b c".split(" ", 1) }}|{{ "a b c".split(none, 1) }}',
    '{{ "hello".startswith("he") }}{{ "hello".endswith(("x","lo")) }}{{ "hello".find("l") }}{{ "hello".count("l") }}',
    '{{ "-".join(["a","b"]) }}|{{ "  x ".strip() }}|{{ "  x ".lstrip() }}|{{ "  x ".rstrip() }}|{{ "xyx".strip("x") }}',
    '{{ 1 == 1.0 }}{{ true == 1 }}{{ "1" == 1 }}{{ none == none }}{{ [1,2] == [1,2] }}{{ (1,2) == [1,2] }}',
    '{{ 1 in [1,2] }}{{ "a" in {"a":1} }}{{ "x" not in "abc" }}{{ 3 in (1,2) }}',
    '{{ 10 % 3 }}|{{ -10 % 3 }}|{{ 10 % -3 }}|{{ 7.5 % 2 }}|{{ -7.5 // 2 }}|{{ 2 ** -1 }}|{{ 2 ** 0.5 }}',
    '{{ "ab" * 3 }}|{{ 3 * "ab" }}|{{ [0] * 3 }}|{{ "ab" * 0 }}|{{ "ab" * -1 }}',
    '{{ 1 ~ 2 ~ none ~ true }}|{{ [1] ~ "x" }}',
    '{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ 1 is number }}{{ true is number }}{{ true is boolean }}{{ 1 is integer }}{{ 1.0 is float }}{{ "a" is string }}{{ {} is mapping }}{{ [] is iterable }}{{ "a" is sequence }}',
    '{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(4) }}{{ 1 is eq 1 }}{{ 2 is gt 1 }}{{ 1 is in [1] }}{{ none is sameas none }}{{ "abc" is lower }}{{ "ABC" is upper }}{{ "1" is lower }}',
    '{% for i in range(3) %}{{ loop.index }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{% endfor %}',
    '{% for i in range(1, 10, 3) %}{{ i }}{% endfor %}|{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}',
    '{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}|{% for k in {"x":1,"y":2} %}{{ k }}{% endfor %}',
    '{% for c in "héllo" %}[{{ c }}]{% endfor %}',
    '{% for i in [1,2,3,4] %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% else %}E{% endfor %}|{% for i in [] %}x{% else %}empty{% endfor %}',
    '{% for i in [1,2,3] if i != 2 %}{{ i }}{{ loop.length }}{% endfor %}',
    '{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}',
    '{% set ns = namespace(a=1) %}{% set ns.b = 2 %}{{ ns.a + ns.b }}',
    '{{ (1, ) }}|{{ () }}|{{ (1) }}|{{ [1, 2, ] }}|{{ {"a": 1, } }}',
    '{{ 1 if true else 2 }}{{ 1 if false else 2 if true else 3 }}',
    '{{ not true or true }}{{ not (true or true) }}{{ true and false or true }}{{ 0 or "x" }}{{ 1 and "y" }}{{ none or [] }}',
    '{{ [1,2,3,4,5][1:4:2] }}|{{ [1,2,3][-1] }}|{{ [1,2,3][5] }}|{{ "abc"[-2:] }}|{{ [1,2,3][::-2] }}|{{ [1,2,3][10:] }}|{{ "abc"[1] }}',
    '{{ messages|selectattr("role", "equalto", "user")|list|length }}|{{ messages|map(attribute="role")|join(",") }}|{{ messages|rejectattr("role", "in", ["user"])|map(attribute="content")|list }}',
    '{{ [0, 1, "", "a", none]|select|list }}|{{ [0, 1, "", "a"]|reject|list }}|{{ [1,2,3,4]|select("odd")|list }}|{{ ["a","b"]|map("upper")|list }}',
    '{{ messages[0].content }}|{{ messages[0]["role"] }}|{{ messages[5] }}|{{ messages[0].nope }}|{{ messages.0.role }}',
    '{% macro greet(name, greeting="Hi") %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet("A") }} {{ greet("B", "Yo") }} {{ greet(greeting="Hey", name="C") }}',
    '{%- set x -%}\n  inside\n{%- endset %}[{{ x }}]',
    '{{ "x\\ty\\nz"|indent(2) }}|{{ "a\\nb"|indent(2, true) }}|{{ "a\\n\\nb"|indent(2, blank=true) }}|{{ "a\\nb"|indent("--") }}',
    '{{ {"a": [1, 2.5, none, true], "b": "é\\"\\n"}|tojson }}|{{ [1, [2, {}]]|tojson(indent=1) }}|{{ {"b": 1, "a": 2}|tojson(sort_keys=true) }}|{{ {"a": 1}|tojson(separators=(",", ":")) }}',
    '{{ 1.5 }}|{{ 2.0 }}|{{ 1e100 }}|{{ 0.000123 }}|{{ 123456789.123 }}|{{ -0.0 }}|{{ 1/3 }}|{{ 3.0 * 1.1 }}',
    '{{ "it\'s" }}|{{ ["it\'s", \'say "x"\', "both \' \\""] }}|{{ ["tab\\there", "nl\\n", "\\x01"] }}',
    '{{ "\\u00e9\\x41\\101\\777" }}|{{ \'single \\\'q\\\'\' }}|{{ "a" "b" \'c\' }}',
    '{{ 1 < 2.5 }}{{ "abc" < "abd" }}{{ [1, 2] < [1, 3] }}{{ (1, 2) <= (1, 2) }}{{ 2 >= 3 }}',
    '{{ 9223372036854775807 }}|{{ -9223372036854775807 - 1 }}|{{ 5 // 2 * 2 + 5 % 2 }}|{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}',
    '{{ messages|length }}{{ messages[0].content|length }}{{ ""|length }}{{ {}|length }}',
    '{{ "abc"|string }}{{ 12|string }}{{ none|string }}{{ [1]|string }}',
    '{{ x|default("d") }}{{ none|default("d") }}{{ none|default("d", true) }}{{ ""|d("e", true) }}{{ 0|default(5, boolean=true) }}',
    '{{ y.z is defined if y is defined else "nope" }}',
    '{{ range(3)|list }}|{{ range(0)|list }}|{{ dict(a=1, b="x") }}',
    '{% if messages %}has{% endif %}{% if not messages[0].content %}empty{% else %}full{% endif %}',
    '{{ "%s" }}|{{ 1 if none }}|{{ [none] }}',
    '{%raw%} {{ raw }} {%endraw%}|{%- raw -%} x {%- endraw -%}|\n   {%- if true %}  A  {% endif -%}   |\n{% if true %}\n  line\n{% endif %}\n  {# c #}\nx {{- " y " -}} z\n{%+ if true %}keep{% endif %}\n{{ "a" }}\n{{ "b" }}',
]
SNIPPET_CONTEXT = {"messages": [{"role": "user", "content": " Hi é"},
                                {"role": "assistant", "content": ""},
                                {"role": "system", "content": "s\n"}],
                   "add_generation_prompt": True}


def random_templates(seed, count):
    """Templates built at random from tags with every whitespace control, comments, text runs
    of spaces and newlines, nested if/else/for and namespace updates: jinja2's trimming rules
    meet in every combination."""
    rng = random.Random(seed)
    opens, closes = ["{%", "{%-", "{%+"], ["%}", "-%}", "+%}"]
    texts = ["", " ", "  ", "\n", " \n ", "\t", "x", "a b", "\n\n", "  \n", "é "]
    exprs = ["m.content", "m.role|upper", "loop.index", "ns.n", "'q'", "m.content|length",
             "loop.last", "messages|length", "m.role ~ '!'", "(m.content ~ 'x')[1:]",
             "m.content.strip()"]
    conds = ["m.role == 'user'", "loop.first", "not loop.last", "m.content", "ns.n > 1",
             "m.role in ['system']"]

    def tag(body):
        return rng.choice(opens) + " " + body + " " + rng.choice(closes)

    def block(depth):
        parts = []
        for _ in range(rng.randint(1, 4)):
            k = rng.random()
            if k < 0.3:
                parts.append(rng.choice(texts))
            elif k < 0.55:
                parts.append(rng.choice(["{{", "{{-"]) + " " + rng.choice(exprs) + " " +
                             rng.choice(["}}", "-}}"]))
            elif k < 0.65:
                parts.append(rng.choice(["{#", "{#-"]) + " c " + rng.choice(["#}", "-#}"]))
            elif k < 0.8 and depth < 3:
                parts.append(tag("if " + rng.choice(conds)) + block(depth + 1) +
                             (tag("else") + block(depth + 1) if rng.random() < 0.4 else "") +
                             tag("endif"))
            elif k < 0.9:
                parts.append(tag("set ns.n = ns.n + 1"))
            elif depth < 3:
                parts.append(tag("for m in messages") + block(depth + 1) + tag("endfor"))
        return "".join(rng.choice(texts) + p for p in parts) + rng.choice(texts)

    out = []
    for _ in range(count):
        tail = block(1).replace("m.", "messages[0].").replace("loop.", "messages[0].")
        out.append("{% set ns = namespace(n=0) %}{% for m in messages %}" + block(1) +
                   "{% endfor %}" + tail)
    return out


def contexts(specials):
    out = []
    for name, msgs in FIXED + random_cases(1234, 16):
        for agp in (True, False):
            ctx = {"messages": [{"role": r, "content": c} for r, c in msgs],
                   "add_generation_prompt": agp, "tools": None, "documents": None}
            ctx.update(specials)
            out.append((f"{name}/{'gen' if agp else 'nogen'}", ctx))
    ctx = {"messages": TOOL_MESSAGES, "add_generation_prompt": True, "tools": TOOLS,
           "documents": None}
    ctx.update(specials)
    out.append(("tool_calls/gen", ctx))
    return out


def render_all():
    import jinja2

    env = hf_environment()
    result = {"generator": "python/golden/chat_templates.py", "jinja2": jinja2.__version__,
              "templates": []}
    for name, source, specials in templates():
        compiled = env.from_string(source)
        cases = []
        for case_name, ctx in contexts(specials):
            case = {"name": case_name, "context": ctx}
            try:
                case["output"] = compiled.render(**ctx)
            except jinja2.exceptions.TemplateError as e:
                # raise_exception's TemplateError carries the template's own message; other
                # errors (undefined values, type errors) only need to be errors.
                kind = "raise_exception" if type(e) is jinja2.exceptions.TemplateError else "error"
                case["error"] = {"kind": kind, "message": str(e)}
            except (TypeError, ValueError, IndexError, KeyError) as e:
                case["error"] = {"kind": "error", "message": f"{type(e).__name__}: {e}"}
            cases.append(case)
        result["templates"].append({"name": name, "cases": cases})
    result["snippet_context"] = SNIPPET_CONTEXT
    result["snippets"] = []
    for source in SNIPPETS + random_templates(99, 200):
        case = {"source": source}
        try:
            case["output"] = env.from_string(source).render(**SNIPPET_CONTEXT)
        except Exception as e:  # noqa: BLE001 - any jinja2 failure only needs to be a failure
            case["error"] = f"{type(e).__name__}: {e}"
        result["snippets"].append(case)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="compare a fresh rendering with the committed goldens")
    args = parser.parse_args()
    try:
        import jinja2  # noqa: F401
    except ImportError:
        print("jinja2 is not importable: skipped")
        return 77 if args.check else 1
    fresh = render_all()
    if args.check:
        committed = json.loads(OUT.read_text(encoding="utf-8"))
        bad = 0
        for t_new, t_old in zip(fresh["templates"], committed["templates"]):
            for c_new, c_old in zip(t_new["cases"], t_old["cases"]):
                if c_new != c_old:
                    bad += 1
                    print(f"differs: {t_new['name']} / {c_new['name']}")
        for s_new, s_old in zip(fresh["snippets"], committed.get("snippets", [])):
            if s_new != s_old:
                bad += 1
                print(f"differs: snippet {s_new['source']!r}")
        if len(fresh["snippets"]) != len(committed.get("snippets", [])):
            bad += 1
            print("the set of snippets differs")
        if len(fresh["templates"]) != len(committed["templates"]):
            bad += 1
            print("the set of templates differs")
        n = sum(len(t["cases"]) for t in fresh["templates"])
        print(f"jinja2 {fresh['jinja2']}: {n} renderings and {len(fresh['snippets'])} snippets, "
              f"{bad} differ from {OUT.name}")
        return 1 if bad else 0
    OUT.write_text(json.dumps(fresh, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    n = sum(len(t["cases"]) for t in fresh["templates"])
    errors = sum(1 for t in fresh["templates"] for c in t["cases"] if "error" in c)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(fresh['templates'])} templates, {n} cases "
          f"({errors} errors), {len(fresh['snippets'])} snippets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
