"""The GitHub adapter against the fake GitHub (every request checked against the OpenAPI subset)."""

from __future__ import annotations

import pytest

from planner.ci.forges.base import TRACKING_MARKER, Actor
from planner.ci.forges.github import GitHubForge
from planner.config import ForgeConfig
from planner.core.errors import ConfigError
from tests.fake_forge import FakeGitHub

STATUS = ("planner:working", "planner:needs-input", "planner:done")


def adapter(fake: FakeGitHub) -> GitHubForge:
    env = {
        "GITHUB_REPOSITORY": fake.repository,
        "GITHUB_TOKEN": fake.token,
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": fake.base_url,
        "GITHUB_RUN_ID": "991",
    }
    return GitHubForge.from_env(env, ForgeConfig())


def test_from_env_reads_the_runner_variables(fake_github: FakeGitHub) -> None:
    forge = adapter(fake_github)
    assert forge.run_url() == f"{fake_github.base_url}/Codertocat/Hello-World/actions/runs/991"
    assert forge.branch_url("planner/issue-1") == (
        f"{fake_github.base_url}/Codertocat/Hello-World/tree/planner/issue-1"
    )
    assert forge.git_remote().url == f"{fake_github.base_url}/Codertocat/Hello-World.git"
    assert fake_github.token not in repr(forge.git_remote())


def test_ghes_api_url_is_derived_from_the_server_url(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "On GHES")
    env = {
        "GITHUB_REPOSITORY": fake_github.repository,
        "GITHUB_TOKEN": fake_github.token,
        "GITHUB_SERVER_URL": fake_github.base_url,
    }
    assert GitHubForge.from_env(env, ForgeConfig()).get_issue(1).title == "On GHES"
    assert fake_github.api_requests()[0].path.startswith("/api/v3/repos/")


def test_from_env_names_what_is_missing() -> None:
    with pytest.raises(ConfigError, match="GITHUB_TOKEN"):
        GitHubForge.from_env({"GITHUB_REPOSITORY": "o/r"}, ForgeConfig())
    with pytest.raises(ConfigError, match="GITHUB_REPOSITORY"):
        GitHubForge.from_env({"GITHUB_TOKEN": "x"}, ForgeConfig())


