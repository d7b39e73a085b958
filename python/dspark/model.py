"""DSpark block drafter: the DFlash backbone (python/dflash/model.py) plus two small heads.

    m = DSparkDrafter(DSparkConfig(..., markov_rank=16, confidence_head=True))
    out = m(target_hidden, anchor, embed, head)           # greedy, left to right
    out.logits [B, gamma, vocab]; out.tokens [B, gamma]; out.confidence [B, gamma]

Conventions (docs/dspark.md):
  gamma = num_draft = block_size - 1: the drafts per block; verify q_len = gamma + 1. config.json
    keeps DFlash's block_size (counts the anchor) and writes gamma beside it; both must agree.
  Markov head (low rank r = markov_rank):
    markov.w1 [vocab, r]   an embedding: row x is the code of token x;
    markov.w2 [vocab, r]   nn.Linear(r, vocab, bias=False).weight;
    slot k's logits = lm_head(norm(h_k)) + markov.w2 @ markov.w1[x_{k-1}], where x_{k-1} is the
    token chosen for slot k - 1 and x_0 = the anchor. Slots are therefore chosen left to right
    after the single backbone forward. markov_rank 0 = no Markov head (no tensors).
  Confidence head (confidence_head true):
    confidence.weight [1, hidden], confidence.bias [1];
    c_k = sigmoid(confidence(norm(h_k))), the same normed hidden the lm_head reads: the predicted
    probability that draft k is accepted given drafts 1 .. k-1 were.
  The checkpoint is DFlash's layout (config.json + model.safetensors) with model_type "dspark" and
  the tensors above added.
"""

from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

from python.dflash.model import DFlashConfig, DFlashDrafter

MODEL_TYPE = "dspark"


@dataclass
class DSparkConfig(DFlashConfig):
    markov_rank: int = 256
    confidence_head: bool = True
    model_type: str = MODEL_TYPE

    @property
    def gamma(self) -> int:
        return self.block_size - 1

    def validate(self) -> None:
        super().validate()
        if self.model_type != MODEL_TYPE:
            raise ValueError(f"DSparkConfig: model_type {self.model_type!r} is not {MODEL_TYPE!r}")
        if not (0 <= int(self.markov_rank) <= self.vocab_size):
            raise ValueError(f"DSparkConfig: markov_rank {self.markov_rank} is outside "
                             f"[0, vocab_size {self.vocab_size}]")
        if not isinstance(self.confidence_head, bool):
            raise ValueError(f"DSparkConfig: confidence_head {self.confidence_head!r} is not a bool")

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["gamma"] = self.gamma
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "DSparkConfig":
        d = dict(d)
        gamma = d.pop("gamma", None)
        cfg = super().from_dict(d)
        if gamma is not None and int(gamma) != cfg.gamma:
            raise ValueError(f"DSparkConfig: gamma {gamma} != block_size {cfg.block_size} - 1")
        return cfg


class MarkovHead(nn.Module):
    def __init__(self, vocab: int, rank: int):
        super().__init__()
        self.w1 = nn.Parameter(torch.zeros(vocab, rank))
        self.w2 = nn.Parameter(torch.zeros(vocab, rank))

    def forward(self, prev: torch.Tensor) -> torch.Tensor:
        """prev [...] token ids -> bias [..., vocab] = w2 @ w1[prev]."""
        return F.embedding(prev, self.w1) @ self.w2.t()


class DSparkOutput(NamedTuple):
    logits: torch.Tensor  # [B, gamma, vocab], Markov bias included
    tokens: torch.Tensor  # [B, gamma], chosen left to right
    confidence: Optional[torch.Tensor]  # [B, gamma] or None without the head
    hidden: torch.Tensor  # [B, gamma, hidden], what the lm_head and confidence read


