"""The GitLab adapter against the fake GitLab."""

from __future__ import annotations

import pytest

from planner.ci.forges.base import TRACKING_MARKER, Actor
from planner.ci.forges.gitlab import GitLabForge
from planner.config import ForgeConfig
from planner.core.errors import ConfigError
from tests.fake_forge import FakeGitLab

STATUS = ("planner:working", "planner:needs-input", "planner:done")


def gitlab_env(fake: FakeGitLab) -> dict[str, str]:
    return {
        "GITLAB_TOKEN": fake.token,
        "CI_API_V4_URL": fake.api_url,
        "CI_SERVER_URL": fake.base_url,
        "CI_PROJECT_ID": "42",
        "CI_PROJECT_PATH": "acme/widgets",
        "CI_PIPELINE_URL": f"{fake.base_url}/acme/widgets/-/pipelines/5",
    }


def adapter(fake: FakeGitLab) -> GitLabForge:
    return GitLabForge.from_env(gitlab_env(fake), ForgeConfig())


def test_from_env_needs_a_real_token(fake_gitlab: FakeGitLab) -> None:
    env = gitlab_env(fake_gitlab)
    del env["GITLAB_TOKEN"]
    with pytest.raises(ConfigError, match="CI_JOB_TOKEN cannot post notes"):
        GitLabForge.from_env({**env, "CI_JOB_TOKEN": "job"}, ForgeConfig())
    env = gitlab_env(fake_gitlab)
    del env["CI_API_V4_URL"]
    with pytest.raises(ConfigError, match="CI_API_V4_URL"):
        GitLabForge.from_env(env, ForgeConfig())


def test_links_and_remote(fake_gitlab: FakeGitLab) -> None:
    forge = adapter(fake_gitlab)
    assert forge.run_url().endswith("/acme/widgets/-/pipelines/5")
    assert forge.branch_url("planner/issue-12").endswith("/acme/widgets/-/tree/planner/issue-12")
    assert forge.git_remote().url == f"{fake_gitlab.base_url}/acme/widgets.git"
    assert forge.pull_reference(5) == "!5"


def test_get_issue_normalises_state(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets", "Upside down", labels=["bug"], discussion_locked=True)
    issue = adapter(fake_gitlab).get_issue(12)
    assert (issue.number, issue.state, issue.locked, issue.labels) == (12, "open", True, ["bug"])
    fake_gitlab.issues[12].state = "closed"
    assert adapter(fake_gitlab).get_issue(12).state == "closed"


def test_tracking_note_is_found_by_marker_and_author(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets")
    fake_gitlab.add_note(12, f"{TRACKING_MARKER}\nplanted by a person", author="dana")
    first = adapter(fake_gitlab).upsert_tracking_comment(12, "working")
    second = adapter(fake_gitlab).upsert_tracking_comment(12, "done")
    notes = fake_gitlab.notes_on(12)
    assert len(notes) == 2 and first.id == second.id == str(notes[1].id)
    assert notes[1].body == f"{TRACKING_MARKER}\ndone" and notes[1].author.startswith(
        "project_42_bot"
    )
    assert first.url.endswith(f"/acme/widgets/-/issues/12#note_{notes[1].id}")


def test_a_note_of_another_bot_is_not_the_tracking_note(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets")
    planted = fake_gitlab.add_note(12, f"{TRACKING_MARKER}\nplanted", author="project_42_bot_other")
    forge = adapter(fake_gitlab)
    written = forge.upsert_tracking_comment(12, "working")
    assert written.id != str(planted.id) and written.trusted
    assert [n.trusted for n in forge.list_comments(12)] == [False, True]
    assert len([r for r in fake_gitlab.api_requests("GET") if r.path.endswith("/user")]) == 1


def test_labels_use_add_and_remove(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets", labels=["bug", "planner:working"])
    labels = adapter(fake_gitlab).set_status_label(
        12, "planner:needs-input", STATUS, ["bug", "planner:working"]
    )
    assert labels == fake_gitlab.issues[12].labels == ["bug", "planner:needs-input"]
    bodies = [r.body for r in fake_gitlab.writes()]
    assert bodies == [{"remove_labels": "planner:working"}, {"add_labels": "planner:needs-input"}]


@pytest.mark.parametrize(("level", "allowed"), [(50, True), (30, True), (20, False)])
def test_member_access_level(fake_gitlab: FakeGitLab, level: int, allowed: bool) -> None:
    fake_gitlab.members[7] = level
    assert adapter(fake_gitlab).can_write(Actor(login="dana", id=7)) is allowed


def test_member_found_by_username_when_the_id_is_unknown(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.members[7] = 40
    assert adapter(fake_gitlab).can_write(Actor(login="dana")) is True
    assert adapter(fake_gitlab).can_write(Actor(login="stranger")) is False
    assert adapter(fake_gitlab).can_write(Actor(login="x", id=99)) is False


def test_merge_request_draft_title_and_conflict(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.push_branch("planner/issue-12")
    forge = adapter(fake_gitlab)
    created = forge.upsert_pull_request(
        head="planner/issue-12", base="main", title="Widgets (#12)", body="Closes #12", draft=True
    )
    assert (
        created.draft and fake_gitlab.merge_requests[created.number].title == "Draft: Widgets (#12)"
    )
    fake_gitlab.fail("GET", r"/merge_requests$", 200, body=[])  # missed once: POST answers 409
    again = adapter(fake_gitlab).upsert_pull_request(
        head="planner/issue-12",
        base="main",
        title="Widgets (#12)",
        body="Closes #12\n",
        draft=False,
    )
    assert again.number == created.number and len(fake_gitlab.merge_requests) == 1
    assert fake_gitlab.merge_requests[created.number].title == "Widgets (#12)"
    assert [r.status for r in fake_gitlab.writes()] == [201, 409, 200]
    found = forge.get_pull_request(created.number)
    assert found is not None and found.head == "planner/issue-12" and found.same_repository
