#!/usr/bin/env python3
"""Builds the tiny random-weight DeepSeek checkpoints of tests/data/models/ and their goldens.

    python3 python/golden/make_model_goldens.py [--out tests/data/models]

Needs torch, transformers (>= 5, with DeepseekV3ForCausalLM / DeepseekV2ForCausalLM) and
safetensors. Everything comes from fixed seeds: running it again rewrites the same files.

Per model, in tests/data/models/<name>/:
  config.json                      the config as transformers saved it (model_type rewritten for
                                   kimi_k2; quantization_config added for the fp8 checkpoint)
  model.safetensors | model-0000k-of-0000n.safetensors + model.safetensors.index.json
                                   the weights in the storage dtype of the case (bf16, f16, f32 or
                                   fp8 e4m3 with 128x128 block scales `<name>_scale_inv`)
  goldens.json                     prompts, greedy continuations, top-2 gaps, what each tensor is
  goldens.safetensors              f32 tensors: p<k>.logits_hf, p<k>.logits_bf16 [S, vocab],
                                   p<k>.hidden_hf, p<k>.hidden_bf16 [L, S, hidden]

Two references per prompt (S = prompt + 32 continuation tokens, one causal forward, no cache):
  *_hf    transformers as it is, pure f32 (eager attention in the MHA form). mlaspec's forward in
          its f32 validation mode (ForwardOptions::f32_attention: no bf16 anywhere) matches it to
          1e-5 of the largest |logit|; the runtime path, which rounds q, KV rows and the attention
          output to bf16 at the attention op's boundary, to 2e-2.
  *_bf16  transformers with only its attention core replaced (the patch below,
          `absorbed_bf16_attention`): the same projections, norms, RoPE, MoE and lm_head modules,
          but attention in the absorbed MLA form with the values rounded to bf16 exactly where
          mlaspec's attention op rounds them (q as [q_nope @ W_UK | rope(q_pe)] 576 wide, the KV
          row [kv_a_layernorm(c) | rope(k_pe)], and the 512-wide attention output before W_UV).
          The runtime path matches it to 5e-3, not 1e-4: an f32 difference of one ulp that lands
          on a bf16 rounding boundary moves that value by 2^-8, and later layers amplify it
          (docs/model.md has the measured distribution).

The weights HF computes with are the stored values (bf16/f16 rounded, fp8 dequantized as
`fp8 * scale_inv` per 128x128 block, done here: transformers' fine-grained fp8 path needs a GPU).
The greedy continuation is HF's pure-f32 argmax; the script checks that the bf16-rounded reference
picks the same tokens and records the smallest top-2 logit gap along each continuation.
"""

import argparse
import json
import math
import os
import shutil
import tempfile

import torch
from safetensors.torch import load_file, save_file
from transformers import (DeepseekV2Config, DeepseekV2ForCausalLM, DeepseekV3Config,
                          DeepseekV3ForCausalLM)
from transformers.models.deepseek_v2 import modeling_deepseek_v2 as hf_v2
from transformers.models.deepseek_v3 import modeling_deepseek_v3 as hf_v3

CONTINUATION = 32
PROMPT_LENGTHS = [6, 27]
# Prompts are redrawn (up to MAX_DRAWS times) until the case is decisive: both references pick the
# same continuation, every top-2 gap along it in the bf16-rounded reference exceeds GAP_MIN_REL of
# the largest |logit| (above the largest runtime-vs-reference difference measured, docs/model.md),
# and |HF f32 - HF bf16-rounded|
# stays below MAX_REL of the largest |logit| at every row (no MoE routing decision flips between
# the two; a flip moves a row by ~0.3).
MAX_DRAWS = 100
GAP_MIN_REL = 3e-3
MAX_REL = 2e-2

COMMON = dict(
    hidden_size=64,
    intermediate_size=96,
    moe_intermediate_size=32,
    num_attention_heads=8,
    num_key_value_heads=8,  # unused by MLA; HF derives its repeat factor from it
    kv_lora_rank=512,
    qk_nope_head_dim=8,
    qk_rope_head_dim=64,
    v_head_dim=8,
    vocab_size=256,
    max_position_embeddings=512,
    rms_norm_eps=1e-6,
)

YARN_V3 = dict(rope_type="yarn", rope_theta=10000.0, factor=8.0, original_max_position_embeddings=64,
               beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0)
