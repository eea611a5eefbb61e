#!/usr/bin/env python3
"""Qwen2's byte-level BPE (Qwen2.5, Qwen3, DeepSeek-R1-Distill-Qwen) and its chat templates,
against Hugging Face's tokenizers and transformers.

No Qwen vocabulary can be downloaded here, so HF `tokenizers` trains a small one (BpeTrainer) on 30
texts (code, digit runs, CJK, emoji, whitespace runs, contractions, accents) with Qwen's setup: an
NFC normalizer, pre_tokenizer Sequence[Split(Qwen2's regex, Isolated), ByteLevel(use_regex
false)], a ByteLevel decoder, special tokens and the added, not special <think> / </think>.
  - tokenizer.json through `kvsearch tokenize`: the same ids as tokenizers on the 30 texts and on
    their NFD forms (the NFC normalizer at work); decode(encode(t)) == NFC(t).
  - the same vocabulary in a GGUF file (gguf-py's writer, tokenizer.ggml.pre "qwen2"; llama.cpp
    does not normalize): the same ids on the 30 texts.
  - chat templates: `generate --chat-template auto` on a checkpoint whose tokenizer_config.json
    carries ChatML (Qwen3's form), Qwen2.5's (a default system turn) or DeepSeek-R1-Distill's
    template: the prompt ids equal transformers' apply_chat_template(add_generation_prompt=True).

Env: KVSEARCH_BIN, KVS_FIXTURES_DIR. Exit status 0 = pass.
"""
import json
import os
import shutil
import sys
import tempfile
import unicodedata

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, must, tokenize_jsonl  # noqa: E402
from test_gguf_vs_hf import write_gguf  # noqa: E402

# Qwen2's tokenizer.json Split regex (Qwen2.5, Qwen3, DeepSeek-R1-Distill-Qwen).
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>",
            "<｜User｜>", "<｜Assistant｜>"]
PLAIN_ADDED = ["<think>", "</think>"]  # added, not special: decoded as text

TEXTS = [
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < 1024; ++i) {\n\tsum += a[i] * b[i];\n}",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)  # 12 zeros",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name;",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "Call 555-0123 or +1 (800) 123-4567 before 2024-12-31 23:59:59.",
    "π ≈ 3.14159265358979323846264338327950288419716939937510",
    "1234567890 12345678901234567890 007 0.5 1e-10 1,000,000",
    "中文分词测试：今天天气很好，我们去公园散步吧。",
    "日本語のテキストとカタカナ、ひらがな。東京は2024年に",
    "한국어 문장도 있습니다. 서울 123번지.",
    "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇺🇸 ❤️ 🚀✨",
    "   leading spaces and trailing spaces   ",
    "tabs\t\tand\nnewlines\n\n\nand\r\nwindows\r\nlines",
    "multiple     spaces      between     words",
    "I'm sure you're right, they'll say it's what we've done; I'd agree.",
    "DON'T SHOUT: IT'S, YOU'RE, WE'LL, THEY'VE, I'M, HE'D",
    "Café déjà vu, naïve coöperation, résumé, Ångström, Zürich",
    "Ελληνικά κείμενα και Русский текст вместе.",
    "مرحبا بالعالم ١٢٣ عربى",
    "हिन्दी पाठ १२३ के साथ",
    "Mixed: abc123def 456ghi ７８９ full-width ＡＢＣ",
    "Punctuation!!! ??? ... --- *** ### @@@ $$$ %%% ^^^ &&&",
    "URL: https://example.com/path?query=1&x=y#frag and mail@example.org",
    "Math: ∑_{i=1}^{n} i² = n(n+1)/2, √2 ≈ 1.414, ∞ > 10⁹",
    "    indented\n        more indented\n    back",
    "\n\n\n",
    "a",
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX!",
    "Line one.\nLine two has 2 numbers: 42 and 4242.\n\tTabbed line three.",
]


