"""An OpenAI-compatible endpoint that only lists models (GET /v1/models), over a real socket,
as llama.cpp (each model's `meta.n_params`) or Ollama (`GET /api/tags` with each model's
`details.parameter_size`) list them when asked."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Listing:
    """An endpoint that lists `names` at GET /v1/models and counts the requests it got.
    `n_params`: llama.cpp's parameter counts by name; `ollama`: Ollama's sizes by name
    (`"3.2B"`), served at GET /api/tags (without them that path is not found)."""

    def __init__(
        self,
        names: list[str],
        n_params: dict[str, int] | None = None,
        ollama: dict[str, str] | None = None,
    ) -> None:
        self.names = names
        self.n_params = n_params or {}
        self.ollama = ollama
        self.requests: list[str] = []
        listing = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listing.requests.append(self.path)
                body = listing.reply(self.path)
                self.send_response(404 if body is None else 200)
                data = json.dumps(body or {"error": "not found"}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, path: str) -> dict[str, Any] | None:
        if path == "/v1/models":
            return {"object": "list", "data": [self._model(name) for name in self.names]}
        if path == "/api/tags" and self.ollama is not None:
            models = [
                {"name": name, "model": name, "details": {"format": "gguf", "parameter_size": size}}
                for name, size in self.ollama.items()
            ]
            return {"models": models}
        return None

    def _model(self, name: str) -> dict[str, Any]:
        model: dict[str, Any] = {"id": name, "object": "model", "owned_by": "x"}
        if name in self.n_params:
            model["meta"] = {"n_vocab": 151936, "n_params": self.n_params[name]}
        return model

    def __enter__(self) -> Listing:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
