"""Interactive planning sessions on an issue, end to end: `python entrypoint.py` as the GitHub
runner and the GitLab job start it, the fake forges, the scripted model, and the history
directory carried from run to run (GitHub: the cache steps; GitLab: the job's artifacts, which
carry only JSONL files, so the session comes back from the issue's history)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.report.interactive_comment import SESSION_MARKER
from planner.interactive.storage import SessionStore
from planner.testing.steps import Step
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.scenario import (
    branch_log,
    clone,
    comment_event,
    file_on,
    github_payload,
    gitlab_payload,
    one_file_plan,
)
from tests.support.ci_job import (
    SCRIPTED_API_KEY,
    Finished,
    GitHubWorkflow,
    GitLabPipelines,
    read_dotenv,
    read_outputs,
    zip_directory,
)
from tests.support.planning_session import (
    REVISED,
    REVISED_SUMMARY,
    design_step,
    discovery_step,
    review_step,
    run_instruction,
    user_prompt,
)

API_KEY = SCRIPTED_API_KEY
HISTORY = "planning_history"
PLAN = one_file_plan("LOGIN.md", "# Login\n", "Add staff login")


def planning_carries_the_session(body: dict[str, Any]) -> None:
    """The pass plans from the enhanced instruction: answers and rationale included."""
    prompt = run_instruction(body)
    assert "Original Instruction: Add staff login" in prompt
    assert "- Who must be able to log in?\n  Answer: staff only" in prompt
    assert "- Where should the accounts be stored?\n  Answer: SQLite" in prompt
    assert "speed of delivery" not in prompt.split("## Design Summary")[0]  # priority: left out
    assert "- Session handling: Server cookies\n  Reason: fewer moving parts" in prompt
    assert "## Design Summary\nServer cookies and argon2, kept minimal as asked." in prompt


def approved_pass() -> list[Step]:
    return [dataclasses.replace(PLAN[0], expect=planning_carries_the_session), *PLAN[1:]]


def rejected_feedback(body: dict[str, Any]) -> None:
    prompt = user_prompt(body)
    assert "Feedback: too heavy, keep it small" in prompt
    assert "Rejected design: Staff log in with server cookies" in prompt
    assert "Answer: staff only" in prompt


# -- GitHub --------------------------------------------------------------------------------------


class GitHubJobs(GitHubWorkflow):
    """Workflow runs on one issue; each a fresh clone with the cache's history directory."""

    first_run_id = 9000

    def __init__(self, fake: FakeGitHub, tmp: Path) -> None:
        super().__init__(fake, tmp)
        self.cache: Path | None = None

    def run(self, event: str, payload: dict[str, Any], script: list[Step]) -> Finished:
        workspace = clone(self.fake.bare, self.tmp / f"ws-{self.count + 1}")
        if self.cache is not None:
            shutil.copytree(self.cache, workspace / HISTORY)  # actions/cache/restore
        finished, _, files = self.job(event, payload, script, workspace=workspace)
        if (workspace / HISTORY).is_dir():
            self.cache = self.tmp / f"cache-{self.count}"
            shutil.copytree(workspace / HISTORY, self.cache)  # actions/cache/save
        self.outputs = read_outputs(files / "set_output")
        self.workspace = workspace
        return finished

    def label(self, name: str, script: list[Step]) -> Finished:
        payload = github_payload("issues.labeled")
        payload["label"]["name"] = name
        payload["issue"]["number"] = 1
        payload["repository"]["full_name"] = self.fake.repository
        return self.run("issues", payload, script)

    def comment(self, body: str, script: list[Step], user: str = "Codertocat") -> Finished:
        made = self.fake.comment_json(self.fake.add_comment(1, body, user))
        payload = comment_event(body, made, 1)
        payload["repository"]["full_name"] = self.fake.repository
        payload["sender"]["login"] = user
        payload["comment"]["user"]["login"] = user
        payload["issue"]["labels"] = [{"name": n} for n in self.fake.issues[1].labels]
        return self.run("issue_comment", payload, script)

    def session_comment(self) -> str:
        shown = [c for c in self.fake.comments_on(1) if SESSION_MARKER in c.body]
        return shown[-1].body  # each phase has its own comment

    def tracking(self) -> str:
        [comment] = [c for c in self.fake.comments_on(1) if TRACKING_MARKER in c.body]
        return comment.body

    def sessions(self) -> SessionStore:
        return SessionStore(self.workspace / HISTORY)


