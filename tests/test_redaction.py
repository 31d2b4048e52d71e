"""Red team: every secret planner knows stays out of everything it writes.

Each source of a secret (forge token, model key of any format, a token inside a URL, MCP header
and `${VAR}` values) and each way of smuggling it past a plain search (reversed, base64 at any
offset, percent-encoded, hex) — each test fails if the secret gets through.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from planner.config import ToolsConfig
from planner.core.interfaces import ToolResult, ToolSpec
from planner.memory.history import PlanningHistoryStore
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_error
from planner.text.redaction import (
    REDACTED,
    SECRETS,
    RedactingFilter,
    redact,
    register_environment_secrets,
    register_secret,
)
from planner.tools.build import build_registry
from planner.tools.registry import ToolRegistry
from tests.harness import Harness

KEYS = {
    "openai": "sk-proj-Abc123Def456Ghi789Jkl012Mno345",
    "azure": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "groq": "gsk_Q2w3E4r5T6y7U8i9O0p1A2s3D4f5G6h7",
    "opaque": "correct-horse-battery-staple-42",
}


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    SECRETS.clear()
    yield
    SECRETS.clear()


def disguises(secret: str) -> dict[str, str]:
    """How a hostile program would write the secret to get it past a search for the value."""
    disguised = {
        "plain": secret,
        "reversed": secret[::-1],
        "percent": quote(secret, safe=""),
        "hex": secret.encode().hex(),
    }
    for prefix in ("", "u", "us", "user:"):
        encoded = base64.b64encode(f"{prefix}{secret}\n".encode()).decode()
        disguised[f"base64 after {prefix!r}"] = encoded
        disguised[f"urlsafe base64 after {prefix!r}"] = encoded.replace("+", "-").replace("/", "_")
    return disguised


def secret_survives(text: str, secret: str) -> list[str]:
    return [name for name, form in disguises(secret).items() if form in text]


@pytest.mark.parametrize("flavour", list(KEYS))
def test_a_known_key_of_any_format_is_redacted_in_every_disguise(flavour: str) -> None:
    """Attack: print the model key reversed or encoded so a plain redaction misses it."""
    key = KEYS[flavour]
    register_secret(key)
    for name, form in disguises(key).items():
        written = redact(f"output: {form} (end)")
        assert secret_survives(written, key) == [], f"{flavour} key survived as {name}"
        assert REDACTED in written


def test_a_short_value_is_not_redacted_everywhere() -> None:
    """A 3-character 'key' would garble ordinary text if it were replaced."""
    register_secret("abc")
    assert redact("abc and abcdef") == "abc and abcdef"


@pytest.mark.parametrize(
    "url",
    [
        "https://x-access-token:Zq8vT3kLm2Np9Rx4@github.com/o/r.git",
        "http://gitlab-ci-token:Jt5hQ2mW8xK4vR7n@gitlab.example/g/p.git",
        "https://oauth2:anything-at-all-9@host/x",
    ],
)
def test_a_token_inside_a_url_is_redacted_even_when_unknown(url: str) -> None:
    """Attack: `git remote -v` shows the clone URL with the job token in its userinfo."""
    password = url.split("://")[1].split("@")[0].split(":")[1]
    assert password not in redact(f"origin {url} (fetch)")


def test_the_job_environment_registers_its_credentials() -> None:
    """GitLab's CI_REPOSITORY_URL holds the job token; GitHub's INPUT_* hold the tokens."""
    env = {
        "CI_REPOSITORY_URL": "https://gitlab-ci-token:Jt5hQ2mW8xK4vR7nB1cY@gl.example/g/p.git",
        "INPUT_GITHUB_TOKEN": "Zq8vT3kLm2Np9Rx4Wb7Yc1Hd",
        "CI_REGISTRY_PASSWORD": "Rg3nT7uI1oP5aS9dF2gH",
        "GITHUB_REPOSITORY": "octo/repo",
    }
    register_environment_secrets(env)
    text = "Jt5hQ2mW8xK4vR7nB1cY Zq8vT3kLm2Np9Rx4Wb7Yc1Hd Rg3nT7uI1oP5aS9dF2gH octo/repo"
    assert redact(text) == f"{REDACTED} {REDACTED} {REDACTED} octo/repo"


def test_mcp_header_and_env_values_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: a tool echoes the Authorization header an MCP server was given via ${VAR}."""
    monkeypatch.setenv("DOCS_TOKEN", "docs-opaque-credential-77")
    monkeypatch.setenv("SERVER_SECRET", "server-env-secret-value-88")
    config = ToolsConfig.model_validate(
        {
            "mcp_startup_timeout_seconds": 2,
            "mcpServers": {
                "docs": {
                    "url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Token ${DOCS_TOKEN}"},
                },
                "local": {"command": "false", "env": {"KEY": "${SERVER_SECRET}"}},
            },
        }
    )
    registry = build_registry(config, tmp_path)
    registry.close()
    written = redact("Token docs-opaque-credential-77, env server-env-secret-value-88")
    assert "docs-opaque" not in written and "server-env" not in written


class Leaky:
    """A tool provider whose output carries the key, reversed (as a hostile script prints it)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def list_tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="leak", description="", parameters={"type": "object"})]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(ok=False, content=self.secret[::-1], error=f"failed: {self.secret}")

    def close(self) -> None:
        return None


def test_tool_results_are_redacted_before_prompt_and_history() -> None:
    key = KEYS["azure"]
    register_secret(key)
    result = ToolRegistry([Leaky(key)]).call("leak", {})
    assert secret_survives(result.for_model(), key) == []


def test_history_entries_are_redacted(tmp_path: Path) -> None:
    key = KEYS["opaque"]
    register_secret(key)
    store = PlanningHistoryStore(tmp_path, "o/r", "1", "run")
    store.append("error", message=f"saw {key}", details={"nested": [key[::-1]]})
    text = "".join(path.read_text() for path in tmp_path.glob("*.jsonl"))
    assert secret_survives(text, key) == [] and REDACTED in text


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    key = KEYS["groq"]
    register_secret(key)
    logger = logging.getLogger("planner.test.redaction")
    caplog.handler.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("calling with %s", key)
    assert key not in caplog.text and REDACTED in caplog.text


@pytest.mark.parametrize("flavour", ["azure", "groq", "opaque"])
def test_an_endpoint_echoing_the_key_in_a_401_leaks_nothing(tmp_path: Path, flavour: str) -> None:
    """Attack: a misbehaving endpoint answers `401 Incorrect API key provided: <key>`."""
    key = KEYS[flavour]
    error = reply_error(401, f"Incorrect API key provided: {key}.", kind="planning")
    with ScriptedModelServer([error]) as server:
        harness = Harness(tmp_path, server)
        result = harness.run(**{"llm.api_key": key})
        history = "".join(p.read_text() for p in (harness.workspace / "planning_history").glob("*"))
    assert result.status == "failed"
    assert "401" in result.stop_reason
    written = result.model_dump_json() + history
    assert secret_survives(written, key) == []
