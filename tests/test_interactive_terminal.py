"""`planner plan` in a terminal: real processes, the scripted model over HTTP, answers piped
on stdin or typed into a pseudo-terminal."""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from planner.interactive.storage import SessionStore
from planner.testing.scripted_server import ScriptedModelServer
from tests.plans import REFINEMENT_OFF_ENV, completed, finish, git_repo, planned, write
from tests.support.planning_session import (
    REVISED,
    REVISED_SUMMARY,
    design_step,
    discovery_step,
    review_step,
    user_prompt,
)

HISTORY = "planning_history"


def planner_plan(
    *args: str, stdin: str, server: ScriptedModelServer, repo: Path
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    env = {**clean, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    return subprocess.run(
        [sys.executable, "-m", "planner", "plan", *args, "--repo", str(repo)],
        input=stdin,
        capture_output=True,
        text=True,
        env={**env, "OPENAI_MODEL": "scripted", **REFINEMENT_OFF_ENV},
        timeout=60,
    )


def sessions(repo: Path) -> SessionStore:
    return SessionStore(repo / HISTORY)


def test_piped_session_with_a_rejection_then_approval_and_execution(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")

    def carries_the_session(body: dict[str, object]) -> None:
        prompt = user_prompt(body)  # type: ignore[arg-type]
        assert "Original Instruction: Add login" in prompt
        assert "Where should the accounts be stored?\n  Answer: SQLite" in prompt
        assert "Session handling: Server cookies\n  Reason: fewer moving parts" in prompt

    scripted_model.add(
        discovery_step(),
        design_step(),
        review_step(),
        design_step(REVISED, expect=lambda body: _has(body, "Feedback: too heavy, keep it small")),
        review_step(REVISED_SUMMARY),
    )
    planning, review = planned("task_1")
    scripted_model.add(
        dataclasses.replace(planning, expect=carries_the_session),
        review,
        write("a.txt"),
        finish(),
        *completed(),
    )
    typed = "\n".join(
        [
            "staff only",  # q-1
            "2",  # q-2: option 2 = SQLite
            "",  # q-3: skipped
            "2",  # d-1: option 2
            "because cookies",
            "opt-b",  # d-2 by id
            "",
            "r",
            "too heavy, keep it small",
            "",  # d-1 (revised): the recommended option
            "fewer moving parts",
            "x",  # not an option: asked again
            "1",
            "",
            "a",
            "y",
        ]
    )
    done = planner_plan("Add login", stdin=typed + "\n", server=scripted_model, repo=repo)

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[1/3] q-1 (clarification) Who must be able to log in?" in out
    assert "    2) SQLite" in out and "(recommended)" in out
    assert "  not an option of d-2: 'x'" in out
    assert "The instruction that will be planned:" in out
    assert "Status: completed" in out
    [session] = sessions(repo).recent()
    assert session.status == "approved" and session.reject_count == 1
    assert [q.answer for q in session.questions] == ["staff only", "SQLite", None]
    assert [(d.selected_option_id, d.rationale) for d in session.decisions] == [
        ("opt-a", "fewer moving parts"),
        ("opt-a", None),
    ]
    assert session.planner_session_id and len(session.planner_session_id) == 12
    assert (repo / "a.txt").is_file()
    logs = repo / HISTORY / "logs" / session.session_id
    assert sorted(p.name for p in logs.iterdir()) == ["design.log", "discovery.log", "review.log"]


def _has(body: dict[str, object], text: str) -> None:
    assert text in user_prompt(body)  # type: ignore[arg-type]


def test_end_of_input_saves_and_resume_by_id_continues_then_no_prints_the_command(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    scripted_model.add(discovery_step())
    first = planner_plan("Add login", stdin="staff\n", server=scripted_model, repo=repo)

    assert first.returncode == 0, first.stderr
    [session] = sessions(repo).recent()
    assert f"Continue with: planner plan --resume {session.session_id}" in first.stdout
    assert session.status == "discovery" and session.current_question_index == 1

    scripted_model.add(design_step(), review_step())
    answers = "SQLite\nspeed\n\n\n\n\na\nn\n"
    second = planner_plan(
        "--resume", session.session_id, stdin=answers, server=scripted_model, repo=repo
    )

    assert second.returncode == 0, second.stderr
    assert "[1/3]" not in second.stdout and "[2/3] q-2" in second.stdout
    expected = f"planner plan --resume {session.session_id} --execute --repo {repo}"
    assert f"Not executed. Run it later with:\n  {expected}" in second.stdout
    resumed = sessions(repo).load(session.session_id)
    assert resumed.status == "approved" and resumed.planner_session_id is None
    assert [d.selected_option_id for d in resumed.decisions] == ["opt-a", "opt-b"]  # defaults


def test_resume_without_an_id_lists_recent_sessions_and_picks_by_number(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    scripted_model.add(discovery_step(), discovery_step())
    planner_plan("First idea", stdin="", server=scripted_model, repo=repo)
    time.sleep(1.1)  # updated_at has second resolution
    planner_plan("Second idea", stdin="", server=scripted_model, repo=repo)
    newest, oldest = sessions(repo).recent()

    listed = planner_plan("--resume", stdin="2\n", server=scripted_model, repo=repo)

    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith(f"1) {newest.session_id}  discovery  ")
    assert lines[0].endswith("Second idea") and lines[1].endswith("First idea")
    assert f"Planning session {oldest.session_id}" in listed.stdout
    assert "[1/3] q-1" in listed.stdout  # its questions, not the other session's


def test_resume_of_an_unknown_or_malicious_id_is_a_clear_error(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    bad = planner_plan("--resume", "../../etc/passwd", stdin="", server=scripted_model, repo=repo)
    assert bad.returncode == 2
    assert "'../../etc/passwd' is not a planning session id" in bad.stderr


def test_a_model_failure_fails_the_session_with_its_message(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    from planner.testing.steps import reply_error

    repo = git_repo(tmp_path / "repo")
    scripted_model.add(reply_error(400, "model is gone", kind="interactive_discovery"))
    done = planner_plan("Add login", stdin="", server=scripted_model, repo=repo)

    assert done.returncode == 1
    assert (
        "The session failed: ApiError: model API answered HTTP 400: Error code: 400 - model is gone"
        in done.stdout
    )
    [session] = sessions(repo).recent()
    assert session.status == "failed" and "HTTP 400" in (session.error_message or "")
    log = (repo / HISTORY / (session.discovery_log_path or "")).read_text(encoding="utf-8")
    assert "Traceback" in log  # the stack trace goes to the phase log


def test_a_pseudo_terminal_session(tmp_path: Path, scripted_model: ScriptedModelServer) -> None:
    repo = git_repo(tmp_path / "repo")
    scripted_model.add(discovery_step(), design_step(), review_step())
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    env = {**clean, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": scripted_model.base_url}
    argv = [sys.executable, "-m", "planner", "plan", "Add login", "--repo", str(repo)]
    main, child = pty.openpty()
    process = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env)
    os.close(child)
    screen = Terminal(main)
    for prompt, typed in [
        ("answer (an option", "staff"),
        ("answer (an option", "1"),
        ("answer (an option", "speed"),
        ("choose an option", "opt-b"),
        ("why?", "simpler"),
        ("choose an option", "2"),
        ("why?", ""),
        ("[a/r/c]", "c"),
    ]:
        screen.wait_for(prompt)
        os.write(main, typed.encode() + b"\n")
    assert process.wait(timeout=30) == 0
    screen.wait_for("cancelled.")
    os.close(main)
    [session] = sessions(repo).recent()
    assert session.status == "cancelled"
    assert [q.answer for q in session.questions] == ["staff", "PostgreSQL", "speed"]
    record = json.loads(sessions(repo).path(session.session_id).read_text(encoding="utf-8"))
    assert record["decisions"][0]["rationale"] == "simpler"


class Terminal:
    """What the child printed so far on the pseudo-terminal."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = ""
        self.offset = 0

    def wait_for(self, text: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen[self.offset :]:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r} in {self.seen[self.offset :]!r}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    break
        self.offset = self.seen.index(text, self.offset) + len(text)


def test_executing_an_executed_session_again_warns_first(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """Issue 25, item 8: re-executing an executed session gave no warning."""
    from planner.interactive.model import PlanningSessionStatus, new_session

    repo = git_repo(tmp_path / "repo")
    session = new_session("Add login")
    session.status = PlanningSessionStatus.APPROVED
    session.design_summary = "Cookies."
    session.planner_session_id = "run-earlier"
    sessions(repo).save(session)

    done = planner_plan(
        "--resume", session.session_id, stdin="n\n", server=scripted_model, repo=repo
    )

    assert done.returncode == 0, done.stderr
    assert "Warning: this session was already executed (pass run-earlier)" in done.stdout
    assert "execute again? [y/N]" in done.stdout and "Not executed" in done.stdout
    assert scripted_model.requests == []


def test_a_missing_api_key_leaves_no_session_file(tmp_path: Path) -> None:
    """Issue 25, item 8: a session file was left behind when the run stopped for the key."""
    repo = git_repo(tmp_path / "repo")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    done = subprocess.run(
        [sys.executable, "-m", "planner", "plan", "Add login", "--repo", str(repo)],
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
    )
    assert done.returncode == 2 and "no model API key" in done.stderr
    assert sessions(repo).recent() == []
