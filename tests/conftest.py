"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.testing.scripted_server import ScriptedModelServer
from tests.fake_forge import FakeGitHub, FakeGitLab


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
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A running fake GitHub; any request that GitHub's OpenAPI document rejects fails the test."""
    forge = FakeGitHub(tmp_path / "fake-github").start()
    try:
        yield forge
    finally:
        forge.stop()
    assert forge.openapi_problems == [], "\n".join(forge.openapi_problems)


@pytest.fixture
def fake_gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    """A running fake GitLab (project acme/widgets, id 42)."""
    forge = FakeGitLab(tmp_path / "fake-gitlab").start()
    try:
        yield forge
    finally:
        forge.stop()
