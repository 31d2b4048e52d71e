"""The issue's own script as its test: a short script in a code block that prints what it
computes (`print(f(3))`), the output the issue shows for it, and the value it says it expected
become a pytest file, with no model call, as transcript.py does for a `>>>` session.

Users report a bug as often with the script they ran as with a session:

    ```python
    from shapes import area
    print(area(3))
    ```
    It prints `6`, but I expected `9`.

or with the traceback the script ended in, where a value was expected ("should return `8000`
instead"). What is read, from the issue's text alone:
- the script: a code block of Python that calls something and is no `>>>` session (the body
  of an `if __name__ == "__main__":` guard counts as top-level); the first one a test can be
  built from;
- its output: the next code block after it, unless that is code (the lines it printed, then
  perhaps a traceback; a `$ python show.py` line is the command, not output), or else the
  comment at the end of each print call's line (`print(area(3))  # 6`), or else the
  backticked spans of the prose the words before them call printed ("it prints `6`", "I get
  `6`", "the output is `6`"). A traceback names the statement that raised by its line (the
  last frame in `<module>`); without one, the script's last statement raised. Only the
  statements up to it ran;
- the printed lines go to the print calls that ran: one line each when there are as many, or
  all of them to the only one;
- the expected values: transcript.expected_groups(), less the spans called printed.

Each statement becomes an interpreter example of what it showed, so the values pair with them
by transcript.py's rules (in_order(), then pair()) and the test file is transcript.py's: one
test function per pair replays the script up to that statement and checks it. A check of
`print(x)` is a check of `x` (the value, or what str() makes of it: print shows no quotes);
a check of a statement that raised, `port = get("port", 8000)`, is a check of its value, which
it cannot give while it raises.

The script is the issue's text, written by anyone: it is replayed only under transcript.py's
rule (confined()): `import os; os.system(...)`, `open(...)` or `__import__` in it and the model
writes the test instead.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from planner.model.file_blocks import Block, code_blocks
from planner.verification.reproduction.transcript import (
    EXPECTING,
    MAX_TEST_BYTES,
    SENTENCE_END,
    SPAN,
    confined,
    example_test_file,
    expected_groups,
    in_order,
    pair,
    prose,
)

SCRIPT_LANGUAGES = ("", "python", "py", "python3")
OUTPUT_LANGUAGES = (
    *SCRIPT_LANGUAGES,
    *("text", "txt", "console", "output", "out", "pytb", "plain", "plaintext"),
)
"""A script's output block: plain, or labelled as output (or as Python: users do)."""
PRINTED = re.compile(
    r"(?:\b(?:prints|printed|outputs|displays|shows|gives|gave|returns|returned|got)"
    r"|\b(?:I|we|you|it) get|(?<!expected )(?<!correct )(?<!right )\b(?:output|result) (?:is|was))"
    r"\s*:?\s*$",
    re.IGNORECASE,
)
"""The words before a span that say the script printed it (what the user got)."""
SHOWN_COMMENT = re.compile(r"^\s*#\s*(?:->|=>|prints:?|output:?|gives:?)?\s*(\S.*)$")
"""A comment after a print call that says what it printed."""
TRACEBACK = "Traceback (most recent call last):"
MODULE_FRAME = re.compile(r'^\s*File "[^"\n]*", line \d+, in <module>\s*$')
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?::.*)?$")


@dataclass(frozen=True)
class Output:
    """What the script showed: the lines its print calls wrote, and the exception line and
    the script's line that raised it when it ended in a traceback."""

    printed: list[str]
    exception: str | None = None
    raised_at: str | None = None