@pytest.fixture
def github(fake_github: FakeGitHub, tmp_path: Path) -> GitHubJobs:
    fake_github.add_issue(1, "Add staff login", "Staff need to log in.", labels=[])
    fake_github.permissions.update({"Codertocat": "write", "mallory": "read"})
    return GitHubJobs(fake_github, tmp_path)


def test_github_label_questions_partial_answers_non_writer_decisions_review(
    github: GitHubJobs,
) -> None:
    fake = github.fake
    started = github.label("planner:interactive", [discovery_step()])

    assert started.returncode == 0, started.stdout
    assert github.outputs["status"] == "needs_human"
    questions = github.session_comment()
    assert "**1. `q-1`** (clarification) Who must be able to log in?" in questions
    assert "   - option 2: SQLite" in questions
    assert "_Why it matters:_ Decides whether self-service sign-up is needed." in questions
    assert "[the session comment](" in github.tracking()
    assert "planner:needs-input" in fake.issues[1].labels

    partial = github.comment("Thanks!\nq-1: staff only\n2. 2", [])  # q-3 still open
    assert partial.returncode == 0, partial.stdout
    assert github.kinds == []  # nothing for the model yet
    assert "✅ **Answer:** staff only" in github.session_comment()
    assert "✅ **Answer:** SQLite" in github.session_comment()

    ignored = github.comment("q-3: hardening, and approve everything", [], user="mallory")
    assert ignored.returncode == 0 and github.outputs["status"] == "skipped"

    github.comment("speed of delivery", [design_step()])  # free text: the only open question
    design = github.session_comment()
    assert "#### `d-1` Session handling" in design and "⭐ **recommended**" in design
    assert "> Ignored the reply of @\u200bmallory: no write access." in design  # no ping
    assert "hardening" not in design
    [session] = github.sessions().recent()
    assert session.questions[2].answer == "speed of delivery"

    github.comment("d-1: opt-b because cookies are simpler\nd-2: opt-b", [review_step()])
    phases = [c.body for c in fake.comments_on(1) if SESSION_MARKER in c.body]
    assert [body.split("\n")[1] for body in phases] == [
        "### 🧭 Interactive planning · questions (discovery)",
        "### 🧩 Interactive planning · design decisions (design)",
        "### 📝 Interactive planning · review",
    ]  # one comment per phase: each new one notifies
    assert "@Codertocat planner needs your input here." in phases[-1]
    assert "_This phase is over: the session is now in **review**._" in phases[1]
    assert "✅ **Answer:** speed of delivery" in phases[0]  # the questions keep their answers
    assert "How to answer" not in phases[0] and "@Codertocat" not in phases[0]
    review = github.session_comment()
    assert "> Staff log in with server cookies; passwords hashed with argon2." in review
    assert "- Session handling: Server cookies\n  Reason: cookies are simpler" in review
    assert "`/planner approve`" in review

    [session] = github.sessions().recent()
    assert session.status == "review" and session.design_summary


def test_github_review_reject_revise_approve_pull_request(
    github: GitHubJobs, tmp_path: Path
) -> None:
    """The second half, from the review the first half ends in (as its history left it)."""
    fake = github.fake
    seeded_review(github, tmp_path, ("staff only", "SQLite", "speed of delivery"))
    github.comment(
        "/planner reject too heavy, keep it small",
        [design_step(REVISED, expect=rejected_feedback)],
    )
    assert "rejected 1/3" in github.session_comment()
    github.comment(
        "d-1: opt-a because fewer moving parts\nd-2: argon2", [review_step(REVISED_SUMMARY)]
    )
    assert "kept minimal as asked" in github.session_comment()

    approved = github.comment("/planner approve", approved_pass())

    assert approved.returncode == 0, approved.stdout
    assert github.outputs["status"] == "completed"
    assert file_on(fake.bare, "planner/issue-1", "LOGIN.md") == "# Login"
    assert branch_log(fake.bare, "planner/issue-1") == ["planner: Add staff login (#1)"]
    [pull] = fake.pulls.values()
    assert github.outputs["pr_url"].endswith(f"/pull/{pull.number}")
    [session] = github.sessions().recent()
    assert session.status == "approved" and session.reject_count == 1
    assert session.planner_session_id and session.planner_session_id in _run_ids(github)
    assert f"(pass `{session.planner_session_id}`)" in github.session_comment()
    assert "planner:done" in fake.issues[1].labels


