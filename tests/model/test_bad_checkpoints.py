#!/usr/bin/env python3
"""Bad checkpoints through the CLI: `kvsearch generate` (`tokenize` for a tokenizer.json) on each
damaged checkpoint must print exactly one line on stderr, starting with "error:", naming the
damaged file and the problem, exit with status 1 (not a signal, not abort), and print no LibTorch
stack trace. Among them the Qwen ones: an unknown architecture (which one, which are read), a
qwen3 checkpoint without q_norm, a qwen2 bias of the wrong shape, an unknown pre-tokenizer. And
`kvsearch models` lists the architectures and what each reads.

The damage is done here with a minimal safetensors header editor (u64 little-endian header length,
JSON header, data), independent of the project's reader.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import json
import os
import re
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import TRACE_MARKERS, error_output, finish, kvsearch, read_json, write_json  # noqa: E402


def read_st(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write_st(path, header, data):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def by_offset(header):
    return sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])


def edit_header(path, change):
    header, data = read_st(path)
    change(header)
    write_st(path, header, data)


def edit_config(path, change):
    config = read_json(path)
    change(config)
    write_json(path, config, indent=2)


# ---- the damage: each takes the model directory and returns the path the error must name ----

def truncated(d):
    p = os.path.join(d, "model.safetensors")
    os.truncate(p, os.path.getsize(p) * 6 // 10)
    return p


def header_length_past_end(d):
    p = os.path.join(d, "model.safetensors")
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.write(struct.pack("<Q", size + 1000))
    return p


def empty_file(d):
    p = os.path.join(d, "model.safetensors")
    open(p, "wb").close()
    return p


def header_not_json(d):
    p = os.path.join(d, "model.safetensors")
    with open(p, "r+b") as f:
        f.seek(8)
        f.write(b"x")  # the opening brace
    return p


def overlapping_offsets(d):
    p = os.path.join(d, "model.safetensors")

    def change(h):
        second = h[by_offset(h)[1]]
        second["data_offsets"] = [o - 4 for o in second["data_offsets"]]
    edit_header(p, change)
    return p


def offsets_end_past_data(d):
    """The last tensor claims one row more than the data section holds (shape and size agree)."""
    p = os.path.join(d, "model.safetensors")

    def change(h):
        last = h[by_offset(h)[-1]]
        row_bytes = 4 * last["shape"][1]
        last["shape"][0] += 1
        last["data_offsets"][1] += row_bytes
    edit_header(p, change)
    return p


def offsets_beyond_data(d):
    """The last tensor's offsets lie wholly past the end of the data section."""
    p = os.path.join(d, "model.safetensors")

    def change(h):
        last = h[by_offset(h)[-1]]
        b, e = last["data_offsets"]
        last["data_offsets"] = [b + (1 << 32), e + (1 << 32)]
    edit_header(p, change)
    return p


def unknown_dtype(d):
    p = os.path.join(d, "model.safetensors")
    edit_header(p, lambda h: h["model.norm.weight"].update(dtype="F8_E9M9"))
    return p


def integer_dtype(d):
    p = os.path.join(d, "model.safetensors")  # same byte count, but not a weight type
    edit_header(p, lambda h: h["model.norm.weight"].update(dtype="I32"))
    return p


def shape_vs_byte_count(d):
    p = os.path.join(d, "model.safetensors")
    edit_header(p, lambda h: h["model.layers.0.self_attn.q_proj.weight"].update(shape=[64, 65]))
    return p


def shape_vs_config_in_header(d):
    p = os.path.join(d, "model.safetensors")  # same byte count as [64, 64]
    edit_header(p, lambda h: h["model.layers.1.self_attn.q_proj.weight"].update(shape=[32, 128]))
    return p


def shape_vs_config_json(d):
    edit_config(os.path.join(d, "config.json"), lambda c: c.update(intermediate_size=128))
    return os.path.join(d, "model.safetensors")


def missing_shard(d):
    shards = sorted(set(read_json(os.path.join(d, "model.safetensors.index.json"))["weight_map"].values()))
    assert len(shards) >= 3, shards
    os.remove(os.path.join(d, shards[1]))
    return os.path.join(d, "model.safetensors.index.json")


