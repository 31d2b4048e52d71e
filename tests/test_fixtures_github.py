"""The committed forge fixtures are sound, and the OpenAPI request checker works on them.

Only reads files under tests/fixtures/ (regenerate the GitHub ones with
scripts/extract_github_fixtures.py); nothing here reaches the network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scripts import extract_github_fixtures
from tests.support.openapi import OpenApiChecker

FIXTURES = Path(__file__).parent / "fixtures"
GITHUB = FIXTURES / "github"
GITLAB = FIXTURES / "gitlab"
WEBHOOKS = GITHUB / "webhooks"
SUBSET = GITHUB / "openapi-subset.json"

REPO = "/repos/octo-org/hello-world"

EXPECTED_OPERATIONS = set(extract_github_fixtures.OPERATIONS)
"""What scripts/extract_github_fixtures.py puts in the subset: the operations the adapter calls."""


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def checker() -> OpenApiChecker:
    return OpenApiChecker.load(SUBSET)


# ------------------------------------------------------------ GitHub webhook payloads


WEBHOOK_FILES = sorted(p.name for p in WEBHOOKS.glob("*.json"))


def test_expected_webhook_files_exist() -> None:
    expected = {
        "issues.labeled.json",
        "issues.opened.json",
        "issues.assigned.json",
        "issue_comment.created.json",
        "pull_request_review.submitted.json",
        "pull_request_review_comment.created.json",
    }
    assert expected <= set(WEBHOOK_FILES)


REVIEW_FILES = [name for name in WEBHOOK_FILES if name.startswith("pull_request_review")]


@pytest.mark.parametrize("name", [n for n in WEBHOOK_FILES if n not in REVIEW_FILES])
def test_webhook_has_trigger_fields(name: str) -> None:
    payload = load(WEBHOOKS / name)
    event, action = name.split(".")[:2]
    assert payload["action"] == action
    assert isinstance(payload["issue"]["number"], int)
    assert all(isinstance(label["name"], str) for label in payload["issue"]["labels"])
    assert payload["sender"]["type"] in {"User", "Bot", "Organization"}
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", payload["repository"]["full_name"])
    if event == "issue_comment":
        assert isinstance(payload["comment"]["body"], str)
        assert payload["comment"]["user"]["login"]


@pytest.mark.parametrize("name", REVIEW_FILES)
def test_review_webhooks_have_what_the_review_trigger_reads(name: str) -> None:
    payload = load(WEBHOOKS / name)
    event, action = name.split(".")[:2]
    assert payload["action"] == action
    pull = payload["pull_request"]
    assert isinstance(pull["number"], int) and isinstance(pull["head"]["ref"], str)
    assert payload["sender"]["type"] == "User" and payload["sender"]["login"]
    item = payload["review" if event == "pull_request_review" else "comment"]
    assert isinstance(item["id"], int) and "body" in item
    assert item.get("submitted_at") or item.get("created_at")


def test_labeled_names_the_added_label() -> None:
    payload = load(WEBHOOKS / "issues.labeled.json")
    name = payload["label"]["name"]
    assert isinstance(name, str) and name
    assert name in {label["name"] for label in payload["issue"]["labels"]}


def test_plain_issue_comment_is_not_on_a_pull_request() -> None:
    payload = load(WEBHOOKS / "issue_comment.created.json")
    assert not payload["issue"].get("pull_request")


def test_source_md_records_pinned_versions_and_missing_payloads() -> None:
    source = (GITHUB / "SOURCE.md").read_text(encoding="utf-8")
    assert re.search(r"`@octokit/webhooks-examples` \| \d+\.\d+\.\d+", source)
    version = re.search(r"`@octokit/openapi` \| (\d+\.\d+\.\d+)", source)
    assert version and version.group(1) in load(SUBSET)["info"]["description"]
    has_pr_comment = (WEBHOOKS / "issue_comment.created.pull_request.json").exists()
    assert has_pr_comment or "NOT FOUND" in source


# ------------------------------------------------------------------ OpenAPI subset


def refs_in(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return own.union(*(refs_in(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(refs_in(v) for v in node))
    return set()


def test_subset_has_exactly_the_operations_and_resolves() -> None:
    document = load(SUBSET)
    operations = {(m, p) for p, item in document["paths"].items() for m in item}
    assert operations == EXPECTED_OPERATIONS
    for ref in refs_in(document):
        _, _, kind, name = ref.split("/")
        assert name in document["components"][kind], ref
    assert SUBSET.stat().st_size < 300_000


# ------------------------------------------------------------ checker: valid calls


VALID_CALLS: list[tuple[str, str, dict[str, object], object]] = [
    ("GET", REPO, {}, None),
    ("GET", f"{REPO}/issues/7", {}, None),
    ("PATCH", f"{REPO}/issues/7", {}, {"labels": ["bug", "planner"], "state": "closed"}),
    ("PATCH", f"{REPO}/issues/7", {}, {"title": 42, "milestone": None}),
    ("GET", f"{REPO}/issues/7/comments", {"per_page": 100, "page": "2"}, None),
    ("POST", f"{REPO}/issues/7/comments", {}, {"body": "x"}),
    ("GET", f"{REPO}/issues/comments/99", {}, None),
    ("PATCH", f"{REPO}/issues/comments/99", {}, {"body": "updated"}),
    ("POST", f"{REPO}/issues/7/labels", {}, {"labels": ["planner"]}),
    ("POST", f"{REPO}/issues/7/labels", {}, {"labels": [{"name": "planner"}]}),
    ("DELETE", f"{REPO}/issues/7/labels/status%2Fplanning", {}, None),
    ("POST", f"{REPO}/issues/7/reactions", {}, {"content": "eyes"}),
    ("POST", f"{REPO}/labels", {}, {"name": "planner", "color": "6699cc"}),
    ("GET", f"{REPO}/labels/needs%20plan", {}, None),
    ("GET", f"{REPO}/collaborators/octocat/permission", {}, None),
    ("GET", f"{REPO}/pulls", {"state": "open", "head": "octo-org:planner/7"}, None),
    (
        "POST",
        f"{REPO}/pulls",
        {},
        {"title": "Plan", "head": "planner/7", "base": "main", "body": "b", "draft": True},
    ),
    ("GET", f"{REPO}/pulls/3", {}, None),
    ("PATCH", f"{REPO}/pulls/3", {}, {"title": "t", "body": "b", "state": "open"}),
    ("GET", f"{REPO}/actions/artifacts", {"name": "planner-history", "per_page": 1}, None),
    ("GET", f"{REPO}/actions/artifacts/123/zip", {}, None),
    ("GET", f"{REPO}/branches/main", {}, None),
    ("get", f"{REPO}/pulls?state=closed&per_page=5", {}, None),
    ("GET", f"https://api.github.com{REPO}/issues/7", {}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), VALID_CALLS)
def test_checker_accepts_valid_calls(
    checker: OpenApiChecker, method: str, path: str, query: dict[str, object], body: object
) -> None:
    assert checker.check(method, path, query, body) == []


def test_checker_accepts_the_ghes_prefix(checker: OpenApiChecker) -> None:
    checker.assert_valid("POST", f"/api/v3{REPO}/issues/7/comments", {}, {"body": "x"})
    url = f"https://ghe.example.com/api/v3{REPO}/pulls/3"
    checker.assert_valid("PATCH", url, {}, {"title": "t"})


def test_checker_matches_the_most_specific_template(checker: OpenApiChecker) -> None:
    found = checker.match(f"{REPO}/issues/comments/5")
    assert found is not None
    assert found.template.template == "/repos/{owner}/{repo}/issues/comments/{comment_id}"
    assert found.path_params == {"owner": "octo-org", "repo": "hello-world", "comment_id": "5"}


def test_checker_decodes_path_segments(checker: OpenApiChecker) -> None:
    found = checker.match(f"{REPO}/labels/status%2Fplanning")
    assert found is not None and found.path_params["name"] == "status/planning"


# -------------------------------------------------------------- checker: rejections


def problems(checker: OpenApiChecker, method: str, path: str, body: object = None) -> str:
    found = checker.check(method, path, {}, body)
    assert found, f"{method} {path} {body!r} should have been rejected"
    return "\n".join(found)


def test_rejects_unknown_path(checker: OpenApiChecker) -> None:
    assert "no templated path" in problems(checker, "GET", f"{REPO}/wiki")
    assert "no templated path" in problems(checker, "GET", "/repos/only-owner")


def test_rejects_wrong_method(checker: OpenApiChecker) -> None:
    assert "method DELETE is not defined" in problems(checker, "DELETE", f"{REPO}/pulls")
    assert "method PUT" in problems(checker, "PUT", f"{REPO}/issues/comments/1", {"body": "x"})


def test_rejects_missing_required_field(checker: OpenApiChecker) -> None:
    body = {"title": "t", "base": "main", "body": "b", "draft": True}
    assert "missing required property 'head'" in problems(checker, "POST", f"{REPO}/pulls", body)


def test_rejects_wrong_type(checker: OpenApiChecker) -> None:
    found = problems(checker, "POST", f"{REPO}/issues/1/comments", {"body": 5})
    assert "body.body: expected string, got integer" in found
    found = problems(checker, "POST", f"{REPO}/pulls", {"head": "h", "base": "b", "draft": "yes"})
    assert "body.draft: expected boolean, got string" in found


def test_rejects_nested_and_enum_problems(checker: OpenApiChecker) -> None:
    path = f"{REPO}/issues/1"
    assert "body.labels[0]" in problems(checker, "PATCH", path, {"labels": [5]})
    assert "not one of" in problems(checker, "PATCH", path, {"state": "merged"})
    reaction = {"content": "thumbsup"}
    assert "not one of" in problems(checker, "POST", f"{path}/reactions", reaction)
    assert "at least 1" in problems(checker, "POST", f"{path}/labels", {"labels": []})


def test_rejects_unknown_body_property(checker: OpenApiChecker) -> None:
    found = problems(checker, "PATCH", f"{REPO}/issues/1", {"lables": ["bug"]})
    assert "body.lables: unknown property" in found


def test_rest_cannot_toggle_draft_on_an_existing_pull(checker: OpenApiChecker) -> None:
    """PATCH pulls has no `draft` (GitHub changes it via GraphQL): the checker says so."""
    found = problems(checker, "PATCH", f"{REPO}/pulls/3", {"draft": False})
    assert "body.draft: unknown property" in found


def test_rejects_missing_or_unexpected_body(checker: OpenApiChecker) -> None:
    assert "requires a JSON body" in problems(checker, "POST", f"{REPO}/issues/1/comments")
    assert "takes no JSON body" in problems(checker, "GET", f"{REPO}/issues/1", {"body": "x"})


def test_rejects_bad_parameters(checker: OpenApiChecker) -> None:
    found = checker.check("GET", f"{REPO}/pulls", {"status": "open", "state": "merged"}, None)
    assert any("unknown query parameter 'status'" in p for p in found)
    assert any("'merged' is not one of" in p for p in found)
    assert "expected an integer" in problems(checker, "GET", f"{REPO}/issues/abc")
    assert "expected an integer" in problems(checker, "GET", f"{REPO}/issues/comments")
    assert "expected an integer" in problems(checker, "GET", f"{REPO}/pulls?per_page=all")


def test_assert_valid_raises_with_the_problems(checker: OpenApiChecker) -> None:
    with pytest.raises(AssertionError, match="missing required property 'head'"):
        checker.assert_valid("POST", f"{REPO}/pulls", {}, {"base": "main"})


# ---------------------------------------------------------------- GitLab payloads


def test_gitlab_issue_hook_has_label_changes() -> None:
    payload = load(GITLAB / "issue_hook.json")
    assert payload["object_kind"] == "issue"
    attributes = payload["object_attributes"]
    assert isinstance(attributes["iid"], int) and attributes["state"] == "opened"
    assert isinstance(attributes["title"], str) and isinstance(attributes["description"], str)
    changes = payload["changes"]["labels"]
    previous = {label["title"] for label in changes["previous"]}
    current = {label["title"] for label in changes["current"]}
    assert current - previous == {"planner"}
    assert payload["user"]["username"] and payload["project"]["path_with_namespace"]


@pytest.mark.parametrize(
    ("name", "noteable_type", "target"),
    [
        ("note_hook_issue.json", "Issue", "issue"),
        ("note_hook_mr.json", "MergeRequest", "merge_request"),
        ("note_hook_diff_note.json", "MergeRequest", "merge_request"),
    ],
)
def test_gitlab_note_hooks(name: str, noteable_type: str, target: str) -> None:
    payload = load(GITLAB / name)
    assert payload["object_kind"] == "note"
    attributes = payload["object_attributes"]
    assert attributes["noteable_type"] == noteable_type
    assert attributes["system"] is False and isinstance(attributes["note"], str)
    assert isinstance(payload[target]["iid"], int)


def test_gitlab_diff_note_has_a_position_on_the_merge_requests_diff() -> None:
    attributes = load(GITLAB / "note_hook_diff_note.json")["object_attributes"]
    assert attributes["type"] == "DiffNote" and attributes["discussion_id"]
    position = attributes["position"]
    assert position["position_type"] == "text" and position["new_path"]
    assert isinstance(position["new_line"], int)
    assert all(len(position[key]) == 40 for key in ("base_sha", "start_sha", "head_sha"))
    assert {"start", "end"} <= set(position["line_range"])
