#!/usr/bin/env python3
"""Bad GGUF files through the CLI: `kvsearch generate --model bad.gguf --token-ids 1` on each must
print exactly one line on stderr, starting with "error:", naming the file and the field, exit
with status 1 (not a signal), and print no stack trace. The files are written here by
tests/model/gguf_fixtures.py, starting from a valid tiny Llama that the same command runs.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import gguf_fixtures as fx  # noqa: E402
from kvs_testing import TRACE_MARKERS, error_output, finish, kvsearch  # noqa: E402

MARKERS = (*TRACE_MARKERS, "AddressSanitizer")  # a sanitizer report is a crash too
TYPES = {"token_embd": fx.Q8_0, "attn_q": fx.Q4_1, "attn_k": fx.Q4_0}


def valid():
    return fx.tiny_llama(TYPES, seed=7)


def edit_tensor(writer, name, **changes):
    for i, (n, dims, ttype, raw, offset) in enumerate(writer.tensors):
        if n == name:
            fields = {"dims": dims, "ttype": ttype, "raw": raw, "offset": offset, **changes}
            writer.tensors[i] = (n, fields["dims"], fields["ttype"], fields["raw"], fields["offset"])
    return writer


def drop_key(writer, key):
    writer.kv = [kv for kv in writer.kv if kv[0] != key]
    return writer


def raw_kv(writer, key, vtype, encoded):
    writer.kv.append((key, vtype, encoded))
    return writer


def patched(data, at, new):
    return data[:at] + new + data[at + len(new):]


# name -> (bytes of the file, substrings the one error line must hold besides the path)
def cases():
    good = valid().bytes()
    ffn_up = "blk.0.ffn_up.weight"
    return {
        "truncated": (good[: len(good) * 3 // 5], ["runs past the end", "truncated?"]),
        "truncated_header": (good[:20], ["header", "too short", "truncated?"]),
        "bad_magic": (b"GGML" + good[4:], ["magic", "not a GGUF file"]),
        "version_1": (patched(good, 4, struct.pack("<I", 1)), ["version", "unsupported GGUF version 1"]),
        "version_4": (patched(good, 4, struct.pack("<I", 4)), ["version", "unsupported GGUF version 4"]),
        "offset_past_end": (edit_tensor(valid(), ffn_up, offset=1 << 40).bytes(),
                            [f"tensor '{ffn_up}'", "offset 1099511627776", "runs past the end"]),
        "size_past_end": (edit_tensor(valid(), ffn_up, dims=[256, 512 * 64]).bytes(),
                          [f"tensor '{ffn_up}'", "size", "runs past the end"]),
        "unknown_tensor_type": (edit_tensor(valid(), ffn_up, ttype=99).bytes(),
                                [f"tensor '{ffn_up}'", "unknown tensor type id 99"]),
        "unsupported_tensor_type": (edit_tensor(valid(), ffn_up, ttype=10, raw=b"\0" * 84 * 512).bytes(),
                                    [f"tensor '{ffn_up}'", "Q2_K (type id 10) is not supported"]),
        "row_not_block_multiple": (edit_tensor(valid(), "token_embd.weight", dims=[250, 320]).bytes(),
                                   ["tensor 'token_embd.weight'", "row length 250", "block size 32"]),
        "string_length_past_end": (raw_kv(valid(), "general.license", fx.STRING,
                                          struct.pack("<Q", 1 << 50) + b"mit").bytes(),
                                   ["metadata 'general.license'", "string length 1125899906842624"]),
        "array_length_past_end": (raw_kv(valid(), "tokenizer.ggml.token_type", fx.ARRAY,
                                         struct.pack("<IQ", fx.INT32, 1 << 61) + b"\0" * 16).bytes(),
                                  ["metadata 'tokenizer.ggml.token_type'", "array of 2305843009213693952"]),
        "duplicate_key": (raw_kv(valid(), "llama.block_count", fx.UINT32, struct.pack("<I", 2)).bytes(),
                          ["metadata 'llama.block_count'", "duplicate key"]),
        "missing_metadata": (drop_key(valid(), "llama.embedding_length").bytes(),
                             ["missing required metadata 'llama.embedding_length'"]),
        "other_architecture": (raw_kv(drop_key(valid(), "general.architecture"), "general.architecture",
                                      fx.STRING, fx.gguf_string("gemma3")).bytes(),
                               ["general.architecture", "'gemma3' is not an architecture", "llama, qwen2, qwen3"]),
        "missing_tensor": (_without_tensor(ffn_up),
                           [f"missing tensor '{ffn_up}'", "mlp.up_proj"]),
        "wrong_shape": (edit_tensor(valid(), ffn_up, dims=[256, 256]).bytes(),
                        [f"tensor '{ffn_up}'", "shape [256, 256]", "[512, 256]"]),
    }


def _without_tensor(name):
    w = valid()
    w.tensors = [t for t in w.tensors if t[0] != name]
    return w.bytes()


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="kvs_gguf_bad_") as tmp:
        good = os.path.join(tmp, "good.gguf")
        valid().write(good)
        r = kvsearch("generate", "--model", good, "--token-ids", "1,5,9", "--max-new-tokens", 2)
        if r.returncode != 0:
            failures.append(f"the valid file fails: {r.stderr.strip()}")
        for name, (data, needles) in cases().items():
            path = os.path.join(tmp, name + ".gguf")
            with open(path, "wb") as f:
                f.write(data)
            r = kvsearch("generate", "--model", path, "--token-ids", "1")
            line, problems = error_output(r, mentions=(path, *needles), markers=MARKERS)
            print(f"{name}: {line}")
            if problems:
                failures.append(f"{name}: {', '.join(problems)}: {r.stderr.strip()!r}")
    finish(failures, passed="PASS")


if __name__ == "__main__":
    main()
