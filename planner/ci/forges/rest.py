"""What the GitHub and GitLab adapters share: a forge behind a REST API.

The JSON client with the token in its Authorization header, the repository and its links, the
default branch read once, and a comment posted at most once even when a reply is lost.
"""

from __future__ import annotations

import base64
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import requests

from planner.ci.forges.base import MARKER_PREFIX, ForgeAdapter, GitRemote, IssueData
from planner.ci.forges.http import HeaderAuth, Hint, JsonClient, RetryPolicy


class RestForge(ForgeAdapter):
    """A forge adapter over a REST API; the adapters add their endpoints and payloads."""

    def __init__(
        self,
        *,
        repository: str,
        token: str,
        api_url: str,
        server_url: str,
        run_url: str,
        service: str,
        hint: Hint,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(secrets=(token,))
        self.repository = repository
        self.server_url = server_url.rstrip("/")
        self._run_url = run_url
        self._token = token
        self._default_branch = ""
        self.api = JsonClient(
            api_url,
            # Authorization (not a custom header): requests drops it on a redirect to another host.
            auth=HeaderAuth("Authorization", f"Bearer {token}"),
            service=service,
            headers=headers,
            session=session,
            retry=retry,
            hint=hint,
        )

    @property
    @abstractmethod
    def _home(self) -> str:
        """The repository's own API path (its other endpoints lie below it)."""

    @abstractmethod
    def _issue(self, data: Any) -> IssueData:
        """An issue as the API returns it."""

    @abstractmethod
    def _is_own_post(self, data: Any) -> bool:
        """Whether a comment as the API returns it was written by planner's token."""

    def get_issue(self, number: int) -> IssueData:
        return self._issue(self.api.request("GET", f"{self._home}/issues/{number}").data)

    def default_branch(self) -> str:
        if not self._default_branch:
            data = self.api.request("GET", self._home).data
            self._default_branch = str(data["default_branch"])
        return self._default_branch

    def run_url(self) -> str:
        return self._run_url

    def _post_once(self, path: str, body: str) -> Any:
        """POST a comment's body; when the reply is lost, the comment already there counts."""
        reply = self.api.request(
            "POST", path, json={"body": body}, already_done=lambda: self._posted(path, body)
        )
        return reply.data

    def _posted(self, path: str, body: str) -> Any:
        """Our own comment with exactly this (marked) body, when a lost reply hid it."""
        for data in self.api.paginate(path):
            if data.get("body") == body and MARKER_PREFIX in body and self._is_own_post(data):
                return data
        return None

    def _remote(self, user: str, header: str) -> GitRemote:
        """The repository over HTTPS; git sends `header` (`Name: scheme`) with the token as
        `user`'s Basic credentials."""
        basic = base64.b64encode(f"{user}:{self._token}".encode()).decode()
        return GitRemote(f"{self.server_url}/{self.repository}.git", f"{header} {basic}")
