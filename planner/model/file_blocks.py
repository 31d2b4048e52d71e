"""Files written as code blocks: the edit format small models get right (llm.edit_format).

Asked for search/replace edits, a 1.5B model mostly copies the wrong lines or changes nothing;
asked for the corrected file, it writes the fix far more often (aider's "whole" format for
weak models). A reply without a tool call that holds a code block for a file the prompt showed
whole is that file's new content: the block runs as a `write_file` call, through the same
tools, rules and records as any other call.

The path is the line just above the block (`temperature.py`, `**temperature.py**`,
`### temperature.py:`), or a comment naming it on the block's first line (`# temperature.py`),
or, when the prompt showed one file, the one block of the reply besides a line or two that runs
the tests, or the one keeping most of the file's lines (unless the block or the sentence above
it names another file that exists, or the sentence names a test file); with several files
shown, one block is the one shown file in its language (```markdown: README.md) when it keeps
most of that file's lines. A block for a file of the repository the prompt did not show whole
is not written (the model is told to read it first), a block naming no file is left alone (an
example, a command; with several files shown the model is told to label it), and a block much
shorter than its file is a fragment: refused with a message, never written over the file,
unless it is Python holding only definitions, which are put into the file
(planner.model.definitions). A wrapping block (```python, the path, then the file's own
block), however deep, is unwrapped, and a block inside a ```markdown block needs a language to
nest.

A block for a file the prompt did not show whole is written when the line above it (a path, or
a sentence naming one existing file: "The path to the file is `src/pkg/module.py`.") or its
first-line comment names that file and the block is the file's complete new content (it keeps
most of its lines) or, in Python, new versions of definitions the file has (put in their place:
the file was shown as windows around its definitions, planner.grounding.task_files). The 1.5B
wrote a fix so, twice, and each reply counted as "ended without calling any tool".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from planner.config import TEST_PATHS
from planner.model.definitions import defined_names, merged_definitions
from planner.outcome.evidence import is_test_file

FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+.-]*)\s*$")
DECORATION = re.compile(r"^[\s#>*`_:-]*(?:file(?:name)?\s*:?\s*)?|[\s*`_:]*$", re.IGNORECASE)
COMMENT_NAME = re.compile(r"^\s*(?:#|//|--|<!--)\s*(?:file(?:name)?\s*:?\s*)?(\S+?)\s*(?:-->)?\s*$")
FRAGMENT_SHARE = 0.5
"""A block holding less than this share of its file's lines (of a file of at least
FRAGMENT_MIN_LINES) is a fragment."""
FRAGMENT_MIN_LINES = 8
LANGUAGES: dict[str, frozenset[str]] = {
    "py": frozenset({"python", "py", "python3"}),
    "md": frozenset({"markdown", "md"}),
    "rst": frozenset({"rst", "restructuredtext"}),
    "txt": frozenset({"text", "txt", "plaintext"}),
    "js": frozenset({"javascript", "js"}),
    "ts": frozenset({"typescript", "ts"}),
    "sh": frozenset({"sh", "bash", "shell"}),
    "yml": frozenset({"yaml", "yml"}),
    "yaml": frozenset({"yaml", "yml"}),
    "toml": frozenset({"toml"}),
    "go": frozenset({"go"}),
    "rs": frozenset({"rust", "rs"}),
}
"""A file's extension and the languages a code block for it is labelled with."""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a reply: the text line above it and its lines."""

    label: str
    lines: list[str]
    language: str = ""


@dataclass
class WrittenFiles:
    """What a reply writes: (path, content) pairs, why other blocks were not written, and the
    files whose block is their current content (blank lines and line ends aside)."""

    files: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    parts: set[str] = field(default_factory=set)
    """Files of `files` a block changed only some definitions of, the file not shown whole:
    applied as edit_file edits (planner.model.hunks), not as a write of the whole file."""


def code_blocks(text: str | None) -> list[Block]:
    """The fenced blocks of `text`. A fence with a language inside an open block opens a
    nested one (a README's ```sh example inside ```markdown), so only its own bare fence
    closes the outer block."""
    blocks: list[Block] = []
    lines = (text or "").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        label = _label_above(lines, index - 1)
        indent = len(lines[index]) - len(lines[index].lstrip(" "))
        body, index = _block_body(lines, index + 1, opening.group(1))
        body = [_outdented(line, indent) for line in body]
        blocks.append(Block(label=label, lines=body, language=opening.group(2).lower()))
    return blocks