def malformed_config(d):
    p = os.path.join(d, "config.json")
    with open(p) as f:
        text = f.read()
    with open(p, "w") as f:
        f.write(text.replace('"vocab_size":', '"vocab_size" ', 1))  # a missing colon
    return p


def config_missing_rope_theta(d):
    p = os.path.join(d, "config.json")
    edit_config(p, lambda c: c.pop("rope_theta"))
    return p


def config_missing_sliding_window(d):
    p = os.path.join(d, "config.json")
    edit_config(p, lambda c: c.pop("sliding_window"))
    return p


def config_absent(d):
    os.remove(os.path.join(d, "config.json"))
    return d


def tensor_absent(d):
    """Drops lm_head.weight (the last tensor) from header and data alike: a valid file, missing a weight."""
    p = os.path.join(d, "model.safetensors")
    header, data = read_st(p)
    last = by_offset(header)[-1]
    assert last == "lm_head.weight", last
    begin = header.pop(last)["data_offsets"][0]
    write_st(p, header, data[:begin])
    return d


def rewrite_tensors(path, change):
    """Rebuilds a safetensors file from {name: (dtype, shape, bytes)} after `change` edits it."""
    header, data = read_st(path)
    tensors = {k: (header[k]["dtype"], header[k]["shape"], data[slice(*header[k]["data_offsets"])])
               for k in by_offset(header)}
    change(tensors)
    new_header, blob = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        new_header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    write_st(path, new_header, blob)


def unknown_architecture(d):
    p = os.path.join(d, "config.json")
    edit_config(p, lambda c: c.update(model_type="gemma2", architectures=["Gemma2ForCausalLM"]))
    return p


def qwen3_without_q_norm(d):
    """A qwen3 checkpoint whose layer 1 has no q_norm (header and data alike)."""
    rewrite_tensors(os.path.join(d, "model.safetensors"),
                    lambda t: t.pop("model.layers.1.self_attn.q_norm.weight"))
    return d


