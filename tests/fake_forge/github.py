"""A fake GitHub (REST v3 under the GHES-style prefix /api/v3, plus git smart HTTP).

In-memory issues, comments, labels, collaborator permissions, pull requests, review threads
and workflow artifacts (listed by name, downloaded through a 302 to the fake blob storage, 410
once gone), shaped like the real responses for every field planner reads. Every REST request is
checked against GitHub's OpenAPI description (tests/fixtures/github/openapi-subset.json), every
GraphQL document against GitHub's GraphQL schema (tests/fake_forge/github_graphql.py); problems
are collected in `openapi_problems` and the fixture fails the test at teardown if there are any.

Review threads live where GitHub keeps them: a comment on lines of the pull request's head,
with the diff hunk it was made on. When the branch moves and those lines no longer read the
same at the same place, the thread is outdated (`line` null), as GitHub shows it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

from tests.fake_forge.core import JSON, FakeServerBase, LoggedRequest, Reply, git
from tests.fake_forge.github_graphql import PATH as GRAPHQL_PATH
from tests.fake_forge.github_graphql import GraphQLEndpoint
from tests.support.fake_artifacts import StoredArtifact
from tests.support.openapi import OpenApiChecker

SUBSET = Path(__file__).resolve().parent.parent / "fixtures" / "github" / "openapi-subset.json"
_CHECKER: OpenApiChecker | None = None
MAX_BODY = 65_536
"""GitHub refuses longer issue comment and pull request bodies with 422."""


def checker() -> OpenApiChecker:
    global _CHECKER
    if _CHECKER is None:
        _CHECKER = OpenApiChecker.load(SUBSET)
    return _CHECKER


@dataclass
class GhIssue:
    number: int
    title: str
    body: str = ""
    state: str = "open"
    locked: bool = False
    labels: list[str] = field(default_factory=list)
    author: str = "Codertocat"
    created_at: str = ""
    updated_at: str = ""


@dataclass
class GhComment:
    id: int
    issue: int
    body: str
    user: str
    user_type: str = "User"
    association: str = "OWNER"
    created_at: str = ""
    updated_at: str = ""


@dataclass
class Dispatch:
    """One `POST .../actions/workflows/{file}/dispatches`: the run GitHub would start."""

    workflow: str
    ref: str
    inputs: dict[str, Any]
    sender: tuple[str, str]
    """(login, type) of the token's account: the run's `github.event.sender`."""

    def event(self, repository: str) -> JSON:
        """The workflow_dispatch payload the started run would read."""
        login, kind = self.sender
        return {
            "inputs": dict(self.inputs),
            "ref": f"refs/heads/{self.ref}",
            "repository": {"full_name": repository},
            "sender": {"login": login, "id": 41898282, "type": kind},
            "workflow": f".github/workflows/{self.workflow}",
        }


@dataclass
class GhPull:
    number: int
    head: str
    base: str
    title: str
    body: str
    draft: bool
    head_repo: str
    state: str = "open"
    merged: bool = False
    closed_by: str = ""
    head_sha: str = ""
    """Frozen when the pull request is closed, as GitHub keeps it; else the branch's head."""
    labels: list[str] = field(default_factory=list)


@dataclass
class GhReviewComment:
    id: int
    body: str
    user: str
    user_type: str = "User"
    created_at: str = ""
    updated_at: str = ""


@dataclass
class GhThread:
    """A review thread: comments on lines `start_line`..`line` of `commit` (the head then)."""

    node_id: str
    pull: int
    path: str
    line: int
    start_line: int | None
    side: str
    commit: str
    diff_hunk: str
    lines: list[str]
    """The commented lines as `commit` has them (what makes the thread outdated when gone)."""
    comments: list[GhReviewComment] = field(default_factory=list)
    resolved: bool = False
    resolved_by: str = ""


