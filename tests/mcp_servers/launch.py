"""How tests start MCP servers: configs for the real ones, a context manager for our HTTP one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
NODE_PACKAGES = HERE.parent / "node" / "node_modules"
FILESYSTEM_SERVER = (
    NODE_PACKAGES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
)
MISBEHAVING_SERVER = HERE / "misbehaving.py"
HTTP_SERVER = HERE / "http_server.py"


def git_server(repository: str = ".") -> dict[str, Any]:
    """mcp-server-git (PyPI), from the dev venv this test runs in."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", repository]}


def filesystem_server(*directories: str) -> dict[str, Any]:
    """@modelcontextprotocol/server-filesystem (npm), run with node."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not FILESYSTEM_SERVER.is_file():
        pytest.fail(
            "tests/node/node_modules is missing: run `npm ci` in tests/node (dev.py test does)"
        )
    return {"command": "node", "args": [str(FILESYSTEM_SERVER), *directories]}


def misbehaving_server(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(MISBEHAVING_SERVER)], "env": env}


@contextmanager
def http_server(bearer_token: str) -> Iterator[str]:
    """Our streamable-HTTP server on 127.0.0.1; yields its /mcp URL."""
    process = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), bearer_token], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
