#!/usr/bin/env python3
"""Builds the tiny random DFlash drafter of tests/data/models/v3_qlora_moe_yarn-dflash/ and its
goldens.

    python3 python/golden/make_dflash_goldens.py [--out tests/data/models]

Needs torch, transformers (for the target) and safetensors. Fixed seeds: running it again rewrites
the same files.

The target is the tiny DeepSeek-V3 golden checkpoint tests/data/models/v3_qlora_moe_yarn (3
layers, hidden 64, vocab 256; python/golden/make_model_goldens.py). Its residual-stream hidden
states after layers 0 and 1 (transformers' output_hidden_states[1], [2]) on one token sequence
are the drafter's context features. (Not the last layer: transformers returns that one after the
final norm, mlaspec's capture_layers before it.)

Files in <out>/v3_qlora_moe_yarn-dflash/:
  config.json, model.safetensors   the drafter (python/dflash/model.py), bf16 weights; the
                                   goldens come from the module loaded back from these files, so
                                   they see the same (bf16) weights mlaspec loads.
  goldens.json                     the sequence, the cases (context length L, draft window,
                                   anchor = sequence[L]), per case the greedy drafts and the
                                   smallest top-2 gap, and the measured differences below.
  goldens.safetensors              f32: target_hidden [2, S, 64] (capture layers 0, 1);
                                   c<i>.logits_bf16kv and c<i>.logits_f32 [num_draft, vocab].

Two references per case, one block [anchor, MASK x num_draft] at positions L .. L + num_draft:
  logits_bf16kv  the module with the context K/V rounded to bf16 after k_norm + RoPE, where
                 mlaspec's drafter KV pool stores them; everything else f32. mlaspec's forward
                 matches it up to f32 summation order (tight bound).
  logits_f32     the plain module, all f32. The bf16 context K/V move logits by about 2^-9
                 relative per K/V value; the looser bound covers that.
Weights are redrawn (new seed) until every top-2 gap exceeds GAP_MIN_REL of the largest |logit| in
both references, both pick the same drafts, the drafts hold at least 10 distinct tokens, and the
windowed cases draft differently from the same context without a window.
"""

import argparse
import json
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, REPO)
from python.dflash.model import DFlashConfig, DFlashDrafter  # noqa: E402

TARGET = "v3_qlora_moe_yarn"
NAME = TARGET + "-dflash"
SEQ_LEN = 48
# (context length L, draft window; 0 = the whole context). Windows: shorter than L, not a multiple
# of a page, and longer than L (no effect).
CASES = [(1, 0), (9, 0), (30, 0), (47, 0), (30, 8), (47, 5), (20, 64)]
GAP_MIN_REL = 0.005
MASK_TOKEN = 255


def drafter_config():
    return DFlashConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=32, intermediate_size=128, vocab_size=256,
                        target_hidden_size=64, target_layer_ids=[0, 1], block_size=5,
                        mask_token_id=MASK_TOKEN, rms_norm_eps=1e-6, rope_theta=10000.0,
                        sliding_window=None)


def init_drafter(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                # Non-trivial norm weights; the final norm scales the logits up so that drafts are
                # decisive (top-2 gaps far above the bounds).
                scale = 4.0 if name == "norm.weight" else 1.0
                p.copy_(scale * (0.5 + torch.rand(p.shape, generator=g)))
            else:
                # The layers' outputs (o_proj, down_proj) outweigh the block's input embedding, so
                # the drafts depend on the context rather than echo the mask token.
                gain = 4.0 if ("o_proj" in name or "down_proj" in name) else 1.0
                p.copy_(gain * torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "models"))
    args = ap.parse_args()
    torch.manual_seed(0)

    target = AutoModelForCausalLM.from_pretrained(os.path.join(args.out, TARGET),
                                                  dtype=torch.float32)
    target.eval()
    embed = target.get_input_embeddings().weight.detach()
    head = target.lm_head.weight.detach()
    g = torch.Generator().manual_seed(1234)
    seq = torch.randint(0, MASK_TOKEN, (1, SEQ_LEN), generator=g)
    cfg = drafter_config()
    with torch.no_grad():
        hs = target(seq, output_hidden_states=True).hidden_states
        th = DFlashDrafter.select_target_hidden(hs, cfg.target_layer_ids)  # [1, S, 128]
    per_layer = torch.stack([hs[i + 1][0] for i in cfg.target_layer_ids])  # [2, S, 64]

    out_dir = os.path.join(args.out, NAME)
    for seed in range(100):
        model = DFlashDrafter(cfg)
        init_drafter(model, seed)
        model.save_pretrained(out_dir, dtype=torch.bfloat16)
        model = DFlashDrafter.load_pretrained(out_dir).eval()
        tensors = {"target_hidden": per_layer.contiguous()}
        cases = []
        ok = True
        max_rel = 0.0
        for i, (L, window) in enumerate(CASES):
            anchor = seq[:, L]
            w = window if window > 0 else None
            with torch.no_grad():
                lb = model(th[:, :L], anchor, embed, head, sliding_window=w,
                           kv_dtype=torch.bfloat16)[0]
                lf = model(th[:, :L], anchor, embed, head, sliding_window=w)[0]
            scale = float(lb.abs().max())
            top = lb.topk(2, dim=-1).values
            gap = float((top[:, 0] - top[:, 1]).min())
            topf = lf.topk(2, dim=-1).values
            gapf = float((topf[:, 0] - topf[:, 1]).min())
            drafts = lb.argmax(-1).tolist()
            rel = float((lb - lf).abs().max()) / scale
            max_rel = max(max_rel, rel)
            if (gap < GAP_MIN_REL * scale or gapf < GAP_MIN_REL * scale
                    or drafts != lf.argmax(-1).tolist()):
                ok = False
                break
            tensors[f"c{i}.logits_bf16kv"] = lb.contiguous()
            tensors[f"c{i}.logits_f32"] = lf.contiguous()
            cases.append({"context_len": L, "draft_window": window, "anchor": int(anchor),
                          "drafts": drafts, "max_abs_logit": scale, "min_top2_gap": gap})
        # Drafts that vary with the context and the window: a test of the window then sees it.
        distinct = {t for c in cases for t in c["drafts"]}
        by_case = {(c["context_len"], c["draft_window"]): c["drafts"] for c in cases}
        if ok and len(distinct) >= 10 and by_case[(30, 0)] != by_case[(30, 8)] \
                and by_case[(47, 0)] != by_case[(47, 5)]:
            break
    else:
        raise SystemExit("no decisive drafter in 100 seeds")

    save_file(tensors, os.path.join(out_dir, "goldens.safetensors"))
    meta = {
        "generator": "python/golden/make_dflash_goldens.py",
        "target": TARGET,
        "weights_seed": seed,
        "sequence": seq[0].tolist(),
        "num_draft": cfg.num_draft,
        "cases": cases,
        "max_rel_diff_bf16kv_vs_f32": max_rel,
    }
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"{out_dir}: seed {seed}, {len(cases)} cases, "
          f"max |bf16kv - f32| / max|logit| = {max_rel:.2e}")


if __name__ == "__main__":
    main()
