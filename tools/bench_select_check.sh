#!/usr/bin/env bash
# The kept sets of `kvsearch bench select`'s inputs, layer by layer and for both of its policies,
# through `kvsearch select` with two builds: identical output means a change to the eviction
# path (e.g. a faster window statistics) selected exactly what the other build selected.
#   tools/bench_select_check.sh OLD_KVSEARCH NEW_KVSEARCH [bench select options, e.g. --tokens 15600]
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_KVSEARCH NEW_KVSEARCH [bench select options]" >&2
  exit 2
fi
old=$1 new=$2
shift 2
layers=32
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[i]} == --layers ]] && layers=${args[i + 1]}
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$new" bench select "$@" --save-inputs "$work/inputs"
status=0
for policy in baseline diverse; do
  for ((layer = 0; layer < layers; ++layer)); do
    for side in old new; do
      bin=$old
      [[ $side == new ]] && bin=$new
      "$bin" --threads 2 select --tensors "$work/inputs/tensors.safetensors" \
        --policy "$work/inputs/$policy.json" --layer "$layer" --num-layers "$layers" \
        --out "$work/$side.json" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
    done
    if ! cmp -s "$work/old.json" "$work/new.json"; then
      echo "$policy layer $layer: kept sets differ" >&2
      status=1
    fi
  done
done
[[ $status == 0 ]] && echo "kept sets identical: $layers layers x {baseline, diverse}"
exit $status
