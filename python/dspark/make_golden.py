#!/usr/bin/env python3
"""Builds the tiny random DSpark drafter of tests/data/models/v3_qlora_moe_yarn-dspark/ and its
goldens.

    python3 python/dspark/make_golden.py [--out tests/data/models]

The target and the backbone are the DFlash golden's (python/golden/make_dflash_goldens.py: target
v3_qlora_moe_yarn, its token sequence, capture layers 0 and 1, the backbone weights of the seed
recorded in v3_qlora_moe_yarn-dflash/goldens.json); the Markov head (rank 16) and the confidence
head are drawn here. Fixed seeds: running it again rewrites the same files.

Files in <out>/v3_qlora_moe_yarn-dspark/:
  config.json, model.safetensors   the drafter (python/dspark/model.py), bf16 weights; goldens
                                   come from the module loaded back from these files.
  goldens.json                     sequence, cases (context length L, draft window, anchor), per
                                   case the greedy drafts and forced tokens, smallest top-2 gap.
  goldens.safetensors              f32: target_hidden [2, S, 64];
                                   c<i>.logits [gamma, vocab]  greedy left to right, Markov bias
                                                               of the previous greedy draft;
                                   c<i>.forced_logits          the same with the previous tokens
                                                               forced to goldens.json's "forced";
                                   c<i>.confidence [gamma].
All references keep the context K/V rounded to bf16 (mlaspec's draft pool), as DFlash's
logits_bf16kv do, so DFlash's tight bound applies.
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
from python.dflash.model import DFlashDrafter  # noqa: E402
from python.dspark.model import DSparkConfig, DSparkDrafter  # noqa: E402
from python.golden import make_dflash_goldens as dfg  # noqa: E402

NAME = dfg.TARGET + "-dspark"
MARKOV_RANK = 16
GAP_MIN_REL = 0.005


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "models"))
    args = ap.parse_args()
    torch.manual_seed(0)
    target = AutoModelForCausalLM.from_pretrained(os.path.join(args.out, dfg.TARGET),
                                                  dtype=torch.float32).eval()
    embed = target.get_input_embeddings().weight.detach()
    head = target.lm_head.weight.detach()
    with open(os.path.join(args.out, dfg.NAME, "goldens.json")) as f:
        dmeta = json.load(f)
    seq = torch.tensor([dmeta["sequence"]])
    base = dfg.drafter_config()
    cfg = DSparkConfig(**{k: v for k, v in base.to_dict().items() if k != "model_type"},
                       markov_rank=MARKOV_RANK, confidence_head=True)
    with torch.no_grad():
        hs = target(seq, output_hidden_states=True).hidden_states
        th = DFlashDrafter.select_target_hidden(hs, cfg.target_layer_ids)
    per_layer = torch.stack([hs[i + 1][0] for i in cfg.target_layer_ids])

    out_dir = os.path.join(args.out, NAME)
    for seed in range(100):
        backbone = DFlashDrafter(base)
        dfg.init_drafter(backbone, dmeta["weights_seed"])  # the DFlash golden's backbone
        model = DSparkDrafter(cfg)
        missing = model.load_state_dict(backbone.state_dict(), strict=False).missing_keys
        assert sorted(missing) == ["confidence.bias", "confidence.weight", "markov.w1",
                                   "markov.w2"], missing
        g = torch.Generator().manual_seed(5000 + seed)
        with torch.no_grad():
            # Markov bias about as large as the backbone's logits, so it changes drafts.
            model.markov.w1.copy_(torch.randn(model.markov.w1.shape, generator=g))
            model.markov.w2.copy_(2.0 * torch.randn(model.markov.w2.shape, generator=g)
                                  / MARKOV_RANK ** 0.5)
            model.confidence.weight.copy_(torch.randn(1, cfg.hidden_size, generator=g) / 24)
            model.confidence.bias.fill_(1.0)
        model.save_pretrained(out_dir, dtype=torch.bfloat16)
        model = DSparkDrafter.load_pretrained(out_dir).eval()
        tensors = {"target_hidden": per_layer.contiguous()}
        cases, ok, changed = [], True, 0
        for i, (L, window) in enumerate(dfg.CASES):
            anchor = seq[:, L]
            w = window if window > 0 else None
            forced = torch.randint(0, cfg.vocab_size, (1, cfg.gamma), generator=g)
            with torch.no_grad():
                o = model(th[:, :L], anchor, embed, head, sliding_window=w,
                          kv_dtype=torch.bfloat16)
                of = model(th[:, :L], anchor, embed, head, sliding_window=w,
                           kv_dtype=torch.bfloat16, tokens=forced)
                plain = DFlashDrafter.forward(model, th[:, :L], anchor, embed, head,
                                              sliding_window=w, kv_dtype=torch.bfloat16)
            lg = o.logits[0]
            scale = float(lg.abs().max())
            top = lg.topk(2, dim=-1).values
            gap = float((top[:, 0] - top[:, 1]).min())
            if gap < GAP_MIN_REL * scale:
                ok = False
                break
            drafts = o.tokens[0].tolist()
            changed += int(drafts != plain[0].argmax(-1).tolist())
            tensors[f"c{i}.logits"] = lg.contiguous()
            tensors[f"c{i}.forced_logits"] = of.logits[0].contiguous()
            tensors[f"c{i}.confidence"] = o.confidence[0].contiguous()
            cases.append({"context_len": L, "draft_window": window, "anchor": int(anchor),
                          "drafts": drafts, "forced": forced[0].tolist(),
                          "confidence": o.confidence[0].tolist(), "max_abs_logit": scale,
                          "min_top2_gap": gap})
        if ok and changed >= 2:
            break
    else:
        raise SystemExit("no decisive DSpark drafter in 100 seeds")
    save_file(tensors, os.path.join(out_dir, "goldens.safetensors"))
    meta = {"generator": "python/dspark/make_golden.py", "target": dfg.TARGET,
            "backbone_seed": dmeta["weights_seed"], "heads_seed": 5000 + seed,
            "sequence": seq[0].tolist(), "gamma": cfg.gamma,
            "cases_changed_by_markov": changed, "cases": cases}
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"{out_dir}: heads seed {5000 + seed}, {len(cases)} cases, {changed} with drafts the "
          "Markov head changed")


if __name__ == "__main__":
    main()
