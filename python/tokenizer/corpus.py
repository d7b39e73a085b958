"""The golden corpus: named byte strings (raw bytes, so invalid UTF-8 can be among them).

Invalid UTF-8 reaches `tokenizers` only as Python text, so its reference ids are those of
bytes.decode("utf-8", errors="replace"); mlaspec encodes such input with InvalidUtf8::kReplace.
"""

import random

SPECIALS = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<|fim_hole|>", "<tool>"]


def _u(s):
    return s.encode("utf-8")


def corpus():
    cases = [
        ("empty", b""),
        ("space", b" "),
        ("ascii_sentence", _u("The quick brown fox jumps over the lazy dog.")),
        ("ascii_contractions", _u("I'm sure they've said it's what we'd do; you'll see. DON'T 'S")),
        ("ascii_numbers", _u("pi=3.14159, e 2.71828; 1234567890 and 12 345 678, v1.2.3")),
        ("code_cpp", _u("int main(int argc, char** argv) {\n  for (int i = 0; i < argc; ++i) {\n"
                        "    printf(\"%s\\n\", argv[i]);\n  }\n  return 0;\n}\n")),
        ("code_python", _u("def f(x):\n    if x > 0:\n\treturn x ** 2  # square\n    return -x\n")),
        ("whitespace_runs", _u("a  b   c    d\t\te\n\nf\n\n\n   g \r\n h")),
        ("whitespace_only", _u("   \t\n  \n\n ")),
        ("leading_trailing", _u("   leading and trailing   ")),
        ("unicode_spaces", _u("a\u00a0b\u2028c\u0085d\u3000e\u180ef\u200bg\u2009h\u202fi")),
        ("cjk", _u("中文分词测试，你好世界！我们正在测试分词器。")),
        ("japanese", _u("ひらがなとカタカナと漢字を混ぜた文章です。ｶﾀｶﾅ")),
        ("korean", _u("안녕하세요 세계! 한국어 토큰화 테스트")),
        ("emoji", _u("I ❤️ tokenizers 😀🎉🚀 ok👍")),
        ("emoji_zwj", _u("family 👨‍👩‍👧‍👦 and 🏳️‍🌈 and 👩🏽‍💻 skin 👍🏽👍🏿 flags 🇯🇵🇫🇷")),
        ("combining_marks", _u("e\u0301 n\u0303 a\u0308\u0304 Z\u0351\u0308\u0344\u0316a\u0337l\u0336g\u0334o")),
        ("precomposed_vs_decomposed", _u("é é ñ ñ Å Å ﬁ ＡＢＣ１２３ ½ ²")),
        ("rtl_arabic", _u("مرحبا بالعالم! هذا اختبار ١٢٣ للمحلل.")),
        ("rtl_hebrew_mixed", _u("שלום עולם abc 123 \u200fמימין\u200e")),
        ("mixed_scripts", _u("Grüße, Привет, Γειά σου, नमस्ते, สวัสดี, ሰላም")),
        ("case_folding", _u("'S 'ſ 'LL 'Re 'K \u212a İstanbul ΣΑΣ")),
        ("digits_other", _u("٣٤٥ ⅫⅣ ①②③ 𝟘𝟙𝟚 ¹²³")),
        ("punctuation", _u("!!! ??? ... --- ((( ))) [[]] {{}} <<>> @#$%^&*_+=|\\/~`")),
        ("control_chars", b"a\x00b\x01c\x1fd\x7fe\x1c\x1d\x1e"),
        ("invalid_lone_continuation", b"abc\x80def"),
        ("invalid_ff_fe", b"\xff\xfe hello \xfe"),
        ("invalid_surrogate", b"x\xed\xa0\x80y\xed\xbf\xbfz"),
        ("invalid_truncated", b"caf\xc3"),
        ("invalid_truncated_3", b"\xe4\xb8 and \xf0\x9f\x98"),
        ("invalid_overlong", b"\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf"),
        ("invalid_above_max", b"\xf4\x90\x80\x80\xf5\xf8"),
        ("long_word_a", b"a" * 2000),
        ("long_word_mixed", _u("Supercalifragilistic" * 60)),
        ("long_digits", b"1234567890" * 120),
        ("long_spaces", b" " * 1500 + b"x"),
        ("long_newlines", b"\n" * 300 + b"x" + b"\r\n" * 150),
        ("long_punct", b"!?" * 500),
        ("long_cjk", _u("测试" * 400)),
        ("long_emoji", _u("😀" * 300)),
        ("special_inline", _u("<｜begin▁of▁sentence｜>Hello<｜end▁of▁sentence｜>")),
        ("special_spaced", _u("Hi   <|fim_hole|>   there <tool> x<tool>y  <tool>\n")),
        ("special_partial", _u("<｜begin▁of▁sen <|fim_hol <too")),
        ("special_adjacent", _u("<tool><tool><|fim_hole|><｜end▁of▁sentence｜>")),
        ("nonspecial_added", _u("mlaspec MLA mlaspecs xmlaspec mlaspec_x")),
        ("metaspace_char", _u("▁ ▁▁x a▁b ▁")),
        ("byte_tokens_text", _u("<0x41> <0xFF> <unk> <s></s>")),
    ]
    rng = random.Random(34)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        " \t\n\r",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "中文测试你好世界ひらがなカタカナ한국어",
        "😀🎉🚀👍🏽👨‍👩‍👧‍👦",
        "éñüßøåçΣσςабвгдمرحباשלום",
        "\u0301\u0308\u200d\u200b\u00a0\u3000",
    ]
    for i in range(12):
        n = rng.randint(20, 200)
        s = "".join(rng.choice(rng.choice(pools)) for _ in range(n))
        cases.append((f"random_{i}", _u(s)))
    return cases


def random_texts(seed, count):
    """More random texts for the live comparison (not committed)."""
    rng = random.Random(seed)
    pieces = [
        " ", "  ", "\n", "\t", "'s", "'LL", "abc", "Hello", "WORLD", "123", "4567", "3.14",
        "中文", "测试", "カタカナ", "😀", "👨‍👩‍👧", "e\u0301", "ſ", "\u00a0", "\u180e",
        "\u2028", "مرحبا", "!!", "...", "<tool>", "<|fim_hole|>", "▁", "<0x41>", "ＡＢ", "ﬁ",
        "\r\n", "_", "x_y", "mlaspec", "İ", "Σ",
    ]
    out = []
    for _ in range(count):
        k = rng.randint(1, 30)
        s = "".join(rng.choice(pieces) for _ in range(k))
        b = s.encode("utf-8")
        if rng.random() < 0.1:
            pos = rng.randint(0, len(b))
            b = b[:pos] + bytes([rng.choice([0x80, 0xC3, 0xED, 0xFF, 0xF0])]) + b[pos:]
        out.append(b)
    return out
