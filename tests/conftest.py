"""Shared pytest fixtures."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.outcome.deadline import DEADLINE
from planner.testing.scripted_server import ScriptedModelServer
from planner.text.redaction import SECRETS
from planner.verification.suite.runner import TestRunner
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.harness import Harness


def pytest_configure(config: pytest.Config) -> None:
    """A HOME of this process's own (each xdist worker has one): planner runs in process and
    its children write `git config --global` (safe.directory), which must neither grow the
    real ~/.gitconfig nor race another worker for its lock. Caches stay shared (pip's, for
    the wheel test, is safe to share and saves a download)."""
    saved = {name: os.environ.get(name) for name in ("HOME", "XDG_CACHE_HOME")}
    home = tempfile.mkdtemp(prefix="planner-tests-home-")
    config.stash[SAVED_KEY] = (saved, home)
    os.environ["XDG_CACHE_HOME"] = saved["XDG_CACHE_HOME"] or str(Path.home() / ".cache")
    os.environ["HOME"] = home
    sandbox_interpreter_warning(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    saved, home = config.stash[SAVED_KEY]
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(home, ignore_errors=True)


SAVED_KEY = pytest.StashKey[tuple[dict[str, str | None], str]]()


def sandbox_interpreter_warning(config: pytest.Config) -> None:
    """Said once per session (by the controller, not each xdist worker), where tests switch to
    the sandbox user: this interpreter is out of that user's reach (a Python under a mode-700
    home), and what the user-switching tests run instead, or how to fix it."""
    if hasattr(config, "workerinput") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    from tests.support.reachable import interpreter_note

    note = interpreter_note()
    if note:
        config.issue_config_time_warning(pytest.PytestConfigWarning(note), stacklevel=2)


@pytest.fixture(autouse=True)
def no_package_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip in a pass's verification environment never reaches a package index here: where a
    test names no package source (verification.index_url), pip has none. A pass whose tests'
    interpreter cannot import pytest (the sandbox user's, where the test's own lies under a
    closed home) still tries to install it, from verification.find_links or nowhere."""
    offered = TestRunner._pip_variables

    def offline(runner: TestRunner) -> dict[str, str]:
        variables = offered(runner)
        if "PIP_INDEX_URL" not in variables:
            variables["PIP_NO_INDEX"] = "1"
        return variables

    monkeypatch.setattr(TestRunner, "_pip_variables", offline)


@pytest.fixture(autouse=True)
def fresh_secret_registry() -> Iterator[None]:
    """The redaction registry is process-wide (one run per process in CI); a secret a test
    registered must not redact the next test's text (a fake token "scripted…" turned the model
    name "scripted-demo" into "[redacted]-demo" and dropped the cost from a later footer)."""
    yield
    SECRETS.clear()


@pytest.fixture(autouse=True)
def fresh_deadline() -> Iterator[None]:
    """The pass's deadline is process-wide too (a CI job's, started once the lease is taken,
    holds for the rest of its process): a job run in-process by one test must not leave its
    deadline to the next test's pass, which then ran to a stale hour-long deadline instead of
    its own ten-second budget."""
    DEADLINE.clear()
    yield
    DEADLINE.clear()


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModelServer]:
    """A running scripted model server; leftover steps and mismatches fail the test.

    Script it with ``scripted_model.add(...)`` and point an ``openai.OpenAI`` client
    at ``scripted_model.base_url``. A test that deliberately leaves steps unconsumed
    sets ``scripted_model.allow_leftovers = True``; tests that provoke mismatches on
    purpose should use their own ``with ScriptedModelServer()`` block instead.
    """
    server = ScriptedModelServer().start()
    try:
        yield server
    finally:
        server.stop()
    # Checked after stop() so a failing check never leaves the server thread running.
    server.assert_consumed()


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    """A pass in a fresh repository under tmp_path against the scripted model (tests.harness);
    a test file that needs files in the workspace first defines its own."""
    yield Harness(tmp_path, scripted_model)


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A running fake GitHub; any request that GitHub's OpenAPI document rejects fails the test."""
    with FakeGitHub(tmp_path / "fake-github") as forge:
        yield forge
    assert forge.openapi_problems == [], "\n".join(forge.openapi_problems)


@pytest.fixture
def fake_gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    """A running fake GitLab (project acme/widgets, id 42)."""
    with FakeGitLab(tmp_path / "fake-gitlab") as forge:
        yield forge
