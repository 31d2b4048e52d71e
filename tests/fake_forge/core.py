"""The HTTP plumbing shared by the fake GitHub and the fake GitLab.

A real ThreadingHTTPServer on 127.0.0.1 that serves

- the forge's REST API (routes supplied by the flavour: github.py / gitlab.py), with token
  checks, a request log, injectable failures and a deterministic clock;
- the repository over git's smart HTTP protocol through `git http-backend` (a real bare
  repository), accepting only the token in an Authorization header;
- "blob storage" at /blob/<key> for redirected downloads (artifacts): no token needed, and a
  request that carries one (Authorization or PRIVATE-TOKEN) is refused with 403, as pre-signed
  storage URLs are.

An API handler may answer bytes (served as application/zip) instead of JSON.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qsl, unquote, urlsplit

from tests.support.serving import serve_in_thread

JSON = Any
Reply = tuple[int, JSON, dict[str, str]]
Handler = Callable[[re.Match[str], dict[str, str], JSON], Reply]
BLOB_PATH = re.compile(r"^/blob/(?P<key>[0-9a-f]+)$")
CREDENTIAL_HEADERS = ("Authorization", "PRIVATE-TOKEN", "JOB-TOKEN")
GIT_PATH = re.compile(r"^/(?P<repo>.+?\.git)/(?P<rest>info/refs|git-upload-pack|git-receive-pack)$")
START = datetime(2025, 3, 3, 10, 0, 0, tzinfo=UTC)


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: JSON
    status: int = 0
    write: bool = False
    git: bool = False
    authorization: list[str] = field(default_factory=list)
    """Authorization headers as received (values are compared, never printed by tests)."""

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: JSON
    times: int
    after: bool = False
    """The request is carried out first, then answered with the error (a lost reply)."""


class FakeServerBase:
    """Subclasses set `api_prefix` and `routes`, and implement `authorized` / `git_user_ok`."""

    api_prefix = ""
    repository = ""

    page_size = 2
    """The most items a page of a list holds (small, so that tests see pagination)."""

    def __init__(self, root: Path, token: str) -> None:
        self.root = root
        self.token = token
        self.log: list[LoggedRequest] = []
        self.failures: list[Failure] = []
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._lock = threading.RLock()
        self._ticks = 0
        self.blobs: dict[str, bytes] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.git_root = root / "git"
        self.bare = self.git_root / f"{self.repository}.git"
        make_bare_repository(self.bare, root / "seed")

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeServerBase:
        self._server, self._thread = serve_in_thread(_handler_for(self))
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        """`with FakeGitHub(...) as forge:` serves for the block, stopped however it ends."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return self.base_url + self.api_prefix

    @property
    def git_url(self) -> str:
        return f"{self.base_url}/{self.repository}.git"

    # -- helpers for tests -----------------------------------------------------------------------

    def now(self) -> str:
        """A deterministic clock: every call is one minute later."""
        with self._lock:
            self._ticks += 1
            stamp = START + timedelta(minutes=self._ticks)
        return stamp.isoformat().replace("+00:00", "Z")

    def fail(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: JSON = None,
        times: int = 1,
        after: bool = False,
    ) -> None:
        """Answer the next `times` matching API requests with this error instead (`after`:
        carry the request out, then answer with the error, as when a reply is lost)."""
        body = body if body is not None else {"message": f"injected HTTP {status}"}
        self.failures.append(
            Failure(method, re.compile(path_pattern), status, headers or {}, body, times, after)
        )

    def publish_blob(self, data: bytes) -> str:
        """Put `data` in the fake blob storage; the pre-signed URL it is served at."""
        key = os.urandom(8).hex()
        with self._lock:
            self.blobs[key] = data
        return f"{self.base_url}/blob/{key}"

    def blob_requests(self) -> list[LoggedRequest]:
        return [entry for entry in self.log if entry.path.startswith("/blob/")]

    def writes(self) -> list[LoggedRequest]:
        return [entry for entry in self.log if entry.write]

    def api_requests(self, method: str | None = None) -> list[LoggedRequest]:
        return [
            e
            for e in self.log
            if not e.git and not BLOB_PATH.match(e.path) and method in (None, e.method)
        ]

    def branches(self) -> dict[str, str]:
        out = git(
            self.bare, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"
        )
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def lines_at(self, commit: str, path: str, line: int, start_line: int | None) -> list[str]:
        """Lines start_line..line (or the one line) of `path` at `commit`: what a review comment
        on them quotes."""
        text = git(self.bare, "show", f"{commit}:{path}").split("\n")
        return text[(start_line or line) - 1 : line]

    def page_of(self, items: list[JSON], q: dict[str, str], size: int) -> tuple[list[JSON], bool]:
        """The page `q` asks for (`size` items a page unless it says `per_page`, at most the
        fake's page_size) and whether another follows."""
        per_page = min(int(q.get("per_page", size)), self.page_size)
        page = int(q.get("page", 1))
        return items[(page - 1) * per_page : page * per_page], page * per_page < len(items)

    def branch_exists(self, name: str) -> bool:
        return name in self.branches()

    def push_main(self, files: dict[str, str], message: str) -> None:
        """Commit `files` (relative path -> text) on main and push it, as a maintainer would."""
        seed = self.root / "seed"
        for name, text in files.items():
            (seed / name).parent.mkdir(parents=True, exist_ok=True)
            (seed / name).write_text(text, encoding="utf-8")
        git(seed, "add", ".")
        git(seed, "commit", "-q", "-m", message, env=IDENTITY)
        git(seed, "push", "-q", str(self.bare), "main")

    def push_branch(self, name: str, path: str = "NOTES.md", content: str = "notes\n") -> str:
        """Add a commit on `name` (from main) to the bare repository, as another client would."""
        seed = self.root / "seed"
        git(seed, "checkout", "-q", "-B", name, "main")
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(content, encoding="utf-8")
        git(seed, "add", ".")
        git(seed, "commit", "-q", "-m", f"Add {path}", env=IDENTITY)
        git(seed, "push", "-q", "-f", str(self.bare), name)
        git(seed, "checkout", "-q", "main")
        return git(seed, "rev-parse", name)

    # -- to implement ----------------------------------------------------------------------------

    def authorized(self, headers: Any) -> bool:
        raise NotImplementedError

    def git_user_ok(self, username: str, password: str) -> bool:
        raise NotImplementedError

    def check_request(self, method: str, raw_path: str, body: JSON) -> None:
        """Flavour hook: validate the request (the GitHub fake checks the OpenAPI document)."""

    # -- dispatch --------------------------------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: Any, raw_body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(raw_path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        git_match = GIT_PATH.match(parts.path)
        if git_match:
            return self._git(method, git_match, parts.query, headers, raw_body)
        blob_match = BLOB_PATH.match(parts.path)
        if blob_match:
            return self._blob(method, blob_match["key"], parts.path, headers)
        body = _json_body(raw_body)
        entry = LoggedRequest(
            method,
            parts.path,
            query,
            body,
            write=method not in ("GET", "HEAD"),
            authorization=headers.get_all("Authorization") or [],
        )
        with self._lock:
            self.log.append(entry)
        status, data, extra = self._api(method, parts.path, raw_path, query, headers, body)
        entry.status = status
        if isinstance(data, bytes):
            return status, {"Content-Type": "application/zip", **extra}, data
        payload = b"" if data is None else json.dumps(data).encode()
        return status, {"Content-Type": "application/json", **extra}, payload

    def _blob(
        self, method: str, key: str, path: str, headers: Any
    ) -> tuple[int, dict[str, str], bytes]:
        sent = [value for name in CREDENTIAL_HEADERS for value in headers.get_all(name) or []]
        entry = LoggedRequest(method, path, {}, None, authorization=sent)
        with self._lock:
            self.log.append(entry)
            data = self.blobs.get(key)
        if sent:
            entry.status = 403
            return 403, {}, b"<Error>Only the signature may authorize this request</Error>"
        entry.status = 200 if data is not None else 404
        return entry.status, {"Content-Type": "application/zip"}, data or b""

    def _api(
        self, method: str, path: str, raw_path: str, query: dict[str, str], headers: Any, body: JSON
    ) -> Reply:
        self.check_request(method, raw_path, body)
        if not self.authorized(headers):
            return 401, {"message": "Bad credentials"}, {}
        injected = self._injected(method, path)
        if injected is not None:
            return injected
        if not path.startswith(self.api_prefix):
            return 404, {"message": "Not Found"}, {}
        inner = unquote_path(path[len(self.api_prefix) :])
        for route_method, pattern, handler in self.routes:
            found = pattern.fullmatch(inner)
            if found and route_method == method:
                with self._lock:
                    reply = handler(found, query, body)
                return self._injected(method, path, after=True) or reply
        return 404, {"message": f"Not Found (no fake route for {method} {inner})"}, {}

    def _injected(self, method: str, path: str, *, after: bool = False) -> Reply | None:
        with self._lock:
            for failure in self.failures:
                if failure.after != after:
                    continue
                if failure.times > 0 and failure.method == method and failure.pattern.search(path):
                    failure.times -= 1
                    return failure.status, failure.body, failure.headers
        return None

    # -- git smart HTTP --------------------------------------------------------------------------

    def _git(
        self, method: str, found: re.Match[str], query: str, headers: Any, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        pushing = found["rest"] == "git-receive-pack" or "service=git-receive-pack" in query
        received = headers.get_all("Authorization") or []
        entry = LoggedRequest(
            method,
            f"/{found['repo']}/{found['rest']}",
            dict(parse_qsl(query)),
            None,
            write=pushing,
            git=True,
            authorization=received,
        )
        with self._lock:
            self.log.append(entry)
        if len(received) != 1 or not self._basic_ok(received[0]):
            entry.status = 401
            return 401, {"WWW-Authenticate": 'Basic realm="fake"'}, b"authentication required\n"
        status, reply_headers, payload = run_http_backend(
            self.git_root, f"/{found['repo']}/{found['rest']}", method, query, headers, body
        )
        entry.status = status
        return status, reply_headers, payload

    def _basic_ok(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(value).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        return self.git_user_ok(user, password)


def unquote_path(path: str) -> str:
    """Percent-decode each segment but keep encoded slashes distinguishable as %2F."""
    return "/".join(unquote(part).replace("/", "%2F") for part in path.split("/"))


def _json_body(raw: bytes) -> JSON:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"__invalid_json__": raw[:200].decode(errors="replace")}


def _handler_for(server: FakeServerBase) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            body = self._read_body()
            status, headers, payload = server.handle(self.command, self.path, self.headers, body)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return self._read_chunked()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _read_chunked(self) -> bytes:
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


# -- git -----------------------------------------------------------------------------------------


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


IDENTITY = {
    "GIT_AUTHOR_NAME": "Seed",
    "GIT_AUTHOR_EMAIL": "seed@example.invalid",
    "GIT_COMMITTER_NAME": "Seed",
    "GIT_COMMITTER_EMAIL": "seed@example.invalid",
}


def make_bare_repository(bare: Path, seed: Path) -> None:
    """A bare repository whose `main` has one commit with a README."""
    bare.parent.mkdir(parents=True, exist_ok=True)
    git(bare.parent, "init", "-q", "--bare", "-b", "main", str(bare))
    seed.mkdir(parents=True)
    git(seed, "init", "-q", "-b", "main")
    (seed / "README.md").write_text(
        "# hello\n\nRun the tests with `python -m unittest`.\n", encoding="utf-8"
    )
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "Initial commit", env=IDENTITY)
    git(seed, "push", "-q", str(bare), "main")


def run_http_backend(
    project_root: Path, path_info: str, method: str, query: str, headers: Any, body: bytes
) -> tuple[int, dict[str, str], bytes]:
    """Serve one smart-HTTP request with `git http-backend` (CGI)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GIT_PROJECT_ROOT": str(project_root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": path_info,
        "REQUEST_METHOD": method,
        "QUERY_STRING": query,
        "CONTENT_TYPE": headers.get("Content-Type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": "token-user",
        "REMOTE_ADDR": "127.0.0.1",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = headers["Content-Encoding"]
    if headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = headers["Git-Protocol"]
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = done.stdout.partition(b"\n\n")
    status, reply_headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            reply_headers[name.strip()] = value.strip()
    return status, reply_headers, payload
