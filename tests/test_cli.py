"""The `planner` command end to end: real processes, real HTTP, the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from planner.testing.scripted_server import ScriptedModelServer
from tests.plans import REFINEMENT_OFF_ENV, completed, finish, git_repo, planned, write
from tests.support.model_listing import Listing
from tests.support.wheels import wheelhouse_with_pytest


def planner(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    return subprocess.run(
        [sys.executable, "-m", "planner", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=cwd,
        timeout=60,
    )


def model_env(server: ScriptedModelServer) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_MODEL": "scripted",
        **REFINEMENT_OFF_ENV,
    }


def issue_file(tmp_path: Path) -> Path:
    path = tmp_path / "issue-7.md"
    path.write_text("# Write a file\n\nPlease write a.txt.\n", encoding="utf-8")
    return path


def run_issue_file(
    repo: Path, tmp_path: Path, *options: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`planner run` on `repo` for the issue file that issue_file(tmp_path) writes."""
    return planner(
        "run", "--repo", str(repo), "--issue-file", str(issue_file(tmp_path)), *options, env=env
    )


def test_run_then_resume_in_a_second_process(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    scripted_model.add(*planned("task_1", "task_2"), write("a.txt"), finish(), write("b.txt"))
    first = run_issue_file(repo, tmp_path, "--max-actions", "1", env=model_env(scripted_model))
    assert first.returncode == 0, first.stderr
    assert "- [x] **task_1**: Do task_1" in first.stdout
    assert "Status: in_progress (budget: 1 actions per pass reached)" in first.stdout
    scripted_model.add(write("b.txt"), finish(), *completed(completed=2))
    second = run_issue_file(repo, tmp_path, env=model_env(scripted_model))
    assert second.returncode == 0, second.stderr
    assert "*Progress: 2/2 (100%) complete*" in second.stdout
    assert "Status: completed" in second.stdout
    status = subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True, text=True)
    assert status.stdout.split() == ["??", "a.txt", "??", "b.txt"]  # history is git-excluded