def qwen2_bias_wrong_shape(d):
    """qwen2's k_proj bias of layer 0 holds half the rows config.json implies (a valid file)."""
    p = os.path.join(d, "model.safetensors")

    def change(t):
        dtype, shape, raw = t["model.layers.0.self_attn.k_proj.bias"]
        t["model.layers.0.self_attn.k_proj.bias"] = (dtype, [shape[0] // 2], raw[:len(raw) // 2])
    rewrite_tensors(p, change)
    return p


def tokenizer_unknown_pre_tokenizer(d):
    """A Qwen-style byte-level tokenizer.json whose pre-tokenizer is one kvsearch does not read
    (`tokenize --model` loads it; the error points at the line of the field)."""
    p = os.path.join(d, "tokenizer.json")
    write_json(p, {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
                   "normalizer": None, "decoder": {"type": "ByteLevel"},
                   "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                       {"type": "WhitespaceSplit"}, {"type": "ByteLevel", "use_regex": False}]}}, indent=2)
    write_json(os.path.join(d, "tokenizer_config.json"), {"eos_token": "ab"})
    return p


# (name, damage, base checkpoint, regex the problem must match[, the command: generate by default])
CASES = [
    ("truncated", truncated, "single", r"truncat|past the (end|data)"),
    ("header_length_past_end", header_length_past_end, "single", r"header length.*(past|beyond|exceed)"),
    ("empty_file", empty_file, "single", r"too short|truncat|empty"),
    ("header_not_json", header_not_json, "single", r"json"),
    ("overlapping_offsets", overlapping_offsets, "single", r"overlap"),
    ("offsets_end_past_data", offsets_end_past_data, "single", r"past|beyond|out of range|exceed"),
    ("offsets_beyond_data", offsets_beyond_data, "single", r"past|beyond|out of range|exceed"),
    ("unknown_dtype", unknown_dtype, "single", r"unknown dtype.*F8_E9M9"),
    ("integer_dtype", integer_dtype, "single", r"I32"),
    ("shape_vs_byte_count", shape_vs_byte_count, "single", r"bytes"),
    ("shape_vs_config_in_header", shape_vs_config_in_header, "single", r"shape.*\[32, 128\].*config"),
    ("shape_vs_config_json", shape_vs_config_json, "single", r"shape.*config"),
    ("missing_shard", missing_shard, "sharded", r"model-00002-of-0000\d\.safetensors.*missing"),
    ("malformed_config", malformed_config, "single", r"json"),
    ("config_missing_rope_theta", config_missing_rope_theta, "single", r"missing.*rope_theta"),
    ("config_missing_sliding_window", config_missing_sliding_window, "single", r"missing.*sliding_window"),
    ("config_absent", config_absent, "single", r"config\.json"),
    ("tensor_absent", tensor_absent, "single", r"lm_head\.weight"),
    ("unknown_architecture", unknown_architecture, "single",
     r"model_type.*gemma2.*\(mistral, llama, qwen2, qwen3\)"),
    ("qwen3_without_q_norm", qwen3_without_q_norm, "qwen3", r"no tensor 'model\.layers\.1\.self_attn\.q_norm\.weight'"),
    ("qwen2_bias_wrong_shape", qwen2_bias_wrong_shape, "qwen2",
     r"'model\.layers\.0\.self_attn\.k_proj\.bias' has shape \[16\].*config\.json implies \[32\]"),
    ("tokenizer_unknown_pre_tokenizer", tokenizer_unknown_pre_tokenizer, "qwen2",
     r":\d+: unsupported pre-tokenizer 'WhitespaceSplit'", ["tokenize", "--text", "hello"]),
]


def check_case(number, name, damage, base, problem, tmp, command=None):
    d = os.path.join(tmp, f"case{number:02d}")  # a neutral name: the regexes must not match the path
    shutil.copytree(base, d)
    must_name = damage(d)
    command = command or ["generate", "--token-ids", "1,2,3", "--max-new-tokens", "1"]
    proc = kvsearch(command[0], "--model", d, *command[1:])
    line, problems = error_output(proc, mentions=(must_name,), markers=TRACE_MARKERS, markers_in_stdout=True)
    if not re.search(problem, line.replace(must_name, "<file>").replace(d, "<dir>"), re.IGNORECASE):
        problems.append(f"the line does not name the problem (/{problem}/)")
    status = "ok  " if not problems else "FAIL"
    print(f"{status} {name}: rc={proc.returncode} {proc.stderr.strip()!r}")
    for p in problems:
        print(f"       - {p}")
    return [f"{name}: {p}" for p in problems]


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="kvs_bad_ckpt_") as tmp:
        bases = {kind: os.path.join(tmp, f"base{i}") for i, kind in enumerate(("single", "sharded", "qwen2", "qwen3"))}
        for kind, args in (("single", ["--preset", "tiny"]), ("sharded", ["--preset", "tiny", "--max-shard-mb", "1"]),
                           ("qwen2", ["--preset", "tiny-qwen2"]), ("qwen3", ["--preset", "tiny-qwen3"])):
            proc = kvsearch("make-model", "--out", bases[kind], "--seed", "9", *args)
            if proc.returncode != 0:
                print("make-model failed:", proc.stderr)
                return 1
        # The undamaged checkpoints work: any error below comes from the damage.
        for kind, base in bases.items():
            proc = kvsearch("generate", "--model", base, "--token-ids", "1,2,3", "--max-new-tokens", "1")
            if proc.returncode != 0:
                failures.append(f"undamaged {kind} checkpoint fails: {proc.stderr.strip()}")
        for number, (name, damage, base, problem, *command) in enumerate(CASES):
            failures += check_case(number, name, damage, bases[base], problem, tmp, *command)
        # `kvsearch models` names every architecture the errors above list, and what each reads.
        listing = kvsearch("models").stdout
        for expected in ("mistral", "LlamaForCausalLM", "GGUF qwen2", "q_proj/k_proj/v_proj biases",
                         "qwen3    Qwen3ForCausalLM", "q_norm/k_norm", "on CUDA bf16", "on CUDA f16",
                         "smollm2-135m"):
            if expected not in listing:
                failures.append(f"kvsearch models does not list {expected!r}: {listing}")
    print(f"{len(CASES) - len({f.split(':')[0] for f in failures})}/{len(CASES)} cases pass")
    finish(failures)


if __name__ == "__main__":
    sys.exit(main())
