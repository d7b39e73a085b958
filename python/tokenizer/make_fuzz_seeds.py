#!/usr/bin/env python3
"""Seed corpora of the tokenizer fuzz targets (fuzz/tokenizer/corpus/), from the committed files.

  python3 python/tokenizer/make_fuzz_seeds.py

tokenizer_json: each tests/data/tokenizers/<name>/tokenizer.json cut to its first 300 ids (and
the merges among them), added tokens renumbered after them, so the fuzzer mutates small files
holding every construct. tokenizer_encode: corpus texts behind the two selector bytes the target
reads (which tokenizer, which options).
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree when ctest runs it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import corpus  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "tokenizers")
SEEDS = os.path.join(ROOT, "fuzz", "tokenizer", "corpus")
KEEP = 300


def shrink(spec):
    model = spec["model"]
    vocab = {t: i for t, i in model["vocab"].items() if i < KEEP}
    merges = []
    for m in model["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        if a in vocab and b in vocab and a + b in vocab:
            merges.append([a, b])
    model["vocab"], model["merges"] = vocab, merges
    remap = {}
    next_id = len(vocab)
    added = []
    for tok in spec.get("added_tokens", []):
        if tok["content"] in vocab:
            tok["id"] = vocab[tok["content"]]
        else:
            remap[tok["id"]] = next_id
            tok["id"] = next_id
            next_id += 1
        added.append(tok)
    spec["added_tokens"] = added

    def fix(pp):
        if not pp:
            return
        for p in pp.get("processors", []):
            fix(p)
        for st in pp.get("special_tokens", {}).values():
            st["ids"] = [remap.get(i, i) for i in st["ids"]]
    fix(spec.get("post_processor"))
    return spec


def main():
    out_json = os.path.join(SEEDS, "tokenizer_json")
    out_enc = os.path.join(SEEDS, "tokenizer_encode")
    os.makedirs(out_json, exist_ok=True)
    os.makedirs(out_enc, exist_ok=True)
    names = sorted(os.listdir(DATA))
    for name in names:
        with open(os.path.join(DATA, name, "tokenizer.json"), encoding="utf-8") as fh:
            spec = shrink(json.load(fh))
        with open(os.path.join(out_json, name + ".json"), "w", encoding="utf-8") as fh:
            json.dump(spec, fh, ensure_ascii=False, separators=(",", ":"))
    for i, (case, raw) in enumerate(corpus()):
        if len(raw) > 600:
            raw = raw[:600]
        with open(os.path.join(out_enc, case), "wb") as fh:
            fh.write(bytes([i % len(names), i % 4]) + raw)


if __name__ == "__main__":
    main()
