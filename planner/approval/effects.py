"""The effect of a command or MCP call, judged by the approval gate's risk table.

A command that is allowed may still run code the model wrote (a conftest.py, a test file, a
setup.py), so what it did counts, not its name. EffectGuard runs the call between a snapshot and
a comparison of the working tree (planner.tools.commands.effects.TreeWatcher) and classifies every
changed file as the direct file action it amounts to (planner.approval.validation): a deletion,
an overwrite of a file of at least `large_file_bytes`, a change to a CI definition or to
planner's own configuration is high risk. When the effect's risk needs a person, the effect is
rolled back and kept in `pending` for the gate to ask about, with the diff the call produced; a
person's approval runs the call again and keeps its effect only when the changes that needed
them are exactly the ones shown.
When the effect cannot be rolled back, the run ends with EffectNotUndone naming what is left,
and nothing is committed or pushed.

Any caller that runs code on the model's behalf uses it the same way::

    guard = EffectGuard(TreeWatcher(root, skip=...), rules, needs_person)
    result = guard.run(spec, lambda: run_the_command())   # spec: the ActionSpecExt it runs
    for review in guard.take_pending(): ...               # ask a person (ApprovalGate does)
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.approval.models import RISK_ORDER, ActionSpecExt, Risk
from planner.approval.preview import BINARY_NOTE, decoded
from planner.approval.validation import SpecRules, path_high_reason, runs_as_code
from planner.core.errors import PlannerError
from planner.core.interfaces import ToolResult
from planner.tools.commands.effects import Change, RollbackFailed, Snapshot, TreeWatcher

DIFF_FILE_BYTES = 200_000
"""A changed file larger than this is named in the diff with its sizes, not shown line by line."""


class EffectNotUndone(PlannerError):
    """An effect that needs a person could not be rolled back. Not a StopPass on purpose: the
    pass ends without publishing, so nothing of it is committed or pushed."""


@dataclass(frozen=True)
class JudgedChange:
    change: Change
    risk: Risk
    reason: str
    """What makes it high risk ("deletes README.md"), or "" when it is not."""


@dataclass(frozen=True)
class Effect:
    """Everything one call changed, each change with its risk."""

    changes: tuple[JudgedChange, ...]
    diff: str
    digest: str
    """Identifies the changes that need a person (what their approval keeps); changes policy
    lets through (a coverage file with a timestamp) may differ when the call runs again."""

    @property
    def risk(self) -> Risk:
        return max((c.risk for c in self.changes), key=RISK_ORDER.__getitem__, default="low")

    def reason(self) -> str:
        reasons = [c.reason for c in self.changes if c.reason]
        return "; ".join(reasons) or f"changes {len(self.changes)} file(s)"

    def summary(self) -> str:
        counts = {kind: sum(c.change.kind == kind for c in self.changes) for kind in KINDS}
        return "effect: " + ", ".join(f"{n} {KINDS[k]}" for k, n in counts.items() if n)


KINDS = {"create": "created", "write": "changed", "delete": "deleted"}


@dataclass(frozen=True)
class EffectReview:
    """A call whose effect was rolled back and waits for a person."""

    spec: ActionSpecExt
    effect: Effect


@dataclass(frozen=True)
class Stray:
    """A change that needs a person and that no judged call made (a process that outlived its
    call, an MCP server writing later): rolled back, with the content it had written."""

    judged: JudgedChange
    written: bytes | None
    """The content it left (None: it deleted the file, or the content could not be read)."""


@dataclass
class EffectGuard:
    watcher: TreeWatcher
    rules: SpecRules
    needs_person: Callable[[Risk], bool]
    """The gate's policy: whether a spec of this risk waits for a person."""
    pending: list[EffectReview] = field(default_factory=list)
    baseline: Snapshot | None = None
    """The tree as the gate last judged it; None until the pass starts watching."""
    strays: list[Stray] = field(default_factory=list)

    def run(self, spec: ActionSpecExt, call: Callable[[], ToolResult]) -> ToolResult:
        """`call`'s result, or a failed one when its effect was rolled back for a person (or
        when changes made outside any judged call wait for one: then it does not run)."""
        try:
            if self.settle():
                return ToolResult(ok=False, error=STRAY_REFUSAL)
            before = self.baseline or self.watcher.snapshot()
        except OSError as exc:  # without a snapshot its effect could not be judged: not run
            error = f"not run: the working tree could not be read ({exc})"
            return ToolResult(ok=False, error=error)
        result = self._judged_call(spec, call, before)
        self.accept()
        return result

    def carry_out(self, spec: ActionSpecExt, call: Callable[[], ToolResult]) -> ToolResult:
        """A direct file action (judged by its own spec): what it writes becomes judged."""
        if self.settle():
            return ToolResult(ok=False, error=STRAY_REFUSAL)
        result = call()
        self.accept()
        return result

    def _judged_call(
        self, spec: ActionSpecExt, call: Callable[[], ToolResult], before: Snapshot
    ) -> ToolResult:
        result = call()
        effect = self.judge(self.watcher.compare(before))
        if effect is None or not self._held(spec, effect):
            return result
        self._roll_back(spec, effect)
        self.pending.append(EffectReview(spec, effect))
        return ToolResult(ok=False, error=_held_message(effect), content=result.content)

    # -- changes outside any judged call -----------------------------------------------------

    def accept(self) -> None:
        """The tree as it is now counts as judged (after a judged call, or planner's own
        commit and rebase)."""
        self.baseline = self.watcher.snapshot()

    def settle(self) -> list[Stray]:
        """Judge what changed since the last judged state by the same risk table; changes that
        need a person are rolled back and kept in `strays` for the gate to ask about, the rest
        count as judged. Raises EffectNotUndone when a held change cannot be rolled back."""
        if self.baseline is None:
            self.accept()
            return []
        changes = self.watcher.compare(self.baseline)
        if not changes:
            return []  # the judged state is the tree as it is: no new snapshot needed
        judged = [self._judged(change) for change in changes]
        held = [c for c in judged if self.needs_person(c.risk)]
        strays = [Stray(c, self._written(c.change)) for c in held]
        self._roll_back_strays(strays)
        self.strays += strays
        self.accept()
        return strays

    def take_strays(self) -> list[Stray]:
        taken, self.strays = self.strays, []
        return taken

    def _written(self, change: Change) -> bytes | None:
        if change.after is None or change.after.is_link:
            return None
        try:
            return self.watcher.after_bytes(change)
        except OSError:
            return None

    def _roll_back_strays(self, strays: list[Stray]) -> None:
        try:
            self.watcher.rollback([s.judged.change for s in strays])
        except RollbackFailed as failure:
            reasons = "; ".join(s.judged.reason or s.judged.change.path for s in strays)
            raise EffectNotUndone(
                f"files changed outside any judged call ({reasons}) need a person's approval, "
                f"but could not be rolled back: {failure}. Nothing of this run was committed "
                "or pushed after it."
            ) from failure

    def judge(self, changes: list[Change]) -> Effect | None:
        """The changes with their risks and diff; None when nothing changed."""
        if not changes:
            return None
        judged = tuple(self._judged(change) for change in changes)
        held = [c.change for c in judged if self.needs_person(c.risk)]
        return Effect(judged, self._diff(changes), _digest(held))

    def take_pending(self) -> list[EffectReview]:
        taken, self.pending = self.pending, []
        return taken

    def _held(self, spec: ActionSpecExt, effect: Effect) -> bool:
        if spec.preflight.effect_sha256 == effect.digest:
            return False  # a person approved exactly this effect
        return self.needs_person(effect.risk)

    def _roll_back(self, spec: ActionSpecExt, effect: Effect) -> None:
        try:
            self.watcher.rollback([c.change for c in effect.changes])
        except RollbackFailed as failure:
            raise EffectNotUndone(
                f"{spec.description}: its effect needs a person's approval "
                f"({effect.reason()}), but it could not be rolled back: {failure}. "
                "Nothing of this run was committed or pushed after it."
            ) from failure

    def _judged(self, change: Change) -> JudgedChange:
        reason = self._high_reason(change)
        if reason:
            return JudgedChange(change, "high", reason)
        if change.kind == "write":
            return JudgedChange(change, "medium", "")
        code = self.rules.runs_commands and runs_as_code(change.path)
        return JudgedChange(change, "medium" if code else "low", "")

    def _high_reason(self, change: Change) -> str:
        if change.kind == "delete":
            return f"deletes {change.path}"
        before = change.before.size if change.before and change.kind == "write" else 0
        resolved = self.rules.policy.root / change.path
        why = path_high_reason(change.path, resolved, self.rules, before)
        return f"{why}: {change.path}" if why else ""

    def _diff(self, changes: list[Change]) -> str:
        return "".join(self._file_diff(change) for change in changes)

    def _file_diff(self, change: Change) -> str:
        try:
            before = self.watcher.before_bytes(change.before) if change.before else b""
            after = self.watcher.after_bytes(change)
        except (OSError, subprocess.CalledProcessError, RollbackFailed):
            return f"{change.kind} {change.path}: its content could not be read\n"
        return file_diff(change, before, after)


def file_diff(change: Change, before: bytes, after: bytes) -> str:
    """A unified diff of one changed file (sizes only for binary or very large content)."""
    import difflib

    old, new = decoded(before), decoded(after)
    if old is None or new is None or max(len(before), len(after)) > DIFF_FILE_BYTES:
        sizes = f"{len(before)} → {len(after)} bytes"
        return f"{change.kind} {change.path}: {BINARY_NOTE} or too large to show ({sizes})\n"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile="/dev/null" if change.before is None else f"a/{change.path}",
        tofile="/dev/null" if change.after is None else f"b/{change.path}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text or f"{change.kind} {change.path}: mode or link changed\n"


def _digest(changes: list[Change]) -> str:
    parts = (
        f"{c.path}\0{c.before.digest if c.before else '-'}\0{c.after.digest if c.after else '-'}"
        for c in changes
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


STRAY_REFUSAL = (
    "not run: files changed outside any judged call (a process that outlived its command, or "
    "an MCP server writing later); the changes were rolled back and wait for a person"
)


def _held_message(effect: Effect) -> str:
    return (
        f"the command's effect was rolled back: {effect.reason()}. A person must approve this "
        "effect before it is kept; it is shown to them as a diff."
    )
