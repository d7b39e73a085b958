#!/usr/bin/env python3
"""Writes docs/perf/h200.md, the current H200 page, from a scripts/gpu-check.sh results folder (the
unpacked gpu-check.tgz): standard set (default and deterministic; bf16's fastest reps beside the
medians, with the clock during the benches when the run sampled it), fp8/bf16 ratios (and
fp8tile/bf16, fp8tile/fp8 when the run timed fp8tile), both
sweeps, auto's picks and regret, PERF.md's targets checked one by one, the dispatch calibration
report and the DCP table.

Usage: scripts/perf_tables.py RESULTS_DIR COMMIT [--out FILE] [--calibration FILE.md]
                              [--note FILE.md]
  --out          the page to write (default docs/perf/h200.md, or h100.md for an H100 run; - for
                 stdout)
  --calibration  the `mlaspec calibrate --report` to include (default RESULTS_DIR/calibration.md):
                 give the report of the run whose profile is data/profiles/nvidia-h200.json when
                 that is another run than the tables'
  --note         markdown put under the header: what this run measured that a reader must know
                 (the device code, the machine, a caveat)

The sweeps (ssweep.json, qsweep.json), the calibration and the DCP table (dcp.txt) are optional: a
run without them gets the standard tables, with the targets that need a sweep marked as not
measured.
"""
import argparse
import json
import os
import re
import sys

# PERF.md's FlashMLA measurements (same machine type, bf16, us per call).
FLASHMLA = {0: 69.9, 1: 82.6, 2: 519.2, 3: 75.6, 4: 253.0, 5: 254.3, 6: 153.2, 7: 82.9,
            8: 466.6, 9: 455.3, 10: 259.8, 11: 1053.5}
FLASHMLA_S = {4096: 21.7, 16384: 38.5, 65536: 52.2, 262144: 133.9, 1048576: 515.8}
FLASHMLA_Q = {1: 70.0, 2: 71.0, 4: 74.5, 6: 76.4, 8: 78.5, 9: 97.9, 12: 103.2, 13: 121.0, 16: 128.7}


def t(row, backend):
    return row.get(backend, {}).get("median_us")


def field(config, key):
    return int(config.split(key + "=")[1].split(",")[0])


def kv(row):
    """The row's KV dtype as bench writes it (bf16, fp8, fp8tile), or fp8math for fp8 KV in fp8
    math (bench --fp8-math): exact, as "kv=fp8" is also a prefix of "kv=fp8tile"."""
    if row.get("fp8_math") or row["config"].endswith(",fp8math"):
        return "fp8math"
    return row.get("kv") or row["config"].split("kv=")[1].split(",")[0]


def best(row):
    return min(t(row, "cuda_fold"), t(row, "cuda_rowwise"))


