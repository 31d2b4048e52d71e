"""What the entry point says to the CI system: log lines, workflow commands, outputs.

GitHub reads commands from the step's output (`::add-mask::`, `::group::`, `::error::`) and
outputs from the file named by $GITHUB_OUTPUT; GitLab folds log sections marked with ANSI
`section_start`/`section_end` lines and passes variables on through a dotenv report.

Standard library only: this runs before the skip decision, which must stay fast.
"""

from __future__ import annotations

import logging
import re
import time
import traceback
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from planner.text.redaction import RedactingFilter, redact

PREFIX = "planner: "
DOTENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def escape_data(text: str) -> str:
    """A workflow command's message: the runner turns %25, %0D and %0A back into characters."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class Console:
    """Lines for the job log, with the platform's commands for masks, groups and annotations."""

    def __init__(self, stream: TextIO, platform: str) -> None:
        self.stream = stream
        self.github = platform == "github"
        self.sections = 0

    def line(self, text: str) -> None:
        """One line as given, every known secret redacted: for commands this module writes."""
        self._write(redact(text))

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def say(self, text: str) -> None:
        """A message, every line of it prefixed (no line of it can pass for a command)."""
        for part in LINE_BREAK.split(text):
            self.line(PREFIX + part)

    def text(self, text: str) -> None:
        """Free text (a summary, a traceback): a line that would read as a command is prefixed."""
        for part in LINE_BREAK.split(text):
            self.line(PREFIX + part if part.lstrip().startswith("::") else part)

    def mask(self, secrets: Iterable[str]) -> None:
        """GitHub replaces these values by *** in the log from here on (GitLab masks variables)."""
        if not self.github:
            return
        for secret in secrets:
            for part in {secret, *secret.splitlines()}:
                if part.strip():
                    self._write(f"::add-mask::{escape_data(part)}")  # the one unredacted line

    def error(self, message: str, title: str = "planner") -> None:
        if self.github:
            self.line(f"::error title={title}::{escape_data(message)}")
        else:
            self.say(f"error: {message}")

    def warning(self, message: str) -> None:
        if self.github:
            self.line(f"::warning title=planner::{escape_data(message)}")
        else:
            self.say(f"warning: {message}")

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        """A foldable part of the log."""
        self.sections += 1
        name = f"planner_{self.sections}"
        if self.github:
            self.line(f"::group::{escape_data(title)}")
        else:
            heading = " ".join(LINE_BREAK.split(title))
            self.line(f"\x1b[0Ksection_start:{int(time.time())}:{name}\r\x1b[0K{heading}")
        try:
            yield
        finally:
            if self.github:
                self.line("::endgroup::")
            else:
                self.line(f"\x1b[0Ksection_end:{int(time.time())}:{name}\r\x1b[0K")


class ConsoleHandler(logging.Handler):
    """planner's log records as log lines; warnings and errors also as GitHub annotations."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                message += f": {record.exc_info[1]}"
            if record.levelno >= logging.ERROR:
                self.console.error(message)
            elif record.levelno >= logging.WARNING:
                self.console.warning(message)
            else:
                self.console.say(message)
            if record.exc_info and record.levelno >= logging.ERROR:
                self.console.text("".join(traceback.format_exception(*record.exc_info)).rstrip())
        except Exception:  # a log line must never end the run
            self.handleError(record)


def setup_logging(console: Console) -> None:
    """planner's own INFO messages; other libraries only from WARNING up."""
    handler = ConsoleHandler(console)
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("planner").setLevel(logging.INFO)


# -- outputs ---------------------------------------------------------------------------------


def write_github_outputs(path: Path, values: Mapping[str, str]) -> None:
    """Append NAME<<DELIMITER blocks: safe for any value, newlines included."""
    with path.open("a", encoding="utf-8") as stream:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{uuid.uuid4()}"
            stream.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def write_dotenv(path: Path, values: Mapping[str, str]) -> None:
    """A GitLab dotenv report: one NAME=value per line (GitLab takes no multi-line values)."""
    lines = []
    for name, value in values.items():
        if not DOTENV_NAME.match(name):
            raise ValueError(f"{name!r} is not a dotenv variable name")
        lines.append(f"{name}={' '.join(value.split())}")
    if path.is_symlink():  # planted in the checkout by a tool: root would write through it
        path.unlink()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def append_text(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)
