"""Events that may start a pass, turned into one `Trigger` — or a `Skip` saying why not.

Parsing is pure (no API calls): event kind, label, phrase, subcommand, bot senders and our
own comments are decided here. Write access, closed/locked issues and "is this PR one of ours"
need the forge and are decided in planner.ci.job.

GitHub: `issues` (labeled; opened/assigned when enabled), `issue_comment` created,
`pull_request_review` submitted and `pull_request_review_comment` created (on planner's own
pull request: planner.ci.review), `workflow_dispatch` with an `issue` input. GitLab: Issue
Hook / Note Hook payloads (a note on a line of a merge request's diff is a review) delivered
by a pipeline trigger as the file variable TRIGGER_PAYLOAD, or a manual/API pipeline with
PLANNER_ISSUE_IID. Local: an issue number and an instruction from the command line. A GitHub
`schedule` event or a GitLab pipeline schedule is a `Sweep` (planner.ci.handlers.sweep), whose
dispatched runs arrive as `workflow_dispatch` / API pipelines of kind 'sweep'.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel

from planner.ci.forges.base import MARKER_PREFIX, Actor, CommentData
from planner.config import ForgeConfig
from planner.core.errors import UserInputError
from planner.text.markdown import top_level_paragraphs

Platform = Literal["github", "gitlab", "local"]
Command = Literal["run", "resume", "replan", "stop"]
TriggerKind = Literal[
    "labeled",
    "interactive",
    "opened",
    "assigned",
    "comment",
    "pr_comment",
    "review",
    "dispatch",
    "manual",
    "sweep",
    "local",
]
"""'interactive': the label forge.label_interactive was added (planner.ci.handlers.interactive).
'review': a review of a pull request, or a comment on a line of its diff (planner.ci.review).
'sweep': a run the scheduled sweep started (a workflow dispatch / API pipeline by a bot,
with no instruction); planner.ci.job lets it act only when the bot is planner's own token."""
COMMANDS: tuple[Command, ...] = ("resume", "replan", "stop")

GITLAB_BOT_NAME = re.compile(r"(?:project|group)_\d+_bot(?:_[0-9a-z]+)?")
GITLAB_SYSTEM_BOTS = frozenset(
    {"ghost", "support-bot", "alert-bot", "visual-review-bot", "gitlab-bot", "gitlab-security-bot"}
)


class Trigger(BaseModel):
    """One request to run (or stop) planner on one issue."""

    platform: Platform
    kind: TriggerKind
    event: str
    """What arrived, e.g. 'issues.labeled', 'issue_comment.created', 'Note Hook'."""
    repository: str
    project_id: str = ""
    """GitLab's numeric project id."""
    issue_number: int | None = None
    """None for a comment on a pull request until planner.ci.job finds the issue it closes."""
    pull_request: int | None = None
    """The pull/merge request a comment was made on."""
    pull_request_branch: str = ""
    actor: Actor
    command: Command = "run"
    instruction: str = ""
    """Text after the phrase (run), or the reason (replan). Untrusted."""
    comment_id: str = ""
    event_time: str = ""
    """Comments created after this are not shown to the model."""
    own_line: bool = False
    """The phrase began its line: only then can the text be an approval, a rejection or a
    cancellation ("Please do NOT /planner approve yet" is none of them)."""

    def describe(self) -> str:
        where = f"#{self.issue_number}" if self.issue_number else f"PR {self.pull_request}"
        return f"{self.event} by @{self.actor.login} on {where} ({self.command})"


class Skip(BaseModel):
    """The event is not for planner; exit 0 after logging the reason, with no writes."""

    reason: str


class Sweep(BaseModel):
    """A scheduled run with no issue of its own: planner.ci.handlers.sweep starts a run on every
    issue whose wait for an answer is over."""

    platform: Platform
    event: str


# -- phrase and subcommands ------------------------------------------------------------------


