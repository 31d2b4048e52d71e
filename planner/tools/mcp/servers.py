"""Which MCP servers a pass starts: `tools.mcpServers`, a `.mcp.json`-style file, `${VAR}`s.

Everything is checked before any server starts, and every problem is reported at once as a
ConfigError. Expanded values (which may hold tokens) live only in the returned objects; error
messages name variables, never their values. The variables that hold planner's own credentials
(PLANNER_SECRETS) never expand: a server that needs a token gets a variable of its own, so a
server definition cannot hand planner's forge or model token to a program.

The CI path reads the file once, from the default branch's checkout before the issue branch is
checked out (load_file_servers), and passes the result on: what a pass commits to the branch
cannot define the servers of the next pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.config import McpServerConfig, ToolsConfig
from planner.core.errors import ConfigError

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
EXPANDED_FIELDS = ("command", "args", "env", "cwd", "url", "headers")
PLANNER_SECRETS = frozenset(
    {
        "GITHUB_TOKEN",
        "INPUT_GITHUB_TOKEN",
        "GITLAB_TOKEN",
        "OPENAI_API_KEY",
        "INPUT_OPENAI_API_KEY",
        "CI_JOB_TOKEN",
    }
)
"""The tokens planner itself was given; `${VAR}` refuses them."""


def resolve_servers(
    config: ToolsConfig,
    workspace: Path,
    env: Mapping[str, str],
    file_servers: Mapping[str, McpServerConfig] | None = None,
) -> dict[str, McpServerConfig]:
    """Every configured server with its variables expanded, or ConfigError listing problems.

    `file_servers`: the servers of tools.mcp_config_file as read earlier (load_file_servers);
    None reads the file now.
    """
    if file_servers is None:
        file_servers = load_file_servers(config, workspace)
    servers = {**file_servers, **config.mcpServers}
    problems: list[str] = []
    expanded = {
        name: expand_server(name, server, env, problems) for name, server in servers.items()
    }
    if problems:
        raise ConfigError("MCP server configuration:\n" + "\n".join(f"  - {p}" for p in problems))
    return expanded


def config_file_path(config: ToolsConfig, workspace: Path) -> Path | None:
    if config.mcp_config_file is None:
        return None
    path = Path(config.mcp_config_file)
    return path if path.is_absolute() else workspace / path


def load_file_servers(config: ToolsConfig, workspace: Path) -> dict[str, McpServerConfig]:
    """The servers of tools.mcp_config_file (`{"mcpServers": {...}}`); none when unset."""
    path = config_file_path(config, workspace)
    if path is None:
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"tools.mcp_config_file {path} cannot be read: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"tools.mcp_config_file {path} is not valid JSON: {exc}") from None
    entries = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        raise ConfigError(f"tools.mcp_config_file {path} must hold an object with 'mcpServers'")
    return _validated(path, entries)


def _validated(path: Path, entries: dict[str, Any]) -> dict[str, McpServerConfig]:
    servers: dict[str, McpServerConfig] = {}
    problems: list[str] = []
    for name, entry in entries.items():
        try:
            servers[name] = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            problems += [_field_problem(path, name, error) for error in exc.errors()]
    if problems:
        raise ConfigError(f"tools.mcp_config_file {path}:\n" + "\n".join(problems))
    return servers


def _field_problem(path: Path, name: str, error: Any) -> str:
    where = ".".join(str(part) for part in ("mcpServers", name, *error["loc"]))
    return f"  - {where}: {error['msg']}"


def expand_server(
    name: str, server: McpServerConfig, env: Mapping[str, str], problems: list[str]
) -> McpServerConfig:
    """A copy of `server` with `${VAR}` expanded in every string a server is started with."""
    updates = {
        field: _expand(getattr(server, field), f"mcpServers.{name}.{field}", env, problems)
        for field in EXPANDED_FIELDS
    }
    return server.model_copy(update=updates)


def _expand(value: Any, where: str, env: Mapping[str, str], problems: list[str]) -> Any:
    if isinstance(value, str):
        return _expand_text(value, where, env, problems)
    if isinstance(value, list):
        return [_expand(item, f"{where}[{i}]", env, problems) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _expand(item, f"{where}.{key}", env, problems) for key, item in value.items()}
    return value


def _expand_text(text: str, where: str, env: Mapping[str, str], problems: list[str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name.upper() in PLANNER_SECRETS:
            problems.append(
                f"{where} uses ${{{name}}}, which holds planner's own credential and is never "
                "handed to a server; give the server a variable of its own"
            )
            return ""
        value = env.get(name, "")
        if value:
            return value
        if default is not None:
            return default
        if name not in env:
            problems.append(f"{where} uses ${{{name}}}, which is not set (no default given)")
        return ""

    return VARIABLE.sub(substitute, text)
