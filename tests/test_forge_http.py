"""The forge HTTP client: retries, rate limits, error messages that name the fix, pagination."""

from __future__ import annotations

import pytest

from planner.ci.forges.github import GitHubForge
from planner.ci.forges.gitlab import GitLabForge
from planner.ci.forges.http import RetryPolicy
from planner.core.errors import ApiError
from tests.fake_forge import FakeGitHub, FakeGitLab

ISSUE_PATH = r"/issues/1$"


class Sleeps:
    """An injectable sleep that records instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def github(
    fake: FakeGitHub, sleeps: Sleeps, *, clock: float = 1_000.0, **retry: float
) -> GitHubForge:
    policy = RetryPolicy(
        max_retries=int(retry.get("max_retries", 5)),
        max_wait=retry.get("max_wait", 60.0),
        sleep=sleeps,
        clock=lambda: clock,
    )
    return GitHubForge(
        repository=fake.repository,
        token=fake.token,
        api_url=fake.api_url,
        server_url=fake.base_url,
        retry=policy,
    )


def gitlab(fake: FakeGitLab) -> GitLabForge:
    """The adapter on the fake's project (acme/widgets, id 42), with the default retries."""
    return GitLabForge(
        project_id=str(fake.project_id),
        repository=fake.repository,
        token=fake.token,
        api_url=fake.api_url,
        server_url=fake.base_url,
    )


