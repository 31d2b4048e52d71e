"""What a change to documents alone cannot prove, and what it must keep.

An issue asked for a new command-line option and a README line for it; the model changed only
the README, which then described behaviour the code did not have, and the pass ended
`completed` (the test of the issue was dropped and nothing ran). An issue that asks for
behaviour is never proven by a documentation change: where no test of the issue judges the
change, the command the issue shows must run (commands.py) or a person looks.

An issue asks for behaviour when its text shows a traceback or an interpreter session (`>>>`),
says what something should do ("should print", "expected output"), names an option (`--count`)
or a function (`parse()`) the repository's code does not have yet, or shows a command of a script
it does not have. A command, an option or a function the code already has is no request for
behaviour by itself: "add a Usage section showing `python greet.py --name Ada`" and "document
`--verbose` in the README" are documentation tasks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from planner.tools.files.document_edits import QUOTED, SHOWN, is_document, removed_lines
from planner.tools.files.paths import read_in_tree

COMMAND = re.compile(
    r"^\s*\$\s+\S|(?:^|`)\s*(?:python3?(?:\.\d+)?\s+(?:-m\s+[\w.]+|[\w./-]+\.py)|\./[\w.-]+)",
    re.MULTILINE,
)
"""A command line: a `$ ` prompt, or an interpreter or script run, in a block or inline code."""
SESSION = re.compile(r"^\s*>>>\s", re.MULTILINE)
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b")
FUNCTION = re.compile(r"`(?:[\w.]+\.)?([A-Za-z_]\w*)\([^`]*\)`")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
SHOULD = re.compile(
    r"\b(?:should|must|ought to|is supposed to)\s+(?:now\s+|also\s+|instead\s+)?"
    r"(?:return|print|output|raise|accept|support|exit|produce|yield|parse|handle|count|"
    r"not (?:crash|fail|raise))\b"
    r"|\bexpected (?:output|result|value|behaviou?r)\b|\binstead of (?:returning|"
    r"printing|raising)\b",
    re.IGNORECASE,
)
MAX_FILE_BYTES = 1_000_000
"""Larger files are not searched for a name the issue uses."""


def behaviour_asked(text: str, workspace: Path, files: Iterable[str]) -> str:
    """Why the issue's text asks for behaviour ("" when it does not): what it shows or says.
    `files` are the repository's files, searched for the options and functions it names."""
    if TRACEBACK.search(text):
        return "it shows a traceback"
    said = SHOULD.search(text)
    if said:
        return f"it says what should happen (“{said.group(0)}”)"
    if SESSION.search(text):
        return "it shows an interpreter session (`>>>`)"
    for command in _commands(text):
        script = next((word for word in command.split()[1:] if word.endswith(".py")), "")
        if script and not (workspace / script).is_file():
            return f"it shows a command to run (`{command[:QUOTED]}`) of a script still to write"
    names = [*OPTION.findall(text), *(f"{name}(" for name in FUNCTION.findall(text))]
    missing = _not_in_code(names, workspace, files)
    if missing:
        return f"it names `{missing[0].rstrip('(')}`, which the code does not have yet"
    return ""


def _commands(text: str) -> list[str]:
    """The command lines the text shows (a `$ ` prompt dropped), each up to its line's end or
    the end of its inline code."""
    found = []
    for match in COMMAND.finditer(text):
        line = text[match.start() :].strip(" `").splitlines()[0].split("`")[0]
        found.append(line.strip().removeprefix("$").strip())
    return found


def documents_only(paths: list[str]) -> bool:
    """The change touched files, and every one of them is documentation."""
    return bool(paths) and all(is_document(path) for path in paths)


def lost_lines(texts: dict[str, tuple[str, str]], issue_text: str) -> str:
    """Documents whose lines the change removed though the issue did not ask to change them,
    as "README.md (`# tool`; `## Usage`)"; "" when every document keeps its other content.
    `texts`: each changed file's text before and after the change."""
    lost = []
    for path, (before, after) in texts.items():
        removed = removed_lines(path, before, after, issue_text)
        if removed:
            quoted = "; ".join(f"`{line[:QUOTED]}`" for line in removed[:SHOWN])
            more = f" and {len(removed) - SHOWN} more" if len(removed) > SHOWN else ""
            lost.append(f"{path} ({quoted}{more})")
    return ", ".join(lost)


def _not_in_code(names: list[str], workspace: Path, files: Iterable[str]) -> list[str]:
    """Of `names`, those no file of the repository other than its documents holds."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return []
    for path in files:
        if is_document(path) or not wanted:
            continue
        full = workspace / path
        if not full.is_file() or full.is_symlink() or full.stat().st_size > MAX_FILE_BYTES:
            continue
        data = read_in_tree(workspace, path)
        text = data.decode("utf-8", errors="replace") if data is not None else ""
        wanted = [name for name in wanted if not _defines(name, text)]
    return wanted


def _defines(name: str, text: str) -> bool:
    """`text` has the option (`--count`), or defines the function (`parse(`)."""
    if name.endswith("("):
        return re.search(rf"\bdef {re.escape(name[:-1])}\s*\(", text) is not None
    return name in text
