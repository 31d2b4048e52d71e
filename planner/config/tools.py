"""tools — the workspace tools and MCP servers the model may call."""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import Field, field_validator, model_validator

from planner.config.base import Section, command_words
from planner.text.redaction import is_secret_name


class McpServerConfig(Section):
    """tools.mcpServers.<name> — one MCP server, in the common `mcpServers` shape.

    Strings may use `${VAR}` and `${VAR:-default}`; they are expanded from the environment when
    the pass starts (an undefined variable without a default is a configuration error).
    """

    type: Literal["stdio", "http", "streamable-http"] | None = None
    """Transport; inferred when omitted (`command` means stdio, `url` means streamable HTTP)."""
    command: str | None = None
    """stdio: the program to start."""
    args: list[str] = Field(default_factory=list)
    """stdio: its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: extra environment variables. Nothing else is inherited except PATH, HOME, USER,
    LOGNAME, SHELL and TERM, so tokens reach a server only when listed here."""
    cwd: str | None = None
    """stdio: working directory, relative to the workspace; default the workspace itself."""
    url: str | None = None
    """streamable HTTP: the endpoint URL."""
    headers: dict[str, str] = Field(default_factory=dict)
    """streamable HTTP: headers sent with every request (e.g. Authorization)."""
    allow_tools: list[str] | None = None
    """Only these tools (names or fnmatch patterns) are offered; None offers every tool."""
    deny_tools: list[str] = Field(default_factory=list)
    """Tools (names or fnmatch patterns) never offered, even when allowed."""
    timeout_seconds: float | None = Field(default=None, gt=0)
    """Per-call timeout for this server; None uses tools.mcp_call_timeout_seconds."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type stdio needs `command`")
        if self.type in ("http", "streamable-http") and self.url is None:
            raise ValueError(f"type {self.type} needs `url`")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


class ToolsConfig(Section):
    """tools — the workspace tools and MCP servers the model may call."""

    max_read_bytes: int = Field(default=200_000, ge=1)
    """read_file returns at most this many bytes and says when it cut."""
    max_write_bytes: int = Field(default=1_000_000, ge=1)
    """write_file and edit_file refuse content larger than this."""
    allow_workflow_edits: bool = False
    """Allow writes under .github/workflows/ and to .gitlab-ci.yml (CI that runs with secrets)."""
    allowed_commands: list[str] = Field(default_factory=list)
    """run_command accepts an argv only if it starts with one of these prefixes, written as a
    command line (`python -m pytest`, `npm test`). Empty (the default) disables run_command."""
    command_timeout_seconds: float = Field(default=300.0, gt=0)
    """run_command kills the command's whole process group after this many seconds."""
    max_output_bytes: int = Field(default=20_000, ge=200)
    """Cap per output stream of run_command, and for MCP and search results; longer output is
    cut in the middle with the sizes noted."""
    max_search_results: int = Field(default=100, ge=1)
    """search_files lists at most this many matching lines (and counts the rest)."""
    search_timeout_seconds: float = Field(default=30.0, gt=0)
    """search_files gives up after this many seconds (a pathological regex cannot hang a pass)."""
    mcpServers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """MCP servers by name; their tools appear to the model as `<name>__<tool>`."""
    mcp_config_file: str | None = None
    """A `.mcp.json`-style file (`{"mcpServers": {...}}`), relative to the workspace; entries in
    mcpServers above win over same-named entries in the file. The file is write-protected."""
    mcp_call_timeout_seconds: float = Field(default=120.0, gt=0)
    """Default timeout of one MCP tool call."""
    mcp_startup_timeout_seconds: float = Field(default=30.0, gt=0)
    """An MCP server that has not listed its tools after this long is reported and left out."""
    env_passthrough: list[str] = Field(default_factory=list)
    """Environment variables run_command and MCP servers inherit besides the built-in
    allow-list (PATH, HOME, locale, certificates, proxies). A name that looks like a credential
    (TOKEN, KEY, SECRET, PASSWORD, ...) is refused: tools never see a secret."""
    sandbox_user: str = Field(default="auto", pattern=r"^(auto|off|\d+(:\d+)?)$")
    """Which user runs commands and MCP servers when planner runs as root: `auto` (the
    workspace's owner, or uid 65534 when root owns it or its owner runs a process above planner,
    as under `sudo`; always with group 65534: a GitHub-hosted runner's user has the group docker,
    whose socket a Docker action is given), `off`, or `UID[:GID]`. A different user cannot read
    planner's or the CI job's process memory and environment."""

    @field_validator("env_passthrough")
    @classmethod
    def _no_secret_passthrough(cls, names: list[str]) -> list[str]:
        refused = [name for name in names if _credential_name(name)]
        if refused:
            raise ValueError(f"credentials are never passed to tools: {', '.join(refused)}")
        return names

    @field_validator("allowed_commands")
    @classmethod
    def _prefixes_split(cls, prefixes: list[str]) -> list[str]:
        for prefix in prefixes:
            if not command_words(prefix, "command prefix "):
                raise ValueError(f"command prefix {prefix!r} is empty")
        return prefixes

    @property
    def command_prefixes(self) -> list[tuple[str, ...]]:
        """allowed_commands as argv prefixes."""
        return [tuple(shlex.split(prefix)) for prefix in self.allowed_commands]


def _credential_name(name: str) -> bool:
    return is_secret_name(name)  # the one rule, shared with the tools
