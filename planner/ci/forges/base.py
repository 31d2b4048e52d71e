"""What every forge adapter shares: the data it returns, secret redaction, and the logic built
on an adapter's primitives (one tracking comment, status labels, one pull request per branch).

Adapters (github.py, gitlab.py, local.py) implement the primitives only; everything a person
sees is written through the public methods here, so every body is redacted on its way out.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from planner.ci.forges.threads import ReviewThread
from planner.core.errors import ApiError, UserInputError
from planner.core.interfaces import Forge
from planner.text.inert import inert_post
from planner.text.redaction import redact, register_secret

log = logging.getLogger(__name__)

MARKER_PREFIX = "<!-- planner:"
"""Every comment planner writes contains this; such comments never trigger a pass."""
TRACKING_MARKER = "<!-- planner:tracking -->"
"""Identifies the one tracking comment of an issue."""


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets (planner.text.redaction), `secrets` and token-like strings."""
    return redact(text, secrets)


def parse_time(text: str | None) -> datetime | None:
    """GitHub/GitLab timestamps ('...Z', '...+00:00', '2025-03-03 09:01:44 UTC') as UTC."""
    if not text:
        return None
    cleaned = text.strip().replace(" UTC", "+00:00").replace("Z", "+00:00")
    try:
        stamp = datetime.fromisoformat(cleaned.replace(" ", "T", 1))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


class Actor(BaseModel):
    """Whoever caused the event (a person, or an allow-listed bot)."""

    login: str
    id: int | None = None
    is_bot: bool = False
    email: str = ""
    """For the Co-authored-by trailer; a no-reply address when the forge has one."""


class IssueData(BaseModel):
    number: int
    title: str = ""
    body: str = ""
    state: str = "open"
    """'open' or 'closed' (GitLab's 'opened' is normalised)."""
    locked: bool = False
    labels: list[str] = Field(default_factory=list)
    author: str = ""
    url: str = ""
    is_pull_request: bool = False


class CommentData(BaseModel):
    id: str
    body: str = ""
    author: str = ""
    created_at: str = ""
    updated_at: str = ""
    """When the body last changed (equal to created_at, or empty, when never edited)."""
    url: str = ""
    trusted: bool = False
    """The author may be planner itself; only then does a marker in the body count."""
    on: str = ""
    """Where it was made when not on the issue itself ("pull request #5")."""

    @property
    def created(self) -> datetime | None:
        return parse_time(self.created_at)

    def edited_after(self, moment: datetime | None) -> bool:
        """Whether the body changed after `moment` (the trigger): what the model reads then
        is not what the person who triggered the run saw."""
        updated = parse_time(self.updated_at)
        return moment is not None and updated is not None and updated > moment


class PullRequestData(BaseModel):
    number: int
    url: str = ""
    head: str = ""
    base: str = ""
    title: str = ""
    body: str = ""
    draft: bool = False
    state: str = "open"
    same_repository: bool = True
    merged: bool = False
    head_sha: str = ""
    """The commit the pull request's head pointed at (when it was closed, for a closed one)."""
    closed_by: str = ""
    """Who closed or merged it, when the forge says."""


@dataclass(frozen=True)
class GitRemote:
    """Where the issue branch is fetched from and pushed to; credentials never in the URL."""

    url: str
    auth_header: str = ""
    """A complete `Name: value` HTTP header, sent through git's http.extraheader."""

    def __repr__(self) -> str:  # never print the header
        return f"GitRemote(url={self.url!r})"


class PullRequestExists(Exception):
    """Creating failed because an open pull/merge request for the head branch exists."""


