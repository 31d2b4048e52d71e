"""The real-repository suite: packages fetched by version and sha256 into a cache, a bug put
back in by a recorded edit, a hidden check. Everything here runs offline: a small source
distribution this test builds stands in for a download, and the real tasks are checked from
the cache when their packages are there (`planner eval --suite real --fetch-only` and
`--suite holdout --fetch-only` put them there; the download is not part of CI)."""

from __future__ import annotations

import difflib
import hashlib
import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from planner.cli.main import main
from planner.config import load_config
from planner.core.errors import UserInputError
from planner.evaluation.harness import EvalOptions, run_task
from planner.evaluation.packages import PackageSource, cache_directory, fetch, sha256_of
from planner.evaluation.suite import (
    HOLDOUT_SUITE_DIR,
    REAL_SUITE_DIR,
    Task,
    apply_solution,
    branch_tree,
    commit_all,
    load_suite,
    load_task,
    materialize,
    run_check,
)

MODULE = '''"""Temperatures."""


def to_fahrenheit(celsius):
    """Degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def to_celsius(fahrenheit):
    return (fahrenheit - 32) * 5 / 9
'''
PACKAGE_TEST = (
    "from thermo import to_celsius\n\n\ndef test_freezing():\n    assert to_celsius(32) == 0\n"
)
HIDDEN = (
    "from thermo import to_fahrenheit\n\n\ndef test_boiling():\n"
    "    assert to_fahrenheit(100) == 212\n"
)


def sdist(members: dict[str, str], top: str = "thermo-1.0") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


ARCHIVE = sdist({"thermo.py": MODULE, "tests/test_thermo.py": PACKAGE_TEST, "PKG-INFO": "x\n"})
SOURCE = PackageSource("thermo", "1.0", hashlib.sha256(ARCHIVE).hexdigest())


class Registry:
    """A downloader standing in for pip: writes an archive and counts the downloads."""

    def __init__(self, archive: bytes = ARCHIVE) -> None:
        self.archive = archive
        self.downloads = 0

    def __call__(self, source: PackageSource, destination: Path) -> None:
        self.downloads += 1
        (destination / f"{source.package}-{source.version}.tar.gz").write_bytes(self.archive)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PLANNER_EVAL_CACHE", str(folder))
    return folder


def cached(cache: Path, archive: bytes = ARCHIVE) -> Path:
    """The archive as an earlier download left it in the cache."""
    return fetch(SOURCE, cache, downloader=Registry(archive))


def thermo_task(directory: Path, old: str = "* 9 / 5 + 32") -> Task:
    (directory / "check").mkdir(parents=True)
    (directory / "check" / "test_eval_check.py").write_text(HIDDEN)
    document = {
        "title": "Wrong Fahrenheit values",
        "category": "bug_fix",
        "body": "`to_fahrenheit(100)` returns 148.0; water boils at 212 °F.",
        "source": {"package": "thermo", "version": "1.0", "sha256": SOURCE.sha256},
        "edits": [{"path": "thermo.py", "old": old, "new": "* 4 / 5 + 68"}],
        "check": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
    }
    (directory / "task.yaml").write_text(yaml.safe_dump(document, allow_unicode=True))
    return load_task(directory)


def test_a_download_is_used_only_with_the_pinned_hash_and_then_comes_from_the_cache(
    cache: Path,
) -> None:
    tampered = Registry(ARCHIVE.replace(b"thermo", b"thermx", 1) + b"\0")
    with pytest.raises(UserInputError, match=f"the task pins {SOURCE.sha256}: not used"):
        fetch(SOURCE, cache, downloader=tampered)
    assert not list(cache.rglob("*.tar.gz"))  # nothing unverified is cached

    registry = Registry()
    archive = fetch(SOURCE, cache, downloader=registry)
    assert sha256_of(archive) == SOURCE.sha256 and archive.is_relative_to(cache)
    assert fetch(SOURCE, cache, download=False) == archive
    assert fetch(SOURCE, cache, downloader=registry) == archive and registry.downloads == 1