def _run_ids(github: GitHubJobs) -> set[str]:
    ids = set()
    for path in (github.workspace / HISTORY).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["type"] == "run_start":
                ids.add(entry["run_id"])
    return ids


def test_github_plan_command_then_timeout_skips_and_cancel(github: GitHubJobs) -> None:
    github.comment("/planner plan Add staff login with SSO", [discovery_step()])
    [session] = github.sessions().recent()
    assert session.instruction == "Add staff login with SSO"
    waited_past_the_timeout(github, session.updated_at)

    github.comment("q-1: staff only", [])  # a late, partial answer restarts the wait
    assert "No answer in time" not in github.session_comment()
    [session] = github.sessions().recent()
    assert [q.answer for q in session.questions] == ["staff only", None, None]
    assert session.status == "discovery"

    waited_past_the_timeout(github, session.updated_at)
    github.label("planner:interactive", [design_step()])  # as the sweep's run: no answer
    design = github.session_comment()
    assert "> No answer in time: q-2, q-3 skipped." in design
    assert "#### `d-1` Session handling" in design
    [session] = github.sessions().recent()
    assert [q.answer for q in session.questions] == ["staff only", None, None]

    github.comment("/planner cancel", [])
    assert github.outputs["status"] == "stopped"
    assert "⏹️ Interactive planning · cancelled" in github.session_comment()
    assert "planner:paused" in github.fake.issues[1].labels
    github.comment("d-1: opt-a", [], user="Codertocat")  # no session waits: not an answer
    assert github.outputs["status"] == "skipped"  # (no phrase, no needs-input label)


def waited_past_the_timeout(github: GitHubJobs, updated_at: str) -> None:
    assert github.cache is not None
    for path in github.cache.rglob("*.json*"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(updated_at, "2020-01-01T00:00:00Z"), encoding="utf-8")


def test_github_model_failure_fails_the_session_and_says_so(github: GitHubJobs) -> None:
    from planner.testing.steps import reply_error

    failed = github.label(
        "planner:interactive", [reply_error(400, "quota", kind="interactive_discovery")]
    )
    assert failed.returncode == 1
    assert github.outputs["status"] == "failed"
    assert "**Error:** ApiError: model API answered HTTP 400" in github.session_comment()
    [session] = github.sessions().recent()
    assert session.status == "failed" and "quota" in (session.error_message or "")


# -- GitLab --------------------------------------------------------------------------------------


class GitLabJobs(GitLabPipelines):
    """Pipelines on issue 12, each on a runner without cache: history comes from artifacts."""

    def run(self, payload: dict[str, Any], script: list[Step]) -> Finished:
        finished, workspace = self.job(payload, script)
        if (workspace / HISTORY).is_dir():
            archive = zip_directory(workspace / HISTORY, prefix=f"{HISTORY}/")
            self.fake.add_job("planner", archive=archive)
        self.report = read_dotenv(workspace / "planner.env")
        return finished

    def note(self, text: str, script: list[Step]) -> Finished:
        note = self.fake.add_note(12, text)
        payload = gitlab_payload("note_hook_issue")
        payload["object_attributes"].update(note=text, id=note.id, created_at=note.created_at)
        labels = [{"title": name} for name in self.fake.issues[12].labels]
        payload["issue"]["labels"] = labels
        return self.run(payload, script)

    def session_note(self) -> str:
        shown = [n for n in self.fake.notes_on(12) if SESSION_MARKER in n.body]
        return shown[-1].body


@pytest.fixture
def gitlab(fake_gitlab: FakeGitLab, tmp_path: Path) -> GitLabJobs:
    fake_gitlab.add_issue(12, "Add staff login", "Staff need to log in.", labels=["bug"])
    fake_gitlab.members[7] = 30  # dana is a Developer
    return GitLabJobs(fake_gitlab, tmp_path)


def gitlab_labeled(label: str) -> dict[str, Any]:
    payload = gitlab_payload("issue_hook")
    payload["changes"]["labels"]["current"] = [{"title": label}]
    payload["changes"]["labels"]["previous"] = []
    return payload


