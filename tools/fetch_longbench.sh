#!/usr/bin/env bash
# Fetches LongBench (v1) for kvsearch: the official data archive from Hugging Face and the two
# config files from the official repository, laid out as kvsearch reads them:
#   DIR/data/<dataset>.jsonl, DIR/data/<dataset>_e.jsonl, DIR/config/dataset2{prompt,maxlen}.json
# Prints the SHA-256 of everything it fetched. Needs internet, curl (or wget) and unzip (or python3).
# Usage: tools/fetch_longbench.sh DIR        then: kvsearch data check --longbench DIR
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir="$1"
DATA_URL="${LONGBENCH_DATA_URL:-https://huggingface.co/datasets/THUDM/LongBench/resolve/main/data.zip}"
CONFIG_URL="${LONGBENCH_CONFIG_URL:-https://raw.githubusercontent.com/THUDM/LongBench/main/LongBench/config}"
# The config files kvsearch was checked against (the golden scores and the tests).
declare -A KNOWN_SHA256=(
  [dataset2prompt.json]=56d22ad4f382169c2b8a11ff4c982a4a1bea096c8152b0f0b85b64686b157c30
  [dataset2maxlen.json]=72966b3c0933e214591637fb085798c5e687ebff4ddaab5d99bbc31120532022
)

fetch() {  # url output
  if command -v curl >/dev/null; then
    curl -fL --retry 3 -o "$2" "$1"
  elif command -v wget >/dev/null; then
    wget -q -O "$2" "$1"
  else
    echo "fetch_longbench: neither curl nor wget is installed" >&2
    exit 1
  fi
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$dir/data" "$dir/config"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch_longbench: $DATA_URL"
fetch "$DATA_URL" "$tmp/data.zip"
echo "  sha256 $(sha256 "$tmp/data.zip")  data.zip"
if command -v unzip >/dev/null; then
  unzip -q "$tmp/data.zip" -d "$tmp/unpacked"
else
  python3 -m zipfile -e "$tmp/data.zip" "$tmp/unpacked"
fi
count=0
while IFS= read -r -d '' f; do
  mv "$f" "$dir/data/"
  count=$((count + 1))
done < <(find "$tmp/unpacked" -name '*.jsonl' -print0)
if [ "$count" -eq 0 ]; then
  echo "fetch_longbench: the archive holds no .jsonl file" >&2
  exit 1
fi
echo "  $count data files in $dir/data"

for name in dataset2prompt.json dataset2maxlen.json; do
  fetch "$CONFIG_URL/$name" "$dir/config/$name"
  sum="$(sha256 "$dir/config/$name")"
  echo "  sha256 $sum  config/$name"
  if [ "$sum" != "${KNOWN_SHA256[$name]}" ]; then
    echo "  warning: config/$name differs from the version kvsearch was tested with" >&2
  fi
done
(cd "$dir/data" && sha256sum ./*.jsonl | sed 's|  \./|  data/|; s|^|  sha256 |')
echo "fetch_longbench: done; check it with: kvsearch data check --longbench $dir"