# DeepSeek-V2's own YaRN values: mscale == mscale_all_dim, so the cos/sin factor is 1 and the
# softmax scale carries mscale^2.
YARN_V2 = dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=128,
               beta_fast=32, beta_slow=1, mscale=0.707, mscale_all_dim=0.707)

CASES = [
    # DeepSeek-V3 as shipped: q LoRA, dense first layer, grouped noaux_tc MoE, YaRN + interleave.
    dict(name="v3_qlora_moe_yarn", family="v3", seed=1, storage="bf16", shards=1,
         config=dict(COMMON, num_hidden_layers=3, q_lora_rank=32, n_routed_experts=8,
                     n_shared_experts=1, num_experts_per_tok=2, n_group=4, topk_group=2,
                     first_k_dense_replace=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                     rope_interleave=True, rope_parameters=YARN_V3, tie_word_embeddings=False)),
    # Plain q_proj, plain RoPE without interleave, tied embeddings, f32 storage in two shards.
    dict(name="v3_plain_q_tied", family="v3", seed=2, storage="f32", shards=2,
         config=dict(COMMON, num_hidden_layers=2, q_lora_rank=None, n_routed_experts=4,
                     n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
                     first_k_dense_replace=1, routed_scaling_factor=1.5, norm_topk_prob=False,
                     rope_interleave=False,
                     rope_parameters=dict(rope_type="default", rope_theta=50000.0),
                     tie_word_embeddings=True)),
    # DeepSeek-V2-Lite style: no q LoRA, softmax greedy routing, norm_topk_prob false, 2 shared
    # experts, f16 storage.
    dict(name="v2_lite_greedy", family="v2", seed=3, storage="f16", shards=1,
         config=dict(COMMON, num_hidden_layers=2, q_lora_rank=None, n_routed_experts=8,
                     n_shared_experts=2, num_experts_per_tok=3, topk_method="greedy",
                     first_k_dense_replace=1, routed_scaling_factor=1.0, norm_topk_prob=False,
                     rope_parameters=dict(rope_type="default", rope_theta=10000.0),
                     tie_word_embeddings=False)),
    # DeepSeek-V2 style: q LoRA, group-limited greedy softmax routing, YaRN with mscale_all_dim.
    dict(name="v2_group_limited_yarn", family="v2", seed=4, storage="bf16", shards=1,
         config=dict(COMMON, num_hidden_layers=2, q_lora_rank=24, n_routed_experts=8,
                     n_shared_experts=1, num_experts_per_tok=2, topk_method="group_limited_greedy",
                     n_group=4, topk_group=2, first_k_dense_replace=0,
                     routed_scaling_factor=2.0, norm_topk_prob=False,
                     rope_parameters=YARN_V2, tie_word_embeddings=False)),
    # Kimi-K2 style (model_type kimi_k2, one expert group) with DeepSeek-V3's fp8 block-scaled
    # weights. hidden 160 and the 576/256-wide projections span several 128x128 blocks with
    # ragged edge blocks.
    dict(name="kimi_k2_fp8", family="v3", seed=5, storage="fp8", shards=1, model_type="kimi_k2",
         config=dict({**COMMON, "max_position_embeddings": 2048}, hidden_size=160, intermediate_size=200, moe_intermediate_size=144,
                     num_hidden_layers=2, q_lora_rank=136, n_routed_experts=6, n_shared_experts=1,
                     num_experts_per_tok=2, n_group=1, topk_group=1, first_k_dense_replace=1,
                     routed_scaling_factor=2.827, norm_topk_prob=True, rope_interleave=True,
                     rope_parameters=dict(YARN_V3, rope_theta=50000.0, factor=32.0),
                     tie_word_embeddings=False)),
]


# ---- the bf16-rounded reference: HF's attention module with the engine's rounding points -------

def bf16(x):
    return x.to(torch.bfloat16).to(torch.float32)


