"""Assembles the ToolRegistry of one pass: built-in tools first, then every MCP server."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from planner.config import TEST_PATHS, McpServerConfig, ToolsConfig
from planner.core.interfaces import ToolProvider
from planner.text.redaction import (
    CREDENTIAL_FILE_BYTES,
    register_file_secrets,
    register_secret,
)
from planner.tools.commands.run_command import CommandTool
from planner.tools.files.workspace import WorkspaceTools
from planner.tools.mcp.servers import config_file_path, resolve_servers
from planner.tools.registry import ToolRegistry
from planner.tools.sandbox.fence import credential_files
from planner.tools.sandbox.isolation import isolate
from planner.tools.sandbox.leftovers import adopt_orphans, end_leftovers

if TYPE_CHECKING:
    from planner.tools.mcp.host import McpHost


def build_registry(
    config: ToolsConfig,
    workspace: Path,
    protected: tuple[Path, ...] = (),
    *,
    write_protected: tuple[Path, ...] = (),
    env: Mapping[str, str] | None = None,
    extra: Sequence[ToolProvider] = (),
    file_servers: Mapping[str, McpServerConfig] | None = None,
    runs_programs: bool = False,
    issue_text: str = "",
    test_paths: Sequence[str] = TEST_PATHS,
) -> ToolRegistry:
    """Every tool of the pass; MCP servers are started here and stopped by registry.close().

    Raises ConfigError (before anything starts) when the MCP configuration is unusable, e.g.
    it names an environment variable that is not set. `protected` paths (planner's history) are
    neither read nor written by the built-in tools; `write_protected` ones (planner's own config)
    are readable but never written, so a pass cannot widen the permissions of the next one.
    `file_servers`, when given, are the servers of tools.mcp_config_file as read before the
    issue branch was checked out; the file is then not read again. `runs_programs`: planner
    itself runs repository programs this pass (the tests, planner.verification), so the
    checkout's credentials go and a sandbox user is chosen as for run_command. `issue_text`: the
    issue's title and body, and `test_paths` verification's test files (what a whole-file
    write may leave out of a module).
    """
    environment = os.environ if env is None else env
    servers = resolve_servers(config, workspace, environment, file_servers)
    mcp_file = config_file_path(config, workspace)
    programs = runs_programs or bool(
        config.allowed_commands or any(s.command for s in servers.values())
    )
    for path in credential_files(environment, workspace):
        register_credential_file(Path(path))
    keep = (*protected, workspace / ".git")
    isolation = isolate(
        config.sandbox_user, workspace, keep, programs=programs, environment=environment
    )
    registry = ToolRegistry(
        [
            WorkspaceTools(
                workspace,
                config,
                protected,
                (*write_protected, *((mcp_file,) if mcp_file else ())),
                issue_text,
                test_paths,
            ),
            CommandTool(workspace, config, environment, isolation.user),
            *extra,
        ]
    )
    registry.sandbox_user = isolation.user
    registry.add_cleanup(lambda: isolation.close(workspace))
    if isolation.user is not None:
        adopt_orphans()  # before any tool starts: what they leave behind stays planner's to end
        registry.add_cleanup(partial(end_leftovers, isolation.user))  # before the hand-back
    for server in servers.values():
        register_secrets_of(server)
    if servers:
        # The MCP SDK costs about half a second to import: only a pass with servers pays it.
        from planner.tools.mcp.host import McpHost

        _add_servers(registry, McpHost(servers, config, workspace, isolation.user))
    return registry


def register_credential_file(path: Path) -> None:
    """What a file the job names as a credential holds is redacted like any secret."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    with os.fdopen(descriptor, "rb") as handle:
        register_file_secrets(handle.read(CREDENTIAL_FILE_BYTES))


def register_secrets_of(server: McpServerConfig) -> None:
    """What a server is given in headers and env may be a credential: never write it anywhere."""
    for value in (*server.headers.values(), *server.env.values()):
        register_secret(value)


def _add_servers(registry: ToolRegistry, host: McpHost) -> None:
    registry.add_cleanup(host.close)
    try:
        for server in host.start():
            registry.add(server)
    except BaseException:
        registry.close()
        raise