@pytest.fixture
def issue(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_issue(1, "Title", "Body")
    return fake_github


def test_5xx_is_retried_with_growing_bounded_backoff(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    issue.fail("GET", ISSUE_PATH, 502, times=3)
    assert github(issue, sleeps).get_issue(1).title == "Title"
    assert sleeps.waits == [1.0, 2.0, 4.0]
    assert [r.status for r in issue.api_requests("GET")] == [502, 502, 502, 200]


def test_retries_stop_at_the_bound_with_a_message(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    issue.fail("GET", ISSUE_PATH, 503, times=10)
    with pytest.raises(ApiError) as caught:
        github(issue, sleeps, max_retries=2).get_issue(1)
    assert caught.value.status == 503 and caught.value.service == "GitHub"
    assert "gave up after 3 attempts" in str(caught.value)
    assert "/repos/Codertocat/Hello-World/issues/1" in str(caught.value)
    assert len(sleeps.waits) == 2 and len(issue.api_requests("GET")) == 3


def test_429_waits_for_retry_after(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    issue.fail("GET", ISSUE_PATH, 429, headers={"retry-after": "7"})
    github(issue, sleeps).get_issue(1)
    assert sleeps.waits == [7.0]


def test_secondary_rate_limit_403_with_retry_after_is_retried(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    body = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}
    issue.fail("GET", ISSUE_PATH, 403, headers={"retry-after": "3"}, body=body)
    github(issue, sleeps).get_issue(1)
    assert sleeps.waits == [3.0]


def test_secondary_rate_limit_message_without_headers_backs_off(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    body = {"message": "You have exceeded a secondary rate limit."}
    issue.fail("GET", ISSUE_PATH, 403, body=body, times=2)
    github(issue, sleeps).get_issue(1)
    assert sleeps.waits == [1.0, 2.0]


def test_primary_rate_limit_waits_until_the_reset(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}
    issue.fail("GET", ISSUE_PATH, 403, headers=headers, body={"message": "API rate limit exceeded"})
    github(issue, sleeps, clock=1_000.0).get_issue(1)
    assert sleeps.waits == [31.0]


def test_a_reset_beyond_the_bound_is_an_error_not_a_long_sleep(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4600"}
    issue.fail("GET", ISSUE_PATH, 403, headers=headers, body={"message": "API rate limit exceeded"})
    with pytest.raises(ApiError) as caught:
        github(issue, sleeps, clock=1_000.0, max_wait=60.0).get_issue(1)
    assert sleeps.waits == []
    assert "api_max_wait_seconds" in str(caught.value) and caught.value.retry_after == 3601.0


def test_other_4xx_is_not_retried_and_names_the_fix(issue: FakeGitHub) -> None:
    sleeps = Sleeps()
    issue.fail(
        "POST",
        r"/issues/1/comments$",
        403,
        body={"message": "Resource not accessible by integration"},
    )
    with pytest.raises(ApiError) as caught:
        github(issue, sleeps).post_comment(1, "hello")
    message = str(caught.value)
    assert "Resource not accessible by integration" in message
    assert "issues: write" in message and "pull-requests: write" in message
    assert sleeps.waits == [] and caught.value.status == 403


def test_bad_token_says_so(issue: FakeGitHub) -> None:
    forge = GitHubForge(
        repository=issue.repository, token="ghp_wrongwrongwrongwrongwrong12", api_url=issue.api_url
    )
    with pytest.raises(ApiError, match="invalid or expired"):
        forge.get_issue(1)


def test_creating_a_pr_forbidden_for_actions_names_the_repository_setting(
    fake_github: FakeGitHub,
) -> None:
    fake_github.actions_may_create_prs = False
    forge = github(fake_github, Sleeps())
    with pytest.raises(ApiError) as caught:
        forge.upsert_pull_request(
            head="planner/issue-1", base="main", title="t", body="b", draft=True
        )
    message = str(caught.value)
    assert "not permitted to create or approve pull requests" in message
    assert "Allow GitHub Actions to create and approve pull requests" in message
    assert "personal access token" in message


def test_connection_errors_are_retried_then_reported() -> None:
    sleeps = Sleeps()
    forge = GitHubForge(
        repository="o/r",
        token="ghs_" + "x" * 36,
        api_url="http://127.0.0.1:9",  # discard port: nothing listens
        retry=RetryPolicy(max_retries=2, sleep=sleeps),
    )
    with pytest.raises(ApiError, match="could not be reached"):
        forge.get_issue(1)
    assert sleeps.waits == [1.0, 2.0]


def test_github_pagination_follows_link_headers(issue: FakeGitHub) -> None:
    for index in range(5):
        issue.add_comment(1, f"comment {index}")
    comments = github(issue, Sleeps()).list_comments(1)
    assert [c.body for c in comments] == [f"comment {i}" for i in range(5)]
    pages = [r.query.get("page", "1") for r in issue.api_requests("GET")]
    assert pages == ["1", "2", "3"]


def test_a_next_link_to_another_host_is_refused(issue: FakeGitHub) -> None:
    issue.add_comment(1, "one")
    issue.fail(
        "GET",
        r"/issues/1/comments$",
        200,
        headers={"Link": '<https://evil.example/steal?page=2>; rel="next"'},
        body=[issue.comment_json(issue.comments_on(1)[0])],
    )
    with pytest.raises(ApiError, match="refusing a next-page link"):
        github(issue, Sleeps()).list_comments(1)


def test_gitlab_pagination_follows_x_next_page(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets")
    for index in range(5):
        fake_gitlab.add_note(12, f"note {index}")
    fake_gitlab.add_note(12, "added ~bug label", system=True)
    forge = gitlab(fake_gitlab)
    assert [c.body for c in forge.list_comments(12)] == [f"note {i}" for i in range(5)]
    pages = [r.query.get("page", "1") for r in fake_gitlab.api_requests("GET") if "notes" in r.path]
    assert pages == ["1", "2", "3"]


def test_gitlab_403_names_the_token_kind(fake_gitlab: FakeGitLab) -> None:
    fake_gitlab.add_issue(12, "Widgets")
    fake_gitlab.fail("POST", r"/notes$", 403, body={"message": "403 Forbidden"})
    forge = gitlab(fake_gitlab)
    with pytest.raises(ApiError) as caught:
        forge.post_comment(12, "hi")
    assert "project access token with `api` scope" in str(caught.value)
    assert "CI_JOB_TOKEN" in str(caught.value)


def test_an_api_redirect_to_another_host_carries_no_token(
    fake_github: FakeGitHub, fake_gitlab: FakeGitLab
) -> None:
    for fake in (fake_github, fake_gitlab):
        blob = fake.publish_blob(b'{"default_branch": "main"}')
        elsewhere = {"Location": blob.replace("127.0.0.1", "localhost", 1)}
        fake.fail("GET", r"/(repos|projects)/[^/]+(/[^/]+)?$", 302, headers=elsewhere)
    gitlab_forge = gitlab(fake_gitlab)
    assert github(fake_github, Sleeps()).default_branch() == gitlab_forge.default_branch() == "main"
    for fake in (fake_github, fake_gitlab):
        [blob] = fake.blob_requests()
        assert blob.status == 200 and blob.authorization == []