def absorbed_bf16_attention(self, hidden_states, position_embeddings=None, attention_mask=None,
                            cache=None, **kwargs):
    """HF DeepseekV{2,3}Attention.forward with the MHA core replaced by the absorbed form.

    Everything up to the rotary embedding is HF's code (same modules, same calls); the attention
    itself follows mlaspec: q_lat = q_nope @ W_UK per head (W_UK, W_UV are kv_b_proj's rows),
    scores over [q_lat | q_pe] . [c | k_pe] with both rounded to bf16, softmax in f32, the
    512-wide output rounded to bf16, then W_UV and o_proj. Full causal mask, no cache (goldens run
    one forward over the whole sequence).
    """
    batch, seq = hidden_states.shape[:-1]
    heads, nope, rope, v = self.num_heads, self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim
    if self.q_lora_rank is None:
        q = self.q_proj(hidden_states)
    else:
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
    q = q.view(batch, seq, -1, self.qk_head_dim).transpose(1, 2)
    q_nope, q_pe = torch.split(q, [nope, rope], dim=-1)
    compressed = self.kv_a_proj_with_mqa(hidden_states)
    c, k_pe = torch.split(compressed, [self.kv_lora_rank, rope], dim=-1)
    c = self.kv_a_layernorm(c).view(batch, 1, seq, self.kv_lora_rank)
    k_pe = k_pe.view(batch, 1, seq, rope)
    if isinstance(self, hf_v2.DeepseekV2Attention):
        q_pe, k_pe = hf_v2.apply_rotary_emb(q_pe, k_pe, position_embeddings)
    else:
        cos, sin = position_embeddings
        if self.config.rope_interleave:
            q_pe, k_pe = hf_v3.apply_rotary_pos_emb_interleave(q_pe, k_pe, cos, sin)
        else:
            q_pe, k_pe = hf_v3.apply_rotary_pos_emb(q_pe, k_pe, cos, sin)

    w = self.kv_b_proj.weight.view(heads, nope + v, self.kv_lora_rank)
    w_uk, w_uv = w[:, :nope, :], w[:, nope:, :]
    q_lat = torch.einsum("bhsd,hdc->bhsc", q_nope, w_uk)
    q_row = bf16(torch.cat([q_lat, q_pe], dim=-1))          # [B, H, S, 576]
    kv_row = bf16(torch.cat([c, k_pe], dim=-1))              # [B, 1, S, 576]
    scores = torch.matmul(q_row, kv_row.transpose(2, 3)) * self.scaling
    causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(causal, float("-inf"))
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    o_lat = bf16(torch.matmul(probs, kv_row[..., : self.kv_lora_rank]))  # [B, H, S, 512]
    out = torch.einsum("bhsc,hvc->bshv", o_lat, w_uv).reshape(batch, seq, heads * v)
    return self.o_proj(out), None


class Bf16Attention:
    """Context manager swapping the attention forward of both families."""

    def __enter__(self):
        self.saved = (hf_v3.DeepseekV3Attention.forward, hf_v2.DeepseekV2Attention.forward)
        hf_v3.DeepseekV3Attention.forward = absorbed_bf16_attention
        hf_v2.DeepseekV2Attention.forward = absorbed_bf16_attention

    def __exit__(self, *exc):
        hf_v3.DeepseekV3Attention.forward, hf_v2.DeepseekV2Attention.forward = self.saved


# ---- building a checkpoint --------------------------------------------------------------------

def init_weights(model, generator):
    """Unit-scale activations and decisive logits: linear weights ~ N(0, 1/fan_in), norm weights
    around 1, embeddings N(0, 1), lm_head N(0, (4/sqrt(hidden))^2), router bias ~ N(0, 0.1^2)."""
    with torch.no_grad():
        hidden = model.config.hidden_size
        for name, p in model.named_parameters():
            if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=generator))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=generator))
            elif name == "lm_head.weight":
                p.copy_(torch.randn(p.shape, generator=generator) * (4.0 / math.sqrt(hidden)))
            else:
                fan_in = p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=generator) / math.sqrt(fan_in))
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.1 * torch.randn(b.shape, generator=generator))


FP8_BLOCK = 128


def is_fp8_quantized(name):
    # DeepSeek-V3's fp8 checkpoints quantize every projection of attention and the MLPs/experts;
    # embeddings, lm_head, norms and the router stay in higher precision.
    return (name.endswith("_proj.weight") or name.endswith("kv_a_proj_with_mqa.weight")) and \
        "embed" not in name


