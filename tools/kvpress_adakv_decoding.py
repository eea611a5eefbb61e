#!/usr/bin/env python3
"""What kvpress 0.5.5 does with head-wise budgets while decoding: DecodingPress(AdaKVPress(
KnormPress())) on transformers' conversion of SmolLM2-135M (float32, CPU, SDPA), a 300-token prompt
(Debian's GPL-3 text) and 96 teacher-forced tokens, compression every 16 steps to 128 entries per
KV head (mean over the layer's heads), the last 16 steps' hidden states buffered. Prints, for
layer 0: the entries the cache holds per head, those masked and those attended; how many prompt
keys the cache itself holds overwritten; and how many masked entries are attended again at a later
compression.

AdaKVPress compresses by masking (kvpress's attention patch writes a fake key at each masked index,
in the key tensor the cache holds), so DecodingPress evicts nothing: kvpress is not an oracle for
a head-wise decode-time eviction that frees memory, except where the scores of the entries kept
do not depend on the masked ones (knorm's).

    python3 tools/kvpress_adakv_decoding.py [KVSEARCH_BIN]    # about 1 minute on 1 thread
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))
os.environ.setdefault("KVS_TEST_CACHE", os.path.join(HERE, "..", "build", "test-cache"))

import torch  # noqa: E402
from kvs_testing import smollm2_hf  # noqa: E402
from transformers import DynamicCache  # noqa: E402
from kvpress import AdaKVPress, DecodingPress, KnormPress  # noqa: E402

PROMPT, STEPS, INTERVAL, TARGET = 300, 96, 16, 128


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "kvsearch")
    torch.set_num_threads(1)
    model = smollm2_hf("sdpa")
    text = " ".join(open("/usr/share/common-licenses/GPL-3", encoding="utf-8").read().split())
    ids = json.loads(subprocess.check_output(
        [binary, "tokenize", "--model", "smollm2-135m", "--text", text[:6000], "--json"]))["ids"]
    prompt, teacher = ids[:PROMPT], ids[PROMPT:PROMPT + STEPS]
    press = DecodingPress(base_press=AdaKVPress(KnormPress()), compression_interval=INTERVAL,
                          target_size=TARGET, hidden_states_buffer_size=INTERVAL)
    attention = model.model.layers[0].self_attn
    cache = DynamicCache()
    masked_at = []  # (step, the (head, index) pairs masked by that step's compression)
    with torch.no_grad(), press(model):
        model(torch.tensor([prompt]), past_key_values=cache, use_cache=True)
        original = cache.layers[0].keys[0].clone()  # [kv_heads, n, d] after the prefill
        for step, token in enumerate(teacher, 1):
            model(torch.tensor([[token]]), past_key_values=cache, use_cache=True)
            keys = cache.layers[0].keys[0]
            masked = getattr(attention, "masked_key_indices", None)
            if masked is not None and step % INTERVAL == 0:
                masked_at.append((step, {(int(h), int(i)) for h, i in zip(masked[1], masked[2])}))
            if step in (INTERVAL, INTERVAL + 1, STEPS):
                heads = keys.shape[0]
                per_head = [int((masked[1] == h).sum()) if masked is not None else 0 for h in range(heads)]
                overwritten = int((keys[:, :PROMPT] != original).any(-1).sum())
                print(f"after step {step}: layer 0's cache holds {keys.shape[1]} entries per KV head; "
                      f"masked {per_head}, attended {[keys.shape[1] - m for m in per_head]}; "
                      f"{overwritten} prompt keys in the cache overwritten")
    for (s1, m1), (s2, m2) in zip(masked_at, masked_at[1:]):
        print(f"compressions after steps {s1} and {s2}: {len(m1)} and {len(m2)} (head, entry) pairs "
              f"masked; {len(m1 - m2)} masked at the first are attended again at the second")


if __name__ == "__main__":
    main()
