#!/usr/bin/env python3
"""`mlaspec bench-serve` at a Poisson request rate with random prompt and output lengths.

Starts `mlaspec serve` on the shipped target (no drafter) on a free loopback port and runs
bench-serve with --request-rate, --input-len (random token ids of models/target's tokenizer),
--output-len and --ignore-eos, then checks its JSON: every request completed; each produced
exactly its planned max_tokens, which lie in the --output-len range and are not all equal; the
arrivals are increasing, span more than zero seconds and no request was sent before its arrival;
the same seed gives the same plan; bad options exit 2 with the option named. Standard library
only.

    python3 tests/serve/bench_serve_test.py --mlaspec build/mlaspec
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.path.join(ROOT, "models", "target")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def bench(mlaspec, port, out, seed):
    cmd = [mlaspec, "bench-serve", "--port", port, "--num-prompts", "12", "--concurrency", "3",
           "--request-rate", "25", "--seed", str(seed), "--input-len", "6:20", "--output-len",
           "3:10", "--tokenizer", TARGET, "--ignore-eos", "--json", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("bench-serve exited %d: %s %s" % (r.returncode, r.stdout, r.stderr))
    if "Poisson at 25.00 req/s" not in r.stdout:
        fail("the arrivals line is missing: " + r.stdout)
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlaspec", required=True)
    args = ap.parse_args()
    mlaspec = os.path.abspath(args.mlaspec)

    for bad, named in [(["--input-len", "9:3", "--tokenizer", TARGET], "--input-len '9:3'"),
                       (["--input-len", "8"], "needs --tokenizer"),
                       (["--output-len", "0:4"], "--output-len '0:4'"),
                       (["--request-rate", "-1"], "--request-rate"),
                       # an option the other replaces is refused beside it, not ignored
                       (["--output-len", "3:4", "--max-tokens", "5"], "excludes"),
                       (["--input-len", "8", "--prompt-field", "q", "--tokenizer", TARGET],
                        "excludes"),
                       (["--tokenizer", TARGET], "--tokenizer requires --input-len")]:
        r = subprocess.run([mlaspec, "bench-serve"] + bad, capture_output=True, text=True,
                           cwd=ROOT)
        if r.returncode != 2 or named not in r.stderr:
            fail("%s: exit %d, stderr %r (want 2 naming %r)" % (bad, r.returncode, r.stderr, named))

    with tempfile.TemporaryDirectory() as tmp:
        log = open(os.path.join(tmp, "serve.log"), "w")
        proc = subprocess.Popen([mlaspec, "serve", "--model", TARGET, "--port", "0",
                                 "--max-running", "4", "--draft", "none"],
                                stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            line = proc.stdout.readline()
            if "listening on " not in line:
                fail("serve did not start: " + line)
            port = line.strip().rsplit(":", 1)[1]
            a = bench(mlaspec, port, os.path.join(tmp, "a.json"), 7)
            b = bench(mlaspec, port, os.path.join(tmp, "b.json"), 7)
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    reqs = a["requests"]
    if a["max_tokens"] is not None:  # --output-len sets each request's; no run-wide value
        fail("top-level max_tokens %r with --output-len (want null)" % a["max_tokens"])
    if a["completed"] != 12 or len(reqs) != 12 or a["request_rate"] != 25:
        fail("completed %s of 12, %d records, rate %s" % (a["completed"], len(reqs),
                                                          a["request_rate"]))
    budgets = [r["max_tokens"] for r in reqs]
    for r in reqs:
        if not 3 <= r["max_tokens"] <= 10:
            fail("max_tokens %d outside --output-len 3:10" % r["max_tokens"])
        if r["completion_tokens"] != r["max_tokens"]:
            fail("completion_tokens %d != max_tokens %d with --ignore-eos" %
                 (r["completion_tokens"], r["max_tokens"]))
        if r["prompt_tokens"] < 3:
            fail("a random prompt of %d tokens" % r["prompt_tokens"])
        if r["start_s"] + 1e-3 < r["arrival_s"]:
            fail("a request was sent at %.4f s, before its arrival %.4f s" %
                 (r["start_s"], r["arrival_s"]))
    if len(set(budgets)) < 2:
        fail("every request got the same max_tokens: %s" % budgets)
    arrivals = [r["arrival_s"] for r in reqs]
    if arrivals[0] != 0 or any(y <= x for x, y in zip(arrivals, arrivals[1:])):
        fail("arrivals are not increasing from 0: %s" % arrivals)
    if not 0 < a["arrival_span_s"] == arrivals[-1] or a["duration_s"] < arrivals[-1]:
        fail("span %s, duration %s, last arrival %s" % (a["arrival_span_s"], a["duration_s"],
                                                          arrivals[-1]))
    plan = lambda j: [(r["max_tokens"], r["prompt_tokens"], r["arrival_s"]) for r in j["requests"]]
    if plan(a) != plan(b):
        fail("the same seed gave another plan")
    print("OK: 12 requests at 25 req/s over %.2f s, max_tokens %s" % (a["arrival_span_s"], budgets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
