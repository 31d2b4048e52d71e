"""A streamable-HTTP MCP server (built with the `mcp` package) on 127.0.0.1.

    python tests/mcp_servers/http_server.py EXPECTED_BEARER_TOKEN

Binds an ephemeral port, prints `PORT <n>` on stdout, then serves /mcp. Every request must carry
`Authorization: Bearer <EXPECTED_BEARER_TOKEN>` (proves configured headers are sent); others get
401. Tools: add, shout, fail.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("arith")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
def fail() -> str:
    """Always fails."""
    raise RuntimeError("this tool always fails")


class RequireBearer:
    """ASGI middleware: 401 unless the Authorization header matches."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", []))
        if scope["type"] == "http" and headers.get(b"authorization") != self.expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await self.app(scope, receive, send)


def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    # Listen before announcing the port: the kernel queues early connections until uvicorn
    # accepts, instead of refusing them while it is still starting (a race under load).
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    app = RequireBearer(server.streamable_http_app(), sys.argv[1])
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [listener])


if __name__ == "__main__":
    main()
