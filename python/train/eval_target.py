"""Greedy exact-match accuracy of a target checkpoint on the held-out problems, with transformers.

    python3 python/train/eval_target.py --model models/target [--heldout models/eval/heldout.jsonl]
                                        [--limit N] [--batch 128]

Each question is rendered with the tokenizer's chat template (add_generation_prompt), the batch is
left-padded, `generate` runs greedily up to <|end|>, and the number after the last `####` of the
completion must equal the answer. Prints the accuracy, per template, and a few failures.
"""

import argparse
import collections
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks  # noqa: E402
from tokenizer import prompt_text  # noqa: E402

MAX_NEW_TOKENS = 160


@torch.no_grad()
def greedy_completions(model, tok, questions, batch_size=128, max_new_tokens=MAX_NEW_TOKENS):
    """Greedy completions (token id lists, up to and excluding <|end|>) for `questions`.

    `tok` is a `tokenizers.Tokenizer`; prompts are left-padded with <|pad|>.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    eos, pad = model.config.eos_token_id, model.config.pad_token_id
    out = []
    for i in range(0, len(questions), batch_size):
        encs = [tok.encode(prompt_text(q)).ids for q in questions[i:i + batch_size]]
        width = max(len(e) for e in encs)
        ids = torch.full((len(encs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encs), width), dtype=torch.long)
        for j, e in enumerate(encs):
            ids[j, width - len(e):] = torch.tensor(e)
            mask[j, width - len(e):] = 1
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            gen = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device),
                                 max_new_tokens=max_new_tokens, do_sample=False,
                                 eos_token_id=eos, pad_token_id=pad, use_cache=True)
        for row in gen[:, width:].tolist():
            out.append(row[:row.index(eos)] if eos in row else row)
    model.train(was_training)
    return out


def score(tok, problems, completions, show_failures=0):
    """Exact-match accuracy of `completions` (token ids) on the `#### N` answers of `problems`;
    returns (acc, per-template dict, failures)."""
    per = collections.defaultdict(lambda: [0, 0])
    fails = []
    for p, c in zip(problems, completions):
        text = tok.decode(c, skip_special_tokens=True)
        ok = tasks.parse_answer(text) == p["answer"]
        per[p["template"]][0] += ok
        per[p["template"]][1] += 1
        if not ok and len(fails) < show_failures:
            fails.append(dict(question=p["question"], expected=p["solution"], got=text))
    correct = sum(v[0] for v in per.values())
    return correct / max(1, len(problems)), {k: v[0] / v[1] for k, v in sorted(per.items())}, fails


def accuracy(model, tok, problems, batch_size=128, show_failures=0,
             max_new_tokens=MAX_NEW_TOKENS):
    """Greedy completions of `problems` scored by `score`."""
    comps = greedy_completions(model, tok, [p["question"] for p in problems], batch_size,
                               max_new_tokens)
    return score(tok, problems, comps, show_failures)


def load_heldout(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


if __name__ == "__main__":
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--heldout", default=None, help="jsonl; default: regenerate from the seed")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=128)
    a = ap.parse_args()
    probs = load_heldout(a.heldout) if a.heldout else tasks.heldout()
    if a.limit:
        probs = probs[:a.limit]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(
        a.model, dtype=torch.bfloat16 if dev == "cuda" else torch.float32).to(dev)
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    t0 = time.time()
    acc, per, fails = accuracy(model, tok, probs, a.batch, show_failures=3)
    print(f"accuracy {acc:.4f} on {len(probs)} held-out problems ({time.time() - t0:.1f} s, {dev})")
    print("per template:", json.dumps({k: round(v, 3) for k, v in per.items()}))
    for f in fails:
        print("---\nQ:", f["question"], "\nexpected:\n" + f["expected"], "\ngot:\n" + f["got"])
