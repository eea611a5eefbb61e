#!/usr/bin/env bash
# `make demo`: the paper's study on a real model, through the commands a Mistral-7B run uses.
# SmolLM2-135M-Instruct (the GGUF file `make setup` installs) on RULER tasks generated at 1k tokens
# (seed 42), then experiments/demo.json as batch jobs: full cache, SnapKV, PyramidKV, Global and
# three peers (StreamingLLM, KeyDiff, R-KV) at B = 32, 64, 128, a Segments(3) and a Curve search
# at B = 128 with the test replay of every accepted state, the searched profiles transferred to
# the other budgets, the report (tables with intervals, noise floor, figures) and Global's paired
# comparison with each baseline. Rerunning resumes: finished jobs are skipped, an interrupted
# search continues state by state.
#
#   tools/demo.sh [BIN] [OUT] [MODEL]      defaults: build/kvsearch results/demo smollm2-135m
set -euo pipefail
bin="${1:-build/kvsearch}"
out="${2:-results/demo}"
model="${3:-smollm2-135m}"
spec="$(dirname "$0")/../experiments/demo.json"
start=$(date +%s)

mkdir -p "$out"
"$bin" data ruler --model "$model" --out "$out/ruler" --lengths 1024 --count 124 --seed 42 \
  --max-new-tokens 32 --tasks niah_single_1 niah_single_2 | { grep -v '^note' || true; }
echo
echo "== the plan: about 7 minutes on 2 CPU cores (measured: docs/performance.md); the ETA follows each finished job"
"$bin" experiment plan "$spec" --longbench "$out/ruler"
echo
"$bin" experiment run "$spec" --model "$model" --longbench "$out/ruler" --out "$out/experiment"
"$bin" report "$spec" --db "$out/experiment/results.sqlite" --longbench "$out/ruler" --out "$out/report" \
  | { grep -v '^wrote ' || true; }  # keep only notes (figures skipped), not the file list

echo
# The tables exactly as `kvsearch report` wrote them from the database.
for table in table1 table2 table3 table4 noise; do
  cat "$out/report/$table.md"
  echo
done
# The paper's Global against each baseline and peer at B = 128, paired on the same test questions.
for other in SnapKV PyramidKV StreamingLLM KeyDiff R-KV; do
  "$bin" compare --db "$out/experiment/results.sqlite" --a Global --b "$other" --budget 128
  echo
done
echo "report: $out/report/README.md (tables *.md, *.csv; figures fig1a_profiles.svg, fig1b_trajectory.svg, fig1c_budgets.svg)"
echo "database: $out/experiment/results.sqlite (kvsearch runs --db ...; kvsearch show --db ... --run ID)"
echo "demo finished in $(( $(date +%s) - start )) s"
