#!/usr/bin/env python3
"""Accept length tau of drafters on held-out problems through `mlaspec generate --json` (greedy).

    python3 python/dspark/eval_tau.py --n 24 \\
        --run dflash:models/drafter --run dspark:/tmp/dspark \\
        --run dspark:/tmp/dspark:adaptive

tau = (accepted + verify steps) / verify steps over all problems (tokens emitted per verify), and
drafted tokens per verify step (the verify width actually used). Prints one JSON line per run.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(REPO, "python", "train"))
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlaspec", default=os.path.join(REPO, "build", "mlaspec"))
    ap.add_argument("--target", default=os.path.join(REPO, "models", "target"))
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--run", action="append", required=True,
                    help="draft:dir[:fixed|adaptive]")
    a = ap.parse_args()
    problems = tasks.heldout()[:a.n]
    env = dict(os.environ, MLASPEC_LOG="warn")
    for run in a.run:
        parts = run.split(":")
        draft, model = parts[0], parts[1]
        width = parts[2] if len(parts) > 2 else "fixed"
        steps = accepted = drafted = correct = 0
        for p in problems:
            cmd = [a.mlaspec, "generate", "--model", a.target, "--draft", draft, "--draft-model",
                   model, "--prompt", tk.prompt_text(p["question"]), "--max-tokens",
                   str(a.max_tokens), "--json"]
            if draft == "dspark":
                cmd += ["--verify-width", width]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                            env=env).stdout)
            s = out["spec"]
            steps += s["verify_steps"]
            accepted += s["accepted"]
            drafted += s["drafted"]
            correct += tasks.parse_answer(out["text"]) == p["answer"]
        print(json.dumps(dict(run=run, problems=len(problems), verify_steps=steps,
                              tau=round((accepted + steps) / steps, 3),
                              drafts_per_step=round(drafted / steps, 3),
                              acceptance=round(accepted / max(drafted, 1), 3),
                              answers_correct=correct)), flush=True)


if __name__ == "__main__":
    main()