def _outdented(line: str, indent: int) -> str:
    """A line of a block whose fence is indented, without up to that many leading spaces
    (CommonMark's rule): the 0.5B wrote each file as a numbered list item, its fence and every
    line indented three spaces, and greet.py then failed to parse at its first line."""
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def _block_body(lines: list[str], start: int, fence: str) -> tuple[list[str], int]:
    """The block's lines from `start`, and the index after its closing fence (or the end)."""
    depth, index = 0, start
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match and match.group(1).startswith(fence[0]) and len(match.group(1)) >= len(fence):
            if match.group(2):
                depth += 1
            elif depth == 0:
                return lines[start:index], index + 1
            else:
                depth -= 1
        index += 1
    return lines[start:], index


def _label_above(lines: list[str], index: int) -> str:
    while index >= 0 and not lines[index].strip():
        index -= 1
    return lines[index] if index >= 0 else ""


def holds_code(text: str | None) -> bool:
    """The reply holds a code block that is not a JSON document (not a tool call)."""
    return any(_is_code(block) for block in code_blocks(text))


def _is_code(block: Block) -> bool:
    """A block that is not JSON, nor meant to be: a tool call written as a ```json block, even
    one broken beyond reading, is a call (planner.model.toolcalls asks for it again)."""
    text = "\n".join(block.lines).strip()
    return bool(text) and block.language != "json" and not text.startswith(("{", "["))


def written_files(
    text: str | None,
    shown: Collection[str],
    current: Callable[[str], str | None],
    test_paths: Sequence[str] = TEST_PATHS,
    windows: Collection[str] = (),
) -> WrittenFiles:
    """The files a reply writes as code blocks; `shown` are the files the prompt showed whole,
    `windows` those it showed as windows around definitions, `current(path)` reads a file's
    content now, `test_paths` are verification.test_paths."""
    blocks = [
        inner for block in code_blocks(text) if _is_code(block) for inner in _unwrapped(block)
    ]
    found = WrittenFiles()
    unlabelled = False
    the_one = _the_file_block(blocks, shown, current, test_paths)
    for block in blocks:
        path, lines = _path_of(block, shown, current, alone=block is the_one)
        if path is None:
            path, lines = _not_shown_whole(block, windows, current, alone=block is the_one)
        if path is None:
            why = _not_shown(block, shown, current)
            found.problems += why
            unlabelled = unlabelled or not why
            continue
        before = current(path)
        content, problem = _content(path, lines, before)
        if problem:
            found.problems.append(problem)
        elif _same_code(before, content):
            found.unchanged.append(path)
        else:
            found.files.append((path, content))
            if (
                path not in shown
                and before
                and len(lines) < FRAGMENT_SHARE * len(before.splitlines())
            ):
                found.parts.add(path)
    if unlabelled and len(shown) > 1 and not (found.files or found.problems or found.unchanged):
        found.problems.append(
            "The code block was not written: it names no file. Put the path of the file it is "
            f"for on the line above the block: {', '.join(sorted(shown))}."
        )
    # The 0.5B wrote temperature.py unchanged eleven times in one reply; it is told once.
    found.problems = list(dict.fromkeys(found.problems))
    found.unchanged = list(dict.fromkeys(found.unchanged))
    return found


def _the_file_block(
    blocks: list[Block],
    shown: Collection[str],
    current: Callable[[str], str | None],
    test_paths: Sequence[str],
) -> Block | None:
    """The one block that can be a file shown: the only block but for commands, or, among
    several, the only one that keeps most of a shown file's lines or changes a function it
    defines, and is not that file quoted as it is. The 1.5B wrote stack.py's new class, then
    looped on a `run_tests` snippet until the output limit."""
    candidates = [
        block
        for block in blocks
        if not _command(block) and not _for_another_file(block, shown, current, test_paths)
    ]
    if len(candidates) > 1:
        texts = {path: current(path) or "" for path in shown}
        candidates = [
            block
            for block in candidates
            if any(_changes_file(block, path, text) for path, text in texts.items())
        ]
    return candidates[0] if len(candidates) == 1 else None


def _changes_file(block: Block, path: str, text: str) -> bool:
    """The block keeps most of the file's lines or changes a function it defines, and is not
    the file quoted as it is."""
    rewrites = _keeps_most(block, text) or _redefines(block, path, text)
    return rewrites and not _quotes(block, text)