def quantize_fp8_blocks(w):
    """w [out, in] f32 -> (e4m3 codes [out, in], scale_inv f32 [ceil(out/128), ceil(in/128)]):
    w ~= codes * scale_inv of its block, scale_inv = amax(block) / 448."""
    out_dim, in_dim = w.shape
    rows, cols = -(-out_dim // FP8_BLOCK), -(-in_dim // FP8_BLOCK)
    scale_inv = torch.zeros(rows, cols, dtype=torch.float32)
    codes = torch.zeros(out_dim, in_dim, dtype=torch.float8_e4m3fn)
    for i in range(rows):
        for j in range(cols):
            blk = w[i * FP8_BLOCK:(i + 1) * FP8_BLOCK, j * FP8_BLOCK:(j + 1) * FP8_BLOCK]
            s = blk.abs().max().clamp(min=1e-12) / 448.0
            scale_inv[i, j] = s
            codes[i * FP8_BLOCK:(i + 1) * FP8_BLOCK, j * FP8_BLOCK:(j + 1) * FP8_BLOCK] = \
                (blk / s).to(torch.float8_e4m3fn)
    return codes, scale_inv


def dequantize_fp8_blocks(codes, scale_inv):
    s = scale_inv.repeat_interleave(FP8_BLOCK, 0).repeat_interleave(FP8_BLOCK, 1)
    return codes.to(torch.float32) * s[: codes.shape[0], : codes.shape[1]]


def to_storage(state, storage):
    """Returns (stored tensors, the f32 values they stand for)."""
    stored, values = {}, {}
    for name, t in state.items():
        t = t.to(torch.float32)
        if storage == "fp8" and is_fp8_quantized(name):
            codes, scale_inv = quantize_fp8_blocks(t)
            stored[name] = codes
            stored[name + "_scale_inv"] = scale_inv
            values[name] = dequantize_fp8_blocks(codes, scale_inv)
        elif storage in ("bf16", "fp8"):
            stored[name] = t.to(torch.bfloat16)
            values[name] = stored[name].to(torch.float32)
        elif storage == "f16":
            stored[name] = t.to(torch.float16)
            values[name] = stored[name].to(torch.float32)
        else:
            stored[name] = t.contiguous()
            values[name] = t
        # The router's weight and bias stay f32, as DeepSeek-V3 keeps them.
        if name.endswith("mlp.gate.weight") or name.endswith("e_score_correction_bias"):
            stored[name] = t.contiguous()
            values[name] = t
    return stored, values


def write_shards(stored, out_dir, shards):
    names = sorted(stored)
    if shards == 1:
        save_file(stored, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
        return ["model.safetensors"]
    per = -(-len(names) // shards)
    weight_map, files = {}, []
    for k in range(shards):
        fname = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: stored[n] for n in names[k * per:(k + 1) * per]}
        save_file(part, os.path.join(out_dir, fname), metadata={"format": "pt"})
        weight_map.update({n: fname for n in part})
        files.append(fname)
    total = sum(t.numel() * t.element_size() for t in stored.values())
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    files.append("model.safetensors.index.json")
    return files


# ---- goldens ------------------------------------------------------------------------------------

def run_full(model, ids):
    """Logits [S, vocab] and residual-stream outputs of every decoder layer [L, S, hidden]."""
    captured = []
    hooks = [layer.register_forward_hook(
        lambda m, i, o: captured.append((o[0] if isinstance(o, tuple) else o)[0].detach().clone()))
        for layer in model.model.layers]
    try:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    finally:
        for h in hooks:
            h.remove()
    return logits.float(), torch.stack(captured)


def top2_gap(row):
    top = torch.topk(row, 2).values
    return float(top[0] - top[1])


def greedy(model, prompt, steps):
    ids, gaps = list(prompt), []
    for _ in range(steps):
        logits, _ = run_full(model, ids)
        ids.append(int(logits[-1].argmax()))
        gaps.append(top2_gap(logits[-1]))
    return ids[len(prompt):], min(gaps)


def build_case(case, out_root):
    name = case["name"]
    out_dir = os.path.join(out_root, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    torch.manual_seed(case["seed"])
    gen = torch.Generator().manual_seed(1000 + case["seed"])
    cls, cfg_cls = ((DeepseekV3ForCausalLM, DeepseekV3Config) if case["family"] == "v3"
                    else (DeepseekV2ForCausalLM, DeepseekV2Config))
    config = cfg_cls(**case["config"])
    model = cls(config).float().eval()
    init_weights(model, gen)

    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(os.path.join(tmp, "f32"))
        state = load_file(os.path.join(tmp, "f32", "model.safetensors"))
        stored, values = to_storage(state, case["storage"])
        # HF computes with exactly the stored values: reload them through from_pretrained so the
        # names go through transformers' own checkpoint conversion (per-expert -> fused experts).
        os.makedirs(os.path.join(tmp, "values"))
        save_file(values, os.path.join(tmp, "values", "model.safetensors"), metadata={"format": "pt"})
        shutil.copy(os.path.join(tmp, "f32", "config.json"), os.path.join(tmp, "values"))
        ref = cls.from_pretrained(os.path.join(tmp, "values"), dtype=torch.float32,
                                  attn_implementation="eager").eval()
        with open(os.path.join(tmp, "f32", "config.json")) as f:
            config_json = json.load(f)

    if "model_type" in case:
        config_json["model_type"] = case["model_type"]
    if case["storage"] == "fp8":
        config_json["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3",
                                              "quant_method": "fp8",
                                              "weight_block_size": [FP8_BLOCK, FP8_BLOCK]}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config_json, f, indent=2, sort_keys=True)
    files = ["config.json"] + write_shards(stored, out_dir, case["shards"])

    prompt_gen = torch.Generator().manual_seed(2000 + case["seed"])
    tensors, prompts = {}, []
    for k, length in enumerate(PROMPT_LENGTHS):
        for draw in range(MAX_DRAWS):
            prompt = torch.randint(0, config.vocab_size, (length,), generator=prompt_gen).tolist()
            cont, gap_hf = greedy(ref, prompt, CONTINUATION)
            seq = prompt + cont
            logits_hf, hidden_hf = run_full(ref, seq)
            with Bf16Attention():
                logits_bf16, hidden_bf16 = run_full(ref, seq)
            diff = float((logits_hf - logits_bf16).abs().max())
            rel = diff / float(logits_hf.abs().max())
            cont_bf16 = logits_bf16[length - 1:-1].argmax(-1).tolist()
            gap_bf16 = min(top2_gap(r) for r in logits_bf16[length - 1:-1])
            if os.environ.get("GOLDEN_DEBUG"):
                print(f"    draw {draw}: rel {rel:.2e} diff {diff:.3f} gaps {gap_hf:.3f} {gap_bf16:.3f} same {cont_bf16 == cont}")
            if (cont_bf16 == cont and rel < MAX_REL and
                    gap_bf16 > GAP_MIN_REL * float(logits_hf.abs().max())):
                break
        else:
            raise SystemExit(f"{name} prompt {k}: no decisive prompt in {MAX_DRAWS} draws")
        tensors[f"p{k}.logits_hf"] = logits_hf.contiguous()
        tensors[f"p{k}.logits_bf16"] = logits_bf16.contiguous()
        tensors[f"p{k}.hidden_hf"] = hidden_hf.contiguous()
        tensors[f"p{k}.hidden_bf16"] = hidden_bf16.contiguous()
        gaps = [top2_gap(r) for r in logits_hf]
        prompts.append(dict(prompt=prompt, continuation=cont, draws=draw + 1,
                            min_gap_continuation_hf=gap_hf, min_gap_continuation_bf16=gap_bf16,
                            min_gap_all_rows_hf=min(gaps),
                            max_logit_abs=float(logits_hf.abs().max()),
                            hf_vs_bf16_max_abs=diff, hf_vs_bf16_max_rel=rel))
        print(f"  {name} p{k}: len {length}, draw {draw + 1}, min continuation gap {gap_hf:.4f}, "
              f"hf vs bf16-rounded max |d| {diff:.2e} ({rel:.2e} of max |logit|)")
    save_file(tensors, os.path.join(out_dir, "goldens.safetensors"))
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(dict(generator="python/golden/make_model_goldens.py", case=name,
                       family=case["family"], storage=case["storage"],
                       capture="hidden_* [L, S, hidden]: output of decoder layer l (residual "
                               "stream, before the final norm)",
                       prompts=prompts), f, indent=1)
    files += ["goldens.json", "goldens.safetensors"]
    size = sum(os.path.getsize(os.path.join(out_dir, x)) for x in files)
    print(f"wrote {out_dir}: {', '.join(files)} ({size / 1024:.0f} KiB)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "data", "models"))
    parser.add_argument("--only", default="", help="build only this case")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for case in CASES:
        if args.only and case["name"] != args.only:
            continue
        build_case(case, os.path.abspath(args.out))


if __name__ == "__main__":
    main()
