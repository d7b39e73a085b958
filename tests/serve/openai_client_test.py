#!/usr/bin/env python3
"""`mlaspec serve` through the official `openai` Python client, against `mlaspec generate`.

Starts the server on the shipped pair (models/target + models/drafter) on a free loopback port,
then: completions and chat completions, streaming and not, greedy; each text must equal what
`mlaspec generate` prints for the same prompt (chat: the prompt the chat template makes). Logprobs
come back in the shapes the client parses (completions and chat, streaming and not: one entry per
token, the greedy token the most likely one, streamed equal to non-streamed); an out-of-range
top_logprobs raises the client's BadRequestError; `mlaspec bench-serve` completes its requests
against the same server. Then the same texts from `serve --draft dspark --verify-width adaptive`
(a DSpark checkpoint written here: the shipped DFlash backbone and a random confidence head), with
every step's verify width in /metrics.

Exit 77 (ctest: skipped) when `openai` cannot be imported; scripts/install-deps.sh installs it.

    python3 tests/serve/openai_client_test.py --mlaspec build/mlaspec
"""
import argparse
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "models")
QUESTION = ("Maya buys 9 oranges for 16 dollars each. She pays with 500 dollars. "
            "How much change does she get?")
# What the model's chat_template makes of one user message with the generation prompt.
CHAT_PROMPT = "<|bos|><|user|>" + QUESTION + "<|assistant|>"
MAX_TOKENS = 48


def generate(mlaspec, prompt):
    out = subprocess.run(
        [mlaspec, "generate", "--model", os.path.join(MODELS, "target"), "--prompt", prompt,
         "--max-tokens", str(MAX_TOKENS), "--json"],
        check=True, capture_output=True, text=True, env=dict(os.environ, MLASPEC_LOG="warn"))
    return json.loads(out.stdout)["text"]