def _for_another_file(
    block: Block,
    shown: Collection[str],
    current: Callable[[str], str | None],
    test_paths: Sequence[str],
) -> bool:
    """The sentence above the block names a file that is not shown but exists, or a test file
    while no test file is shown: the block is that file, never the one shown. The 1.5B wrote
    "### Updated `tests/test_planner_issue_1.py`" above a test program holding a copy of the
    Stack class, after stack.py quoted unchanged, and the program was written as stack.py."""
    tests_shown = any(is_test_file(path, test_paths) for path in shown)
    for word in _words(DECORATION.sub("", block.label)):
        if not _names_a_file(word) or _shown_path(word, shown):
            continue
        if current(word) is not None or (is_test_file(word, test_paths) and not tests_shown):
            return True
    return False


def _redefines(block: Block, path: str, text: str) -> bool:
    """A Python block defining a function or class the file defines: the file's changed part
    (the 1.5B wrote the fixed `is_leap`, then a test of it, unlabelled)."""
    if _extension(path) != "py":
        return False
    return bool(defined_names("\n".join(block.lines)) & defined_names(text, methods=True))


def _quotes(block: Block, text: str) -> bool:
    """Every line of the block is a line of the file: the file quoted, not changed."""
    lines = {line.strip() for line in text.splitlines()}
    return all(line.strip() in lines for line in block.lines)


COMMAND_LINE = re.compile(
    r"^\s*(\$\s*)?((python3?|pytest|npm|go|cargo|make)\b.*|\w+\([^()]*\))\s*$"
)
"""A line that runs something: `python3 -m pytest -q`, `run_tests()`."""


def _command(block: Block) -> bool:
    """A block of a line or two that runs the tests or calls a tool: the 1.5B followed the
    fixed file with ```python run_tests()```, and the file was then one block of two."""
    lines = [line for line in block.lines if line.strip()]
    shell = block.language in ("sh", "bash", "shell", "console")
    return len(lines) <= 2 and (shell or all(COMMAND_LINE.match(line) for line in lines))


def _not_shown(
    block: Block, shown: Collection[str], current: Callable[[str], str | None]
) -> list[str]:
    """Why a block labelled with a path was not written: a file of the repository the prompt
    did not show whole (its content is unknown to the model: the block is likely a part), or
    a file that does not exist while the prompt showed others."""
    label = DECORATION.sub("", block.label).strip().removeprefix("./")
    if not _names_a_file(label):
        return []
    if current(label) is not None:
        return [
            f"The code block for {label} was not written: the prompt did not show that file "
            "whole. Read it with read_file first, or change it with edit_file."
        ]
    if not shown:
        return []
    return [
        f"The code block for {label} was not written: there is no such file. Put the path of "
        f"the file you change above its block: {', '.join(sorted(shown))}."
    ]


def _not_shown_whole(
    block: Block, windows: Collection[str], current: Callable[[str], str | None], alone: bool
) -> tuple[str | None, list[str]]:
    """The existing file a block not for a file shown whole writes, and its lines: the one file
    its label or first-line comment names (or, for the reply's one block, the one file shown
    as windows), when the block rewrites it whole or redefines some of its definitions; else
    the one file shown as windows whose definitions the block redefines."""
    named = _named_existing(block, current)
    if named is None and alone and len(windows) == 1:
        named = next(iter(windows)), block.lines
    if named is not None and _writes(block, *named, current):
        return named
    owners = [path for path in windows if _redefines(block, path, current(path) or "")]
    if len(owners) == 1:
        # Labelled with another file, or with none: the 1.5B, shown keys.py's `typedkey` as a
        # window, wrote the function under "src/cachetools/__init__.py", which does not have it.
        return owners[0], block.lines
    return None, block.lines


def _writes(
    block: Block, path: str, lines: list[str], current: Callable[[str], str | None]
) -> bool:
    """`lines` rewrite the file at `path` whole or redefine some of its definitions."""
    text = current(path) or ""
    candidate = Block(block.label, lines, block.language)
    whole = len(lines) >= FRAGMENT_SHARE * len(text.splitlines()) and _keeps_most(candidate, text)
    return whole or _redefines(candidate, path, text)


def _named_existing(
    block: Block, current: Callable[[str], str | None]
) -> tuple[str, list[str]] | None:
    """The one existing file the line above the block or its first-line comment names."""
    label = DECORATION.sub("", block.label).strip().removeprefix("./")
    names = [label, *_words(label)]
    comment = COMMENT_NAME.match(block.lines[0]) if block.lines else None
    found = {name for name in names if _exists(name, current)}
    found = {name.strip().removeprefix("./") for name in found}
    if comment and _exists(comment.group(1), current):
        commented = comment.group(1).removeprefix("./")
        if not found or found == {commented}:
            return commented, block.lines[1:]
    return (found.pop(), block.lines) if len(found) == 1 else None


