"""Builds mlaspec's own model pair from nothing: data, tokenizer, target, drafter, evals, card.

    PYTHONUNBUFFERED=1 python3 python/train/train_all.py --out models
                                    [--minutes-target 4.6] [--minutes-drafter 2.4]
                                    [--budget-minutes 8.5] [--smoke]

Steps (every seed fixed; one process, so the one GPU run pays imports and CUDA start-up once):
  1. held-out split (tasks.heldout: seed 987654321, 500 problems) -> OUT/eval/heldout.jsonl
  2. training problems (seed 1234, chunked; any question in the held-out split dropped)
  3. tokenizer (byte-level BPE, trained on the first 20k training problems)
  4. target: DeepseekV3ForCausalLM (target_config.py), trained for --minutes-target
     -> OUT/target/ (config.json, model.safetensors bf16, tokenizer files, generation_config.json)
  5. target eval: OUT/target reloaded with from_pretrained (bf16 on CUDA), greedy on all 500
     held-out problems, exact match on `#### N`
  6. drafter: python/dflash/model.py's DFlashDrafter against the frozen reloaded target, for
     --minutes-drafter (clipped so that the whole run stays within --budget-minutes)
     -> OUT/drafter/ (config.json, model.safetensors bf16)
  7. drafter eval: chained greedy acceptance per slot and tau on the target's own held-out
     completions
  8. OUT/train-report.json (written after every stage, so a late failure keeps the earlier
     results) and OUT/README.md, the model card, generated from the report.
--smoke: micro target and drafter, a few steps each, a handful of eval problems: a CPU check that
every stage runs and writes its files (about a minute on two cores), not a model.
"""

import argparse
import json
import os
import platform
import sys
import time
import traceback

T_START = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import eval_target  # noqa: E402
import model_card  # noqa: E402
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402
import train_target  # noqa: E402

log = train_target.log


def dir_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def device_info(device):
    import tokenizers
    import transformers
    info = dict(device=str(device), torch=torch.__version__, transformers=transformers.__version__,
                tokenizers=tokenizers.__version__, python=platform.python_version(),
                cpu_threads=torch.get_num_threads())
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="models")
    ap.add_argument("--minutes-target", type=float, default=4.6)
    ap.add_argument("--minutes-drafter", type=float, default=2.4)
    ap.add_argument("--budget-minutes", type=float, default=8.5,
                    help="wall-clock bound of the whole run from process start; the drafter's "
                         "minutes are cut to fit")
    ap.add_argument("--n-train", type=int, default=0, help="training problems (default 600k; "
                    "smoke 3000)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pack", default=None, metavar="DIR",
                    help="at the end (also after a failure) write OUT as DIR/models.tar.00, .01, "
                         "... (each under 15 MiB) plus DIR/train-report.json: the device "
                         "machine returns at most 8 files of 16 MiB from $OUT")
    a = ap.parse_args()
    try:
        return run(a)
    finally:
        if a.pack:
            pack(os.path.abspath(a.out), a.pack)


