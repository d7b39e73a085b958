#!/usr/bin/env python3
"""Encode throughput of `tokenizers` and of `mlaspec tokenize --bench`, on the same text, one thread.

  python3 python/tokenizer/bench_tokenizers.py --mlaspec build/mlaspec [--seconds 3]
      [--tokenizer tests/data/tokenizers/deepseek_v3_style] [--file TEXT]

Without --file the text is the repository's own sources and docs (git ls-files), written to a
temporary file so both sides read the same bytes. Each side reports its first pass (cold word
cache) and the median of repeated passes, in MB/s of UTF-8 input. The text is encoded as
documents cut at the first newline at or past --chunk bytes (4096; 0 keeps one document), one
encode call each (tokenizers' Tokenizer.encode, add_special_tokens=True).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One thread for tokenizers (it parallelises batches, not one encode, but be explicit).
os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def repo_text():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    keep = sorted(f for f in files if f.endswith((".md", ".h", ".cc", ".cu", ".py"))
                  and not f.startswith("tests/data"))
    return "".join(open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read()
                   for f in keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "tests", "data", "tokenizers",
                                                        "deepseek_v3_style"))
    ap.add_argument("--file")
    ap.add_argument("--mlaspec", help="mlaspec binary to time on the same text")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--chunk", type=int, default=4096)
    args = ap.parse_args()
    from tokenizers import Tokenizer, __version__

    path = args.tokenizer
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    tok = Tokenizer.from_file(path)
    if args.file:
        with open(args.file, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        text_path = args.file
    else:
        text = repo_text()
        fh = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False)
        fh.write(text)
        fh.close()
        text_path = fh.name
    raw = text.encode("utf-8")
    mb = len(raw) / 1e6
    docs = []
    start = 0
    while start < len(raw):
        end = len(raw)
        if args.chunk and start + args.chunk < len(raw):
            nl = raw.find(b"\n", start + args.chunk)
            if nl >= 0:
                end = nl + 1
        docs.append(raw[start:end].decode("utf-8"))
        start = end

    def one_pass():
        t0 = time.perf_counter()
        n = sum(len(tok.encode(d).ids) for d in docs)
        return time.perf_counter() - t0, n

    cold, num_ids = one_pass()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < args.seconds:
        times.append(one_pass()[0])
    med = statistics.median(times)
    print(f"tokenizers {__version__} encode: {mb:.2f} MB in {len(docs)} documents, {num_ids} ids, "
          f"one thread: first pass {mb / cold:.1f} MB/s, median of {len(times)} passes "
          f"{mb / med:.1f} MB/s")
    if args.mlaspec:
        out = subprocess.run([args.mlaspec, "tokenize", "--tokenizer", args.tokenizer, "--file",
                              text_path, "--bench", "--bench-seconds", str(args.seconds),
                              "--bench-chunk", str(args.chunk)],
                             capture_output=True, text=True)
        sys.stdout.write(out.stdout + out.stderr)
    if not args.file:
        os.unlink(text_path)


if __name__ == "__main__":
    main()