def test_a_cached_archive_that_changed_is_not_used(cache: Path) -> None:
    archive = cached(cache)
    archive.write_bytes(archive.read_bytes()[:-1] + b"!")
    with pytest.raises(UserInputError, match="not in the evaluation cache"):
        fetch(SOURCE, cache, download=False)
    registry = Registry()
    assert sha256_of(fetch(SOURCE, cache, downloader=registry)) == SOURCE.sha256
    assert registry.downloads == 1


def test_the_cache_folder_is_outside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNER_EVAL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert cache_directory() == Path("/somewhere/cache/planner/eval")


def test_the_bug_is_put_in_and_only_the_untouched_package_passes_the_hidden_check(
    cache: Path, tmp_path: Path
) -> None:
    cached(cache)
    task = thermo_task(tmp_path / "task")
    workspace = materialize(task, tmp_path / "repo", download=False)
    assert "* 4 / 5 + 68" in (workspace / "thermo.py").read_text()
    assert not (workspace / "thermo-1.0").exists()  # the archive's top folder is not kept
    bugged = run_check(task, workspace)
    assert not bugged.passed and "test_boiling" in bugged.output
    apply_solution(task, workspace)
    assert (workspace / "thermo.py").read_text() == MODULE
    assert run_check(task, workspace).passed


def test_a_recorded_edit_that_no_longer_applies_is_a_clear_error(
    cache: Path, tmp_path: Path
) -> None:
    cached(cache)
    task = thermo_task(tmp_path / "task", old="* 9.0 / 5")
    with pytest.raises(UserInputError, match="occurs 0 times"):
        materialize(task, tmp_path / "repo", download=False)


def test_offline_a_package_not_in_the_cache_says_how_to_fetch_it(
    cache: Path, tmp_path: Path
) -> None:
    task = thermo_task(tmp_path / "task")
    with pytest.raises(UserInputError, match="--fetch-only"):
        materialize(task, tmp_path / "repo", download=False)


def test_an_archive_member_outside_its_folder_is_refused(cache: Path, tmp_path: Path) -> None:
    # The attack: a source distribution whose member climbs out of the unpack folder.
    hostile = sdist({"../../escaped.py": "x = 1\n", "thermo.py": MODULE}, top="")
    source = PackageSource("thermo", "1.0", hashlib.sha256(hostile).hexdigest())
    fetch(source, cache, downloader=Registry(hostile))
    task = thermo_task(tmp_path / "task")
    task = replace(task, source=source)
    with pytest.raises(UserInputError, match="cannot be unpacked"):
        materialize(task, tmp_path / "work" / "repo", download=False)
    assert not list(tmp_path.rglob("escaped.py"))


def test_the_scripted_models_run_on_a_package_task(cache: Path, tmp_path: Path) -> None:
    cached(cache)
    task = thermo_task(tmp_path / "task")
    config = load_config(None, env={}, overrides={"llm.max_retries": 0})
    solved = run_task(task, EvalOptions(config, scripted="reference", max_passes=2, download=False))
    assert solved.resolved and solved.statuses == ["completed"]
    nonsense = run_task(
        task, EvalOptions(config, scripted="nonsense", max_passes=2, download=False)
    )
    assert not nonsense.resolved and "test_boiling" in nonsense.check_output


REAL = load_suite(REAL_SUITE_DIR)
HOLDOUT = load_suite(HOLDOUT_SUITE_DIR)
SUITE_OF = {**dict.fromkeys(REAL, "real"), **dict.fromkeys(HOLDOUT, "holdout")}
"""Each real-repository task and the `--suite` name that fetches its package."""


