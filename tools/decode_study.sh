#!/usr/bin/env bash
# A first decode-time study (results/example-decoding/HOW.md): bounded-cache perplexity over a
# long text and fidelity to the full cache on its own continuation, every policy on one shared
# decode, at three cache targets. Usage: tools/decode_study.sh BINARY OUT_DIR
# Text: Debian's GPL-2 followed by GPL-3 (/usr/share/common-licenses, package base-files).
set -euo pipefail
bin=$(realpath "$1"); out=$2; threads=${THREADS:-2}
mkdir -p "$out/policies"
text="$out/text.txt"
cat /usr/share/common-licenses/GPL-2 /usr/share/common-licenses/GPL-3 > "$text"
ppl_tokens=${PPL_TOKENS:-2048}; prompt_tokens=${PROMPT_TOKENS:-512}; new_tokens=${NEW_TOKENS:-512}
# Blocks: the units of the paired comparisons (tools/decode_study_report.py runs kvsearch compare
# over them): 32 blocks of 64 predicted tokens, 16 blocks of 32 fidelity steps.
ppl_block=${PPL_BLOCK:-64}; fid_block=${FID_BLOCK:-32}
for target in 128 256 512; do
  dir="$out/policies/$target"; mkdir -p "$dir"
  one='"interval": 1, "target": '$target', "buffer": 1'
  every='"interval": 32, "target": '$target', "buffer": 32'
  echo '{"method": "streaming_llm", "n_sink": 4, "name": "streaming_llm", "decoding": {'"$one"'}}' > "$dir/01.json"
  echo '{"method": "streaming_llm", "n_sink": 0, "name": "window only", "decoding": {'"$one"'}}' > "$dir/02.json"
  echo '{"method": "tova", "decoding": {'"$one"'}}' > "$dir/03.json"
  echo '{"method": "h2o", "decoding": {'"$one"'}}' > "$dir/04.json"
  echo '{"method": "knorm", "decoding": {'"$every"'}}' > "$dir/05.json"
  echo '{"method": "keydiff", "decoding": {'"$every"'}}' > "$dir/06.json"
  echo '{"method": "expected_attention", "decoding": {'"$every"'}}' > "$dir/07.json"
  echo '{"method": "snapkv", "granularity": "kv_head", "window": 32, "decoding": {'"$every"'}}' > "$dir/08.json"
  echo '{"method": "diverse", "name": "global", "granularity": "kv_head", "window": 32, "lambda2": {"profile": "global", "a": [-0.15]}, "decoding": {'"$every"'}}' > "$dir/09.json"
  echo '{"method": "r_kv", "budget": '$target', "decoding": {"divide_length": 128, "target": '$target', "buffer": 8}}' > "$dir/10.json"
  echo '{"method": "random", "decoding": {'"$every"'}}' > "$dir/11.json"
  policies=(); for f in "$dir"/*.json; do policies+=(--policy "$f"); done
  "$bin" --threads "$threads" perplexity --model smollm2-135m --text "$text" --max-tokens "$ppl_tokens" --block "$ppl_block" \
      --full-cache "${policies[@]}" --json > "$out/perplexity-$target.json"
  "$bin" --threads "$threads" fidelity --model smollm2-135m --text "$text" --prompt-tokens "$prompt_tokens" \
      --new-tokens "$new_tokens" --block "$fid_block" "${policies[@]}" --json > "$out/fidelity-$target.json"
  echo "target $target done"
done
