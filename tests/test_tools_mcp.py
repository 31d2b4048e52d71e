"""MCP servers behind the registry: real third-party servers, our own HTTP one, and failures."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.config import ToolsConfig
from planner.tools.build import build_registry
from planner.tools.registry import ToolRegistry
from tests.mcp_servers.launch import (
    filesystem_server,
    git_server,
    http_server,
    misbehaving_server,
)
from tests.plans import committed_repo

TOKEN = "test-bearer-0123"


def make_repo(root: Path) -> Path:
    return committed_repo(root, {"README.md": "# Demo\n\nHello from the README.\n"})


def registry_for(workspace: Path, env: dict[str, str] | None = None, **tools: Any) -> ToolRegistry:
    tools.setdefault("sandbox_user", "off")  # the servers run with this checkout's interpreter
    return build_registry(ToolsConfig.model_validate(tools), workspace, env=env or {})


@pytest.fixture(scope="module")
def third_party(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ToolRegistry, Path]]:
    """One registry with mcp-server-git, the filesystem server and our HTTP server."""
    workspace = make_repo(tmp_path_factory.mktemp("mcp") / "repo")
    with http_server(TOKEN) as url:
        registry = registry_for(
            workspace,
            env={"TEST_TOKEN": TOKEN},
            mcpServers={
                "git": git_server(),
                "fs": filesystem_server("."),
                "web": {"url": url, "headers": {"Authorization": "Bearer ${TEST_TOKEN}"}},
            },
        )
        try:
            yield registry, workspace
        finally:
            registry.close()


def names_of(registry: ToolRegistry, prefix: str) -> set[str]:
    return {name for name in registry.names() if name.startswith(prefix)}


# -- real servers nobody here wrote --------------------------------------------------------------


def test_servers_start_and_their_tools_appear_with_schemas(
    third_party: tuple[ToolRegistry, Path],
) -> None:
    registry, _ = third_party
    assert registry.problems == []
    assert {
        "git__git_status",
        "git__git_add",
        "git__git_commit",
        "git__git_log",
    } <= registry.names()
    assert {"fs__read_text_file", "fs__write_file", "fs__list_directory"} <= registry.names()
    assert names_of(registry, "web__") == {"web__add", "web__shout", "web__fail"}
    assert {
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
        "search_files",
    } <= registry.names()
    specs = {spec.name: spec for spec in registry.specs()}
    assert specs["git__git_status"].parameters["properties"]["repo_path"]["type"] == "string"
    assert specs["fs__write_file"].parameters["required"] == ["path", "content"]
    assert specs["web__add"].description == "Add two integers."
    assert all(spec.parameters["type"] == "object" for spec in specs.values())


def test_git_server_reads_and_writes_through_the_registry(
    third_party: tuple[ToolRegistry, Path],
) -> None:
    registry, workspace = third_party
    status = registry.call("git__git_status", {"repo_path": str(workspace)})
    assert status.ok and "On branch main" in status.content
    assert registry.call("write_file", {"path": "notes.txt", "content": "note\n"}).ok
    added = registry.call("git__git_add", {"repo_path": str(workspace), "files": ["notes.txt"]})
    assert added.ok, added
    committed = registry.call(
        "git__git_commit", {"repo_path": str(workspace), "message": "Add notes via MCP"}
    )
    assert committed.ok, committed
    log = subprocess.run(
        ["git", "log", "--format=%s", "-1"], cwd=workspace, capture_output=True, text=True
    ).stdout
    assert log == "Add notes via MCP\n"


def test_filesystem_server_reads_writes_and_errors_come_back_as_results(
    third_party: tuple[ToolRegistry, Path],
) -> None:
    registry, workspace = third_party
    read = registry.call("fs__read_text_file", {"path": "README.md"})
    assert read.ok and read.content == "# Demo\n\nHello from the README.\n"
    written = registry.call("fs__write_file", {"path": "from_fs.txt", "content": "via node\n"})
    assert written.ok, written
    assert (workspace / "from_fs.txt").read_text(encoding="utf-8") == "via node\n"
    outside = registry.call("fs__read_text_file", {"path": "/etc/hostname"})
    assert not outside.ok
    assert outside.error == "the tool reported an error"
    assert "Access denied" in outside.content


def test_http_server_gets_the_configured_header(third_party: tuple[ToolRegistry, Path]) -> None:
    registry, _ = third_party
    assert registry.call("web__add", {"a": 2, "b": 40}).content == "42"
    assert registry.call("web__shout", {"text": "quiet"}).content == "QUIET"
    failed = registry.call("web__fail", {})
    assert not failed.ok and failed.error == "the tool reported an error"
    invalid = registry.call("web__add", {"a": "two"})
    assert not invalid.ok


def test_http_server_without_the_header_is_reported_and_left_out(tmp_path: Path) -> None:
    with http_server(TOKEN) as url:
        registry = registry_for(tmp_path, mcpServers={"web": {"url": url}})
        try:
            assert names_of(registry, "web__") == set()
            assert len(registry.problems) == 1
            assert registry.problems[0].startswith("MCP server 'web' did not start:")
            assert "read_file" in registry.names()
        finally:
            registry.close()


# -- failures --------------------------------------------------------------------------------


def test_missing_command_is_reported_once_and_the_rest_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    registry = registry_for(
        tmp_path,
        mcpServers={"ghost": {"command": "planner-no-such-mcp-server"}, "ok": misbehaving_server()},
    )
    try:
        assert registry.problems == [
            "MCP server 'ghost' did not start: command not found: planner-no-such-mcp-server; "
            "its tools are left out"
        ]
        assert names_of(registry, "ghost__") == set()
        assert registry.call("ok__echo", {"text": "still here"}).content == "still here"
        unknown = registry.call("ghost__anything", {})
        assert unknown.error is not None and unknown.error.startswith(
            "unknown tool 'ghost__anything'"
        )
        assert "ok__echo" in unknown.error
    finally:
        registry.close()
    warnings = [r.getMessage() for r in caplog.records if "'ghost'" in r.getMessage()]
    assert len(warnings) == 1


def test_server_that_exits_at_start_is_reported_with_its_stderr_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    script = "import sys; print('cannot open the database', file=sys.stderr); sys.exit(3)"
    registry = registry_for(
        tmp_path, mcpServers={"early": {"command": sys.executable, "args": ["-c", script]}}
    )
    registry.close()
    assert registry.problems == [
        "MCP server 'early' did not start: Connection closed; its tools are left out"
    ]
    assert "cannot open the database" in caplog.text


def test_server_that_never_answers_is_given_up_after_the_startup_timeout(tmp_path: Path) -> None:
    silent = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    registry = registry_for(
        tmp_path, mcp_startup_timeout_seconds=0.5, mcpServers={"silent": silent}
    )
    registry.close()
    assert registry.problems == [
        "MCP server 'silent' did not start within 0.5s; its tools are left out"
    ]


def test_crash_mid_call_is_a_result_and_the_server_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    registry = registry_for(tmp_path, mcpServers={"mis": misbehaving_server()})
    try:
        assert names_of(registry, "mis__") == {"mis__echo", "mis__fail", "mis__crash", "mis__hang"}
        crashed = registry.call("mis__crash", {})
        assert not crashed.ok
        assert crashed.error == "MCP server 'mis' died during the call"
        assert names_of(registry, "mis__") == set()
        assert not any(spec.name.startswith("mis__") for spec in registry.specs())
        after = registry.call("mis__echo", {"text": "x"})
        assert after.error is not None and after.error.startswith("MCP server 'mis' is unavailable")
        assert registry.problems == [
            "MCP server 'mis' died during a call to crash; its tools are left out"
        ]
    finally:
        registry.close()
    assert sum("'mis' died" in record.getMessage() for record in caplog.records) == 1


def test_tool_errors_and_timeouts_are_results_and_the_server_lives_on(tmp_path: Path) -> None:
    # 2 s: a tool error comes back in milliseconds (the server logs plain lines), the hang is cut
    registry = registry_for(
        tmp_path, mcp_call_timeout_seconds=2, mcpServers={"mis": misbehaving_server()}
    )
    try:
        failed = registry.call("mis__fail", {"message": "disk full"})
        assert not failed.ok and failed.error == "the tool reported an error"
        hung = registry.call("mis__hang", {})
        assert hung.error == "mis/hang timed out after 2s (the call was cancelled)"
        assert registry.call("mis__echo", {"text": "alive"}).content == "alive"
        assert registry.problems == []
    finally:
        registry.close()


def test_per_server_timeout_overrides_the_default(tmp_path: Path) -> None:
    server = {**misbehaving_server(), "timeout_seconds": 0.25}
    registry = registry_for(tmp_path, mcp_call_timeout_seconds=600, mcpServers={"mis": server})
    try:
        assert (
            registry.call("mis__hang", {}).error
            == "mis/hang timed out after 0.25s (the call was cancelled)"
        )
    finally:
        registry.close()


def test_allow_and_deny_lists_filter_tools(tmp_path: Path) -> None:
    registry = registry_for(
        tmp_path,
        mcpServers={
            "a": {**misbehaving_server(), "allow_tools": ["echo", "ha*"]},
            "d": {**misbehaving_server(), "deny_tools": ["crash", "hang"]},
        },
    )
    try:
        assert names_of(registry, "a__") == {"a__echo", "a__hang"}
        assert names_of(registry, "d__") == {"d__echo", "d__fail"}
        assert registry.call("d__crash", {}).error is not None
    finally:
        registry.close()


def test_a_stdio_server_gets_a_temporary_folder_of_its_own_removed_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)  # planner's own temporary folder: `shared`
    server = misbehaving_server(MISBEHAVING_TEMPORARY_FOLDER="1")
    registry = registry_for(tmp_path, mcpServers={"mis": server})
    try:
        folder = Path(registry.call("mis__temporary_folder", {}).content)
        assert folder.parent == shared and folder.name.startswith("planner-mcp-tmp-")
    finally:
        registry.close()
    assert list(shared.iterdir()) == []


def test_servers_are_shut_down_on_close(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    threads_before = set(threading.enumerate())
    registry = registry_for(
        tmp_path, mcpServers={"mis": misbehaving_server(MISBEHAVING_PID_FILE=str(pid_file))}
    )
    loop_threads = [
        t for t in set(threading.enumerate()) - threads_before if t.name == "planner-mcp"
    ]
    assert len(loop_threads) == 1
    pid = int(pid_file.read_text())
    os.kill(pid, 0)  # running
    registry.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not loop_threads[0].is_alive()


def test_undefined_variable_stops_before_any_server_starts(tmp_path: Path) -> None:
    from planner.core.errors import ConfigError

    pid_file = tmp_path / "server.pid"
    servers = {
        "mis": misbehaving_server(MISBEHAVING_PID_FILE=str(pid_file)),
        "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${NOT_SET}"}},
    }
    with pytest.raises(
        ConfigError, match=r"mcpServers.web.headers.Authorization uses \$\{NOT_SET\}"
    ):
        registry_for(tmp_path, mcpServers=servers)
    assert not pid_file.exists()
