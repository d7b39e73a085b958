#!/usr/bin/env python3
"""The real-size check of issue 33: a DeepSeek-V2-Lite-shaped model (or a one-layer Kimi-K2-shaped
slice) with random weights made by transformers itself, loaded by mlaspec from the directory
transformers saved, and the two runtimes' logits compared.

    python3 scripts/v2lite_check.py --case v2lite --mlaspec build-gpu/mlaspec [--dir /tmp/x]
    python3 scripts/v2lite_check.py --case kimi   --mlaspec build-gpu/mlaspec
    python3 scripts/v2lite_check.py --case tiny-v2 --device cpu --mlaspec-device cpu \
        --mlaspec build/mlaspec          # the same steps at toy size, on a CPU-only machine
    python3 scripts/v2lite_check.py --case v2lite --dir /tmp/x --make-only   # steps 1-2 only

Steps (each timed and printed; scripts/gpu-check.sh --v2lite runs it under a time limit):
  1. the config (v2lite: DeepSeek-V2-Lite's config.json - 27 layers, hidden 2048, 16 heads,
     kv_lora 512, no q LoRA, 64 experts top-6 softmax greedy, 2 shared, first layer dense, YaRN
     x40; kimi: one MoE layer of Kimi-K2 - hidden 7168, 64 heads, q LoRA 1536, 384 experts top-8,
     n_group 1, noaux_tc, vocab cut to 32768 to keep the slice small) and the model built by
     transformers on --device in bf16, weights drawn as tests/data/models' goldens draw them
     (N(0, 1/fan_in), norms ~1, embeddings N(0, 1)) so logits are decisive;
  2. save_pretrained (bf16, safetensors shards of 5 GB; ~31 GB for v2lite) to --dir;
  3. the token sequence: a random prompt of --prompt-len ids and --decode greedy tokens of
     transformers' bf16 model; transformers' logits at the last prompt row and each decode row,
     in bf16 (the model as saved) and in f32 (the same bf16 weights, converted: the reference the
     CPU runtime's goldens use); then transformers' model is freed;
  4. `mlaspec model-logits --device cuda`: the prefill and the decode steps teacher-forced with the
     same tokens, logits written as raw f32;
  5. the table: per row, max |mlaspec - ref| / max |ref| against both references, and whether the
     argmax agrees (with the reference's top-2 gap, so a disagreement on a near-tie shows as one).

Bound: the CUDA runtime's stated bound against the CPU runtime is 3e-2 of the row's largest
|logit| (docs/model.md, "CUDA runtime": bf16 at every GEMM input, f32 accumulation); against
transformers' f32 on the same bf16 weights the same bound applies, and argmax must agree wherever
the f32 reference's top-2 gap exceeds twice the measured error. The exit status is 0 when both
hold for every row, 1 otherwise.
"""

import argparse
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import time

import torch

BOUND_REL = 3e-2

V2LITE = dict(
    vocab_size=102400, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
    num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16, q_lora_rank=None,
    kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
    n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6, topk_method="greedy",
    n_group=1, topk_group=1, first_k_dense_replace=1, routed_scaling_factor=1.0,
    norm_topk_prob=False, max_position_embeddings=163840, rms_norm_eps=1e-6,
    rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=40.0,
                         original_max_position_embeddings=4096, beta_fast=32, beta_slow=1,
                         mscale=0.707, mscale_all_dim=0.707),
    tie_word_embeddings=False, bos_token_id=100000, eos_token_id=100001)

KIMI = dict(
    vocab_size=32768, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
    num_hidden_layers=1, num_attention_heads=64, num_key_value_heads=64, q_lora_rank=1536,
    kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
    n_routed_experts=384, n_shared_experts=1, num_experts_per_tok=8, n_group=1, topk_group=1,
    first_k_dense_replace=0, routed_scaling_factor=2.827, norm_topk_prob=True,
    rope_interleave=True, max_position_embeddings=131072, rms_norm_eps=1e-6,
    rope_parameters=dict(rope_type="yarn", rope_theta=50000.0, factor=32.0,
                         original_max_position_embeddings=4096, beta_fast=32, beta_slow=1,
                         mscale=1.0, mscale_all_dim=1.0),
    tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)

TINY = dict(bos_token_id=1, eos_token_id=2, vocab_size=512, hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
            num_attention_heads=8, num_key_value_heads=8, qk_nope_head_dim=16, v_head_dim=16)

CASES = {
    "v2lite": dict(family="v2", config=V2LITE),
    "kimi": dict(family="v3", model_type="kimi_k2", config=KIMI),
    "tiny-v2": dict(family="v2", config=dict(V2LITE, **TINY, num_hidden_layers=3,
                                             n_routed_experts=8, num_experts_per_tok=3)),
    "tiny-kimi": dict(family="v3", model_type="kimi_k2",
                      config=dict(KIMI, **TINY, q_lora_rank=32, n_routed_experts=24,
                                  num_experts_per_tok=4)),
}


def log(msg, t0=[time.time()]):
    print(f"[v2lite_check {time.time() - t0[0]:7.1f}s] {msg}", flush=True)


