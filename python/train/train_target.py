"""Trains the target (transformers' DeepseekV3ForCausalLM) on generated problems; time-budgeted.

Called by train_all.py (`train(...)`); standalone:
    python3 python/train/train_target.py --out /tmp/target --minutes 1 [--smoke]

Plain PyTorch: AdamW (no decay on embeddings, norms and the router), linear warm-up then cosine
decay driven by progress = max(step / max_steps, elapsed / budget), so the schedule ends when the
time budget does. bf16 autocast on CUDA with f32 master weights, f32 on the CPU. Loss: next-token
cross-entropy on the assistant part only (solution + <|end|>). Batches of similar lengths,
right-padded (pads come after the real tokens, so the causal mask alone keeps them out).
Saves the model with `save_pretrained` in bf16 (the router's e_score_correction_bias stays at
zero: transformers does not update it in training, so routing is noaux_tc with a zero bias).
"""

import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval_target  # noqa: E402
import target_config  # noqa: E402
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def encode_problems(tok, problems):
    """(ids list of int32 arrays, prompt lengths) for `<|bos|><|user|>Q<|assistant|>S<|end|>`.

    One encode per problem: the prompt ends at the (only) <|assistant|> token, a special token,
    so the solution's tokens never merge across it.
    """
    asst = tok.token_to_id(tk.ASSISTANT)
    encs = tok.encode_batch([tk.prompt_text(p["question"]) + p["solution"] + tk.EOS
                             for p in problems])
    ids = [np.asarray(e.ids, dtype=np.int32) for e in encs]
    plens = np.asarray([int(np.flatnonzero(i == asst)[0]) + 1 for i in ids], dtype=np.int32)
    return ids, plens


_FORK_STATE = {}


def _encode_chunk(job):
    tok, exclude = _FORK_STATE["tok"], _FORK_STATE["exclude"]
    probs = [p for p in tasks._chunk(job) if p["question"] not in exclude]
    ids, plens = encode_problems(tok, probs)
    return ids, plens, job[2] - len(probs)


def encoded_training_set(tok, n, exclude_questions, seed=tasks.TRAIN_SEED, workers=8):
    """The encoded problems of tasks.training_problems_parallel(n, ...), generated and encoded
    in `workers` forked processes (the same result for any number of workers).

    Returns (ids, plens, dropped). Call it before CUDA is initialised (the workers fork).
    """
    jobs = [(seed, k, min(tasks.CHUNK, n - k * tasks.CHUNK))
            for k in range((n + tasks.CHUNK - 1) // tasks.CHUNK)]
    _FORK_STATE.update(tok=tok, exclude=exclude_questions)
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        with mp.get_context("fork").Pool(min(workers, len(jobs))) as pool:
            parts = pool.map(_encode_chunk, jobs)
    else:
        parts = [_encode_chunk(j) for j in jobs]
    _FORK_STATE.clear()
    ids = [i for p in parts for i in p[0]]
    plens = np.concatenate([p[1] for p in parts])
    return ids, plens, sum(p[2] for p in parts)


class Batches:
    """Random batches of similar lengths: draw `pool` batches' worth, sort by length, split."""

    def __init__(self, ids, plens, batch_size, pad_id, seed, pool=32):
        self.ids, self.plens, self.bs, self.pad = ids, plens, batch_size, pad_id
        self.rng = np.random.default_rng(seed)
        self.pool, self.queue = pool, []

    def _refill(self):
        idx = self.rng.choice(len(self.ids), size=self.bs * self.pool, replace=False)
        idx = sorted(idx, key=lambda i: len(self.ids[i]))
        chunks = [idx[k:k + self.bs] for k in range(0, len(idx), self.bs)]
        self.rng.shuffle(chunks)
        self.queue.extend(chunks)

    def next(self):
        if not self.queue:
            self._refill()
        rows = self.queue.pop()
        width = max(len(self.ids[i]) for i in rows)
        x = np.full((len(rows), width), self.pad, dtype=np.int64)
        y = np.full((len(rows), width), -100, dtype=np.int64)
        for r, i in enumerate(rows):
            s, pl = self.ids[i], self.plens[i]
            x[r, :len(s)] = s
            # Label of position t is token t+1; train on the tokens after the prompt.
            y[r, pl - 1:len(s) - 1] = s[pl:]
        return torch.from_numpy(x), torch.from_numpy(y)


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if p.ndim < 2 or "embed_tokens" in n or "norm" in n or n.endswith("mlp.gate.weight"):
            no_decay.append(p)
        else:
            decay.append(p)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=no_decay, weight_decay=0.0)]


def set_experts_impl(model, impl):
    for m in model.modules():
        cfg = getattr(m, "config", None)
        if cfg is not None and hasattr(cfg, "_experts_implementation"):
            cfg._experts_implementation = impl


def pick_experts_impl(model, device, vocab):
    """The first MoE experts implementation whose forward + backward runs here (CUDA + autocast).

    transformers' default (grouped_mm) depends on torch and GPU support for its dtype; eager (a
    loop over experts) always works. Probed once so that the one GPU run never dies on it.
    """
    if device.type != "cuda":
        set_experts_impl(model, "eager")
        return "eager"
    # batched_mm is left out: it gathers one weight matrix per (token, expert) pair, gigabytes at
    # a training batch.
    for impl in ("grouped_mm", "eager"):
        try:
            set_experts_impl(model, impl)
            x = torch.randint(6, vocab, (4, 32), device=device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=x).logits.float().logsumexp(-1).mean()
            loss.backward()
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            return impl
        except Exception as e:  # noqa: BLE001 - any failure means: try the next one
            log(f"experts implementation {impl} failed here: {type(e).__name__}: {e}")
            model.zero_grad(set_to_none=True)
    raise RuntimeError("no MoE experts implementation works")


