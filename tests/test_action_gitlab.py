"""`python entrypoint.py` as the GitLab component's job runs it, against the fake GitLab.

The environment is a triggered pipeline's (TRIGGER_PAYLOAD is a file variable holding a webhook
payload) plus the job's `variables:` from templates/planner/template.yml with its inputs
interpolated. Between jobs the history travels as the job's artifacts: a second job on a new
runner (no cache) downloads the newest planner job's archive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.memory.history import task_uuid
from tests.fake_forge import FakeGitLab
from tests.fake_forge.scenario import branch_log, gitlab_payload, one_file_plan
from tests.support.ci_job import (
    SCRIPTED_API_KEY,
    GitLabPipelines,
    read_dotenv,
    zip_directory,
)

TITLE = "Widgets render upside down on narrow screens"
API_KEY = SCRIPTED_API_KEY
STEPS = one_file_plan("FIX.md", "rotate back\n", "Fix the rotation")


@pytest.fixture
def fake(fake_gitlab: FakeGitLab) -> FakeGitLab:
    fake_gitlab.add_issue(12, TITLE, "Every widget is rotated.", labels=["bug", "planner"])
    fake_gitlab.members[7] = 30  # dana is a Developer
    return fake_gitlab


@pytest.fixture
def pipelines(fake: FakeGitLab, tmp_path: Path) -> GitLabPipelines:
    return GitLabPipelines(fake, tmp_path)


def note_payload(fake: FakeGitLab, text: str) -> dict[str, Any]:
    note = fake.add_note(12, text)
    payload = gitlab_payload("note_hook_issue")
    payload["object_attributes"].update(note=text, id=note.id, created_at=note.created_at)
    return payload


def tracking(fake: FakeGitLab) -> list[Any]:
    return [note for note in fake.notes_on(12) if TRACKING_MARKER in note.body]


def history_name(fake: FakeGitLab) -> str:
    return f"planning_history/{task_uuid(fake.repository, '12')}.jsonl"


def test_issue_hook_then_note_on_a_new_runner_continues_from_the_job_artifacts(
    pipelines: GitLabPipelines, fake: FakeGitLab
) -> None:
    first, workspace = pipelines.job(gitlab_payload("issue_hook"), STEPS[:4], max_model_calls="4")

    assert first.returncode == 0, first.stdout
    assert not any(line.startswith("::") for line in first.lines)  # no GitHub commands
    assert fake.token not in first.stdout and API_KEY not in first.stdout
    [note] = tracking(fake)
    assert "⏸️ Paused" in note.body
    assert branch_log(fake.bare, "planner/issue-12") == [f"planner: {TITLE} (#12)"]
    [mr] = fake.merge_requests.values()
    report = read_dotenv(workspace / "planner.env")
    assert report["PLANNER_STATUS"] == "in_progress" and report["PLANNER_ISSUE_NUMBER"] == "12"
    assert report["PLANNER_PR_URL"].endswith(f"/-/merge_requests/{mr.iid}")
    assert report["PLANNER_BRANCH"] == "planner/issue-12"
    assert report["PLANNER_HISTORY_PATH"] == history_name(fake)
    assert int(report["PLANNER_TOKENS_USED"]) > 0
    assert "no history: first run, or the cache and the planner artifacts expired" in first.stdout
    assert "### planner: ⏸️ in progress (comment /planner to continue) · issue #12" in first.lines
    assert "- [x] **task_1**: Write FIX.md" in first.lines
    assert any("section_start" in line and "planner: summary" in line for line in first.lines)

    archive = zip_directory(workspace / "planning_history", prefix="planning_history/")
    fake.add_job("planner", archive=archive, redirect=True)  # the first job, finished
    fake.add_job("planner", archive=b"old", expire_at="2020-01-01T00:00:00.000Z")
    fake.add_job("planner")  # an event the planner skipped: no history, no artifacts
    fake.add_job("build", archive=b"not ours")
    fake.add_job("planner", status="running")  # this very job
    second, fresh = pipelines.job(note_payload(fake, "/planner"), STEPS[4:])

    assert second.returncode == 0, second.stdout
    assert pipelines.kinds == ["replan_reflection", "completion"]  # the plan continued: no planning
    [again] = tracking(fake)
    assert again.id == note.id and "✅ Done" in again.body
    assert list(fake.merge_requests) == [mr.iid]
    assert read_dotenv(fresh / "planner.env")["PLANNER_STATUS"] == "completed"
    downloads = [r.path for r in fake.api_requests("GET") if r.path.endswith("/artifacts")]
    assert downloads == [f"/api/v4/projects/42/jobs/{5001}/artifacts"]
    [blob] = fake.blob_requests()
    assert blob.status == 200 and blob.authorization == []  # no PRIVATE-TOKEN to storage
    assert "artifacts of job 5001: restored 1 history file(s)" in second.stdout


def test_an_issue_event_without_our_label_exits_at_once(
    pipelines: GitLabPipelines, fake: FakeGitLab
) -> None:
    payload = gitlab_payload("issue_hook")
    payload["changes"]["labels"]["current"] = payload["changes"]["labels"]["previous"]
    finished, workspace = pipelines.job(payload, [])

    assert finished.returncode == 0
    assert finished.log_lines() == [
        "planner: skipped: the issue event did not add the label 'planner'"
    ]
    assert fake.log == []
    assert read_dotenv(workspace / "planner.env")["PLANNER_STATUS"] == "skipped"


def test_a_bad_input_of_the_component_exits_2_without_a_request(
    pipelines: GitLabPipelines, fake: FakeGitLab
) -> None:
    finished, workspace = pipelines.job(gitlab_payload("issue_hook"), [], draft_pr="maybe")

    assert finished.returncode == 2
    assert "planner: error: invalid action inputs:" in finished.lines
    assert "planner:   - input draft_pr = 'maybe': must be true or false" in finished.lines
    assert fake.log == []
    assert read_dotenv(workspace / "planner.env")["PLANNER_STATUS"] == "failed"