def demoted(markdown):
    """A report's headings two levels down, so that it nests under this page's own section."""
    return re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", markdown, flags=re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("commit")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", help="default: docs/perf/h200.md or h100.md by the run's GPU")
    ap.add_argument("--calibration")
    ap.add_argument("--note")
    args = ap.parse_args()
    res, commit = args.results, args.commit
    load = lambda name: json.load(open(os.path.join(res, name)))
    optional = lambda name: load(name) if os.path.exists(os.path.join(res, name)) else None
    std, det = load("standard.json"), load("standard-det.json")
    ss, qs = optional("ssweep.json"), optional("qsweep.json")
    gpu = open(os.path.join(res, "gpu.txt")).read().splitlines()[1]
    # FlashMLA's times are PERF.md's, measured on an H200: compared only on an H200.
    on_h200 = "H200" in gpu
    card = "H200" if on_h200 else gpu.split(",")[0].replace("NVIDIA ", "")
    if args.out is None:
        # The page of the run's card: an H100 run never overwrites the H200 page by default.
        if on_h200 or "H100" in gpu:
            args.out = os.path.join(repo, "docs", "perf", "h200.md" if on_h200 else "h100.md")
        else:
            ap.error(f"--out: no default page for {card}; name the file")
    out = []
    p = out.append
    p(f"# {card} measurements\n")
    p("<!-- Written by scripts/perf_tables.py from a scripts/gpu-check.sh run: regenerate, do not "
      "edit. What the numbers mean and why they are what they are: knowledge.md. -->\n")
    if args.note:
        p(open(args.note).read().strip() + "\n")
    p(f"GPU: {gpu}. `scripts/gpu-check.sh` at commit `{commit}`. PERF.md protocol: outputs checked "
      "against the CPU reference first (sampled rows, poisoned outputs), then the median of 30 "
      "CUDA-graph replays of back-to-back calls, input sets rotated when the KV is under 200 MB, page "
      "size 64. Times are µs per call including the combine; host planning is outside the graph. "
      "Floors use PERF.md's ceilings (4.21 TB/s, 757 TFLOP/s: the H200's). " +
      ("FlashMLA times are PERF.md's table (bf16 only), not re-measured in this run. " if on_h200
       else "FlashMLA's times (PERF.md's table) are H200 measurements and are left out on this "
       "GPU, as are the targets stated against them. ") +
      "`auto` is the dispatcher's pick " +
      ("(with the run's own calibration: gpu-check calibrates before it benches)"
       if os.path.exists(os.path.join(res, "calibration.md"))
       else "(with the built-in profile of this GPU: the run did not calibrate, --no-calibrate)") +
      " and its regret against the faster backend measured here.\n")
    p("## Standard set, default mode\n")
    p("| # | config | floor µs | fold µs | fold % floor | rowwise µs | rowwise % floor | fold/rowwise | auto | regret | FlashMLA µs | FlashMLA / best |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in std["results"]:
        f, w, i = t(r, "cuda_fold"), t(r, "cuda_rowwise"), r["index"]
        bf = kv(r) == "bf16"
        fm = FLASHMLA[i] if bf and on_h200 else None
        a = r.get("auto", {})
        p(f"| {i} | {r['config']} | {r['floor_us']:.1f} | {f:.1f} | {100 * r['floor_us'] / f:.0f}% | "
          f"{w:.1f} | {100 * r['floor_us'] / w:.0f}% | {f / w:.2f} | {a.get('backend', '-')} | "
          f"{100 * a.get('regret', 0):.1f}% | {f'{fm:.1f}' if fm else '—'} | "
          f"{f'{fm / best(r):.2f}' if fm else '—'} |")
    p("\n## Standard set, fastest rep (bf16, default mode)\n")
    p("Not PERF.md's measure: the fastest of each row's reps, i.e. the kernel at the full clock. "
      "After ~30-60 ms of back-to-back calls the driver's power cap lowers the SM clock and the rows "
      "bound by tensor work slow down ~10% (knowledge.md, the power cap), so their medians above "
      "mix the two phases; `fast reps` counts the reps within 2% of the fastest. FlashMLA's times "
      "are PERF.md's medians, whose power state was not recorded.\n")
    clocks = os.path.join(res, "clocks.csv")
    if os.path.exists(clocks):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import clock_summary
        with open(clocks) as fh:
            p(clock_summary.summarize(fh) + ".\n")
    p("| # | config | fold fastest µs | fold median µs | fast reps | rowwise fastest µs | FlashMLA µs | FlashMLA / best fastest |")
    p("|---|---|---|---|---|---|---|---|")
    for r in std["results"]:
        if kv(r) != "bf16":
            continue
        i, fo, ro = r["index"], r.get("cuda_fold", {}), r.get("cuda_rowwise", {})
        samples = fo.get("samples_us")
        fast = (f"{sum(x <= 1.02 * fo['min_us'] for x in samples)} of {len(samples)}"
                if samples else "—")
        lo = min(fo["min_us"], ro["min_us"])
        fm = (f"{FLASHMLA[i]:.1f} | {FLASHMLA[i] / lo:.2f}" if on_h200 else "— | —")
        p(f"| {i} | {r['config']} | {fo['min_us']:.1f} | {fo['median_us']:.1f} | {fast} | "
          f"{ro['min_us']:.1f} | {fm} |")
    base = {r["config"]: r for r in std["results"]}
    p("\n## Standard set, deterministic mode (fixed chunks: 1024 tokens per 64 heads)\n")
    p("| # | config | fold µs | rowwise µs | fold det/default | rowwise det/default |")
    p("|---|---|---|---|---|---|")
    for r in det["results"]:
        b = base[r["config"].replace(",det", "")]
        p(f"| {r['index']} | {r['config']} | {t(r, 'cuda_fold'):.1f} | {t(r, 'cuda_rowwise'):.1f} | "
          f"{t(r, 'cuda_fold') / t(b, 'cuda_fold'):.2f} | {t(r, 'cuda_rowwise') / t(b, 'cuda_rowwise'):.2f} |")
    bf16 = [r for r in std["results"] if kv(r) == "bf16"]
    fp8 = [r for r in std["results"] if kv(r) == "fp8"]
    tile = [r for r in std["results"] if kv(r) == "fp8tile"]
    math = [r for r in std["results"] if kv(r) == "fp8math"]
    # fp8tile's and fp8math's tables only when the run timed them (bench --kv all, --fp8-math).
    for name, num, den in (("fp8 / bf16", fp8, bf16), ("fp8tile / bf16", tile, bf16),
                           ("fp8tile / fp8", tile, fp8), ("fp8math / bf16", math, bf16),
                           ("fp8math / fp8", math, fp8)):
        if not num or not den:
            continue
        p(f"\n## {name} time ratio (default mode)\n")
        p("| # | fold | rowwise |")
        p("|---|---|---|")
        for a, b in zip(den, num):
            p(f"| {a['index']} | {t(b, 'cuda_fold') / t(a, 'cuda_fold'):.2f} | {t(b, 'cuda_rowwise') / t(a, 'cuda_rowwise'):.2f} |")
    p("\n## S sweep (B=1, H=16, q_len=8)\n")
    if ss is None:
        p("Not measured in this run.")
    else:
        p("| S | kv | floor µs | fold µs | rowwise µs | fold/rowwise | auto | regret | FlashMLA µs |")
        p("|---|---|---|---|---|---|---|---|---|")
    for r in ss["results"] if ss else []:
        S, bf = field(r["config"], "S"), kv(r) == "bf16"
        a = r.get("auto", {})
        p(f"| {S} | {kv(r)} | {r['floor_us']:.1f} | {t(r, 'cuda_fold'):.1f} | "
          f"{t(r, 'cuda_rowwise'):.1f} | {t(r, 'cuda_fold') / t(r, 'cuda_rowwise'):.2f} | "
          f"{a.get('backend', '-')} | {100 * a.get('regret', 0):.1f}% | {FLASHMLA_S[S] if bf and on_h200 else '—'} |")
    p("\n## q_len sweep (B=1, H=16, S=131072)\n")
    if qs is None:
        p("Not measured in this run.")
    else:
        p("| q_len | bf16 fold µs | bf16 rowwise µs | fp8 fold µs | fp8 rowwise µs | FlashMLA µs (bf16) |")
        p("|---|---|---|---|---|---|")
    qres = qs["results"] if qs else []
    qb = {field(r["config"], "q"): r for r in qres if kv(r) == "bf16"}
    q8 = {field(r["config"], "q"): r for r in qres if kv(r) == "fp8"}
    for q in sorted(qb):
        p(f"| {q} | {t(qb[q], 'cuda_fold'):.1f} | {t(qb[q], 'cuda_rowwise'):.1f} | "
          f"{t(q8[q], 'cuda_fold'):.1f} | {t(q8[q], 'cuda_rowwise'):.1f} | {FLASHMLA_Q.get(q, '') if on_h200 else '—'} |")
    p("\n## PERF.md targets against this run\n")
    p("| target | measured | met |")
    p("|---|---|---|")
    rows = {r["index"]: r for r in bf16}
    rows8 = {r["index"]: r for r in fp8}
    yn = lambda ok: "yes" if ok else "no"
    for i in range(12) if on_h200 else ():
        need = 1.0 if i in (6, 8, 9) else 1.1
        sp = FLASHMLA[i] / best(rows[i])
        p(f"| row {i} bf16 ≥ {need:.1f}× FlashMLA | {sp:.2f}× ({best(rows[i]):.1f} µs vs {FLASHMLA[i]}) | {yn(sp >= need)} |")
    for i in range(12):
        if field(rows[i]["config"], "S") >= 65536:
            frac = rows[i]["floor_us"] / best(rows[i])
            p(f"| row {i} bf16 ≥ 85% of floor | {100 * frac:.0f}% | {yn(frac >= 0.85)} |")
    for i in (0, 3, 6):
        ratio = best(rows8[i]) / best(rows[i])
        p(f"| row {i} fp8 ≤ 0.6× bf16 | {ratio:.2f}× | {yn(ratio <= 0.6)} |")
    worst8 = max(best(rows8[i]) / best(rows[i]) for i in range(12))
    p(f"| fp8 ≤ 1.0× bf16 on every row | worst {worst8:.2f}× | {yn(worst8 <= 1.0)} |")
    rows_m = {r["index"]: r for r in math}
    for i in (1, 2, 4, 5, 11):
        if i in rows_m:
            ratio = best(rows_m[i]) / best(rows[i])
            p(f"| row {i} fp8 math ≤ 0.55× bf16 | {ratio:.2f}× | {yn(ratio <= 0.55)} |")
    if qb:
        r18 = t(qb[8], "cuda_fold") / t(qb[1], "cuda_fold")
        p(f"| time(q=8) ≤ 1.4 × time(q=1) at B=1, H=16, S=128k | {r18:.2f}× | {yn(r18 <= 1.4)} |")
    else:
        p("| time(q=8) ≤ 1.4 × time(q=1) at B=1, H=16, S=128k | not measured (no q_len sweep) | — |")
    s4 = [r for r in ss["results"] if field(r["config"], "S") == 4096 and kv(r) == "bf16"] \
        if ss else []
    if s4:
        p(f"| S=4k call ≤ 10 µs | {best(s4[0]):.1f} µs | {yn(best(s4[0]) <= 10)} |")
    else:
        p("| S=4k call ≤ 10 µs | not measured (no S sweep) | — |")
    # PERF.md's target over bf16 and exact fp8 (the layouts it was set for; the fp8tile and
    # fp8math rows are in the table above).
    worst = max(t(r, "cuda_fold") / t(base[r["config"].replace(",det", "")], "cuda_fold")
                for r in det["results"]
                if field(r["config"], "S") >= 32768 and kv(r) in ("bf16", "fp8"))
    p(f"| deterministic ≤ 1.10× default at S ≥ 32k (fold) | worst {worst:.2f}× | {yn(worst <= 1.1)} |")
    cal = args.calibration or os.path.join(res, "calibration.md")
    p("\n## Dispatch calibration\n")
    if os.path.exists(cal):
        p(demoted(open(cal).read().strip()))
    else:
        p("Not measured in this run.")
    p("\n## Decode context parallelism (`mlaspec dcp`, B=1, H=16, q_len=8)\n")
    dcp = os.path.join(res, "dcp.txt")
    dcp_rows = [l for l in open(dcp).read().splitlines() if re.match(r"^\| [0-9]", l)] \
        if os.path.exists(dcp) else []
    if dcp_rows:
        p("| world | config | chunk | µs per step (median) | min | max | check |")
        p("|---|---|---|---|---|---|---|")
        out.extend(dcp_rows)
    else:
        p("Not measured in this run.")
    text = "\n".join(out) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
