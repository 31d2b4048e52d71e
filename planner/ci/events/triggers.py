"""Events that may start a pass, turned into one `Trigger` — or a `Skip` saying why not: the
model, the phrase and its subcommands, and what every payload reader shares. The payloads
themselves are read in planner.ci.events.github, planner.ci.events.gitlab and
planner.ci.events.local.

Parsing is pure (no API calls): event kind, label, phrase, subcommand, bot senders and our
own comments are decided here. Write access, closed/locked issues and "is this PR one of ours"
need the forge and are decided in planner.ci.target.

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

from pydantic import BaseModel

from planner.ci.forges.base import Actor
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
with no instruction); planner.ci.target lets it act only when the bot is planner's own token."""
COMMANDS: tuple[Command, ...] = ("resume", "replan", "stop")


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
    """None for a comment on a pull request until planner.ci.target finds the issue it closes."""
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


def phrase_command(text: str, config: ForgeConfig) -> Parsed | None:
    found = find_phrase(text, config.trigger_phrase)
    return None if found is None else (*parse_command(found[0]), found[1])


def plain_answer(body: str, issue: Any, on_pull: bool, config: ForgeConfig) -> Parsed | None:
    """A plain reply on an issue that waits for input answers it (no phrase needed).

    Whether its author may trigger a run is decided later, like for any other trigger.
    """
    if on_pull or not isinstance(issue, Mapping) or not body.strip():
        return None
    waiting = config.label_needs_input in label_names(issue.get("labels"))
    return ("run", body.strip(), False) if waiting else None


def bot_skip(actor: Actor, config: ForgeConfig) -> Skip | None:
    if actor.is_bot and actor.login not in config.allowed_bots:
        return Skip(reason=f"the sender @{actor.login} is a bot (not in forge.allowed_bots)")
    return None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def need(data: Any, path: str) -> Any:
    """The value at a dotted `path` ('repository.full_name'); an error naming it if absent."""
    node = data
    for key in path.split("."):
        if not isinstance(node, Mapping) or node.get(key) is None:
            raise UserInputError(f"the event payload has no {path}")
        node = node[key]
    return node


def need_object(data: Any, path: str) -> Mapping[str, Any]:
    """`need` for a value that must be a JSON object: a wrong type is bad input, not a crash."""
    node = need(data, path)
    if not isinstance(node, Mapping):
        raise UserInputError(f"the event payload's {path} is not an object")
    return node


def need_at(data: Any, path: str) -> Any:
    """`need` on an object taken out of the payload, named as in the payload: 'issue.number'."""
    return need({path.partition(".")[0]: data}, path)


def positive_number(value: Any, what: str) -> int:
    try:
        number = int(str(value).strip().lstrip("#!"))
    except ValueError:
        raise UserInputError(f"{what} must be an issue number, got {value!r}") from None
    if number <= 0:
        raise UserInputError(f"{what} must be a positive issue number, got {value!r}")
    return number


def dispatch_kind(
    actor: Actor, command: Command, text: str, config: ForgeConfig
) -> Literal["dispatch", "sweep"] | Skip:
    """A run started through the API (workflow dispatch, API pipeline). A bot's is a sweep's
    run when it carries no instruction: planner.ci.target then accepts planner's own token only
    (starting it needed write access); a bot with an instruction is skipped as ever."""
    skip = bot_skip(actor, config)
    if skip is None:
        return "dispatch"
    return "sweep" if (command, text) == ("run", "") else skip


def manual_command(instruction: str, config: ForgeConfig) -> Parsed:
    """A typed instruction: subcommands only with the phrase ('/planner stop')."""
    return phrase_command(instruction, config) or ("run", instruction.strip(), False)


def label_names(labels: Any) -> list[str]:
    if not isinstance(labels, list):
        return []
    return [
        str(x.get("name") or x.get("title")) if isinstance(x, Mapping) else str(x) for x in labels
    ]


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
