#!/usr/bin/env python3
"""The documentation's table of the action's inputs and outputs, generated from action.yml.

    python3 scripts/action_docs.py                    # print the tables
    python3 scripts/action_docs.py --write FILE...    # replace the tables between the markers
    python3 scripts/action_docs.py --check FILE...    # exit 1 when a file's tables differ

The tables sit between `<!-- action-docs:start -->` and `<!-- action-docs:end -->`, so the
documentation cannot drift from action.yml (tests/test_ship_files.py runs --check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
START = "<!-- action-docs:start -->"
END = "<!-- action-docs:end -->"


def default_documents() -> list[Path]:
    """docs/github.md: the one place the action's inputs are documented."""
    return [ROOT / "docs" / "github.md"]


def load_action(path: Path = ACTION) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise ValueError(f"{path} does not hold a mapping")
    return document


def cell(text: object) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    return f"`{cell(text)}`" if str(text) != "" else '`""`'


def render_tables(action: dict[str, Any]) -> str:
    lines = ["| Input | Default | Description |", "| --- | --- | --- |"]
    for name, spec in (action.get("inputs") or {}).items():
        default = spec.get("default", "")
        lines.append(f"| `{name}` | {code(default)} | {cell(spec.get('description', ''))} |")
    lines += ["", "| Output | Description |", "| --- | --- |"]
    for name, spec in (action.get("outputs") or {}).items():
        lines.append(f"| `{name}` | {cell(spec.get('description', ''))} |")
    return "\n".join(lines)


def replace_section(text: str, tables: str, where: str) -> str:
    """`text` with the part between the markers replaced by `tables`."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"{where} needs exactly one {START} ... {END} section")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{tables}\n{END}{tail}"


def stale_documents(paths: list[Path], action: dict[str, Any]) -> list[str]:
    """A message for every document whose tables differ from action.yml."""
    tables = render_tables(action)
    problems = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if replace_section(text, tables, str(path)) != text:
            problems.append(f"{path}: the inputs/outputs table differs from action.yml")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if a file's tables are stale")
    mode.add_argument("--write", action="store_true", help="rewrite the tables in the files")
    parser.add_argument("files", nargs="*", type=Path, help="default: docs/github.md")
    parser.add_argument("--action", type=Path, default=ACTION, help="default: action.yml")
    args = parser.parse_args(argv)
    action = load_action(args.action)
    files = args.files or default_documents()
    if args.check:
        problems = stale_documents(files, action)
        for problem in problems:
            print(f"{problem} (run: python3 scripts/action_docs.py --write)", file=sys.stderr)
        return 1 if problems else 0
    if args.write:
        for path in files:
            text = path.read_text(encoding="utf-8")
            path.write_text(replace_section(text, render_tables(action), str(path)), "utf-8")
        return 0
    print(render_tables(action))
    return 0


if __name__ == "__main__":
    sys.exit(main())
