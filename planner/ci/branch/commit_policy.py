"""The path rules bind the commit, whoever wrote the file.

The built-in tools refuse CI definitions, `.git/`, planner's history and state and its own
config (planner.tools.files.paths), but an allowed command or an MCP server writes with its own
reach (`git log --output=.github/workflows/x.yml`), and a `.gitignore` line such as
`!/planning_history/` un-ignores the history that .git/info/exclude keeps out. So before every
commit the staged changes are checked against the same rules, plus two only a commit has:
symlinks pointing outside the tree (or into `.git`), files holding a secret planner knows, and
a copy of planner's history under another name (recognised by its content, not only its path).
A violating path is unstaged (the index goes back to HEAD for it), so it is never committed or
pushed, and each one is reported with its rule for the tracking comment. Build and cache outputs
(`__pycache__/`, `*.pyc`, `.pytest_cache/`, `node_modules/`:
planner.tools.commands.build_outputs) are unstaged too, whatever `.gitignore` says, without a
note: running the tests leaves them behind.
"""

from __future__ import annotations

import json
import posixpath
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.config import DEFAULT_CONFIG_PATH, PlannerConfig
from planner.core.errors import PlannerError
from planner.text.redaction import SECRETS
from planner.tools.commands.build_outputs import is_build_output
from planner.tools.files.paths import ci_definition, git_segment
from planner.tools.sandbox.safe_env import git_argv

SYMLINK_MODE = "120000"
ZERO_SHA = "0" * 40
MAX_SCANNED_BYTES = 5_000_000
"""Larger blobs are not searched for secrets (a secret is found in the tool output first)."""


class GitRunner:
    """git in the workspace, in bytes: file names need not be UTF-8."""

    def __init__(
        self, root: Path, env: Mapping[str, str], config: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.root, self.env, self.config = root, dict(env), config

    def __call__(self, *args: str, stdin: bytes | None = None) -> bytes:
        argv = git_argv(*args, config=self.config, repository=self.root)
        done = subprocess.run(argv, cwd=self.root, env=self.env, input=stdin, capture_output=True)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise PolicyError(f"git {args[0]} failed while checking the commit: {message}")
        return done.stdout


class PolicyError(PlannerError):
    """The staged changes could not be checked; nothing is committed then."""


@dataclass(frozen=True)
class Refusal:
    path: str
    """The path as git has it (surrogate escapes for bytes that are not UTF-8)."""
    rule: str

    def describe(self) -> str:
        shown = self.path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return f"{shown!r} was not committed (rule {self.rule})"


@dataclass(frozen=True)
class CommitRules:
    """What a commit may contain; paths are relative to the workspace, POSIX style."""

    protected: tuple[str, ...] = (".planner", "planning_history")
    """Never committed: planner's history and its local forge state."""
    config_files: tuple[str, ...] = (DEFAULT_CONFIG_PATH,)
    """planner's own configuration: a pass may not widen the next pass's rights."""
    allow_workflow_edits: bool = False
    scan_secrets: bool = True

    @classmethod
    def for_pass(
        cls, config: PlannerConfig, workspace: Path, extra: tuple[Path, ...] = ()
    ) -> CommitRules:
        history = _relative(Path(config.planning.history.directory), workspace)
        mcp_file = config.tools.mcp_config_file
        files = (DEFAULT_CONFIG_PATH, *([_relative(Path(mcp_file), workspace)] if mcp_file else []))
        protected = (".planner", history, *(_relative(p, workspace) for p in extra))
        return cls(
            protected=tuple(p for p in protected if p),
            config_files=tuple(f for f in files if f),
            allow_workflow_edits=config.tools.allow_workflow_edits,
        )


@dataclass
class StagedEntry:
    path: str
    new_mode: str
    new_sha: str
    status: str


@dataclass
class PolicyCheck:
    rules: CommitRules
    git: GitRunner
    refusals: list[Refusal] = field(default_factory=list)
    blobs: dict[str, str] = field(default_factory=dict)
    """Contents of the staged blobs that are read (symlink targets, files to scan)."""

    def run(self) -> list[Refusal]:
        entries = staged_entries(self.git)
        outputs = [e.path for e in entries if is_build_output(tuple(e.path.split("/")))]
        self.check([e for e in entries if e.path not in set(outputs)])
        if self.refusals or outputs:
            unstage(self.git, [refusal.path for refusal in self.refusals] + outputs)
        return self.refusals

    def check(self, entries: list[StagedEntry]) -> list[Refusal]:
        """The refusals among `entries` (also kept in self.refusals)."""
        self.blobs = read_blobs(self.git, [e.new_sha for e in entries if self._reads(e)])
        for entry in entries:
            rule = self.rule_broken(entry)
            if rule:
                self.refusals.append(Refusal(entry.path, rule))
        return self.refusals

    def _reads(self, entry: StagedEntry) -> bool:
        wanted = (
            entry.new_mode == SYMLINK_MODE
            or (self.rules.scan_secrets and SECRETS.forms())
            or entry.path.rsplit(".", 1)[-1].lower() in HISTORY_SUFFIXES
        )
        return bool(wanted) and entry.status != "D" and entry.new_sha != ZERO_SHA

    def rule_broken(self, entry: StagedEntry) -> str | None:
        parts = tuple(entry.path.split("/"))
        if git_segment(parts):
            return "no-git-dir"
        if not self.rules.allow_workflow_edits and ci_definition(parts):
            return "no-workflow-edits"
        if any(_within(entry.path, guarded) for guarded in self.rules.protected):
            return "protected-path"
        if any(_same(entry.path, config) for config in self.rules.config_files):
            return "protected-config"
        if entry.status == "D":
            return None
        if entry.new_mode == SYMLINK_MODE:
            return "inside-workspace" if self._link_escapes(entry) else None
        if looks_like_history(self.blobs.get(entry.new_sha, "")):
            return "protected-path"
        return "no-secrets" if self._holds_secret(entry) else None

    def _link_escapes(self, entry: StagedEntry) -> bool:
        target = self.blobs.get(entry.new_sha, "/")
        if target.startswith("/") or "\0" in target:
            return True
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(entry.path), target))
        return joined == ".." or joined.startswith("../") or git_segment(tuple(joined.split("/")))

    def _holds_secret(self, entry: StagedEntry) -> bool:
        text = self.blobs.get(entry.new_sha)
        return text is not None and any(form in text for form in SECRETS.forms())