def pack(src, dst, part_bytes=15 * 2**20):
    """tar of `src` (paths relative to it) cut into parts; `cat models.tar.* | tar -x -C models`
    restores it."""
    import io
    import shutil
    import tarfile
    if not os.path.isdir(src):
        log(f"pack: nothing at {src}")
        return
    os.makedirs(dst, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in sorted(os.listdir(src)):
            tar.add(os.path.join(src, name), arcname=name)
    data = buf.getvalue()
    for i in range(0, len(data), part_bytes):
        with open(os.path.join(dst, f"models.tar.{i // part_bytes:02d}"), "wb") as f:
            f.write(data[i:i + part_bytes])
    rep = os.path.join(src, "train-report.json")
    if os.path.exists(rep):
        shutil.copy(rep, os.path.join(dst, "train-report.json"))
    log(f"packed {src} ({len(data) / 2**20:.1f} MiB) into {dst}/models.tar.* "
        f"({(len(data) + part_bytes - 1) // part_bytes} parts)")


def run(a):
    smoke = a.smoke
    n_train = a.n_train or (3000 if smoke else 600_000)
    out = os.path.abspath(a.out)
    tdir, ddir, edir = (os.path.join(out, d) for d in ("target", "drafter", "eval"))
    os.makedirs(edir, exist_ok=True)
    report_path = os.path.join(out, "train-report.json")
    # The training problems come first: their worker processes fork before anything touches CUDA.
    # The tokenizer is trained on the first 20k of them (chunks 0 and 1 of the same generator).
    t0 = time.time()
    log(f"train_all: making {n_train} training problems and the tokenizer")
    held = tasks.heldout()
    held_q = {p["question"] for p in held}
    tok_probs, _ = tasks.training_problems_parallel(min(n_train, 20000), held_q, workers=1)
    tok = tk.train_tokenizer(p["question"] + "\n" + p["solution"] for p in tok_probs)
    ids, plens, dropped = train_target.encoded_training_set(tok, n_train, held_q,
                                                            workers=min(16, os.cpu_count() or 1))
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    report = dict(command=" ".join([os.path.basename(sys.executable)] + sys.argv), smoke=smoke,
                  device=device_info(dev), seeds=dict(train=tasks.TRAIN_SEED,
                                                      heldout=tasks.HELDOUT_SEED, torch=a.seed),
                  wall_seconds={}, status="running")

    def save_report():
        report["wall_seconds"]["total"] = round(time.time() - T_START, 1)
        with open(report_path, "w") as f:
            json.dump(report, f, indent=1)
        model_card.write(os.path.join(out, "README.md"), report)

    def stage(name, t0):
        report["wall_seconds"][name] = round(time.time() - t0, 1)
        save_report()

    log(f"train_all: out {out}, device {report['device']}, smoke {smoke}")

    # 1-3: data and tokenizer (made above).
    tasks.write_heldout_jsonl(os.path.join(edir, "heldout.jsonl"), held)
    lens = [len(i) for i in ids]
    report["data"] = dict(heldout=len(held), heldout_seed=tasks.HELDOUT_SEED, train=len(ids),
                          train_seed=tasks.TRAIN_SEED, dropped_as_heldout=dropped,
                          templates=tasks.TEMPLATE_NAMES, vocab_size=tok.get_vocab_size(),
                          tokens_per_sequence=dict(mean=round(sum(lens) / len(lens), 1),
                                                   max=max(lens)))
    log(f"data: {len(ids)} training problems ({dropped} dropped as held-out), {len(held)} "
        f"held-out, vocab {tok.get_vocab_size()}, mean {report['data']['tokens_per_sequence']}")
    stage("data", t0)

    # 4: target.
    t0 = time.time()
    report["target"] = train_target.train(
        tok, ids, plens, held, tdir, minutes=a.minutes_target, max_steps=12 if smoke else 10**9,
        smoke=smoke, device=dev, batch_size=8 if smoke else 512, lr=1.5e-3,
        warmup=4 if smoke else 200, eval_every_s=10**9 if smoke else 75.0,
        eval_n=4 if smoke else 128, eval_max_new=32 if smoke else eval_target.MAX_NEW_TOKENS,
        seed=a.seed)
    report["target"]["config"] = json.load(open(os.path.join(tdir, "config.json")))
    report["target"]["bytes"] = dir_size(tdir)
    stage("target_train", t0)

    # 5: target eval on the saved checkpoint.
    t0 = time.time()
    from transformers import AutoModelForCausalLM
    target = AutoModelForCausalLM.from_pretrained(
        tdir, dtype=torch.bfloat16 if dev.type == "cuda" else torch.float32).to(dev)
    target.eval()
    eval_probs = held[:8] if smoke else held
    max_new = 32 if smoke else eval_target.MAX_NEW_TOKENS
    comps = eval_target.greedy_completions(target, tok, [p["question"] for p in eval_probs],
                                           batch_size=256, max_new_tokens=max_new)
    acc, per, fails = eval_target.score(tok, eval_probs, comps, show_failures=3)
    report["target_eval"] = dict(accuracy=round(acc, 4), problems=len(eval_probs),
                                 per_template={k: round(v, 4) for k, v in per.items()},
                                 dtype=str(next(target.parameters()).dtype), failures=fails)
    log(f"target held-out accuracy {acc:.4f} on {len(eval_probs)} ({per})")
    stage("target_eval", t0)

    # 6-7: drafter.
    t0 = time.time()
    try:
        import train_drafter
        left = a.budget_minutes * 60 - (time.time() - T_START) - (15 if smoke else 45)
        minutes = max(0.1, min(a.minutes_drafter, left / 60))
        if minutes < a.minutes_drafter:
            log(f"drafter budget cut from {a.minutes_drafter} to {minutes:.2f} min to fit "
                f"--budget-minutes {a.budget_minutes}")
        drafter, rep = train_drafter.train(
            target, tok, ids, plens, ddir, minutes=minutes, max_steps=6 if smoke else 10**9,
            smoke=smoke, device=dev, batch_size=4 if smoke else 128, lr=1e-3,
            warmup=2 if smoke else 100, num_anchors=16 if smoke else 64, seed=a.seed)
        rep["bytes"] = dir_size(ddir)
        report["drafter"] = rep
        stage("drafter_train", t0)
        t0 = time.time()
        n_eval = len(eval_probs) if smoke else 200
        report["drafter_eval"] = train_drafter.evaluate(
            drafter, target, tok, [p["question"] for p in eval_probs[:n_eval]], comps[:n_eval],
            dev)
        report["drafter_eval"]["problems"] = n_eval
        log(f"drafter acceptance {report['drafter_eval']}")
        # Real greedy speculative decoding on a few held-out problems: the measured tau, and
        # whether its output equals the target's plain greedy output (it must, up to bf16
        # batch-vs-single numerics).
        tau, spec = train_drafter.speculative_decode(
            drafter, target, tok, [p["question"] for p in eval_probs[:2 if smoke else 50]], dev,
            max_new_tokens=max_new, time_limit_s=20)
        n_spec = len(spec)
        same = sum(s == c for s, c in zip(spec, comps[:n_spec]))
        report["drafter_eval"]["speculative"] = dict(problems=n_spec, tau=round(tau, 3),
                                                     same_as_greedy=same)
        log(f"speculative decoding on {n_spec} held-out problems: tau {tau:.3f}, output equal "
            f"to plain greedy for {same}/{n_spec}")
        stage("drafter_eval", t0)
        report["status"] = "ok"
    except Exception:  # noqa: BLE001 - keep the target and the report when the drafter fails
        report["status"] = "drafter failed"
        report["drafter_error"] = traceback.format_exc()
        log(report["drafter_error"])
    report["bytes_total"] = dir_size(tdir) + (dir_size(ddir) if os.path.isdir(ddir) else 0)
    save_report()
    log(f"done in {time.time() - T_START:.0f} s: status {report['status']}, target accuracy "
        f"{report['target_eval']['accuracy']}, tau "
        f"{report.get('drafter_eval', {}).get('tau_estimate')}"
        f", {report['bytes_total'] / 2**20:.1f} MiB in {out}")
    return 0 if report["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
