#!/usr/bin/env python3
"""scripts/long_context.py's report on made-up bench-model rows (no GPU, no torch; the PNG only
where matplotlib is importable): the table's ratios, auto's regret against the better forced
backend, the fold vs rowwise crossover (log-interpolated), and the points that were skipped or
failed, each with its reason. ctest: scripts.long_context_report."""

import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import long_context as lc  # noqa: E402

TAU = 4.0


def row(policy, step, batch, ctx, ms, served=None, kv="bf16", model="v2lite"):
    r = dict(model=model, kv=kv, attention=policy, step=step, batch=batch, context=ctx,
             q_len=1 if step == "decode" else 8, ms=ms, context_by="writer" if ctx > 4096 else "prefill",
             served_by=served or ("cuda_fold" if policy == "auto" else policy), tau=TAU,
             tau_source="made up")
    if step == "verify":
        r["accept_length"] = TAU
    return r


def made_up_rows():
    rows = []
    # Batch 1: rowwise faster at 4k (fold/row 1.25), fold faster from 32k (0.8): the crossover
    # lies between, where log(ratio) crosses 0: 4k * 8^(log 1.25 / log(1.25/0.8)) = 2^12 * 2^1.5.
    for ctx, fold, rowwise, auto in [(4096, 5.0, 4.0, 4.1), (32768, 8.0, 10.0, 9.0),
                                     (131072, 20.0, 45.0, 20.2)]:
        rows.append(row("auto", "decode", 1, ctx, fold * 0.8))
        # auto serves 4k with the better rowwise and 32k with the worse rowwise (a wrong pick).
        rows.append(row("auto", "verify", 1, ctx, auto, served="cuda_rowwise" if ctx <= 32768 else "cuda_fold"))
        rows.append(row("cuda_fold", "verify", 1, ctx, fold))
        rows.append(row("cuda_rowwise", "verify", 1, ctx, rowwise))
    # Batch 16 at 1M: skipped (memory); the rowwise verify at 128k failed.
    for p in lc.POLICIES:
        for step in ("decode", "verify"):
            rows.append(dict(model="v2lite", kv="bf16", attention=p, step=step, batch=16,
                             context=1 << 20, q_len=1,
                             skipped="needs 523.3 GB (KV 522.1 GB ...), 108.0 GB available"))
    rows.append(row("auto", "decode", 16, 131072, 30.0))
    rows.append(row("auto", "verify", 16, 131072, 40.0))
    rows.append(row("cuda_fold", "verify", 16, 131072, 38.0))
    rows.append(dict(model="v2lite", kv="bf16", attention="cuda_rowwise", step="verify", batch=16,
                     context=131072, q_len=8, error="unsupported: made-up refusal"))
    return rows


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    check(lc.parse_context("4k") == 4096 and lc.parse_context("1M") == 1 << 20, "parse_context")
    check(lc.context_label(131072) == "128k" and lc.context_label(1 << 20) == "1M", "context_label")
    check(lc.crossover([(4096, 5, 4), (32768, 8, 10)]).startswith("~11k"),
          "crossover interpolation: " + lc.crossover([(4096, 5, 4), (32768, 8, 10)]))
    check("fold faster at every" in lc.crossover([(4096, 1, 2)]), "crossover, fold everywhere")
    check("rowwise faster at every" in lc.crossover([(4096, 2, 1)]), "crossover, rowwise everywhere")

    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "bench-v2lite-bf16-all.json"), "w") as f:
            json.dump(made_up_rows(), f)
        md = lc.report(d, lc.load_rows(d), ["- a note"], plot=True)
        # Batch 1 at 4k: auto 4.1 vs the better forced 4.0 -> +2.5%; fold/row 1.25; spec tokens/s
        # at tau 4: 4 * 1 / 4.1 ms = 976; plain 1 / 4 ms = 250.
        check("| 1 | 4k | prefill | 4.000 | 4.100 (cuda_rowwise) | 5.000 | 4.000 | 1.25 | +2.5%; pick +0.0% |" in md,
              "batch 1, 4k row")
        # 32k by its pick: rowwise 10 vs the better fold 8 -> +25%, flagged.
        check("+12.5% **over**; pick +25.0% **over** |" in md, "wrong pick flagged")
        check("| 250 | 976 | 800 | 1000 |" in md, "tokens/s columns")
        # 32k: auto 9.0 vs fold 8.0 -> +12.5%, flagged.
        check("+12.5% **over**" in md, "regret over the target flagged")
        check("- batch 1: ~11k (rowwise faster below, fold from there)" in md, "crossover line")
        check("batch 16, context 1M: needs 523.3 GB" in md, "skipped point with its reason")
        check("cuda_rowwise verify batch 16, context 128k: error: unsupported: made-up refusal" in md,
              "failed row with its reason")
        # Batch 16 at 128k: auto 40 vs fold 38 (rowwise failed) -> +5.3%, also over.
        check("As measured (auto's own run): worst +12.5% (v2lite, bf16 KV, batch 1, context 32k); "
              "2 of 4 points over" in md, "regret summary")
        check("By its pick: worst +25.0% (v2lite, bf16 KV, batch 1, context 32k); 1 of 4 points "
              "over the target." in md, "pick regret summary")
        # The run's notes are kept beside the rows, and --report-only's report has them again.
        check(json.load(open(os.path.join(d, "notes.json"))) == ["- a note"], "notes.json written")
        check("- V2-Lite, >= 128k: forced rowwise verify >= 2x fold's: met: bf16 b1 128k: 2.25x" in md,
              "target: rowwise vs fold at 128k")
        check("- shipped target, 128k, batch 1: speculative tokens/s >= 2.5x plain: not measured" in md,
              "target not measured says so")
        check(os.path.exists(os.path.join(d, "long-context.md")), "markdown written")
        check(os.path.exists(os.path.join(d, "long-context.json")), "json written")
        try:
            import matplotlib  # noqa: F401
            check(os.path.getsize(os.path.join(d, "long-context.png")) > 1000, "png written")
        except ImportError:
            check(not os.path.exists(os.path.join(d, "long-context.png")), "no png without matplotlib")
    if failures:
        print(md)
        print("FAILED: " + "; ".join(failures))
        return 1
    print("long_context report: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