def _unwrapped(block: Block) -> list[Block]:
    """A block that wraps labelled blocks (```python, then `pager.py`, then ```python …) is
    those blocks: the 1.5B wrapped its answer so, once around each of three files, every
    wrapper left open, so each holds the next (the second file was written starting with
    "```python" and refused)."""
    inner = code_blocks("\n".join(block.lines))
    if inner and block.lines and FENCE.match(block.lines[1] if len(block.lines) > 1 else ""):
        return [unwrapped for each in inner for unwrapped in _unwrapped(each)]
    return [block]


def _path_of(
    block: Block, shown: Collection[str], current: Callable[[str], str | None], alone: bool
) -> tuple[str | None, list[str]]:
    """The shown file a block writes, and its lines. One block while one file was shown is
    that file unless it names another file that exists: the 1.5B labels its answer with paths
    it makes up (`eval/stack_peek.py` for stack.py)."""
    label = DECORATION.sub("", block.label)
    labelled = _shown_path(label, shown) or _named_in_sentence(label, shown)
    inside = _path_inside(block.lines, shown)
    if inside and labelled in (None, inside[0]):
        return inside
    if labelled:
        return labelled, block.lines
    named = COMMENT_NAME.match(block.lines[0]) if block.lines else None
    commented = _shown_path(named.group(1), shown) if named else None
    if commented:
        return commented, block.lines[1:]
    names = [label, named.group(1) if named else ""]
    if not alone or any(_exists(name, current) for name in names):
        return None, block.lines
    if len(shown) != 1:
        named_file = any(_names_a_file(name) for name in names)
        return None if named_file else _by_language(block, shown, current), block.lines
    made_up = named is not None and _names_a_file(named.group(1))
    return next(iter(shown)), block.lines[1:] if made_up else block.lines


PREAMBLE_LINES = 3
"""How far into a block a line holding only a shown path is taken as the block's label."""
CONTENT_NOTE = re.compile(
    r"^\s*(#|//|--|<!--)\s*((new|updated|modified|changed|full|complete)\s+)*"
    r"(content|code|file|version)\b[^\n]*$",
    re.IGNORECASE,
)
"""A comment that introduces the content ("# new content")."""


def _path_inside(lines: list[str], shown: Collection[str]) -> tuple[str, list[str]] | None:
    """A shown path on a line of its own among the block's first lines labels the block, and
    what comes before it and the notes after it are not content. The 1.5B wrote stack.py as
    "# path to file", "stack.py", "# new content", then the class, all in one block; written
    as it was, the module failed to import."""
    for index, line in enumerate(lines[:PREAMBLE_LINES]):
        if path := _shown_path(line.strip().strip("`*"), shown):
            rest = lines[index + 1 :]
            while rest and (not rest[0].strip() or CONTENT_NOTE.match(rest[0])):
                rest = rest[1:]
            return path, rest
    return None


def _by_language(
    block: Block, shown: Collection[str], current: Callable[[str], str | None]
) -> str | None:
    """The one shown file in the block's language that the block rewrites: it keeps at least
    half of that file's lines (it is the file rewritten, not a new part of it) or changes a
    function the file defines. The 1.5B answered a Usage section for README.md with one
    unlabelled ```markdown block, README.md and greet.py shown; and a repair of leap_year_trap
    with the fixed `is_leap` alone, calendar_tools.py and its test file shown."""
    paths = [path for path in shown if block.language in LANGUAGES.get(_extension(path), ())]
    rewritten = [
        path
        for path in paths
        if _keeps_most(block, text := current(path) or "") or _redefines(block, path, text)
    ]
    return rewritten[0] if len(rewritten) == 1 else None


def _keeps_most(block: Block, text: str) -> bool:
    """The block keeps at least half of the file's lines (`text`): it is the file rewritten."""
    kept = [line.strip() for line in _significant(text)]
    lines = {line.strip() for line in block.lines}
    return 2 * sum(line in lines for line in kept) >= len(kept)


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _named_in_sentence(label: str, shown: Collection[str]) -> str | None:
    """The one shown file a sentence above a block names ("Here is the new content of
    README.md:", "Here's the corrected content of the `calendar_tools.py` file:"); None when
    it names none or several."""
    words = _words(label)
    named = {path for word in words if (path := _shown_path(word, shown))}
    return named.pop() if len(words) > 1 and len(named) == 1 else None