def test_json_output_and_history_command(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    repo = git_repo(tmp_path / "repo")
    scripted_model.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    run = run_issue_file(
        repo, tmp_path, "--json", "--repository", "octo/repo", env=model_env(scripted_model)
    )
    result = json.loads(run.stdout)
    assert result["status"] == "completed" and result["usage"]["model_calls"] == 6  # + 2 replan
    shown = planner(
        "history", "--repo", str(repo), "--issue", "7", "--repository", "octo/repo", env={}
    )
    kinds = [line.split()[2] for line in shown.stdout.splitlines()]
    assert kinds[:5] == ["run_start", "verification", "repository_map", "model_call", "plan"]
    assert kinds[-1] == "run_end"
    raw = planner(
        "history",
        "--repo",
        str(repo),
        "--issue",
        "7",
        "--repository",
        "octo/repo",
        "--json",
        env={},
    )
    assert all(json.loads(line)["issue_id"] == "7" for line in raw.stdout.splitlines())


def test_missing_api_key_names_the_variable(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    run = run_issue_file(repo, tmp_path, env={})
    assert run.returncode == 2
    assert "set the environment variable OPENAI_API_KEY" in run.stderr
    assert not (repo / "planning_history").exists()


def test_config_error_exits_2_before_any_side_effect(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".github").mkdir()
    (repo / ".github" / "planner.yml").write_text("planning:\n  strategy: guess\n")
    run = run_issue_file(repo, tmp_path, env={"OPENAI_API_KEY": "k"})
    assert run.returncode == 2
    assert "planning.strategy = 'guess'" in run.stderr and "chain_of_thought" in run.stderr
    assert not (repo / "planning_history").exists()
    assert "planning_history" not in (repo / ".git" / "info" / "exclude").read_text()


def test_an_endpoint_with_several_models_and_none_named_exits_2_naming_them(
    tmp_path: Path,
) -> None:
    repo = git_repo(tmp_path / "repo")
    with Listing(["b", "a"]) as several:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": several.base_url}
        run = run_issue_file(repo, tmp_path, env=env)
    assert run.returncode == 2
    assert f"llm.model is not set and {several.base_url} serves 2 models (a, b)" in run.stderr
    assert several.requests == ["/v1/models"]
    assert not (repo / "planning_history").exists()


def test_unparseable_issue_file(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    bad = tmp_path / "issue.json"
    bad.write_text("{not json")
    run = planner("run", "--repo", str(repo), "--issue-file", str(bad), env={"OPENAI_API_KEY": "k"})
    assert run.returncode == 2 and "cannot be parsed" in run.stderr


def test_history_of_unknown_issue(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shown = planner("history", "--repo", str(repo), "--issue", "99", env={})
    assert shown.returncode == 0 and "no history for" in shown.stdout


def test_demo_runs_with_the_scripted_model(tmp_path: Path) -> None:
    demo = planner("demo", env={"TMPDIR": str(tmp_path)})
    assert demo.returncode == 0, demo.stderr
    assert "SCRIPTED MODEL: no LLM is involved" in demo.stdout
    assert "Status: completed" in demo.stdout and "python -m unittest" in demo.stdout
    # the default config judges the plan and the finished work (refinement, issue 11)
    assert "*Quality 86/100, first judgement*" in demo.stdout
    assert "Suggestions of the final quality judgement:\n  - Link CONTRIBUTING.md" in demo.stdout
    # The temporary repository (and the history in it) is gone: no path to nothing.
    assert "History: deleted with the temporary repository (run `planner demo --keep`" in (
        demo.stdout
    )
    assert str(tmp_path) not in demo.stdout and not list(tmp_path.iterdir())


DEMO_TESTS = [
    "Tests (`pytest -q`): 2 passed, 0 failed — all passed before the change",
    "✅ The issue's test (`test_planner_issue_1.py`, written from the issue before the change) "
    "passes.",
]


def demo_tests(stdout: str) -> list[str]:
    """The demo's lines about the tests, and the issue's test in the working tree."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Tests"))
    shown = lines[start : lines.index("", start)]
    return shown + [line for line in lines if "test_planner_issue_1.py" in line and "??" in line]


def test_the_demo_runs_the_repositorys_test_and_the_issues_own(tmp_path: Path) -> None:
    """planner's interpreter has pytest here: the demo's test runs with it before and after the
    change, and the issue's own test (written before the change) fails, then passes and joins it."""
    demo = planner("demo", env={"TMPDIR": str(tmp_path)})
    assert demo.returncode == 0, demo.stderr
    assert demo_tests(demo.stdout) == [*DEMO_TESTS, "?? test_planner_issue_1.py"]


def test_without_pytest_anywhere_the_demo_shows_the_same_tests(tmp_path: Path) -> None:
    """As after a plain `pip install planner`: planner's interpreter cannot import pytest and the
    `python3` on PATH has none either. planner installs pytest into the tests' own environment,
    as for any repository, from what the user's pip configuration names (here a folder of wheels,
    no index), and the demo shows the same tests and the same issue's test."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    assert subprocess.run([str(bare / "bin" / "python3"), "-I", "-c", "import pytest"]).returncode
    wheels = wheelhouse_with_pytest(tmp_path / "wheels")
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nno-index = true\nfind-links = {wheels}\n", encoding="utf-8"
    )
    (tmp_path / "tmp").mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None  # planner's interpreter cannot import pytest\n"
        "import planner.cli.demo as demo\n"
        "raise SystemExit(demo.run_demo())\n"
    )
    demo = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={
            **clean,
            "TMPDIR": str(tmp_path / "tmp"),
            "HOME": str(home),
            "PATH": f"{bare / 'bin'}:/usr/bin:/bin",
        },
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr
    assert demo_tests(demo.stdout) == [*DEMO_TESTS, "?? test_planner_issue_1.py"], demo.stdout


def test_demo_with_keep_prints_the_history_it_kept(tmp_path: Path) -> None:
    demo = planner("demo", "--keep", env={"TMPDIR": str(tmp_path)})
    assert demo.returncode == 0, demo.stderr
    [line] = [line for line in demo.stdout.splitlines() if line.startswith("History: ")]
    assert Path(line.removeprefix("History: ")).is_file()
    assert f"Repository kept at {tmp_path}" in demo.stdout


def test_run_on_the_local_forge(tmp_path: Path, scripted_model: ScriptedModelServer) -> None:
    repo = git_repo(tmp_path / "repo")
    issues = repo / ".planner" / "issues"
    issues.mkdir(parents=True)
    (issues / "3.md").write_text("# Write a file\n\nPlease write a.txt.\n", encoding="utf-8")
    scripted_model.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    run = planner(
        "run", "--repo", str(repo), "--issue", "3", "--json", env=model_env(scripted_model)
    )
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout)
    assert outcome["status"] == "completed" and outcome["branch"] == "planner/issue-3"
    log = subprocess.run(
        ["git", "log", "--format=%s", "planner/issue-3"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert len(log.splitlines()) == 2  # the initial commit and planner's one commit
    comments = list((issues / "3" / "comments").glob("*.json"))
    assert len(comments) == 1
    body = json.loads(comments[0].read_text())["body"]
    assert "- [x] **task_1**: Do task_1" in body
    assert (repo / ".planner" / "pulls").is_dir()


def test_run_needs_exactly_one_issue_source(tmp_path: Path) -> None:
    run = planner("run", "--repo", str(tmp_path), env={})
    assert run.returncode == 2 and "one of the arguments --issue-file --issue" in run.stderr
