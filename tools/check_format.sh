#!/usr/bin/env bash
# check_format.sh [BASE]: the C++ lines changed since BASE (default: the commit before HEAD) must
# be as clang-format (.clang-format) writes them. Only changed lines are judged, so a commit never
# has to reformat code it did not touch. CI runs it (`make format-check`); `git clang-format BASE`
# fixes what it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-HEAD~1}"
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "check_format: no commit $base to compare with; nothing to check"
  exit 0
fi
diff="$(git clang-format --quiet --diff --extensions cpp,h,cu,cuh "$base" -- src tests kernels \
  2>&1 || true)"
if [ -n "$diff" ] && [ "$diff" != "no modified files to format" ] &&
   [ "$diff" != "clang-format did not modify any files" ]; then
  echo "$diff"
  echo "check_format: the lines above differ from clang-format's; run: git clang-format $base"
  exit 1
fi
echo "check_format: changed C++ lines since $base are formatted"
