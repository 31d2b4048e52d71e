"""GitLab events read into a Trigger, a Skip or a Sweep (planner.ci.events.triggers): Issue
Hook / Note Hook payloads delivered by a pipeline trigger as TRIGGER_PAYLOAD, a manual/API
pipeline with PLANNER_ISSUE_IID, or a pipeline schedule (the sweep)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from planner.ci.events.triggers import (
    Skip,
    Sweep,
    Trigger,
    TriggerKind,
    bot_skip,
    dispatch_kind,
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

GITLAB_BOT_NAME = re.compile(r"(?:project|group)_\d+_bot(?:_[0-9a-z]+)?")
GITLAB_SYSTEM_BOTS = frozenset(
    {"ghost", "support-bot", "alert-bot", "visual-review-bot", "gitlab-bot", "gitlab-security-bot"}
)


def is_gitlab_bot(username: str) -> bool:
    """Project/group access token users and GitLab's internal bot accounts."""
    return bool(GITLAB_BOT_NAME.fullmatch(username)) or username in GITLAB_SYSTEM_BOTS


def gitlab_trigger_from_env(env: Mapping[str, str], config: ForgeConfig) -> Trigger | Skip | Sweep:
    """TRIGGER_PAYLOAD (a webhook via the pipeline trigger API), PLANNER_ISSUE_IID, or a
    scheduled pipeline naming neither (the sweep)."""
    if env.get("TRIGGER_PAYLOAD"):
        return parse_gitlab_event(load_json_file(env["TRIGGER_PAYLOAD"], "TRIGGER_PAYLOAD"), config)
    if env.get("PLANNER_ISSUE_IID"):
        return _gitlab_manual(env, config)
    source = env.get("CI_PIPELINE_SOURCE") or "unknown"
    if source == "schedule":
        return Sweep(platform="gitlab", event="pipeline (schedule)")
    return Skip(reason=f"pipeline source {source}: no TRIGGER_PAYLOAD and no PLANNER_ISSUE_IID")


