"""DFlash block drafter: the reference PyTorch module mlaspec's C++ forward is held to.

A few Qwen3-style decoder layers (GQA with per-head q_norm / k_norm RMSNorm, SwiGLU MLP, pre-norm,
RoPE) conditioned on the target's residual-stream hidden states. The embedding and lm_head are the
target's: they are passed in, never stored.

Inference (one request, context length L = the anchor's position):
    ctx  = hidden_norm(fc(concat_k target_hidden[layer k] at positions 0 .. L-1))
    block = [anchor, MASK x num_draft] at positions L .. L + num_draft, embedded by the target
    every layer: Q from the block; K/V from [ctx (each layer's k_proj/v_proj, k_norm, RoPE at the
    context positions) ; the block's own K/V]; no mask inside the block, full view of the context
    (or of its last `sliding_window` positions)
    logits = target_lm_head(norm(h)) for slots 1 .. num_draft; slot k predicts position L + k.

Conventions: `block_size` counts the anchor (DFlash's convention): num_draft = block_size - 1.
target_layer_ids are decoder-layer indices (transformers' output_hidden_states[i + 1], mlaspec's
capture_layers). The draft's hidden_size equals the target's (the target's embedding feeds the
first layer and its lm_head reads the last).

Checkpoint: `config.json` (DFlashConfig.to_dict) + `model.safetensors` with the tensor names of
`DFlashDrafter.state_dict()` (layers.{i}.self_attn.q_proj.weight, ..., fc.weight,
hidden_norm.weight, norm.weight). See save_pretrained / load_pretrained and python/dflash/README.md.

Training: `forward_train` runs many blocks per sequence at once (anchors anywhere, each block sees
its own context prefix and itself through one attention mask), and `dflash_loss` is the DFlash
loss (cross-entropy on slots 1 .. block_size-1 weighted exp(-(k-1)/gamma)).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
MODEL_TYPE = "dflash"


@dataclass
class DFlashConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    target_hidden_size: int
    target_layer_ids: list[int]
    block_size: int  # counts the anchor: num_draft = block_size - 1
    mask_token_id: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    # Draft window: the block sees only the last `sliding_window` context positions (None: all).
    sliding_window: Optional[int] = None
    model_type: str = MODEL_TYPE

    @property
    def num_draft(self) -> int:
        return self.block_size - 1

    def validate(self) -> None:
        def need(cond, msg):
            if not cond:
                raise ValueError(f"DFlashConfig: {msg}")

        for key in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                    "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
                    "target_hidden_size"):
            need(int(getattr(self, key)) >= 1, f"{key} {getattr(self, key)} must be >= 1")
        need(self.block_size >= 2, f"block_size {self.block_size} must be >= 2 (it counts the "
             "anchor: num_draft = block_size - 1)")
        need(self.num_attention_heads % self.num_key_value_heads == 0,
             f"num_attention_heads {self.num_attention_heads} is not a multiple of "
             f"num_key_value_heads {self.num_key_value_heads}")
        need(self.head_dim % 2 == 0, f"head_dim {self.head_dim} must be even (RoPE pairs)")
        need(len(self.target_layer_ids) >= 1, "target_layer_ids is empty")
        need(all(int(i) >= 0 for i in self.target_layer_ids),
             f"target_layer_ids {self.target_layer_ids} has a negative layer")
        need(self.hidden_size == self.target_hidden_size,
             f"hidden_size {self.hidden_size} != target_hidden_size {self.target_hidden_size}: "
             "the target's embedding and lm_head are shared, so they must be equal")
        need(0 <= self.mask_token_id < self.vocab_size,
             f"mask_token_id {self.mask_token_id} is outside [0, vocab_size {self.vocab_size})")
        need(self.sliding_window is None or self.sliding_window >= 1,
             f"sliding_window {self.sliding_window} must be >= 1 or null")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["target_layer_ids"] = [int(i) for i in self.target_layer_ids]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "DFlashConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"DFlashConfig: unknown keys {unknown}")
        cfg = cls(**{k: v for k, v in d.items() if k in names})
        cfg.target_layer_ids = [int(i) for i in cfg.target_layer_ids]
        cfg.validate()
        return cfg


# ----------------------------------------------------------------------------------------------
# Layers
# ----------------------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype=torch.float32):
    """cos, sin [..., head_dim] for integer positions [...] (rotate_half layout)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64,
                                             device=positions.device).float() / head_dim))
    freqs = positions.float()[..., None] * inv_freq
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, heads, T, d]; cos/sin [B, T, d]."""
    cos, sin = cos[:, None], sin[:, None]
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.cfg = cfg
        h, d = cfg.hidden_size, cfg.head_dim
        self.q_proj = nn.Linear(h, cfg.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(h, cfg.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(h, cfg.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(cfg.num_attention_heads * d, h, bias=False)
        self.q_norm = RMSNorm(d, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(d, cfg.rms_norm_eps)

    def kv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        """K (k_norm + RoPE) and V [B, kv_heads, T, d] of inputs x [B, T, hidden]."""
        B, T, _ = x.shape
        d = self.cfg.head_dim
        k = self.k_norm(self.k_proj(x).view(B, T, -1, d)).transpose(1, 2)
        v = self.v_proj(x).view(B, T, -1, d).transpose(1, 2)
        return apply_rope(k, cos, sin), v

    def forward(self, x, cos, sin, ctx_k, ctx_v, mask):
        """x: normed block hidden [B, Q, hidden]; ctx_k/ctx_v [B, kv_heads, C, d] (C may be 0);
        mask: bool [B or 1, 1, Q, C + Q] (True = attend), a flex_attention BlockMask, or None
        (see everything)."""
        B, Q, _ = x.shape
        d = self.cfg.head_dim
        q = self.q_norm(self.q_proj(x).view(B, Q, -1, d)).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        blk_k, blk_v = self.kv(x, cos, sin)
        k = torch.cat([ctx_k, blk_k], dim=2)
        v = torch.cat([ctx_v, blk_v], dim=2)
        if mask is not None and not isinstance(mask, torch.Tensor):  # a flex BlockMask
            from torch.nn.attention.flex_attention import flex_attention

            out = flex_attention(q, k, v, block_mask=mask, scale=d ** -0.5, enable_gqa=True)
        else:
            groups = self.cfg.num_attention_heads // self.cfg.num_key_value_heads
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=d ** -0.5)
        return self.o_proj(out.transpose(1, 2).reshape(B, Q, -1))


class MLP(nn.Module):
    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: DFlashConfig):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, h, cos, sin, ctx_k, ctx_v, mask):
        h = h + self.self_attn(self.input_layernorm(h), cos, sin, ctx_k, ctx_v, mask)
        return h + self.mlp(self.post_attention_layernorm(h))


# ----------------------------------------------------------------------------------------------
# The drafter
# ----------------------------------------------------------------------------------------------


class DFlashDrafter(nn.Module):
    config_class = DFlashConfig  # what load_pretrained parses config.json with

    def __init__(self, config: DFlashConfig | dict):
        super().__init__()
        if isinstance(config, dict):
            config = DFlashConfig.from_dict(config)
        config.validate()
        self.config = config
        cfg = config
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.fc = nn.Linear(len(cfg.target_layer_ids) * cfg.target_hidden_size, cfg.hidden_size,
                            bias=False)
        self.hidden_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.init_weights()

    @property
    def block_size(self) -> int:
        return self.config.block_size

    @property
    def num_draft(self) -> int:
        return self.config.num_draft

    def init_weights(self, std: float = 0.02) -> None:
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=std)
            elif isinstance(m, RMSNorm):
                nn.init.ones_(m.weight)

    # -- pieces ------------------------------------------------------------------------------

    def project_context(self, target_hidden: torch.Tensor) -> torch.Tensor:
        """[..., K * target_hidden] (the capture layers concatenated in target_layer_ids order)
        -> hidden_norm(fc(.)) [..., hidden]."""
        return self.hidden_norm(self.fc(target_hidden))

    @staticmethod
    def select_target_hidden(hidden_states, target_layer_ids) -> torch.Tensor:
        """transformers' output_hidden_states tuple -> [B, S, K * target_hidden].

        Entry i + 1 is the residual stream after decoder layer i, as mlaspec's capture_layers
        gives it, except for the target's last layer: transformers returns that one after the
        final norm. Do not put the last layer in target_layer_ids."""
        return torch.cat([hidden_states[i + 1] for i in target_layer_ids], dim=-1)

    def context_kv(self, ctx: torch.Tensor, positions: torch.Tensor,
                   kv_dtype: Optional[torch.dtype] = None):
        """Per layer (K, V) [B, kv_heads, C, d] of projected context ctx [B, C, hidden] at
        positions [B, C]: what mlaspec keeps in the drafter's KV pool. kv_dtype rounds them
        (bf16: what the pool stores) and converts back to ctx's dtype."""
        cos, sin = rope_cos_sin(positions, self.config.head_dim, self.config.rope_theta,
                                ctx.dtype)
        out = []
        for layer in self.layers:
            k, v = layer.self_attn.kv(ctx, cos, sin)
            if kv_dtype is not None:
                k, v = k.to(kv_dtype).to(ctx.dtype), v.to(kv_dtype).to(ctx.dtype)
            out.append((k, v))
        return out

    def run_layers(self, block_embeds, block_positions, ctx_kv, mask):
        """block_embeds [B, Q, hidden] -> norm(h) [B, Q, hidden]."""
        cos, sin = rope_cos_sin(block_positions, self.config.head_dim, self.config.rope_theta,
                                block_embeds.dtype)
        h = block_embeds
        for layer, (ck, cv) in zip(self.layers, ctx_kv):
            h = layer(h, cos, sin, ck, cv, mask)
        return self.norm(h)

    # -- inference: one block per request ------------------------------------------------------

    def block_tokens(self, anchor: torch.Tensor) -> torch.Tensor:
        """anchor [B] -> [B, block_size] = [anchor, MASK x num_draft]."""
        blk = torch.full((anchor.shape[0], self.block_size), self.config.mask_token_id,
                         dtype=torch.long, device=anchor.device)
        blk[:, 0] = anchor
        return blk

    def forward(self, target_hidden: torch.Tensor, anchor: torch.Tensor,
                embed_weight: torch.Tensor, lm_head_weight: torch.Tensor,
                sliding_window: Optional[int] = -1, kv_dtype: Optional[torch.dtype] = None):
        h = self.block_hidden(target_hidden, anchor, embed_weight, sliding_window, kv_dtype)
        return h @ lm_head_weight.t().to(h.dtype)

    def block_hidden(self, target_hidden: torch.Tensor, anchor: torch.Tensor,
                     embed_weight: torch.Tensor, sliding_window: Optional[int] = -1,
                     kv_dtype: Optional[torch.dtype] = None):
        """One block per request.

        target_hidden [B, L, K * target_hidden]: the features of context positions 0 .. L-1;
        anchor [B]: the token at position L; embed_weight / lm_head_weight [vocab, hidden]: the
        target's. sliding_window -1 takes the config's; None sees the whole context.
        kv_dtype rounds the context K/V as the drafter's KV pool stores them (torch.bfloat16).
        forward returns logits [B, num_draft, vocab]: row k-1 predicts the token at position
        L + k; block_hidden returns what the lm_head reads, norm(h) of slots 1 .. num_draft
        [B, num_draft, hidden].
        """
        B, L, _ = target_hidden.shape
        window = self.config.sliding_window if sliding_window == -1 else sliding_window
        dev = target_hidden.device
        first = 0 if window is None else max(0, L - window)
        ctx_pos = torch.arange(first, L, device=dev).expand(B, -1)
        ctx = self.project_context(target_hidden[:, first:])
        ctx_kv = self.context_kv(ctx, ctx_pos, kv_dtype)
        blk_pos = torch.arange(L, L + self.block_size, device=dev).expand(B, -1)
        embeds = F.embedding(self.block_tokens(anchor), embed_weight).to(ctx.dtype)
        return self.run_layers(embeds, blk_pos, ctx_kv, None)[:, 1:]

    # -- training: many blocks per sequence -----------------------------------------------------

    def forward_train(self, input_ids: torch.Tensor, target_hidden: torch.Tensor,
                      anchors: torch.Tensor, embed_weight: torch.Tensor,
                      lm_head_weight: Optional[torch.Tensor] = None,
                      anchor_valid: Optional[torch.Tensor] = None, attn_impl: str = "sdpa"):
        """Many blocks per sequence in one pass.

        input_ids [B, S]; target_hidden [B, S, K * target_hidden] (the frozen target's features
        at every position); anchors [B, N] anchor positions (block n = [input_ids[a], MASK ...] at
        positions a .. a + block_size - 1, seeing context positions < a (within the window) and
        its own block_size slots); anchor_valid [B, N] bool masks padding anchors (their queries
        see only their own block and their loss is dropped by the labels).
        Returns (hidden or logits [B, N, num_draft, *], labels [B, N, num_draft]) with labels
        -100 past the sequence end or for invalid anchors. With lm_head_weight None the normed
        hidden states are returned (for a chunked / fused CE outside).
        attn_impl "sdpa" builds the dense bool mask [B, N*bs, S + N*bs]; "flex" a flex_attention
        BlockMask from dflash_flex_mask_mod (sparse: use it for long sequences on GPU).
        """
        cfg = self.config
        B, S = input_ids.shape
        N = anchors.shape[1]
        bs = cfg.block_size
        dev = input_ids.device
        if anchor_valid is None:
            anchor_valid = torch.ones_like(anchors, dtype=torch.bool)
        offs = torch.arange(bs, device=dev)
        blk_pos = anchors[:, :, None] + offs  # [B, N, bs]
        blk_tok = torch.full((B, N, bs), cfg.mask_token_id, dtype=torch.long, device=dev)
        blk_tok[:, :, 0] = input_ids.gather(1, anchors.clamp(0, S - 1))
        label_pos = blk_pos[:, :, 1:]
        labels = input_ids.gather(1, label_pos.clamp(max=S - 1).reshape(B, -1)).view(B, N, bs - 1)
        labels = labels.masked_fill((label_pos >= S) | ~anchor_valid[:, :, None], -100)

        ctx = self.project_context(target_hidden)
        ctx_pos = torch.arange(S, device=dev).expand(B, -1)
        ctx_kv = self.context_kv(ctx, ctx_pos)
        if attn_impl == "flex":
            from torch.nn.attention.flex_attention import create_block_mask

            mod = dflash_flex_mask_mod(anchors.masked_fill(~anchor_valid, 0), S, bs,
                                       cfg.sliding_window)
            mask = create_block_mask(mod, B, None, N * bs, S + N * bs, device=dev)
        elif attn_impl == "sdpa":
            mask = dflash_train_mask(anchors, S, bs, cfg.sliding_window, anchor_valid)[:, None]
        else:
            raise ValueError(f"attn_impl {attn_impl!r}: expected 'sdpa' or 'flex'")
        embeds = F.embedding(blk_tok.view(B, N * bs), embed_weight).to(ctx.dtype)
        h = self.run_layers(embeds, blk_pos.view(B, N * bs), ctx_kv, mask)
        h = h.view(B, N, bs, -1)[:, :, 1:]
        if lm_head_weight is None:
            return h, labels
        return h @ lm_head_weight.t().to(h.dtype), labels

    # -- checkpoint ------------------------------------------------------------------------------

    def save_pretrained(self, directory: str, dtype: torch.dtype = torch.bfloat16) -> None:
        from safetensors.torch import save_file

        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, CONFIG_NAME), "w") as f:
            json.dump(self.config.to_dict(), f, indent=2)
            f.write("\n")
        tensors = {k: v.detach().to(dtype).contiguous().cpu() for k, v in self.state_dict().items()}
        save_file(tensors, os.path.join(directory, WEIGHTS_NAME), metadata={"format": "pt"})

    @classmethod
    def load_pretrained(cls, directory: str, dtype: torch.dtype = torch.float32,
                        device="cpu") -> "DFlashDrafter":
        from safetensors.torch import load_file

        with open(os.path.join(directory, CONFIG_NAME)) as f:
            cfg = cls.config_class.from_dict(json.load(f))
        model = cls(cfg)
        state = load_file(os.path.join(directory, WEIGHTS_NAME))
        model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=True)
        return model.to(device=device, dtype=dtype)


