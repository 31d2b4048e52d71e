"""GitHub Actions events (GITHUB_EVENT_NAME and the payload at GITHUB_EVENT_PATH) read into a
Trigger, a Skip or a Sweep (planner.ci.events.triggers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.ci.events.triggers import (
    Parsed,
    Skip,
    Sweep,
    Trigger,
    TriggerKind,
    bot_skip,
    dispatch_kind,
    label_names,
    load_json_file,
    manual_command,
    need,
    need_at,
    need_object,
    now,
    phrase_command,
    plain_answer,
    positive_number,
)
from planner.ci.forges.base import MARKER_PREFIX, Actor
from planner.config import ForgeConfig
from planner.core.errors import UserInputError


def _github_author(
    payload: Mapping[str, Any], body: str, what: str, config: ForgeConfig
) -> Actor | Skip:
    """Who wrote `body` (the sender), or why it starts nothing: planner's own text, or a bot's."""
    if MARKER_PREFIX in body:
        return Skip(reason=f"the {what} is one of planner's own")
    actor = github_actor(need(payload, "sender"))
    return bot_skip(actor, config) or actor


def parse_github_event(
    event_name: str,
    payload: Mapping[str, Any],
    config: ForgeConfig,
    *,
    act_on_changes_requested: bool = False,
) -> Trigger | Skip | Sweep:
    """A GitHub Actions event (GITHUB_EVENT_NAME and the GITHUB_EVENT_PATH payload);
    `act_on_changes_requested` is review.act_on_changes_requested."""
    if not isinstance(payload, Mapping):
        raise UserInputError("the GitHub event payload is not a JSON object")
    if event_name == "schedule":  # only GitHub's clock sends it: nobody can forge one
        return Sweep(platform="github", event="schedule")
    if event_name == "pull_request_review":
        return _github_review(payload, config, act_on_changes_requested)
    if event_name == "pull_request_review_comment":
        return _github_review_comment(payload, config)
    parsers = {
        "issues": _github_issues,
        "issue_comment": _github_comment,
        "workflow_dispatch": _github_dispatch,
    }
    parser = parsers.get(event_name)
    if parser is None:
        return Skip(reason=f"GitHub event {event_name!r} does not trigger planner")
    return parser(payload, config)


def github_actor(sender: Any) -> Actor:
    login = str(need_at(sender, "sender.login"))
    user_id = sender.get("id")
    return Actor(
        login=login,
        id=int(user_id) if isinstance(user_id, int) else None,
        is_bot=sender.get("type") == "Bot" or login.endswith("[bot]"),
        email=f"{user_id}+{login}@users.noreply.github.com" if user_id else "",
    )


def _github_issues(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    action = str(need(payload, "action"))
    issue = need(payload, "issue")
    wanted = _github_issue_action(action, payload, issue, config)
    if isinstance(wanted, Skip):
        return wanted
    actor = github_actor(need(payload, "sender"))
    return bot_skip(actor, config) or Trigger(
        platform="github",
        kind=wanted,
        event=f"issues.{action}",
        repository=str(need(payload, "repository.full_name")),
        issue_number=positive_number(need_at(issue, "issue.number"), "issue.number"),
        actor=actor,
        event_time=str(issue.get("updated_at") or now()),
    )


def _github_issue_action(
    action: str, payload: Mapping[str, Any], issue: Any, config: ForgeConfig
) -> TriggerKind | Skip:
    if action == "labeled":
        label = payload.get("label")
        names = (
            [label.get("name")] if isinstance(label, Mapping) else label_names(issue.get("labels"))
        )
        if config.trigger_label in names:
            return "labeled"
        if config.label_interactive in names:
            return "interactive"
        return Skip(reason=f"label {names[0] if names else None!r} is not {config.trigger_label!r}")
    if action == "opened" and config.trigger_on_opened:
        return "opened"
    if action == "assigned" and config.trigger_on_assigned:
        return "assigned"
    return Skip(reason=f"issues.{action} does not trigger planner with this configuration")


def _github_comment(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    action = str(need(payload, "action"))
    if action != "created":
        return Skip(reason=f"issue_comment.{action}: only new comments trigger planner")
    comment, issue = need(payload, "comment"), need(payload, "issue")
    body = str(comment.get("body") or "")
    actor = _github_author(payload, body, "comment", config)
    if isinstance(actor, Skip):
        return actor
    on_pull = bool(issue.get("pull_request"))
    parsed = phrase_command(body, config) or plain_answer(body, issue, on_pull, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    number = positive_number(need_at(issue, "issue.number"), "issue.number")
    return Trigger(
        platform="github",
        kind="pr_comment" if on_pull else "comment",
        event="issue_comment.created",
        repository=str(need(payload, "repository.full_name")),
        issue_number=None if on_pull else number,
        pull_request=number if on_pull else None,
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(comment.get("id") or ""),
        event_time=str(comment.get("created_at") or now()),
    )


def _github_review(
    payload: Mapping[str, Any], config: ForgeConfig, act_on_changes_requested: bool
) -> Trigger | Skip:
    """A submitted review: its text holds the phrase, or it requests changes and
    review.act_on_changes_requested is on. Its threads are read from the forge by the pass."""
    written = _github_written(payload, config, "pull_request_review")
    if isinstance(written, Skip):
        return written
    review, body, actor = written
    parsed = phrase_command(body, config)
    if parsed is None and act_on_changes_requested and review.get("state") == "changes_requested":
        parsed = ("run", body.strip(), False)
    if parsed is None:
        return Skip(reason=_review_without_phrase(review.get("state"), config))
    return _github_review_trigger(payload, "pull_request_review.submitted", actor, parsed, review)


def _review_without_phrase(state: Any, config: ForgeConfig) -> str:
    reason = f"the review does not contain {config.trigger_phrase!r}"
    if state == "changes_requested":
        reason += " (set review.act_on_changes_requested to act on every review requesting changes)"
    return reason


def _github_review_comment(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    """A new comment on a line of the diff (a review's comment, or a reply in a thread)."""
    written = _github_written(payload, config, "pull_request_review_comment")
    if isinstance(written, Skip):
        return written
    comment, body, actor = written
    parsed = phrase_command(body, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    event = "pull_request_review_comment.created"
    return _github_review_trigger(payload, event, actor, parsed, comment)


REVIEW_EVENTS = {  # event: (the action that triggers, the payload's object, why no other does)
    "pull_request_review": ("submitted", "review", "only a submitted review triggers planner"),
    "pull_request_review_comment": ("created", "comment", "only new comments trigger planner"),
}


def _github_written(
    payload: Mapping[str, Any], config: ForgeConfig, event: str
) -> tuple[Mapping[str, Any], str, Actor] | Skip:
    """The review or comment a review `event` brings, its text and its author; or why it starts
    nothing."""
    wanted, key, why = REVIEW_EVENTS[event]
    action = str(need(payload, "action"))
    if action != wanted:
        return Skip(reason=f"{event}.{action}: {why}")
    item = need_object(payload, key)
    body = str(item.get("body") or "")
    actor = _github_author(payload, body, key, config)
    if isinstance(actor, Skip):
        return actor
    return item, body, actor


def _github_review_trigger(
    payload: Mapping[str, Any], event: str, actor: Actor, parsed: Parsed, item: Mapping[str, Any]
) -> Trigger:
    pull = need_object(payload, "pull_request")
    head = pull.get("head") if isinstance(pull.get("head"), Mapping) else {}
    moment = item.get("submitted_at") or item.get("created_at")
    return Trigger(
        platform="github",
        kind="review",
        event=event,
        repository=str(need(payload, "repository.full_name")),
        pull_request=positive_number(need_at(pull, "pull_request.number"), "pull_request.number"),
        pull_request_branch=str((head or {}).get("ref") or ""),
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(item.get("id") or ""),
        event_time=str(moment or now()),
    )


def _github_dispatch(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    inputs = payload.get("inputs") or {}
    if not inputs.get("issue"):
        raise UserInputError("workflow_dispatch needs an 'issue' input (the issue number)")
    actor = github_actor(need(payload, "sender"))
    command, text, own_line = manual_command(str(inputs.get("instruction") or ""), config)
    kind = dispatch_kind(actor, command, text, config)
    if isinstance(kind, Skip):
        return kind
    return Trigger(
        platform="github",
        kind=kind,
        event="workflow_dispatch",
        repository=str(need(payload, "repository.full_name")),
        issue_number=positive_number(inputs["issue"], "the 'issue' input"),
        actor=actor,
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=now(),
    )


def load_github_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """(GITHUB_EVENT_NAME, the JSON at GITHUB_EVENT_PATH)."""
    name = env.get("GITHUB_EVENT_NAME", "")
    if not name:
        raise UserInputError("GITHUB_EVENT_NAME is not set: is this running in GitHub Actions?")
    return name, load_json_file(env.get("GITHUB_EVENT_PATH", ""), "GITHUB_EVENT_PATH")
