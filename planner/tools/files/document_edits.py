"""Lines a change removes from a document that the issue did not ask to change.

Asked to add a section to a 7-line README, the 1.5B wrote the whole file back with only the new
section: the title and the usage section were gone. The mass-deletion check
(planner.tools.files.destructive) counts only large deletions in code, so the write went through and
the pass ended `completed`. A document is short and every line of it is content: a line the
change takes out that the issue does not ask to change is a destructive write like any other.

A line counts as kept when the document still has it (anywhere: moved is kept) or when the
change rewrites it in place (a similar line replaces it: a typo fixed, a sentence reworded).
The issue asks for a line to change when it asks to change something (remove, replace,
rewrite, update, …) and names the line: it quotes the line or a backticked part of it, or
names the section the line is in (its heading), or asks for the whole document to be written
anew.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath

from planner.text.line_diff import line_opcodes

DOCUMENT_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc"})
"""Suffixes of documentation files (what a change to docs alone touches)."""
DOCUMENT_NAMES = frozenset(
    {"readme", "changelog", "changes", "history", "news", "authors", "contributing", "todo"}
)
"""Names of documents that often have no suffix (`README`, `CHANGES`)."""
NOT_DOCUMENTS = re.compile(r"^(requirements|constraints)[\w.-]*\.txt$|^cmakelists\.txt$")
"""`.txt` files that are inputs to tools, not documentation."""
SIMILAR = 0.6
"""A new line at least this similar to a removed one rewrites it in place."""
SHOWN = 5
"""Removed lines quoted in a refusal."""
QUOTED = 80
"""Characters of each removed line quoted."""

CHANGING = re.compile(
    r"\b(remove[sd]?|removing|delete[sd]?|deleting|drop(s|ped)?|get rid of|rewrite|rewritten|"
    r"replace[sd]?|instead|update[sd]?|change[sd]?|fix(es|ed)?|correct|reword|rephrase|shorten|"
    r"trim|clean(ed)? up|move[sd]?|rename[sd]?|merge[sd]?|simplif(y|ies)|outdated|obsolete|"
    r"wrong|typo)\b",
    re.IGNORECASE,
)
"""Words of an issue that asks for existing text to change or go."""
WHOLE = re.compile(r"\b(rewrite|rewritten|from scratch|start over|replace (the|its) whole)\b", re.I)
"""Words of an issue that asks for a document to be written anew."""
REMOVING = re.compile(r"\b(remove|delete|drop|get rid of)\b", re.IGNORECASE)
"""Words of an issue that asks for a document to go."""
SPAN = re.compile(r"`([^`\n]{4,})`")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
UNDERLINE = re.compile(r"^\s*([=\-~^\"'`*+#])\1{2,}\s*$")
WORD = re.compile(r"\w")


def is_document(path: str) -> bool:
    """`path` is documentation: a README, a file of docs/ or any Markdown, reStructuredText,
    AsciiDoc or text file (not requirements.txt and the like)."""
    name = PurePosixPath(path).name.lower()
    if NOT_DOCUMENTS.match(name):
        return False
    suffix = PurePosixPath(name).suffix
    if suffix in DOCUMENT_SUFFIXES:
        return True
    return PurePosixPath(name).stem in DOCUMENT_NAMES and suffix in ("", ".txt")


def is_written_for_readers(path: str) -> bool:
    """`path` is documentation people read whole: a document other than a `.txt` file outside
    docs/ (`notes.txt`, `data.txt` are as often a program's input as prose), or a README."""
    if not is_document(path):
        return False
    posix = PurePosixPath(path)
    if posix.suffix.lower() != ".txt" or posix.stem.lower() in DOCUMENT_NAMES:
        return True
    return bool({"docs", "doc"} & {part.lower() for part in posix.parts[:-1]})


def removed_lines(path: str, before: str, after: str, issue_text: str) -> list[str]:
    """The lines of the document `before` (stripped, with words in them) that `after` no
    longer has, neither as they were nor rewritten in place, and that the issue does not ask
    to change; [] for a file that is not documentation people read whole."""
    if not is_written_for_readers(path):
        return []
    if _asks_for_whole(path, issue_text, gone=not after.strip()):
        return []
    old, new = before.splitlines(), after.splitlines()
    kept_anywhere = {line.strip() for line in new}
    headings = _sections(old)
    removed: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal" or tag == "insert":
            continue
        replacing = [line.strip() for line in new[j1:j2]]
        for number in range(i1, i2):
            line = old[number].strip()
            if not WORD.search(line) or line in kept_anywhere:
                continue
            if any(_similar(line, other) for other in replacing):
                continue
            if _asked(line, headings[number], issue_text):
                continue
            removed.append(line)
    return removed


def removal_refusal(path: str, removed: list[str], whole: bool) -> str:
    """What the model is told when its write would remove `removed` from the document."""
    quoted = "; ".join(f"`{line[:QUOTED]}`" for line in removed[:SHOWN])
    more = f" and {len(removed) - SHOWN} more" if len(removed) > SHOWN else ""
    how = (
        "write the file with all of its current lines and only the lines the issue asks for "
        "added or changed"
        if whole
        else "change only the lines the issue asks for with edit_file (to add a section, "
        "oldText a line that stays and newText that line followed by the new ones)"
    )
    return (
        f"not written: this change removes {len(removed)} line(s) of {path} that the issue "
        f"does not ask to change: {quoted}{more}. A change to a document keeps every line the "
        f"issue did not ask to change: {how}."
    )


def _similar(line: str, other: str) -> bool:
    if not other:
        return False
    return difflib.SequenceMatcher(a=line.lower(), b=other.lower()).ratio() >= SIMILAR


def _asks_for_whole(path: str, issue_text: str, gone: bool) -> bool:
    """The issue names this document (`README`) and asks for it to be rewritten, or (when the
    change empties it) to go."""
    if not (WHOLE.search(issue_text) or (gone and REMOVING.search(issue_text))):
        return False
    name = PurePosixPath(path).name
    names = {name.lower(), PurePosixPath(name).stem.lower()}
    words = set(re.findall(r"[\w.-]+", issue_text.lower()))
    return bool(names & words)


def _asked(line: str, heading: str, issue_text: str) -> bool:
    """The issue asks for something to change and names this line (quotes it, or a backticked
    part of it) or the section it is in."""
    if not CHANGING.search(issue_text):
        return False
    text = " ".join(issue_text.lower().split())
    lowered = " ".join(line.lower().split())
    if len(lowered) >= 4 and re.search(rf"(?<!\w){re.escape(lowered)}(?!\w)", text):
        return True
    if any(span.strip().lower() in lowered for span in SPAN.findall(issue_text)):
        return True
    title = " ".join(heading.lower().split())
    return bool(title) and re.search(rf"(?<!\w){re.escape(title)}(?!\w)", text) is not None


def _sections(lines: list[str]) -> list[str]:
    """For each line, the title of the heading it is under ("" before the first): Markdown
    `#` headings and reStructuredText titles (a line underlined with `===`, `---`, …)."""
    titles: list[str] = []
    current = ""
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        marked = HEADING.match(line)
        if marked:
            current = marked.group(1)
        elif line.strip() and WORD.search(line) and UNDERLINE.match(following):
            current = line.strip()
        titles.append(current)
    return titles