def script_test(issue_body: str, workspace: Path) -> str | None:
    """A pytest file built from the issue's script, the output it shows and the values it
    says it expected; None when the issue shows no such script or states no expected value
    that belongs to one of its statements."""
    groups = expected_groups(issue_body, reported=PRINTED)
    expected = list(dict.fromkeys(value for group in groups for value in group))
    if not expected:
        return None
    blocks = code_blocks(issue_body)
    for index, block in enumerate(blocks):
        statements = script_statements(block)
        if statements is None:
            continue
        source = "\n".join(statements)
        if not confined(source, workspace):
            continue  # the model writes the test, under its own rules
        output = _output_block(blocks[index + 1 :]) or _shown_in_comments(block)
        output = output or _printed_in_prose(issue_body)
        examples = script_examples(statements, output)
        checks = in_order(examples, groups) or pair(examples, expected)
        test = example_test_file(examples, checks, workspace) if checks else ""
        if test and len(test.encode()) <= MAX_TEST_BYTES:
            return test
    return None


def script_statements(block: Block) -> list[str] | None:
    """The top-level statements of a script block as written (a `__main__` guard's body in
    its place); None when the block is no Python script: a `>>>` session, code that does not
    parse, or code that calls nothing (values, definitions only)."""
    if block.language not in SCRIPT_LANGUAGES:
        return None
    text = "\n".join(block.lines)
    if ">>>" in text or not text.strip():
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    nodes = _unguarded(tree.body)
    if not any(_prints(node) for node in nodes) and not _calls(nodes):
        return None
    statements = [(ast.get_source_segment(text, node), node.col_offset) for node in nodes]
    if any(statement is None for statement, _ in statements):
        return None
    return [_dedented(statement or "", indent) for statement, indent in statements]


def _unguarded(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements with an `if __name__ == "__main__":` guard replaced by its body: the
    guard is how scripts are written, and only it names a dunder."""
    nodes: list[ast.stmt] = []
    for node in body:
        nodes += node.body if _main_guard(node) else [node]  # type: ignore[attr-defined]
    return nodes


def _main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
        and isinstance(test.ops[0], ast.Eq)
    )


def _prints(node: ast.stmt) -> bool:
    """`node` is a statement `print(...)`."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "print"
    )


def _calls(nodes: list[ast.stmt]) -> bool:
    """Some statement calls something: a script that may raise without printing."""
    return any(isinstance(inner, ast.Call) for node in nodes for inner in ast.walk(node))


def _dedented(statement: str, indent: int) -> str:
    """A statement without the `indent` its later lines have beyond the first (a guard's
    body): an `except:` of a `try:` must line up with it when the statement is replayed."""
    lines = statement.splitlines()
    later = [line[indent:] if line[:indent].isspace() else line for line in lines[1:]]
    return "\n".join([lines[0], *later])


def _output_block(blocks: list[Block]) -> Output | None:
    """The output the code block after the script shows (blocks in another language, a
    shell command, are passed over); None when the next block is code, not output."""
    for block in blocks:
        if block.language not in OUTPUT_LANGUAGES:
            continue
        lines = [line.rstrip() for line in block.lines if not line.startswith("$ ")]
        text = "\n".join(lines)
        if not text.strip():
            continue
        if ">>>" in text or (TRACEBACK not in text and _code(text)):
            return None  # another script (the fixed one, a second example), not output
        return parse_output(lines)
    return None


def _code(text: str) -> bool:
    """`text` reads as statements, not as printed values: it imports, assigns, defines or
    prints. A printed repr may read as a call (`Point(x=1, y=2)`), never as a statement."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(not isinstance(node, ast.Expr) or _prints(node) for node in tree.body)


def parse_output(lines: list[str]) -> Output:
    """The printed lines and, after them, the traceback's exception and the script's line it
    names last (leading and trailing blank lines dropped)."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    headers = [number for number, line in enumerate(lines) if line.strip() == TRACEBACK]
    if not headers:
        return Output(printed=_trimmed(lines))
    start = headers[0]
    printed, traceback = _trimmed(lines[:start]), lines[start + 1 :]
    return Output(printed=printed, exception=_exception(traceback), raised_at=_raised_at(traceback))


