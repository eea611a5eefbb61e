#!/usr/bin/env python3
"""Rewrites README.md's methods table from the registry: `kvsearch methods --markdown`, row for
row (tests/cli/test_methods_table.py checks the two agree). Run after adding or changing a method:

    tools/update_readme_methods.py [BIN]          BIN defaults to build/kvsearch
"""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
README = os.path.join(ROOT, "README.md")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "kvsearch")
    table = subprocess.run([binary, "methods", "--markdown"], check=True, capture_output=True,
                           text=True).stdout.strip().splitlines()
    with open(README, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if table[0] not in lines:
        sys.exit(f"README.md: no line {table[0]!r} to start the methods table at")
    start = lines.index(table[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines[start:end] = table
    with open(README, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"README.md: the methods table has {len(table) - 2} methods")


if __name__ == "__main__":
    main()
