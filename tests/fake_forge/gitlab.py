"""A fake GitLab (REST v4 under /api/v4, plus git smart HTTP).

In-memory issues (by iid), notes, labels, project members, users, merge requests, their diff
discussions, and CI jobs with artifacts archives (served directly or through a 302 to the fake
object storage, 404 once expired), shaped like GitLab's responses for every field planner reads;
pagination with `x-next-page`. Requests are validated the way GitLab does for the parameters
planner sends (required ones missing -> 400).

A diff discussion is a note on lines of a merge request's head (its `position`). When new
commits leave those lines as they were, GitLab moves the note to the new head; when they change,
the note stays on the old one (outdated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_forge.core import JSON, FakeServerBase, Reply, git


@dataclass
class GlIssue:
    iid: int
    title: str
    description: str = ""
    state: str = "opened"
    discussion_locked: bool | None = None
    labels: list[str] = field(default_factory=list)
    author: str = "dana"


@dataclass
class GlNote:
    id: int
    iid: int
    body: str
    author: str
    system: bool = False
    created_at: str = ""
    noteable: str = "Issue"
    """"Issue", or "MergeRequest" for a note in a merge request's conversation."""


@dataclass
class GlPipeline:
    """One `POST /projects/:id/pipeline`: the pipeline GitLab would run (nothing runs here)."""

    id: int
    ref: str
    variables: dict[str, str]
    user: tuple[int, str]
    """(id, username) of the token's user: the pipeline's GITLAB_USER_ID / GITLAB_USER_LOGIN."""


@dataclass
class GlMergeRequest:
    iid: int
    source_branch: str
    target_branch: str
    title: str
    description: str
    state: str = "opened"
    source_project_id: int = 42
    closed_by: str = ""
    sha: str = ""
    """Frozen when the merge request is closed; else the source branch's head."""


@dataclass
class GlDiscussion:
    """A thread on lines start_line..line of the merge request's head `head_sha`."""

    id: str
    iid: int
    path: str
    line: int
    start_line: int | None
    base_sha: str
    head_sha: str
    lines: list[str]
    notes: list[GlNote] = field(default_factory=list)
    resolved: bool = False


@dataclass
class GlJob:
    id: int
    name: str
    status: str
    created_at: str
    archive: bytes | None = None
    expire_at: str | None = "2999-01-01T00:00:00.000Z"
    redirect: bool = False
    """Object storage with direct download: the API answers 302 to a pre-signed URL."""
    deleted: bool = False
    """Listed with an archive, but the archive is gone (expired and removed meanwhile)."""