def match_phrase(text: str, phrase: str) -> str | None:
    """The text after the first use of `phrase` in a paragraph at the top level, or None.

    Case-insensitive and on a word boundary: '/planner' matches '/Planner do x' but not
    '/planners' or 'a/planner'. Only plain text at the top level of the comment counts
    (planner.text.markdown, a CommonMark parse): quoting an earlier command does not run it
    again, a hidden one (an HTML comment or attribute) never runs, and one shown as code — fenced,
    indented or inline — is an example, not a command.
    """
    found = find_phrase(text, phrase)
    return None if found is None else found[0]


def find_phrase(text: str, phrase: str) -> tuple[str, bool] | None:
    """(the text after the phrase, whether the phrase began its line), or None."""
    pattern = re.compile(rf"(?<![\w/@.-]){re.escape(phrase)}(?![\w-])", re.IGNORECASE)
    for paragraph in top_level_paragraphs(text):
        found = pattern.search(paragraph.masked)
        if found is None:
            continue
        line_start = paragraph.masked.rfind("\n", 0, found.start()) + 1
        own_line = not paragraph.masked[line_start : found.start()].strip()
        rest = paragraph.shown[found.end() :].strip()
        after = paragraph.after.strip()
        return (f"{rest}\n\n{after}" if rest and after else rest or after), own_line
    return None


def parse_command(rest: str) -> tuple[Command, str]:
    """('stop'|'resume'|'replan'|'run', text) from what followed the phrase."""
    parts = rest.split(maxsplit=1)
    word = parts[0].lower().rstrip(":.,") if parts else ""
    tail = parts[1].strip() if len(parts) > 1 else ""
    for command in COMMANDS:
        if word == command:
            return command, tail if command == "replan" else ""
    return "run", rest


Parsed = tuple[Command, str, bool]
"""(command, text, whether the phrase began its line)."""


def _phrase_command(text: str, config: ForgeConfig) -> Parsed | None:
    found = find_phrase(text, config.trigger_phrase)
    return None if found is None else (*parse_command(found[0]), found[1])


def _answer(body: str, issue: Any, on_pull: bool, config: ForgeConfig) -> Parsed | None:
    """A plain reply on an issue that waits for input answers it (no phrase needed).

    Whether its author may trigger a run is decided later, like for any other trigger.
    """
    if on_pull or not isinstance(issue, Mapping) or not body.strip():
        return None
    waiting = config.label_needs_input in _names(issue.get("labels"))
    return ("run", body.strip(), False) if waiting else None


def _bot_skip(actor: Actor, config: ForgeConfig) -> Skip | None:
    if actor.is_bot and actor.login not in config.allowed_bots:
        return Skip(reason=f"the sender @{actor.login} is a bot (not in forge.allowed_bots)")
    return None


def _github_author(
    payload: Mapping[str, Any], body: str, what: str, config: ForgeConfig
) -> Actor | Skip:
    """Who wrote `body` (the sender), or why it starts nothing: planner's own text, or a bot's."""
    if MARKER_PREFIX in body:
        return Skip(reason=f"the {what} is one of planner's own")
    actor = github_actor(_need(payload, "sender"))
    return _bot_skip(actor, config) or actor


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _need(data: Any, path: str) -> Any:
    """The value at a dotted `path` ('repository.full_name'); an error naming it if absent."""
    node = data
    for key in path.split("."):
        if not isinstance(node, Mapping) or node.get(key) is None:
            raise UserInputError(f"the event payload has no {path}")
        node = node[key]
    return node


def _object(data: Any, path: str) -> Mapping[str, Any]:
    """_need for a value that must be a JSON object: a wrong type is bad input, not a crash."""
    node = _need(data, path)
    if not isinstance(node, Mapping):
        raise UserInputError(f"the event payload's {path} is not an object")
    return node


def _at(data: Any, path: str) -> Any:
    """_need on an object taken out of the payload, named as in the payload: 'issue.number'."""
    return _need({path.partition(".")[0]: data}, path)


