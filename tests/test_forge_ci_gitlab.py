"""planner.ci.job end to end on the fake GitLab: trigger payloads, notes, merge requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from tests.fake_forge import FakeGitLab
from tests.fake_forge.rig import Rig
from tests.fake_forge.scenario import (
    branch_log,
    demo_script_unjudged,
    file_on,
    gitlab_payload,
    one_file_plan,
)

TITLE = "Widgets render upside down on narrow screens"


@pytest.fixture
def rig(fake_gitlab: FakeGitLab, tmp_path: Path) -> Rig:
    fake_gitlab.add_issue(
        12, TITLE, "On screens under 400px every widget is rotated.", labels=["bug", "planner"]
    )
    fake_gitlab.members[7] = 30
    return Rig("gitlab", fake_gitlab, tmp_path)


def fake_of(rig: Rig) -> FakeGitLab:
    assert isinstance(rig.fake, FakeGitLab)
    return rig.fake


def tracking_notes(fake: FakeGitLab) -> list[Any]:
    return [n for n in fake.notes_on(12) if TRACKING_MARKER in n.body]


def payload_file(rig: Rig, payload: dict[str, Any]) -> dict[str, str]:
    """TRIGGER_PAYLOAD is a file variable: the environment holds the file's path."""
    path = rig.tmp / f"payload-{rig.runs + 1}.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return rig.env(TRIGGER_PAYLOAD=str(path))


def note_payload(fake: FakeGitLab, text: str) -> dict[str, Any]:
    note = fake.add_note(12, text)
    payload = gitlab_payload("note_hook_issue")
    payload["object_attributes"].update(note=text, id=note.id, created_at=note.created_at)
    return payload


def test_issue_hook_then_note_continues_on_the_same_branch_note_and_mr(rig: Rig) -> None:
    fake = fake_of(rig)
    first = rig.run(
        None, demo_script_unjudged(), env=payload_file(rig, gitlab_payload("issue_hook"))
    )

    assert first.status == "completed" and first.issue_number == 12
    [note] = tracking_notes(fake)
    assert note.author == "project_42_bot_5f2a" and "- [x] **write_guide**" in note.body
    assert branch_log(fake.bare, "planner/issue-12") == [f"planner: {TITLE} (#12)"]
    [mr] = fake.merge_requests.values()
    assert (mr.source_branch, mr.target_branch, mr.title) == (
        "planner/issue-12",
        "main",
        f"{TITLE} (#12)",
    )
    assert "Closes #12" in mr.description
    assert first.pr_url.endswith(f"/acme/widgets/-/merge_requests/{mr.iid}")
    assert fake.issues[12].labels == ["bug", "planner", "planner:done"]

    payload = note_payload(fake, "/planner also add a CHANGELOG.md")
    second = rig.run(
        None,
        one_file_plan("CHANGELOG.md", "# Changes\n", "Add a changelog"),
        env=payload_file(rig, payload),
    )
    assert second.status == "completed"
    [again] = tracking_notes(fake)
    assert again.id == note.id and "Add a changelog" in again.body
    assert len(branch_log(fake.bare, "planner/issue-12")) == 2
    assert file_on(fake.bare, "planner/issue-12", "CHANGELOG.md") == "# Changes"
    assert list(fake.merge_requests) == [mr.iid] and "Add a changelog" in mr.description
    assert any("also add a CHANGELOG.md" in prompt for prompt in rig.prompts[6:])


def test_draft_merge_request_while_unfinished(rig: Rig) -> None:
    fake = fake_of(rig)
    steps = one_file_plan("CHANGELOG.md", "# Changes\n", "Add a changelog")
    env = payload_file(rig, gitlab_payload("issue_hook"))
    paused = rig.run(None, steps[:3], env=env, **{"budget.max_model_calls": 3})
    assert paused.status == "in_progress"
    [mr] = fake.merge_requests.values()
    assert mr.title.startswith("Draft: ")
    manual = rig.env(
        PLANNER_ISSUE_IID="12",
        PLANNER_INSTRUCTION="/planner resume",
        GITLAB_USER_LOGIN="dana",
        GITLAB_USER_ID="7",
        CI_PIPELINE_SOURCE="web",
    )
    done = rig.run(None, steps[3:], env=manual)
    assert done.status == "completed" and not mr.title.startswith("Draft: ")


def test_a_note_on_our_merge_request_is_feedback_for_the_issue(rig: Rig) -> None:
    fake = fake_of(rig)
    rig.run(None, demo_script_unjudged(), env=payload_file(rig, gitlab_payload("issue_hook")))
    [mr] = fake.merge_requests.values()
    payload = gitlab_payload("note_hook_mr")
    payload["object_attributes"]["note"] = "/planner mention pytest"
    payload["merge_request"]["iid"] = mr.iid
    outcome = rig.run(
        None,
        one_file_plan("TESTING.md", "pytest\n", "Mention pytest"),
        env=payload_file(rig, payload),
    )
    assert outcome.status == "completed" and outcome.issue_number == 12
    assert any(f"Feedback on pull request !{mr.iid}: mention pytest" in p for p in rig.prompts[6:])


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("reporter", "does not have write access"),
        ("closed", "is closed"),
        ("locked", "is locked"),
        ("bot", "is a bot"),
        ("no phrase", "does not contain"),
        ("foreign mr", "was not opened by planner"),
    ],
)
def test_skip_paths_make_no_write_request(rig: Rig, case: str, reason: str) -> None:
    fake = fake_of(rig)
    payload = gitlab_payload("issue_hook")
    if case == "reporter":
        fake.members[7] = 20
    elif case == "closed":
        fake.issues[12].state = "closed"
    elif case == "locked":
        fake.issues[12].discussion_locked = True
    elif case == "bot":
        payload["user"]["username"] = "group_3_bot_77aa"
    elif case == "no phrase":
        payload = gitlab_payload("note_hook_issue")
    else:
        fake.push_branch("feature/x")
        payload = gitlab_payload("note_hook_mr")
        payload["object_attributes"]["note"] = "/planner go"
        fake.merge_requests[5] = _foreign_mr()
    outcome = rig.run(None, [], env=payload_file(rig, payload))
    assert outcome.status == "skipped" and reason in outcome.reason
    assert fake.writes() == []


def _foreign_mr() -> Any:
    from tests.fake_forge.gitlab import GlMergeRequest

    return GlMergeRequest(5, "feature/x", "main", "Other work", "Closes #12")