class FakeGitLab(FakeServerBase):
    api_prefix = "/api/v4"

    def __init__(
        self,
        root: Path,
        *,
        repository: str = "acme/widgets",
        project_id: int = 42,
        token: str = "glpat-fakeProjectToken0123456789",
        page_size: int = 2,
    ) -> None:
        self.repository = repository
        super().__init__(root, token)
        self.project_id = project_id
        self.page_size = page_size
        self.issues: dict[int, GlIssue] = {}
        self.notes: dict[int, GlNote] = {}
        self.merge_requests: dict[int, GlMergeRequest] = {}
        self.jobs: dict[int, GlJob] = {}
        self.pipelines: list[GlPipeline] = []
        self.users: dict[str, int] = {"dana": 7}
        self.members: dict[int, int] = {}
        self.token_user = (901, f"project_{project_id}_bot_5f2a")
        self.discussions: dict[str, GlDiscussion] = {}
        self._next_note = 9100
        self._add_routes()

    # -- test helpers ----------------------------------------------------------------------------

    def add_issue(self, iid: int, title: str, description: str = "", **fields: Any) -> GlIssue:
        issue = GlIssue(iid, title, description, **fields)
        self.issues[iid] = issue
        return issue

    def add_note(self, iid: int, body: str, author: str = "dana", system: bool = False) -> GlNote:
        self._next_note += 1
        note = GlNote(self._next_note, iid, body, author, system, self.now())
        self.notes[note.id] = note
        return note

    def add_mr_note(self, iid: int, body: str, author: str = "dana") -> GlNote:
        """A comment in a merge request's conversation (not on a line of its diff)."""
        note = self.add_note(iid, body, author)
        note.noteable = "MergeRequest"
        return note

    def add_diff_discussion(
        self,
        iid: int,
        path: str,
        line: int,
        body: str,
        author: str = "dana",
        *,
        start_line: int | None = None,
    ) -> GlDiscussion:
        """A person comments on lines start_line..line of the merge request's head."""
        mr = self.merge_requests[iid]
        head = self.branches()[mr.source_branch]
        base = git(self.bare, "merge-base", mr.target_branch, head)
        discussion = GlDiscussion(
            f"{len(self.discussions) + 1:040x}",
            iid,
            path,
            line,
            start_line,
            base,
            head,
            self.lines_at(head, path, line, start_line),
        )
        self.discussions[discussion.id] = discussion
        self.reply_in_discussion(discussion.id, body, author)
        return discussion

    def reply_in_discussion(self, discussion_id: str, body: str, author: str) -> GlNote:
        self._next_note += 1
        note = GlNote(self._next_note, self.discussions[discussion_id].iid, body, author)
        note.created_at = self.now()
        self.discussions[discussion_id].notes.append(note)
        return note

    def discussions_on(self, iid: int) -> list[GlDiscussion]:
        return [d for d in self.discussions.values() if d.iid == iid]

    def position(self, discussion: GlDiscussion) -> JSON:
        """The note's position as GitLab keeps it: moved to the current head while the lines
        read the same there, else left on the head it was made on."""
        mr = self.merge_requests[discussion.iid]
        head = self.branches().get(mr.source_branch, discussion.head_sha)
        sha = discussion.head_sha
        if head != sha:
            try:
                now = self.lines_at(head, discussion.path, discussion.line, discussion.start_line)
            except AssertionError:
                now = []
            if now == discussion.lines:
                sha = head
        shaped: dict[str, Any] = {
            "base_sha": discussion.base_sha,
            "start_sha": discussion.base_sha,
            "head_sha": sha,
            "old_path": discussion.path,
            "new_path": discussion.path,
            "position_type": "text",
            "old_line": None,
            "new_line": discussion.line,
        }
        if discussion.start_line:
            shaped["line_range"] = {
                "start": _line_point(discussion.path, discussion.start_line),
                "end": _line_point(discussion.path, discussion.line),
            }
        return shaped

    def add_job(self, name: str, status: str = "success", **fields: Any) -> GlJob:
        job = GlJob(5000 + len(self.jobs) + 1, name, status, self.now(), **fields)
        self.jobs[job.id] = job
        return job

    def notes_on(self, iid: int, noteable: str = "Issue") -> list[GlNote]:
        found = (n for n in self.notes.values() if n.iid == iid and n.noteable == noteable)
        return sorted(found, key=lambda n: n.id)

    def authorized(self, headers: Any) -> bool:
        return headers.get("PRIVATE-TOKEN") == self.token or (
            headers.get("Authorization") == f"Bearer {self.token}"
        )

    def git_user_ok(self, username: str, password: str) -> bool:
        return bool(username) and password == self.token

    # -- routes ----------------------------------------------------------------------------------

    def _add_routes(self) -> None:
        project = (
            rf"/projects/(?:{self.project_id}|{re.escape(self.repository.replace('/', '%2F'))})"
        )
        table = [
            ("GET", project, self._get_project),
            ("GET", project + r"/issues", self._list_issues),
            ("POST", project + r"/pipeline", self._create_pipeline),
            ("GET", project + r"/issues/(?P<n>\d+)", self._get_issue),
            ("PUT", project + r"/issues/(?P<n>\d+)", self._update_issue),
            ("GET", project + r"/issues/(?P<n>\d+)/notes", self._list_notes),
            ("POST", project + r"/issues/(?P<n>\d+)/notes", self._create_note),
            ("PUT", project + r"/issues/(?P<n>\d+)/notes/(?P<id>\d+)", self._edit_note),
            ("GET", project + r"/members/all/(?P<user>\d+)", self._member),
            ("GET", project + r"/merge_requests", self._list_mrs),
            ("POST", project + r"/merge_requests", self._create_mr),
            ("GET", project + r"/merge_requests/(?P<n>\d+)", self._get_mr),
            ("PUT", project + r"/merge_requests/(?P<n>\d+)", self._update_mr),
            ("GET", project + r"/merge_requests/(?P<n>\d+)/discussions", self._list_discussions),
            ("GET", project + r"/merge_requests/(?P<n>\d+)/notes", self._list_mr_notes),
            (
                "POST",
                project + r"/merge_requests/(?P<n>\d+)/discussions/(?P<d>[0-9a-f]+)/notes",
                self._reply_in_discussion,
            ),
            (
                "PUT",
                project + r"/merge_requests/(?P<n>\d+)/discussions/(?P<d>[0-9a-f]+)",
                self._resolve_discussion,
            ),
            ("GET", project + r"/jobs", self._list_jobs),
            ("GET", project + r"/jobs/(?P<id>\d+)/artifacts", self._job_artifacts),
            ("GET", r"/users", self._find_users),
            ("GET", r"/user", self._current_user),
        ]
        self.routes = [(m, re.compile(pattern), handler) for m, pattern, handler in table]

    def _get_project(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        return (
            200,
            {
                "id": self.project_id,
                "path_with_namespace": self.repository,
                "default_branch": "main",
                "web_url": f"{self.base_url}/{self.repository}",
            },
            {},
        )

    def _get_issue(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        issue = self.issues.get(int(m["n"]))
        return (200, self._issue(issue), {}) if issue else (404, {"message": "404 Not found"}, {})

    def _list_issues(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        wanted = _split(q.get("labels"))
        state = q.get("state", "all")
        issues = [
            issue
            for _, issue in sorted(self.issues.items())
            if state in (issue.state, "all") and all(name in issue.labels for name in wanted)
        ]
        return self._paged([self._issue(issue) for issue in issues], q)

    def _create_pipeline(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        if not isinstance(body, dict) or not body.get("ref"):
            return 400, {"error": "ref is missing"}, {}
        if body["ref"] not in self.branches():
            return 400, {"message": {"base": ["Reference not found"]}}, {}
        variables = body.get("variables") or []
        if not all(isinstance(v, dict) and {"key", "value"} <= set(v) for v in variables):
            return 400, {"error": "variables is invalid"}, {}
        pipeline = GlPipeline(
            8000 + len(self.pipelines) + 1,
            body["ref"],
            {str(v["key"]): str(v["value"]) for v in variables},
            self.token_user,
        )
        self.pipelines.append(pipeline)
        shaped = {"id": pipeline.id, "ref": pipeline.ref, "status": "created", "source": "api"}
        return 201, {**shaped, "web_url": f"{self.base_url}/{self.repository}/-/pipelines/1"}, {}

    def _update_issue(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        issue = self.issues.get(int(m["n"]))
        if issue is None:
            return 404, {"message": "404 Not found"}, {}
        for name in _split(body.get("add_labels")):
            if name not in issue.labels:
                issue.labels.append(name)
        issue.labels = [n for n in issue.labels if n not in _split(body.get("remove_labels"))]
        return 200, self._issue(issue), {}

    def _list_notes(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        notes = self.notes_on(int(m["n"]))
        if q.get("sort") == "desc":
            notes.reverse()
        return self._paged([self._note(note) for note in notes], q)

    def _list_mr_notes(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        """The merge request's notes, as GitLab lists them: its conversation and the notes of
        its diff discussions (type DiffNote), oldest first."""
        iid = int(m["n"])
        if iid not in self.merge_requests:
            return 404, {"message": "404 Not found"}, {}
        notes = [self._note(n) for n in self.notes_on(iid, "MergeRequest")]
        notes += [self._diff_note(d, n) for d in self.discussions_on(iid) for n in d.notes]
        notes.sort(key=lambda note: int(note["id"]))
        return self._paged(notes, q)

    def _paged(self, items: list[JSON], q: dict[str, str]) -> Reply:
        """One page of `items`, with GitLab's `x-page` / `x-next-page` headers."""
        chunk, more = self.page_of(items, q, 20)
        page = int(q.get("page", 1))
        headers = {"x-page": str(page), "x-next-page": str(page + 1) if more else ""}
        return 200, chunk, headers

    def _create_note(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        if int(m["n"]) not in self.issues:
            return 404, {"message": "404 Not found"}, {}
        if not isinstance(body, dict) or not body.get("body"):
            return 400, {"error": "body is missing"}, {}
        note = self.add_note(int(m["n"]), body["body"], self.token_user[1])
        return 201, self._note(note), {}

    def _edit_note(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        note = self.notes.get(int(m["id"]))
        if note is None or note.iid != int(m["n"]):
            return 404, {"message": "404 Note Not Found"}, {}
        if note.author != self.token_user[1]:
            return 403, {"message": "403 Forbidden"}, {}
        note.body = body["body"]
        return 200, self._note(note), {}

    def _member(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        user_id = int(m["user"])
        if user_id not in self.members:
            return 404, {"message": "404 Not found"}, {}
        username = next((name for name, uid in self.users.items() if uid == user_id), "?")
        return 200, {"id": user_id, "username": username, "access_level": self.members[user_id]}, {}

    def close_mr(self, iid: int, by: str, *, merged: bool = False) -> None:
        """A person closes (or merges) the merge request in the web interface."""
        mr = self.merge_requests[iid]
        mr.sha = self.branches().get(mr.source_branch, "")
        mr.state, mr.closed_by = ("merged" if merged else "closed"), by

    def _list_mrs(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        found = [
            mr
            for mr in self.merge_requests.values()
            if q.get("state", "all") in (mr.state, "all")
            and q.get("source_branch", mr.source_branch) == mr.source_branch
        ]
        if q.get("order_by") == "updated_at" and q.get("sort") == "desc":
            found.reverse()  # the newest iid was updated last in these scenarios
        return 200, [self._mr(mr) for mr in found], {}

    def _create_mr(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        missing = [k for k in ("source_branch", "target_branch", "title") if not body.get(k)]
        if missing:
            return 400, {"error": f"{', '.join(missing)} is missing"}, {}
        source = body["source_branch"]
        for mr in self.merge_requests.values():
            if mr.source_branch == source and mr.state == "opened":
                message = (
                    f"Another open merge request already exists for this source branch: !{mr.iid}"
                )
                return 409, {"message": [message]}, {}
        if source not in self.branches():
            return 400, {"message": {"source_branch": ["is invalid"]}}, {}
        iid = 1 + max([*self.merge_requests, 0])
        mr = GlMergeRequest(
            iid, source, body["target_branch"], body["title"], body.get("description") or ""
        )
        self.merge_requests[iid] = mr
        return 201, self._mr(mr), {}

    def _get_mr(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        mr = self.merge_requests.get(int(m["n"]))
        return (200, self._mr(mr), {}) if mr else (404, {"message": "404 Not found"}, {})

    def _update_mr(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        mr = self.merge_requests.get(int(m["n"]))
        if mr is None:
            return 404, {"message": "404 Not found"}, {}
        mr.title = body.get("title", mr.title)
        mr.description = body.get("description", mr.description)
        return 200, self._mr(mr), {}

    def _list_discussions(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        if int(m["n"]) not in self.merge_requests:
            return 404, {"message": "404 Not found"}, {}
        shaped = [self._discussion(d) for d in self.discussions_on(int(m["n"]))]
        return self._paged(shaped, q)

    def _reply_in_discussion(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        discussion = self.discussions.get(m["d"])
        if discussion is None or discussion.iid != int(m["n"]):
            return 404, {"message": "404 Discussion Not Found"}, {}
        if not isinstance(body, dict) or not body.get("body"):
            return 400, {"error": "body is missing"}, {}
        note = self.reply_in_discussion(discussion.id, body["body"], self.token_user[1])
        return 201, self._diff_note(discussion, note), {}

    def _resolve_discussion(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        discussion = self.discussions.get(m["d"])
        if discussion is None or discussion.iid != int(m["n"]):
            return 404, {"message": "404 Discussion Not Found"}, {}
        resolved = (body or {}).get("resolved", q.get("resolved"))
        if resolved not in (True, False, "true", "false"):
            return 400, {"error": "resolved is missing"}, {}
        discussion.resolved = resolved in (True, "true")
        return 200, self._discussion(discussion), {}

    def _list_jobs(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        jobs = sorted(self.jobs.values(), key=lambda job: job.id, reverse=True)
        return self._paged([self._job(job) for job in jobs], q)

    def _job_artifacts(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        job = self.jobs.get(int(m["id"]))
        if job is None or job.archive is None or job.deleted:
            return 404, {"message": "404 Not found"}, {}
        if job.redirect:
            return 302, None, {"Location": self.publish_blob(job.archive)}
        return 200, job.archive, {}

    def _find_users(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        name = q.get("username", "")
        found = [{"id": uid, "username": n} for n, uid in self.users.items() if n == name]
        return 200, found, {}

    def _current_user(self, m: re.Match[str], q: dict[str, str], body: JSON) -> Reply:
        user_id, username = self.token_user
        return 200, {"id": user_id, "username": username, "bot": True}, {}

    # -- shapes ----------------------------------------------------------------------------------

    def _issue(self, issue: GlIssue) -> JSON:
        return {
            "iid": issue.iid,
            "project_id": self.project_id,
            "title": issue.title,
            "description": issue.description,
            "state": issue.state,
            "discussion_locked": issue.discussion_locked,
            "labels": list(issue.labels),
            "author": {"username": issue.author},
            "web_url": f"{self.base_url}/{self.repository}/-/issues/{issue.iid}",
        }

    def _note(self, note: GlNote) -> JSON:
        return {
            "id": note.id,
            "body": note.body,
            "author": {"id": self.users.get(note.author, 0), "username": note.author},
            "created_at": note.created_at,
            "system": note.system,
            "noteable_type": note.noteable,
            "noteable_iid": note.iid,
        }

    def _discussion(self, discussion: GlDiscussion) -> JSON:
        return {
            "id": discussion.id,
            "individual_note": False,
            "notes": [self._diff_note(discussion, note) for note in discussion.notes],
        }

    def _diff_note(self, discussion: GlDiscussion, note: GlNote) -> JSON:
        return {
            "id": note.id,
            "type": "DiffNote",
            "body": note.body,
            "author": {"id": self._user_id(note.author), "username": note.author},
            "created_at": note.created_at,
            "updated_at": note.created_at,
            "system": False,
            "noteable_type": "MergeRequest",
            "noteable_iid": discussion.iid,
            "resolvable": True,
            "resolved": discussion.resolved,
            "position": self.position(discussion),
        }

    def _user_id(self, username: str) -> int:
        return self.token_user[0] if username == self.token_user[1] else self.users.get(username, 0)

    def _job(self, job: GlJob) -> JSON:
        shaped: dict[str, Any] = {
            "id": job.id,
            "name": job.name,
            "status": job.status,
            "stage": "test",
            "ref": "main",
            "created_at": job.created_at,
            "artifacts": [],
            "artifacts_expire_at": None,
            "pipeline": {"id": job.id - 4000, "project_id": self.project_id, "ref": "main"},
            "web_url": f"{self.base_url}/{self.repository}/-/jobs/{job.id}",
        }
        if job.archive is not None:
            size = len(job.archive)
            shaped["artifacts_file"] = {"filename": "artifacts.zip", "size": size}
            shaped["artifacts"] = [
                {"file_type": "archive", "size": size, "filename": "artifacts.zip"},
                {"file_type": "metadata", "size": 150, "filename": "metadata.gz"},
            ]
            shaped["artifacts_expire_at"] = job.expire_at
        return shaped

    def _mr(self, mr: GlMergeRequest) -> JSON:
        return {
            "iid": mr.iid,
            "project_id": self.project_id,
            "source_project_id": mr.source_project_id,
            "target_project_id": self.project_id,
            "source_branch": mr.source_branch,
            "target_branch": mr.target_branch,
            "title": mr.title,
            "description": mr.description,
            "state": mr.state,
            "sha": mr.sha or self.branches().get(mr.source_branch, ""),
            "closed_by": _user_of(mr.closed_by) if mr.state == "closed" else None,
            "merge_user": _user_of(mr.closed_by) if mr.state == "merged" else None,
            "draft": mr.title.startswith(("Draft:", "[Draft]", "(Draft)")),
            "web_url": f"{self.base_url}/{self.repository}/-/merge_requests/{mr.iid}",
        }


def _line_point(path: str, line: int) -> JSON:
    code = f"{abs(hash(path)) % 16**40:040x}_{line}_{line}"
    return {"line_code": code, "type": "new", "old_line": None, "new_line": line}


def _user_of(username: str) -> JSON | None:
    return {"id": 99, "username": username, "name": username} if username else None


def _split(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [part.strip() for part in str(value or "").split(",") if part.strip()]