def test_get_issue(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(3, "Bug", "It breaks", labels=["bug"], state="closed", locked=True)
    issue = adapter(fake_github).get_issue(3)
    assert (issue.number, issue.title, issue.body, issue.labels) == (3, "Bug", "It breaks", ["bug"])
    assert issue.state == "closed" and issue.locked and not issue.is_pull_request
    assert issue.url.endswith("/Codertocat/Hello-World/issues/3")


def test_tracking_comment_is_created_once_then_edited(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    fake_github.add_comment(1, "first human comment")
    first = adapter(fake_github).upsert_tracking_comment(1, "working")
    second = adapter(fake_github).upsert_tracking_comment(1, "done")  # a later run, new adapter
    comments = fake_github.comments_on(1)
    assert len(comments) == 2 and first.id == second.id == str(comments[1].id)
    assert comments[1].body == f"{TRACKING_MARKER}\ndone"
    assert comments[1].user == "github-actions[bot]"
    assert [r.method for r in fake_github.writes()] == ["POST", "PATCH"]


def test_a_deleted_tracking_comment_is_posted_again(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    forge = adapter(fake_github)
    first = forge.upsert_tracking_comment(1, "working")
    del fake_github.comments[int(first.id)]  # someone deleted it while the pass ran
    second = forge.upsert_tracking_comment(1, "done")
    assert second.id != first.id
    assert [c.body for c in fake_github.comments_on(1)] == [f"{TRACKING_MARKER}\ndone"]


def test_unchanged_tracking_body_is_not_rewritten(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    forge = adapter(fake_github)
    forge.upsert_tracking_comment(1, "same")
    forge.upsert_tracking_comment(1, "same")
    assert [r.method for r in fake_github.writes()] == ["POST"]


def test_a_marker_planted_by_an_outsider_is_not_adopted(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    planted = fake_github.add_comment(
        1, f"{TRACKING_MARKER}\nfake status", user="mallory", association="NONE"
    )
    written = adapter(fake_github).upsert_tracking_comment(1, "real status")
    assert written.id != str(planted.id)
    assert fake_github.comments[planted.id].body.endswith("fake status")


@pytest.mark.parametrize(
    ("user", "kind", "association"),
    [
        ("octo-member", "User", "MEMBER"),  # an org member without write access
        ("octo-collaborator", "User", "COLLABORATOR"),
        ("renovate[bot]", "Bot", "NONE"),  # another bot
        ("Codertocat", "User", "OWNER"),
    ],
)
def test_only_planners_own_comment_is_the_tracking_comment(
    fake_github: FakeGitHub, user: str, kind: str, association: str
) -> None:
    fake_github.add_issue(1, "Issue")
    planted = fake_github.add_comment(
        1, f"{TRACKING_MARKER}\nfake status", user=user, user_type=kind, association=association
    )
    forge = adapter(fake_github)
    assert forge.find_tracking_comment(1) is None
    assert not any(c.trusted for c in forge.list_comments(1))
    written = forge.upsert_tracking_comment(1, "real status")
    assert written.id != str(planted.id) and written.trusted
    assert fake_github.comments[planted.id].body.endswith("fake status")


@pytest.mark.parametrize(
    ("login", "kind"), [("planner-app[bot]", "Bot"), ("octo-maintainer", "User")]
)
def test_bot_login_names_the_account_of_an_app_or_personal_token(
    fake_github: FakeGitHub, login: str, kind: str
) -> None:
    fake_github.add_issue(1, "Issue")
    fake_github.token_user = (login, kind)
    config = ForgeConfig(bot_login=login)
    env = {
        "GITHUB_REPOSITORY": fake_github.repository,
        "GITHUB_TOKEN": fake_github.token,
        "GITHUB_API_URL": fake_github.api_url,
    }
    first = GitHubForge.from_env(env, config).upsert_tracking_comment(1, "working")
    second = GitHubForge.from_env(env, config).upsert_tracking_comment(1, "done")
    assert first.id == second.id and len(fake_github.comments_on(1)) == 1
    assert adapter(fake_github).find_tracking_comment(1) is None  # not github-actions[bot]'s
    impostor = "planner-app" if kind == "Bot" else "octo-maintainer[bot]"
    fake_github.comments[int(first.id)].user = impostor
    assert GitHubForge.from_env(env, config).find_tracking_comment(1) is None


def test_bodies_are_redacted(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    body = (
        f"token {fake_github.token} and ghp_{'a' * 36} and github_pat_{'B' * 40} "
        f"and sk-proj-{'c' * 30} and Authorization: Bearer {'d' * 30}"
    )
    adapter(fake_github).post_comment(1, body)
    written = fake_github.comments_on(1)[0].body
    assert fake_github.token not in written and "ghp_" not in written
    assert "github_pat_" not in written and "sk-proj" not in written and "d" * 30 not in written
    assert written.count("[redacted]") == 5


def test_status_labels_replace_each_other(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue", labels=["bug", "planner"])
    forge = adapter(fake_github)
    labels = forge.set_status_label(1, "planner:working", STATUS, ["bug", "planner"])
    assert labels == ["bug", "planner", "planner:working"]
    labels = forge.set_status_label(1, "planner:done", STATUS, labels)
    assert fake_github.issues[1].labels == ["bug", "planner", "planner:done"] == labels
    deletes = [r.path for r in fake_github.writes() if r.method == "DELETE"]
    assert deletes == ["/api/v3/repos/Codertocat/Hello-World/issues/1/labels/planner%3Aworking"]


def test_removing_a_label_someone_already_removed_is_fine(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue", labels=[])
    labels = adapter(fake_github).set_status_label(1, None, STATUS, ["planner:working"])
    assert labels == []


@pytest.mark.parametrize(
    ("permission", "allowed"), [("admin", True), ("write", True), ("read", False), ("none", False)]
)
def test_write_access(fake_github: FakeGitHub, permission: str, allowed: bool) -> None:
    fake_github.permissions["octo"] = permission
    assert adapter(fake_github).can_write(Actor(login="octo")) is allowed


def test_unknown_user_has_no_access(fake_github: FakeGitHub) -> None:
    assert adapter(fake_github).can_write(Actor(login="nobody")) is False


def test_pull_request_is_created_as_draft_then_updated(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(1, "Issue")
    fake_github.push_branch("planner/issue-1")
    forge = adapter(fake_github)
    created = forge.upsert_pull_request(
        head="planner/issue-1", base="main", title="T", body="Closes #1", draft=True
    )
    updated = adapter(fake_github).upsert_pull_request(
        head="planner/issue-1", base="main", title="T2", body="Closes #1\nmore", draft=False
    )
    assert created.number == updated.number and created.draft
    pull = fake_github.pulls[created.number]
    assert (pull.title, pull.body, pull.head, pull.base) == (
        "T2",
        "Closes #1\nmore",
        "planner/issue-1",
        "main",
    )
    listing = [r for r in fake_github.api_requests("GET") if r.path.endswith("/pulls")]
    assert listing[0].query == {"head": "Codertocat:planner/issue-1", "state": "open"}


def test_an_existing_pull_request_found_late_is_updated(fake_github: FakeGitHub) -> None:
    fake_github.push_branch("planner/issue-1")
    forge = adapter(fake_github)
    first = forge.upsert_pull_request(
        head="planner/issue-1", base="main", title="T", body="B", draft=False
    )
    fake_github.fail("GET", r"/pulls$", 200, body=[])  # the listing misses it once (a race)
    again = adapter(fake_github).upsert_pull_request(
        head="planner/issue-1", base="main", title="T", body="B2", draft=False
    )
    assert again.number == first.number and len(fake_github.pulls) == 1
    assert fake_github.pulls[first.number].body == "B2"


def test_draft_falls_back_when_the_repository_has_no_drafts(fake_github: FakeGitHub) -> None:
    fake_github.drafts_supported = False
    fake_github.push_branch("planner/issue-1")
    pull = adapter(fake_github).upsert_pull_request(
        head="planner/issue-1", base="main", title="T", body="B", draft=True
    )
    assert not pull.draft and not fake_github.pulls[pull.number].draft


def test_other_validation_errors_are_reported(fake_github: FakeGitHub) -> None:
    with pytest.raises(Exception, match="does not exist"):
        adapter(fake_github).upsert_pull_request(
            head="planner/issue-9", base="main", title="T", body="B", draft=False
        )


def test_never_a_pull_request_from_the_default_branch(fake_github: FakeGitHub) -> None:
    with pytest.raises(ValueError, match="onto itself"):
        adapter(fake_github).upsert_pull_request(
            head="main", base="main", title="T", body="B", draft=False
        )
    assert fake_github.writes() == []


def test_get_pull_request(fake_github: FakeGitHub) -> None:
    fake_github.push_branch("planner/issue-1")
    forge = adapter(fake_github)
    made = forge.upsert_pull_request(
        head="planner/issue-1", base="main", title="T", body="B", draft=False
    )
    found = forge.get_pull_request(made.number)
    assert found is not None and found.head == "planner/issue-1" and found.same_repository
    assert forge.get_pull_request(999) is None
    assert forge.get_issue(made.number).is_pull_request


def test_the_fake_really_checks_requests_against_the_openapi_document(
    fake_github: FakeGitHub,
) -> None:
    import requests

    fake_github.add_issue(1, "Issue")
    headers = {"Authorization": f"Bearer {fake_github.token}"}
    url = f"{fake_github.api_url}/repos/{fake_github.repository}/issues/1/labels"
    requests.post(url, json={"labels": []}, headers=headers, timeout=10)
    requests.post(
        url.replace("/labels", "/comments"), json={"text": "x"}, headers=headers, timeout=10
    )
    problems = list(fake_github.openapi_problems)
    fake_github.openapi_problems.clear()  # expected here; the fixture fails on any other
    assert any("at least 1 item" in p for p in problems)
    assert any("missing required property 'body'" in p for p in problems)
