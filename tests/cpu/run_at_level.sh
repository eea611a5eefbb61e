#!/usr/bin/env bash
# run_at_level.sh LEVEL BINARY [ARGS...]: runs a test binary with KVS_CPU=LEVEL, or exits 77
# (CTest's "skipped") when this CPU lacks the level.
set -euo pipefail
level="$1"
shift
flags="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
has() { [[ " $flags " == *" $1 "* ]]; }
case "$level" in
  scalar) ;;
  avx2) has avx2 && has fma || { echo "no AVX2/FMA on this CPU"; exit 77; } ;;
  avx512) has avx512f && has avx2 && has fma || { echo "no AVX-512F on this CPU"; exit 77; } ;;
  *) echo "run_at_level.sh: unknown level '$level'" >&2; exit 2 ;;
esac
KVS_CPU="$level" exec "$@"
