"""Validation and risk of one ActionSpec (plan-tool.md "Validation/Preflight", "Approval/Safety").

Paths go through the tools' PathPolicy, so a spec can never touch what a tool could not. The risk
table is one function, `classify`, so the policy reads in one place:

| spec                                                         | risk   |
|--------------------------------------------------------------|--------|
| delete                                                       | high   |
| overwrite of a file of at least `large_file_bytes` (a write   | high   |
| keeping 90% of its lines in order is an edit of it)          |        |
| a CI definition (only reachable with allow_workflow_edits)   | high   |
| a command outside tools.allowed_commands (also refused)      | high   |
| planner's own config (also refused: it is write-protected)   | high   |
| the effect of a command or MCP call that is high by this table | high |
| write over an existing file; an allowed command; MCP tools   | medium |
| create or write of a file an allowed command runs as code     | medium |
| (conftest.py, setup.py, Makefile, package.json, *.pth, tests) |        |
| create, mkdir, read, analyze                                 | low    |

What a command or an MCP call changed in the working tree is classified by the same table
(planner.approval.effects): each changed file as the write, create or delete it amounts to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from planner.approval.models import ActionSpecExt, Preflight, Risk
from planner.approval.preview import diff_summary
from planner.config import ApprovalConfig
from planner.text.line_diff import kept_lines
from planner.tools.files.paths import CI_DEFINITIONS, PathPolicy, PathRefused, read_in_tree

RUNS_AS_CODE_NAMES = frozenset(
    {
        "conftest.py", "setup.py", "setup.cfg", "pyproject.toml", "pytest.ini", "tox.ini",
        "noxfile.py", "sitecustomize.py", "usercustomize.py", "makefile", "gnumakefile",
        "package.json", ".npmrc",
    }
)  # fmt: skip
"""Files test runners, build tools and the interpreter load as code without being named."""
RUNS_AS_CODE_SUFFIXES = (".pth", ".mk")

WRITING_KINDS = frozenset({"create", "write", "mkdir", "delete"})
PATH_KINDS = WRITING_KINDS | {"read"}


@dataclass(frozen=True)
class SpecRules:
    """What validation needs to know about the workspace."""

    policy: PathPolicy
    config: ApprovalConfig
    command_allowed: Callable[[str], bool] = lambda command: False
    config_paths: tuple[Path, ...] = ()
    runs_commands: bool = False
    """Some command is allowed: a file it would run as code is at least that command's risk."""


def validate(spec: ActionSpecExt, rules: SpecRules) -> ActionSpecExt:
    """The spec normalised, with validated, notes, preflight and risk filled in."""
    checked = spec.model_copy(deep=True)
    checked.notes, checked.validated = [], True
    resolved = _resolved(checked, rules)
    if resolved is not None:
        checked.path = PurePosixPath(resolved.relative_to(rules.policy.root)).as_posix()
        checked.preflight = preflight(checked, rules.policy.root)
        if checked.kind in ("create", "write"):  # named for what it does to the file now
            checked.kind = "write" if checked.preflight.exists else "create"
    _check_limits(checked, rules)
    checked.risk = classify(checked, resolved, rules)
    if checked.risk == "high" and checked.validated:
        checked.notes.append(f"high risk: {_high_reason(checked, resolved, rules)}")
    return checked


def _resolved(spec: ActionSpecExt, rules: SpecRules) -> Path | None:
    if spec.kind not in PATH_KINDS:
        return None
    try:
        return rules.policy.resolve(spec.path, for_write=spec.kind in WRITING_KINDS)
    except PathRefused as refusal:
        _refuse(spec, str(refusal))
        return None


def _check_limits(spec: ActionSpecExt, rules: SpecRules) -> None:
    suffix = PurePosixPath(spec.path).suffix.casefold()
    if spec.kind in WRITING_KINDS and suffix in {
        e.casefold() for e in rules.config.forbidden_extensions
    }:
        _refuse(spec, f"refused {spec.path!r}: rule 'forbidden-extension' ({suffix})")
    size = len((spec.content or "").encode("utf-8"))
    if size > rules.config.max_spec_bytes:
        limit = rules.config.max_spec_bytes
        _refuse(spec, f"refused {spec.path!r}: rule 'max-spec-bytes' ({size} > {limit} bytes)")
    if _unlisted_command(spec, rules):
        _refuse(spec, f"refused command {spec.content!r}: rule 'command-allow-list'")


