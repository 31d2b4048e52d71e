"""The local forge: issues, comments, labels and pull requests as files under `.planner/`.

    .planner/issues/<N>.md|.json|.yml        the issue (written by a person; see issue_file.py)
    .planner/issues/<N>/comments/<seq>.json  comments planner wrote (id, author, body, created_at)
    .planner/issues/<N>/comments/<name>.md   comments a person wrote (author 'local')
    .planner/issues/<N>/labels.json          labels planner set
    .planner/issues/<N>/replies-read.json     the comment files runs have taken as their event
    .planner/pulls/<N>.json                  the "pull request" of a branch

`.planner/` is kept out of commits through .git/info/exclude, and nothing is pushed.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.ci.forges.base import (
    Actor,
    CommentData,
    ForgeAdapter,
    GitRemote,
    IssueData,
    PullRequestData,
    parse_time,
)
from planner.ci.forges.issue_file import load_issue_file
from planner.core.errors import UserInputError
from planner.run.runner import exclude_from_git
from planner.tools.sandbox.safe_env import git_argv, git_environment

STATE_DIR = ".planner"
ISSUE_SUFFIXES = (".md", ".json", ".yml", ".yaml", ".markdown", ".txt")
OWN_AUTHOR = "planner"


class LocalForge(ForgeAdapter):
    platform = "local"

    def __init__(self, root: Path, repository: str = "") -> None:
        super().__init__()
        self.root = root.resolve()
        self.state = self.root / STATE_DIR
        self.repository = repository or self.root.name
        self.state.mkdir(exist_ok=True)
        exclude_from_git(self.root, self.state)

    # -- issues and comments ---------------------------------------------------------------------

    def issue_file(self, number: int) -> Path:
        for suffix in ISSUE_SUFFIXES:
            candidate = self.state / "issues" / f"{number}{suffix}"
            if candidate.is_file():
                return candidate
        raise UserInputError(
            f"no issue {number}: create {self.state / 'issues' / f'{number}.md'} "
            "('# Title' on the first line, then the description)"
        )

    def get_issue(self, number: int) -> IssueData:
        path = self.issue_file(number)
        issue = load_issue_file(path, self.repository, str(number))
        return IssueData(
            number=number,
            title=issue.title,
            body=issue.body,
            labels=[*issue.labels, *self._labels(number)],
            author=issue.author,
            url=path.as_uri(),
        )

    def list_comments(self, number: int) -> list[CommentData]:
        directory = self._comments_dir(number)
        if not directory.is_dir():
            return []
        paths = [p for p in directory.iterdir() if p.is_file() and p.suffix in (".json", ".md")]
        found = [self._read_comment(path) for path in paths]
        return sorted((c for c in found if c), key=lambda c: (c.created_at, c.id))

    def _create_comment(self, number: int, body: str) -> CommentData:
        directory = self._comments_dir(number)
        directory.mkdir(parents=True, exist_ok=True)
        sequence = 1 + sum(1 for path in directory.glob("*.json"))
        comment = CommentData(
            id=f"{sequence:04d}",
            body=body,
            author=OWN_AUTHOR,
            created_at=_now(),
            trusted=True,
        )
        return self._write_comment(number, comment)

    def _edit_comment(self, number: int, comment_id: str, body: str) -> CommentData:
        path = self._comments_dir(number) / f"{comment_id}.json"
        existing = self._read_comment(path)
        if existing is None:
            raise UserInputError(f"comment {path} is missing or unreadable")
        return self._write_comment(number, existing.model_copy(update={"body": body}))

    def _write_comment(self, number: int, comment: CommentData) -> CommentData:
        path = self._comments_dir(number) / f"{comment.id}.json"
        comment = comment.model_copy(update={"url": path.as_uri()})
        _write_json(path, comment.model_dump(exclude={"trusted", "url"}))
        return comment

    def _read_comment(self, path: Path) -> CommentData | None:
        if path.suffix == ".md":
            stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
            return CommentData(
                id=path.stem,
                body=path.read_text(encoding="utf-8", errors="replace"),
                author="local",
                created_at=stamp,
                url=path.as_uri(),
            )
        data = _read_json(path)
        if not isinstance(data, dict) or "id" not in data:
            return None
        comment = CommentData.model_validate({**data, "url": path.as_uri()})
        return comment.model_copy(update={"trusted": comment.author == OWN_AUTHOR})

    def next_reply(self, number: int) -> CommentData | None:
        """The oldest comment file a run has not taken yet; taken now (a run without
        --instruction answers with it, as a comment's event would on a hosted forge)."""
        read_file = self.state / "issues" / str(number) / "replies-read.json"
        taken = _read_json(read_file)
        taken = [str(name) for name in taken] if isinstance(taken, list) else []
        fresh = [c for c in self.list_comments(number) if not c.trusted and c.id not in taken]
        if not fresh:
            return None
        _write_json(read_file, [*taken, fresh[0].id])
        return fresh[0]

    def _comments_dir(self, number: int) -> Path:
        return self.state / "issues" / str(number) / "comments"

    # -- labels ----------------------------------------------------------------------------------

    def _labels_file(self, number: int) -> Path:
        return self.state / "issues" / str(number) / "labels.json"

    def _labels(self, number: int) -> list[str]:
        data = _read_json(self._labels_file(number))
        return [str(label) for label in data] if isinstance(data, list) else []

    def _add_label(self, number: int, label: str) -> None:
        labels = self._labels(number)
        if label not in labels:
            _write_json(self._labels_file(number), [*labels, label])

    def _remove_label(self, number: int, label: str) -> None:
        labels = [name for name in self._labels(number) if name != label]
        _write_json(self._labels_file(number), labels)

    def comment_order(self, comment: CommentData) -> tuple[int, str]:
        """Local ids are per-author names, so only the time orders them (microseconds)."""
        created = parse_time(comment.created_at)
        return (0, created.astimezone(UTC).isoformat() if created else "")

    def can_write(self, actor: Actor) -> bool:
        return True  # whoever runs planner locally owns the working tree

    def default_branch(self) -> str:
        origin_head = _git(self.root, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
        if origin_head:
            return origin_head.removeprefix("origin/")
        for name in ("main", "master"):
            if _git(self.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}"):
                return name
        return _git(self.root, "rev-parse", "--abbrev-ref", "HEAD") or "main"

    # -- pull requests ---------------------------------------------------------------------------

    def _pulls(self) -> list[tuple[Path, dict[str, Any]]]:
        directory = self.state / "pulls"
        files = sorted(directory.glob("*.json")) if directory.is_dir() else []
        return [(path, data) for path in files if isinstance(data := _read_json(path), dict)]

    def get_pull_request(self, number: int) -> PullRequestData | None:
        path = self.state / "pulls" / f"{number}.json"
        data = _read_json(path)
        return _pull(path, data) if isinstance(data, dict) else None

    def find_pull_request(self, head: str) -> PullRequestData | None:
        for path, data in self._pulls():
            if data.get("head") == head and data.get("state", "open") == "open":
                return _pull(path, data)
        return None

    def _create_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequestData:
        number = 1 + max(
            (int(path.stem) for path, _ in self._pulls() if path.stem.isdigit()), default=0
        )
        data = {
            "number": number,
            "head": head,
            "base": base,
            "title": title,
            "body": body,
            "draft": draft,
            "state": "open",
        }
        path = self.state / "pulls" / f"{number}.json"
        _write_json(path, data)
        return _pull(path, data)

    def _update_pull_request(
        self, pull: PullRequestData, *, title: str, body: str, draft: bool
    ) -> PullRequestData:
        path = self.state / "pulls" / f"{pull.number}.json"
        data = {**(_read_json(path) or {}), "title": title, "body": body, "draft": draft}
        _write_json(path, data)
        return _pull(path, data)

    def git_remote(self) -> GitRemote | None:
        return None  # a local run never pushes; the branch stays in the working tree


def _pull(path: Path, data: dict[str, Any]) -> PullRequestData:
    return PullRequestData.model_validate({**data, "url": path.as_uri()})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: Any) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _git(root: Path, *args: str) -> str:
    completed = subprocess.run(
        git_argv(*args, repository=root),
        cwd=root,
        env=git_environment(os.environ),
        capture_output=True,
        text=True,
    )
    return completed.stdout.strip() if completed.returncode == 0 else ""