@pytest.mark.parametrize("tasks", [REAL, HOLDOUT], ids=["real", "holdout"])
def test_the_real_suites_have_enough_tasks_packages_and_hidden_checks(tasks: list[Task]) -> None:
    assert len(tasks) >= 8
    assert len({task.source.package for task in tasks if task.source}) >= 4
    for task in tasks:
        assert task.source is not None and task.edits, task.name
        hidden = sorted(task.check_files.rglob("test_*.py"))
        assert hidden and all(path.name in " ".join(task.check) for path in hidden), task.name
        body = task.body.lower()
        assert not any(edit.path.lower() in body for edit in task.edits), task.name


def changed_code_lines(task: Task) -> int:
    """Lines of code (not blank, not comments) the fix changes: for each recorded edit, the
    larger of the lines only the released text has and the lines only the bugged one has."""
    changed = 0
    for edit in task.edits:
        diff = list(difflib.ndiff(edit.old.splitlines(), edit.new.splitlines()))
        released, bugged = (
            sum(1 for line in diff if line.startswith(sign) and _is_code(line[2:]))
            for sign in ("- ", "+ ")
        )
        changed += max(released, bugged)
    return changed


def _is_code(line: str) -> bool:
    return bool(line.strip()) and not line.strip().startswith("#")


def test_the_held_out_half_is_eight_other_packages_with_multi_line_fixes() -> None:
    packages = [task.source.package for task in HOLDOUT if task.source]
    assert len(packages) == len(set(packages)) == 8
    assert not set(packages) & {task.source.package for task in REAL if task.source}
    multi_line = [task.name for task in HOLDOUT if 2 <= changed_code_lines(task) <= 10]
    assert len(multi_line) >= 3, multi_line


def test_the_cli_knows_the_held_out_suite_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PLANNER_EVAL_CACHE", str(tmp_path / "empty-cache"))
    assert main(["eval", "--suite", "holdout", "--tasks", "nope"]) == 2
    listed = capsys.readouterr().err
    assert all(task.name in listed for task in HOLDOUT)
    assert not any(task.name in listed for task in REAL)
    assert main(["eval", "--suite", "holdot"]) == 2
    assert "no such suite: holdot is neither a suite's name (builtin, real, holdout)" in (
        capsys.readouterr().err
    )
    assert main(["eval", "--suite", "holdout", "--fetch-only", "--offline"]) == 2
    first = HOLDOUT[0].source
    assert first is not None
    assert f"{first.requirement()} is not in the evaluation cache" in capsys.readouterr().err


def _in_cache(task: Task) -> bool:
    assert task.source is not None
    try:
        fetch(task.source, download=False)
    except UserInputError:
        return False
    return True


def _skip_unless_cached(task: Task) -> None:
    if not _in_cache(task):
        suite = SUITE_OF[task]
        pytest.skip(f"package not cached: planner eval --suite {suite} --fetch-only downloads it")


@pytest.mark.parametrize("task", [*REAL, *HOLDOUT], ids=[t.name for t in [*REAL, *HOLDOUT]])
def test_each_real_task_fails_bugged_and_passes_untouched(task: Task, tmp_path: Path) -> None:
    """Checked as the harness checks a run: on a clone of what was committed."""
    _skip_unless_cached(task)
    workspace = materialize(task, tmp_path / "repo", download=False)
    bugged = run_check(task, branch_tree(workspace, "main", tmp_path / "bugged"))
    assert not bugged.passed, f"{task.name}: the bugged package passes"
    apply_solution(task, workspace)
    commit_all(workspace, "the released files")
    solved = run_check(task, branch_tree(workspace, "main", tmp_path / "solved"))
    assert solved.passed, f"{task.name}: the untouched package fails:\n{solved.output}"


def test_a_real_task_has_a_file_over_a_thousand_lines(tmp_path: Path) -> None:
    (task,) = [task for task in REAL if task.name == "more_itertools_divide"]
    _skip_unless_cached(task)
    workspace = materialize(task, tmp_path / "repo", download=False)
    assert len((workspace / task.edits[0].path).read_text().splitlines()) > 1000
