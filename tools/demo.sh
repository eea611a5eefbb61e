#!/usr/bin/env bash
# `make demo`: the eviction study on the embedded default, through the same commands a Mistral-7B
# run uses. Generates the synthetic LongBench-format tasks (seed 42), then on the demo model:
# full cache vs SnapKV vs PyramidKV vs Global at several budgets (one fixed-policy run each, on
# the dev split, scored on test; Global both on PyramidKV's budgets, as the paper runs it, and on
# SnapKV's uniform ones), a Segments search on uniform budgets (dev) and its replay on the test
# split, and a table of everything. All runs land in one SQLite database (resumable: rerunning skips what is
# recorded). Then experiments/demo.json as batch jobs on both tasks and its report: the paper's
# tables and figures, in OUT/report.
#
#   tools/demo.sh [BIN] [OUT] [MODEL]      defaults: build/kvsearch results/demo data/demo/model
# Environment: DEMO_BUDGETS ("16 32 64"), DEMO_DEV (dev questions, 40), DEMO_EVALS (search
# evaluations, 8), DEMO_COUNT (records per task, 200: 100 dev, 100 test), DEMO_DATASET
# (demo_passage_retrieval).
set -euo pipefail
bin="${1:-build/kvsearch}"
out="${2:-results/demo}"
model="${3:-data/demo/model}"
budgets="${DEMO_BUDGETS:-16 32 64}"
dev="${DEMO_DEV:-40}"
evals="${DEMO_EVALS:-8}"
count="${DEMO_COUNT:-200}"
dataset="${DEMO_DATASET:-demo_passage_retrieval}"
db="$out/demo.sqlite"

if [ ! -f "$model/config.json" ]; then
  echo "demo: no model in $model (train one with: $bin demo train --data $out/longbench --out $model)" >&2
  exit 1
fi
mkdir -p "$out"
start=$(date +%s)
"$bin" demo data --out "$out/longbench" --seed 42 --count "$count"
common=(--model "$model" --longbench "$out/longbench" --dataset "$dataset" --db "$db"
        --limit-dev "$dev")

# A budget above every prompt keeps the whole cache: the full-cache reference.
"$bin" run "${common[@]}" --profile baseline --budget 100000 --eval-test
for b in $budgets; do
  for profile in baseline pyramid global; do
    "$bin" run "${common[@]}" --profile "$profile" --budget "$b" --eval-test
  done
  "$bin" run "${common[@]}" --profile global --schedule uniform --budget "$b" --eval-test
done
search_budget="${budgets%% *}"
"$bin" run "${common[@]}" --profile segments --segments 3 --schedule uniform --budget "$search_budget" \
  --evals "$evals" --eval-test
"$bin" replay --db "$db" --run "$(sqlite3 "$db" "SELECT id FROM runs WHERE profile_family = 'segments' ORDER BY id DESC LIMIT 1")"

echo
echo "== $dataset: dev score of each run (its $dev dev questions) and official test score"
sqlite3 -header -column "$db" "
  SELECT runs.budget AS budget,
         CASE WHEN runs.budget >= 100000 THEN 'full cache'
              ELSE CASE runs.profile_family WHEN 'baseline' THEN 'SnapKV' WHEN 'pyramid' THEN 'PyramidKV'
                   WHEN 'global' THEN 'Global' WHEN 'segments' THEN 'Segments(' || runs.segments || ')'
                   ELSE runs.profile_family END END AS policy,
         CASE WHEN runs.budget >= 100000 THEN '' ELSE json_extract(runs.policy_json, '$.schedule') END AS budgets,
         printf('%.2f', max(states.best_so_far)) AS dev,
         (SELECT printf('%.2f', replays.official_score) FROM replays JOIN states s ON s.id = replays.state_id
           WHERE s.run_id = runs.id ORDER BY s.eval_order DESC LIMIT 1) AS test,
         count(states.id) AS states
    FROM runs JOIN states ON states.run_id = runs.id
   GROUP BY runs.id ORDER BY runs.budget DESC, runs.id"

echo
echo "== the paper's tables and figures on both demo tasks (experiments/demo.json)"
spec="$(dirname "$0")/../experiments/demo.json"
"$bin" experiment run "$spec" --model "$model" --longbench "$out/longbench" --out "$out/experiment" | tail -n 2
"$bin" report "$spec" --db "$out/experiment/results.sqlite" --longbench "$out/longbench" --out "$out/report" \
  | { grep -v '^wrote ' || true; }  # keep only notes (figures skipped), not the file list

echo
echo "database: $db (sqlite3 $db '.tables'; kvsearch runs --db $db; kvsearch show --db $db --run ID)"
echo "report: $out/report/README.md (tables *.md, *.csv; figures *.png), from $out/experiment/results.sqlite"
echo "demo finished in $(( $(date +%s) - start )) s"
