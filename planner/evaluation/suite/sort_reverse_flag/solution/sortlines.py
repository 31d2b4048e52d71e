import argparse
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the lines of a file, sorted.")
    parser.add_argument("file", type=Path)
    parser.add_argument("--reverse", action="store_true", help="descending order")
    args = parser.parse_args(argv)
    for line in sorted(args.file.read_text().splitlines(), reverse=args.reverse):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
