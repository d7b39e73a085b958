#!/usr/bin/env python3
"""Builds tests/data/models/v3_generate_bytelevel: a tiny random DeepseekV3 checkpoint with a real
tokenizer, and transformers' greedy `generate` output for a few text prompts.

    python3 python/golden/make_generate_golden.py [--out tests/data/models]

Needs torch, transformers (>= 5) and tokenizers. Everything comes from fixed seeds.

The model's vocabulary (3008 rows) covers tests/data/tokenizers/deepseek_v3_style (3003 ids: a
byte-level BPE with DeepSeek-V3's pre-tokenizer and BOS template), whose tokenizer.json and
tokenizer_config.json are copied beside the weights, so the directory is what `mlaspec generate
--model` reads. Weights are stored in bf16; the init is make_model_goldens.init_weights (unit-scale
activations, lm_head scaled for decisive logits), which also keeps greedy continuations from
collapsing into one repeated token (checked below).

goldens.json holds, per prompt: the text, its ids (tokenizers, with BOS), transformers'
generate(do_sample=False, max_new_tokens=N) ids after the prompt and their text (decoded without
skipping special tokens). transformers runs in pure f32; mlaspec rounds q, KV rows and the
attention output to bf16, so a prompt is kept only when it is decisive: the bf16-rounded reference
(make_model_goldens.Bf16Attention) picks the same continuation and every top-2 logit gap along it
exceeds GAP_MIN_REL of the largest |logit|.
"""

import argparse
import json
import os
import shutil
import sys

import torch
from tokenizers import Tokenizer
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model_goldens as mg  # noqa: E402

NAME = "v3_generate_bytelevel"
TOKENIZER = "deepseek_v3_style"
NEW_TOKENS = 24
KEEP_PROMPTS = 4
GAP_MIN_REL = 3e-3
MIN_DISTINCT = 8  # distinct tokens a continuation needs (not one token repeated)

CANDIDATES = [
    "The quick brown fox jumps over the lazy dog.",
    "Once upon a time, in a land far away,",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Speculative decoding drafts tokens and verifies them in one pass.",
    "The capital of France is",
    "1, 2, 3, 4, 5, 6,",
    "import numpy as np\nx = np.zeros(",
    "Multi-head latent attention stores one latent row per token.",
    "She sells sea shells by the sea shore.",
    "In 1969, the first humans landed on",
    "To be, or not to be, that is the question:",
    "Hello, world! This is a test of the tokenizer.",
    "for i in range(10):\n    print(i)\n",
    "The weather today is sunny with a chance of",
    "A B C D E F G",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    "The engine owns the target model and its KV pool.",
    "Rain fell on the roof all night long.",
    "x = 1\ny = 2\nprint(x + y)\n",
    "My favourite colour is",
    "Water boils at 100 degrees",
    "The cat sat on the mat.",
    "Good morning! How are you today?",
    "When the music stops, everyone sits down.",
]

CONFIG = dict(
    hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_attention_heads=4,
    num_key_value_heads=4, kv_lora_rank=512, qk_nope_head_dim=8, qk_rope_head_dim=64,
    v_head_dim=8, vocab_size=3008, max_position_embeddings=512, rms_norm_eps=1e-6,
    num_hidden_layers=2, q_lora_rank=32, n_routed_experts=4, n_shared_experts=1,
    num_experts_per_tok=2, n_group=2, topk_group=1, first_k_dense_replace=1,
    routed_scaling_factor=2.5, norm_topk_prob=True, rope_interleave=True,
    rope_parameters=dict(rope_type="default", rope_theta=10000.0), tie_word_embeddings=False,
    bos_token_id=0, eos_token_id=1,
)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests",
                                                   "data", "models"))
    args = ap.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    tok_dir = os.path.join(root, "tests", "data", "tokenizers", TOKENIZER)
    out_dir = os.path.join(os.path.abspath(args.out), NAME)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)

    torch.manual_seed(11)
    gen = torch.Generator().manual_seed(1011)
    model = DeepseekV3ForCausalLM(DeepseekV3Config(**CONFIG)).float().eval()
    mg.init_weights(model, gen)
    # Store in bf16 and compute with exactly the stored values.
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    model.save_pretrained(out_dir, safe_serialization=True)
    # save_pretrained wrote f32: rewrite the weights as bf16 (the router stays f32, as V3 ships).
    from safetensors.torch import load_file, save_file
    path = os.path.join(out_dir, "model.safetensors")
    state = load_file(path)
    stored = {k: (v if k.endswith("mlp.gate.weight") or k.endswith("e_score_correction_bias")
                  else v.to(torch.bfloat16)) for k, v in state.items()}
    save_file(stored, path, metadata={"format": "pt"})
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tok_dir, f), out_dir)
    ref = DeepseekV3ForCausalLM.from_pretrained(out_dir, dtype=torch.float32,
                                                attn_implementation="eager").eval()
    tok = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))

    prompts = []
    for text in CANDIDATES:
        ids = tok.encode(text).ids
        with torch.no_grad():
            # The attention mask is explicit: BOS is id 0, which generate would otherwise take
            # for padding and mask out.
            out = ref.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids),
                               dtype=torch.long), do_sample=False, max_new_tokens=NEW_TOKENS,
                               eos_token_id=CONFIG["eos_token_id"], pad_token_id=CONFIG["eos_token_id"])
        cont = out[0, len(ids):].tolist()
        seq = ids + cont
        logits_hf, _ = mg.run_full(ref, seq)
        with mg.Bf16Attention():
            logits_bf16, _ = mg.run_full(ref, seq)
        rows = slice(len(ids) - 1, len(seq) - 1)
        same_hf = logits_hf[rows].argmax(-1).tolist() == cont
        same_bf16 = logits_bf16[rows].argmax(-1).tolist() == cont
        gap = min(mg.top2_gap(r) for r in logits_bf16[rows])
        scale = float(logits_hf.abs().max())
        distinct = len(set(cont))
        ok = same_hf and same_bf16 and gap > GAP_MIN_REL * scale and distinct >= MIN_DISTINCT
        print(f"  {text[:40]!r}: {len(ids)} ids, distinct {distinct}, gap {gap:.4f} "
              f"({gap / scale:.1e} of max), same {same_hf} {same_bf16} -> {'kept' if ok else 'skipped'}")
        if ok:
            prompts.append(dict(text=text, prompt_ids=ids, ids=cont,
                                output_text=tok.decode(cont, skip_special_tokens=False),
                                min_gap_bf16=gap, max_logit_abs=scale))
        if len(prompts) == KEEP_PROMPTS:
            break
    if len(prompts) < KEEP_PROMPTS:
        raise SystemExit(f"only {len(prompts)} decisive prompts")
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(dict(generator="python/golden/make_generate_golden.py", case=NAME,
                       tokenizer=TOKENIZER, max_new_tokens=NEW_TOKENS,
                       reference="transformers generate(do_sample=False), f32, eager attention",
                       prompts=prompts), f, indent=1, ensure_ascii=False)
    total = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
    print(f"wrote {out_dir}: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
