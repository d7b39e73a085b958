"""Self-checks of the DSpark module: python3 -m pytest python/dspark/test_model.py (or run it).

Untrained heads leave DFlash's logits unchanged; the Markov bias of slot k reads the token chosen
for slot k - 1 (the anchor for slot 1); greedy tokens are the argmax chain; teacher forcing uses
the given tokens; save/load round-trips with the documented tensor names; config errors name the
key; the loss trains the heads.
"""

import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from python.dflash.model import DFlashDrafter  # noqa: E402
from python.dspark.model import DSparkConfig, DSparkDrafter, dspark_loss  # noqa: E402

V, H = 50, 32


def tiny(**kw):
    cfg = DSparkConfig(hidden_size=H, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=16, intermediate_size=48, vocab_size=V,
                       target_hidden_size=H, target_layer_ids=[0, 1], block_size=5,
                       mask_token_id=V - 1, markov_rank=8, **kw)
    torch.manual_seed(0)
    return DSparkDrafter(cfg).eval()


def inputs(L=7, B=2):
    g = torch.Generator().manual_seed(1)
    return (torch.randn(B, L, 2 * H, generator=g), torch.randint(0, V, (B,), generator=g),
            torch.randn(V, H, generator=g), torch.randn(V, H, generator=g))


def test_untrained_heads_are_dflash():
    m = tiny()
    th, anchor, emb, head = inputs()
    with torch.no_grad():
        o = m(th, anchor, emb, head)
        plain = DFlashDrafter.forward(m, th, anchor, emb, head)
    assert torch.equal(o.logits, plain)
    assert torch.allclose(o.confidence, torch.full_like(o.confidence, 0.5))
    assert torch.equal(o.tokens, plain.argmax(-1))


def test_markov_chain_left_to_right():
    m = tiny()
    with torch.no_grad():
        torch.nn.init.normal_(m.markov.w2, std=1.0)
    th, anchor, emb, head = inputs()
    with torch.no_grad():
        o = m(th, anchor, emb, head)
        base = DFlashDrafter.forward(m, th, anchor, emb, head)
        prev = torch.cat([anchor[:, None], o.tokens[:, :-1]], 1)
        want = base + m.markov.w1[prev] @ m.markov.w2.t()
        forced = torch.randint(0, V, o.tokens.shape)
        of = m(th, anchor, emb, head, tokens=forced)
        prevf = torch.cat([anchor[:, None], forced[:, :-1]], 1)
    assert torch.allclose(o.logits, want, atol=1e-5)
    assert torch.equal(o.tokens, o.logits.argmax(-1))
    assert torch.allclose(of.logits, base + m.markov.w1[prevf] @ m.markov.w2.t(), atol=1e-5)
    g = torch.Generator().manual_seed(3)
    s = m(th, anchor, emb, head, temperature=1.0, generator=g)
    assert s.tokens.shape == o.tokens.shape


def test_roundtrip_names_and_errors():
    m = tiny()
    with tempfile.TemporaryDirectory() as d:
        m.save_pretrained(d, dtype=torch.float32)
        back = DSparkDrafter.load_pretrained(d)
        names = set(back.state_dict())
        assert {"markov.w1", "markov.w2", "confidence.weight", "confidence.bias"} <= names
        assert back.state_dict()["markov.w2"].shape == (V, 8)
    d = m.config.to_dict()
    assert d["gamma"] == 4 and d["model_type"] == "dspark"
    for key, value in (("gamma", 5), ("markov_rank", -1), ("confidence_head", 1)):
        bad = dict(d, **{key: value})
        try:
            DSparkConfig.from_dict(bad)
        except ValueError as e:
            assert key in str(e), str(e)
        else:
            raise AssertionError(f"{key} = {value} accepted")
    none = tiny(confidence_head=False)
    assert none(*inputs()).confidence is None


def test_loss_trains_the_heads():
    m = tiny()
    th, anchor, emb, head = inputs()
    target = torch.randn(2, 4, V) * 3
    for p in m.parameters():
        p.requires_grad_(False)
    heads = [m.markov.w1, m.markov.w2, m.confidence.weight, m.confidence.bias]
    for p in heads:
        p.requires_grad_(True)
    opt = torch.optim.Adam(heads, lr=0.05)
    tokens = target.argmax(-1)
    first = None
    for _ in range(30):
        o = m(th, anchor, emb, head, tokens=tokens)
        loss = dspark_loss(o.logits, target, o.confidence)
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss) < first


if __name__ == "__main__":
    test_untrained_heads_are_dflash()
    test_markov_chain_left_to_right()
    test_roundtrip_names_and_errors()
    test_loss_trains_the_heads()
    print("ok")
