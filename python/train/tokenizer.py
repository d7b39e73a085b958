"""The byte-level BPE tokenizer of mlaspec's own model pair, trained on generated problems.

    python3 python/train/tokenizer.py --out /tmp/tok      # train on 20k problems and save

Pieces (tokenizers' JSON, which both HF and mlaspec's C++ loader read):
  pre_tokenizer  Sequence[Digits(individual_digits=True), ByteLevel(add_prefix_space=False)]:
                 every digit is its own token, so the model does arithmetic digit by digit
  model          BPE over ByteLevel's 256-symbol alphabet (every byte encodable, no unk)
  decoder        ByteLevel
  special tokens <|pad|> <|bos|> <|end|> <|user|> <|assistant|> <|mask|>, ids 0..5 in that order
                 (<|end|> is eos; <|mask|> is the DFlash drafter's mask token, never in text)
Chat format, as the Jinja `chat_template` of tokenizer_config.json writes it:
  <|bos|><|user|>QUESTION<|assistant|>SOLUTION<|end|>
"""

import argparse
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

PAD, BOS, EOS, USER, ASSISTANT, MASK = ("<|pad|>", "<|bos|>", "<|end|>", "<|user|>",
                                        "<|assistant|>", "<|mask|>")
SPECIAL_TOKENS = [PAD, BOS, EOS, USER, ASSISTANT, MASK]
VOCAB_SIZE = 1024

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}{{ '<|user|>' + message['content'] }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<|assistant|>' + message['content'] + '<|end|>' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}")


def prompt_text(question):
    """What the chat template renders for one user turn with add_generation_prompt."""
    return f"{BOS}{USER}{question}{ASSISTANT}"


def train_tokenizer(texts, vocab_size=VOCAB_SIZE):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    for i, t in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(t) == i, (t, tok.token_to_id(t))
    return tok


def save_tokenizer(tok, out_dir, model_max_length=1024):
    """tokenizer.json + tokenizer_config.json (with chat_template) + special_tokens_map.json."""
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    added = {str(i): dict(content=t, lstrip=False, rstrip=False, normalized=False,
                          single_word=False, special=True) for i, t in enumerate(SPECIAL_TOKENS)}
    cfg = dict(
        tokenizer_class="PreTrainedTokenizerFast",
        added_tokens_decoder=added,
        bos_token=BOS, eos_token=EOS, pad_token=PAD, mask_token=MASK,
        additional_special_tokens=[USER, ASSISTANT],
        extra_special_tokens=[USER, ASSISTANT],
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
        add_bos_token=False, add_eos_token=False,
        model_max_length=model_max_length,
        padding_side="left",
    )
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(out_dir, "special_tokens_map.json"), "w") as f:
        json.dump(dict(bos_token=BOS, eos_token=EOS, pad_token=PAD, mask_token=MASK,
                       additional_special_tokens=[USER, ASSISTANT]), f, indent=2)


def check_hf_roundtrip(out_dir, question, solution):
    """Loads the saved files with transformers and checks ids and the chat template."""
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained(out_dir)
    raw = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
    text = prompt_text(question) + solution + EOS
    msgs = [dict(role="user", content=question), dict(role="assistant", content=solution)]
    rendered = hf.apply_chat_template(msgs, tokenize=False)
    assert rendered == text, (rendered, text)
    gen = hf.apply_chat_template(msgs[:1], tokenize=False, add_generation_prompt=True)
    assert gen == prompt_text(question), gen
    ids_hf = hf(text, add_special_tokens=True)["input_ids"]
    ids_raw = raw.encode(text).ids
    assert ids_hf == ids_raw, "HF and tokenizers disagree"
    assert hf.decode(ids_raw, skip_special_tokens=False) == text
    for name in ("bos", "eos", "pad", "mask"):
        assert getattr(hf, f"{name}_token_id") == SPECIAL_TOKENS.index(
            dict(bos=BOS, eos=EOS, pad=PAD, mask=MASK)[name]), name
    return hf


if __name__ == "__main__":
    import random
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tasks
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=20000)
    a = ap.parse_args()
    r = random.Random(tasks.TRAIN_SEED)
    probs = [tasks.make_problem(r) for _ in range(a.n)]
    tok = train_tokenizer(p["question"] + "\n" + p["solution"] for p in probs)
    save_tokenizer(tok, a.out)
    check_hf_roundtrip(a.out, probs[0]["question"], probs[0]["solution"])
    enc = tok.encode(prompt_text(probs[0]["question"]) + probs[0]["solution"] + EOS)
    print(tok.get_vocab_size(), len(enc.ids), enc.tokens)
