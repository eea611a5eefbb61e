"""`kvsearch tokenize` on GGUF vocabularies against Hugging Face's tokenizers library.

SmolLM2 (tokenizer.ggml.model gpt2, pre smollm): the oracle is a HF tokenizer built from the GGUF
file's own tokens and merges with the pre-tokenizer Sequence[Digits(individual_digits),
ByteLevel] and a ByteLevel decoder, its 17 control tokens added as specials (transformers' own
GGUF tokenizer drops the digit split and mislabels EOS: not an oracle). The same tokenizer saved
as a HF directory (tokenizer.json + tokenizer_config.json) must give the same ids through
kvsearch's tokenizer.json reader. Checks: identical ids with special tokens parsed and without on
generated strings, decode(encode(s)) == s, docs/gguf.md §5's measured vectors.

Mistral (tokenizer.ggml.model llama): a GGUF file written from the fixture tokenizer.model's pieces,
scores and types must encode like the tokenizer.model itself.

Bad metadata: one-line errors naming the file and the field, exit 1.
"""
import json
import os
import random
import sys
import tempfile

import gguf
import numpy as np
import sentencepiece
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import (char_range, check, error_output, finish, kvsearch, smollm2_gguf,  # noqa: E402
                         tokenize_jsonl as run_tokenize_jsonl)

FIXTURES = os.environ["KVS_FIXTURES_DIR"]
MISTRAL = os.path.join(FIXTURES, "tokenizers", "mistral-7b-v0.1", "tokenizer.model")


def field(reader, key):
    return reader.fields[key].contents()


def hf_reference(reader, with_specials):
    """with_specials: the control tokens are added (parsed out of text); else text is all text."""
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, kind in zip(tokens, types) if kind == 3]
    if with_specials:
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    return tok, specials


LETTERS = (char_range(0x61, 0x7A) + char_range(0x41, 0x5A) + char_range(0xC0, 0xFF) +
           char_range(0x391, 0x3A9) + char_range(0x410, 0x44F) + char_range(0x5D0, 0x5EA) +
           char_range(0x621, 0x64A) + char_range(0x905, 0x939) + char_range(0x3041, 0x3096) +
           char_range(0x4E00, 0x4E80) + char_range(0xAC00, 0xAC40))
DIGITS = char_range(0x30, 0x39) + char_range(0x660, 0x669) + ["\u00b2", "\u00bd", "\u2160", "\uff13"]
SPACES = [" ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\u00a0", "\u3000", " \t "]
PUNCT = list("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'") + ["\u2014", "\u2026", "\u00ab", "\u201c", "\u20ac"]
EMOJI = (char_range(0x1F600, 0x1F620) + ["\U0001F468\u200D\U0001F469\u200D\U0001F467",
                                         "\U0001F44D\U0001F3FD", "\u2764\uFE0F", "\U0001F1EB\U0001F1F7"])
WORDS = ["the", "The", "hello", "world", "naïve", "café", "東京", "Москва", "don't", "I'm",
         "they'll", "IT'S", "'s", "x'", "Paris", "France", "capital", "strawberry"]
CODE = ["def f(x):\n    return x**2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
        "if x == 1:\n        pass", "{\"key\": [1, 2.5e-3, null]}", "SELECT * FROM t WHERE id=42;",
        "#include <vector>\nint main() { return 0; }", "x   = 1234567890", "  \n  \n\t\t"]
FIXED = ["", " ", "hello  123", "x   42 y", "Hello world! 123", "Café déjà vu.", "  multiple   spaces",
         "\n", "1", " 1", "  1", "a1b2c3", "3.14159", "1,000,000", "2024-12-01", "v1.2.3", "ab  12  cd",
         "\t1\t2", "\n\n1\n", "x\u00b2 + y\u00b2", "١٢٣ ٤٥", "Ⅻ chapter", "tab\there", "trailing   ",
         "   leading", "\r\n\r\n", "emoji 😀 end", "👍🏽👍🏽", "日本語のテキスト", "Привет, мир!",
         "مرحبا بالعالم", "नमस्ते दुनिया", "<|im_start|>user\nHi<|im_end|>", "<|endoftext|>",
         "<|im_end|><|im_start|>", "<repo_name>x<file_sep>y", "a<|im_start|>b", "<|im_start", "|>"]


def generated(specials, rng, count):
    parts = [LETTERS, DIGITS, SPACES, PUNCT, EMOJI, WORDS, specials]
    weights = [5, 4, 4, 3, 1, 5, 1]
    out = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(1, 14)):
            group = rng.choices(parts, weights)[0]
            pieces.append("".join(rng.choice(group) for _ in range(rng.randint(1, 4))))
        out.append("".join(pieces))
    return out


