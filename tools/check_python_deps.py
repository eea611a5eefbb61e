"""Exit 0 when every requirement in the given requirements file is installed at a matching version.

Used by tools/bootstrap.sh so that a machine with everything present skips pip entirely.
"""
import sys
from importlib import metadata


def satisfied(line: str) -> bool:
    for op in ("==", ">="):
        if op in line:
            name, wanted = (part.strip() for part in line.split(op, 1))
            break
    else:
        name, op, wanted = line.strip(), None, None
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    if op == "==":
        return have.split("+")[0] == wanted
    if op == ">=":
        as_tuple = lambda v: tuple(int(x) for x in v.split("+")[0].split(".")[:3] if x.isdigit())
        return as_tuple(have) >= as_tuple(wanted)
    return True


def main() -> int:
    with open(sys.argv[1]) as f:
        lines = [l.split("#")[0].strip() for l in f]
    missing = [l for l in lines if l and not satisfied(l)]
    for l in missing:
        print(f"missing: {l}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