class ForgeAdapter(ABC):
    """One forge; subclasses implement the primitives, callers use the public methods."""

    platform = ""
    repository = ""

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        self.secrets = tuple(secrets)
        for secret in self.secrets:
            register_secret(secret)
        self._tracking: dict[int, CommentData | None] = {}

    # -- primitives ------------------------------------------------------------------------

    @abstractmethod
    def get_issue(self, number: int) -> IssueData: ...

    @abstractmethod
    def list_comments(self, number: int) -> list[CommentData]: ...

    def list_pull_comments(self, pull: PullRequestData) -> list[CommentData]:
        """The conversation of a pull request (not its review threads, which are tasks of their
        own), oldest first; none where the forge has no pull requests."""
        return []

    @abstractmethod
    def _create_comment(self, number: int, body: str) -> CommentData: ...

    @abstractmethod
    def _edit_comment(self, number: int, comment_id: str, body: str) -> CommentData: ...

    @abstractmethod
    def _add_label(self, number: int, label: str) -> None: ...

    @abstractmethod
    def _remove_label(self, number: int, label: str) -> None: ...

    @abstractmethod
    def can_write(self, actor: Actor) -> bool:
        """Whether the actor has write access (GitHub write/admin, GitLab Developer+)."""

    @abstractmethod
    def default_branch(self) -> str: ...

    @abstractmethod
    def get_pull_request(self, number: int) -> PullRequestData | None: ...

    @abstractmethod
    def find_pull_request(self, head: str) -> PullRequestData | None:
        """The open pull/merge request whose head is this branch of this repository."""

    def last_closed_pull_request(self, head: str) -> PullRequestData | None:
        """The most recently closed (or merged) pull/merge request of this branch, if any."""
        return None

    @abstractmethod
    def _create_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequestData: ...

    @abstractmethod
    def _update_pull_request(
        self, pull: PullRequestData, *, title: str, body: str, draft: bool
    ) -> PullRequestData: ...

    @abstractmethod
    def git_remote(self) -> GitRemote | None:
        """None: there is nowhere to push (a local repository without a remote)."""

    def run_url(self) -> str:
        """Link to the CI run doing the work, when there is one."""
        return ""

    # -- review threads (planner.ci.review) -----------------------------------------------

    def review_threads(self, pull: PullRequestData) -> list[ReviewThread]:
        """Every review thread of the pull request, resolved ones included, each with all its
        comments (a forge without reviews has none)."""
        return []

    def _reply_to_thread(self, pull: PullRequestData, thread: ReviewThread, body: str) -> None:
        raise UserInputError(f"the {self.platform or 'local'} forge has no review threads")

    def _resolve_thread(self, pull: PullRequestData, thread: ReviewThread) -> None:
        raise UserInputError(f"the {self.platform or 'local'} forge has no review threads")

    # -- the scheduled sweep (planner.ci.handlers.sweep) -------------------------------------

    def list_open_issues(self, label: str) -> list[IssueData]:
        """Open issues (never pull requests) carrying `label`, every page."""
        raise UserInputError(f"the {self.platform or 'local'} forge has no scheduled sweep")

    def start_run(self, number: int) -> str:
        """Start a normal CI run on issue `number`, as the token's own user, on the default
        branch; returns what was started, for the log."""
        raise UserInputError(f"the {self.platform or 'local'} forge cannot start CI runs")

    def is_token_user(self, actor: Actor) -> bool:
        """Whether `actor` is the account planner's own token acts as (a sweep's run)."""
        return False

    def branch_url(self, branch: str) -> str:
        return ""

    def issue_reference(self, number: int) -> str:
        return f"#{number}"

    def pull_reference(self, number: int) -> str:
        return f"#{number}"

    def next_reply(self, number: int) -> CommentData | None:
        """A person's comment that no event has brought yet, taken now (the local forge's
        comment files; a hosted forge sends an event for each comment instead)."""
        return None

    def comment_order(self, comment: CommentData) -> tuple[int, str]:
        """Sorts comments by when they were made. GitHub and GitLab number comments (notes)
        in the order they are created, finer than their one-second timestamps."""
        return (int(comment.id) if comment.id.isdigit() else -1, comment.created_at)

    # -- what callers use --------------------------------------------------------------------

    def redact(self, text: str) -> str:
        return redact_secrets(text, self.secrets)

    def outgoing(self, body: str) -> str:
        """Every body planner posts: secrets redacted, and no link or image to a host other
        than the forge's own (planner.text.inert.inert_post)."""
        return inert_post(self.redact(body), self.own_host())

    def own_host(self) -> str:
        """The forge's web host ('' for a forge without one: then no link is kept)."""
        return urlsplit(str(getattr(self, "server_url", "") or "")).hostname or ""

    def post_comment(self, number: int, body: str) -> CommentData:
        return self._create_comment(number, self.outgoing(body))

    def edit_comment(self, number: int, comment_id: str, body: str) -> CommentData:
        return self._edit_comment(number, comment_id, self.outgoing(body))

    def reply_to_thread(self, pull: PullRequestData, thread: ReviewThread, body: str) -> None:
        """A reply under the thread's comments (checked like every body planner posts)."""
        self._reply_to_thread(pull, thread, self.outgoing(body))

    def resolve_thread(self, pull: PullRequestData, thread: ReviewThread) -> None:
        self._resolve_thread(pull, thread)

    def find_tracking_comment(self, number: int) -> CommentData | None:
        """The oldest trusted comment carrying the tracking marker."""
        if number not in self._tracking:
            found = (c for c in self.list_comments(number) if _is_tracking(c))
            self._tracking[number] = next(found, None)
        return self._tracking[number]

    def upsert_tracking_comment(self, number: int, body: str) -> CommentData:
        """Edit the issue's tracking comment in place, creating it the first time."""
        if TRACKING_MARKER not in body:
            body = f"{TRACKING_MARKER}\n{body}"
        existing = self.find_tracking_comment(number)
        if existing is None:
            written = self.post_comment(number, body)
        elif existing.body == self.redact(body):
            return existing
        else:
            written = self._edit_or_repost(number, existing, body)
        self._tracking[number] = written
        return written

    def _edit_or_repost(self, number: int, existing: CommentData, body: str) -> CommentData:
        try:
            return self.edit_comment(number, existing.id, body)
        except ApiError as exc:
            if exc.status != 404:
                raise
            log.warning("the tracking comment %s was deleted; posting a new one", existing.id)
            return self.post_comment(number, body)

    def set_status_label(
        self, number: int, label: str | None, status_labels: Sequence[str], current: Sequence[str]
    ) -> list[str]:
        """Make `label` the only status label on the issue; returns the labels now set."""
        labels = list(current)
        for stale in [name for name in status_labels if name in labels and name != label]:
            self._remove_label(number, stale)
            labels.remove(stale)
        if label and label not in labels:
            self._add_label(number, label)
            labels.append(label)
        return labels

    def upsert_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequestData:
        """Update the open pull/merge request of `head`, or open one."""
        if head == base:
            raise ValueError(f"refusing to open a pull request from {base} onto itself")
        title, body = self.redact(title), self.outgoing(body)
        existing = self.find_pull_request(head)
        if existing is None:
            try:
                return self._create_pull_request(
                    head=head, base=base, title=title, body=body, draft=draft
                )
            except PullRequestExists:
                existing = self.find_pull_request(head)
                if existing is None:
                    raise
        return self._update_pull_request(existing, title=title, body=body, draft=draft)


def _is_tracking(comment: CommentData) -> bool:
    return comment.trusted and TRACKING_MARKER in comment.body


def as_forge(adapter: ForgeAdapter) -> Forge:
    """Every adapter is a planner.core.interfaces.Forge (mypy checks this assignment)."""
    return adapter