def _raised_at(traceback: list[str]) -> str | None:
    """The script's line under the traceback's last frame in `<module>`; None when no such
    frame shows its line (a script fed to `python -` shows none)."""
    raised_at = None
    for line, following in itertools.pairwise(traceback):
        if not MODULE_FRAME.match(line):
            continue
        code = following.strip()
        shown = following.startswith(" ") and code and not code.startswith('File "')
        raised_at = code if shown else None
    return raised_at


def _exception(traceback: list[str]) -> str | None:
    """The traceback's last line that names an exception, at the start of its line: what an
    IDE or a shell adds after it ("Process finished with exit code 1") is not."""
    for line in reversed(traceback):
        if line.strip() and not line[0].isspace() and EXCEPTION.match(line.strip()):
            return line.strip()
    return None


def _trimmed(lines: list[str]) -> list[str]:
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    return lines[start:]


def _shown_in_comments(block: Block) -> Output | None:
    """What each print call printed, from the comment at the end of its line
    (`print(mean([1, 2]))  # 1`, `# -> 1`, `# prints 1`); None unless every print call of
    the script has one. A comment that says what was expected is no output."""
    text = "\n".join(block.lines)
    lines = text.splitlines()
    nodes = _unguarded(ast.parse(text).body)
    printed: list[str] = []
    for node in nodes:
        if not _prints(node) or node.end_lineno is None or node.end_col_offset is None:
            continue
        comment = SHOWN_COMMENT.match(lines[node.end_lineno - 1][node.end_col_offset :])
        if comment is None or EXPECTING.search(comment.group(1)):
            return None
        printed.append(comment.group(1).strip())
    return Output(printed=printed) if printed else None


def _printed_in_prose(issue_body: str) -> Output | None:
    """The spans the prose calls printed ("it prints `6`"), in order; None when none is."""
    printed: list[str] = []
    for sentence in SENTENCE_END.split(prose(issue_body)):
        for span in SPAN.finditer(sentence):
            if PRINTED.search(sentence[: span.start()]):
                printed.append(span.group(1))
    return Output(printed=printed) if printed else None


def script_examples(statements: list[str], output: Output | None) -> list[doctest.Example]:
    """The statements that ran, each as an interpreter example of what it showed: a print
    call the lines it wrote, the statement that raised its exception."""
    shown = output or Output(printed=[])
    ran = statements
    if shown.exception is not None:
        raised = _raising(statements, shown)
        if raised is None:
            return []
        ran = statements[: raised + 1]
    wants = _printed_by(ran, shown)
    examples = [
        doctest.Example(statement, want) for statement, want in zip(ran, wants, strict=True)
    ]
    if shown.exception is not None:
        examples[-1] = doctest.Example(ran[-1], shown.exception, exc_msg=shown.exception)
    return examples


def _raising(statements: list[str], output: Output) -> int | None:
    """The index of the statement that raised: the one holding the line the traceback shows
    last in the script, or else the last statement."""
    if output.raised_at is None:
        return len(statements) - 1
    for index, statement in enumerate(statements):
        if output.raised_at in (line.strip() for line in statement.splitlines()):
            return index
    return None


def _printed_by(ran: list[str], output: Output) -> list[str]:
    """For each statement that ran, what it printed: one line for each print call when the
    output has as many lines, all of it for the only one; nothing when it cannot be told."""
    wants = ["" for _ in ran]
    last = len(ran) - 1 if output.exception is not None else len(ran)
    printing = [i for i, statement in enumerate(ran[:last]) if _prints_statement(statement)]
    if len(printing) == len(output.printed):
        for index, line in zip(printing, output.printed, strict=True):
            wants[index] = line
    elif len(printing) == 1 and output.printed:
        wants[printing[0]] = "\n".join(output.printed)
    return wants


def _prints_statement(statement: str) -> bool:
    try:
        tree = ast.parse(statement)
    except SyntaxError:
        return False
    return len(tree.body) == 1 and _prints(tree.body[0])
