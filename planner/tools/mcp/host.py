"""MCP servers as synchronous ToolProviders.

Each server's session lives in one asyncio task on a shared LoopThread (anyio scopes must be
entered and left by the same task); tool calls are submitted to that loop and waited for with
a timeout. A server that fails to start, or dies later, records a `problem` once (and logs it),
and from then on offers no tools: the registry leaves them out and the pass goes on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import fnmatch
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from planner.config import McpServerConfig, ToolsConfig
from planner.core.interfaces import ToolResult, ToolSpec
from planner.tools.mcp.loop import LoopThread
from planner.tools.output import cap_text
from planner.tools.sandbox.isolation import SandboxUser, private_folder
from planner.tools.sandbox.safe_env import scrubbed_environment

log = logging.getLogger(__name__)

SEPARATOR = "__"
INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64
CALL_GRACE_SECONDS = 5.0
STDERR_TAIL = 2_000
MAX_LIST_PAGES = 100


def exposed_name(server: str, tool: str) -> str:
    """`<server>__<tool>`, made to fit the model API's ^[a-zA-Z0-9_-]{1,64}$."""
    name = INVALID_NAME_CHARS.sub("_", f"{server}{SEPARATOR}{tool}")
    return name[:MAX_NAME]


class McpServer:
    """One MCP server (stdio or streamable HTTP) behind the ToolProvider protocol."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        settings: ToolsConfig,
        workspace: Path,
        loop: LoopThread,
        sandbox: SandboxUser | None = None,
    ) -> None:
        self.name = name
        self._sandbox = sandbox
        self.problem: str | None = None
        self._config, self._settings, self._workspace = config, settings, workspace
        self._loop = loop
        self._timeout = config.timeout_seconds or settings.mcp_call_timeout_seconds
        self._routes: dict[str, str] = {}
        self._specs: list[ToolSpec] = []
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._ready: concurrent.futures.Future[list[mcp_types.Tool]] = concurrent.futures.Future()
        self._stderr: IO[str] | None = None
        self._temporary: Path | None = None
        """A stdio server's TMPDIR, removed once the server is gone."""

    # -- lifecycle (called by McpHost) --------------------------------------------------------

    def start(self) -> None:
        """Begin connecting; wait_ready() collects the outcome."""
        self._task = self._loop.run(_spawn(self._lifetime()))

    def wait_ready(self, remaining: float, timeout: float) -> None:
        """Wait up to `remaining` seconds of the shared start-up `timeout`."""
        try:
            listing = self._ready.result(remaining)
        except concurrent.futures.TimeoutError:
            self._fail(f"did not start within {timeout:g}s")
            self._cancel()
        except Exception as exc:
            self._fail(f"did not start: {describe_error(exc)}")
        else:
            self._adopt(listing)

    def request_stop(self) -> None:
        self._stopping = True
        if self._stop is not None:
            self._loop.call_soon(self._stop.set)

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def release(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)

    # -- ToolProvider -----------------------------------------------------------------------

    def list_tools(self) -> list[ToolSpec]:
        return [] if self.problem else list(self._specs)

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = self._routes.get(name)
        if tool is None:
            return ToolResult(ok=False, error=f"MCP server {self.name!r} has no tool {name!r}")
        if self.problem is not None or self._client is None:
            why = self.problem or "it is not running"
            return ToolResult(ok=False, error=f"MCP server {self.name!r} is unavailable: {why}")
        return self._wait_for(tool, self._loop.submit(self._call(tool, arguments)))

    def close(self) -> None:
        """Servers are closed together by McpHost.close (it owns the loop)."""
        self.request_stop()

    # -- internals --------------------------------------------------------------------------

    async def _lifetime(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(self._transport(), mode="auto") as client:
                listing = await _list_all(client)
                self._client = client
                self._ready.set_result(listing)
                await self._stop.wait()
        except BaseException as exc:
            self._ended(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    def _ended(self, exc: BaseException) -> None:
        if not self._ready.done():
            self._ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
        elif not self._stopping:
            self._fail(f"stopped unexpectedly: {describe_error(exc)}")

    def _transport(self) -> Any:
        config = self._config
        if config.command is not None:
            # Lives as long as the server (its stderr goes there); closed in release().
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            return stdio_client(self._stdio_parameters(config.command), errlog=self._stderr)
        assert config.url is not None
        return _http_transport(config.url, config.headers)

    def _stdio_parameters(self, command: str) -> StdioServerParameters:
        """The server's launch: an allow-listed environment plus its own `env`, and under the
        sandbox user (through the launcher) when planner runs as root. Its TMPDIR is a folder of
        its own, as run_command's is, unless its `env` names one."""
        cwd = self._workspace / self._config.cwd if self._config.cwd else self._workspace
        env = scrubbed_environment(os.environ, self._settings.env_passthrough)
        self._temporary = private_folder("planner-mcp-tmp-", self._sandbox)
        env["TMPDIR"] = str(self._temporary)
        argv = [command, *self._config.args]
        if self._sandbox is not None:
            _must_exist(command, env.get("PATH"))
            env.update(self._sandbox.environment())
            argv = self._sandbox.wrap(argv)
        return StdioServerParameters(
            command=argv[0], args=argv[1:], env={**env, **self._config.env}, cwd=cwd
        )

    def _adopt(self, listing: list[mcp_types.Tool]) -> None:
        for tool in listing:
            if not self._offered(tool.name):
                continue
            name = exposed_name(self.name, tool.name)
            if name in self._routes:
                log.warning("MCP tool %s of %s clashes after renaming; skipped", tool.name, name)
                continue
            self._routes[name] = tool.name
            self._specs.append(_spec(name, tool))

    def _offered(self, tool: str) -> bool:
        allow, deny = self._config.allow_tools, self._config.deny_tools
        if allow is not None and not any(fnmatch.fnmatchcase(tool, p) for p in allow):
            return False
        return not any(fnmatch.fnmatchcase(tool, pattern) for pattern in deny)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        assert self._client is not None
        return await self._client.call_tool(tool, arguments, read_timeout_seconds=self._timeout)

    def _wait_for(
        self, tool: str, future: concurrent.futures.Future[mcp_types.CallToolResult]
    ) -> ToolResult:
        try:
            result = future.result(self._timeout + CALL_GRACE_SECONDS)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return self._timed_out(tool)
        except MCPError as exc:
            return self._protocol_error(tool, exc)
        except Exception as exc:
            return ToolResult(ok=False, error=f"{tool} failed: {describe_error(exc)}")
        return tool_result(result, self._settings.max_output_bytes)

    def _timed_out(self, tool: str) -> ToolResult:
        return ToolResult(
            ok=False,
            error=f"{self.name}/{tool} timed out after {self._timeout:g}s (the call was cancelled)",
        )

    def _protocol_error(self, tool: str, exc: MCPError) -> ToolResult:
        if exc.code == mcp_types.REQUEST_TIMEOUT:
            return self._timed_out(tool)
        if exc.code == mcp_types.CONNECTION_CLOSED:
            self._fail(f"died during a call to {tool}")
            return ToolResult(ok=False, error=f"MCP server {self.name!r} died during the call")
        return ToolResult(ok=False, error=f"{tool} failed: {exc.error.message}")

    def _fail(self, problem: str) -> None:
        """Record the first problem only: a dead server is reported once."""
        if self.problem is not None:
            return
        self.problem = f"MCP server {self.name!r} {problem}; its tools are left out"
        log.warning("%s%s", self.problem, self._stderr_tail())

    def _stderr_tail(self) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        tail = os.pread(fd, STDERR_TAIL, max(0, size - STDERR_TAIL)).decode(errors="replace")
        return f"\n--- its stderr (last {STDERR_TAIL} bytes) ---\n{tail}" if tail else ""

    def _cancel(self) -> None:
        if self._task is not None:
            self._loop.call_soon(self._task.cancel)


async def _spawn(coroutine: Any) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coroutine)


async def _list_all(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _spec(name: str, tool: mcp_types.Tool) -> ToolSpec:
    parameters = dict(tool.input_schema)
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    return ToolSpec(
        name=name, description=tool.description or tool.title or "", parameters=parameters
    )


def tool_result(result: mcp_types.CallToolResult, limit: int) -> ToolResult:
    """An MCP tool result as the model sees it: text blocks, other blocks described."""
    parts = [_block_text(block) for block in result.content]
    if result.structured_content is not None and not any(
        isinstance(block, mcp_types.TextContent) for block in result.content
    ):
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = cap_text("\n".join(parts), limit, "tool output")
    if result.is_error:
        return ToolResult(ok=False, error="the tool reported an error", content=text)
    return ToolResult(ok=True, content=text)


def _block_text(block: Any) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[binary resource {resource.uri}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.uri}]"
    mime = getattr(block, "mime_type", "unknown type")
    return f"[{getattr(block, 'type', 'content')} block ({mime}) not shown]"


def _must_exist(command: str, path: str | None) -> None:
    """A program name not on PATH: the launcher would start anyway and die, which reads as a
    closed connection; say "command not found" as a direct start does."""
    if os.sep not in command and shutil.which(command, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


def describe_error(exc: BaseException) -> str:
    """A one-line description, looking inside exception groups (anyio task groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class McpHost:
    """Starts every configured server once per pass, and shuts them all down together."""

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        settings: ToolsConfig,
        workspace: Path,
        sandbox: SandboxUser | None = None,
    ) -> None:
        self._loop = LoopThread()
        self.servers = [
            McpServer(name, config, settings, workspace, self._loop, sandbox)
            for name, config in servers.items()
        ]
        self._startup_timeout = settings.mcp_startup_timeout_seconds

    def start(self) -> list[McpServer]:
        """Start all servers concurrently; each one is up or has a problem on return."""
        deadline = time.monotonic() + self._startup_timeout
        for server in self.servers:
            server.start()
        for server in self.servers:
            server.wait_ready(max(0.0, deadline - time.monotonic()), self._startup_timeout)
        return self.servers

    def close(self) -> None:
        for server in self.servers:
            server.request_stop()
        tasks = [server.task for server in self.servers if server.task is not None]
        if tasks:
            try:
                self._loop.run(_finish(tasks), timeout=30.0)
            except concurrent.futures.TimeoutError:
                log.warning("MCP servers did not shut down within 30s; cancelling them")
        self._loop.stop()
        for server in self.servers:
            server.release()


async def _finish(tasks: list[asyncio.Task[None]]) -> None:
    await asyncio.wait(tasks, timeout=25.0)
