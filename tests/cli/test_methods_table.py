#!/usr/bin/env python3
"""The README's methods table is `kvsearch methods --markdown`, row for row: a method registered
without its README line (or a line left for a method that is gone) fails here.

Env: KVSEARCH_BIN. Exit status 0 = pass.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from kvs_testing import check, finish, must  # noqa: E402

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def main():
    table = must("methods", "--markdown").strip().splitlines()
    check(len(table) > 3, f"`kvsearch methods --markdown` printed {len(table)} lines")
    with open(README, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index(table[0]) if table[0] in lines else -1
    check(start >= 0, f"README.md has no line {table[0]!r}")
    readme = lines[start:start + len(table)] if start >= 0 else []
    for ours, theirs in zip(table, readme):
        check(ours == theirs, f"README.md has {theirs!r} where `kvsearch methods --markdown` prints {ours!r}")
    after = lines[start + len(table)] if 0 <= start and start + len(table) < len(lines) else ""
    check(not after.startswith("|"), f"README.md's table has a row the registry lacks: {after!r}")
    finish(passed=f"README.md's methods table equals the registry's {len(table) - 2} methods")


if __name__ == "__main__":
    main()