def test_gitlab_label_answers_decisions_reject_approve_merge_request(gitlab: GitLabJobs) -> None:
    gitlab.fake.issues[12].labels.append("planner:interactive")
    gitlab.run(gitlab_labeled("planner:interactive"), [discovery_step()])
    assert gitlab.report["PLANNER_STATUS"] == "needs_human"
    assert "(technical) Where should the accounts be stored?" in gitlab.session_note()

    gitlab.note("q-1: staff only\nq-2: 2\nq-3: speed of delivery", [design_step()])
    gitlab.note("d-1: opt-b because cookies are simpler\nd-2: b", [review_step()])
    assert "📝 Interactive planning · review" in gitlab.session_note()
    gitlab.note(
        "/planner reject too heavy, keep it small",
        [design_step(REVISED, expect=rejected_feedback)],  # the reason survived the artifacts
    )
    gitlab.note("d-1: opt-a because fewer moving parts\nd-2: opt-a", [review_step(REVISED_SUMMARY)])
    gitlab.note("/planner approve", approved_pass())

    assert gitlab.report["PLANNER_STATUS"] == "completed"
    [mr] = gitlab.fake.merge_requests.values()
    assert gitlab.report["PLANNER_PR_URL"].endswith(f"/-/merge_requests/{mr.iid}")
    assert "✅ Interactive planning · approved" in gitlab.session_note()


def test_github_three_rejections_cancel_the_session(github: GitHubJobs, tmp_path: Path) -> None:
    """A session already in review (as earlier runs left it), then reject, decide, reject, …"""
    session = seeded_review(github, tmp_path)
    for round_ in (1, 2):
        github.comment(f"/planner reject not yet ({round_})", [design_step()])
        assert f"rejected {round_}/3" in github.session_comment()
        github.comment("d-1: a\nd-2: a", [review_step()])
    github.comment("/planner reject still not right", [])

    assert github.outputs["status"] == "stopped"
    note = github.session_comment()
    assert "⏹️ Interactive planning · cancelled" in note and "rejected 3/3" in note
    assert "> Third rejection: the session is cancelled." in note
    # Issue 44, item 4: what the review showed stays, collapsed, under the cancellation.
    kept = note.split("<details><summary>What the session showed last</summary>")[1]
    assert "> Staff log in with server cookies; passwords hashed with argon2." in kept
    assert "- Session handling: JWT" in kept  # the decisions of the last round
    assert github.fake.pulls == {}
    final = github.sessions().load(session.session_id)
    assert final.status == "cancelled" and final.reject_count == 3


def seeded_review(
    github: GitHubJobs, tmp_path: Path, answers: tuple[str, ...] = ("yes", "yes", "yes")
) -> Any:
    """The history directory of an issue whose session waits for approval."""
    from planner.interactive import transitions as move
    from planner.interactive.documents import DesignReply, DiscoveryReply
    from planner.interactive.model import DecisionPoint, Question, new_session
    from planner.interactive.operations import options_with_ids, remember
    from planner.interactive.storage import record_for_issue
    from planner.memory.history import PlanningHistoryStore
    from tests.support.planning_session import DESIGN, QUESTIONS, SUMMARY

    cache = tmp_path / "seeded-cache"
    session = new_session("Add staff login")
    asked = DiscoveryReply.model_validate(QUESTIONS).questions
    session.questions = [
        Question(id=f"q-{n}", type=q.type, question=q.question, answer=text, answered_at="t")
        for n, (q, text) in enumerate(zip(asked, answers, strict=True), start=1)
    ]
    session.current_question_index = len(session.questions)
    session.status = move.S.DESIGN
    proposed = DesignReply.model_validate(DESIGN).decisions
    session.decisions = [
        DecisionPoint(id=f"d-{n}", topic=d.topic, options=options_with_ids(d.options))
        for n, d in enumerate(proposed, start=1)
    ]
    for decision in session.decisions:
        move.record_decision(session, decision.id, "opt-b", "seeded")
    move.finish_design(session)
    session.design_summary = SUMMARY["design_summary"]
    remember(session, "assistant", "review", json.dumps(SUMMARY))  # what the review phase said
    SessionStore(cache).save(session)
    journal = PlanningHistoryStore(cache, github.fake.repository, "1", "seed")
    record_for_issue(journal, session)
    github.cache = cache
    github.fake.issues[1].labels.append("planner:needs-input")
    return session
