"""The scheduled assumption sweep: a question that planner proceeds past after a timeout needs
a run after that timeout, and nothing else would start one on a quiet issue.

A scheduled run (GitHub `schedule`, a GitLab pipeline schedule) lists the open issues carrying
forge.label_needs_input, reads the hidden proceed-after marker of each one's tracking comment
(planner.ci.report.tracking; only the trusted comment planner wrote counts) and, for each issue
whose time has passed, starts a normal run on it: a workflow dispatch with the input `issue`, or
an API pipeline with PLANNER_ISSUE_IID. That run takes the issue's lease, restores its history and
decides from the history (the replanning phase) whether to proceed on the assumptions, so a
stale marker costs one run that says it is still waiting. The sweep itself calls no model and
writes nothing on the issues.

One issue's problem (no tracking comment, an unreadable marker, an API error) is one line of
the sweep's output; the others are still swept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import requests

from planner.ci.events.triggers import Sweep, Trigger
from planner.ci.forges.base import ForgeAdapter
from planner.ci.handlers import Handler
from planner.ci.report.tracking import proceed_after_of
from planner.config import PlannerConfig
from planner.core.errors import PlannerError

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    """What the sweep did, one line per issue it looked at."""

    lines: list[str] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    """Issues whose run could not be started (an API error): the sweep's job then fails."""

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def run_sweep(
    platform: str,
    env: Mapping[str, str],
    config: PlannerConfig,
    *,
    now: datetime | None = None,
    session: requests.Session | None = None,
) -> SweepReport:
    """Start a run on every waiting issue whose proceed-after time is at or before `now`."""
    forge = sweep_forge(platform, env, config, session)
    moment = now or datetime.now(UTC)
    label = config.forge.label_needs_input
    issues = forge.list_open_issues(label)
    report = SweepReport([f"{len(issues)} open issue(s) labelled {label!r}"])
    for issue in issues:
        sweep_issue(forge, issue.number, moment, report)
    report.lines.append(f"started {len(report.started)} run(s); {len(report.failed)} failed")
    return report


def sweep_issue(forge: ForgeAdapter, number: int, now: datetime, report: SweepReport) -> None:
    """Look at one issue; whatever goes wrong stays a line about this issue."""
    where = forge.issue_reference(number)
    try:
        due = _proceed_after(forge, number)
    except (PlannerError, ValueError) as exc:
        report.lines.append(f"{where}: not started: {exc}")
        return
    if due is None:
        report.lines.append(f"{where}: waits for an answer with no time limit")
    elif due > now:
        report.lines.append(f"{where}: waits until {_stamp(due)}")
    else:
        _start(forge, number, due, report)


def _proceed_after(forge: ForgeAdapter, number: int) -> datetime | None:
    comment = forge.find_tracking_comment(number)
    if comment is None:
        raise ValueError("planner's tracking comment is missing")
    return proceed_after_of(comment.body)


def _start(forge: ForgeAdapter, number: int, due: datetime, report: SweepReport) -> None:
    where = forge.issue_reference(number)
    try:
        started = forge.start_run(number)
    except PlannerError as exc:
        log.warning("could not start a run on %s: %s", where, exc)
        report.lines.append(f"{where}: waited past {_stamp(due)}, but no run started: {exc}")
        report.failed.append(number)
        return
    report.lines.append(f"{where}: waited past {_stamp(due)}: {started}")
    report.started.append(number)


def sweep_forge(
    platform: str,
    env: Mapping[str, str],
    config: PlannerConfig,
    session: requests.Session | None = None,
) -> ForgeAdapter:
    """The forge adapter of a scheduled job (imported lazily, as in planner.ci.job)."""
    if platform == "github":
        from planner.ci.forges.github import GitHubForge

        return GitHubForge.from_env(env, config.forge, session=session)
    from planner.ci.forges.gitlab import GitLabForge

    return GitLabForge.from_env(env, config.forge, session=session)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def is_sweep(trigger: Trigger | Sweep) -> bool:
    return isinstance(trigger, Sweep)


def not_one_issue(trigger: Sweep) -> str:
    """The entry point runs the sweep itself (planner.ci.action calls run_sweep); an event
    handed to the job names no issue, so the job only says what it was."""
    return f"{trigger.event}: a sweep, not a run on one issue"


HANDLER = Handler(kind="sweep", takes=is_sweep, without_issue=not_one_issue)