def tokenize_jsonl(model_args, texts, special, tmp):
    out, parsed = run_tokenize_jsonl(model_args, texts, *(["--special"] if special else []), tmp=tmp)
    check(parsed is not None, "tokenize %s: %s" % (model_args, out.stderr.strip()))
    return [None] * len(texts) if parsed is None else parsed


def check_smollm2(tmp):
    path = smollm2_gguf()
    reader = gguf.GGUFReader(path)
    ref, specials = hf_reference(reader, with_specials=True)
    plain_ref, _ = hf_reference(reader, with_specials=False)
    check(len(specials) == 17, "17 control tokens, got %d" % len(specials))

    hf_dir = os.path.join(tmp, "smollm2-hf")
    os.makedirs(hf_dir)
    ref.save(os.path.join(hf_dir, "tokenizer.json"))
    with open(os.path.join(hf_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "add_bos_token": False,
                   "chat_template": field(reader, "tokenizer.chat_template")}, f)

    rng = random.Random(19)
    texts = FIXED + CODE + generated(specials, rng, 400)
    for special in (True, False):
        oracle = ref if special else plain_ref
        expected = [oracle.encode(t, add_special_tokens=False).ids for t in texts]
        for model_args in (["--model", path], ["--model", hf_dir]):
            got = tokenize_jsonl(model_args, texts, special, tmp)
            mismatches = [(t, e, g and g["ids"]) for t, e, g in zip(texts, expected, got)
                          if g is None or g["ids"] != e]
            check(not mismatches, "%s special=%s: %d of %d differ, first %r" %
                  (model_args[1], special, len(mismatches), len(texts), mismatches[:1]))
            if special:
                wrong = [(t, g["decoded"]) for t, g in zip(texts, got)
                         if g is not None and g["decoded"] != strip_specials(t, specials)]
                check(not wrong, "%s: decode(encode(s)) != s for %d, first %r" % (model_args[1], len(wrong), wrong[:1]))
        roundtrip = [t for t, g in zip(texts, tokenize_jsonl(["--model", path], texts, False, tmp))
                     if g is not None and g["decoded"] != t]
        check(not roundtrip, "plain decode(encode(s)) != s: %r" % roundtrip[:1])
    print("smollm2: %d strings checked against HF tokenizers, through the GGUF file and a HF directory" % len(texts))

    measured = {"Hello world! 123": [19556, 905, 17, 216, 33, 34, 35],
                "Café déjà vu.": [51, 1939, 2756, 32564, 90, 16739, 386, 101, 30],
                "  multiple   spaces": [216, 2701, 256, 5600], "\n": [198],
                "hello  123": [28120, 256, 33, 34, 35], "x   42 y": [104, 333, 36, 34, 329],
                "<|im_start|>user": [44, 108, 306, 79, 3738, 108, 46, 4093]}
    got = tokenize_jsonl(["--model", path], list(measured), False, tmp)
    for (text, ids), g in zip(measured.items(), got):
        check(g is not None and g["ids"] == ids, "docs/gguf.md vector %r: %r" % (text, g and g["ids"]))

    out = kvsearch("tokenize", "--model", path, "--text", "hello  123", "--json")
    check(out.returncode == 0 and json.loads(out.stdout)["ids"] == [28120, 256, 33, 34, 35],
          "tokenize --json: %r %r" % (out.stdout, out.stderr))


def strip_specials(text, specials):
    # Decoding skips special tokens by default.
    for s in specials:
        text = text.replace(s, "")
    return text


def write_gguf(path, metadata):
    writer = gguf.GGUFWriter(path, arch="llama")
    for key, (kind, value) in metadata.items():
        if kind == "str":
            writer.add_string(key, value)
        elif kind == "str[]":
            writer.add_array(key, value)
        elif kind == "i32[]":
            writer.add_key_value(key, value, gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT32)
        elif kind == "f32[]":
            writer.add_key_value(key, value, gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.FLOAT32)
        elif kind == "u32":
            writer.add_uint32(key, value)
        elif kind == "bool":
            writer.add_bool(key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def check_other_pre_tokenizers(tmp):
    """SmolLM2's vocabulary under tokenizer.ggml.pre gpt2 (ByteLevel's regex alone) and llama-bpe
    (Llama-3's regex; whole-token pieces kept, HF's ignore_merges) against the same HF setups."""
    reader = gguf.GGUFReader(smollm2_gguf())
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = field(reader, "tokenizer.ggml.merges")
    texts = FIXED + CODE + generated(["<|endoftext|>"], random.Random(23), 150)
    for pre, steps, ignore_merges in (
            ("gpt2", [pre_tokenizers.ByteLevel(add_prefix_space=False)], False),
            ("llama-bpe", [pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
                           pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)], True)):
        path = os.path.join(tmp, "smollm2-%s.gguf" % pre)
        write_gguf(path, {
            "tokenizer.ggml.model": ("str", "gpt2"), "tokenizer.ggml.pre": ("str", pre),
            "tokenizer.ggml.tokens": ("str[]", tokens), "tokenizer.ggml.merges": ("str[]", merges),
            "tokenizer.ggml.token_type": ("i32[]", types), "tokenizer.ggml.eos_token_id": ("u32", 2)})
        ref = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                                   merges=[tuple(m.split(" ", 1)) for m in merges], ignore_merges=ignore_merges))
        ref.pre_tokenizer = pre_tokenizers.Sequence(steps)
        expected = [ref.encode(t, add_special_tokens=False).ids for t in texts]
        got = tokenize_jsonl(["--model", path], texts, False, tmp)
        differ = [(t, e, g and g["ids"]) for t, e, g in zip(texts, expected, got) if g is None or g["ids"] != e]
        check(not differ, "pre %s: %d of %d differ, first %r" % (pre, len(differ), len(texts), differ[:1]))
    print("pre-tokenizers gpt2, llama-bpe: %d strings checked against HF tokenizers" % len(texts))