def _words(sentence: str) -> list[str]:
    """The sentence's words without the quotes and punctuation around a path (`` `a.py`: ``);
    a leading dot stays (`.github/workflows/ci.yml`)."""
    quotes = "`*_:,()'\""
    return [
        word.lstrip(quotes).rstrip(quotes + ".").removeprefix("./") for word in sentence.split()
    ]


def _exists(label: str, current: Callable[[str], str | None]) -> bool:
    label = label.strip().removeprefix("./")
    return _names_a_file(label) and current(label) is not None


def _names_a_file(label: str) -> bool:
    """The label is a path (`NOTES.md`, `src/app.py`), not prose ("Here is the fix:")."""
    return bool(label) and " " not in label.strip() and ("." in label or "/" in label)


def _shown_path(label: str, shown: Collection[str]) -> str | None:
    """The shown file `label` names: its path, or its name when only one shown file has it."""
    label = label.strip().removeprefix("./")
    if label in shown:
        return label
    if " " in label:  # a sentence, not a path: _named_in_sentence reads those
        return None
    name = label.rsplit("/", 1)[-1]  # small models prefix the repository (eval/x/README.md)
    same_name = [path for path in shown if path.rsplit("/", 1)[-1] == name]
    return same_name[0] if len(same_name) == 1 else None


def _same_code(before: str | None, after: str) -> bool:
    """The same lines but for blank lines and spaces at line ends: a rewrite that changes only
    those changes nothing the issue asked for (and is not written over the file's layout)."""
    if before is None:
        return False
    return _significant(before) == _significant(after)


def _significant(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


SCRIPT_WRITE = re.compile(
    r"""\bopen\([^)]*['"]w['"]|^\s*(write_file|finish_task)\(""", re.MULTILINE
)
"""A line of a program that opens a file for writing, or calls a tool to write it or to end the
task (the 1.5B: `path = 'settings.py'`, `new_content = \"\"\"…\"\"\"`, `finish_task(…)`)."""
STRING_START = re.compile(r"""^\s*\w+\s*=\s*(\"\"\"|''')(.*)$""")
"""`new_content = \"\"\"` opening a triple-quoted string."""


def _written_by_script(path: str, lines: list[str], before: str | None) -> list[str] | None:
    """A block that is a program writing the file rather than the file (`file_path = "slug.py"`,
    `new_content = \"\"\"…\"\"\"`, `open(file_path, "w")`: the 1.5B at temperature 0, six times in
    two tasks): the lines of the string it writes. Only when the block names the path in quotes
    and the file itself writes no file, so a real generator script is written as it is."""
    writes = [n for n, line in enumerate(lines) if SCRIPT_WRITE.search(line)]
    quoted = any(f'"{path}"' in line or f"'{path}'" in line for line in lines)
    if not writes or not quoted or SCRIPT_WRITE.search(before or ""):
        return None
    opening = next(
        ((n, m) for n, line in enumerate(lines[: writes[0]]) if (m := STRING_START.match(line))),
        None,
    )
    if opening is None:
        return None
    start, match = opening
    quote = match.group(1)
    ends = [n for n in range(start + 1, writes[0]) if lines[n].rstrip().endswith(quote)]
    if not ends:
        return None
    last = lines[ends[-1]].rstrip()[: -len(quote)]
    first = [match.group(2)] if match.group(2).strip() else []
    return first + lines[start + 1 : ends[-1]] + ([last] if last.strip() else [])


def _content(path: str, lines: list[str], before: str | None) -> tuple[str, str]:
    """The file's new content, or '' and why the block cannot be its whole content."""
    lines = _written_by_script(path, lines, before) or lines
    old_lines = (before or "").splitlines()
    if len(old_lines) >= FRAGMENT_MIN_LINES and len(lines) < FRAGMENT_SHARE * len(old_lines):
        merged = (
            merged_definitions(before or "", "\n".join(lines)) if path.endswith(".py") else None
        )
        if merged is not None:
            return merged, ""
        return "", (
            f"The code block for {path} has {len(lines)} lines and the file has "
            f"{len(old_lines)}: it looks like a part of the file, so it was not written. "
            "Reply with the path and the complete new content of the file, or use edit_file."
        )
    ending = "\n" if (before is None or before.endswith("\n")) and lines else ""
    return "\n".join(lines) + ending, ""
