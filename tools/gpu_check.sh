#!/usr/bin/env bash
# The one prepared GPU check (run where a GPU machine is lent; under 8 minutes on one H100):
#   1. builds with CUDA (build-gpu/),
#   2. runs the GPU tests: the CUDA kernels (window statistics, greedy admission) and every
#      registered method's ATen path on the GPU against the CPU path (tests/evict/test_kernels_gpu),
#      and the runner's CUDA tests where there are any (ctest -L gpu or names with gpu/cuda),
#   3. prints `kvsearch bench runner` at Mistral-7B's shapes (random weights, fp16).
# On a machine without a GPU it says so and exits 0. Usage: tools/gpu_check.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check}}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_check: no GPU here (nvidia-smi finds none): nothing to check"
  exit 0
fi
mkdir -p "$out"
start=$(date +%s)
stamp() { echo "gpu_check: $1 at $(( $(date +%s) - start )) s"; }
nvidia-smi -L | tee "$out/gpu.txt"
git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/commit /' | tee -a "$out/gpu.txt" || true

make build BUILD_DIR=build-gpu JOBS="$(nproc)" 2>&1 | tail -n 5 | tee "$out/build.txt"
stamp "built"
(cd build-gpu && ctest --output-on-failure --timeout 300 -R 'gpu|cuda|Gpu|Cuda') 2>&1 \
  | tee "$out/gpu_tests.txt"
stamp "GPU tests done"

# Mistral-7B's shapes (32 layers, hidden 4096, 32/8 heads, intermediate 14336, vocab 32768) with
# random fp16 weights, written by transformers (a test oracle on this machine, never a runtime
# dependency) straight on the GPU.
model="$out/mistral-7b-random"
if [ ! -f "$model/config.json" ]; then
  python3 - "$model" <<'PY'
import sys, torch, transformers
config = transformers.MistralConfig(vocab_size=32768, hidden_size=4096, intermediate_size=14336,
                                    num_hidden_layers=32, num_attention_heads=32,
                                    num_key_value_heads=8, max_position_embeddings=32768,
                                    rope_theta=1e6, sliding_window=None)
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.MistralForCausalLM(config).to(torch.float16)
model.save_pretrained(sys.argv[1], safe_serialization=True, max_shard_size="4GB")
PY
fi
stamp "random Mistral-7B written"
./build-gpu/kvsearch bench runner --model "$model" --device cuda --dtype f16 \
  --prompt-tokens 1024,4096 --new-tokens 32 --repeats 3 2>&1 | tee "$out/bench_runner.txt"
stamp "done"
