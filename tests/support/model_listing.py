"""An OpenAI-compatible endpoint that only lists models (GET /v1/models), over a real socket."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Listing:
    """An endpoint that lists `names` at GET /v1/models and counts the requests it got."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.requests: list[str] = []
        listing = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listing.requests.append(self.path)
                data = [{"id": name, "object": "model", "owned_by": "x"} for name in names]
                body = json.dumps({"object": "list", "data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Listing:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