def check_mistral(tmp):
    sp = sentencepiece.SentencePieceProcessor(model_file=MISTRAL)
    n = sp.get_piece_size()
    def kind(i):
        if sp.is_unknown(i): return 2
        if sp.is_control(i): return 3
        if sp.is_byte(i): return 6
        if sp.is_unused(i): return 5
        return 1
    path = os.path.join(tmp, "mistral.gguf")
    write_gguf(path, {
        "tokenizer.ggml.model": ("str", "llama"),
        "tokenizer.ggml.tokens": ("str[]", [sp.id_to_piece(i) for i in range(n)]),
        "tokenizer.ggml.scores": ("f32[]", [sp.get_score(i) for i in range(n)]),
        "tokenizer.ggml.token_type": ("i32[]", [kind(i) for i in range(n)]),
        "tokenizer.ggml.bos_token_id": ("u32", sp.bos_id()),
        "tokenizer.ggml.eos_token_id": ("u32", sp.eos_id()),
        "tokenizer.ggml.unknown_token_id": ("u32", sp.unk_id()),
    })
    rng = random.Random(7)
    texts = FIXED + CODE + generated(["</s>", "<s>"], rng, 200)
    from_gguf = tokenize_jsonl(["--model", path], texts, False, tmp)
    from_model = tokenize_jsonl(["--tokenizer", MISTRAL], texts, False, tmp)
    differ = [(t, a and a["ids"], b and b["ids"]) for t, a, b in zip(texts, from_gguf, from_model) if a != b]
    check(not differ, "mistral GGUF vs tokenizer.model: %d of %d differ, first %r" % (len(differ), len(texts), differ[:1]))
    print("mistral: %d strings checked, GGUF vocabulary against tokenizer.model" % len(texts))


def check_bad_metadata(tmp):
    base = {
        "tokenizer.ggml.model": ("str", "gpt2"),
        "tokenizer.ggml.pre": ("str", "smollm"),
        "tokenizer.ggml.tokens": ("str[]", [chr(c) for c in range(0x21, 0x7F)] + ["ab"]),
        "tokenizer.ggml.merges": ("str[]", ["a b"]),
        "tokenizer.ggml.eos_token_id": ("u32", 0),
    }
    cases = {
        "no-tokens": ({k: v for k, v in base.items() if k != "tokenizer.ggml.tokens"}, "tokenizer.ggml.tokens"),
        "no-merges": ({k: v for k, v in base.items() if k != "tokenizer.ggml.merges"}, "tokenizer.ggml.merges"),
        "merge-without-space": (dict(base, **{"tokenizer.ggml.merges": ("str[]", ["ab"])}),
                                "tokenizer.ggml.merges[0]"),
        "unknown-pre": (dict(base, **{"tokenizer.ggml.pre": ("str", "qwen9")}), "qwen9"),
        "unknown-model": (dict(base, **{"tokenizer.ggml.model": ("str", "wordpiece")}), "tokenizer.ggml.model"),
    }
    for name, (metadata, field_name) in cases.items():
        path = os.path.join(tmp, name + ".gguf")
        write_gguf(path, metadata)
        out = kvsearch("tokenize", "--model", path, "--text", "ab")
        _, problems = error_output(out, prefix=None, mentions=(path, field_name))
        check(not problems, "%s: rc %d, stderr %r" % (name, out.returncode, out.stderr))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_smollm2(tmp)
        check_other_pre_tokenizers(tmp)
        check_mistral(tmp)
        check_bad_metadata(tmp)
    finish(passed="ok")


if __name__ == "__main__":
    main()