def start_server(mlaspec, log, extra=()):
    proc = subprocess.Popen(
        [mlaspec, "serve", "--model", os.path.join(MODELS, "target"), "--port", "0",
         "--max-running", "4", "--served-model-name", "tiny", *extra],
        stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        raise SystemExit("serve did not start: " + line)
    return proc, line.strip().split("listening on ")[1]


def stop_server(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def write_dspark(path):
    """A DSpark checkpoint for the shipped target: models/drafter's weights (no Markov head) and a
    random confidence head around 0.5 in a shard of its own, listed by an index."""
    drafter = os.path.join(MODELS, "drafter")
    backbone = os.path.join(path, "backbone.safetensors")
    shutil.copy(os.path.join(drafter, "model.safetensors"), backbone)
    with open(os.path.join(drafter, "config.json")) as f:
        cfg = json.load(f)
    cfg.update(model_type="dspark", markov_rank=0, confidence_head=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(backbone, "rb") as f:
        names = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    weight_map = {k: "backbone.safetensors" for k in names if k != "__metadata__"}
    weight_map["confidence.weight"] = weight_map["confidence.bias"] = "heads.safetensors"
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": weight_map}, f)
    h = cfg["hidden_size"]
    w = [random.gauss(0.0, h ** -0.5) for _ in range(h)] + [0.0]
    header = json.dumps({
        "confidence.weight": {"dtype": "F32", "shape": [1, h], "data_offsets": [0, 4 * h]},
        "confidence.bias": {"dtype": "F32", "shape": [1], "data_offsets": [4 * h, 4 * h + 4]}})
    header += " " * (-len(header) % 8)
    with open(os.path.join(path, "heads.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header.encode() + struct.pack(f"<{h + 1}f", *w))


def check_dspark(mlaspec, expected, check):
    """serve --draft dspark --verify-width adaptive: the client's texts equal generate's, and
    /metrics counts one verify width per step."""
    import openai
    import urllib.request
    with tempfile.TemporaryDirectory() as ckpt, tempfile.TemporaryFile(mode="w+") as log:
        write_dspark(ckpt)
        proc, url = start_server(mlaspec, log, ["--draft", "dspark", "--draft-model", ckpt,
                                                "--verify-width", "adaptive"])
        try:
            client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0,
                                   timeout=60)
            c = client.completions.create(model="tiny", prompt=CHAT_PROMPT,
                                          max_tokens=MAX_TOKENS, temperature=0)
            check("dspark completion text", c.choices[0].text, expected)
            text = ""
            for chunk in client.chat.completions.create(
                    model="tiny", messages=[{"role": "user", "content": QUESTION}],
                    max_tokens=MAX_TOKENS, temperature=0, stream=True):
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
            check("dspark streamed chat text", text, expected)
            metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
            counts = {line.split()[0]: float(line.split()[1]) for line in metrics.splitlines()
                      if line.startswith(("mlaspec_verify_width_count",
                                          "mlaspec_accept_length_count"))}
            widths = counts.get("mlaspec_verify_width_count", 0)
            check("dspark: a verify width per step",
                  widths > 0 and widths == counts.get("mlaspec_accept_length_count"), True)
        finally:
            stop_server(proc)


def check_logprobs(client, check, failures):
    import openai
    c = client.completions.create(model="tiny", prompt=CHAT_PROMPT, max_tokens=MAX_TOKENS,
                                  temperature=0, logprobs=2)
    lp = c.choices[0].logprobs
    n = c.usage.completion_tokens
    check("completion logprobs: one per token",
          (len(lp.tokens), len(lp.token_logprobs), len(lp.top_logprobs), len(lp.text_offset)),
          (n, n, n, n))
    # Greedy: the chosen token is the most likely of its top_logprobs (the top 2 and itself).
    check("completion logprobs: greedy token on top",
          all(lp.token_logprobs[i] <= 0 and len(top) <= 3 and
              top.get(tok) == lp.token_logprobs[i] == max(top.values())
              for i, (tok, top) in enumerate(zip(lp.tokens, lp.top_logprobs))), True)
    check("completion logprobs: tokens spell the text", "".join(lp.tokens).startswith(
        c.choices[0].text), True)
    streamed = []
    for chunk in client.completions.create(model="tiny", prompt=CHAT_PROMPT,
                                           max_tokens=MAX_TOKENS, temperature=0, logprobs=2,
                                           stream=True):
        if chunk.choices and chunk.choices[0].logprobs:
            streamed += chunk.choices[0].logprobs.token_logprobs
    check("streamed completion logprobs", streamed, lp.token_logprobs)

    messages = [{"role": "user", "content": QUESTION}]
    chat = client.chat.completions.create(model="tiny", messages=messages, max_tokens=MAX_TOKENS,
                                          temperature=0, logprobs=True, top_logprobs=3)
    content = chat.choices[0].logprobs.content
    check("chat logprobs: one per token", len(content), chat.usage.completion_tokens)
    check("chat logprobs: top 3 sorted, greedy token first",
          all(len(e.top_logprobs) == 3 and e.top_logprobs[0].token == e.token and
              e.top_logprobs[0].logprob == e.logprob and
              e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob >= e.top_logprobs[2].logprob
              and bytes(e.bytes).decode("utf-8", "replace") == e.token for e in content), True)
    check("chat logprobs equal completion logprobs", [e.logprob for e in content],
          lp.token_logprobs)
    streamed = []
    for chunk in client.chat.completions.create(model="tiny", messages=messages,
                                                max_tokens=MAX_TOKENS, temperature=0,
                                                logprobs=True, top_logprobs=3, stream=True):
        if chunk.choices and chunk.choices[0].logprobs and chunk.choices[0].logprobs.content:
            streamed += [e.logprob for e in chunk.choices[0].logprobs.content]
    check("streamed chat logprobs", streamed, [e.logprob for e in content])
    try:
        client.chat.completions.create(model="tiny", messages=messages, max_tokens=4,
                                       logprobs=True, top_logprobs=21)
        failures.append("top_logprobs 21: no error")
    except openai.BadRequestError as e:
        check("top_logprobs 21 refused", "top_logprobs 21 is outside [0, 20]" in str(e), True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlaspec", required=True)
    args = ap.parse_args()
    try:
        import openai
    except ImportError:
        print("SKIP: the `openai` package cannot be imported (pip install openai)")
        return 77
    mlaspec = os.path.abspath(args.mlaspec)
    expected_completion = generate(mlaspec, CHAT_PROMPT)
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")
        else:
            print(f"ok: {what}")

    with tempfile.TemporaryFile(mode="w+") as log:
        proc, url = start_server(mlaspec, log)
        try:
            client = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0,
                                   timeout=60)
            check("models", [m.id for m in client.models.list().data], ["tiny"])
            c = client.completions.create(model="tiny", prompt=CHAT_PROMPT,
                                          max_tokens=MAX_TOKENS, temperature=0)
            check("completion text", c.choices[0].text, expected_completion)
            check("completion usage", c.usage.prompt_tokens + c.usage.completion_tokens,
                  c.usage.total_tokens)
            stream = client.completions.create(model="tiny", prompt=CHAT_PROMPT,
                                               max_tokens=MAX_TOKENS, temperature=0, stream=True,
                                               stream_options={"include_usage": True})
            text, usage = "", None
            for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].text
                if chunk.usage:
                    usage = chunk.usage
            check("streamed completion text", text, expected_completion)
            check("streamed usage", usage is not None and usage.completion_tokens > 0, True)
            check_logprobs(client, check, failures)

            messages = [{"role": "user", "content": QUESTION}]
            chat = client.chat.completions.create(model="tiny", messages=messages,
                                                  max_tokens=MAX_TOKENS, temperature=0)
            check("chat text", chat.choices[0].message.content, expected_completion)
            check("chat role", chat.choices[0].message.role, "assistant")
            text = ""
            for chunk in client.chat.completions.create(model="tiny", messages=messages,
                                                        max_tokens=MAX_TOKENS, temperature=0,
                                                        stream=True):
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
            check("streamed chat text", text, expected_completion)

            # bench-serve against the same server: every request completes.
            port = url.rsplit(":", 1)[1]
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                run = subprocess.run(
                    [mlaspec, "bench-serve", "--port", port, "--concurrency", "2",
                     "--num-prompts", "4", "--max-tokens", "8", "--json", out.name,
                     "--prompts", os.path.join(MODELS, "eval", "heldout.jsonl")],
                    capture_output=True, text=True)
                bench = json.load(open(out.name)) if run.returncode == 0 else None
            check("bench-serve completed",
                  (bench["completed"], bench["failed"]) if bench else run.stderr, (4, 0))
        finally:
            stop_server(proc)
            if failures:
                log.seek(0)
                sys.stderr.write(log.read()[-4000:])
    check_dspark(mlaspec, expected_completion, check)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