class DSparkDrafter(DFlashDrafter):
    config_class = DSparkConfig

    def __init__(self, config: DSparkConfig | dict):
        if isinstance(config, dict):
            config = DSparkConfig.from_dict(config)
        super().__init__(config)
        c = self.config
        self.markov = MarkovHead(c.vocab_size, c.markov_rank) if c.markov_rank > 0 else None
        self.confidence = nn.Linear(c.hidden_size, 1) if c.confidence_head else None
        self.init_heads()

    @property
    def gamma(self) -> int:
        return self.config.gamma

    def init_heads(self, std: float = 0.02) -> None:
        # w2 starts at zero: an untrained Markov head adds nothing to the backbone's logits.
        if self.markov is not None:
            nn.init.normal_(self.markov.w1, std=std)
            nn.init.zeros_(self.markov.w2)
        if self.confidence is not None:
            nn.init.zeros_(self.confidence.weight)
            nn.init.zeros_(self.confidence.bias)

    def markov_bias(self, prev: torch.Tensor) -> torch.Tensor:
        if self.markov is None:
            return torch.zeros(*prev.shape, self.config.vocab_size)
        return self.markov(prev)

    def confidences(self, hidden: torch.Tensor) -> Optional[torch.Tensor]:
        if self.confidence is None:
            return None
        return torch.sigmoid(self.confidence(hidden).squeeze(-1))

    def forward(self, target_hidden, anchor, embed_weight, lm_head_weight, sliding_window=-1,
                kv_dtype=None, tokens: Optional[torch.Tensor] = None, temperature: float = 0.0,
                generator: Optional[torch.Generator] = None) -> DSparkOutput:
        """The backbone once, then slots 1 .. gamma left to right: slot k's logits get the Markov
        bias of the token chosen for slot k - 1 (the anchor for slot 1). The token is tokens[:, k-1]
        when given (teacher forcing, training), else the argmax (temperature 0) or a draw from
        softmax(logits / temperature) with `generator`."""
        h = self.block_hidden(target_hidden, anchor, embed_weight, sliding_window, kv_dtype)
        base = h @ lm_head_weight.t().to(h.dtype)
        prev = anchor
        logits, chosen = [], []
        for k in range(self.gamma):
            lk = base[:, k] + self.markov_bias(prev).to(base.dtype)
            if tokens is not None:
                tk = tokens[:, k]
            elif temperature <= 0:
                tk = lk.argmax(-1)
            else:
                p = torch.softmax(lk / temperature, dim=-1)
                tk = torch.multinomial(p, 1, generator=generator).squeeze(-1)
            logits.append(lk)
            chosen.append(tk)
            prev = tk
        return DSparkOutput(torch.stack(logits, 1), torch.stack(chosen, 1), self.confidences(h),
                            h)


def dspark_loss(logits, target_logits, confidence, gamma: Optional[float] = None,
                ce_weight: float = 0.1, l1_weight: float = 0.9,
                mask: Optional[torch.Tensor] = None):
    """REFERENCES.md's DSpark loss over slots k = 1 .. K: position weights exp(-(k-1)/gamma);
    0.1 CE(draft, target argmax) + 0.9 L1(p_draft, p_target) (the total variation times 2), plus
    BCE(confidence, 1 - 0.5 L1) when confidence is given. logits / target_logits [B, K, V],
    confidence [B, K]; mask [B, K] bool drops slots (past a sequence's end)."""
    K = logits.shape[1]
    g = float(gamma if gamma is not None else K)
    w = torch.exp(-torch.arange(K, dtype=torch.float32) / g)
    pd = torch.softmax(logits.float(), -1)
    pt = torch.softmax(target_logits.float(), -1)
    l1 = (pd - pt).abs().sum(-1)  # [B, K]
    ce = F.cross_entropy(logits.float().flatten(0, 1), pt.argmax(-1).flatten(),
                         reduction="none").view_as(l1)
    loss = ce_weight * ce + l1_weight * l1
    if confidence is not None:
        target_acc = (1 - 0.5 * l1).detach().clamp(0, 1)
        loss = loss + F.binary_cross_entropy(confidence.float(), target_acc, reduction="none")
    if mask is None:
        return (loss * w).sum(-1).mean() / w.sum()
    wm = w * mask.float()
    return (loss * wm).sum() / wm.sum().clamp(min=1e-9)


__all__ = ["DSparkConfig", "DSparkDrafter", "DSparkOutput", "MarkovHead", "dspark_loss"]