def dflash_train_mask(anchors: torch.Tensor, seq_len: int, block_size: int,
                      sliding_window: Optional[int] = None,
                      anchor_valid: Optional[torch.Tensor] = None) -> torch.Tensor:
    """bool [B, N * block_size, seq_len + N * block_size] (True = attend): block n's queries see
    context positions p < a_n (and p >= a_n - sliding_window) and all of block n's keys.
    Keys are ordered [context 0 .. seq_len-1 ; block 0 ; block 1 ; ...]."""
    B, N = anchors.shape
    dev = anchors.device
    if anchor_valid is None:
        anchor_valid = torch.ones_like(anchors, dtype=torch.bool)
    p = torch.arange(seq_len, device=dev)
    a = anchors[:, :, None]  # [B, N, 1]
    ctx = (p < a) & anchor_valid[:, :, None]
    if sliding_window is not None:
        ctx = ctx & (p >= a - sliding_window)
    ctx = ctx[:, :, None, :].expand(B, N, block_size, seq_len).reshape(B, N * block_size, seq_len)
    blk_id = torch.arange(N * block_size, device=dev) // block_size
    own = (blk_id[:, None] == blk_id[None, :]).expand(B, -1, -1)
    return torch.cat([ctx, own], dim=-1)


def dflash_flex_mask_mod(anchors: torch.Tensor, seq_len: int, block_size: int,
                         sliding_window: Optional[int] = None):
    """The same mask as dflash_train_mask for torch.nn.attention.flex_attention's create_block_mask
    (mask_mod(b, h, q_idx, kv_idx)). anchors [B, N]; invalid anchors should point at 0 (they then
    see no context)."""
    def mask_mod(b, h, q_idx, kv_idx):
        n = q_idx // block_size
        a = anchors[b, n]
        in_ctx = kv_idx < seq_len
        sees_ctx = in_ctx & (kv_idx < a)
        if sliding_window is not None:
            sees_ctx = sees_ctx & (kv_idx >= a - sliding_window)
        own = (~in_ctx) & ((kv_idx - seq_len) // block_size == n)
        return sees_ctx | own
    return mask_mod


def sample_anchors(loss_mask: torch.Tensor, num_anchors: int, block_size: int,
                   generator: Optional[torch.Generator] = None):
    """Random anchors where training has something to learn: position a with a >= 1 (some context)
    and loss_mask[a + 1] set (the first draft slot predicts a response token).
    loss_mask [B, S] bool. Returns anchors [B, N] (sorted, distinct) and valid [B, N]; rows with
    fewer candidates than N are padded with anchor 0, valid False."""
    B, S = loss_mask.shape
    cand = torch.zeros_like(loss_mask, dtype=torch.bool)
    cand[:, 1:S - 1] = loss_mask[:, 2:].bool()
    anchors = torch.zeros(B, num_anchors, dtype=torch.long, device=loss_mask.device)
    valid = torch.zeros(B, num_anchors, dtype=torch.bool, device=loss_mask.device)
    for b in range(B):
        idx = cand[b].nonzero(as_tuple=True)[0]
        if idx.numel() == 0:
            continue
        perm = torch.randperm(idx.numel(), generator=generator, device="cpu")[:num_anchors]
        chosen = idx[perm.to(idx.device)].sort().values
        anchors[b, :chosen.numel()] = chosen
        valid[b, :chosen.numel()] = True
    return anchors, valid


def dflash_loss_weights(block_size: int, gamma: Optional[float] = None, device=None):
    """exp(-(k-1)/gamma) for slots k = 1 .. block_size-1. gamma None: DFlash's defaults (7 for
    block_size 16, 4 for 8; otherwise (block_size - 1) / 2)."""
    if gamma is None:
        gamma = {16: 7.0, 8: 4.0}.get(block_size, (block_size - 1) / 2.0)
    k = torch.arange(1, block_size, dtype=torch.float32, device=device)
    return torch.exp(-(k - 1) / gamma)


def dflash_loss(logits: torch.Tensor, labels: torch.Tensor, gamma: Optional[float] = None):
    """Weighted CE. logits [..., num_draft, vocab], labels [..., num_draft] (-100 = ignore).
    Returns (loss, stats) with loss = sum w_k CE_k / sum w_k over the labelled slots and stats
    {'acc_per_slot': [num_draft] top-1 accuracy, 'tokens': labelled slots}."""
    nd = logits.shape[-2]
    w = dflash_loss_weights(nd + 1, gamma, logits.device)
    valid = labels != -100
    ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                         labels.clamp(min=0).reshape(-1), reduction="none").view(labels.shape)
    wv = w * valid
    loss = (ce * wv).sum() / wv.sum().clamp(min=1e-6)
    with torch.no_grad():
        hit = (logits.argmax(-1) == labels) & valid
        dims = tuple(range(labels.dim() - 1))
        acc = hit.float().sum(dims) / valid.float().sum(dims).clamp(min=1)
    return loss, {"acc_per_slot": acc, "tokens": int(valid.sum())}
