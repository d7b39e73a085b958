"""The target model's config: a small transformers DeepseekV3Config with DeepSeek-V3's MLA geometry.

    python3 python/train/target_config.py [--smoke]      # print the config and parameter count

What is kept from DeepSeek-V3 (what mlaspec's kernels and loader serve): kv_lora_rank 512 and
qk_rope_head_dim 64 (the 576-wide absorbed KV row), a q LoRA path (q_lora_rank set), a dense
first layer (first_k_dense_replace 1) then MoE layers with noaux_tc grouped routing (8 routed
experts in 4 groups, 2 groups kept, top-2, one shared expert, sigmoid scores, routed scaling),
YaRN RoPE with interleaved rotary weights, untied embeddings. What is small: hidden 256, 8 heads
with qk_nope_head_dim 32 and v_head_dim 32, 6 layers, vocab = the tokenizer's.
"""

import argparse

from transformers import DeepseekV3Config

YARN = dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=256,
            beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0)

FULL = dict(
    hidden_size=256,
    intermediate_size=768,
    moe_intermediate_size=192,
    num_hidden_layers=6,
    num_attention_heads=8,
    num_key_value_heads=8,  # unused by MLA; transformers derives a repeat factor from it
    q_lora_rank=128,
    kv_lora_rank=512,
    qk_nope_head_dim=32,
    qk_rope_head_dim=64,
    v_head_dim=32,
    n_routed_experts=8,
    n_shared_experts=1,
    num_experts_per_tok=2,
    n_group=4,
    topk_group=2,
    first_k_dense_replace=1,
    routed_scaling_factor=2.5,
    norm_topk_prob=True,
    rope_interleave=True,
    max_position_embeddings=1024,
    rms_norm_eps=1e-6,
    initializer_range=0.02,
    tie_word_embeddings=False,
)

# A micro model for the CPU smoke test: same geometry kinds (MLA 512 + 64, q LoRA, dense + MoE
# layers, grouped routing, YaRN), far fewer and narrower layers.
SMOKE = dict(FULL, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
             num_hidden_layers=3, q_lora_rank=32, qk_nope_head_dim=16, v_head_dim=16)


def make_config(vocab_size, bos_id, eos_id, pad_id, smoke=False):
    kw = dict(SMOKE if smoke else FULL)
    assert kw["n_routed_experts"] % kw["n_group"] == 0, "experts must split evenly into groups"
    assert kw["topk_group"] <= kw["n_group"]
    # Every kept group must hold at least num_experts_per_tok candidates... in total.
    assert kw["topk_group"] * (kw["n_routed_experts"] // kw["n_group"]) >= kw["num_experts_per_tok"]
    return DeepseekV3Config(vocab_size=vocab_size, bos_token_id=bos_id, eos_token_id=eos_id,
                            pad_token_id=pad_id, rope_parameters=dict(YARN), **kw)


def count_params(model):
    return sum(p.numel() for p in model.parameters())


if __name__ == "__main__":
    import torch
    from transformers import DeepseekV3ForCausalLM
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--vocab", type=int, default=768)
    a = ap.parse_args()
    cfg = make_config(a.vocab, 1, 2, 0, smoke=a.smoke)
    with torch.device("meta"):
        m = DeepseekV3ForCausalLM(cfg)
    n = count_params(m)
    print(cfg)
    print(f"parameters: {n:,} ({n * 2 / 2**20:.1f} MiB in bf16)")
