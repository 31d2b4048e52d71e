"""TreeWatcher (planner.tools.commands.effects) and EffectGuard (planner.approval.effects) on real
repositories: what counts as an effect, what rollback restores, and what it refuses to follow."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from planner.approval.effects import EffectGuard, EffectNotUndone
from planner.approval.gate import ApprovalGate
from planner.approval.models import ActionSpecExt
from planner.approval.setup import build_gate, build_plan_tool
from planner.approval.validation import SpecRules
from planner.approval.waiting import AwaitingApproval
from planner.config import ApprovalConfig, PlannerConfig
from planner.core.interfaces import ToolResult
from planner.outcome.flow import StopPass
from planner.tools.commands.effects import RollbackFailed, TreeWatcher
from planner.tools.files.paths import PathPolicy
from tests.fake_forge.core import IDENTITY, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# hello\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('app')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "seed", env=IDENTITY)
    return root


def test_rollback_restores_committed_uncommitted_and_new_files(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("print('the pass changed me')\n")  # uncommitted work
    (repo / "notes.txt").write_text("untracked notes\n")
    watcher = TreeWatcher(repo)
    before = watcher.snapshot()

    (repo / "README.md").unlink()
    (repo / "src" / "app.py").write_text("wiped\n")
    (repo / "notes.txt").unlink()
    (repo / "new.txt").write_text("created\n")
    changes = watcher.compare(before)
    assert [(c.path, c.kind) for c in changes] == [
        ("README.md", "delete"),
        ("new.txt", "create"),
        ("notes.txt", "delete"),
        ("src/app.py", "write"),
    ]

    watcher.rollback(changes)
    assert (repo / "README.md").read_text() == "# hello\n"  # from git's object store
    assert (repo / "src" / "app.py").read_text() == "print('the pass changed me')\n"  # a copy
    assert (repo / "notes.txt").read_text() == "untracked notes\n"
    assert not (repo / "new.txt").exists()
    assert watcher.compare(before) == []
    watcher.close()


def test_build_outputs_and_planner_state_are_not_effects(repo: Path) -> None:
    history = repo / "planning_history"
    history.mkdir()
    watcher = TreeWatcher(repo, skip=(history,))
    before = watcher.snapshot()
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0bytecode")
    (repo / "node_modules" / "left-pad").mkdir(parents=True)
    (repo / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (history / "1.jsonl").write_text("{}\n")
    assert watcher.compare(before) == []


def test_a_rewrite_within_the_same_timestamp_and_size_is_seen(repo: Path) -> None:
    """Racy stat data: same size, mtime put back; the content hash still tells."""
    watcher = TreeWatcher(repo)
    target = repo / "README.md"
    info = target.stat()
    before = watcher.snapshot()
    target.write_text("# HELLO\n")
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert [c.path for c in watcher.compare(before)] == ["README.md"]


def test_rollback_never_writes_through_a_symlink_the_command_planted(
    repo: Path, tmp_path: Path
) -> None:
    """Attack: the command replaces src/ by a link to a folder outside, hoping the restore of
    src/app.py writes there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    watcher = TreeWatcher(repo)
    before = watcher.snapshot()
    (repo / "src" / "app.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").symlink_to(outside, target_is_directory=True)

    watcher.rollback(watcher.compare(before))
    assert list(outside.iterdir()) == []
    assert not (repo / "src").is_symlink()
    assert (repo / "src" / "app.py").read_text() == "print('app')\n"


def guard(repo: Path, **approval: object) -> EffectGuard:
    config = ApprovalConfig(**approval)  # type: ignore[arg-type]
    rules = SpecRules(policy=PathPolicy.create(repo), config=config, runs_commands=True)
    return EffectGuard(TreeWatcher(repo), rules, lambda risk: risk not in config.auto_approve)


def deleting(path: Path) -> Callable[[], ToolResult]:
    def command() -> ToolResult:
        path.unlink()
        return ToolResult(ok=True)

    return command


def spec(content: str = "python -m pytest") -> ActionSpecExt:
    return ActionSpecExt(id="a1", kind="run", content=content, description=content)


