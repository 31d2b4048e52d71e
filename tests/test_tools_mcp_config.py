"""MCP server configuration: the mcpServers shape, .mcp.json files, ${VAR} expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.config import ToolsConfig, load_config
from planner.core.errors import ConfigError
from planner.tools.mcp.host import exposed_name
from planner.tools.mcp.servers import load_file_servers, resolve_servers


def tools_config(**values: object) -> ToolsConfig:
    return ToolsConfig.model_validate(values)


def test_yaml_config_takes_the_common_mcp_servers_shape(tmp_path: Path) -> None:
    config_file = tmp_path / "planner.yml"
    config_file.write_text(
        "tools:\n"
        "  mcp_call_timeout_seconds: 30\n"
        "  mcpServers:\n"
        "    git:\n"
        "      command: mcp-server-git\n"
        "      args: [--repository, .]\n"
        "      deny_tools: [git_push*]\n"
        "    docs:\n"
        "      type: http\n"
        "      url: https://mcp.example.test/mcp\n"
        "      headers: {Authorization: 'Bearer ${DOCS_TOKEN}'}\n"
        "      timeout_seconds: 5\n",
        encoding="utf-8",
    )
    tools = load_config(config_file, env={}).tools
    assert tools.mcpServers["git"].transport == "stdio"
    assert tools.mcpServers["git"].args == ["--repository", "."]
    assert tools.mcpServers["docs"].transport == "http"
    assert tools.mcpServers["docs"].headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}


def test_unknown_keys_and_ambiguous_transports_are_config_errors(tmp_path: Path) -> None:
    config_file = tmp_path / "planner.yml"
    config_file.write_text(
        "tools:\n  mcpServers:\n"
        "    a: {command: x, url: 'http://y'}\n"
        "    b: {command: x, cmd: y}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(config_file, env={})
    message = str(caught.value)
    assert "tools.mcpServers.a" in message
    assert "give exactly one of `command` (stdio) or `url` (streamable HTTP)" in message
    assert "tools.mcpServers.b.cmd" in message


def test_variables_expand_with_defaults(tmp_path: Path) -> None:
    config = tools_config(
        mcpServers={
            "s": {
                "command": "${TOOL_BIN:-/usr/bin}/server",
                "args": ["--token=${API_TOKEN}", "--mode=${MODE:-fast}", "--empty=${EMPTY}"],
                "env": {"TOKEN": "${API_TOKEN}", "LITERAL": "no $VARS here"},
            }
        }
    )
    env = {"API_TOKEN": "t0k", "EMPTY": ""}
    server = resolve_servers(config, tmp_path, env)["s"]
    assert server.command == "/usr/bin/server"
    assert server.args == ["--token=t0k", "--mode=fast", "--empty="]
    assert server.env == {"TOKEN": "t0k", "LITERAL": "no $VARS here"}
    assert (
        config.mcpServers["s"].args[0] == "--token=${API_TOKEN}"
    )  # the config itself keeps the reference


def test_undefined_variables_are_config_errors_naming_every_one(tmp_path: Path) -> None:
    config = tools_config(
        mcpServers={
            "remote": {
                "url": "https://${HOST}/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
            "local": {"command": "srv", "env": {"KEY": "${KEY_VALUE}"}},
        }
    )
    with pytest.raises(ConfigError) as caught:
        resolve_servers(config, tmp_path, {"TOKEN": "secret-value"})
    message = str(caught.value)
    assert "mcpServers.remote.url uses ${HOST}, which is not set (no default given)" in message
    assert "mcpServers.local.env.KEY uses ${KEY_VALUE}, which is not set" in message
    assert "Authorization" not in message
    assert "secret-value" not in message


def test_mcp_json_file_is_read_and_yaml_entries_win(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                    },
                    "git": {"command": "from-file"},
                }
            }
        ),
        encoding="utf-8",
    )
    config = tools_config(mcp_config_file=".mcp.json", mcpServers={"git": {"command": "from-yaml"}})
    servers = resolve_servers(config, tmp_path, {})
    assert sorted(servers) == ["fs", "git"]
    assert servers["git"].command == "from-yaml"
    assert servers["fs"].args[-1] == "."


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot be read"),
        ("{not json", "is not valid JSON"),
        ('{"servers": {}}', "must hold an object with 'mcpServers'"),
        (
            '{"mcpServers": {"x": {"args": ["a"]}}}',
            "mcpServers.x: Value error, give exactly one of",
        ),
        (
            '{"mcpServers": {"x": {"command": "c", "disabled": true}}}',
            "mcpServers.x.disabled: Extra inputs",
        ),
    ],
)
def test_bad_mcp_json_files_are_config_errors(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    if content is not None:
        (tmp_path / "mcp.json").write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tools\.mcp_config_file") as caught:
        resolve_servers(tools_config(mcp_config_file="mcp.json"), tmp_path, {})
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("git", "git_status", "git__git_status"),
        ("my server", "read.file", "my_server__read_file"),
        ("ünï", "tool/x", "_n___tool_x"),
        ("s", "t" * 100, "s__" + "t" * 61),
    ],
)
def test_exposed_names_fit_the_model_api(server: str, tool: str, expected: str) -> None:
    assert exposed_name(server, tool) == expected


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "INPUT_GITHUB_TOKEN",
        "GITLAB_TOKEN",
        "OPENAI_API_KEY",
        "INPUT_OPENAI_API_KEY",
        "CI_JOB_TOKEN",
    ],
)
def test_planners_own_credentials_never_expand(tmp_path: Path, name: str) -> None:
    config = tools_config(
        mcpServers={
            "s": {"command": "srv", "env": {"T": f"${{{name}}}"}},
            "r": {"url": "https://mcp.example.test", "headers": {"A": f"${{{name}:-x}}"}},
        }
    )
    env = {name: "the-real-credential", "OWN_TOKEN": "fine"}
    with pytest.raises(ConfigError) as caught:
        resolve_servers(config, tmp_path, env)
    message = str(caught.value)
    assert f"mcpServers.s.env.T uses ${{{name}}}, which holds planner's own credential" in message
    assert f"mcpServers.r.headers.A uses ${{{name}}}" in message
    assert "the-real-credential" not in message
    allowed = tools_config(mcpServers={"s": {"command": "srv", "env": {"T": "${OWN_TOKEN}"}}})
    assert resolve_servers(allowed, tmp_path, env)["s"].env == {"T": "fine"}


def test_servers_read_earlier_are_used_instead_of_the_file(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"planted": {"command": "evil"}}}), encoding="utf-8"
    )
    config = tools_config(mcp_config_file=".mcp.json")
    earlier = load_file_servers(config, tmp_path)
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"planted": {"command": "changed"}, "new": {"command": "x"}}}),
        encoding="utf-8",
    )
    servers = resolve_servers(config, tmp_path, {}, earlier)
    assert list(servers) == ["planted"] and servers["planted"].command == "evil"
    assert resolve_servers(config, tmp_path, {}, {}) == {}
