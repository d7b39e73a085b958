"""Fast CPU checks of the training pipeline's pieces (about 10 s).

    python3 python/train/test_train.py        (or: pytest python/train/test_train.py)

The generator is deterministic and keeps to its number bounds, the held-out split never reaches
training, the tokenizer's files load in transformers with the same ids and chat template, the
training labels are the next tokens of the solution only, and the drafter's target layers follow
DFlash's rule.
"""

import os
import random
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks  # noqa: E402
import tokenizer as tk  # noqa: E402


def test_generator_deterministic_and_bounded():
    a = [tasks.make_problem(random.Random(7)) for _ in range(3)]
    b = [tasks.make_problem(random.Random(7)) for _ in range(3)]
    assert a == b
    r = random.Random(3)
    for _ in range(3000):
        p = tasks.make_problem(r)
        assert 0 <= p["answer"] < 10000
        assert tasks.parse_answer(p["solution"]) == p["answer"]
        lines = p["solution"].split("\n")
        assert 1 <= len(lines) - 1 <= 4 and lines[-1] == f"#### {p['answer']}"
        for line in lines[:-1]:
            x, op, y, eq, z = line.split("= ")[0].split()[-3:] + ["="] + [
                line.split("= ")[1].split()[0]]
            assert int(z) == {"+": int(x) + int(y), "-": int(x) - int(y),
                              "*": int(x) * int(y), "/": int(x) // int(y)}[op], line


def test_heldout_disjoint():
    held = tasks.heldout()
    assert len(held) == tasks.HELDOUT_SIZE == len({p["question"] for p in held})
    assert held == tasks.heldout()
    q = {p["question"] for p in held}
    train, dropped = tasks.training_problems_parallel(30000, q, workers=1)
    assert len(train) + dropped == 30000
    assert not any(p["question"] in q for p in train)
    assert train == tasks.training_problems_parallel(30000, q, workers=2)[0]


def test_parse_answer():
    assert tasks.parse_answer("a\n#### 42") == 42
    assert tasks.parse_answer("#### 1,234 dollars") == 1234
    assert tasks.parse_answer("no answer") is None
    assert tasks.parse_answer("#### x") is None


def _tokenizer():
    probs, _ = tasks.training_problems(2000, set())
    return probs, tk.train_tokenizer(p["question"] + "\n" + p["solution"] for p in probs)


def test_tokenizer_files_and_labels():
    probs, tok = _tokenizer()
    for i, t in enumerate(tk.SPECIAL_TOKENS):
        assert tok.token_to_id(t) == i
    enc = tok.encode("12 + 345 = 357")
    assert [t for t in enc.tokens if t.strip("Ġ").isdigit()] == list("12345357")
    with tempfile.TemporaryDirectory() as d:
        tk.save_tokenizer(tok, d)
        tk.check_hf_roundtrip(d, probs[0]["question"], probs[0]["solution"])
    import train_target
    ids, plens = train_target.encode_problems(tok, probs[:64])
    x, y = train_target.Batches(ids, plens, 16, 0, seed=1, pool=4).next()
    x, y = x.numpy(), y.numpy()
    for r in range(len(x)):
        m = np.flatnonzero(y[r] != -100)
        assert (y[r, m] == x[r, m + 1]).all()
        assert x[r, m[0]] == tok.token_to_id(tk.ASSISTANT)
        assert y[r, m[-1]] == tok.token_to_id(tk.EOS)
        assert (np.diff(m) == 1).all()


def test_target_layer_ids():
    import train_drafter
    assert train_drafter.target_layer_ids(6, 1) == [3]
    assert train_drafter.target_layer_ids(6, 3) == [1, 2, 3]
    assert train_drafter.target_layer_ids(61, 5) == [1, 15, 30, 44, 58]


if __name__ == "__main__":
    n = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            n += 1
            print(f"ok {name}")
    print(f"{n} passed, 0 failed")