def _unlisted_command(spec: ActionSpecExt, rules: SpecRules) -> bool:
    """A shell command (not an MCP tool, which the maintainer configured) off the allow-list."""
    is_command = spec.invocation is None or spec.invocation.name == "run_command"
    return spec.kind == "run" and is_command and not rules.command_allowed(spec.content or "")


def _refuse(spec: ActionSpecExt, note: str) -> None:
    spec.validated = False
    spec.notes.append(note)


def classify(spec: ActionSpecExt, resolved: Path | None, rules: SpecRules) -> Risk:
    """The risk table of this module's docstring."""
    if _high_reason(spec, resolved, rules):
        return "high"
    if spec.kind == "run" or (spec.kind == "write" and spec.preflight.overwrite):
        return "medium"
    if spec.kind in ("create", "write") and rules.runs_commands and runs_as_code(spec.path):
        return "medium"
    return "low"


def runs_as_code(path: str) -> bool:
    """Whether an allowed command may execute the file without being told to: a test runner's
    conftest.py or test files, setup.py, a Makefile, package.json scripts, a *.pth file."""
    name = PurePosixPath(path).name.casefold()
    if name in RUNS_AS_CODE_NAMES or name.endswith(RUNS_AS_CODE_SUFFIXES):
        return True
    return name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py"))


def _high_reason(spec: ActionSpecExt, resolved: Path | None, rules: SpecRules) -> str:
    if spec.kind == "delete":
        return "deletes a file"
    if _unlisted_command(spec, rules):
        return "a command outside tools.allowed_commands"
    if spec.kind == "run" and spec.preflight.effect_reason:
        return f"its effect {spec.preflight.effect_reason}"
    if spec.kind == "run" or not spec.path:
        return ""
    if not spec.validated and any("protected-path" in note for note in spec.notes):
        return "touches planner's own state or configuration"
    size = _size(resolved) if spec.preflight.overwrite and resolved is not None else 0
    if size and _keeps_most(rules.policy.root, spec.path, spec.content):
        size = 0  # a few lines changed in a large file: an edit of it, not an overwrite
    return path_high_reason(spec.path, resolved, rules, size)


KEPT_SHARE = 0.9
"""A write keeping at least this share of a large file's lines, in order, and adding at most as
many, changes part of it: not the overwrite the large-file rule is about (an edit of one
function in a 150 kB module otherwise waited for a person)."""


def _keeps_most(root: Path, path: str, content: str | None) -> bool:
    found = read_in_tree(root, path) if content is not None else None
    if found is None or content is None:
        return False
    try:
        before = found.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return False
    after = content.splitlines()
    if not before or len(after) > (2 - KEPT_SHARE) * len(before):
        return False
    return kept_lines(before, after) >= KEPT_SHARE * len(before)


def path_high_reason(path: str, resolved: Path | None, rules: SpecRules, before_size: int) -> str:
    """Why changing `path` (a file of `before_size` bytes before; 0: new) is high risk, or ""."""
    parts = tuple(part.casefold() for part in PurePosixPath(path).parts)
    if any(parts[: len(prefix)] == prefix for prefix in CI_DEFINITIONS):
        return "changes a CI definition"
    if resolved is not None and any(resolved == p.resolve() for p in rules.config_paths):
        return "changes planner's own configuration"
    large = rules.config.large_file_bytes
    if before_size >= large:
        return f"overwrites a file of {before_size} bytes (large_file_bytes: {large})"
    return ""


def preflight(spec: ActionSpecExt, root: Path) -> Preflight:
    """What the spec would do to its file (beneath `root`) as it is now, read without
    following links."""
    found = read_in_tree(root, spec.path) if spec.path else None
    exists = found is not None
    before = found or b""
    writes = spec.kind in {"create", "write"}
    return Preflight(
        exists=exists,
        overwrite=exists and writes,
        diff_summary=diff_summary(spec, before) if spec.kind != "read" else "",
        base_sha256=hashlib.sha256(before).hexdigest() if exists else None,
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
