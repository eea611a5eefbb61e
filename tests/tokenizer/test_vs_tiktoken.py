"""Property test: `kvsearch tokenize` against the tiktoken package on thousands of generated strings.

The oracle is tiktoken's Encoding built from the shared Llama-3.1 tokenizer.model itself (no
network), with the pattern from cases.json and Meta's special tokens. Checks: identical ids for
plain encoding and for encoding with special tokens parsed, decode(encode(s)) == s, decoding
random id sequences (characters cut between tokens) exactly as tiktoken does, and the same through
a tokenizer.json converted from the same ranks (checked against HF's tokenizers library first).
"""
import json
import os
import random
import sys
import tempfile

import tiktoken
import tokenizers  # HF tokenizers (a dependency of transformers in tools/requirements.txt)
from tiktoken.load import load_tiktoken_bpe

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import FAILURES, char_range, check, finish, tokenize_jsonl  # noqa: E402

FIXTURES = os.environ["KVS_FIXTURES_DIR"]
MODEL = os.path.join(FIXTURES, "tokenizers", "llama-3.1", "tokenizer.model")
CASES = json.load(open(os.path.join(FIXTURES, "tokenizers", "llama-3.1", "cases.json"), encoding="utf-8"))

NAMED = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
         "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
         "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
SPECIALS = NAMED + ["<|reserved_special_token_%d|>" % (2 + i) for i in range(256 - len(NAMED))]

# Long-assigned characters only (PCRE2 and Rust's regex crate may carry different Unicode
# versions; newly assigned code points are not what this test is about).
LETTERS = (char_range(0x61, 0x7A) + char_range(0x41, 0x5A) + char_range(0xC0, 0xFF) +
           char_range(0x100, 0x17F) + char_range(0x391, 0x3A9) + char_range(0x3B1, 0x3C9) +
           char_range(0x410, 0x44F) + char_range(0x5D0, 0x5EA) + char_range(0x621, 0x64A) +
           char_range(0x905, 0x939) + char_range(0xE01, 0xE30) + char_range(0x3041, 0x3096) +
           char_range(0x30A1, 0x30FA) + char_range(0x4E00, 0x4FFF) + char_range(0xAC00, 0xAD00))
MARKS = char_range(0x300, 0x36F) + char_range(0x93E, 0x94D)
DIGITS = (char_range(0x30, 0x39) + char_range(0x660, 0x669) + char_range(0xFF10, 0xFF19) +
          ["\u00b2", "\u00b3", "\u00bd", "\u2160", "\u2161", "\u216b"])
SPACES = [" ", " ", " ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u2029",
          "\u0085", "\u2003", "\u000b", "\u000c", "\u180e", "\u200b"]
PUNCT = list("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'") + ["\u2014", "\u2026", "\u00ab", "\u00bb",
                                                     "\u201c", "\u201d", "\u00a7", "\u20ac", "\u00ad"]
EMOJI = (char_range(0x1F600, 0x1F64F) + char_range(0x1F300, 0x1F320) +
         ["\U0001F468\u200D\U0001F469\u200D\U0001F467", "\U0001F44D\U0001F3FD", "\u2764\uFE0F",
          "\U0001F1EB\U0001F1F7"])
WORDS = ["the", "The", "THE", "hello", "world", "naïve", "café", "東京", "Москва", "don't",
         "I'm", "they'll", "we'd've", "IT'S", "O'Neil", "'s", "'S", "'ll", "'LL", "'\u017f",
         "x'", "rock'n'roll", "strawberry", "Paragraph", "def", "return", "self.x", "__init__"]
SPECIAL_LOOKING = SPECIALS[:12] + ["<|reserved_special_token_99|>", "<|eot_id", "<|eot_id|",
                                   "<|EOT_ID|>", "<||>", "<|", "|>", "<|<|eot_id|>|>", "<s>", "</s>"]


def gen_string(rng):
    kind = rng.randrange(9)
    parts = []
    for _ in range(rng.randint(1, 14)):
        r = rng.random()
        if kind == 0 or r < 0.25:
            parts.append(rng.choice(WORDS))
        elif r < 0.45:
            parts.append("".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 9))))
        elif r < 0.55:
            parts.append("".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 12))))
        elif r < 0.7:
            parts.append("".join(rng.choice(SPACES) for _ in range(rng.randint(1, 5))))
        elif r < 0.8:
            parts.append("".join(rng.choice(PUNCT) for _ in range(rng.randint(1, 4))))
        elif r < 0.87:
            parts.append(rng.choice(EMOJI))
        elif r < 0.92:
            parts.append(rng.choice(MARKS))
        else:
            parts.append(rng.choice(SPECIAL_LOOKING))
        if rng.random() < 0.5:
            parts.append(" ")
    s = "".join(parts)
    if kind == 1:  # long pieces: the heap merge path and long whitespace runs
        s += rng.choice(["x", "ab", " ", "\n", "9", "!"]) * rng.randint(100, 700)
    if kind == 2:  # random ASCII including control characters
        s = "".join(chr(rng.randrange(0, 128)) for _ in range(rng.randint(0, 60)))
    return s


