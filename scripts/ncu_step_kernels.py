#!/usr/bin/env python3
"""Where one forward step's GPU time goes, kernel by kernel, from Nsight Compute's CSV.

Reads `ncu --csv --print-units base --metrics gpu__time_duration.sum` output of a run of
`mlaspec bench-model` with CUDA graphs off (every kernel a launch of its own), finds the last
complete step (the last embed_kernel up to the argmax_rows_kernel after it) and prints a Markdown
table: per kernel (name up to its parameter list), launches in the step, total and mean µs, and
share of the step's kernel time; then the sum of the step's kernel durations, which is the step's
time without launch gaps (compare with the graphed step's time for the cost of the gaps).

Usage: scripts/ncu_step_kernels.py NCU.csv [--first REGEX] [--last REGEX]
"""
import argparse
import csv
import re
import sys
from collections import OrderedDict


def kernel_rows(path):
    """(kernel name, duration in ns) per profiled launch, in launch order."""
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own log lines are not CSV
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
                 "second": 1e9, "s": 1e9}.get(unit)
        if scale is None:
            sys.exit(f"unknown duration unit {unit!r}")
        rows.append((r["Kernel Name"], value * scale))
    return rows


def short(name):
    """The kernel's name without its parameter list and namespaces, templates kept."""
    name = name.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    base = name[:cut].strip()
    base = re.sub(r"^void ", "", base)
    return re.sub(r"(\w+::)+", "", base)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--first", default=r"embed_kernel", help="a step's first kernel (regex)")
    ap.add_argument("--last", default=r"argmax_rows_kernel", help="a step's last kernel (regex)")
    args = ap.parse_args()
    rows = kernel_rows(args.csv)
    if not rows:
        sys.exit(f"{args.csv}: no gpu__time_duration.sum rows")
    first, last = re.compile(args.first), re.compile(args.last)
    starts = [i for i, (n, _) in enumerate(rows) if first.search(n)]
    step = None
    for s in reversed(starts):
        ends = [i for i in range(s, len(rows)) if last.search(rows[i][0])]
        if ends:
            step = rows[s : ends[0] + 1]
            break
    if step is None:
        sys.exit(f"{args.csv}: no complete step ({args.first} .. {args.last}) among {len(rows)} launches")
    per = OrderedDict()
    for n, ns in step:
        k = short(n)
        c, t = per.get(k, (0, 0.0))
        per[k] = (c + 1, t + ns)
    total = sum(t for _, t in per.values())
    print(f"{len(step)} kernel launches in the step, {total / 1e3:.1f} µs of kernel time")
    print()
    print("| kernel | launches | µs | µs each | % |")
    print("|---|---|---|---|---|")
    for k, (c, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"| `{k}` | {c} | {t / 1e3:.1f} | {t / 1e3 / c:.2f} | {100 * t / total:.1f}% |")


if __name__ == "__main__":
    main()
