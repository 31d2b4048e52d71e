import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print a greeting.")
    parser.add_argument("--name", default="world", help="who to greet")
    parser.add_argument("--shout", action="store_true", help="print in capitals")
    args = parser.parse_args(argv)
    text = f"Hello, {args.name}!"
    print(text.upper() if args.shout else text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
