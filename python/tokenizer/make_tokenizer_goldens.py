#!/usr/bin/env python3
"""Tokenizer files and goldens for mlaspec's tokenizer tests, made with Hugging Face `tokenizers`.

  python3 python/tokenizer/make_tokenizer_goldens.py            # goldens of the committed files
  python3 python/tokenizer/make_tokenizer_goldens.py --retrain  # train the files anew, + goldens
  python3 python/tokenizer/make_tokenizer_goldens.py --check BIN  # live: BIN's ids vs tokenizers

Writes tests/data/tokenizers/<name>/tokenizer.json (BPE trained on the repository's own text at
TRAIN_COMMIT, with fixed settings; only with --retrain or when the file is missing),
tokenizer_config.json where the tokenizer has BOS/EOS, and goldens.json: per corpus entry
(corpus.py) the input bytes (hex), tokenizers' ids with add_special_tokens=True, and its decode
of those ids (decode_skip: with skip_special_tokens, where that differs).

--check encodes the corpus plus random texts with the committed files through both `tokenizers`
and `BIN tokenize --hex-lines` and compares ids; it exits 77 (a ctest skip) when `tokenizers`
cannot be imported.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# One training thread: the BPE trainer's tie-breaking between equal counts can depend on thread
# scheduling, and regenerating must give the same files.
os.environ.setdefault("RAYON_NUM_THREADS", "1")

sys.dont_write_bytecode = True  # no __pycache__ in the source tree when ctest runs it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import SPECIALS, corpus, random_texts  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "tokenizers")

# DeepSeek-V3's pre-tokenizer as its tokenizer.json carries it.
DEEPSEEK_SPLITS = [
    r"\p{N}{1,3}",
    "[一-龥\u3040-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]
# GPT-4 (cl100k) / Llama-3 style.
GPT4_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
              r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


# Training text: the repository's sources and docs at a fixed commit, so regenerating gives the
# same files whatever has changed since.
TRAIN_COMMIT = "17008ed6f83abd6929ea80a18c30a37d9701e8c9"


def training_text():
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", TRAIN_COMMIT], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    keep = sorted(f for f in files if f.endswith((".md", ".h", ".cc", ".cu", ".py"))
                  and not f.startswith("tests/data"))
    for f in keep:
        blob = subprocess.run(["git", "show", f"{TRAIN_COMMIT}:{f}"], cwd=ROOT,
                              capture_output=True, check=True).stdout
        yield blob.decode("utf-8", errors="replace")


def make_all(retrain):
    from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors, trainers)

    text = list(training_text())
    made = {}

    # 1. GPT-2 style byte-level BPE.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=3000, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    made["bytelevel_gpt2"] = (tok, None)

    # 2. DeepSeek-V3's shape: Split sequence + ByteLevel without regex, special tokens, BOS template.
    bos, eos = SPECIALS[0], SPECIALS[1]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated", invert=False) for p in DEEPSEEK_SPLITS]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=3000, min_frequency=2, show_progress=False, special_tokens=[bos, eos],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens([AddedToken("<|fim_hole|>", normalized=False, special=True)])
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))])
    config = {"bos_token": {"__type": "AddedToken", "content": bos}, "eos_token": {
        "__type": "AddedToken", "content": eos}, "add_bos_token": True}
    made["deepseek_v3_style"] = (tok, config)

    # 3. GPT-4 / Llama-3 style Split regex, NFC, ignore_merges, added tokens with strip flags.
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=4000, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_special_tokens([
        AddedToken("<tool>", lstrip=True, rstrip=True, normalized=False, special=True),
        AddedToken("<|fim_hole|>", normalized=False, special=True),
    ])
    tok.add_tokens([AddedToken("mlaspec", single_word=True, normalized=True, special=False)])
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|fim_hole|> $A <tool>", special_tokens=[
            ("<|fim_hole|>", tok.token_to_id("<|fim_hole|>")), ("<tool>", tok.token_to_id("<tool>"))]),
    ])
    made["gpt4_split"] = (tok, None)

    # 4. SentencePiece style: Digits + Metaspace (first), byte fallback, unk, Llama decoder chain.
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=2500, min_frequency=2, show_progress=False, limit_alphabet=90,
        special_tokens=["<unk>", "<s>", "</s>"]))
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    made["metaspace_bpe"] = (tok, {"bos_token": "<s>", "eos_token": "</s>"})

    # 5. GPT-2's model with a prefix space and NFKC + Lowercase (no training: model of 1.).
    spec = json.loads(made["bytelevel_gpt2"][0].to_str())
    spec["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}
    spec["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                             "use_regex": True}
    made["bytelevel_prefix_nfkc"] = (Tokenizer.from_str(json.dumps(spec)), None)

    # 6. Every Split behaviour, invert, Digits contiguous, Strip + Replace normalizers.
    spec = json.loads(made["bytelevel_gpt2"][0].to_str())
    spec["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": "[ \t]{3,}"}, "content": "\t"},
        {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}]}

    def split(pattern, behavior, invert=False, regex=True):
        return {"type": "Split", "pattern": {"Regex" if regex else "String": pattern},
                "behavior": behavior, "invert": invert}
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        split("--", "Removed", regex=False),
        split(r"\p{P}", "MergedWithPrevious"),
        split(r"\s", "MergedWithNext"),
        {"type": "Digits", "individual_digits": False},
        split(r"[aeiou]+", "Contiguous", invert=True),
        split(r"\p{Lo}+|\p{So}", "Isolated", invert=True),
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    made["split_behaviors"] = (Tokenizer.from_str(json.dumps(spec)), None)

    # 7. Llama-2's converted SentencePiece shape: Prepend + Replace normalizer, no pre-tokenizer.
    spec = json.loads(made["metaspace_bpe"][0].to_str())
    spec["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    spec["pre_tokenizer"] = None
    made["sentencepiece_legacy"] = (Tokenizer.from_str(json.dumps(spec)),
                                    {"bos_token": "<s>", "eos_token": "</s>"})

    # 8. Metaspace "always" without split, Metaspace decoder.
    spec = json.loads(made["metaspace_bpe"][0].to_str())
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                             "split": False}
    spec["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                       "split": False}
    spec["post_processor"] = None
    made["metaspace_always"] = (Tokenizer.from_str(json.dumps(spec)), None)

    # 9. Word-piece style affixes: continuing_subword_prefix + end_of_word_suffix, unk without
    # fusing, whitespace removed by Split, BertProcessing, no decoder (tokens joined by spaces).
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##",
                               end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\s+"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"\p{P}"), behavior="isolated"),
        pre_tokenizers.Digits(individual_digits=True)])
    tok.train_from_iterator(text, trainers.BpeTrainer(
        vocab_size=2000, min_frequency=2, show_progress=False, limit_alphabet=120,
        continuing_subword_prefix="##", end_of_word_suffix="</w>",
        special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    tok.post_processor = processors.BertProcessing(
        ("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))
    made["bpe_affixes"] = (tok, None)

    for name, (tok, config) in made.items():
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        # Training with continuing_subword_prefix is not reproducible in tokenizers (its
        # alphabet comes out of a hash map), so committed files stay unless --retrain.
        if retrain or not os.path.exists(os.path.join(d, "tokenizer.json")):
            tok.save(os.path.join(d, "tokenizer.json"), pretty=False)
        if config:
            with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as fh:
                json.dump(config, fh, ensure_ascii=False, indent=1)
        write_goldens(Tokenizer.from_file(os.path.join(d, "tokenizer.json")), name, d)
        print(f"{name}: vocab {tok.get_vocab_size()}")


def write_goldens(tok, name, d):
    import tokenizers
    lines = []
    for case, raw in corpus():
        text = raw.decode("utf-8", errors="replace")
        ids = tok.encode(text).ids
        entry = {"name": case, "hex": raw.hex(), "ids": ids,
                 "decode": tok.decode(ids, skip_special_tokens=False)}
        skip = tok.decode(ids, skip_special_tokens=True)
        if skip != entry["decode"]:
            entry["decode_skip"] = skip
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    with open(os.path.join(d, "goldens.json"), "w", encoding="utf-8") as fh:
        fh.write("{\"generator\":\"python/tokenizer/make_tokenizer_goldens.py\",")
        fh.write(f"\"tokenizers\":\"{tokenizers.__version__}\",\"tokenizer\":\"{name}\",\"cases\":[\n")
        fh.write(",\n".join(lines))
        fh.write("\n]}\n")


def check(binary):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("tokenizers is not importable: live comparison skipped")
        return 77
    failures = 0
    texts = [raw for _, raw in corpus()] + random_texts(seed=3434, count=400)
    for name in sorted(os.listdir(OUT)):
        d = os.path.join(OUT, name)
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        with tempfile.NamedTemporaryFile("w", suffix=".hex", delete=False) as fh:
            fh.write("\n".join(t.hex() for t in texts) + "\n")
            path = fh.name
        try:
            out = subprocess.run([binary, "tokenize", "--tokenizer", d, "--hex-lines", path],
                                 capture_output=True, text=True)
        finally:
            os.unlink(path)
        if out.returncode != 0:
            print(f"{name}: mlaspec failed: {out.stderr.strip()}")
            failures += 1
            continue
        got = out.stdout.split("\n")
        bad = 0
        for i, raw in enumerate(texts):
            want = tok.encode(raw.decode("utf-8", errors="replace")).ids
            mine = [int(x) for x in got[i].split()] if i < len(got) else None
            if mine != want:
                bad += 1
                if bad <= 3:
                    print(f"{name}: text {raw!r}\n  tokenizers {want}\n  mlaspec    {mine}")
        print(f"{name}: {len(texts) - bad}/{len(texts)} equal")
        failures += bad
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", metavar="MLASPEC_BIN", help="live comparison against this binary")
    ap.add_argument("--retrain", action="store_true",
                    help="train and overwrite the tokenizer files too (not only the goldens)")
    args = ap.parse_args()
    if args.check:
        sys.exit(check(args.check))
    make_all(args.retrain)


if __name__ == "__main__":
    main()
