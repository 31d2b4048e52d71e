"""`python entrypoint.py` in the environment a GitHub runner gives the Docker action.

Each run is a subprocess with exactly the runner's variables (tests/support/ci_job.py), a fresh
clone whose origin is the fake GitHub's bare repository, and the scripted model behind the
openai_base_url input. Between runs the history directory is carried the way the workflow's
cache steps (or the action's artifact download) carry it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.memory.history import task_uuid
from tests.fake_forge import FakeGitHub
from tests.fake_forge.scenario import (
    branch_log,
    clone,
    comment_event,
    file_on,
    github_payload,
    one_file_plan,
)
from tests.support.ci_job import (
    ENTRYPOINT,
    HISTORY_DIR,
    SCRIPTED_API_KEY,
    Finished,
    GitHubWorkflow,
    github_action_env,
    read_outputs,
    zip_directory,
)

TITLE = "Add a changelog"
API_KEY = SCRIPTED_API_KEY
OWNER_UID, OWNER_GID = 4242, 4343
STEPS = one_file_plan("CHANGELOG.md", "# Changelog\n", TITLE)
SMALL_MODEL_STEPS = STEPS[2:]
"""The same pass under profile small_model: the issue is the one task (no planning call, no
plan review)."""


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_issue(1, TITLE, "Keep a CHANGELOG.md at the root.", labels=["planner"])
    fake_github.permissions["Codertocat"] = "write"
    return fake_github


@pytest.fixture
def runner(fake: FakeGitHub, tmp_path: Path) -> GitHubWorkflow:
    return GitHubWorkflow(fake, tmp_path)


def labeled(fake: FakeGitHub, label: str = "planner") -> dict[str, Any]:
    """The real issues.labeled payload, adjusted to our label, repository and issue."""
    payload = github_payload("issues.labeled")
    payload["label"]["name"] = label
    payload["issue"]["number"] = 1
    payload["repository"]["full_name"] = fake.repository
    return payload


def commented(fake: FakeGitHub, body: str) -> dict[str, Any]:
    made = fake.comment_json(fake.add_comment(1, body))
    payload = comment_event(body, made, 1)
    payload["repository"]["full_name"] = fake.repository
    return payload


def tracking(fake: FakeGitHub) -> list[Any]:
    return [c for c in fake.comments_on(1) if TRACKING_MARKER in c.body]


def history_name(fake: FakeGitHub) -> str:
    return f"{HISTORY_DIR}/{task_uuid(fake.repository, '1')}.jsonl"


def hand_to_runner_user(workspace: Path) -> None:
    """The runner's checkout belongs to the runner's user, not to the container's root."""
    for path in [workspace, *workspace.rglob("*")]:
        os.lchown(path, OWNER_UID, OWNER_GID)


def root_owned(workspace: Path) -> list[Path]:
    return [p for p in [workspace, *workspace.rglob("*")] if p.lstat().st_uid == 0]


# -- a label, then a comment after a cache save and restore ------------------------------------


