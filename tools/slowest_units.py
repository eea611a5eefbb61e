#!/usr/bin/env python3
"""The slowest translation units of a build, from its .ninja_log.

    tools/slowest_units.py BUILD_DIR [COUNT]     (default COUNT 10)

Prints the build's span (first start to last end of the latest build in the log), the summed
compile time of all object files, and the COUNT slowest object files with their seconds.
"""
import sys
from pathlib import Path


def latest_entries(log_path):
    """Per output, its latest (start_ms, end_ms); ninja appends one line per build step."""
    entries = {}
    lines = Path(log_path).read_text().splitlines()
    if not lines or not lines[0].startswith("# ninja log v"):
        sys.exit(f"{log_path}: not a ninja log")
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 5:
            sys.exit(f"{log_path}:{number}: expected 5 tab-separated fields, got {len(fields)}")
        start, end, _, output, _ = fields
        entries[output] = (int(start), int(end))
    return entries


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    entries = latest_entries(Path(sys.argv[1]) / ".ninja_log")
    objects = {o: (s, e) for o, (s, e) in entries.items() if o.endswith(".o")}
    if not objects:
        sys.exit(f"{sys.argv[1]}: no object files in the log")
    span = (max(e for _, e in entries.values()) - min(s for s, _ in entries.values())) / 1000
    total = sum(e - s for s, e in objects.values()) / 1000
    print(f"span {span:.1f} s, {len(objects)} object files, {total:.1f} s of compiling in all")
    slowest = sorted(objects.items(), key=lambda item: item[1][1] - item[1][0], reverse=True)
    for output, (start, end) in slowest[:count]:
        name = output.split("CMakeFiles/")[-1].split("/", 1)[-1].removesuffix(".o")
        print(f"{(end - start) / 1000:7.1f} s  {name}")


if __name__ == "__main__":
    main()
