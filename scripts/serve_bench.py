#!/usr/bin/env python3
"""bench-serve's table for docs/serve.md: `mlaspec serve` on the shipped pair, with the DFlash
drafter and without it (--draft none), and `mlaspec bench-serve` at each concurrency against it.

For each drafter the script starts one server on a free loopback port (--device cpu or cuda,
--max-running = the largest concurrency), runs one warm-up request, then bench-serve at every
concurrency (--num-prompts greedy streaming completions of --max-tokens over the held-out
prompts), and writes every bench-serve JSON, the servers' logs and serve-bench.md (the table)
under --out. A server that does not start, or a bench-serve run with a failed request, makes the
exit code 1; the table keeps what was measured. Standard library only.

    python3 scripts/serve_bench.py --mlaspec build/mlaspec --device cpu --out out/serve-bench
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_server(args, draft, max_running, log_path):
    cmd = [args.mlaspec, "serve", "--model", os.path.join(ROOT, "models", "target"),
           "--port", "0", "--device", args.device, "--max-running", str(max_running)]
    cmd += ["--draft", "dflash", "--draft-model", os.path.join(ROOT, "models", "drafter")] \
        if draft == "dflash" else ["--draft", "none"]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.wait(timeout=60)
        log.close()
        with open(log_path) as f:
            sys.stderr.write("serve (%s) did not start: %s%s\n" % (draft, line, f.read()[-2000:]))
        return None, None
    return proc, line.strip().rsplit(":", 1)[1]


def bench(args, port, concurrency, num_prompts, out):
    cmd = [args.mlaspec, "bench-serve", "--port", port, "--concurrency", str(concurrency),
           "--num-prompts", str(num_prompts), "--max-tokens", str(args.max_tokens)]
    if out:
        cmd += ["--json", out]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=args.call_timeout)
    if r.returncode != 0:
        sys.stderr.write("bench-serve %s exited %d: %s%s\n" % (cmd, r.returncode, r.stdout,
                                                               r.stderr))
        return None
    if out is None:
        return {}
    with open(out) as f:
        return json.load(f)


def table(rows, args):
    lines = ["| draft | concurrency | output tok/s | TTFT p50 ms | TPOT p50 ms | ITL p50 ms "
             "| accept length |", "|---|---|---|---|---|---|---|"]
    for draft, c, j in rows:
        tau = j.get("accept_length")
        lines.append("| %s | %d | %.0f | %.1f | %.2f | %.2f | %s |" % (
            draft, c, j["output_throughput"], 1e3 * j["ttft_s"]["p50"],
            1e3 * j["tpot_s"]["p50"], 1e3 * j["itl_s"]["p50"],
            "%.2f" % tau if tau is not None else "-"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlaspec", default=os.path.join(ROOT, "build", "mlaspec"))
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--out", required=True)
    ap.add_argument("--concurrency", default="1,8,16")
    ap.add_argument("--num-prompts", type=int, default=48,
                    help="requests per run (at least 2 x the concurrency are sent)")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--drafts", default="dflash,none")
    ap.add_argument("--call-timeout", type=float, default=300.0,
                    help="seconds one bench-serve run may take")
    args = ap.parse_args()
    args.mlaspec = os.path.abspath(args.mlaspec)
    os.makedirs(args.out, exist_ok=True)
    conc = [int(c) for c in args.concurrency.split(",")]
    if not conc or min(conc) < 1:
        ap.error("--concurrency: positive integers, comma-separated")
    status = 0
    rows = []
    md = os.path.join(args.out, "serve-bench.md")
    for draft in args.drafts.split(","):
        proc, port = start_server(args, draft, max(conc),
                                  os.path.join(args.out, "serve-%s.log" % draft))
        if proc is None:
            status = 1
            continue
        try:
            bench(args, port, 1, 1, None)  # warm-up: first-touch allocations, lazy init
            for c in conc:
                t = time.time()
                n = max(args.num_prompts, 2 * c)
                j = bench(args, port, c, n, os.path.join(args.out, "%s-c%d.json" % (draft, c)))
                if j is None or j.get("failed", 1) != 0:
                    if j is not None:
                        sys.stderr.write("serve_bench: %s concurrency %d: %s requests failed\n"
                                         % (draft, c, j.get("failed")))
                    status = 1
                    continue
                rows.append((draft, c, j))
                print("[serve_bench] %s concurrency %d: %.0f tok/s (%.1f s)" % (
                    draft, c, j["output_throughput"], time.time() - t), flush=True)
                with open(md, "w") as f:
                    f.write(table(sorted(rows, key=lambda r: (r[1], r[0])), args))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    if rows:
        with open(md) as f:
            print(f.read(), end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