HISTORY_SUFFIXES = frozenset({"jsonl", "json", "ndjson"})
"""Files whose content is read to recognise planner's history under another name."""
HISTORY_KEYS = (
    frozenset({"type", "timestamp", "repository", "issue_id", "run_id"}),  # a history entry
    frozenset({"plan", "state", "revision"}),  # PlanTool's plans/<id>/plan.json
)


def looks_like_history(text: str) -> bool:
    """Whether `text` is (a copy of) planner's history or PlanTool's state: its first JSON
    object, or its first line's, has the keys of one of their records."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    first = stripped.split("\n", 1)[0]
    for candidate in (stripped, first):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        records = value if isinstance(value, list) else [value]
        for record in records[:1]:
            if isinstance(record, dict) and any(keys <= record.keys() for keys in HISTORY_KEYS):
                return True
    return False


def read_blobs(git: GitRunner, shas: list[str]) -> dict[str, str]:
    """The contents of `shas` up to MAX_SCANNED_BYTES each, in two git processes in all
    (`cat-file --batch-check` for the sizes, then `--batch`), whatever the count."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    checked = git("cat-file", "--batch-check", stdin="\n".join(unique).encode() + b"\n")
    small = [
        fields[0].decode()
        for fields in (line.split() for line in checked.splitlines())
        if len(fields) == 3 and fields[2].isdigit() and int(fields[2]) <= MAX_SCANNED_BYTES
    ]
    if not small:
        return {}
    return _parse_batch(git("cat-file", "--batch", stdin="\n".join(small).encode() + b"\n"))


def _parse_batch(output: bytes) -> dict[str, str]:
    """`<sha> <type> <size>\\n<content>\\n`, repeated."""
    blobs: dict[str, str] = {}
    position = 0
    while position < len(output):
        end = output.index(b"\n", position)
        header = output[position:end].split()
        position = end + 1
        if len(header) != 3:  # "<sha> missing"
            continue
        size = int(header[2])
        blobs[header[0].decode()] = output[position : position + size].decode(
            "utf-8", "surrogateescape"
        )
        position += size + 1
    return blobs


def enforce_commit_policy(
    root: Path,
    env: Mapping[str, str],
    rules: CommitRules | None = None,
    config: tuple[tuple[str, str], ...] = (),
) -> list[Refusal]:
    """Unstage every staged change in `root` that breaks `rules` (default: CommitRules());
    the refusals, in path order. `env` is the scrubbed git environment, `config` extra `-c`
    settings (the planted filter drivers switched off)."""
    return PolicyCheck(rules or CommitRules(), GitRunner(root, env, config)).run()


def range_refusals(
    root: Path, env: Mapping[str, str], rules: CommitRules, base: str, head: str = "HEAD"
) -> list[Refusal]:
    """What the whole change `base..head` holds that breaks `rules` (nothing is unstaged)."""
    git = GitRunner(root, env)
    raw = git("diff-tree", "-r", "--raw", "--no-abbrev", "-z", "--no-renames", base, head)
    return PolicyCheck(rules, git).check(_raw_entries(raw))


def staged_entries(git: GitRunner) -> list[StagedEntry]:
    """The index against HEAD: `git diff --cached --raw -z` (renames as delete + add)."""
    raw = git("diff", "--cached", "--raw", "--no-abbrev", "-z", "--no-renames", "--no-ext-diff")
    return _raw_entries(raw)


def _raw_entries(raw: bytes) -> list[StagedEntry]:
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    entries: list[StagedEntry] = []
    for header, path in zip(fields[::2], fields[1::2], strict=False):
        parts = header.lstrip(":").split()
        if len(parts) >= 5:
            entries.append(StagedEntry(path, parts[1], parts[3], parts[4][:1]))
    return entries


def unstage(git: GitRunner, paths: list[str]) -> None:
    """Back to HEAD in the index (a new file leaves it); literal paths, whatever their bytes."""
    git(
        "--literal-pathspecs",
        "reset",
        "-q",
        "HEAD",
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        stdin=b"\0".join(path.encode("utf-8", "surrogateescape") for path in paths),
    )


def _within(path: str, guarded: str) -> bool:
    folded, base = path.casefold(), guarded.casefold().strip("/")
    return folded == base or folded.startswith(base + "/")


def _same(path: str, config: str) -> bool:
    return path.casefold() == config.casefold()


def _relative(path: Path, workspace: Path) -> str:
    if not path.is_absolute():
        return path.as_posix().strip("/")
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return ""