def classes(family):
    from transformers import (DeepseekV2Config, DeepseekV2ForCausalLM, DeepseekV3Config,
                              DeepseekV3ForCausalLM)
    return ((DeepseekV3ForCausalLM, DeepseekV3Config) if family == "v3"
            else (DeepseekV2ForCausalLM, DeepseekV2Config))


def config_kwargs(cfg):
    """transformers >= 5 takes rope_parameters; 4.x takes rope_theta + rope_scaling (which
    mlaspec's config parser reads too)."""
    import transformers
    cfg = dict(cfg)
    if int(transformers.__version__.split(".")[0]) < 5:
        rp = dict(cfg.pop("rope_parameters"))
        cfg["rope_theta"] = rp.pop("rope_theta")
        kind = rp.pop("rope_type")
        cfg["rope_scaling"] = None if kind == "default" else dict(rp, type=kind)
    return cfg


def init_weights(model, seed):
    """As python/golden/make_model_goldens.py draws them, in place on the model's device."""
    with torch.no_grad():
        hidden = model.config.hidden_size
        dev = next(model.parameters()).device
        g = torch.Generator(device=dev).manual_seed(seed)
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.normal_(1.0, 0.2, generator=g)
            elif "embed_tokens" in name:
                p.normal_(0.0, 1.0, generator=g)
            elif name == "lm_head.weight":
                p.normal_(0.0, 4.0 / math.sqrt(hidden), generator=g)
            else:
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[-1]), generator=g)
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.normal_(0.0, 0.1, generator=g)


def rows_of(model, ids, first_row):
    """Logits rows first_row .. end of one causal forward over ids (no cache), f32 on the host."""
    with torch.no_grad():
        out = model(torch.tensor([ids], device=next(model.parameters()).device), use_cache=False)
    return out.logits[0, first_row:].float().cpu()


