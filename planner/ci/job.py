"""What a CI entry point calls: one event in, one outcome out.

    outcome = run_for_event("github", workspace=Path.cwd(), config=config, env=os.environ)

read the trigger (planner.ci.events) -> open the forge -> decide whether it may act and on
which issue (planner.ci.target; read-only: no API writes on any skip path) -> the handlers
that take the event (HANDLERS, one module per kind under planner.ci.handlers), in table order:
each may still skip it (read-only), then the first one answers, or, under the issue's lease,
each in turn until one does. Forge adapters are imported lazily, so the GitHub path never loads
GitLab code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import requests

from planner.ci.events.github import load_github_event, parse_github_event
from planner.ci.events.gitlab import gitlab_trigger_from_env, parse_gitlab_event
from planner.ci.events.local import local_reply_trigger, local_trigger
from planner.ci.events.triggers import Platform, Skip, Sweep, Trigger
from planner.ci.forges.base import ForgeAdapter
from planner.ci.forges.http import RetryPolicy
from planner.ci.handlers import Event, Handler, interactive, issue_pass, review, stop, sweep
from planner.ci.issue_run import IssueRun, restore_once
from planner.ci.outcome import CiOutcome
from planner.ci.target import decide
from planner.config import ForgeConfig, PlannerConfig
from planner.core.errors import UserInputError
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.run.runner import repository_name

log = logging.getLogger(__name__)

HANDLERS: tuple[Handler, ...] = (
    sweep.HANDLER,  # a scheduled sweep: the entry point runs it; no run on one issue here
    stop.HANDLER,  # `/planner stop`: no pass; a running one is asked to stop
    stop.HOLDS,  # a stop asked for after this event holds it back (not a cancel)
    review.HANDLER,  # review feedback: skipped when it leaves nothing open, else the pass
    interactive.HANDLER,  # planning sessions take the events that are theirs
    issue_pass.HANDLER,  # everything else: a pass on the issue
)
"""Every kind of event, in the order they are asked."""


def run_for_event(
    platform: Platform,
    *,
    workspace: Path,
    config: PlannerConfig,
    env: Mapping[str, str],
    event: Mapping[str, Any] | None = None,
    event_name: str | None = None,
    model: Any = None,
    extra_tools: tuple[ToolProvider, ...] = (),
    history: HistoryBackend | None = None,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CiOutcome:
    """Handle one event end to end; see the module docstring and the env of each platform."""
    trigger = read_trigger(
        platform,
        config.forge,
        env,
        event,
        event_name,
        act_on_changes_requested=config.review.act_on_changes_requested,
    )
    if isinstance(trigger, Sweep):
        return skipped(platform, without_issue(trigger))
    if isinstance(trigger, Skip):
        return skipped(platform, trigger.reason)
    retry = RetryPolicy(config.forge.api_max_retries, config.forge.api_max_wait_seconds, sleep)
    forge = open_forge(platform, env, config.forge, workspace, trigger, session, retry)
    trigger = local_reply(forge, trigger, config.forge)
    target = decide(forge, trigger, config.forge)
    if isinstance(target, Skip):
        return skipped(platform, target.reason, trigger.issue_number)
    handlers = [handler for handler in HANDLERS if handler.takes(trigger)]
    for handler in handlers:
        nothing = handler.refuse(forge, trigger, target, config)
        if nothing is not None:
            return skipped(platform, nothing.reason, target.number)
    log.info("acting on %s", trigger.describe())
    run = IssueRun(forge, trigger, target, config, workspace, env, work=issue_pass.work)
    answer = Event(run, history, model, extra_tools)
    if not handlers[0].leased:
        return first_answer(handlers[:1], answer)
    answer.history = restore_once(history)
    return run.leased(lambda: first_answer([h for h in handlers if h.leased], answer))


def without_issue(trigger: Sweep) -> str:
    """Why the job skips an event that names no issue, as the handler of its kind says."""
    for handler in HANDLERS:
        if handler.takes(trigger) and handler.without_issue is not None:
            return handler.without_issue(trigger)
    return f"{trigger.event}: no issue to run on"


def first_answer(handlers: list[Handler], event: Event) -> CiOutcome:
    """The first handler's outcome that is not None (the last in HANDLERS always answers)."""
    outcomes = (handler.handle(event) for handler in handlers)
    return next(outcome for outcome in outcomes if outcome is not None)


def skipped(platform: str, reason: str, number: int | None = None) -> CiOutcome:
    log.info("skipped: %s", reason)
    return CiOutcome(status="skipped", reason=reason, platform=platform, issue_number=number)


# -- trigger and forge ---------------------------------------------------------------------------


def read_trigger(
    platform: Platform,
    config: ForgeConfig,
    env: Mapping[str, str],
    event: Mapping[str, Any] | None,
    event_name: str | None,
    *,
    act_on_changes_requested: bool = False,
) -> Trigger | Skip | Sweep:
    """GitHub: GITHUB_EVENT_NAME + GITHUB_EVENT_PATH. GitLab: TRIGGER_PAYLOAD or
    PLANNER_ISSUE_IID. Local: event {"issue", "instruction", "actor"} or PLANNER_ISSUE /
    PLANNER_INSTRUCTION. An explicit `event` replaces the one the environment names."""
    if platform == "github":
        if event is None:
            event_name, event = load_github_event(env)
        name = event_name or env.get("GITHUB_EVENT_NAME", "")
        return parse_github_event(
            name, event, config, act_on_changes_requested=act_on_changes_requested
        )
    if platform == "gitlab":
        if event is not None:
            return parse_gitlab_event(event, config)
        return gitlab_trigger_from_env(env, config)
    if platform == "local":
        inputs = event or {"issue": env.get("PLANNER_ISSUE", ""), "actor": env.get("USER", "")}
        if not inputs.get("issue"):
            raise UserInputError("a local run needs an issue number (PLANNER_ISSUE)")
        instruction = str(inputs.get("instruction", env.get("PLANNER_INSTRUCTION", "")))
        actor = str(inputs.get("actor") or "local")
        return local_trigger(inputs["issue"], config, instruction=instruction, actor=actor)
    raise UserInputError(f"unknown platform {platform!r} (github, gitlab or local)")


def local_reply(forge: ForgeAdapter, trigger: Trigger, config: ForgeConfig) -> Trigger:
    """A local run without --instruction takes the oldest comment file no run has taken yet as
    its event (README: a person's replies are files in .planner/issues/N/comments/)."""
    if trigger.platform != "local" or trigger.instruction or trigger.command != "run":
        return trigger
    comment = forge.next_reply(trigger.issue_number or 0)
    return trigger if comment is None else local_reply_trigger(trigger, comment, config)


def open_forge(
    platform: Platform,
    env: Mapping[str, str],
    config: ForgeConfig,
    workspace: Path,
    trigger: Trigger,
    session: requests.Session | None = None,
    retry: RetryPolicy | None = None,
) -> ForgeAdapter:
    """The adapter for `platform`, imported only when needed."""
    if platform == "github":
        from planner.ci.forges.github import GitHubForge

        return GitHubForge.from_env(env, config, session=session, retry=retry)
    if platform == "gitlab":
        from planner.ci.forges.gitlab import GitLabForge

        filled = {"CI_PROJECT_ID": trigger.project_id, "CI_PROJECT_PATH": trigger.repository}
        merged = {**{k: v for k, v in filled.items() if v}, **{k: v for k, v in env.items() if v}}
        return GitLabForge.from_env(merged, config, session=session, retry=retry)
    from planner.ci.forges.local import LocalForge

    return LocalForge(workspace, repository_name(workspace))
