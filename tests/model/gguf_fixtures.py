"""A minimal GGUF writer for tests, independent of the project's reader and of gguf-py's writer:
metadata of any value type, tensors with raw block bytes, 32-byte alignment. It writes what it is
told, so tests can also write broken files. Plus a tiny Llama GGUF with random block bytes (finite
f16 scales) in a chosen type per tensor.
"""
import struct

import numpy as np

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q6_K, BF16 = 0, 1, 2, 3, 6, 7, 8, 12, 14, 30
# elements per block, bytes per block, byte ranges of the f16 scales inside a block
LAYOUT = {F32: (1, 4, []), F16: (1, 2, []), BF16: (1, 2, []), Q4_0: (32, 18, [0]), Q4_1: (32, 20, [0, 2]),
          Q5_0: (32, 22, [0]), Q5_1: (32, 24, [0, 2]), Q8_0: (32, 34, [0]), Q4_K: (256, 144, [0, 2]),
          Q6_K: (256, 210, [208])}
TYPE_NAMES = {F32: "F32", F16: "F16", BF16: "BF16", Q4_0: "Q4_0", Q4_1: "Q4_1", Q5_0: "Q5_0",
              Q5_1: "Q5_1", Q8_0: "Q8_0", Q4_K: "Q4_K", Q6_K: "Q6_K"}


def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


SCALAR_FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
                  FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}


def encode_value(vtype, value):
    if vtype == STRING:
        return gguf_string(value)
    if vtype == ARRAY:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(encode_value(etype, v) for v in items)
    return struct.pack(SCALAR_FORMATS[vtype], value)


class Writer:
    def __init__(self, version=3, alignment=32):
        self.version, self.alignment = version, alignment
        self.kv = []        # (key, type, encoded bytes)
        self.tensors = []   # (name, dims in ggml order, type, bytes, offset or None)

    def add(self, key, vtype, value):
        self.kv.append((key, vtype, encode_value(vtype, value)))

    def add_tensor(self, name, dims, ttype, data, offset=None):
        self.tensors.append((name, list(dims), ttype, bytes(data), offset))

    def bytes(self):
        out = struct.pack("<IIQQ", 0x46554747, self.version, len(self.tensors), len(self.kv))
        for key, vtype, encoded in self.kv:
            out += gguf_string(key) + struct.pack("<I", vtype) + encoded
        data = b""
        for name, dims, ttype, raw, offset in self.tensors:
            out += gguf_string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            out += struct.pack("<IQ", ttype, len(data) if offset is None else offset)
            data += raw + b"\0" * (-len(raw) % self.alignment)
        out += b"\0" * (-len(out) % self.alignment)
        return out + data

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.bytes())


def random_blocks(rng, ttype, n_elements):
    """Random bytes for n_elements of ttype; every f16 scale finite, F16/BF16/F32 values finite."""
    if ttype == F32:
        return rng.standard_normal(n_elements).astype("<f4").tobytes()
    if ttype == F16:
        return rng.standard_normal(n_elements).astype("<f2").tobytes()
    if ttype == BF16:
        return (rng.standard_normal(n_elements).astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    elements, size, scales = LAYOUT[ttype]
    blocks = rng.integers(0, 256, size=(n_elements // elements, size), dtype=np.uint8)
    for at in scales:
        scale = (rng.standard_normal(len(blocks)) * 0.05).astype("<f2")
        blocks[:, at:at + 2] = scale.view(np.uint8).reshape(-1, 2)
    return blocks.tobytes()


def tiny_llama(types, seed, vocab=320, hidden=256, heads=4, kv_heads=2, ffn=512, tied=False):
    """A one-layer Llama GGUF; `types` maps a GGUF tensor role ("token_embd", "attn_q", ..., "output",
    "attn_norm") to a ggml type. Returns the Writer."""
    rng = np.random.default_rng(seed)
    w = Writer()
    w.add("general.architecture", STRING, "llama")
    w.add("general.name", STRING, "tiny test llama")
    for key, value in (("block_count", 1), ("context_length", 512), ("embedding_length", hidden),
                       ("feed_forward_length", ffn), ("attention.head_count", heads),
                       ("attention.head_count_kv", kv_heads), ("vocab_size", vocab)):
        w.add("llama." + key, UINT32, value)
    w.add("llama.rope.freq_base", FLOAT32, 10000.0)
    w.add("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5)
    w.add("tokenizer.ggml.bos_token_id", UINT32, 1)
    w.add("tokenizer.ggml.eos_token_id", UINT32, 2)
    head_dim = hidden // heads
    shapes = {"token_embd": [hidden, vocab], "output_norm": [hidden], "output": [hidden, vocab],
              "attn_norm": [hidden], "attn_q": [hidden, heads * head_dim], "attn_k": [hidden, kv_heads * head_dim],
              "attn_v": [hidden, kv_heads * head_dim], "attn_output": [heads * head_dim, hidden],
              "ffn_norm": [hidden], "ffn_gate": [hidden, ffn], "ffn_up": [hidden, ffn], "ffn_down": [ffn, hidden]}
    for role, dims in shapes.items():
        if role == "output" and tied:
            continue
        name = (role if role in ("token_embd", "output_norm", "output") else "blk.0." + role) + ".weight"
        ttype = types.get(role, F32)
        w.add_tensor(name, dims, ttype, random_blocks(rng, ttype, int(np.prod(dims))))
    return w
