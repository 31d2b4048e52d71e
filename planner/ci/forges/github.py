"""GitHub REST v3 adapter (github.com and GitHub Enterprise Server), over `requests`.

Endpoints come from the runner: GITHUB_API_URL (GHES: https://host/api/v3), GITHUB_GRAPHQL_URL
and GITHUB_SERVER_URL. Every REST request it makes is one of the operations in
tests/fixtures/github/openapi-subset.json, and the tests check each against it. Review threads
exist only in GitHub's GraphQL API (REST has no thread id and cannot resolve one); the tests
validate those documents against GitHub's published schema (@octokit/graphql-schema).
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
from planner.core.errors import ApiError, ConfigError

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
WRITE_PERMISSIONS = frozenset({"admin", "write"})
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
DEFAULT_BOT_LOGIN = "github-actions[bot]"
PR_EXISTS = "a pull request already exists"
NO_DRAFTS = "draft pull requests are not supported"

PERMISSIONS_HINT = (
    "the token lacks a permission: give the workflow `permissions: {contents: write, "
    "issues: write, pull-requests: write}` or pass a token that has them"
)
REVIEW_THREADS = """
query ReviewThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line startLine originalLine originalStartLine diffSide
          comments(first: 100) {
            nodes {
              fullDatabaseId body createdAt updatedAt url diffHunk
              author { __typename login }
              originalCommit { oid }
            }
          }
        }
      }
    }
  }
}
"""
REPLY_TO_THREAD = """
mutation ReplyToThread($thread: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $thread, body: $body}) {
    comment { url }
  }
}
"""
RESOLVE_THREAD = """
mutation ResolveThread($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) {
    thread { id isResolved }
  }
}
"""
MAX_THREAD_PAGES = 20
"""50 threads a page: a review of a thousand threads is read up to here."""

PR_FORBIDDEN_HINT = (
    "GitHub Actions is not permitted to create pull requests: enable Settings → Actions → "
    "General → Workflow permissions → 'Allow GitHub Actions to create and approve pull "
    "requests' (organisation settings may also need it), or pass a personal access token / "
    "GitHub App token as the planner token"
)


def github_hint(method: str, path: str, status: int, message: str) -> str:
    """How to fix a GitHub API error, in the words of the setting or token involved."""
    if status == 401:
        return "the token is invalid or expired: check the token given to planner (GITHUB_TOKEN)"
    if status == 403 and method == "POST" and path.endswith("/pulls"):
        return PR_FORBIDDEN_HINT
    if status == 403:
        return PERMISSIONS_HINT
    if status == 404:
        return "not found: check GITHUB_REPOSITORY and that the token can see the repository"
    if status == 410:
        return "issues are disabled for this repository: enable them in Settings → General"
    return ""


class GitHubForge(RestForge):
    platform = "github"

    def __init__(
        self,
        *,
        repository: str,
        token: str,
        api_url: str = "https://api.github.com",
        server_url: str = "https://github.com",
        run_url: str = "",
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        bot_login: str = DEFAULT_BOT_LOGIN,
        workflow: str = "",
        graphql_url: str = "",
    ) -> None:
        super().__init__(
            repository=repository,
            token=token,
            api_url=api_url,
            server_url=server_url,
            run_url=run_url,
            service="GitHub",
            hint=github_hint,
            headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION},
            session=session,
            retry=retry,
        )
        self.graphql_url = graphql_url or graphql_url_for(api_url)
        self.workflow = workflow
        """This workflow's file name (from GITHUB_WORKFLOW_REF): what the sweep dispatches."""
        self.bot_login = bot_login
        """The account the token posts as; only its comments are planner's own."""
        self.owner = repository.split("/", 1)[0]

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        config: ForgeConfig,
        *,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
    ) -> GitHubForge:
        """Reads GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_API_URL, GITHUB_GRAPHQL_URL,
        GITHUB_SERVER_URL and GITHUB_RUN_ID (for the link to the run)."""
        repository = env.get("GITHUB_REPOSITORY", "")
        token = env.get("GITHUB_TOKEN", "")
        if "/" not in repository:
            raise ConfigError("GITHUB_REPOSITORY must be set to owner/name")
        if not token:
            raise ConfigError(
                "GITHUB_TOKEN is not set: pass the workflow's token (secrets.GITHUB_TOKEN) or a PAT"
            )
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        return cls(
            repository=repository,
            token=token,
            api_url=env.get("GITHUB_API_URL") or _api_url_for(server),
            server_url=server,
            run_url=_run_url(env, server, repository),
            graphql_url=env.get("GITHUB_GRAPHQL_URL", ""),
            session=session,
            retry=retry,
            bot_login=config.bot_login,
            workflow=workflow_file(env.get("GITHUB_WORKFLOW_REF", "")),
        )

    # -- issues and comments ---------------------------------------------------------------------

    @property
    def _home(self) -> str:
        return f"/repos/{self.repository}"

    def _issue(self, data: Any) -> IssueData:
        return IssueData(
            number=int(data["number"]),
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            state=str(data.get("state") or "open"),
            locked=bool(data.get("locked")),
            labels=[_label_name(label) for label in data.get("labels") or []],
            author=str((data.get("user") or {}).get("login", "")),
            url=str(data.get("html_url") or ""),
            is_pull_request=bool(data.get("pull_request")),
        )

    def list_comments(self, number: int) -> list[CommentData]:
        pages = self.api.paginate(f"{self._home}/issues/{number}/comments")
        return [self._comment(item) for item in pages]

    def list_pull_comments(self, pull: PullRequestData) -> list[CommentData]:
        """A pull request's conversation is its issue's comments (review comments are not)."""
        return self.list_comments(pull.number)

    def _create_comment(self, number: int, body: str) -> CommentData:
        return self._comment(self._post_once(f"{self._home}/issues/{number}/comments", body))

    def _is_own_post(self, data: Any) -> bool:
        return self._is_own(data.get("user") or {})

    def _edit_comment(self, number: int, comment_id: str, body: str) -> CommentData:
        path = f"{self._home}/issues/comments/{comment_id}"
        return self._comment(self.api.request("PATCH", path, json={"body": body}).data)

    def _add_label(self, number: int, label: str) -> None:
        self.api.request("POST", f"{self._home}/issues/{number}/labels", json={"labels": [label]})

    def _remove_label(self, number: int, label: str) -> None:
        path = f"{self._home}/issues/{number}/labels/{quote(label, safe='')}"
        self.api.request("DELETE", path, allow=(404,))

    def can_write(self, actor: Actor) -> bool:
        path = f"{self._home}/collaborators/{quote(actor.login, safe='')}/permission"
        reply = self.api.request("GET", path, allow=(404,))
        if reply.status == 404 or not isinstance(reply.data, dict):
            return False
        permission = str(reply.data.get("permission", ""))
        return permission in WRITE_PERMISSIONS or reply.data.get("role_name") in WRITE_ROLES

    def _comment(self, data: Any) -> CommentData:
        user = data.get("user") or {}
        return CommentData(
            id=str(data["id"]),
            body=str(data.get("body") or ""),
            author=str(user.get("login", "")),
            created_at=str(data.get("created_at") or ""),
            updated_at=str(data.get("updated_at") or ""),
            url=str(data.get("html_url") or ""),
            trusted=self._is_own(user),
        )

    def _is_own(self, user: Any) -> bool:
        """Written by planner's token: the configured account, a Bot exactly when it is one."""
        login = str(user.get("login", ""))
        is_bot = user.get("type") == "Bot"
        return login.lower() == self.bot_login.lower() and is_bot == login.endswith("[bot]")

    # -- pull requests ---------------------------------------------------------------------------

    def get_pull_request(self, number: int) -> PullRequestData | None:
        reply = self.api.request("GET", f"{self._home}/pulls/{number}", allow=(404,))
        return None if reply.status == 404 else self._pull(reply.data)

    def find_pull_request(self, head: str) -> PullRequestData | None:
        params = {"head": f"{self.owner}:{head}", "state": "open"}
        reply = self.api.request("GET", f"{self._home}/pulls", params=params)
        pulls = [self._pull(item) for item in reply.data or []]
        return next((p for p in pulls if p.head == head and p.same_repository), None)

    def last_closed_pull_request(self, head: str) -> PullRequestData | None:
        params = {"head": f"{self.owner}:{head}", "state": "closed", "sort": "updated"}
        params |= {"direction": "desc", "per_page": "10"}
        reply = self.api.request("GET", f"{self._home}/pulls", params=params)
        pulls = [self._pull(item) for item in reply.data or []]
        found = next((p for p in pulls if p.head == head and p.same_repository), None)
        if found is None:
            return None
        # The pulls API does not say who closed it; the issue view of the pull request does.
        issue = self.api.request("GET", f"{self._home}/issues/{found.number}", allow=(404,))
        closer = (issue.data or {}).get("closed_by") if issue.status == 200 else None
        return found.model_copy(update={"closed_by": str((closer or {}).get("login") or "")})

    def _create_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequestData:
        request = {"title": title, "head": head, "base": base, "body": body, "draft": draft}
        reply = self.api.request("POST", f"{self._home}/pulls", json=request, allow=(422,))
        if reply.status == 422 and draft and NO_DRAFTS in _text(reply.data):
            log.warning("draft pull requests are not available here; opening a regular one")
            return self._create_pull_request(
                head=head, base=base, title=title, body=body, draft=False
            )
        if reply.status == 422 and PR_EXISTS in _text(reply.data):
            raise PullRequestExists(head)
        if reply.status == 422:
            raise self.api.error_for("POST", f"{self._home}/pulls", reply)
        return self._pull(reply.data)

    def _update_pull_request(
        self, pull: PullRequestData, *, title: str, body: str, draft: bool
    ) -> PullRequestData:
        # REST cannot change draft state; a finished plan says so in the tracking comment.
        path = f"{self._home}/pulls/{pull.number}"
        return self._pull(self.api.request("PATCH", path, json={"title": title, "body": body}).data)

    def _pull(self, data: Any) -> PullRequestData:
        head, base = data.get("head") or {}, data.get("base") or {}
        head_repo = (head.get("repo") or {}).get("full_name", "")
        return PullRequestData(
            number=int(data["number"]),
            url=str(data.get("html_url") or ""),
            head=str(head.get("ref", "")),
            base=str(base.get("ref", "")),
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            draft=bool(data.get("draft")),
            state=str(data.get("state") or "open"),
            same_repository=str(head_repo).lower() == self.repository.lower(),
            merged=bool(data.get("merged_at")),
            head_sha=str(head.get("sha") or ""),
        )

    # -- review threads (GraphQL) ----------------------------------------------------------------

    def review_threads(self, pull: PullRequestData) -> list[ReviewThread]:
        owner, name = self.repository.split("/", 1)
        variables: dict[str, Any] = {"owner": owner, "name": name, "number": pull.number}
        threads: list[ReviewThread] = []
        for _ in range(MAX_THREAD_PAGES):
            data = self._graphql("ReviewThreads", REVIEW_THREADS, variables)
            found = ((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads")
            if not isinstance(found, dict):
                return threads  # the pull request is gone
            threads += [self._thread(node) for node in found.get("nodes") or [] if node]
            page = found.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                break
            variables["after"] = page.get("endCursor")
        return threads

    def _reply_to_thread(self, pull: PullRequestData, thread: ReviewThread, body: str) -> None:
        self._graphql("ReplyToThread", REPLY_TO_THREAD, {"thread": thread.id, "body": body})

    def _resolve_thread(self, pull: PullRequestData, thread: ReviewThread) -> None:
        self._graphql("ResolveThread", RESOLVE_THREAD, {"thread": thread.id})

    def _graphql(self, operation: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The `data` of one GraphQL request; GraphQL's own errors (answered with HTTP 200)
        become an ApiError like any refused request."""
        body = {"query": query, "variables": variables, "operationName": operation}
        reply = self.api.request("POST", self.graphql_url, json=body)
        data = reply.data if isinstance(reply.data, dict) else {}
        errors = data.get("errors")
        if errors or not isinstance(data.get("data"), dict):
            messages = [
                str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors or []
            ]
            text = "; ".join(messages) or "the reply held no data"
            hint = PERMISSIONS_HINT if "not accessible" in text.lower() else ""
            raise ApiError(
                f"GitHub GraphQL API {operation} failed: {text}" + (f". {hint}" if hint else ""),
                status=reply.status,
                service="GitHub",
            )
        result: dict[str, Any] = data["data"]
        return result

    def _thread(self, node: Any) -> ReviewThread:
        comments = ((node.get("comments") or {}).get("nodes")) or []
        first = comments[0] if comments else {}
        return ReviewThread(
            id=str(node.get("id") or ""),
            path=str(node.get("path") or ""),
            line=node.get("line"),
            start_line=node.get("startLine"),
            original_line=node.get("originalLine"),
            original_start_line=node.get("originalStartLine"),
            original_commit=str((first.get("originalCommit") or {}).get("oid") or ""),
            diff_hunk=str(first.get("diffHunk") or ""),
            side="old" if node.get("diffSide") == "LEFT" else "new",
            outdated=bool(node.get("isOutdated")),
            resolved=bool(node.get("isResolved")),
            url=str(first.get("url") or ""),
            comments=[self._thread_comment(c) for c in comments if c],
        )

    def _thread_comment(self, data: Any) -> ThreadComment:
        author = data.get("author") or {}
        is_bot = author.get("__typename") == "Bot"
        login = str(author.get("login") or "")
        if is_bot and login and not login.endswith("[bot]"):
            login += "[bot]"  # GraphQL names a bot without the suffix REST and events use
        return ThreadComment(
            id=str(data.get("fullDatabaseId") or ""),
            author=login,
            body=str(data.get("body") or ""),
            created_at=str(data.get("createdAt") or ""),
            updated_at=str(data.get("updatedAt") or ""),
            url=str(data.get("url") or ""),
            is_bot=is_bot,
            trusted=self._is_own({"login": login, "type": "Bot" if is_bot else "User"}),
        )

    # -- git and links ---------------------------------------------------------------------------

    def git_remote(self) -> GitRemote:
        return self._remote("x-access-token", "AUTHORIZATION: basic")

    # -- the scheduled sweep ---------------------------------------------------------------------

    def list_open_issues(self, label: str) -> list[IssueData]:
        params = {"state": "open", "labels": label}
        found = self.api.paginate(f"{self._home}/issues", params)
        return [self._issue(item) for item in found if not item.get("pull_request")]

    def start_run(self, number: int) -> str:
        """workflow_dispatch of this workflow with the input `issue` (GITHUB_TOKEN may do it:
        dispatch events are the exception that starts runs; it needs `actions: write`)."""
        if not self.workflow:
            raise ConfigError("GITHUB_WORKFLOW_REF is not set: cannot tell which workflow to run")
        path = f"{self._home}/actions/workflows/{quote(self.workflow, safe='')}/dispatches"
        request = {"ref": self.default_branch(), "inputs": {"issue": str(number)}}
        self.api.request("POST", path, json=request)
        return f"workflow {self.workflow} dispatched on {request['ref']} for #{number}"

    def is_token_user(self, actor: Actor) -> bool:
        return actor.is_bot and actor.login.lower() == self.bot_login.lower()

    def branch_url(self, branch: str) -> str:
        return f"{self.server_url}/{self.repository}/tree/{quote(branch)}"


def _label_name(label: Any) -> str:
    return str(label.get("name", "")) if isinstance(label, dict) else str(label)


def _text(data: Any) -> str:
    return str(data).lower()


def workflow_file(workflow_ref: str) -> str:
    """'o/r/.github/workflows/planner.yml@refs/heads/main' -> 'planner.yml' ('' if not one)."""
    path = workflow_ref.rpartition("@")[0] or workflow_ref
    _, found, name = path.partition("/.github/workflows/")
    return name if found and name and "/" not in name else ""


def graphql_url_for(api_url: str) -> str:
    """https://api.github.com -> https://api.github.com/graphql; GHES's https://host/api/v3 ->
    https://host/api/graphql (what the runner's GITHUB_GRAPHQL_URL holds)."""
    api = api_url.rstrip("/")
    return api.removesuffix("/v3") + "/graphql" if api.endswith("/api/v3") else api + "/graphql"


def _api_url_for(server: str) -> str:
    server = server.rstrip("/")
    return "https://api.github.com" if server == "https://github.com" else f"{server}/api/v3"


def _run_url(env: Mapping[str, str], server: str, repository: str) -> str:
    run_id = env.get("GITHUB_RUN_ID", "")
    if not run_id:
        return ""
    return f"{server.rstrip('/')}/{repository}/actions/runs/{run_id}"