def train_tokenizer():
    tok = Tokenizer(models.BPE(ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=900, min_frequency=1, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(TEXTS * 3, trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in PLAIN_ADDED])
    return tok


def check_tokenizer_json(tok, tmp):
    directory = os.path.join(tmp, "hf")
    os.makedirs(directory)
    tok.save(os.path.join(directory, "tokenizer.json"))
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "<|im_end|>", "bos_token": None, "add_bos_token": False}, f)
    saved = json.load(open(os.path.join(directory, "tokenizer.json"), encoding="utf-8"))
    check(saved["normalizer"] == {"type": "NFC"}, f"the trained tokenizer's normalizer is {saved['normalizer']}")
    nfd = [unicodedata.normalize("NFD", t) for t in TEXTS]
    changed = sum(a != b for a, b in zip(nfd, TEXTS))
    check(changed >= 3, f"only {changed} texts change under NFD")
    inputs = TEXTS + nfd
    expected = [tok.encode(t, add_special_tokens=False).ids for t in inputs]
    r, got = tokenize_jsonl(["--tokenizer", os.path.join(directory, "tokenizer.json")], inputs, tmp=tmp)
    if not check(got is not None, f"tokenize failed: {r.stderr.strip()}"):
        return directory
    differ = [(t, e, g["ids"]) for t, e, g in zip(inputs, expected, got) if g["ids"] != e]
    check(not differ, f"tokenizer.json: {len(differ)} of {len(inputs)} texts differ, first {differ[:1]}")
    decoded = tokenize_jsonl(["--tokenizer", os.path.join(directory, "tokenizer.json")],
                             [g["ids"] for g in got[:len(TEXTS)]], tmp=tmp)[1] or []
    bad = [t for t, d in zip(TEXTS, decoded) if d.get("text") != unicodedata.normalize("NFC", t)]
    check(len(decoded) == len(TEXTS) and not bad, f"decode(encode(t)) != NFC(t) for {bad[:1]}")
    think = tok.encode("<think>x</think>", add_special_tokens=False).ids
    r, out = tokenize_jsonl(["--tokenizer", os.path.join(directory, "tokenizer.json")], [think], tmp=tmp)
    check(out is not None and out[0].get("text") == "<think>x</think>",
          f"decoding the added, not special <think> tokens: {out or r.stderr.strip()}")
    print(f"[measured] tokenizer.json (vocabulary {tok.get_vocab_size()}): {len(inputs) - len(differ)}/"
          f"{len(inputs)} texts ({len(TEXTS)} and their NFD forms, {changed} of which differ) give "
          f"tokenizers' ids")
    return directory


def check_gguf(tok, tmp):
    vocab = tok.get_vocab(with_added_tokens=True)
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    saved = json.loads(tok.to_str())
    merges = [" ".join(m) if isinstance(m, list) else m for m in saved["model"]["merges"]]
    types = [3 if t in SPECIALS else 4 if t in PLAIN_ADDED else 1 for t in tokens]
    path = os.path.join(tmp, "qwen2-vocab.gguf")
    write_gguf(path, {
        "tokenizer.ggml.model": ("str", "gpt2"), "tokenizer.ggml.pre": ("str", "qwen2"),
        "tokenizer.ggml.tokens": ("str[]", tokens), "tokenizer.ggml.merges": ("str[]", merges),
        "tokenizer.ggml.token_type": ("i32[]", types),
        "tokenizer.ggml.eos_token_id": ("u32", vocab["<|im_end|>"])})
    expected = [tok.encode(t, add_special_tokens=False).ids for t in TEXTS]
    r, got = tokenize_jsonl(["--tokenizer", path], TEXTS, tmp=tmp)
    if not check(got is not None, f"tokenize (GGUF) failed: {r.stderr.strip()}"):
        return
    differ = [(t, e, g["ids"]) for t, e, g in zip(TEXTS, expected, got) if g["ids"] != e]
    check(not differ, f"GGUF pre qwen2: {len(differ)} of {len(TEXTS)} texts differ, first {differ[:1]}")
    print(f"[measured] GGUF tokenizer.ggml.pre qwen2: {len(TEXTS) - len(differ)}/{len(TEXTS)} texts give "
          f"tokenizers' ids")


CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
QWEN25 = ("{%- if messages[0]['role'] != 'system' %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba "
          "Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}" + CHATML)
# Qwen3's generation prompt, with its enable_thinking switch (the rest of its template is ChatML's).
QWEN3 = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
         "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
         "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}"
         "{% endif %}{% endif %}")