def test_label_then_comment_after_a_cache_round_trip_continues_the_plan(
    runner: GitHubWorkflow, fake: FakeGitHub, tmp_path: Path
) -> None:
    as_root = os.geteuid() == 0
    first_workspace = clone(fake.bare, tmp_path / "workspace-first")
    if as_root:
        hand_to_runner_user(first_workspace)
    first, workspace, files = runner.job(
        "issues", labeled(fake), STEPS[:4], workspace=first_workspace, max_model_calls="4"
    )

    assert first.returncode == 0, first.stdout
    assert_masks_come_first(first, [fake.token, API_KEY])
    [comment] = tracking(fake)
    assert "⏸️ Paused" in comment.body and "- [x] **task_1**" in comment.body
    assert branch_log(fake.bare, "planner/issue-1") == [f"planner: {TITLE} (#1)"]
    assert file_on(fake.bare, "planner/issue-1", "CHANGELOG.md") == "# Changelog"
    [pull] = fake.pulls.values()
    assert pull.draft and pull.head == "planner/issue-1"
    outputs = read_outputs(files / "set_output")
    assert outputs["status"] == "in_progress" and outputs["branch"] == "planner/issue-1"
    assert outputs["pr_url"] == f"{fake.base_url}/{fake.repository}/pull/{pull.number}"
    assert outputs["comment_url"].endswith(f"#issuecomment-{comment.id}")
    assert int(outputs["tokens_used"]) > 0
    assert outputs["history_path"] == history_name(fake)
    assert (workspace / outputs["history_path"]).is_file()
    summary = (files / "step_summary").read_text(encoding="utf-8")
    assert "### planner: ⏸️ in progress" in summary and "issue #1" in summary
    assert "- [x] **task_1**: Write CHANGELOG.md" in summary
    assert "4 model call(s)" in summary and outputs["pr_url"] in summary
    assert f"`{history_name(fake)}` (cache)" in summary
    assert "::group::planner: issues.labeled by @Codertocat on #1 (run)" in first.lines
    assert "::endgroup::" in first.lines
    gitconfig = (files / "home" / ".gitconfig").read_text(encoding="utf-8")
    assert f"directory = {workspace}" in gitconfig
    if as_root:
        assert root_owned(workspace) == []

    cache = tmp_path / "actions-cache"
    shutil.copytree(workspace / HISTORY_DIR, cache)  # actions/cache/save
    fresh = clone(fake.bare, tmp_path / "workspace-fresh")
    shutil.copytree(cache, fresh / HISTORY_DIR)  # actions/cache/restore on another runner
    second, _, files = runner.job(
        "issue_comment", commented(fake, "/planner"), STEPS[4:], workspace=fresh
    )

    assert second.returncode == 0, second.stdout
    assert runner.kinds == ["replan_reflection", "completion"]  # the plan continued: no planning
    [again] = tracking(fake)
    assert again.id == comment.id and "✅ Done" in again.body
    assert list(fake.pulls) == [pull.number]
    outputs = read_outputs(files / "set_output")
    assert outputs["status"] == "completed" and outputs["pr_url"].endswith(f"/{pull.number}")
    assert outputs["comment_url"].endswith(f"#issuecomment-{comment.id}")
    assert "history restored by the cache step: 1 file(s)" in second.stdout
    assert "mark the draft pull request ready" in again.body
    assert fake.issues[1].labels == ["planner", "planner:done"]


def assert_masks_come_first(finished: Finished, secrets: list[str]) -> None:
    """Every secret is masked before the first other line, and never printed otherwise."""
    lines = finished.lines
    masks = [line for line in lines[: len(secrets)] if line.startswith("::add-mask::")]
    assert sorted(masks) == sorted(f"::add-mask::{secret}" for secret in secrets)
    for line in lines[len(secrets) :]:
        assert not any(secret in line for secret in secrets), line


# -- the artifact backend ------------------------------------------------------------------------


def test_artifact_backend_skips_expired_and_gone_artifacts_and_follows_the_redirect(
    runner: GitHubWorkflow, fake: FakeGitHub, tmp_path: Path
) -> None:
    first, workspace, _ = runner.job(
        "issues", labeled(fake), STEPS[:4], history_backend="artifact", max_model_calls="4"
    )
    assert first.returncode == 0, first.stdout
    no_history = [line for line in first.lines if "no history" in line]
    assert no_history == [
        "planner: no history: first run or expired artifact (no usable planner-history-1)"
    ]

    uploaded = zip_directory(workspace / HISTORY_DIR)  # actions/upload-artifact
    good = fake.add_artifact("planner-history-1", uploaded, "2026-01-01T00:00:00Z")
    fake.add_artifact("planner-history-1", b"stale", "2026-01-03T00:00:00Z", expired=True)
    gone = fake.add_artifact("planner-history-1", b"gone", "2026-01-02T00:00:00Z", gone=True)
    fake.add_artifact("planner-history-2", b"another issue", "2026-01-04T00:00:00Z")
    listed_before = len(fake.log)

    second, fresh, files = runner.job(
        "issue_comment",
        commented(fake, "/planner"),
        STEPS[4:],
        history_backend="artifact",
    )

    assert second.returncode == 0, second.stdout
    assert runner.kinds == ["replan_reflection", "completion"]
    downloads = [r.path for r in fake.api_requests("GET") if r.path.endswith("/zip")]
    assert [path.split("/")[-2] for path in downloads[-2:]] == [str(gone.id), str(good.id)]
    [blob] = fake.blob_requests()[-1:]
    assert blob.status == 200 and blob.authorization == []  # the token stays with the API
    assert all(r.authorization for r in fake.log[listed_before:] if r not in [blob])
    assert (fresh / history_name(fake)).is_file()
    outputs = read_outputs(files / "set_output")
    assert outputs["status"] == "completed"
    assert "(artifact)" in (files / "step_summary").read_text(encoding="utf-8")