def test_the_guard_classifies_by_the_risk_table_and_holds_only_what_needs_a_person(
    repo: Path,
) -> None:
    effects = guard(repo)

    def command() -> ToolResult:
        (repo / "README.md").unlink()
        (repo / "conftest.py").write_text("x = 1\n")
        return ToolResult(ok=True, content="exit code: 0")

    result = effects.run(spec(), command)
    assert not result.ok and "rolled back" in (result.error or "")
    [review] = effects.take_pending()
    risks = {c.change.path: (c.risk, c.reason) for c in review.effect.changes}
    assert risks == {
        "README.md": ("high", "deletes README.md"),
        "conftest.py": ("medium", ""),  # a file the test command runs as code
    }
    assert "-# hello" in review.effect.diff and "+x = 1" in review.effect.diff
    assert (repo / "README.md").exists() and not (repo / "conftest.py").exists()

    def harmless() -> ToolResult:
        (repo / "report.txt").write_text("ok\n")
        return ToolResult(ok=True, content="exit code: 0")

    assert effects.run(spec(), harmless).ok and (repo / "report.txt").exists()
    assert effects.take_pending() == []


def test_an_effect_that_cannot_be_rolled_back_ends_the_run(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    effects = guard(repo)

    def refuse(*_: object) -> None:
        raise RollbackFailed("could not restore 'README.md': read-only file system")

    monkeypatch.setattr(effects.watcher, "rollback", refuse)
    with pytest.raises(EffectNotUndone) as stopped:
        effects.run(spec(), deleting(repo / "README.md"))
    assert not isinstance(stopped.value, StopPass)  # a StopPass would still publish the pass
    assert "could not be rolled back" in str(stopped.value)
    assert "deletes README.md" in str(stopped.value)


def test_a_tampered_copy_is_never_restored(repo: Path) -> None:
    """Attack: the command rewrites planner's saved copy of a file it then deletes, so the
    rollback would write the attacker's content back. The copy's hash is checked first."""
    (repo / "README.md").write_text("# the pass's own edit\n")  # only a copy can restore it
    watcher = TreeWatcher(repo)
    before = watcher.snapshot()
    assert watcher._copies is not None
    for copy in watcher._copies.iterdir():
        copy.write_text("pwned\n")
    (repo / "README.md").unlink()
    with pytest.raises(RollbackFailed, match="changed or is gone"):
        watcher.rollback(watcher.compare(before))
    assert not (repo / "README.md").exists()


def test_an_approved_effect_is_kept_only_when_it_is_the_one_shown(repo: Path) -> None:
    effects = guard(repo)
    delete = deleting(repo / "README.md")
    effects.run(spec(), delete)
    [review] = effects.take_pending()
    approved = spec()
    approved.preflight.effect_sha256 = review.effect.digest

    # a different effect is held again
    assert not effects.run(approved, deleting(repo / "src" / "app.py")).ok
    assert (repo / "src" / "app.py").exists()
    assert effects.run(approved, delete).ok and not (repo / "README.md").exists()


def gate_for(repo: Path, tmp_path: Path, commands: list[str]) -> ApprovalGate:
    config = PlannerConfig.model_validate({"tools": {"allowed_commands": commands}})
    tool = build_plan_tool(
        config, repo, tmp_path / "history", "1", lambda name, args: ToolResult(ok=True)
    )
    return build_gate(tool, config, "octo/repo#1")


def test_a_command_planner_runs_for_the_model_goes_through_the_same_check(
    repo: Path, tmp_path: Path
) -> None:
    """The verification phase's test command (allowed): its deletion waits for a person."""
    gate = gate_for(repo, tmp_path, ["python -m pytest"])
    with pytest.raises(AwaitingApproval) as waiting:
        gate.watched("task_1", ["python", "-m", "pytest"], deleting(repo / "README.md"))
    assert (repo / "README.md").read_text() == "# hello\n"
    assert "-# hello" in waiting.value.markdown and "rolled back" in waiting.value.markdown
    [held] = gate.waiting()
    assert held.risk == "high" and held.preflight.effect_reason == "deletes README.md"


def test_a_command_no_person_could_approve_fails_with_its_effect_rolled_back(
    repo: Path, tmp_path: Path
) -> None:
    """A test command outside tools.allowed_commands: rolled back and reported, nobody asked."""
    gate = gate_for(repo, tmp_path, [])
    result = gate.watched("task_1", ["make", "test"], deleting(repo / "README.md"))
    assert not result.ok and "deletes README.md" in (result.error or "")
    assert (repo / "README.md").exists() and gate.waiting() == []


def test_ci_definitions_and_planner_config_changed_by_a_command_are_high_risk(
    repo: Path,
) -> None:
    config_file = repo / ".github" / "planner.yml"
    config_file.parent.mkdir()
    config_file.write_text("tools:\n  allowed_commands: [python -m pytest]\n")
    config = ApprovalConfig()
    policy = PathPolicy.create(repo, write_protected=(config_file,))
    rules = SpecRules(policy=policy, config=config, config_paths=(config_file,))
    effects = EffectGuard(TreeWatcher(repo), rules, lambda risk: risk not in config.auto_approve)

    def command() -> ToolResult:
        (repo / ".github" / "workflows").mkdir()
        (repo / ".github" / "workflows" / "x.yml").write_text("on: push\n")
        config_file.write_text("tools:\n  allowed_commands: [sh]\n")
        return ToolResult(ok=True)

    assert not effects.run(spec(), command).ok
    [review] = effects.take_pending()
    reasons = sorted(c.reason for c in review.effect.changes)
    assert reasons == [
        "changes a CI definition: .github/workflows/x.yml",
        "changes planner's own configuration: .github/planner.yml",
    ]
    assert not (repo / ".github" / "workflows" / "x.yml").exists()
    assert "[python -m pytest]" in config_file.read_text()


def test_an_effect_on_an_unreadable_file_is_still_judged(repo: Path) -> None:
    """A file planner cannot read (as a non-root user) counts by its stat data; when its
    change must be undone and cannot be, the pass stops instead of pretending."""
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    secret = repo / "locked.bin"
    secret.write_bytes(b"x" * 10)
    secret.chmod(0)
    effects = guard(repo)

    def command() -> ToolResult:
        secret.chmod(0o600)
        secret.write_bytes(b"y" * 20)
        secret.chmod(0)
        (repo / "README.md").unlink()
        return ToolResult(ok=True)

    try:
        with pytest.raises(EffectNotUndone, match="could not be rolled back"):
            effects.run(spec(), command)
    finally:
        secret.chmod(0o600)


def test_ignored_untracked_files_are_not_watched_but_tracked_ones_are(repo: Path) -> None:
    """A virtualenv or local data set is neither hashed nor copied; ignoring a tracked file
    does not hide a change to it."""
    (repo / ".gitignore").write_text(".venv/\n*.log\nREADME.md\n")
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "big.py").write_text("x = 1\n")
    watcher = TreeWatcher(repo)
    before = watcher.snapshot()
    assert not any(path.startswith(".venv/") for path in before.files)
    (repo / ".venv" / "lib" / "big.py").unlink()
    (repo / "run.log").write_text("log\n")
    (repo / "README.md").unlink()
    assert [c.path for c in watcher.compare(before)] == ["README.md"]


def test_an_approval_binds_the_changes_that_needed_a_person_not_incidental_ones(
    repo: Path,
) -> None:
    """A report file with a timestamp differs on every run; the deletion that was approved
    is the same, so the approval holds."""
    effects = guard(repo)
    runs = iter(range(2))

    def command() -> ToolResult:
        (repo / "README.md").unlink()
        (repo / "report.txt").write_text(f"run {next(runs)}\n")
        return ToolResult(ok=True)

    effects.run(spec(), command)
    [review] = effects.take_pending()
    approved = spec()
    approved.preflight.effect_sha256 = review.effect.digest
    assert effects.run(approved, command).ok
    assert (repo / "report.txt").read_text() == "run 1\n" and not (repo / "README.md").exists()