class FakeGitHub(FakeServerBase):
    api_prefix = "/api/v3"

    def __init__(
        self,
        root: Path,
        *,
        repository: str = "Codertocat/Hello-World",
        token: str = "ghs_fakeInstallationToken0123456789abcd",
        page_size: int = 2,
    ) -> None:
        self.repository = repository
        super().__init__(root, token)
        self.page_size = page_size
        self.issues: dict[int, GhIssue] = {}
        self.comments: dict[int, GhComment] = {}
        self.pulls: dict[int, GhPull] = {}
        self.permissions: dict[str, str] = {}
        self.token_user = ("github-actions[bot]", "Bot")
        self.actions_may_create_prs = True
        self.drafts_supported = True
        self.openapi_problems: list[str] = []
        self.artifacts: list[StoredArtifact] = []
        self.workflows = {"planner.yml"}
        """Workflow files with a workflow_dispatch trigger (others answer 404)."""
        self.dispatches: list[Dispatch] = []
        """Workflow runs requested through the API; nothing runs: tests start the job."""
        self.threads: dict[str, GhThread] = {}
        self._next_comment = 1000
        self._add_routes()
        self.graphql = GraphQLEndpoint(
            {
                "repository": self._gql_repository,
                "addPullRequestReviewThreadReply": self._gql_reply,
                "resolveReviewThread": self._gql_resolve,
            },
            self.openapi_problems,
        )

    def stop(self) -> None:
        super().stop()
        self.graphql.close()

    # -- test helpers ----------------------------------------------------------------------------

    def add_issue(self, number: int, title: str, body: str = "", **fields: Any) -> GhIssue:
        now = self.now()
        issue = GhIssue(number, title, body, created_at=now, updated_at=now, **fields)
        self.issues[number] = issue
        return issue

    def add_comment(
        self, issue: int, body: str, user: str = "Codertocat", **fields: Any
    ) -> GhComment:
        self._next_comment += 1
        now = self.now()
        comment = GhComment(
            self._next_comment, issue, body, user, created_at=now, updated_at=now, **fields
        )
        self.comments[comment.id] = comment
        return comment

    def add_artifact(
        self, name: str, data: bytes, created_at: str, **options: Any
    ) -> StoredArtifact:
        """An artifact as actions/upload-artifact leaves it (options: expired, gone, ...)."""
        artifact = StoredArtifact(len(self.artifacts) + 1, name, data, created_at, **options)
        if artifact.digest is None:
            artifact.digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.artifacts.append(artifact)
        return artifact

    def add_review_thread(
        self,
        pull: int,
        path: str,
        line: int,
        body: str,
        user: str = "Codertocat",
        *,
        start_line: int | None = None,
        side: str = "RIGHT",
        user_type: str = "User",
    ) -> GhThread:
        """A person comments on lines start_line..line of the pull request's head (a review's
        line comment). GitHub takes such a comment only on lines of the diff."""
        head = self.branches()[self.pulls[pull].head]
        hunk = _hunk_ending_at(
            git(self.bare, "diff", f"{self.pulls[pull].base}...{head}", "--", path), line
        )
        assert hunk, f"line {line} of {path} is not in the pull request's diff"
        thread = GhThread(
            f"PRRT_kwDO{len(self.threads) + 1:06d}",
            pull,
            path,
            line,
            start_line,
            side,
            head,
            hunk,
            self.lines_at(head, path, line, start_line),
        )
        self.threads[thread.node_id] = thread
        self.reply_in_thread(thread.node_id, body, user, user_type)
        return thread

    def reply_in_thread(
        self, node_id: str, body: str, user: str, user_type: str = "User"
    ) -> GhReviewComment:
        self._next_comment += 1
        now = self.now()
        comment = GhReviewComment(self._next_comment, body, user, user_type, now, now)
        self.threads[node_id].comments.append(comment)
        return comment

    def threads_on(self, pull: int) -> list[GhThread]:
        return [t for t in self.threads.values() if t.pull == pull]

    def review_comment_json(self, thread: GhThread, comment: GhReviewComment) -> JSON:
        """The `comment` of a pull_request_review_comment event about it."""
        return {
            "id": comment.id,
            "body": comment.body,
            "path": thread.path,
            "line": thread.line,
            "commit_id": thread.commit,
            "diff_hunk": thread.diff_hunk,
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "user": self._user(comment.user, comment.user_type),
        }

    def comments_on(self, issue: int) -> list[GhComment]:
        return sorted((c for c in self.comments.values() if c.issue == issue), key=lambda c: c.id)

    def comment_json(self, comment: GhComment) -> JSON:
        return self._comment(comment)

    def authorized(self, headers: Any) -> bool:
        return headers.get("Authorization") in (f"Bearer {self.token}", f"token {self.token}")

    def git_user_ok(self, username: str, password: str) -> bool:
        return username == "x-access-token" and password == self.token

    def handle(
        self, method: str, raw_path: str, headers: Any, raw_body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if urlsplit(raw_path).path != GRAPHQL_PATH:
            return super().handle(method, raw_path, headers, raw_body)
        import json

        body = json.loads(raw_body or b"null")
        entry = LoggedRequest(
            method, GRAPHQL_PATH, {}, body, authorization=headers.get_all("Authorization") or []
        )
        with self._lock:
            self.log.append(entry)
        if not self.authorized(headers):
            entry.status = 401
            return 401, {"Content-Type": "application/json"}, b'{"message": "Bad credentials"}'
        if method != "POST":
            entry.status = 404
            return 404, {"Content-Type": "application/json"}, b'{"message": "Not Found"}'
        with self._lock:
            reply, entry.write = self.graphql.answer(body)
        entry.status = 200
        return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    # -- GraphQL resolvers ----------------------------------------------------------------------

    def _gql_repository(self, args: dict[str, Any]) -> tuple[JSON, str]:
        if f"{args.get('owner')}/{args.get('name')}" != self.repository:
            return None, f"Could not resolve to a Repository with the name '{args.get('name')}'."
        pulls = {
            str(number): {
                "number": number,
                "reviewThreads": self._connection(self.gql_threads(number)),
            }
            for number in self.pulls
        }
        return {"pullRequest": {"__by": "number", "values": pulls}}, ""

    def _connection(self, nodes: list[JSON]) -> JSON:
        return {"__connection": nodes, "__max": self.page_size}

    def _gql_reply(self, args: dict[str, Any]) -> tuple[JSON, str]:
        given = args["input"]
        thread = self.threads.get(given["pullRequestReviewThreadId"])
        if thread is None:
            return None, _not_a_node(given["pullRequestReviewThreadId"])
        login, kind = self.token_user
        comment = self.reply_in_thread(thread.node_id, given["body"], login, kind)
        return {"comment": self._gql_comment(thread, comment)}, ""

    def _gql_resolve(self, args: dict[str, Any]) -> tuple[JSON, str]:
        thread = self.threads.get(args["input"]["threadId"])
        if thread is None:
            return None, _not_a_node(args["input"]["threadId"])
        thread.resolved, thread.resolved_by = True, self.token_user[0]
        return {"thread": self._gql_thread(thread)}, ""

    def gql_threads(self, pull: int) -> list[JSON]:
        return [self._gql_thread(thread) for thread in self.threads_on(pull)]

    def _gql_thread(self, thread: GhThread) -> JSON:
        line = self._current_line(thread)
        return {
            "__typename": "PullRequestReviewThread",
            "id": thread.node_id,
            "isResolved": thread.resolved,
            "isOutdated": line is None,
            "isCollapsed": thread.resolved,
            "path": thread.path,
            "line": line,
            "startLine": None
            if line is None or thread.start_line is None
            else (line - (thread.line - thread.start_line)),
            "originalLine": thread.line,
            "originalStartLine": thread.start_line,
            "diffSide": thread.side,
            "startDiffSide": thread.side if thread.start_line else None,
            "subjectType": "LINE",
            "viewerCanReply": True,
            "viewerCanResolve": True,
            "viewerCanUnresolve": True,
            "comments": {
                "__connection": [self._gql_comment(thread, c) for c in thread.comments],
                "__max": 100,
            },
        }

    def _gql_comment(self, thread: GhThread, comment: GhReviewComment) -> JSON:
        login = comment.user.removesuffix("[bot]") if comment.user_type == "Bot" else comment.user
        return {
            "__typename": "PullRequestReviewComment",
            "id": f"PRRC_kwDO{comment.id}",
            "fullDatabaseId": str(comment.id),
            "databaseId": comment.id,
            "body": comment.body,
            "createdAt": comment.created_at,
            "updatedAt": comment.updated_at,
            "url": f"{self.base_url}/{self.repository}/pull/{thread.pull}#discussion_r{comment.id}",
            "diffHunk": thread.diff_hunk,
            "path": thread.path,
            "outdated": self._current_line(thread) is None,
            "author": {"__typename": comment.user_type, "login": login},
            "originalCommit": {"__typename": "Commit", "oid": thread.commit},
        }

    def _current_line(self, thread: GhThread) -> int | None:
        """Where the commented lines are in the head now: where they were, while they still
        read the same there; else None (outdated)."""
        head = self.branches().get(self.pulls[thread.pull].head, "")
        if head == thread.commit:
            return thread.line
        try:
            now = self.lines_at(head, thread.path, thread.line, thread.start_line)
        except AssertionError:
            return None
        return thread.line if now == thread.lines else None

    def check_request(self, method: str, raw_path: str, body: JSON) -> None:
        for problem in checker().check(method, raw_path, None, body):
            self.openapi_problems.append(f"{method} {raw_path}: {problem}")

    # -- routes ----------------------------------------------------------------------------------

    def _add_routes(self) -> None:
        repo = re.escape("/repos/" + self.repository)
        table = [
            ("GET", "", self._get_repo),
            ("GET", r"/issues", self._list_issues),
            ("POST", r"/actions/workflows/(?P<wf>[^/]+)/dispatches", self._dispatch),
            ("GET", r"/issues/(?P<n>\d+)", self._get_issue),
            ("GET", r"/issues/(?P<n>\d+)/comments", self._list_comments),
            ("POST", r"/issues/(?P<n>\d+)/comments", self._create_comment),
            ("PATCH", r"/issues/comments/(?P<id>\d+)", self._edit_comment),
            ("POST", r"/issues/(?P<n>\d+)/labels", self._add_labels),
            ("DELETE", r"/issues/(?P<n>\d+)/labels/(?P<name>[^/]+)", self._remove_label),
            ("GET", r"/collaborators/(?P<user>[^/]+)/permission", self._permission),
            ("GET", r"/pulls", self._list_pulls),
            ("POST", r"/pulls", self._create_pull),
            ("GET", r"/pulls/(?P<n>\d+)", self._get_pull),
            ("PATCH", r"/pulls/(?P<n>\d+)", self._update_pull),
            ("GET", r"/actions/artifacts", self._list_artifacts),
            ("GET", r"/actions/artifacts/(?P<id>\d+)/(?P<format>zip)", self._download_artifact),
        ]
        self.routes = [(m, re.compile(repo + suffix), handler) for m, suffix, handler in table]

    def _get_repo(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        owner, name = self.repository.split("/")
        return (
            200,
            {
                "id": 1,
                "name": name,
                "full_name": self.repository,
                "owner": {"login": owner},
                "default_branch": "main",
                "private": False,
            },
            {},
        )

    def _get_issue(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        number = int(m["n"])
        if number in self.pulls:
            return 200, self._pull_as_issue(self.pulls[number]), {}
        issue = self.issues.get(number)
        return (200, self._issue(issue), {}) if issue else (404, {"message": "Not Found"}, {})

    def _list_issues(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        wanted = [name for name in q.get("labels", "").split(",") if name]
        state = q.get("state", "open")
        found = [
            self._pull_as_issue(item) if isinstance(item, GhPull) else self._issue(item)
            for _, item in sorted({**self.issues, **self.pulls}.items())
            if state in (item.state, "all") and all(name in item.labels for name in wanted)
        ]  # GitHub lists pull requests as issues too, with a `pull_request` key
        return self._page(found, q, f"/repos/{self.repository}/issues")

    def _dispatch(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        workflow = unquote(m["wf"])
        if workflow not in self.workflows:
            return 404, {"message": "Not Found"}, {}
        if body.get("ref") not in self.branches():
            return 422, {"message": f"No ref found for: {body.get('ref')}"}, {}
        inputs = dict(body.get("inputs") or {})
        self.dispatches.append(Dispatch(workflow, body["ref"], inputs, self.token_user))
        return 204, None, {}

    def _list_comments(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        items = [self._comment(c) for c in self.comments_on(int(m["n"]))]
        return self._page(items, q, f"/repos/{self.repository}/issues/{m['n']}/comments")

    def _create_comment(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        number = int(m["n"])
        if number not in self.issues and number not in self.pulls:
            return 404, {"message": "Not Found"}, {}
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Validation Failed"}, {}
        if len(body["body"]) > MAX_BODY:
            return 422, _too_long(), {}
        login, kind = self.token_user
        comment = self.add_comment(number, body["body"], login, user_type=kind, association="NONE")
        return 201, self._comment(comment), {}

    def _edit_comment(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        comment = self.comments.get(int(m["id"]))
        if comment is None:
            return 404, {"message": "Not Found"}, {}
        if len(body["body"]) > MAX_BODY:
            return 422, _too_long(), {}
        comment.body = body["body"]
        comment.updated_at = self.now()
        return 200, self._comment(comment), {}

    def _add_labels(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        issue = self.issues.get(int(m["n"]))
        if issue is None:
            return 404, {"message": "Not Found"}, {}
        for name in body["labels"]:
            if name not in issue.labels:
                issue.labels.append(name)
        return 200, [self._label(name) for name in issue.labels], {}

    def _remove_label(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        issue = self.issues.get(int(m["n"]))
        name = unquote(m["name"].replace("%2F", "/"))
        if issue is None or name not in issue.labels:
            return 404, {"message": "Label does not exist"}, {}
        issue.labels.remove(name)
        return 200, [self._label(label) for label in issue.labels], {}

    def _permission(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        user = unquote(m["user"])
        if user not in self.permissions:
            return 404, {"message": f"{user} is not a user"}, {}
        permission = self.permissions[user]
        role = {"admin": "admin", "write": "write", "read": "read"}.get(permission, "none")
        return 200, {"permission": permission, "role_name": role, "user": {"login": user}}, {}

    def close_pull(self, number: int, by: str, *, merged: bool = False) -> None:
        """A person closes (or merges) the pull request in the web interface."""
        pull = self.pulls[number]
        pull.head_sha = self.branches().get(pull.head, "")
        pull.state, pull.merged, pull.closed_by = "closed", merged, by

    def _list_pulls(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        pulls = [p for p in self.pulls.values() if q.get("state", "open") in (p.state, "all")]
        if q.get("sort") == "updated" and q.get("direction") == "desc":
            pulls.reverse()  # the newest number was updated last in these scenarios
        if "head" in q:  # GitHub filters by `user:ref`
            pulls = [p for p in pulls if f"{p.head_repo.split('/')[0]}:{p.head}" == q["head"]]
        return 200, [self._pull(p) for p in pulls], {}

    def _create_pull(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        if not self.actions_may_create_prs and self.token_user[1] == "Bot":
            message = "GitHub Actions is not permitted to create or approve pull requests."
            return 403, {"message": message, "documentation_url": "https://docs.github.com"}, {}
        if len(body.get("body") or "") > MAX_BODY:
            return 422, _too_long(), {}
        if body.get("draft") and not self.drafts_supported:
            return 422, _validation("Draft pull requests are not supported in this repository."), {}
        head, base = body["head"], body["base"]
        if any(p.head == head and p.state == "open" for p in self.pulls.values()):
            owner = self.repository.split("/")[0]
            return 422, _validation(f"A pull request already exists for {owner}:{head}."), {}
        problem = self._branch_problem(head, base)
        if problem:
            return 422, _validation(problem), {}
        number = 1 + max([*self.issues, *self.pulls, 0])
        pull = GhPull(
            number,
            head,
            base,
            body["title"],
            body.get("body") or "",
            bool(body.get("draft")),
            self.repository,
        )
        self.pulls[number] = pull
        return 201, self._pull(pull), {}

    def _branch_problem(self, head: str, base: str) -> str:
        branches = self.branches()
        if head not in branches:
            return f"head: {head} does not exist"
        if branches[head] == branches.get(base):
            return f"No commits between {base} and {head}"
        return ""

    def _get_pull(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        pull = self.pulls.get(int(m["n"]))
        return (200, self._pull(pull), {}) if pull else (404, {"message": "Not Found"}, {})

    def _update_pull(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        pull = self.pulls.get(int(m["n"]))
        if pull is None:
            return 404, {"message": "Not Found"}, {}
        if len(body.get("body") or "") > MAX_BODY:
            return 422, _too_long(), {}
        pull.title = body.get("title", pull.title)
        pull.body = body.get("body", pull.body)
        return 200, self._pull(pull), {}

    def _list_artifacts(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        named = [a for a in self.artifacts if q.get("name") in (None, a.name)]
        newest = sorted(named, key=lambda a: a.created_at, reverse=True)
        page = newest[: int(q.get("per_page", 30))]
        listed = [a.to_api(self.api_url, self.repository) for a in page]
        return 200, {"total_count": len(named), "artifacts": listed}, {}

    def _download_artifact(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        artifact = next((a for a in self.artifacts if a.id == int(m["id"])), None)
        if artifact is None:
            return 404, {"message": "Not Found"}, {}
        if artifact.gone:
            return 410, {"message": "Artifact has expired"}, {}
        return 302, None, {"Location": self.publish_blob(artifact.data)}

    # -- shapes ----------------------------------------------------------------------------------

    def _page(self, items: list[JSON], q: dict[str, str], path: str) -> Reply:
        chunk, more = self.page_of(items, q, 30)
        headers = {}
        if more:
            next_page = int(q.get("page", 1)) + 1
            query = urlencode({**q, "per_page": q.get("per_page", 30), "page": next_page})
            headers["Link"] = f'<{self.api_url}{path}?{query}>; rel="next"'
        return 200, chunk, headers

    def _user(self, login: str, kind: str = "User") -> JSON:
        return {"login": login, "id": abs(hash(login)) % 10_000_000, "type": kind}

    def _label(self, name: str) -> JSON:
        return {"id": abs(hash(name)) % 10_000_000, "name": name, "color": "ededed"}

    def _issue(self, issue: GhIssue) -> JSON:
        return {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "locked": issue.locked,
            "labels": [self._label(name) for name in issue.labels],
            "user": self._user(issue.author),
            "html_url": f"{self.base_url}/{self.repository}/issues/{issue.number}",
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
        }

    def _pull_as_issue(self, pull: GhPull) -> JSON:
        return {
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "state": pull.state,
            "locked": False,
            "labels": [self._label(name) for name in pull.labels],
            "user": self._user(self.token_user[0], "Bot"),
            "html_url": f"{self.base_url}/{self.repository}/pull/{pull.number}",
            "pull_request": {"url": f"{self.api_url}/repos/{self.repository}/pulls/{pull.number}"},
            "closed_by": self._user(pull.closed_by, "User") if pull.closed_by else None,
        }

    def _comment(self, comment: GhComment) -> JSON:
        return {
            "id": comment.id,
            "body": comment.body,
            "user": self._user(comment.user, comment.user_type),
            "author_association": comment.association,
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "html_url": f"{self.base_url}/{self.repository}/issues/{comment.issue}"
            f"#issuecomment-{comment.id}",
        }

    def _pull(self, pull: GhPull) -> JSON:
        return {
            "number": pull.number,
            "html_url": f"{self.base_url}/{self.repository}/pull/{pull.number}",
            "title": pull.title,
            "body": pull.body,
            "draft": pull.draft,
            "state": pull.state,
            "merged_at": "2026-01-02T03:04:05Z" if pull.merged else None,
            "head": {
                "ref": pull.head,
                "sha": pull.head_sha or self.branches().get(pull.head, ""),
                "repo": {"full_name": pull.head_repo},
            },
            "base": {"ref": pull.base, "repo": {"full_name": self.repository}},
        }


def _not_a_node(node_id: str) -> str:
    return f"Could not resolve to a node with the global id of '{node_id}'"


def _hunk_ending_at(diff: str, line: int) -> str:
    """The hunk of a file's diff that holds new line `line`, up to that line (GitHub's
    `diff_hunk` of a comment)."""
    kept: list[str] = []
    number = 0
    for text in diff.split("\n"):
        if text.startswith("@@"):
            kept, number = [text], int(text.split("+")[1].split(",")[0].split(" ")[0])
            continue
        if not kept:
            continue
        kept.append(text)
        if text[:1] in (" ", "+"):
            if number == line:
                return "\n".join(kept)
            number += 1
    return ""


def _validation(message: str) -> JSON:
    return {
        "message": "Validation Failed",
        "errors": [{"resource": "PullRequest", "code": "custom", "message": message}],
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
    }


def _too_long() -> JSON:
    return {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "Issue",
                "code": "custom",
                "field": "body",
                "message": f"body is too long (maximum is {MAX_BODY} characters)",
            }
        ],
    }