def test_a_pull_request_comment_works_on_the_issue_and_outputs_its_number(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    """On a PR comment the event's number is the PR's: history and outputs use the issue's."""
    first, workspace, files = runner.job(
        "issues", labeled(fake), STEPS[:4], history_backend="artifact", max_model_calls="4"
    )
    assert first.returncode == 0, first.stdout
    assert read_outputs(files / "set_output")["issue_number"] == "1"
    [pull] = fake.pulls.values()
    assert pull.number != 1
    # the workflow's upload step, named after the output
    good = fake.add_artifact(
        "planner-history-1", zip_directory(workspace / HISTORY_DIR), "2026-01-01T00:00:00Z"
    )
    made = fake.comment_json(fake.add_comment(pull.number, "/planner"))
    payload = comment_event("/planner", made, pull.number)
    payload["issue"]["pull_request"] = {"url": f"{fake.api_url}/pulls/{pull.number}"}
    payload["repository"]["full_name"] = fake.repository

    second, fresh, files = runner.job(
        "issue_comment", payload, STEPS[4:], history_backend="artifact"
    )

    assert second.returncode == 0, second.stdout
    assert runner.kinds == ["replan_reflection", "completion"]  # the issue's plan continued
    outputs = read_outputs(files / "set_output")
    assert outputs["status"] == "completed" and outputs["issue_number"] == "1"
    assert outputs["history_path"] == history_name(fake)
    listed = [
        r.query.get("name") for r in fake.api_requests("GET") if r.path.endswith("/artifacts")
    ]
    assert listed == ["planner-history-1", "planner-history-1"]
    downloads = [r.path for r in fake.api_requests("GET") if r.path.endswith("/zip")]
    assert [path.split("/")[-2] for path in downloads] == [str(good.id)]
    assert (fresh / history_name(fake)).is_file()


def test_a_small_model_named_by_its_size_gets_the_small_model_profile(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    """Only the endpoint and the model are set: the model's name says 7B, so the requests are
    sampled at temperature 0, bounded and streamed, and the summary names the profile."""
    finished, _, files = runner.job(
        "issues", labeled(fake), SMALL_MODEL_STEPS, model="qwen2.5-coder:7b"
    )

    assert finished.returncode == 0, finished.stdout
    assert read_outputs(files / "set_output")["status"] == "completed"
    assert all(body["model"] == "qwen2.5-coder:7b" for body in runner.bodies)
    assert {(b["temperature"], b["max_tokens"], b["stream"]) for b in runner.bodies} == {
        (0, 2048, True)
    }
    summary = (files / "step_summary").read_text(encoding="utf-8")
    assert "tokens (qwen2.5-coder:7b, profile small_model) |" in summary
    assert "| Profile | small_model set `llm.tool_calling auto`, `llm.temperature 0.0`" in summary
    assert "`planning.decompose false`" in summary


def test_with_only_the_endpoint_set_the_model_it_serves_is_used(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    """No model input, no OPENAI_MODEL, no config file: the endpoint lists one model, and its
    name (and size) decide the requests."""
    finished, _, files = runner.job(
        "issues", labeled(fake), SMALL_MODEL_STEPS, model="", served="qwen2.5-coder-1.5b-instruct"
    )

    assert finished.returncode == 0, finished.stdout
    assert {body["model"] for body in runner.bodies} == {"qwen2.5-coder-1.5b-instruct"}
    assert all(body["temperature"] == 0 for body in runner.bodies)
    summary = (files / "step_summary").read_text(encoding="utf-8")
    assert "(qwen2.5-coder-1.5b-instruct, profile small_model) |" in summary


def test_an_empty_api_key_input_runs_against_an_endpoint_that_needs_none(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    """action.yml: openai_api_key "may be empty for an endpoint that needs no key". With the
    endpoint set (openai_base_url) and the input empty, the pass runs; the requests carry only
    the placeholder every keyless server ignores."""
    finished, _, files = runner.job("issues", labeled(fake), STEPS, openai_api_key="")

    assert finished.returncode == 0, finished.stdout
    assert read_outputs(files / "set_output")["status"] == "completed"
    assert file_on(fake.bare, "planner/issue-1", "CHANGELOG.md") == "# Changelog"
    assert {headers.get("authorization") for headers in runner.headers} == {"Bearer no-key"}


def test_a_hosted_model_keeps_the_standard_defaults(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    finished, _, files = runner.job("issues", labeled(fake), STEPS, model="gpt-4.1")

    assert finished.returncode == 0, finished.stdout
    assert all("temperature" not in body and "max_tokens" not in body for body in runner.bodies)
    summary = (files / "step_summary").read_text(encoding="utf-8")
    assert "tokens (gpt-4.1, profile standard) |" in summary


def test_a_skipped_event_leaves_the_issue_number_empty(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    finished, _, files = runner.job("issues", labeled(fake, "bug"), [])
    assert finished.returncode == 0
    outputs = read_outputs(files / "set_output")
    assert outputs["status"] == "skipped" and outputs["issue_number"] == ""


# -- paths that must not write -----------------------------------------------------------------


def test_an_event_for_another_label_exits_at_once_with_one_line(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    finished, _, files = runner.job("issues", labeled(fake, "bug"), [], history_backend="artifact")

    assert finished.returncode == 0
    assert finished.log_lines() == ["planner: skipped: label 'bug' is not 'planner'"]
    assert fake.log == []  # no request at all: neither the forge nor the artifact backend
    assert read_outputs(files / "set_output")["status"] == "skipped"


def test_a_sender_without_write_access_is_skipped_before_the_history_is_touched(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    payload = labeled(fake)
    payload["sender"]["login"] = "stranger"
    finished, _, files = runner.job("issues", payload, [], history_backend="artifact")

    assert finished.returncode == 0
    assert "does not have write access" in finished.stdout
    assert fake.writes() == []
    assert not any("/actions/artifacts" in r.path for r in fake.log)
    assert read_outputs(files / "set_output")["status"] == "skipped"


@pytest.mark.parametrize(
    ("inputs", "config", "message"),
    [
        ({"max_minutes": "soon"}, "", "input max_minutes = 'soon'"),
        ({"history_backend": "s3"}, "", "input history_backend = 's3'"),
        ({}, "budget:\n  max_actoins: 3\n", "budget.max_actoins"),
        ({"config_path": "ci/planner.yml"}, "", "ci/planner.yml does not exist"),
        ({"openai_api_key": "", "openai_base_url": ""}, "", "no model API key"),
    ],
)
def test_a_configuration_error_exits_2_before_any_request(
    runner: GitHubWorkflow,
    fake: FakeGitHub,
    tmp_path: Path,
    inputs: dict[str, str],
    config: str,
    message: str,
) -> None:
    workspace = clone(fake.bare, tmp_path / "workspace-config")
    if config:
        (workspace / ".github").mkdir()
        (workspace / ".github" / "planner.yml").write_text(config, encoding="utf-8")
    finished, _, files = runner.job("issues", labeled(fake), [], workspace=workspace, **inputs)

    assert finished.returncode == 2
    [error] = [line for line in finished.lines if line.startswith("::error")]
    assert message in error
    assert fake.log == []
    assert read_outputs(files / "set_output")["status"] == "failed"


def test_a_failure_after_the_comment_exits_1_and_is_on_the_issue(
    runner: GitHubWorkflow, fake: FakeGitHub
) -> None:
    fake.fail("POST", r"/pulls$", 422, body={"message": "Validation Failed"}, times=10)
    finished, _, files = runner.job("issues", labeled(fake), STEPS)

    assert finished.returncode == 1
    [comment] = tracking(fake)
    assert "❌ Failed" in comment.body
    assert read_outputs(files / "set_output")["status"] == "failed"
    assert "### planner: ❌ failed" in (files / "step_summary").read_text(encoding="utf-8")
    assert any(line.startswith("::error") for line in finished.lines)


def test_outputs_survive_values_that_look_like_delimiters(tmp_path: Path) -> None:
    from planner.ci.report.outputs import write_github_outputs

    target = tmp_path / "set_output"
    tricky = "line one\nghadelimiter_x\nEOF\n=still value"
    write_github_outputs(target, {"status": "completed", "pr_url": tricky})
    write_github_outputs(target, {"branch": "planner/issue-1"})
    assert read_outputs(target) == {
        "status": "completed",
        "pr_url": tricky,
        "branch": "planner/issue-1",
    }


def test_the_event_file_is_the_real_payload_shape(fake: FakeGitHub, tmp_path: Path) -> None:
    env = github_action_env(
        fake=fake,
        workspace=tmp_path,
        files=tmp_path / "files",
        event_name="issues",
        payload=labeled(fake),
        run_id=1,
    )
    event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    assert event["action"] == "labeled" and event["sender"]["type"] == "User"
    assert env["INPUT_GITHUB_TOKEN"] == fake.token and env["INPUT_CONFIG_PATH"]
    assert env["INPUT_HISTORY_BACKEND"] == "cache" and env["INPUT_MAX_ACTIONS"] == ""


def test_the_skip_path_loads_no_model_client_mcp_or_forge_code(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    env = github_action_env(
        fake=fake,
        workspace=tmp_path,
        files=tmp_path / "files",
        event_name="issues",
        payload=labeled(fake, "bug"),
        run_id=1,
    )
    heavy = ["openai", "mcp", "requests", "jinja2", "planner.ci.job", "planner.storage"]
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from planner.ci.action import main; "
        "code = main(); print(code, sorted(set(sys.modules) & set(sys.argv[2:])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ENTRYPOINT.parent), *heavy],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr
