"""The issue's own command-line example as its test: `python3 tool.py --count notes.txt`, shown
in a code block or as inline code, with the output the issue shows or says it expects, becomes a
pytest file that runs it, with no model call.

In a small repository without tests, an issue asking for a new command-line option ended
`completed` after the model changed only the README: the test the model wrote for it was
dropped, and nothing ran. The command the issue shows is the check a maintainer would run: it
must exit 0 and print what the issue says it prints.

What is built, from the issue's text alone:
- a command is a line of a shell block (```sh, ```console, a bare fence; a `$ ` prompt is
  dropped) or an inline span that runs the repository's own Python code: `python`/`python3`
  with a script of the repository or `-m` one of its modules, then plain arguments;
- the lines a `$ `-prompted command is shown printing are what it should print; where the
  prose says what it expected (`should print \\`3\\``, "expected `3`") and there is one command,
  those values are what it should print instead (a shown output may be the bug);
- an argument naming a file must name a file of the repository (it is copied next to the run);
  a placeholder (`FILE`, `<path>`), a path outside the repository or shell syntax (pipes,
  redirections, substitutions, globs) leaves the command out: it is no runnable check.

Each command runs in a folder of its own with the repository on PYTHONPATH, so what it writes
stays out of the checkout. The file then goes through the same path as any issue test: it runs
on the code before the change, and only its checks that fail there are kept (phase.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from planner.model.file_blocks import code_blocks
from planner.verification.reproduction.transcript import expected_values, prose

SHELL_LANGUAGES = frozenset({"", "sh", "bash", "shell", "console", "shell-session", "zsh", "text"})
"""Code blocks whose lines may be commands."""
PROMPT = re.compile(r"^\s*[$%]\s+")
"""A shell prompt in front of a command (what follows until the next prompt is its output)."""
INTERPRETER = re.compile(r"^python(3(\.\d{1,2})?)?$")
SHELL_SYNTAX = re.compile(r"[|&;<>$`\\(){}*?~!]")
"""Characters with a meaning to a shell: the command is not run through one, so a command
holding them is not the one the issue shows."""
PLACEHOLDER = re.compile(r"^(<[^>]*>|\[[^\]]*\]|[A-Z][A-Z_]{1,}(\.\.\.)?|\.\.\.|…)$")
"""`FILE`, `<path>`, `[options]`, `...`: a word that stands for a value, not a value."""
PATH_LIKE = re.compile(r"/|^[^-=][\w.-]*\.[A-Za-z]\w{0,5}$")
"""An argument naming a file: a path, or a name with a suffix (`notes.txt`)."""
INLINE = re.compile(r"`([^`\n]+)`")
MAX_COMMANDS = 5
TIMEOUT_SECONDS = 120
"""Each command's own limit inside the test (the run of the test has the verification's)."""


@dataclass(frozen=True)
class CommandExample:
    """One command the issue shows, and what it should print."""

    arguments: tuple[str, ...]
    """After the interpreter: the script (a path of the repository) or `-m module`, then the
    arguments as the issue writes them."""
    inputs: tuple[str, ...]
    """Arguments that are files of the repository: copied next to the run."""
    output: tuple[str, ...]
    """Text it should print, each in its output (spaces normalised)."""


def command_examples(text: str, workspace: Path) -> list[CommandExample]:
    """The runnable commands the issue shows, in order, each once."""
    found: list[CommandExample] = []
    for block in code_blocks(text):
        if block.language in SHELL_LANGUAGES:
            found += _from_block(block.lines, workspace)
    for span in INLINE.findall(prose(text)):
        example = _example(span, (), workspace)
        if example is not None:
            found.append(example)
    unique: list[CommandExample] = []
    for example in found:
        if all(example.arguments != other.arguments for other in unique):
            unique.append(example)
    stated = [
        value
        for value in expected_values(text)
        if value not in _words(unique) and not _runs_python(value)
    ]
    if len(unique) == 1 and stated:
        unique = [CommandExample(unique[0].arguments, unique[0].inputs, tuple(stated))]
    return unique[:MAX_COMMANDS]


def command_test(text: str, workspace: Path, path: str) -> str | None:
    """A pytest file at `path` running the commands the issue shows (None: it shows none
    that can run)."""
    examples = command_examples(text, workspace)
    if not examples:
        return None
    depth = len(PurePosixPath(path).parts) - 1
    functions = [_function(example, number) for number, example in enumerate(examples, 1)]
    return HEADER.format(depth=depth, timeout=TIMEOUT_SECONDS) + "\n\n\n".join(functions) + "\n"


HEADER = '''"""The command the issue shows, run as it shows it, with what it should print."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[{depth}]


def _run(arguments, inputs, folder):
    """The command in a folder of its own, with the repository's files it names beside it."""
    for name in inputs:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, folder / name)
    path = os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    environment = {{**os.environ, "PYTHONPATH": path}}
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout={timeout},
    )


def _shown(done):
    return " ".join((done.stdout + done.stderr).split())


'''


def _function(example: CommandExample, number: int) -> str:
    arguments = list(example.arguments)
    script = "" if arguments[0] == "-m" else arguments.pop(0)
    first = f"str(ROOT / {script!r}), " if script else ""
    lines = [
        f"def test_issue_command_{number}(tmp_path):",
        f"    done = _run([{first}{', '.join(map(repr, arguments))}], "
        f"{list(example.inputs)!r}, tmp_path)",
        "    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]",
    ]
    lines += [f"    assert {' '.join(text.split())!r} in _shown(done)" for text in example.output]
    return "\n".join(lines)


def _from_block(lines: list[str], workspace: Path) -> list[CommandExample]:
    """The commands of a shell block, each with the lines a prompted one is shown printing."""
    found: list[CommandExample] = []
    command, prompted = "", False
    output: list[str] = []
    for line in [*lines, "$ "]:  # the end of the block ends the last command's output
        if PROMPT.match(line) or _runs_python(line):
            if command:
                shown = tuple(text.strip() for text in output if text.strip()) if prompted else ()
                example = _example(command, shown, workspace)
                found += [example] if example is not None else []
            command, prompted, output = PROMPT.sub("", line).strip(), bool(PROMPT.match(line)), []
        elif command:
            output.append(line)
    return found


def _runs_python(line: str) -> bool:
    words = line.split()
    return bool(words) and INTERPRETER.match(words[0]) is not None


def _example(command: str, output: tuple[str, ...], workspace: Path) -> CommandExample | None:
    """The command as a check, when it runs the repository's Python code with plain
    arguments; None otherwise."""
    if SHELL_SYNTAX.search(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2 or not INTERPRETER.match(words[0]):
        return None
    if words[1] == "-m":
        if len(words) < 3 or not _repository_module(words[2], workspace):
            return None
        rest = words[3:]
    elif _repository_file(words[1], workspace) and words[1].endswith(".py"):
        rest = words[2:]
    else:
        return None
    inputs = []
    for word in rest:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if PLACEHOLDER.match(value):
            return None
        if value.startswith("-") or not PATH_LIKE.search(value) or _number(value):
            continue
        if not _repository_file(value, workspace):
            return None  # a file the user has, not the repository: no check can run it
        inputs.append(value)
    return CommandExample(tuple(words[1:]), tuple(inputs), output)


def _repository_file(name: str, workspace: Path) -> bool:
    """`name` is a plain file inside the repository, reached through no link."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return False
    current = workspace
    for part in path.parts:
        current = current / part
        if current.is_symlink():
            return False
    return current.is_file()


def _repository_module(name: str, workspace: Path) -> bool:
    """`name` (`tool`, `pkg.cli`) is a module or package of the repository, at its root or
    under src/."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return False
    for folder in ("", "src/"):
        base = folder + "/".join(parts)
        for candidate in (f"{base}.py", f"{base}/__init__.py", f"{base}/__main__.py"):
            if _repository_file(candidate, workspace):
                return True
    return False


def _number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _words(examples: list[CommandExample]) -> set[str]:
    """The words of the commands themselves: a value the prose quotes from the command is
    its input, not its output."""
    return {word for example in examples for word in example.arguments}
