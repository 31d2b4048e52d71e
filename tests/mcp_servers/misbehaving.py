"""A stdio MCP server (built with the `mcp` package) whose tools misbehave on request.

    python tests/mcp_servers/misbehaving.py

Tools: echo (works), fail (the tool reports an error), crash (the process dies mid-call),
hang (never answers; for call timeouts), and with MISBEHAVING_DELETE_LATER set delete_later
(deletes a file after the call returned), with MISBEHAVING_TEMPORARY_FOLDER set temporary_folder.
Used by the tests and the benchmark. With
MISBEHAVING_PID_FILE set it writes its process id there at start.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading

import anyio
from mcp.server.mcpserver import MCPServer

# Plain log lines: the SDK's default handler draws each tool error's traceback with rich, which
# takes most of a second and once made a tool error outlast a 2-second call timeout in CI.
logging.basicConfig(level=logging.ERROR, format="%(message)s")
server = MCPServer("misbehaving")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail(message: str) -> str:
    """Raise an error with the given message."""
    raise ValueError(message)


@server.tool()
def crash() -> str:
    """Kill this server process in the middle of the call."""
    os._exit(17)


def temporary_folder() -> str:
    """The folder this server's temporary files go to."""
    return tempfile.gettempdir()


def delete_later(path: str, seconds: float) -> str:
    """Delete the file at `path` a while after the call returned (a server writing later)."""
    threading.Timer(seconds, lambda: os.path.exists(path) and os.unlink(path)).start()
    return f"{path} goes in {seconds}s"


@server.tool()
async def hang() -> str:
    """Never return."""
    await anyio.sleep_forever()
    return "unreachable"


if __name__ == "__main__":
    if "MISBEHAVING_DELETE_LATER" in os.environ:  # only where a test asks for it
        server.tool()(delete_later)
    if "MISBEHAVING_TEMPORARY_FOLDER" in os.environ:
        server.tool()(temporary_folder)
    if "MISBEHAVING_PID_FILE" in os.environ:  # lets tests check the process is gone afterwards
        with open(os.environ["MISBEHAVING_PID_FILE"], "w") as handle:
            handle.write(str(os.getpid()))
    server.run("stdio")
