#!/usr/bin/env bash
# `make demo` until the trained demo model ships (issue 6): the runner on a random-weight
# checkpoint in the real Hugging Face layout, end to end: write it, generate from it, benchmark it.
set -euo pipefail
bin="${1:-build/kvsearch}"
out="${2:-results/demo}"
mkdir -p "$out"
"$bin" make-model --out "$out/tiny" --preset tiny --seed 0
echo "== greedy generation from token ids (random weights: the ids, not the text, are the point)"
"$bin" generate --model "$out/tiny" --token-ids 1,415,2936,9060,285,1142 --max-new-tokens 8 --json
"$bin" make-model --out "$out/small" --preset small --seed 0
echo "== runner speed on the small preset, next to this machine's sgemm peak and bandwidth"
"$bin" bench runner --model "$out/small" --prompt-tokens 1024 --new-tokens 16 --repeats 2