def _int(value: Any, what: str) -> int:
    try:
        number = int(str(value).strip().lstrip("#!"))
    except ValueError:
        raise UserInputError(f"{what} must be an issue number, got {value!r}") from None
    if number <= 0:
        raise UserInputError(f"{what} must be a positive issue number, got {value!r}")
    return number


# -- GitHub ----------------------------------------------------------------------------------


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
    login = str(_at(sender, "sender.login"))
    user_id = sender.get("id")
    return Actor(
        login=login,
        id=int(user_id) if isinstance(user_id, int) else None,
        is_bot=sender.get("type") == "Bot" or login.endswith("[bot]"),
        email=f"{user_id}+{login}@users.noreply.github.com" if user_id else "",
    )


def _github_issues(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    action = str(_need(payload, "action"))
    issue = _need(payload, "issue")
    wanted = _github_issue_action(action, payload, issue, config)
    if isinstance(wanted, Skip):
        return wanted
    actor = github_actor(_need(payload, "sender"))
    return _bot_skip(actor, config) or Trigger(
        platform="github",
        kind=wanted,
        event=f"issues.{action}",
        repository=str(_need(payload, "repository.full_name")),
        issue_number=_int(_at(issue, "issue.number"), "issue.number"),
        actor=actor,
        event_time=str(issue.get("updated_at") or _now()),
    )


def _github_issue_action(
    action: str, payload: Mapping[str, Any], issue: Any, config: ForgeConfig
) -> TriggerKind | Skip:
    if action == "labeled":
        label = payload.get("label")
        names = [label.get("name")] if isinstance(label, Mapping) else _names(issue.get("labels"))
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
    action = str(_need(payload, "action"))
    if action != "created":
        return Skip(reason=f"issue_comment.{action}: only new comments trigger planner")
    comment, issue = _need(payload, "comment"), _need(payload, "issue")
    body = str(comment.get("body") or "")
    actor = _github_author(payload, body, "comment", config)
    if isinstance(actor, Skip):
        return actor
    on_pull = bool(issue.get("pull_request"))
    parsed = _phrase_command(body, config) or _answer(body, issue, on_pull, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    number = _int(_at(issue, "issue.number"), "issue.number")
    return Trigger(
        platform="github",
        kind="pr_comment" if on_pull else "comment",
        event="issue_comment.created",
        repository=str(_need(payload, "repository.full_name")),
        issue_number=None if on_pull else number,
        pull_request=number if on_pull else None,
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(comment.get("id") or ""),
        event_time=str(comment.get("created_at") or _now()),
    )


def _github_review(
    payload: Mapping[str, Any], config: ForgeConfig, act_on_changes_requested: bool
) -> Trigger | Skip:
    """A submitted review: its text holds the phrase, or it requests changes and
    review.act_on_changes_requested is on. Its threads are read from the forge by the pass."""
    action = str(_need(payload, "action"))
    if action != "submitted":
        return Skip(
            reason=f"pull_request_review.{action}: only a submitted review triggers planner"
        )
    review = _object(payload, "review")
    body = str(review.get("body") or "")
    actor = _github_author(payload, body, "review", config)
    if isinstance(actor, Skip):
        return actor
    parsed = _phrase_command(body, config)
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
    action = str(_need(payload, "action"))
    if action != "created":
        return Skip(
            reason=f"pull_request_review_comment.{action}: only new comments trigger planner"
        )
    comment = _object(payload, "comment")
    body = str(comment.get("body") or "")
    actor = _github_author(payload, body, "comment", config)
    if isinstance(actor, Skip):
        return actor
    parsed = _phrase_command(body, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    event = "pull_request_review_comment.created"
    return _github_review_trigger(payload, event, actor, parsed, comment)


def _github_review_trigger(
    payload: Mapping[str, Any], event: str, actor: Actor, parsed: Parsed, item: Mapping[str, Any]
) -> Trigger:
    pull = _object(payload, "pull_request")
    head = pull.get("head") if isinstance(pull.get("head"), Mapping) else {}
    moment = item.get("submitted_at") or item.get("created_at")
    return Trigger(
        platform="github",
        kind="review",
        event=event,
        repository=str(_need(payload, "repository.full_name")),
        pull_request=_int(_at(pull, "pull_request.number"), "pull_request.number"),
        pull_request_branch=str((head or {}).get("ref") or ""),
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(item.get("id") or ""),
        event_time=str(moment or _now()),
    )


def _github_dispatch(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    inputs = payload.get("inputs") or {}
    if not inputs.get("issue"):
        raise UserInputError("workflow_dispatch needs an 'issue' input (the issue number)")
    actor = github_actor(_need(payload, "sender"))
    command, text, own_line = _manual_command(str(inputs.get("instruction") or ""), config)
    kind = _dispatch_kind(actor, command, text, config)
    if isinstance(kind, Skip):
        return kind
    return Trigger(
        platform="github",
        kind=kind,
        event="workflow_dispatch",
        repository=str(_need(payload, "repository.full_name")),
        issue_number=_int(inputs["issue"], "the 'issue' input"),
        actor=actor,
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=_now(),
    )


def _dispatch_kind(
    actor: Actor, command: Command, text: str, config: ForgeConfig
) -> Literal["dispatch", "sweep"] | Skip:
    """A run started through the API (workflow dispatch, API pipeline). A bot's is a sweep's
    run when it carries no instruction: planner.ci.job then accepts planner's own token only
    (starting it needed write access); a bot with an instruction is skipped as ever."""
    skip = _bot_skip(actor, config)
    if skip is None:
        return "dispatch"
    return "sweep" if (command, text) == ("run", "") else skip


def _manual_command(instruction: str, config: ForgeConfig) -> Parsed:
    """A typed instruction: subcommands only with the phrase ('/planner stop')."""
    return _phrase_command(instruction, config) or ("run", instruction.strip(), False)


def _names(labels: Any) -> list[str]:
    if not isinstance(labels, list):
        return []
    return [
        str(x.get("name") or x.get("title")) if isinstance(x, Mapping) else str(x) for x in labels
    ]


def load_github_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """(GITHUB_EVENT_NAME, the JSON at GITHUB_EVENT_PATH)."""
    name = env.get("GITHUB_EVENT_NAME", "")
    if not name:
        raise UserInputError("GITHUB_EVENT_NAME is not set: is this running in GitHub Actions?")
    return name, load_json_file(env.get("GITHUB_EVENT_PATH", ""), "GITHUB_EVENT_PATH")


def load_json_file(path: str, variable: str) -> dict[str, Any]:
    if not path or not Path(path).is_file():
        raise UserInputError(f"{variable} does not name a readable file ({path!r})")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserInputError(f"the event payload in {variable} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UserInputError(f"the event payload in {variable} is not a JSON object")
    return data


# -- GitLab ----------------------------------------------------------------------------------


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
    username = str(_at(user, "user.username"))
    user_id = user.get("id")
    host = urlsplit(web_url).hostname or "gitlab.com"
    return Actor(
        login=username,
        id=int(user_id) if isinstance(user_id, int) else None,
        is_bot=is_gitlab_bot(username) or user.get("bot") is True,
        email=f"{user_id}-{username}@users.noreply.{host}" if user_id else "",
    )


def _gitlab_issue(payload: Mapping[str, Any], config: ForgeConfig) -> Trigger | Skip:
    attributes = _object(payload, "object_attributes")
    changes = payload.get("changes") or {}
    kind = _gitlab_issue_kind(attributes, changes, config)
    if isinstance(kind, Skip):
        return kind
    project = _need(payload, "project")
    actor = gitlab_actor(_need(payload, "user"), str(project.get("web_url") or ""))
    return _bot_skip(actor, config) or Trigger(
        platform="gitlab",
        kind=kind,
        event="Issue Hook",
        repository=str(_at(project, "project.path_with_namespace")),
        project_id=str(_at(project, "project.id")),
        issue_number=_int(_at(attributes, "object_attributes.iid"), "object_attributes.iid"),
        actor=actor,
        event_time=str(attributes.get("updated_at") or _now()),
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
    attributes = _object(payload, "object_attributes")
    if attributes.get("system"):
        return Skip(reason="system notes do not trigger planner")
    if attributes.get("action") not in (None, "create"):
        return Skip(reason=f"note {attributes.get('action')}: only new comments trigger planner")
    body = str(attributes.get("note") or "")
    if MARKER_PREFIX in body:
        return Skip(reason="the comment is one of planner's own")
    project = _need(payload, "project")
    actor = gitlab_actor(_need(payload, "user"), str(project.get("web_url") or ""))
    return _bot_skip(actor, config) or _as_review(
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
    parsed = _phrase_command(body, config) or _answer(body, issue, not on_issue, config)
    if parsed is None:
        return Skip(reason=f"the comment does not contain {config.trigger_phrase!r}")
    target = _need(payload, "issue" if on_issue else "merge_request")
    where = "issue" if on_issue else "merge_request"
    number = _int(_at(target, f"{where}.iid"), f"{where}.iid")
    project = _need(payload, "project")
    return Trigger(
        platform="gitlab",
        kind="comment" if on_issue else "pr_comment",
        event="Note Hook",
        repository=str(_at(project, "project.path_with_namespace")),
        project_id=str(_at(project, "project.id")),
        issue_number=number if on_issue else None,
        pull_request=None if on_issue else number,
        pull_request_branch="" if on_issue else str(target.get("source_branch") or ""),
        actor=actor,
        command=parsed[0],
        instruction=parsed[1],
        own_line=parsed[2],
        comment_id=str(attributes.get("id") or ""),
        event_time=str(attributes.get("created_at") or _now()),
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
    command, text, own_line = _manual_command(env.get("PLANNER_INSTRUCTION", ""), config)
    kind = _dispatch_kind(actor, command, text, config)
    if isinstance(kind, Skip):
        return kind
    return Trigger(
        platform="gitlab",
        kind="manual" if kind == "dispatch" else kind,
        event=f"pipeline ({env.get('CI_PIPELINE_SOURCE') or 'unknown'})",
        repository=env.get("CI_PROJECT_PATH", ""),
        project_id=env.get("CI_PROJECT_ID", ""),
        issue_number=_int(env["PLANNER_ISSUE_IID"], "PLANNER_ISSUE_IID"),
        actor=actor,
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=_now(),
    )


# -- local -----------------------------------------------------------------------------------


def local_trigger(
    issue_number: int | str, config: ForgeConfig, *, instruction: str = "", actor: str = "local"
) -> Trigger:
    """`planner run` on a working tree: issues, comments and PRs are files under .planner/."""
    command, text, own_line = _manual_command(instruction, config)
    return Trigger(
        platform="local",
        kind="local",
        event="local run",
        repository="",
        issue_number=_int(issue_number, "the issue number"),
        actor=Actor(login=actor or "local"),
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=_now(),
    )


def local_reply_trigger(trigger: Trigger, comment: CommentData, config: ForgeConfig) -> Trigger:
    """A local run whose event is a person's comment file: read like a comment on a forge
    (a command after the phrase, else a plain reply)."""
    found = _phrase_command(comment.body, config)
    command, text, own_line = found or ("run", comment.body.strip(), False)
    return trigger.model_copy(
        update={
            "kind": "comment",
            "event": "local comment",
            "command": command,
            "instruction": text,
            "own_line": own_line,
            "comment_id": comment.id,
            "event_time": comment.created_at or trigger.event_time,
        }
    )
