"""A small JSON-over-HTTP client for forge REST APIs: auth, bounded retries, pagination.

Retries 5xx, 429, connection errors and secondary rate limits (403 with `retry-after`, or
`x-ratelimit-remaining: 0` with `x-ratelimit-reset`), waiting what the server asks for, up to
a bound; every other error becomes an ApiError whose message names the fix (the adapter
supplies the hint). The token is sent by a requests auth hook, never logged, never in URLs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.auth import AuthBase

from planner.core.errors import ApiError

log = logging.getLogger(__name__)

Hint = Callable[[str, str, int, str], str]
"""(method, path, status, server message) -> how to fix it ('' when there is nothing to say)."""

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SECONDARY_LIMIT_TEXT = "secondary rate limit"


class HeaderAuth(AuthBase):
    """Adds one header; requests drops it on redirects to another host."""

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers[self.name] = self.value
        return request

    def __repr__(self) -> str:
        return f"HeaderAuth({self.name!r})"


@dataclass
class Reply:
    status: int
    data: Any
    headers: Mapping[str, str]
    url: str


@dataclass
class RetryPolicy:
    max_retries: int = 5
    max_wait: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    waits: list[float] = field(default_factory=list)
    """Every wait taken, for logs and tests."""


class JsonClient:
    def __init__(
        self,
        base_url: str,
        *,
        auth: AuthBase,
        service: str,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        hint: Hint | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.auth = auth
        self.service = service
        self.headers = {"User-Agent": "planner", **(headers or {})}
        self.session = session or requests.Session()
        self.retry = retry or RetryPolicy()
        self.hint = hint or (lambda method, path, status, message: "")
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        allow: tuple[int, ...] = (),
        already_done: Callable[[], Any] | None = None,
    ) -> Reply:
        """Send one request (retrying what is retryable); statuses in `allow` are returned.

        `already_done`, for a POST that must not happen twice, is asked before each retry: the
        first attempt may have succeeded with its reply lost, and what it returns (not None)
        is taken as the reply's data instead of posting again."""
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        attempt = 0
        while True:
            done = already_done() if attempt and already_done is not None else None
            if done is not None:
                log.info("%s %s had succeeded before its retry; not sent again", method, path)
                return Reply(200, done, {}, url)
            reply = self._send(method, url, params, json, attempt)
            if reply is not None and (reply.status < 400 or reply.status in allow):
                return reply
            wait = self._wait_before_retry(method, path, reply, attempt)
            attempt += 1
            self.retry.waits.append(wait)
            self.retry.sleep(wait)

    def paginate(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Items of every page: follows `Link: rel="next"` (GitHub) or `x-next-page` (GitLab)."""
        query: dict[str, Any] = {"per_page": 100, **(params or {})}
        url: str | None = path
        while url is not None:
            reply = self.request("GET", url, params=query)
            if not isinstance(reply.data, list):
                raise self._error("GET", path, reply.status, "expected a JSON list")
            yield from reply.data
            url, query = self._next_page(reply, url, query)

    def error_for(self, method: str, path: str, reply: Reply) -> ApiError:
        """The error to raise for a reply a caller allowed but cannot accept after all."""
        return self._error(method, path, reply.status, _message(reply))

    # -- internals ----------------------------------------------------------------------------

    def _send(
        self, method: str, url: str, params: Mapping[str, Any] | None, body: Any, attempt: int
    ) -> Reply | None:
        try:
            response = self.session.request(
                method,
                url,
                params=params,
                json=body,
                auth=self.auth,
                headers=self.headers,
                timeout=self.timeout,
                allow_redirects=True,
            )
        except (requests.ConnectionError, requests.Timeout) as exc:
            log.warning(
                "%s %s: %s (attempt %d)", method, _path_of(url), type(exc).__name__, attempt
            )
            return None
        log.debug("%s %s -> %d", method, _path_of(url), response.status_code)
        return Reply(response.status_code, _decode(response), response.headers, response.url)

    def _wait_before_retry(
        self, method: str, path: str, reply: Reply | None, attempt: int
    ) -> float:
        if reply is None:
            wait: float | None = _backoff(attempt)
        else:
            wait = retry_delay(reply, attempt, self.retry.clock())
        if wait is None:
            raise self._error(method, path, reply.status if reply else None, _message(reply))
        if attempt >= self.retry.max_retries:
            raise self._error(
                method,
                path,
                reply.status if reply else None,
                f"{_message(reply)} (gave up after {attempt + 1} attempts)",
            )
        if wait > self.retry.max_wait:
            raise self._error(
                method,
                path,
                reply.status if reply else None,
                f"rate limited for {wait:.0f}s, longer than forge.api_max_wait_seconds "
                f"({self.retry.max_wait:g}s); re-run later",
                retry_after=wait,
            )
        return wait

    def _error(
        self,
        method: str,
        path: str,
        status: int | None,
        message: str,
        retry_after: float | None = None,
    ) -> ApiError:
        where = f"{self.service} API {method} {_path_of(path)}"
        told = f"HTTP {status}" if status is not None else "no response"
        hint = self.hint(method, _path_of(path), status or 0, message) if status else ""
        text = f"{where} failed ({told}): {message}" + (f". {hint}" if hint else "")
        return ApiError(text, status=status, retry_after=retry_after, service=self.service)

    def _next_page(
        self, reply: Reply, url: str, query: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any]]:
        link = _link_next(reply.headers.get("Link", ""))
        if link:
            if not _same_origin(link, self.base_url):
                raise self._error("GET", url, reply.status, f"refusing a next-page link to {link}")
            return link, {}
        next_page = reply.headers.get("x-next-page", "").strip()
        if next_page:
            return url, {**query, "page": next_page}
        return None, query


def retry_delay(reply: Reply, attempt: int, now: float) -> float | None:
    """Seconds to wait before retrying `reply`, or None when it must not be retried."""
    headers = reply.headers
    retry_after = _float(headers.get("retry-after"))
    limited = reply.status == 429 or _secondary_limit(reply)
    if retry_after is not None and (limited or reply.status >= 500):
        return max(retry_after, 0.0)
    if reply.status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        reset = _float(headers.get("x-ratelimit-reset"))
        if reset is not None:
            return max(reset - now, 0.0) + 1.0
    if limited or reply.status in RETRY_STATUSES or reply.status >= 500:
        return _backoff(attempt)
    return None


def _secondary_limit(reply: Reply) -> bool:
    if reply.status != 403:
        return False
    if "retry-after" in reply.headers:
        return True
    return SECONDARY_LIMIT_TEXT in _message(reply).lower()


def _backoff(attempt: int) -> float:
    return float(min(2**attempt, 32))


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _decode(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text[:2000]


def _message(reply: Reply | None) -> str:
    """The server's own explanation, from GitHub's or GitLab's error shapes."""
    if reply is None:
        return "the server could not be reached"
    data = reply.data
    if isinstance(data, dict):
        parts = [str(data.get("message") or data.get("error") or "")]
        errors = data.get("errors")
        if isinstance(errors, list):
            parts += [str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors]
        text = "; ".join(part for part in parts if part)
        return text or str(data)[:500]
    return str(data or "")[:500]


def _link_next(header: str) -> str:
    for part in header.split(","):
        section = part.split(";")
        if len(section) >= 2 and any(p.strip() == 'rel="next"' for p in section[1:]):
            return section[0].strip().lstrip("<").rstrip(">")
    return ""


def _same_origin(url: str, base: str) -> bool:
    one, two = urlsplit(urljoin(base + "/", url)), urlsplit(base)
    return (one.scheme, one.netloc) == (two.scheme, two.netloc)


def _path_of(url: str) -> str:
    """The path only: query strings may carry things we do not print."""
    return urlsplit(url).path or url