def lr_at(progress, step, base_lr, warmup, final_frac=0.05):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    c = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return base_lr * (final_frac + (1 - final_frac) * c)


def train(tok, train_ids, train_plens, heldout, out_dir, *, minutes, max_steps, smoke, device,
          batch_size, lr, warmup, weight_decay=0.1, eval_every_s=60.0, eval_n=128,
          eval_max_new=eval_target.MAX_NEW_TOKENS, seed=0):
    """Trains, evaluates on `eval_n` held-out problems every `eval_every_s`, saves to `out_dir`.

    Returns a dict for train-report.json.
    """
    from transformers import DeepseekV3ForCausalLM
    seed_all(seed)
    vocab = tok.get_vocab_size()
    cfg = target_config.make_config(vocab, tok.token_to_id(tk.BOS), tok.token_to_id(tk.EOS),
                                    tok.token_to_id(tk.PAD), smoke=smoke)
    model = DeepseekV3ForCausalLM(cfg).to(device)
    n_params = target_config.count_params(model)
    log(f"target: {n_params:,} parameters ({n_params * 2 / 2**20:.1f} MiB bf16), "
        f"{cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}, {cfg.n_routed_experts} experts")
    impl = pick_experts_impl(model, device, vocab)
    log(f"MoE experts implementation: {impl}")
    model.train()
    opt = torch.optim.AdamW(param_groups(model, weight_decay), lr=lr, betas=(0.9, 0.95), eps=1e-8,
                            **(dict(fused=True) if device.type == "cuda" else {}))
    batches = Batches(train_ids, train_plens, batch_size, tok.token_to_id(tk.PAD), seed + 1)
    use_amp = device.type == "cuda"
    budget = minutes * 60.0
    t0 = time.time()
    step, hist, evals, tokens = 0, [], [], 0
    last_eval, loss_acc, n_acc = t0, 0.0, 0
    while True:
        elapsed = time.time() - t0
        progress = max(step / max_steps, elapsed / budget)
        if progress >= 1.0:
            break
        cur_lr = lr_at(progress, step, lr, warmup)
        for g in opt.param_groups:
            g["lr"] = cur_lr
        x, y = batches.next()
        tokens += int((y != -100).sum())  # on the host: no device sync
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp):
            logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1),
                               ignore_index=-100)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        loss_acc += loss.item() if step % 25 == 0 or smoke else 0.0
        n_acc += 1 if step % 25 == 0 or smoke else 0
        if step % 100 == 0 or (smoke and step % 10 == 0):
            avg = loss_acc / max(1, n_acc)
            hist.append(dict(step=step, t=round(time.time() - t0, 1), loss=round(avg, 4),
                             lr=cur_lr))
            log(f"target step {step} loss {avg:.4f} lr {cur_lr:.2e} "
                f"({(time.time() - t0):.0f}/{budget:.0f} s, {tokens / (time.time() - t0):.0f} "
                f"loss tokens/s)")
            loss_acc, n_acc = 0.0, 0
        if time.time() - last_eval >= eval_every_s:
            acc, _, _ = eval_target.accuracy(model, tok, heldout[:eval_n],
                                             max_new_tokens=eval_max_new)
            evals.append(dict(step=step, t=round(time.time() - t0, 1), acc=acc))
            log(f"target step {step}: held-out accuracy {acc:.3f} on {eval_n}")
            last_eval = time.time()
    train_s = time.time() - t0
    log(f"target trained: {step} steps in {train_s:.0f} s")
    save_target(model, tok, out_dir)
    return dict(params=n_params, steps=step, train_seconds=round(train_s, 1), batch_size=batch_size,
                lr=lr, warmup=warmup, experts_implementation=impl, loss_history=hist,
                periodic_evals=evals, loss_tokens=tokens,
                final_loss=hist[-1]["loss"] if hist else None)


def save_target(model, tok, out_dir):
    """bf16 safetensors via save_pretrained, tokenizer files, generation_config.json."""
    from transformers import GenerationConfig
    os.makedirs(out_dir, exist_ok=True)
    model.config.use_cache = True
    orig = model.dtype
    model.to(torch.bfloat16)
    model.save_pretrained(out_dir, safe_serialization=True)
    model.to(orig)
    tk.save_tokenizer(tok, out_dir)
    GenerationConfig(bos_token_id=model.config.bos_token_id, eos_token_id=model.config.eos_token_id,
                     pad_token_id=model.config.pad_token_id, do_sample=False,
                     max_new_tokens=eval_target.MAX_NEW_TOKENS).save_pretrained(out_dir)
    log(f"target saved to {out_dir}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--n-train", type=int, default=20000)
    a = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    held = tasks.heldout()
    probs, _ = tasks.training_problems(a.n_train, {p["question"] for p in held})
    tok = tk.train_tokenizer(p["question"] + "\n" + p["solution"] for p in probs[:20000])
    ids, plens = encode_problems(tok, probs)
    rep = train(tok, ids, plens, held, a.out, minutes=a.minutes, max_steps=a.max_steps,
                smoke=a.smoke, device=dev, batch_size=8 if a.smoke else 256,
                lr=1.5e-3, warmup=20 if a.smoke else 200, eval_every_s=30, eval_n=4,
                eval_max_new=40 if a.smoke else eval_target.MAX_NEW_TOKENS)
    print(json.dumps({k: v for k, v in rep.items() if k != "loss_history"}, indent=1))
