"""Tool names a model invents: mapped when the intent is unambiguous, refused precisely
otherwise (the refusal names the closest real tools and what each does)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

RUN_COMMAND = "run_command"
READ_ONLY_TOOLS = frozenset({"read_file", "list_directory", "search_files"})
"""Built-in tools that only read: the exploration's tools, never gated, never a change."""
WRITE_TOOLS = frozenset({"write_file", "edit_file"})
"""Built-in tools that change files."""
COMMAND_LIKE = re.compile(
    r"(^|_)(run|test|tests|pytest|exec|execute|shell|bash|sh|command|cmd|make|npm|build|lint|"
    r"compile|unittest)(_|$)|\.py$|^test_",
    re.IGNORECASE,
)
"""Names a model gives a tool it wishes ran a program (run_tests, pytest, test_utils.py)."""
NO_COMMANDS = "no command may be run; read and edit files, the tests run in CI"


def path_argument(arguments: Mapping[str, object]) -> str:
    """The path a file tool's call names, as the tools read it (`./a.py` is `a.py`)."""
    path = arguments.get("path")
    return path.strip().removeprefix("./") if isinstance(path, str) else ""


def canonical_tool(name: str, available: Mapping[str, str]) -> str | None:
    """The real tool a name means when only spelling differs (`functions.read_file`,
    `Read-File`, `read_file()`), else None."""
    wanted = _normalised(name)
    matches = [tool for tool in available if _normalised(tool) == wanted]
    return matches[0] if len(matches) == 1 else None


def unknown_tool_problem(name: str, available: Mapping[str, str]) -> str:
    """Why `name` cannot be used and what to use instead, in one sentence for the model."""
    if RUN_COMMAND not in available and COMMAND_LIKE.search(name):
        return f"there is no tool {name!r}: {NO_COMMANDS}"
    if RUN_COMMAND in available and COMMAND_LIKE.search(name):
        return f"there is no tool {name!r}; run programs with {_described(RUN_COMMAND, available)}"
    closest = difflib.get_close_matches(name, list(available), n=3, cutoff=0.3)
    closest = closest or sorted(available)[:3]
    options = "; ".join(_described(tool, available) for tool in closest)
    return f"there is no tool {name!r}; the closest tools are {options}"


def _described(tool: str, available: Mapping[str, str]) -> str:
    description = available.get(tool, "").strip()
    return f"{tool} ({description})" if description else tool


def _normalised(name: str) -> str:
    bare = name.strip().removeprefix("functions.").removesuffix("()")
    return re.sub(r"[\s\-]+", "_", bare).lower()
