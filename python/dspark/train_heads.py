#!/usr/bin/env python3
"""Trains only the DSpark heads (Markov, confidence) for a frozen target and a frozen DFlash
backbone, on the CPU or a GPU, and saves a DSpark checkpoint (docs/dspark.md).

    python3 python/dspark/train_heads.py --target models/target --drafter models/drafter \\
        --out /tmp/dspark --minutes 6

Data: python/train's problem generator (training split, the held-out questions excluded), each
sequence = prompt + solution, as python/train/train_drafter.py builds them. Per step: the frozen
target over a batch (context features at the drafter's target_layer_ids, and its logits), the
frozen backbone's many-blocks forward (DFlashDrafter.forward_train without the lm_head) at random
anchors inside the solutions, then the heads: slot k's previous token is the target's greedy
token at the slot before (the anchor for slot 1), i.e. the chain that verify accepts. Loss:
dspark_loss (REFERENCES.md), its target distribution the target's softmax at the slot's position.
"""

import argparse
import json
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "python", "train"))
from python.dflash.model import DFlashDrafter, sample_anchors  # noqa: E402
from python.dspark.model import DSparkConfig, DSparkDrafter, dspark_loss  # noqa: E402
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402


def batches(tok, problems, batch_size, rng):
    pad = tok.token_to_id(tk.PAD)
    while True:
        chosen = rng.sample(problems, batch_size)
        seqs, plens = [], []
        for p in chosen:
            prompt = tok.encode(tk.prompt_text(p["question"])).ids
            sol = tok.encode(p["solution"]).ids + [tok.token_to_id(tk.EOS)]
            seqs.append(prompt + sol)
            plens.append(len(prompt))
        S = max(len(s) for s in seqs)
        x = torch.full((batch_size, S), pad, dtype=torch.long)
        mask = torch.zeros(batch_size, S, dtype=torch.bool)
        lens = torch.tensor([len(s) for s in seqs])
        for b, s in enumerate(seqs):
            x[b, :len(s)] = torch.tensor(s)
            mask[b, plens[b]:len(s)] = True
        yield x, lens, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default=os.path.join(REPO, "models", "target"))
    ap.add_argument("--drafter", default=os.path.join(REPO, "models", "drafter"))
    ap.add_argument("--out", default=os.path.join(REPO, "models", "dspark"))
    ap.add_argument("--markov-rank", type=int, default=32)
    ap.add_argument("--minutes", type=float, default=6.0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--anchors", type=int, default=24)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    tok = Tokenizer.from_file(os.path.join(a.target, "tokenizer.json"))
    target = AutoModelForCausalLM.from_pretrained(a.target, dtype=torch.float32).eval()
    backbone = DFlashDrafter.load_pretrained(a.drafter).eval()
    d = backbone.config.to_dict()
    d.pop("model_type")
    model = DSparkDrafter(DSparkConfig(**d, markov_rank=a.markov_rank, confidence_head=True))
    model.load_state_dict(backbone.state_dict(), strict=False)
    for p in model.parameters():
        p.requires_grad_(False)
    heads = list(model.markov.parameters()) + list(model.confidence.parameters())
    for p in heads:
        p.requires_grad_(True)
    opt = torch.optim.Adam(heads, lr=a.lr)
    emb = target.get_input_embeddings().weight.detach()
    head = target.lm_head.weight.detach()
    held = {p["question"] for p in tasks.heldout()}
    problems, _ = tasks.training_problems(4000, held)
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(0)
    K = model.gamma
    t0, step, hist = time.time(), 0, []
    for x, lens, mask in batches(tok, problems, a.batch_size, rng):
        if time.time() - t0 > a.minutes * 60:
            break
        B, S = x.shape
        with torch.no_grad():
            out = target(input_ids=x, output_hidden_states=True)
            th = DFlashDrafter.select_target_hidden(out.hidden_states, model.config.target_layer_ids)
            anchors, valid = sample_anchors(mask, a.anchors, model.config.block_size, generator=gen)
            hid, labels = DFlashDrafter.forward_train(model, x, th, anchors, emb, None,
                                                      anchor_valid=valid)
            base = hid @ head.t()  # [B, N, K, V]
            pos = anchors[:, :, None] + torch.arange(1, K + 1)  # slot positions
            keep = (labels != -100) & (pos < lens[:, None, None])
            tl = out.logits.gather(
                1, (pos - 1).clamp(0, S - 1).view(B, -1, 1).expand(-1, -1, out.logits.shape[-1])
            ).view(B, -1, K, out.logits.shape[-1])  # the target's logits for each slot
            greedy = tl.argmax(-1)
            prev = torch.cat([x.gather(1, anchors)[:, :, None], greedy[:, :, :-1]], -1)
        logits = base + model.markov(prev)
        conf = model.confidences(hid)
        loss = dspark_loss(logits.flatten(0, 1), tl.flatten(0, 1), conf.flatten(0, 1),
                           gamma=4.0, mask=keep.flatten(0, 1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 20 == 0:
            with torch.no_grad():
                acc_base = ((base.argmax(-1) == greedy) & keep).sum() / keep.sum()
                acc = ((logits.argmax(-1) == greedy) & keep).sum() / keep.sum()
            hist.append(dict(step=step, loss=float(loss.detach()), slot_acc_backbone=float(acc_base),
                             slot_acc_dspark=float(acc), seconds=round(time.time() - t0)))
            print(json.dumps(hist[-1]), flush=True)
    model.save_pretrained(a.out)
    with open(os.path.join(a.out, "train_log.json"), "w") as f:
        json.dump(dict(args=vars(a), steps=step, history=hist), f, indent=1)
        f.write("\n")
    print(f"saved {a.out} after {step} steps")


if __name__ == "__main__":
    main()
