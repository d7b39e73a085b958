"""Trains the DFlash drafter (python/dflash/model.py) against the frozen target; time-budgeted.

Called by train_all.py (`train(...)`, `evaluate(...)`); standalone, on a saved target:
    python3 python/train/train_drafter.py --target models/target --out /tmp/drafter --minutes 1

The DFlash recipe: per training sequence (a generated problem in the chat format), up to
`anchors` random anchor positions inside the solution; block n = [token at a_n, MASK x 7]
(block_size 8) at positions a_n .. a_n + 7, non-causal inside the block, seeing the context
positions < a_n through the target's hidden states at `target_layer_ids` (fc + hidden_norm); all
blocks of a sequence in one pass with one attention mask. Labels: the frozen target's own greedy
predictions (argmax of its teacher-forced logits at position p - 1 for the token at p), not the
data tokens, so the drafter learns what verification will accept; slots past the sequence end are
ignored. Loss: cross-entropy on slots 1..7 weighted exp(-(k-1)/gamma), gamma 4.

The target runs in bf16 (on CUDA; f32 on the CPU) with no gradient; the drafter keeps f32 master
weights under bf16 autocast and shares the target's embedding and lm_head (frozen, not saved).

Evaluation (`evaluate`): the same blocks at every solution position of the target's own greedy
completions of held-out questions; slot k is accepted when it and every slot before it equal the
target's argmax (greedy verification). Reports per-slot conditional acceptance acc_k =
P(slot k right | slots < k right) and tau = 1 + sum_k prod_{j<=k} acc_j (the mean tokens per
verify step, counting the bonus token).
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402


def _load_dflash():
    """python/dflash/model.py by path (the repository's python/ is not an installed package)."""
    path = os.path.join(HERE, "..", "dflash", "model.py")
    spec = importlib.util.spec_from_file_location("dflash_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["dflash_model"] = mod  # dataclasses need the module registered
    spec.loader.exec_module(mod)
    return mod


dfm = _load_dflash()

BLOCK_SIZE = 8
GAMMA = 4.0
FULL = dict(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
            intermediate_size=768)
SMOKE = dict(num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=32,
             intermediate_size=128)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def target_layer_ids(num_target_layers, num_draft_layers):
    """DFlash's rule: [L // 2] for one draft layer, else evenly spaced over 1 .. L - 3."""
    if num_draft_layers == 1:
        return [num_target_layers // 2]
    start, end = 1, max(1, num_target_layers - 3)
    return [int(round(start + i * (end - start) / (num_draft_layers - 1)))
            for i in range(num_draft_layers)]


def make_config(target_cfg, mask_id, smoke=False):
    kw = dict(SMOKE if smoke else FULL)
    ids = target_layer_ids(target_cfg.num_hidden_layers, kw["num_hidden_layers"])
    assert max(ids) < target_cfg.num_hidden_layers - 1, "the last layer's output is post-norm in HF"
    return dfm.DFlashConfig(hidden_size=target_cfg.hidden_size,
                            target_hidden_size=target_cfg.hidden_size,
                            vocab_size=target_cfg.vocab_size, target_layer_ids=ids,
                            block_size=BLOCK_SIZE, mask_token_id=mask_id,
                            rms_norm_eps=target_cfg.rms_norm_eps, rope_theta=10000.0, **kw)


def pad_batch(seqs, plens, pad_id):
    """Right-padded ids [B, S], lengths [B], loss mask [B, S] (True on solution tokens)."""
    width = max(len(s) for s in seqs)
    x = np.full((len(seqs), width), pad_id, dtype=np.int64)
    lm = np.zeros((len(seqs), width), dtype=bool)
    for r, (s, pl) in enumerate(zip(seqs, plens)):
        x[r, :len(s)] = s
        lm[r, pl:len(s)] = True
    lens = np.asarray([len(s) for s in seqs], dtype=np.int64)
    return torch.from_numpy(x), torch.from_numpy(lens), torch.from_numpy(lm)


@torch.no_grad()
def target_pass(target, x, layer_ids, amp):
    """The frozen target on x: (context features [B, S, K*hidden], greedy predictions [B, S] where
    pred[:, p] is the target's argmax for the token at p, pred[:, 0] = x[:, 0])."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=amp):
        out = target(input_ids=x, output_hidden_states=True)
    th = dfm.DFlashDrafter.select_target_hidden(out.hidden_states, layer_ids)
    pred = torch.empty_like(x)
    pred[:, 0] = x[:, 0]
    pred[:, 1:] = out.logits[:, :-1].argmax(-1)
    return th, pred


def drafter_blocks(drafter, target, x, lens, loss_mask, th, pred, num_anchors, amp, gen=None,
                   all_positions=False):
    """Runs the training forward; returns (logits [B, N, 7, V], labels [B, N, 7]).

    Labels are the target's predictions at the slot positions, -100 past each sequence's end or
    for padding anchors. all_positions: every anchor candidate (evaluation) instead of a sample.
    """
    B, S = x.shape
    if all_positions:
        cand = torch.zeros_like(loss_mask)
        cand[:, 1:S - 1] = loss_mask[:, 2:]
        n = int(cand.sum(1).max())
        anchors = torch.zeros(B, n, dtype=torch.long, device=x.device)
        valid = torch.zeros(B, n, dtype=torch.bool, device=x.device)
        for b in range(B):
            idx = cand[b].nonzero(as_tuple=True)[0]
            anchors[b, :idx.numel()] = idx
            valid[b, :idx.numel()] = True
    else:
        anchors, valid = dfm.sample_anchors(loss_mask, num_anchors, BLOCK_SIZE, generator=gen)
    emb = target.get_input_embeddings().weight
    head = target.lm_head.weight
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=amp):
        logits, labels = drafter.forward_train(x, th, anchors, emb, head, anchor_valid=valid,
                                               attn_impl="sdpa")
    label_pos = anchors[:, :, None] + torch.arange(1, BLOCK_SIZE, device=x.device)
    tl = pred.gather(1, label_pos.clamp(max=S - 1).view(B, -1)).view_as(labels)
    keep = (labels != -100) & (label_pos < lens[:, None, None])
    return logits, tl.masked_fill(~keep, -100)


def chained_acceptance(logits, labels):
    """Per-slot counts over blocks whose slot 1 is labelled: (reached [7], accepted [7]).

    Slot k is reached when slots < k were all accepted and slot k is labelled; accepted when its
    argmax also equals the label.
    """
    hit = (logits.argmax(-1) == labels) & (labels != -100)
    lab = labels != -100
    blocks = lab[..., 0]
    prefix = torch.ones_like(blocks)
    reached, accepted = [], []
    for k in range(labels.shape[-1]):
        r = blocks & prefix & lab[..., k]
        prefix = prefix & hit[..., k]
        reached.append(int(r.sum()))
        accepted.append(int((r & hit[..., k]).sum()))
    return np.asarray(reached), np.asarray(accepted), int(blocks.sum())


def lr_at(progress, step, base_lr, warmup, final_frac=0.05):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    c = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return base_lr * (final_frac + (1 - final_frac) * c)


def train(target, tok, train_ids, train_plens, out_dir, *, minutes, max_steps, smoke, device,
          batch_size, lr, warmup, num_anchors=64, seed=0):
    """Trains a drafter against `target` (frozen, eval mode) and saves it to `out_dir`."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed + 7)
    gen = torch.Generator().manual_seed(seed + 11)
    target.eval()
    for p in target.parameters():
        p.requires_grad_(False)
    cfg = make_config(target.config, tok.token_to_id(tk.MASK), smoke)
    drafter = dfm.DFlashDrafter(cfg).to(device)
    n_params = sum(p.numel() for p in drafter.parameters())
    log(f"drafter: {n_params:,} parameters ({n_params * 2 / 2**20:.1f} MiB bf16), "
        f"{cfg.num_hidden_layers} layers, target_layer_ids {cfg.target_layer_ids}, "
        f"block_size {cfg.block_size}")
    opt = torch.optim.AdamW(drafter.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01,
                            **(dict(fused=True) if device.type == "cuda" else {}))
    amp = device.type == "cuda"
    pad = tok.token_to_id(tk.PAD)
    budget = minutes * 60.0
    t0 = time.time()
    step, hist = 0, []
    acc_sum, loss_sum, n_sum = None, 0.0, 0
    while True:
        progress = max(step / max_steps, (time.time() - t0) / budget)
        if progress >= 1.0:
            break
        cur = lr_at(progress, step, lr, warmup)
        for g in opt.param_groups:
            g["lr"] = cur
        rows = rng.choice(len(train_ids), size=batch_size, replace=False)
        x, lens, lm = pad_batch([train_ids[i] for i in rows], [train_plens[i] for i in rows], pad)
        x, lens, lm = x.to(device), lens.to(device), lm.to(device)
        th, pred = target_pass(target, x, cfg.target_layer_ids, amp)
        logits, labels = drafter_blocks(drafter, target, x, lens, lm, th, pred, num_anchors, amp,
                                        gen)
        loss, stats = dfm.dflash_loss(logits, labels, gamma=GAMMA)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(drafter.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        if step % 20 == 0 or smoke:
            loss_sum += loss.item()
            a = stats["acc_per_slot"].detach().float().cpu().numpy()
            acc_sum = a if acc_sum is None else acc_sum + a
            n_sum += 1
        if (step % 100 == 0 or (smoke and step % 5 == 0)) and n_sum:
            acc = (acc_sum / n_sum).round(3).tolist()
            hist.append(dict(step=step, t=round(time.time() - t0, 1),
                             loss=round(loss_sum / n_sum, 4), acc_per_slot=acc))
            log(f"drafter step {step} loss {loss_sum / n_sum:.4f} slot acc {acc} lr {cur:.2e} "
                f"({time.time() - t0:.0f}/{budget:.0f} s)")
            acc_sum, loss_sum, n_sum = None, 0.0, 0
    train_s = time.time() - t0
    log(f"drafter trained: {step} steps in {train_s:.0f} s")
    drafter.save_pretrained(out_dir)
    log(f"drafter saved to {out_dir}")
    return drafter, dict(params=n_params, steps=step, train_seconds=round(train_s, 1),
                         batch_size=batch_size, anchors_per_sequence=num_anchors, lr=lr,
                         gamma=GAMMA, labels="target greedy predictions", config=cfg.to_dict(),
                         loss_history=hist)


@torch.no_grad()
def evaluate(drafter, target, tok, questions, completions, device, batch_size=32):
    """Chained greedy acceptance over every solution position of the target's own completions."""
    drafter.eval()
    amp = device.type == "cuda"
    pad, eos = tok.token_to_id(tk.PAD), tok.token_to_id(tk.EOS)
    seqs, plens = [], []
    for q, c in zip(questions, completions):
        p = tok.encode(tk.prompt_text(q)).ids
        seqs.append(p + list(c) + [eos])
        plens.append(len(p))
    reached = np.zeros(BLOCK_SIZE - 1, dtype=np.int64)
    accepted = np.zeros(BLOCK_SIZE - 1, dtype=np.int64)
    blocks = 0
    for i in range(0, len(seqs), batch_size):
        x, lens, lm = pad_batch(seqs[i:i + batch_size], plens[i:i + batch_size], pad)
        x, lens, lm = x.to(device), lens.to(device), lm.to(device)
        th, pred = target_pass(target, x, drafter.config.target_layer_ids, amp)
        logits, labels = drafter_blocks(drafter, target, x, lens, lm, th, pred, 0, amp,
                                        all_positions=True)
        r, a, nb = chained_acceptance(logits.float(), labels)
        reached += r
        accepted += a
        blocks += nb
    cond = accepted / np.maximum(reached, 1)
    tau = 1.0 + float(np.sum(np.cumprod(cond)))
    tau_direct = 1.0 + float(accepted.sum()) / max(1, blocks)
    return dict(blocks=blocks, per_slot_conditional_acceptance=[round(float(v), 4) for v in cond],
                per_slot_reach_counts=reached.tolist(), tau_estimate=round(tau, 3),
                mean_accepted_plus_one=round(tau_direct, 3))


@torch.no_grad()
def speculative_decode(drafter, target, tok, questions, device, max_new_tokens=160,
                       time_limit_s=None):
    """Real greedy speculative decoding, one request at a time, no KV cache (the target re-reads
    the whole sequence each step: simple and exact, fine for a few dozen problems).

    Each step: the drafter proposes 7 tokens from the target's hidden states of the committed
    tokens and the anchor (the last bonus token); the target verifies [anchor, drafts] in one
    forward; drafts are accepted while each equals the target's argmax; the argmax after the
    last accepted one is the bonus, the next anchor. Returns (tau = tokens emitted per verify
    step, the completions as token id lists without <|end|>); with `time_limit_s`, stops
    starting new questions after that long (fewer completions come back).
    """
    t0 = time.time()
    drafter.eval()
    amp = device.type == "cuda"
    eos = tok.token_to_id(tk.EOS)
    emb, head = target.get_input_embeddings().weight, target.lm_head.weight
    layer_ids = drafter.config.target_layer_ids

    def run(seq):
        x = torch.tensor([seq], device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            out = target(input_ids=x, output_hidden_states=True)
        th = dfm.DFlashDrafter.select_target_hidden(out.hidden_states, layer_ids)
        return th, out.logits[0].argmax(-1).tolist()  # nxt[p]: the target's token after p

    steps = emitted = 0
    outs = []
    for q in questions:
        if time_limit_s is not None and time.time() - t0 > time_limit_s:
            break
        seq = tok.encode(tk.prompt_text(q)).ids
        th, nxt = run(seq)
        anchor, gen = nxt[-1], []
        while anchor != eos and len(gen) < max_new_tokens:
            L = len(seq)
            gen.append(anchor)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                logits = drafter(th[:, :L], torch.tensor([anchor], device=device), emb, head)
            drafts = logits[0].argmax(-1).tolist()
            th, nxt = run(seq + [anchor] + drafts)
            n = 0
            while n < len(drafts) and drafts[n] == nxt[L + n]:
                n += 1
            steps += 1
            emitted += n + 1
            seq = seq + [anchor] + drafts[:n]
            gen.extend(drafts[:n])
            anchor = nxt[L + n]
            if eos in drafts[:n]:
                gen = gen[:gen.index(eos)]
                break
        outs.append(gen[:max_new_tokens])
    return emitted / max(1, steps), outs


if __name__ == "__main__":
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM
    import eval_target
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--n-train", type=int, default=600_000)
    ap.add_argument("--eval-n", type=int, default=64)
    a = ap.parse_args()
    tok = Tokenizer.from_file(os.path.join(a.target, "tokenizer.json"))
    held = tasks.heldout()
    import train_target
    # The data first: its worker processes fork before CUDA starts.
    ids, plens, _ = train_target.encoded_training_set(tok, a.n_train,
                                                      {p["question"] for p in held},
                                                      workers=min(16, os.cpu_count() or 1))
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    target = AutoModelForCausalLM.from_pretrained(
        a.target, dtype=torch.bfloat16 if dev.type == "cuda" else torch.float32).to(dev)
    drafter, rep = train(target, tok, ids, plens, a.out, minutes=a.minutes, max_steps=a.max_steps,
                         smoke=a.smoke, device=dev, batch_size=4 if a.smoke else 128, lr=1e-3,
                         warmup=5 if a.smoke else 100, num_anchors=16 if a.smoke else 64)
    qs = [p["question"] for p in held[:a.eval_n]]
    comps = eval_target.greedy_completions(target, tok, qs, max_new_tokens=40 if a.smoke else 160)
    print(json.dumps(evaluate(drafter, target, tok, qs, comps, dev), indent=1))