# DeepSeek-R1-Distill's tokenizer_config.json chat_template (the one that opens <think>).
R1 = ("{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}"
      "{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}"
      "{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = "
      "message['content'] %}{%- endif %}{%- endfor %}{{bos_token}}{{ns.system_prompt}}{%- for message in "
      "messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + "
      "message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is not "
      "none %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = "
      "content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}"
      "{%- endif %}{%- endfor -%}{% if add_generation_prompt and not ns.is_tool %}"
      "{{'<｜Assistant｜><think>\\n'}}{% endif %}")


def check_chat_templates(tok, hf_dir, tmp):
    from transformers import PreTrainedTokenizerFast
    messages = ["What is the capital of France? Answer in one word.", "Summarize:\n  1. 中文\n  2. emoji 😀",
                "I'm here; it's 42."]
    for name, template, config in (
            ("chatml", CHATML, {"eos_token": "<|im_end|>", "bos_token": None}),
            ("qwen2.5", QWEN25, {"eos_token": "<|im_end|>", "bos_token": None}),
            ("deepseek-r1", R1, {"eos_token": "<｜end▁of▁sentence｜>", "bos_token": "<｜begin▁of▁sentence｜>",
                                 "add_bos_token": True})):
        d = os.path.join(tmp, "chat-" + name)  # a tiny qwen2 with this tokenizer's vocabulary
        os.makedirs(d)
        shutil.copy(os.path.join(hf_dir, "tokenizer.json"), d)
        with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({**config, "chat_template": template}, f, ensure_ascii=False)
        must("make-model", "--out", d, "--preset", "tiny-qwen2", "--seed", "3",
             "--tokenizer", os.path.join(d, "tokenizer.json"))
        hf = PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=template,
                                     **{k: v for k, v in config.items() if k != "add_bos_token"})
        for text in messages:
            expected = hf.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                              tokenize=True)
            out = json.loads(must("generate", "--model", d, "--prompt", text, "--chat-template", "auto",
                                  "--max-new-tokens", "1", "--json"))
            check(out["prompt_ids"] == expected,
                  f"{name}: prompt ids {out['prompt_ids']} != apply_chat_template's {expected} for {text!r}")
        print(f"[measured] chat template {name} (recognised from tokenizer_config.json): {len(messages)} "
              f"prompts compared with apply_chat_template")
    # Qwen3's template: thinking on by default (recognised as ChatML); `--chat-template
    # qwen3-no-think` is its enable_thinking=False rendering (an empty thinking section).
    d = os.path.join(tmp, "chat-qwen3")
    os.makedirs(d)
    shutil.copy(os.path.join(hf_dir, "tokenizer.json"), d)
    config = {"eos_token": "<|im_end|>", "bos_token": None}
    with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({**config, "chat_template": QWEN3}, f, ensure_ascii=False)
    must("make-model", "--out", d, "--preset", "tiny-qwen2", "--seed", "3",
         "--tokenizer", os.path.join(d, "tokenizer.json"))
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=QWEN3, **config)
    for text in messages:
        for name, thinking in (("auto", None), ("qwen3-no-think", False)):
            kwargs = {} if thinking is None else {"enable_thinking": thinking}
            expected = hf.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                              tokenize=True, **kwargs)
            out = json.loads(must("generate", "--model", d, "--prompt", text, "--chat-template", name,
                                  "--max-new-tokens", "1", "--json"))
            check(out["prompt_ids"] == expected,
                  f"qwen3 --chat-template {name}: prompt ids {out['prompt_ids']} != apply_chat_template's "
                  f"{expected} (enable_thinking {thinking}) for {text!r}")
    print(f"[measured] Qwen3's template, thinking on (auto) and enable_thinking=False (qwen3-no-think): "
          f"{2 * len(messages)} prompts compared with apply_chat_template")


def main():
    tok = train_tokenizer()
    with tempfile.TemporaryDirectory(prefix="kvs_qwen_tok_") as tmp:
        hf_dir = check_tokenizer_json(tok, tmp)
        check_gguf(tok, tmp)
        check_chat_templates(tok, hf_dir, tmp)
    finish(passed="PASS")


if __name__ == "__main__":
    main()
