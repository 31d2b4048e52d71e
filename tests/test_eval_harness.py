"""`planner eval` with scripted models: resolution comes from the check, never the model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from planner.cli.main import main
from planner.config import load_config
from planner.evaluation.harness import EvalOptions, run_task
from planner.evaluation.suite import load_suite


def options(scripted: str, **overrides: object) -> EvalOptions:
    config = load_config(None, env={}, overrides={"llm.max_retries": 0, **overrides})
    return EvalOptions(config=config, scripted=scripted, max_passes=3)


def test_the_reference_solution_resolves_and_nonsense_does_not() -> None:
    (task,) = load_suite(names=["duration_units"])
    solved = run_task(task, options("reference"))
    assert solved.resolved and solved.statuses == ["completed"]
    assert solved.usage.model_calls >= 4 and solved.usage.prompt_tokens > 0
    assert solved.cost is None  # no price for the scripted model
    assert solved.actions == ["write_file"]
    nonsense = run_task(task, options("nonsense"))
    assert not nonsense.resolved
    assert nonsense.statuses == ["failed"] and "parse_duration" in nonsense.check_output


def test_the_reference_model_answers_the_refinement_judge_in_one_call_each() -> None:
    """Refinement (on by default) judges the plan inside replanning's plan review and adds
    one judge call on the finished work. The reference model used to answer the judge with a
    replan decision, so each judge call was re-asked and given up: wasted calls per task in
    every eval figure."""
    (task,) = load_suite(names=["duration_units"])
    calls = {}
    for enabled in (True, False):
        report = run_task(task, options("reference", **{"planning.refinement.enabled": enabled}))
        assert report.resolved and report.statuses == ["completed"]
        calls[enabled] = report.usage.model_calls
    assert calls[True] == calls[False] + 1


def test_a_model_claiming_success_without_a_fix_is_not_resolved() -> None:
    (task,) = load_suite(names=["word_count_spaces"])
    # Without planning, prose from the model ends the run; it changed nothing, so the run
    # does not claim completion, and the check agrees that nothing was fixed.
    report = run_task(task, options("nonsense", **{"planning.enabled": False}))
    assert report.statuses == ["failed"] and not report.resolved
    assert not report.planning


def test_a_clarification_task_is_answered_once_and_the_runs_go_on() -> None:
    (task,) = load_suite(names=["clarify_rounding"])
    report = run_task(task, options("reference"))
    # The first pass asks; the answer (the task's) comes as a comment that starts the next.
    assert report.statuses == ["needs_human", "completed"]
    assert report.asked_question and report.resolved


def test_passes_stop_at_the_task_budget() -> None:
    (task,) = load_suite(names=["clarify_rounding"])
    report = run_task(task, replace(options("reference"), max_passes=1))
    assert report.statuses == ["needs_human"] and not report.resolved


def test_prices_give_a_cost() -> None:
    (task,) = load_suite(names=["fahrenheit_formula"])
    prices = {"scripted-reference": {"prompt_per_million": 2.0, "completion_per_million": 8.0}}
    report = run_task(task, options("reference", **{"llm.prices": prices}))
    usage = report.usage
    expected = (usage.prompt_tokens * 2.0 + usage.completion_tokens * 8.0) / 1e6
    assert report.resolved and report.cost == pytest.approx(expected)


def test_the_cli_reports_json_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_file = tmp_path / "report.json"
    table = tmp_path / "report.md"
    argv = ["eval", "--scripted", "reference", "--tasks", "stats_median,leap_year_trap"]
    assert main([*argv, "--json-out", str(report_file), "--markdown-out", str(table)]) == 0
    document = json.loads(report_file.read_text())
    assert document["summary"]["resolved"] == 2 and document["summary"]["cost"] == "unknown"
    assert [t["task"] for t in document["tasks"]] == ["stats_median", "leap_year_trap"]
    out = capsys.readouterr().out
    assert out == table.read_text() and "**2/2 (100.0%)**" in out


def test_the_cli_reports_nonsense_as_resolving_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_file = tmp_path / "report.json"
    argv = ["eval", "--scripted", "nonsense", "--no-planning", "--tasks", "stats_median,env_port"]
    assert main([*argv, "--json-out", str(report_file)]) == 0
    document = json.loads(report_file.read_text())
    assert document["summary"]["resolved"] == 0
    assert all(not t["resolved"] and not t["planning"] for t in document["tasks"])
    assert "**0/2 (0.0%)**" in capsys.readouterr().out


def test_an_unknown_task_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--scripted", "reference", "--tasks", "nope"]) == 2
    assert "no such task(s): nope" in capsys.readouterr().err


def test_a_wrong_fix_reported_as_done_is_counted() -> None:
    from planner.evaluation.report import TaskReport, Usage, summary, to_markdown

    def report(name: str, resolved: bool, statuses: list[str], calls: int) -> TaskReport:
        usage = Usage(model_calls=calls, prompt_tokens=1000 * calls)
        return TaskReport(
            task=name,
            category="bug_fix",
            model="m",
            planning=True,
            resolved=resolved,
            statuses=statuses,
            usage=usage,
        )

    reports = [
        report("right", True, ["completed"], 4),
        report("also_right", True, ["in_progress", "completed"], 10),
        report("wrong", False, ["completed"], 3),
        report("unfinished", False, ["needs_human"], 9),
    ]
    total = summary(reports)
    assert total["completed_but_wrong"] == 1
    assert total["median_calls_resolved"] == 7.0
    assert total["median_prompt_tokens_resolved"] == 7000.0
    table = to_markdown(reports)
    assert "| wrong | bug_fix | m | on | no | completed (wrong) |" in table
    assert "Ended `completed` with the check failing: 1; median per resolved task: 7 calls" in table
