"""Event parsing: real GitHub webhook payloads, variants built from them, GitLab hook payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.ci.events.github import load_github_event, parse_github_event
from planner.ci.events.gitlab import gitlab_trigger_from_env, parse_gitlab_event
from planner.ci.events.local import local_trigger
from planner.ci.events.triggers import Skip, Trigger, match_phrase, parse_command
from planner.config import ForgeConfig
from planner.core.errors import UserInputError
from tests.fake_forge.scenario import comment_event, github_payload, gitlab_payload, labeled_event

CONFIG = ForgeConfig()


def trigger(result: Trigger | Skip) -> Trigger:
    assert isinstance(result, Trigger), f"expected a trigger, got skip: {result}"
    return result


def skip(result: Trigger | Skip) -> str:
    assert isinstance(result, Skip), f"expected a skip, got {result}"
    return result.reason


# -- GitHub: the real payloads -------------------------------------------------------------------


def test_real_labeled_payload_with_another_label_is_skipped() -> None:
    payload = github_payload("issues.labeled")
    assert payload["label"]["name"] == "bug"
    reason = skip(parse_github_event("issues", payload, CONFIG))
    assert "'bug'" in reason and "'planner'" in reason


def test_real_labeled_payload_triggers_when_bug_is_the_trigger_label() -> None:
    payload = github_payload("issues.labeled")
    found = trigger(parse_github_event("issues", payload, ForgeConfig(trigger_label="bug")))
    assert (found.kind, found.event, found.repository) == (
        "labeled",
        "issues.labeled",
        "Codertocat/Hello-World",
    )
    assert found.issue_number == payload["issue"]["number"] == 1
    assert found.actor.login == "Codertocat" and not found.actor.is_bot
    assert found.actor.email == "21031067+Codertocat@users.noreply.github.com"
    assert found.event_time == payload["issue"]["updated_at"]
    assert found.command == "run" and found.instruction == ""


def test_labeled_without_label_field_falls_back_to_issue_labels() -> None:
    payload = labeled_event()
    del payload["label"]
    assert skip(parse_github_event("issues", payload, CONFIG))
    payload["issue"]["labels"].append({"name": "planner"})
    assert trigger(parse_github_event("issues", payload, CONFIG)).kind == "labeled"


def test_real_opened_and_assigned_payloads_only_trigger_when_enabled() -> None:
    opened, assigned = github_payload("issues.opened"), github_payload("issues.assigned")
    assert "does not trigger" in skip(parse_github_event("issues", opened, CONFIG))
    assert "does not trigger" in skip(parse_github_event("issues", assigned, CONFIG))
    enabled = ForgeConfig(trigger_on_opened=True, trigger_on_assigned=True)
    assert trigger(parse_github_event("issues", opened, enabled)).kind == "opened"
    assert trigger(parse_github_event("issues", assigned, enabled)).kind == "assigned"


def test_real_comment_payload_without_the_phrase_is_skipped() -> None:
    payload = github_payload("issue_comment.created")
    reason = skip(parse_github_event("issue_comment", payload, CONFIG))
    assert "'/planner'" in reason


def test_comment_with_phrase_carries_instruction_time_and_id() -> None:
    payload = comment_event("Thanks!\n/Planner please add a changelog entry\ntoo")
    found = trigger(parse_github_event("issue_comment", payload, CONFIG))
    assert (found.kind, found.command) == ("comment", "run")
    assert found.instruction == "please add a changelog entry\ntoo"
    assert found.comment_id == "492700400"
    assert found.event_time == "2019-05-15T15:20:21Z"
    assert found.issue_number == 1 and found.pull_request is None


def test_bot_sender_is_skipped_unless_allow_listed() -> None:
    payload = labeled_event()
    payload["sender"].update(login="renovate[bot]", type="Bot")
    assert "bot" in skip(parse_github_event("issues", payload, CONFIG))
    allowed = ForgeConfig(allowed_bots=["renovate[bot]"])
    found = trigger(parse_github_event("issues", payload, allowed))
    assert found.actor.is_bot and found.actor.login == "renovate[bot]"


def test_bot_comment_with_phrase_is_skipped() -> None:
    payload = comment_event("/planner go")
    payload["sender"].update(login="github-actions[bot]", type="Bot")
    assert "bot" in skip(parse_github_event("issue_comment", payload, CONFIG))


def test_our_own_comment_is_skipped_even_when_it_mentions_the_phrase() -> None:
    payload = comment_event("<!-- planner:question -->\nReply with `/planner <answer>`")
    payload["sender"]["type"] = "User"
    assert "planner's own" in skip(parse_github_event("issue_comment", payload, CONFIG))


def test_author_association_none_is_parsed_and_left_to_the_permission_check() -> None:
    payload = comment_event("/planner do it")
    payload["comment"]["author_association"] = "NONE"
    payload["issue"]["author_association"] = "NONE"
    found = trigger(parse_github_event("issue_comment", payload, CONFIG))
    assert found.actor.login == "Codertocat"  # write access is checked against the API


def test_comment_on_a_pull_request_targets_the_pull_request() -> None:
    payload = comment_event("/planner the tests fail on Windows")
    payload["issue"]["pull_request"] = {
        "url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"
    }
    found = trigger(parse_github_event("issue_comment", payload, CONFIG))
    assert (found.kind, found.issue_number, found.pull_request) == ("pr_comment", None, 1)
    assert found.instruction == "the tests fail on Windows"


def test_edited_comments_do_not_trigger() -> None:
    payload = comment_event("/planner go")
    payload["action"] = "edited"
    assert "only new comments" in skip(parse_github_event("issue_comment", payload, CONFIG))


def test_other_events_are_skipped() -> None:
    assert "'push'" in skip(parse_github_event("push", {"ref": "refs/heads/main"}, CONFIG))


def test_workflow_dispatch_needs_an_issue_number() -> None:
    payload: dict[str, Any] = {
        "inputs": {"issue": "#7", "instruction": "/planner replan the API changed"},
        "sender": github_payload("issues.labeled")["sender"],
        "repository": {"full_name": "Codertocat/Hello-World"},
    }
    found = trigger(parse_github_event("workflow_dispatch", payload, CONFIG))
    assert (found.kind, found.issue_number, found.command) == ("dispatch", 7, "replan")
    assert found.instruction == "the API changed"
    payload["inputs"]["issue"] = "seven"
    with pytest.raises(UserInputError, match="issue number"):
        parse_github_event("workflow_dispatch", payload, CONFIG)
    payload["inputs"] = {}
    with pytest.raises(UserInputError, match="'issue' input"):
        parse_github_event("workflow_dispatch", payload, CONFIG)


def test_dispatch_instruction_without_phrase_is_plain_text() -> None:
    payload = {
        "inputs": {"issue": "3", "instruction": "stop using tabs"},
        "sender": {"login": "octo", "id": 1, "type": "User"},
        "repository": {"full_name": "o/r"},
    }
    found = trigger(parse_github_event("workflow_dispatch", payload, CONFIG))
    assert (found.command, found.instruction) == ("run", "stop using tabs")


def test_malformed_payloads_give_clear_errors() -> None:
    payload = labeled_event()
    del payload["issue"]["number"]
    with pytest.raises(UserInputError, match=r"issue\.number"):
        parse_github_event("issues", payload, CONFIG)
    with pytest.raises(UserInputError, match="not a JSON object"):
        parse_github_event("issues", [], CONFIG)  # type: ignore[arg-type]


def test_load_github_event_reads_the_event_file(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(labeled_event()), encoding="utf-8")
    name, payload = load_github_event(
        {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(path)}
    )
    assert name == "issues" and payload["label"]["name"] == "planner"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UserInputError, match="not valid JSON"):
        load_github_event({"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(path)})
    with pytest.raises(UserInputError, match="GITHUB_EVENT_NAME"):
        load_github_event({})


# -- phrase and subcommands ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("/planner", ""),
        ("/PLANNER  fix it", "fix it"),
        ("please /planner: fix it", ": fix it"),
        ("/planners fix it", None),
        ("a/planner fix it", None),
        ("see `/planner stop` in the docs", None),
        ("> /planner stop\n\nI quoted that", None),
        ("```\n/planner stop\n```\nonly code", None),
        ("> quoted\n\n/planner resume", "resume"),
        # CommonMark's lazy continuation: the second line is still part of the quote.
        ("> quoted\n/planner resume", None),
        # An indented code block, and a fence whose inner ``` line does not close it.
        ("Don't approve yet!\n\n    /planner approve a1", None),
        ("\tDon't\n\t/planner approve a1", None),
        ("````\n```\n/planner approve a1\n```\n````", None),
        # Inside a multi-line HTML attribute, a list item, a heading: not a top-level paragraph.
        ('<div title="\n/planner approve a1\n">x</div>', None),
        ("- /planner approve a1", None),
        ("# /planner approve a1", None),
        ("<span title='/planner stop'>hi</span> there", None),
        ("ok\n\n/planner fix `a` then\n\nmore", "fix `a` then\n\nmore"),
        ("mail me at x@/planner", None),
        ("<!-- /planner stop -->", None),
        ("<!-- unclosed\n/planner stop", None),
        ("<!-- note -->\n/planner resume", "resume"),
    ],
)
def test_match_phrase(text: str, rest: str | None) -> None:
    assert match_phrase(text, "/planner") == rest


@pytest.mark.parametrize(
    ("text", "own_line"),
    [
        ("/planner approve", True),
        ("Looks good.\n  /planner approve a1", True),
        ("Please do NOT /planner approve yet", False),
        ("> /planner approve\n\nwell, /planner approve", False),
    ],
)
def test_a_command_counts_only_on_its_own_line(text: str, own_line: bool) -> None:
    payload = comment_event(text)
    assert trigger(parse_github_event("issue_comment", payload, CONFIG)).own_line is own_line


@pytest.mark.parametrize(
    ("rest", "command", "text"),
    [
        ("resume", "resume", ""),
        ("Resume please", "resume", ""),
        ("stop", "stop", ""),
        ("replan the schema changed", "replan", "the schema changed"),
        ("replan: use sqlite", "replan", "use sqlite"),
        ("stopping is not a command", "run", "stopping is not a command"),
        ("", "run", ""),
    ],
)
def test_parse_command(rest: str, command: str, text: str) -> None:
    assert parse_command(rest) == (command, text)


def test_custom_phrase() -> None:
    config = ForgeConfig(trigger_phrase="@planner")
    payload = comment_event("@planner plan this please")
    assert trigger(parse_github_event("issue_comment", payload, config)).instruction == (
        "plan this please"
    )


# -- GitLab --------------------------------------------------------------------------------------


def test_gitlab_issue_hook_with_planner_label_added() -> None:
    payload = gitlab_payload("issue_hook")
    found = trigger(parse_gitlab_event(payload, CONFIG))
    assert (found.platform, found.kind, found.event) == ("gitlab", "labeled", "Issue Hook")
    assert (found.repository, found.project_id, found.issue_number) == ("acme/widgets", "42", 12)
    assert found.actor.login == "dana" and found.actor.id == 7
    assert found.actor.email == "7-dana@users.noreply.gitlab.example.com"


def test_gitlab_issue_hook_where_planner_label_was_already_there_is_skipped() -> None:
    payload = gitlab_payload("issue_hook")
    payload["changes"]["labels"]["previous"] = payload["changes"]["labels"]["current"]
    assert "did not add" in skip(parse_gitlab_event(payload, CONFIG))
    del payload["changes"]["labels"]
    assert skip(parse_gitlab_event(payload, CONFIG))


def test_gitlab_issue_hook_from_a_project_bot_is_skipped() -> None:
    payload = gitlab_payload("issue_hook")
    payload["user"]["username"] = "project_42_bot_3f9a"
    assert "bot" in skip(parse_gitlab_event(payload, CONFIG))


def test_gitlab_issue_opened_when_enabled() -> None:
    payload = gitlab_payload("issue_hook")
    payload["changes"] = {}
    payload["object_attributes"]["action"] = "open"
    assert skip(parse_gitlab_event(payload, CONFIG))
    found = trigger(parse_gitlab_event(payload, ForgeConfig(trigger_on_opened=True)))
    assert found.kind == "opened"


def test_gitlab_note_hook_fixture_uses_another_phrase() -> None:
    payload = gitlab_payload("note_hook_issue")
    assert "'/planner'" in skip(parse_gitlab_event(payload, CONFIG))
    found = trigger(parse_gitlab_event(payload, ForgeConfig(trigger_phrase="@planner")))
    assert (found.kind, found.issue_number, found.instruction) == (
        "comment",
        12,
        "plan this please",
    )
    assert found.comment_id == "9001"
    assert found.event_time == "2025-03-03 09:01:44 UTC"


def test_gitlab_note_subcommands_and_system_notes() -> None:
    payload = gitlab_payload("note_hook_issue")
    payload["object_attributes"]["note"] = "/planner stop"
    assert trigger(parse_gitlab_event(payload, CONFIG)).command == "stop"
    payload["object_attributes"]["system"] = True
    assert "system" in skip(parse_gitlab_event(payload, CONFIG))


def test_gitlab_note_on_a_merge_request() -> None:
    payload = gitlab_payload("note_hook_mr")
    payload["object_attributes"]["note"] = "/planner rename the flag"
    found = trigger(parse_gitlab_event(payload, CONFIG))
    assert (found.kind, found.issue_number, found.pull_request) == ("pr_comment", None, 5)
    assert found.pull_request_branch == "planner/issue-12"


def test_gitlab_note_on_a_snippet_is_skipped() -> None:
    payload = gitlab_payload("note_hook_issue")
    payload["object_attributes"].update(noteable_type="Snippet", note="/planner go")
    assert "Snippet" in skip(parse_gitlab_event(payload, CONFIG))


def test_gitlab_other_hooks_are_skipped() -> None:
    assert "push" in skip(parse_gitlab_event({"object_kind": "push"}, CONFIG))


def test_gitlab_trigger_payload_file_and_manual_pipelines(tmp_path: Path) -> None:
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(gitlab_payload("issue_hook")), encoding="utf-8")
    env = {"CI_PIPELINE_SOURCE": "trigger", "TRIGGER_PAYLOAD": str(path)}
    assert trigger(gitlab_trigger_from_env(env, CONFIG)).issue_number == 12
    manual = {
        "CI_PIPELINE_SOURCE": "web",
        "PLANNER_ISSUE_IID": "12",
        "PLANNER_INSTRUCTION": "/planner resume",
        "GITLAB_USER_LOGIN": "dana",
        "GITLAB_USER_ID": "7",
        "CI_PROJECT_PATH": "acme/widgets",
        "CI_PROJECT_ID": "42",
    }
    found = trigger(gitlab_trigger_from_env(manual, CONFIG))
    assert (found.kind, found.command, found.actor.id, found.project_id) == (
        "manual",
        "resume",
        7,
        "42",
    )
    assert "no TRIGGER_PAYLOAD" in skip(
        gitlab_trigger_from_env({"CI_PIPELINE_SOURCE": "push"}, CONFIG)
    )
    with pytest.raises(UserInputError, match="GITLAB_USER_LOGIN"):
        gitlab_trigger_from_env({"PLANNER_ISSUE_IID": "12"}, CONFIG)


# -- local ---------------------------------------------------------------------------------------


def test_local_trigger_commands() -> None:
    assert local_trigger(3, CONFIG, instruction="/planner stop").command == "stop"
    found = local_trigger("4", CONFIG, instruction="add docs", actor="me")
    assert (found.issue_number, found.command, found.instruction, found.actor.login) == (
        4,
        "run",
        "add docs",
        "me",
    )
    with pytest.raises(UserInputError):
        local_trigger("zero", CONFIG)


@pytest.mark.parametrize("platform", ["github", "gitlab"])
def test_a_plain_reply_answers_only_an_issue_that_waits_for_input(platform: str) -> None:
    def parse(labels: list[str]) -> Any:
        if platform == "github":
            payload = comment_event("Use Python 3.12, please.")
            payload["issue"]["labels"] = [{"name": name} for name in labels]
            return parse_github_event("issue_comment", payload, CONFIG)
        payload = gitlab_payload("note_hook_issue")
        payload["object_attributes"]["note"] = "Use Python 3.12, please."
        payload["issue"]["labels"] = [{"title": name} for name in labels]
        return parse_gitlab_event(payload, CONFIG)

    answered = trigger(parse(["planner", "planner:needs-input"]))
    assert (answered.command, answered.instruction) == ("run", "Use Python 3.12, please.")
    assert "does not contain '/planner'" in skip(parse(["planner"]))
    assert "does not contain '/planner'" in skip(parse(["planner", "planner:paused"]))
