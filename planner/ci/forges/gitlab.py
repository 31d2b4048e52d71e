"""GitLab REST v4 adapter (gitlab.com and self-managed), over `requests`.

Endpoints come from the CI job: CI_API_V4_URL and CI_SERVER_URL. The token is a project (or
group/personal) access token with `api` scope in GITLAB_TOKEN: CI_JOB_TOKEN cannot post notes
or open merge requests, and the clone's origin URL carries the job token, which cannot push,
so git talks to CI_SERVER_URL/CI_PROJECT_PATH.git with the access token in a header instead.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import requests

from planner.ci.forges.base import (
    Actor,
    CommentData,
    GitRemote,
    IssueData,
    PullRequestData,
    PullRequestExists,
)
from planner.ci.forges.http import RetryPolicy
from planner.ci.forges.rest import RestForge
from planner.ci.forges.threads import ReviewThread, ThreadComment
from planner.config import ForgeConfig
from planner.core.errors import ConfigError

log = logging.getLogger(__name__)

DEVELOPER_ACCESS = 30
DRAFT_PREFIX = "Draft: "


def gitlab_hint(method: str, path: str, status: int, message: str) -> str:
    """How to fix a GitLab API error."""
    if status == 401:
        return "GITLAB_TOKEN is invalid or expired: create a project access token with `api` scope"
    if status == 403:
        return (
            "the token may not do this: GITLAB_TOKEN must be a project access token with `api` "
            "scope and at least the Developer role (CI_JOB_TOKEN cannot post notes or open "
            "merge requests)"
        )
    if status == 404:
        return "not found: check CI_PROJECT_ID and that GITLAB_TOKEN belongs to this project"
    return ""


class GitLabForge(RestForge):
    platform = "gitlab"

    def __init__(
        self,
        *,
        project_id: str,
        repository: str,
        token: str,
        api_url: str,
        server_url: str,
        run_url: str = "",
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(
            repository=repository,
            token=token,
            api_url=api_url,
            server_url=server_url,
            run_url=run_url,
            service="GitLab",
            hint=gitlab_hint,
            session=session,
            retry=retry,
        )
        self.project_id = project_id
        self._me: str | None = None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        config: ForgeConfig,
        *,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
    ) -> GitLabForge:
        """Reads GITLAB_TOKEN, CI_API_V4_URL, CI_SERVER_URL, CI_PROJECT_ID, CI_PROJECT_PATH,
        CI_PIPELINE_URL."""
        token = env.get("GITLAB_TOKEN", "")
        if not token:
            raise ConfigError(
                "GITLAB_TOKEN is not set: add a project access token with `api` scope as a "
                "masked CI/CD variable (CI_JOB_TOKEN cannot post notes or open merge requests)"
            )
        missing = [
            name
            for name in ("CI_API_V4_URL", "CI_SERVER_URL", "CI_PROJECT_ID", "CI_PROJECT_PATH")
            if not env.get(name)
        ]
        if missing:
            raise ConfigError(f"GitLab CI variables missing: {', '.join(missing)}")
        return cls(
            project_id=env["CI_PROJECT_ID"],
            repository=env["CI_PROJECT_PATH"],
            token=token,
            api_url=env["CI_API_V4_URL"],
            server_url=env["CI_SERVER_URL"],
            run_url=env.get("CI_PIPELINE_URL", ""),
            session=session,
            retry=retry,
        )

    @property
    def _home(self) -> str:
        return f"/projects/{quote(self.project_id, safe='')}"

    # -- issues and notes ----------------------------------------------------------------------

    def _issue(self, data: Any) -> IssueData:
        return IssueData(
            number=int(data["iid"]),
            title=str(data.get("title") or ""),
            body=str(data.get("description") or ""),
            state="closed" if data.get("state") == "closed" else "open",
            locked=bool(data.get("discussion_locked")),
            labels=[_label_name(label) for label in data.get("labels") or []],
            author=str((data.get("author") or {}).get("username", "")),
            url=str(data.get("web_url") or ""),
        )

    def list_comments(self, number: int) -> list[CommentData]:
        params = {"sort": "asc", "order_by": "created_at"}
        notes = self.api.paginate(f"{self._home}/issues/{number}/notes", params)
        return [self._note(item, number) for item in notes if not item.get("system")]

    def list_pull_comments(self, pull: PullRequestData) -> list[CommentData]:
        """The merge request's conversation: its notes but system notes and the notes of
        discussions on lines of the diff (review threads)."""
        params = {"sort": "asc", "order_by": "created_at"}
        notes = self.api.paginate(f"{self._home}/merge_requests/{pull.number}/notes", params)
        kept = (n for n in notes if not n.get("system") and n.get("type") != "DiffNote")
        return [self._note(item, pull.number, "merge_requests") for item in kept]

    def _create_comment(self, number: int, body: str) -> CommentData:
        data = self._post_once(f"{self._home}/issues/{number}/notes", body)
        return self._note(data, number)

    def _is_own_post(self, data: Any) -> bool:
        return str((data.get("author") or {}).get("username", "")) == self._identity()

    def _edit_comment(self, number: int, comment_id: str, body: str) -> CommentData:
        path = f"{self._home}/issues/{number}/notes/{comment_id}"
        return self._note(self.api.request("PUT", path, json={"body": body}).data, number)

    def _add_label(self, number: int, label: str) -> None:
        self.api.request("PUT", f"{self._home}/issues/{number}", json={"add_labels": label})

    def _remove_label(self, number: int, label: str) -> None:
        self.api.request("PUT", f"{self._home}/issues/{number}", json={"remove_labels": label})

    def can_write(self, actor: Actor) -> bool:
        user_id = actor.id if actor.id is not None else self._user_id(actor.login)
        if user_id is None:
            return False
        path = f"{self._home}/members/all/{user_id}"
        reply = self.api.request("GET", path, allow=(404,))
        if reply.status == 404 or not isinstance(reply.data, dict):
            return False
        return int(reply.data.get("access_level") or 0) >= DEVELOPER_ACCESS

    def _user_id(self, username: str) -> int | None:
        users = self.api.request("GET", "/users", params={"username": username}).data or []
        return int(users[0]["id"]) if users else None

    def _identity(self) -> str:
        """The token's own username (GET /user), so our notes are recognised; '' if unknown."""
        if self._me is None:
            reply = self.api.request("GET", "/user", allow=(401, 403, 404))
            data = reply.data if reply.status == 200 and isinstance(reply.data, dict) else {}
            self._me = str(data.get("username", ""))
            if not self._me:
                log.warning(
                    "GET /user answered %d: planner cannot recognise its own notes and will "
                    "post a new tracking note",
                    reply.status,
                )
        return self._me

    def _note(self, data: Any, number: int, kind: str = "issues") -> CommentData:
        author = str((data.get("author") or {}).get("username", ""))
        note_id = str(data["id"])
        return CommentData(
            id=note_id,
            body=str(data.get("body") or ""),
            author=author,
            created_at=str(data.get("created_at") or ""),
            updated_at=str(data.get("updated_at") or ""),
            url=f"{self.server_url}/{self.repository}/-/{kind}/{number}#note_{note_id}",
            trusted=bool(author) and author == self._identity(),
        )

    # -- merge requests --------------------------------------------------------------------------

    def get_pull_request(self, number: int) -> PullRequestData | None:
        reply = self.api.request("GET", f"{self._home}/merge_requests/{number}", allow=(404,))
        return None if reply.status == 404 else self._merge_request(reply.data)

    def find_pull_request(self, head: str) -> PullRequestData | None:
        params = {"source_branch": head, "state": "opened"}
        reply = self.api.request("GET", f"{self._home}/merge_requests", params=params)
        found = [self._merge_request(item) for item in reply.data or []]
        return next((mr for mr in found if mr.head == head and mr.same_repository), None)

    def last_closed_pull_request(self, head: str) -> PullRequestData | None:
        params = {"source_branch": head, "order_by": "updated_at", "sort": "desc"}
        reply = self.api.request("GET", f"{self._home}/merge_requests", params=params)
        found = [self._merge_request(item) for item in reply.data or []]
        ended = (mr for mr in found if mr.state in ("closed", "merged") and mr.head == head)
        return next((mr for mr in ended if mr.same_repository), None)

    def _create_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequestData:
        request = {
            "source_branch": head,
            "target_branch": base,
            "title": _draft_title(title, draft),
            "description": body,
            "remove_source_branch": True,
        }
        path = f"{self._home}/merge_requests"
        reply = self.api.request("POST", path, json=request, allow=(409,))
        if reply.status == 409:
            raise PullRequestExists(head)
        return self._merge_request(reply.data)

    def _update_pull_request(
        self, pull: PullRequestData, *, title: str, body: str, draft: bool
    ) -> PullRequestData:
        path = f"{self._home}/merge_requests/{pull.number}"
        request = {"title": _draft_title(title, draft), "description": body}
        return self._merge_request(self.api.request("PUT", path, json=request).data)

    def _merge_request(self, data: Any) -> PullRequestData:
        return PullRequestData(
            number=int(data["iid"]),
            url=str(data.get("web_url") or ""),
            head=str(data.get("source_branch", "")),
            base=str(data.get("target_branch", "")),
            title=str(data.get("title") or ""),
            body=str(data.get("description") or ""),
            draft=bool(data.get("draft") or data.get("work_in_progress")),
            state="open" if data.get("state") == "opened" else str(data.get("state", "")),
            same_repository=data.get("source_project_id") == data.get("target_project_id"),
            merged=data.get("state") == "merged",
            head_sha=str(data.get("sha") or ""),
            closed_by=_username(
                data.get("merge_user") or data.get("merged_by") or data.get("closed_by")
            ),
        )

    # -- review threads (diff discussions) -------------------------------------------------------

    def review_threads(self, pull: PullRequestData) -> list[ReviewThread]:
        """The merge request's discussions on lines of the diff (a note with a `position`).
        A position on an earlier head than the merge request's is outdated: GitLab moves a
        note along with new commits while its lines stay as they were."""
        path = f"{self._home}/merge_requests/{pull.number}/discussions"
        threads = []
        for discussion in self.api.paginate(path):
            notes = [n for n in discussion.get("notes") or [] if not n.get("system")]
            position = (notes[0].get("position") if notes else None) or {}
            if notes and notes[0].get("type") == "DiffNote" and position:
                threads.append(self._discussion(discussion, notes, position, pull))
        return threads

    def _discussion(
        self, discussion: Any, notes: list[Any], position: Any, pull: PullRequestData
    ) -> ReviewThread:
        line, old_line = position.get("new_line"), position.get("old_line")
        start = ((position.get("line_range") or {}).get("start") or {}).get("new_line")
        head = str(position.get("head_sha") or "")
        outdated = bool(head and pull.head_sha and head != pull.head_sha)
        first = notes[0]
        return ReviewThread(
            id=str(discussion.get("id") or ""),
            path=str(position.get("new_path") or position.get("old_path") or ""),
            line=None if outdated else line,
            start_line=None if outdated or start == line else start,
            original_line=line,
            original_start_line=None if start == line else start,
            original_commit=head,
            side="old" if line is None and old_line is not None else "new",
            outdated=outdated,
            resolved=bool(first.get("resolved")),
            url=f"{self.server_url}/{self.repository}/-/merge_requests/{pull.number}"
            f"#note_{first.get('id')}",
            comments=[self._thread_note(note) for note in notes],
        )

    def _thread_note(self, data: Any) -> ThreadComment:
        author = data.get("author") or {}
        username = str(author.get("username") or "")
        return ThreadComment(
            id=str(data.get("id") or ""),
            author=username,
            author_id=author.get("id") if isinstance(author.get("id"), int) else None,
            body=str(data.get("body") or ""),
            created_at=str(data.get("created_at") or ""),
            updated_at=str(data.get("updated_at") or ""),
            is_bot=bool(author.get("bot")),
            trusted=bool(username) and username == self._identity(),
        )

    def _reply_to_thread(self, pull: PullRequestData, thread: ReviewThread, body: str) -> None:
        path = f"{self._discussion_path(pull, thread)}/notes"
        self.api.request("POST", path, json={"body": body})

    def _resolve_thread(self, pull: PullRequestData, thread: ReviewThread) -> None:
        self.api.request("PUT", self._discussion_path(pull, thread), json={"resolved": True})

    def _discussion_path(self, pull: PullRequestData, thread: ReviewThread) -> str:
        discussion = quote(thread.id, safe="")
        return f"{self._home}/merge_requests/{pull.number}/discussions/{discussion}"

    # -- git and links ---------------------------------------------------------------------------

    def git_remote(self) -> GitRemote:
        return self._remote("oauth2", "Authorization: Basic")

    # -- the scheduled sweep ---------------------------------------------------------------------

    def list_open_issues(self, label: str) -> list[IssueData]:
        params = {"state": "opened", "labels": label}
        return [self._issue(item) for item in self.api.paginate(f"{self._home}/issues", params)]

    def start_run(self, number: int) -> str:
        """A pipeline on the default branch naming the issue (the component runs api pipelines
        with PLANNER_ISSUE_IID); the project must let the token's role set pipeline variables."""
        variables = [{"key": "PLANNER_ISSUE_IID", "value": str(number)}]
        request = {"ref": self.default_branch(), "variables": variables}
        data = self.api.request("POST", f"{self._home}/pipeline", json=request).data
        pipeline = data.get("id") if isinstance(data, dict) else None
        return f"pipeline {pipeline} created on {request['ref']} for #{number}"

    def is_token_user(self, actor: Actor) -> bool:
        return bool(actor.login) and actor.login == self._identity()

    def branch_url(self, branch: str) -> str:
        return f"{self.server_url}/{self.repository}/-/tree/{quote(branch)}"

    def pull_reference(self, number: int) -> str:
        return f"!{number}"


def _username(user: Any) -> str:
    return str(user.get("username") or "") if isinstance(user, dict) else ""


def _draft_title(title: str, draft: bool) -> str:
    bare = title.removeprefix(DRAFT_PREFIX)
    return f"{DRAFT_PREFIX}{bare}" if draft else bare


def _label_name(label: Any) -> str:
    if isinstance(label, dict):
        return str(label.get("name") or label.get("title") or "")
    return str(label)