def parse_gitlab_event(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    """A GitLab Issue Hook or Note Hook payload."""
    if not isinstance(payload, Mapping):
        raise UserInputError("the GitLab webhook payload is not a JSON object")
    kind = payload.get("object_kind")
    if kind == "issue":
        return _gitlab_issue(payload, config)
    if kind == "note":
        return _gitlab_note(payload, config)
    return Skip(reason=f"GitLab {kind or 'unknown'} events do not trigger planner")


def gitlab_actor(user: Any, web_url: str = "") -> Actor:
    username = str(need_at(user, "user.username"))
    user_id = user.get("id")
    host = urlsplit(web_url).hostname or "gitlab.com"
    return Actor(
        login=username,
        id=int(user_id) if isinstance(user_id, int) else None,
        is_bot=is_gitlab_bot(username) or user.get("bot") is True,
        email=f"{user_id}-{username}@users.noreply.{host}" if user_id else "",
    )


def _gitlab_issue(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    attributes = need_object(payload, "object_attributes")
    changes = payload.get("changes") or {}
    kind = _gitlab_issue_kind(attributes, changes, config)
    if isinstance(kind, Skip):
        return kind
    project = need(payload, "project")
    actor = gitlab_actor(need(payload, "user"), str(project.get("web_url") or ""))
    return bot_skip(actor, config) or Trigger(
        platform="gitlab",
        kind=kind,
        event="Issue Hook",
        repository=str(need_at(project, "project.path_with_namespace")),
        project_id=str(need_at(project, "project.id")),
        issue_number=positive_number(
            need_at(attributes, "object_attributes.iid"), "object_attributes.iid"
        ),
        actor=actor,
        event_time=str(attributes.get("updated_at") or now()),
    )


def _gitlab_issue_kind(attributes: Any, changes: Any, config: ForgeConfig) -> TriggerKind | Skip:
    if config.trigger_label in _added(changes.get("labels"), "title"):
        return "labeled"
    if config.label_interactive in _added(changes.get("labels"), "title"):
        return "interactive"
    if attributes.get("action") == "open" and config.trigger_on_opened:
        return "opened"
    if _added(changes.get("assignees"), "username") and config.trigger_on_assigned:
        return "assigned"
    return Skip(reason=f"the issue event did not add the label {config.trigger_label!r}")


def _added(change: Any, key: str) -> set[str]:
    """Names in `current` but not in `previous` of a GitLab `changes` entry."""
    if not isinstance(change, Mapping):
        return set()

    def names(items: Any) -> set[str]:
        items = items if isinstance(items, list) else []
        return {str(item.get(key)) for item in items if isinstance(item, Mapping)}

    return names(change.get("current")) - names(change.get("previous"))


def _gitlab_note(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    attributes = need_object(payload, "object_attributes")
    if attributes.get("system"):
        return Skip(reason="system notes do not trigger planner")
    if attributes.get("action") not in (None, "create"):
        return Skip(reason=f"note {attributes.get('action')}: only new comments trigger planner")
    body = str(attributes.get("note") or "")
    if MARKER_PREFIX in body:
        return Skip(reason="the comment is one of planner's own")
    project = need(payload, "project")
    actor = gitlab_actor(need(payload, "user"), str(project.get("web_url") or ""))
    return bot_skip(actor, config) or _as_review(
        _gitlab_note_trigger(payload, attributes, body, actor, config), attributes
    )


def _as_review(found: Trigger | Skip, attributes: Any) -> Trigger | Skip:
    """A note on a line of a merge request's diff (a DiffNote, which has a `position`) is a
    review comment: its discussion becomes a task of the pass (planner.ci.review)."""
    diff_note = attributes.get("type") == "DiffNote" or bool(attributes.get("position"))
    if isinstance(found, Skip) or found.kind != "pr_comment" or not diff_note:
        return found
    return found.model_copy(update={"kind": "review"})


def _gitlab_note_trigger(
    payload: Mapping[str, Any], attributes: Any, body: str, actor: Actor, config: ForgeConfig
) -> Trigger | Skip:
    noteable = attributes.get("noteable_type")
    if noteable not in ("Issue", "MergeRequest"):
        return Skip(reason=f"comments on {noteable or 'unknown'} do not trigger planner")
    on_issue = noteable == "Issue"
    issue = payload.get("issue") if on_issue else None
    parsed = phrase_command(body, config) or plain_answer(body, issue, not on_issue, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    target = need(payload, "issue" if on_issue else "merge_request")
    where = "issue" if on_issue else "merge_request"
    number = positive_number(need_at(target, f"{where}.iid"), f"{where}.iid")
    project = need(payload, "project")
    return Trigger(
        platform="gitlab",
        kind="comment" if on_issue else "pr_comment",
        event="Note Hook",
        repository=str(need_at(project, "project.path_with_namespace")),
        project_id=str(need_at(project, "project.id")),
        issue_number=number if on_issue else None,
        pull_request=None if on_issue else number,
        pull_request_branch="" if on_issue else str(target.get("source_branch") or ""),
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(attributes.get("id") or ""),
        event_time=str(attributes.get("created_at") or now()),
    )


def _gitlab_manual(env: Mapping[str, str], config: ForgeConfig) -> Trigger | Skip:
    login = env.get("GITLAB_USER_LOGIN", "")
    if not login:
        raise UserInputError("GITLAB_USER_LOGIN is not set: cannot tell who started the pipeline")
    user_id = env.get("GITLAB_USER_ID", "")
    actor = gitlab_actor(
        {"username": login, "id": int(user_id) if user_id.isdigit() else None},
        env.get("CI_SERVER_URL", ""),
    )
    command, text, own_line = manual_command(env.get("PLANNER_INSTRUCTION", ""), config)
    kind = dispatch_kind(actor, command, text, config)
    if isinstance(kind, Skip):
        return kind
    return Trigger(
        platform="gitlab",
        kind="manual" if kind == "dispatch" else kind,
        event=f"pipeline ({env.get('CI_PIPELINE_SOURCE') or 'unknown'})",
        repository=env.get("CI_PROJECT_PATH", ""),
        project_id=env.get("CI_PROJECT_ID", ""),
        issue_number=positive_number(env["PLANNER_ISSUE_IID"], "PLANNER_ISSUE_IID"),
        actor=actor,
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=now(),
    )
