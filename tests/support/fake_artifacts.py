"""A fake of GitHub's artifact endpoints and of the blob storage they redirect to (127.0.0.1).

    with FakeArtifactServer(token="ghs_test") as fake:
        fake.add("planner-history-7", zip_bytes, created_at="2026-01-02T00:00:00Z")
        backend = ArtifactHistoryBackend(fake.base_url, fake.repository, "ghs_test")

- `GET /repos/{owner}/{repo}/actions/artifacts?name=&per_page=` lists artifacts newest first,
  shaped as GitHub's `artifact` schema (expired ones included, as GitHub does). Needs the token.
- `GET .../actions/artifacts/{id}/zip` answers 302 to a pre-signed `/blob/{id}?sig=...` URL on
  the same host (so an HTTP client would keep the Authorization header when following it), 410
  for an artifact marked `gone`. Needs the token.
- `GET /blob/{id}?sig=...` serves the bytes, and answers 403 to any request that carries an
  Authorization header, as blob storage does. `truncate_at` closes the connection early.

Every request is recorded in `requests` (method, path, query, headers) for assertions.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.serving import serve_in_thread

REPOSITORY_ID = 42
FORK_REPOSITORY_ID = 4242


@dataclass
class StoredArtifact:
    """One artifact the fake knows, with the bytes of its zip."""

    id: int
    name: str
    data: bytes
    created_at: str
    expired: bool = False
    gone: bool = False
    head_repository_id: int = REPOSITORY_ID
    digest: str | None = None
    truncate_at: int | None = None
    signature: str = field(default_factory=lambda: secrets.token_hex(8))

    def to_api(self, api_url: str, repository: str) -> dict[str, Any]:
        url = f"{api_url}/repos/{repository}/actions/artifacts/{self.id}"
        return {
            "id": self.id,
            "node_id": f"MDg6QXJ0aWZhY3Q{self.id}",
            "name": self.name,
            "size_in_bytes": len(self.data),
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": self.expired,
            "created_at": self.created_at,
            "updated_at": self.created_at,
            "expires_at": "2020-01-01T00:00:00Z" if self.expired else "2999-01-01T00:00:00Z",
            "digest": self.digest,
            "workflow_run": {
                "id": 1000 + self.id,
                "repository_id": REPOSITORY_ID,
                "head_repository_id": self.head_repository_id,
                "head_branch": "main",
                "head_sha": "009b8a3a9ccbb128af87f9b1c0f4c62e8a304f6d",
            },
        }


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


class FakeArtifactServer:
    """GitHub's artifact API and blob storage on one loopback port."""

    def __init__(self, repository: str = "octo-org/hello-world", token: str = "ghs_test") -> None:
        self.repository = repository
        self.token = token
        self.artifacts: list[StoredArtifact] = []
        self.requests: list[Request] = []
        self.list_status = 200
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def add(self, name: str, data: bytes, created_at: str, **options: Any) -> StoredArtifact:
        artifact = StoredArtifact(len(self.artifacts) + 1, name, data, created_at, **options)
        if artifact.digest is None:
            artifact.digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.artifacts.append(artifact)
        return artifact

    def api_requests(self) -> list[Request]:
        return [request for request in self.requests if not request.path.startswith("/blob/")]

    def blob_requests(self) -> list[Request]:
        return [request for request in self.requests if request.path.startswith("/blob/")]

    # -- lifecycle

    def start(self) -> FakeArtifactServer:
        self._httpd, self._thread = serve_in_thread(_Handler)
        self._httpd.fake = self  # type: ignore[attr-defined]
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeArtifactServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    # -- endpoints (called by the handler)

    def route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> _Reply:
        parts = path.strip("/").split("/")
        if parts[0] == "blob" and len(parts) == 2:
            return self.blob(int(parts[1]), query, headers)
        if headers.get("authorization") != f"Bearer {self.token}":
            return _Reply.json(401, {"message": "Bad credentials"})
        prefix = f"repos/{self.repository}/actions/artifacts".split("/")
        rest = parts[len(prefix) :]
        if parts[: len(prefix)] != prefix:
            return _Reply.json(404, {"message": "Not Found"})
        if not rest:
            return self.listing(query)
        if len(rest) == 2 and rest[1] == "zip":
            return self.zip_redirect(int(rest[0]))
        return _Reply.json(404, {"message": "Not Found"})

    def listing(self, query: dict[str, str]) -> _Reply:
        if self.list_status != 200:
            return _Reply.json(self.list_status, {"message": "Resource not accessible"})
        name = query.get("name")
        matching = [a for a in self.artifacts if name is None or a.name == name]
        newest = sorted(matching, key=lambda a: a.created_at, reverse=True)
        page = newest[: int(query.get("per_page", "30"))]
        body = [artifact.to_api(self.base_url, self.repository) for artifact in page]
        return _Reply.json(200, {"total_count": len(matching), "artifacts": body})

    def zip_redirect(self, artifact_id: int) -> _Reply:
        artifact = self.find(artifact_id)
        if artifact is None:
            return _Reply.json(404, {"message": "Not Found"})
        if artifact.gone:
            return _Reply.json(410, {"message": "Artifact has expired"})
        location = f"{self.base_url}/blob/{artifact.id}?sig={artifact.signature}"
        return _Reply(302, b"", {"Location": location})

    def blob(self, artifact_id: int, query: dict[str, str], headers: dict[str, str]) -> _Reply:
        artifact = self.find(artifact_id)
        if "authorization" in headers:
            return _Reply(403, b"<Error>Authorization header not allowed</Error>", {})
        if artifact is None or query.get("sig") != artifact.signature:
            return _Reply(403, b"<Error>Signature did not match</Error>", {})
        return _Reply(200, artifact.data, {"Content-Type": "application/zip"}, artifact.truncate_at)

    def find(self, artifact_id: int) -> StoredArtifact | None:
        return next((a for a in self.artifacts if a.id == artifact_id), None)


@dataclass
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str]
    truncate_at: int | None = None

    @classmethod
    def json(cls, status: int, document: object) -> _Reply:
        body = json.dumps(document).encode()
        return cls(status, body, {"Content-Type": "application/json"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        fake: FakeArtifactServer = self.server.fake  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        headers = {key.lower(): value for key, value in self.headers.items()}
        fake.requests.append(Request("GET", parts.path, query, headers))
        self.send(fake.route(parts.path, query, headers))

    def send(self, reply: _Reply) -> None:
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(reply.body)))
        if reply.truncate_at is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        cut = len(reply.body) if reply.truncate_at is None else reply.truncate_at
        self.wfile.write(reply.body[:cut])
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is in `FakeArtifactServer.requests`."""