def compare(name, got, ref):
    """Per-row max |got - ref| / max |ref|, argmax agreement and ref's top-2 gap (relative)."""
    rows = []
    for r in range(ref.shape[0]):
        scale = ref[r].abs().max().item()
        err = (got[r] - ref[r]).abs().max().item() / scale
        top2 = torch.topk(ref[r], 2).values
        gap = (top2[0] - top2[1]).item() / scale
        same = int(torch.argmax(got[r]).item() == torch.argmax(ref[r]).item())
        rows.append(dict(ref=name, row=r, rel_err=err, argmax_equal=same, top2_gap=gap))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=sorted(CASES), default="v2lite")
    ap.add_argument("--mlaspec", default="build-gpu/mlaspec")
    ap.add_argument("--dir", default=None, help="where the checkpoint goes (default /tmp/mlaspec-<case>)")
    ap.add_argument("--device", default="cuda", help="transformers' device")
    ap.add_argument("--mlaspec-device", default="cuda")
    ap.add_argument("--prompt-len", type=int, default=64)
    ap.add_argument("--decode", type=int, default=8)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--timeout", type=int, default=420, help="seconds for the mlaspec step")
    ap.add_argument("--keep", action="store_true", help="keep the checkpoint directory")
    ap.add_argument("--json", default=None, help="also write the rows and timings as JSON")
    ap.add_argument("--make-only", action="store_true",
                    help="only steps 1-2: build and save the checkpoint to --dir (kept), then exit "
                         "(scripts/long_context.py makes its V2-Lite-shaped model this way)")
    args = ap.parse_args()
    if args.make_only:
        args.keep = True

    case = CASES[args.case]
    out_dir = args.dir or f"/tmp/mlaspec-{args.case}"
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    timings = {}
    try:
        cls, cfg_cls = classes(case["family"])
        config = cfg_cls(**config_kwargs(case["config"]))
        config._attn_implementation = "eager"
        t = time.time()
        torch.manual_seed(args.seed)
        # Built in bf16 directly (no f32 copy of 16-34 B parameters), then the RoPE frequencies
        # remade in f32: a module built under a bf16 default (or .to(bf16)) holds inv_freq rounded
        # to bf16, which mlaspec (f32 inv_freq, as transformers computes it) would not match.
        torch.set_default_dtype(torch.bfloat16)
        try:
            with torch.device(args.device):
                model = cls(config).eval()
        finally:
            torch.set_default_dtype(torch.float32)
        with torch.device(args.device):
            model.model.rotary_emb = type(model.model.rotary_emb)(config=config)
        assert model.model.rotary_emb.inv_freq.dtype == torch.float32
        init_weights(model, args.seed)
        if args.device == "cuda":
            torch.cuda.synchronize()
        params = sum(p.numel() for p in model.parameters())
        timings["build_s"] = time.time() - t
        log(f"{args.case}: {params / 1e9:.2f} B parameters built on {args.device} in bf16 "
            f"({timings['build_s']:.1f} s)")

        t = time.time()
        model.save_pretrained(out_dir, max_shard_size="5GB")
        if "model_type" in case:  # kimi_k2: transformers has no class of its own; V3's layout
            path = os.path.join(out_dir, "config.json")
            with open(path) as f:
                cj = json.load(f)
            cj["model_type"] = case["model_type"]
            with open(path, "w") as f:
                json.dump(cj, f, indent=2, sort_keys=True)
        size = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
        timings["save_s"] = time.time() - t
        log(f"saved {size / 1e9:.1f} GB to {out_dir} ({timings['save_s']:.1f} s, "
            f"{size / 1e9 / timings['save_s']:.2f} GB/s)")
        if args.make_only:
            return 0

        # Tokens: a random prompt and transformers' bf16 greedy continuation.
        g = torch.Generator().manual_seed(args.seed)
        vocab = config.vocab_size
        ids = torch.randint(0, vocab, (args.prompt_len,), generator=g).tolist()
        t = time.time()
        for _ in range(args.decode):
            ids.append(int(torch.argmax(rows_of(model, ids, len(ids) - 1)[0]).item()))
        first = args.prompt_len - 1
        # Rows: the last prompt row (the prefill's), then one per decode step (mlaspec feeds each
        # greedy token in turn).
        ref_bf16 = rows_of(model, ids, first)
        # The f32 copy needs twice the bf16 bytes: where that does not fit beside the bf16 model
        # (the Kimi slice on an 80 GB card), it is made and run on the host instead.
        if args.device == "cuda":
            free, _ = torch.cuda.mem_get_info()
            if 2 * size > 0.9 * free:
                log(f"f32 reference on the host ({2 * size / 1e9:.0f} GB > 90% of "
                    f"{free / 1e9:.0f} GB free on the GPU)")
                model = model.to("cpu")
                gc.collect()
                torch.cuda.empty_cache()
        model = model.float()
        ref_f32 = rows_of(model, ids, first)
        timings["reference_s"] = time.time() - t
        log(f"transformers: {args.decode} greedy tokens, bf16 and f32 logits of "
            f"{ref_f32.shape[0]} rows ({timings['reference_s']:.1f} s)")
        del model
        gc.collect()
        if args.device == "cuda":
            torch.cuda.empty_cache()

        tokens = os.path.join(out_dir, "tokens.json")
        with open(tokens, "w") as f:
            json.dump({"prompt": ids[:args.prompt_len], "decode": ids[args.prompt_len:]}, f)
        logits_path = os.path.join(out_dir, "mlaspec_logits.f32")
        cmd = [args.mlaspec, "model-logits", "--model", out_dir, "--device", args.mlaspec_device,
               "--tokens", tokens, "--out", logits_path]
        if args.mlaspec_device == "cuda":
            cmd += ["--mem-fraction", "0.95"]
        log("running " + " ".join(cmd))
        t = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        timings["mlaspec_s"] = time.time() - t
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.stdout.write(p.stderr[-4000:])
            log(f"mlaspec failed (exit {p.returncode})")
            return 1
        got = torch.frombuffer(bytearray(open(logits_path, "rb").read()),
                               dtype=torch.float32).reshape(-1, vocab)
        if got.shape != ref_f32.shape:
            log(f"mlaspec wrote {tuple(got.shape)} logits, expected {tuple(ref_f32.shape)}")
            return 1
        log(f"mlaspec: {timings['mlaspec_s']:.1f} s (load + {ref_f32.shape[0]} steps); "
            f"load {size / 1e9:.1f} GB")

        rows = compare("f32", got, ref_f32) + compare("bf16", got, ref_bf16)
        hf = compare("hf bf16 vs f32", ref_bf16, ref_f32)
        print(f"\n| {args.case} row | ref | max abs err / max abs logit | argmax equal | "
              f"ref top-2 gap / max abs logit |")
        print("|---|---|---|---|---|")
        for r in rows + hf:
            print(f"| {'prefill' if r['row'] == 0 else 'decode ' + str(r['row'])} | {r['ref']} | "
                  f"{r['rel_err']:.2e} | {'yes' if r['argmax_equal'] else 'NO'} | "
                  f"{r['top2_gap']:.2e} |")
        f32_rows = [r for r in rows if r["ref"] == "f32"]
        worst = max(r["rel_err"] for r in f32_rows)
        agree = sum(r["argmax_equal"] for r in f32_rows)
        # A disagreement counts only where the reference's top-2 gap exceeds twice the error.
        bad_argmax = [r for r in f32_rows if not r["argmax_equal"] and r["top2_gap"] > 2 * r["rel_err"]]
        ok = worst <= BOUND_REL and not bad_argmax
        print(f"\n{args.case}: max rel error vs transformers f32 {worst:.2e} (bound {BOUND_REL:g}); "
              f"argmax {agree}/{len(f32_rows)} rows equal; transformers' own bf16 vs f32: "
              f"{max(r['rel_err'] for r in hf):.2e} -> {'PASS' if ok else 'FAIL'}")
        print("timings: " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(case=args.case, params=params, bytes=size, timings=timings,
                               rows=rows, hf_bf16_vs_f32=hf, pass_=ok), f, indent=1)
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
