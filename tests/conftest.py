"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from planner.testing.scripted_server import ScriptedModelServer


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
