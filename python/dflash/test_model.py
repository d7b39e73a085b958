"""Self-checks of the DFlash module: python3 -m pytest python/dflash/test_model.py (or run it).

The many-blocks training forward equals the one-block inference forward block by block (with and
without a draft window); the flex-attention mask equals the dense one; save/load round-trips.
"""

import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from python.dflash.model import (DFlashConfig, DFlashDrafter, dflash_flex_mask_mod,  # noqa: E402
                                 dflash_loss, dflash_train_mask, sample_anchors)


def tiny(window=None):
    cfg = DFlashConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=16, intermediate_size=48, vocab_size=50,
                       target_hidden_size=32, target_layer_ids=[0, 2], block_size=4,
                       mask_token_id=49, sliding_window=window)
    torch.manual_seed(0)
    m = DFlashDrafter(cfg)
    m.init_weights(0.2)
    return m


def test_train_forward_equals_inference_blocks():
    for window in (None, 5):
        m = tiny(window)
        B, S = 2, 20
        ids = torch.randint(0, 49, (B, S))
        th = torch.randn(B, S, 64)
        emb, head = torch.randn(50, 32), torch.randn(50, 32)
        anchors = torch.tensor([[1, 7, 15], [3, 4, 18]])
        logits, labels = m.forward_train(ids, th, anchors, emb, head)
        with torch.no_grad():  # flex has no CPU backward
            flex, _ = m.forward_train(ids, th, anchors, emb, head, attn_impl="flex")
        assert torch.allclose(flex, logits, atol=1e-5)
        for b in range(B):
            for n in range(anchors.shape[1]):
                a = int(anchors[b, n])
                ref = m(th[b:b + 1, :a], ids[b:b + 1, a], emb, head)[0]
                assert torch.allclose(logits[b, n], ref, atol=1e-5), (window, b, n)
                for k in range(1, 4):
                    want = int(ids[b, a + k]) if a + k < S else -100
                    assert int(labels[b, n, k - 1]) == want


def test_flex_mask_mod_equals_dense_mask():
    anchors = torch.tensor([[2, 9], [5, 6]])
    S, bs = 12, 3
    for window in (None, 4):
        dense = dflash_train_mask(anchors, S, bs, window)
        mod = dflash_flex_mask_mod(anchors, S, bs, window)
        for b in range(2):
            q = torch.arange(2 * bs)[:, None]
            k = torch.arange(S + 2 * bs)[None, :]
            assert torch.equal(mod(torch.tensor(b), 0, q, k), dense[b])


def test_loss_and_anchors_and_roundtrip():
    m = tiny()
    lm = torch.zeros(3, 5, dtype=torch.bool)
    lm[:, 3:] = True
    anchors, valid = sample_anchors(lm, 2, 4, torch.Generator().manual_seed(0))
    assert bool(valid.all()) and int(anchors.min()) >= 2
    logits = torch.randn(2, 3, 50)
    labels = torch.tensor([[1, 2, -100], [4, -100, -100]])
    loss, stats = dflash_loss(logits, labels, gamma=2.0)
    assert stats["tokens"] == 3 and torch.isfinite(loss)
    with tempfile.TemporaryDirectory() as d:
        m.save_pretrained(d, dtype=torch.float32)
        m2 = DFlashDrafter.load_pretrained(d)
        for k, v in m.state_dict().items():
            assert torch.equal(v, m2.state_dict()[k]), k


if __name__ == "__main__":
    test_train_forward_equals_inference_blocks()
    test_flex_mask_mod_equals_dense_mask()
    test_loss_and_anchors_and_roundtrip()
    print("ok")
