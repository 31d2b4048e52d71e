"""HTTP for an artifact store: the API with its token, archives from blob storage without it.

Both GitHub and GitLab answer an archive request with a redirect to object storage; the token
must not follow it there, so blobs come through a second session that never carries it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests

from planner.core.errors import ApiError

log = logging.getLogger(__name__)

USER_AGENT = "planner-history"
CHUNK = 16 * 1024

ErrorFor = Callable[[str, str, requests.Response], ApiError]


class ArchiveDownloader:
    def __init__(
        self,
        service: str,
        headers: dict[str, str],
        *,
        timeout: float,
        max_bytes: int,
        error_for: ErrorFor,
    ) -> None:
        self.service = service
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.error_for = error_for
        self.problems: list[str] = []
        self.api = requests.Session()
        self.api.headers.update({"User-Agent": USER_AGENT, **headers})
        self.blob = requests.Session()
        self.blob.headers["User-Agent"] = USER_AGENT

    def report(self, problem: str) -> None:
        """A damaged download or archive: logged, and kept for the run's summary."""
        self.problems.append(problem)
        log.warning(problem)

    def get(self, url: str, **options: Any) -> requests.Response:
        try:
            return self.api.get(url, timeout=self.timeout, **options)
        except requests.RequestException as exc:
            name = self.service.capitalize() if self.service != "github" else "GitHub"
            raise ApiError(f"{name} API GET {url} failed: {exc}", service=self.service) from None

    def archive(self, url: str, *, gone_status: int, gone_message: str) -> bytes | None:
        """The archive's bytes, or None (logging `gone_message`) if it expired meanwhile."""
        response = self.get(url, allow_redirects=False)
        if response.status_code == gone_status:
            log.info(gone_message)
            return None
        if response.is_redirect:
            return self.fetch_blob(response.headers["Location"])
        if response.status_code == 200:
            return response.content
        raise self.error_for("GET", url, response)

    def fetch_blob(self, location: str) -> bytes:
        """Download without the token; a download cut off midway is kept as far as it got."""
        host = urlsplit(location).netloc
        try:
            response = self.blob.get(location, timeout=self.timeout, stream=True)
        except requests.RequestException as exc:
            raise ApiError(f"artifact storage {host} could not be reached: {exc}") from None
        if response.status_code != 200:
            raise ApiError(
                f"artifact storage {host} answered {response.status_code}",
                status=response.status_code,
                service="artifact storage",
            )
        return read_capped(response, host, self.max_bytes, self.report)


def read_capped(
    response: requests.Response, host: str, max_bytes: int, report: Callable[[str], None]
) -> bytes:
    """The body as far as it arrives: a cut-off download is reported, not discarded."""
    response.raw.enforce_content_length = False  # else urllib3 drops the last chunk read
    chunks: list[bytes] = []
    received, error = 0, ""
    try:
        for chunk in response.iter_content(CHUNK):
            chunks.append(chunk)
            received += len(chunk)
            if received > max_bytes:
                report(f"the artifact is larger than {max_bytes} bytes; cut short")
                break
    except requests.RequestException as exc:
        error = f" ({exc})"
    finally:
        response.close()
    expected = response.headers.get("Content-Length", "")
    short = expected.isdigit() and received < int(expected) and received <= max_bytes
    if error or short:
        of = f" of {expected}" if expected.isdigit() else ""
        report(f"the download from {host} broke off after {received}{of} bytes{error}")
    return b"".join(chunks)


class ArtifactBackend:
    """What the GitHub and GitLab artifact backends share: the downloader, and the problems met
    on the way, kept for the run's summary."""

    def __init__(self, http: ArchiveDownloader) -> None:
        self.http = http
        self.max_bytes = http.max_bytes
        self.problems = http.problems

    def report(self, problem: str) -> None:
        """A damaged archive: logged and kept with the downloader's own problems."""
        self.http.report(problem)


def api_message(response: requests.Response) -> str:
    """The API's own message in an error response, else the start of its body."""
    try:
        return str(response.json().get("message", ""))
    except (ValueError, AttributeError):
        return response.text[:200]