def run_jsonl(tokenizer_path, values, *flags):
    out, parsed = tokenize_jsonl(["--tokenizer", tokenizer_path], values, *flags)
    if parsed is None:
        sys.exit("kvsearch tokenize failed: " + out.stderr.strip())
    assert len(parsed) == len(values), (len(parsed), len(values))
    return parsed


def compare_encodings(label, tokenizer_path, enc, strings):
    plain = run_jsonl(tokenizer_path, strings)
    for s, got in zip(strings, plain):
        want = enc.encode_ordinary(s)
        check(got["ids"] == want, "%s encode %r: got %s, want %s" % (label, s, got["ids"][:20], want[:20]))
        check(got["decoded"] == s, "%s roundtrip %r: got %r" % (label, s, got["decoded"]))
    special = run_jsonl(tokenizer_path, strings, "--special", "--keep-special")
    for s, got in zip(strings, special):
        want = enc.encode(s, allowed_special="all")
        check(got["ids"] == want, "%s encode_with_special %r: got %s, want %s" % (label, s, got["ids"][:20], want[:20]))
        check(got["decoded"] == s, "%s special roundtrip %r: got %r" % (label, s, got["decoded"]))


def bytes_to_unicode():
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping, extra = {}, 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def write_tokenizer_json(ranks, path):
    """A Llama-3-style tokenizer.json from the tiktoken ranks, merges as HF's TikTokenConverter
    makes them (every split of a token into two tokens, in the merged token's rank order)."""
    b2u = bytes_to_unicode()
    to_text = lambda b: "".join(b2u[x] for x in b)
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        local = [(ranks[token[:i]], ranks[token[i:]], token[:i], token[i:]) for i in range(1, len(token))
                 if token[:i] in ranks and token[i:] in ranks]
        merges.extend(sorted(local))
    first = len(ranks)
    data = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": first + i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i, t in enumerate(SPECIALS)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": CASES["pattern"]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": True,
                  "vocab": {to_text(t): r for t, r in ranks.items()},
                  "merges": [to_text(l) + " " + to_text(r) for _, _, l, r in merges]},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)


def main():
    ranks = load_tiktoken_bpe(MODEL)
    enc = tiktoken.Encoding("llama3", pat_str=CASES["pattern"], mergeable_ranks=ranks,
                            special_tokens={t: len(ranks) + i for i, t in enumerate(SPECIALS)})
    rng = random.Random(20240611)
    strings = [c["text"] for c in CASES["encode"]] + [gen_string(rng) for _ in range(4000)]
    compare_encodings("tiktoken-file", MODEL, enc, strings)

    # Decoding arbitrary id sequences: multi-byte characters cut between tokens, specials.
    id_lists = []
    for _ in range(1500):
        ids = [rng.randrange(len(ranks)) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.3:
            ids.insert(rng.randint(0, len(ids)), len(ranks) + rng.randrange(256))
        id_lists.append(ids)
    kept = run_jsonl(MODEL, id_lists, "--keep-special")
    skipped = run_jsonl(MODEL, id_lists)
    for ids, k, s in zip(id_lists, kept, skipped):
        check(k["text"] == enc.decode(ids), "decode %s: got %r, want %r" % (ids, k["text"], enc.decode(ids)))
        plain = [i for i in ids if i < len(ranks)]
        check(s["text"] == enc.decode(plain), "decode skipping specials %s: got %r" % (ids, s["text"]))

    # The same ranks as HF's tokenizer.json.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tokenizer.json")
        write_tokenizer_json(ranks, path)
        subset = strings[:1500]
        hf = tokenizers.Tokenizer.from_file(path)
        for s in subset[:300]:
            check(hf.encode(s, add_special_tokens=False).ids == enc.encode(s, allowed_special="all"),
                  "the generated tokenizer.json disagrees with tiktoken (HF tokenizers) on %r" % s)
        compare_encodings("tokenizer.json", path, enc, subset)

    print("checked %d strings, %d id sequences; %d failures" % (len(strings), len(id_lists), len(FAILURES)))
    finish(limit=20)


if __name__ == "__main__":
    main()
