"""forge — how planner is triggered on GitHub/GitLab and what it writes there."""

from __future__ import annotations

from pydantic import Field

from planner.config.base import Section

BRANCH_PREFIX_PATTERN = r"^[A-Za-z0-9._/-]+$"


class ForgeConfig(Section):
    """forge — how planner is triggered on GitHub/GitLab and what it writes there."""

    trigger_label: str = Field(default="planner", min_length=1)
    """Adding this label to an issue starts a pass."""
    trigger_phrase: str = Field(default="/planner", min_length=1)
    """A comment containing this phrase (case-insensitive, on a word boundary) starts a pass;
    the text after it is the instruction for that pass."""
    trigger_on_opened: bool = False
    """Also start a pass when an issue is opened."""
    trigger_on_assigned: bool = False
    """Also start a pass when an issue is assigned."""
    label_working: str = "planner:working"
    """Status label while a pass runs."""
    label_needs_input: str = "planner:needs-input"
    """Status label when a person must answer a question (needs_human). While it is set, any
    plain comment from someone with write access is taken as the answer and starts a pass."""
    label_paused: str = "planner:paused"
    """Status label when a pass paused at its budget, failed or was stopped: only a comment with
    the trigger phrase (such as `/planner resume`) starts the next pass."""
    label_done: str = "planner:done"
    """Status label when the plan is complete."""
    branch_prefix: str = Field(default="planner/issue-", pattern=BRANCH_PREFIX_PATTERN)
    """The issue's branch is this prefix followed by the issue number."""
    draft_pr: bool = True
    """Open the pull/merge request as a draft while the plan is unfinished."""
    allowed_users: list[str] = Field(default_factory=list)
    """Users who may trigger a pass without write access to the repository."""
    allowed_bots: list[str] = Field(default_factory=list)
    """Bot accounts whose events may trigger a pass (bots never do otherwise)."""
    commit_name: str | None = None
    """Commit author name; None uses the platform's bot (github-actions[bot] on GitHub)."""
    commit_email: str | None = None
    """Commit author e-mail; None uses the platform bot's no-reply address."""
    bot_login: str = Field(default="github-actions[bot]", min_length=1)
    """GitHub: the account planner's token posts as — github-actions[bot] for the workflow's
    token, `<app-slug>[bot]` for a GitHub App token, your login for a personal access token.
    Only its comments count as planner's own (the tracking comment and its run log). GitLab
    asks the API whose GITLAB_TOKEN it is instead."""
    api_max_retries: int = Field(default=5, ge=0)
    """Retries of a forge API request on 5xx, 429 and secondary rate limits."""
    api_max_wait_seconds: float = Field(default=60.0, ge=0)
    """Upper bound of one wait between retries; a longer rate-limit reset is an error."""
    label_interactive: str = Field(default="planner:interactive", min_length=1)
    """Adding this label starts an interactive planning session (discovery -> design -> review)
    on the issue instead of planning straight away."""
    lease_seconds: float = Field(default=90.0, gt=0)
    """How long a run's lease on its issue (the ref refs/planner/issues/<N>) lasts unless
    renewed: a living run renews it every third of this time, so the lease of a run that died
    (runner lost, killed) expires within this time and the next event takes it over."""
    lease_wait_seconds: float | None = Field(default=None, gt=0)
    """How long an event waits for a living run that holds the issue's lease before it gives
    up and says so. None: budget.max_wall_seconds plus 60 seconds (a run's longest life)."""
