"""Cost where people look: calls and tokens by call kind, money when llm.prices knows the model,
the budget left — in the tracking comment's footer and the job summary; and the plan as a Mermaid
graph under the checklist, with the model's text unable to break out of it."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from planner.ci.outcome import CiOutcome
from planner.ci.report.costs import cost_report, last_run_id, money, usage_of
from planner.ci.report.plan_graph import graph_section, mermaid_label, render_graph
from planner.ci.report.summary import SummaryFacts, render_summary
from planner.ci.report.tracking import TrackingView, render_tracking
from planner.cli.demo import demo_script
from planner.config import BudgetConfig, ModelPrice
from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import PassResult, TaskView
from planner.plan.documents import Plan
from planner.text.redaction import SECRETS
from scripts import example_run
from tests.plans import plan_doc

PRICE = {"m": ModelPrice(prompt_per_million=2.0, completion_per_million=8.0)}


def call(kind: str, run: str, prompt: int, completion: int, model: str = "m") -> dict[str, Any]:
    return {
        "type": "model_call",
        "run_id": run,
        "kind": kind,
        "model": model,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }


TWO_RUNS = [
    {"type": "run_start", "run_id": "r1"},
    call("planning", "r1", 1_000, 500),
    call("execute", "r1", 2_000, 100),
    {"type": "run_start", "run_id": "r2"},
    call("execute", "r2", 3_000, 200),
    call("execute", "r2", 1_000, 0),
]


# ---------------------------------------------------------------------------- usage and cost


def test_usage_is_counted_by_kind_for_a_run_and_for_the_issue() -> None:
    issue, second = usage_of(TWO_RUNS), usage_of(TWO_RUNS, "r2")
    assert (issue.total.calls, issue.total.prompt, issue.total.completion) == (4, 7_000, 800)
    assert issue.kinds["execute"].calls == 3 and issue.kinds["planning"].tokens == 1_500
    assert (second.total.calls, second.total.tokens) == (2, 4_200)
    assert set(second.kinds) == {"execute"}
    assert last_run_id(TWO_RUNS) == "r2"


def test_cost_uses_the_price_of_each_model_and_needs_all_of_them() -> None:
    assert usage_of(TWO_RUNS).cost(PRICE) == pytest.approx((7_000 * 2 + 800 * 8) / 1e6)
    mixed = [*TWO_RUNS, call("judge", "r2", 10, 10, model="unpriced")]
    assert usage_of(mixed).cost(PRICE) is None
    assert usage_of([]).cost(PRICE) is None


def test_corrupt_entries_count_no_tokens_and_cannot_inject_markup() -> None:
    corrupt = {**call("<img src=x>|", "r1", 5, 5), "prompt_tokens": "9999", "completion_tokens": -3}
    report = cost_report([corrupt], "r1", PRICE, BudgetConfig())
    assert report is not None and report.this_pass.total.tokens == 0
    table = "\n".join(report.table())
    assert "<img" not in table and "| `imgsrcx` |" in table


def test_the_headline_shows_the_pass_the_issue_so_far_and_the_budget_left() -> None:
    budget = BudgetConfig(max_model_calls=10, max_total_tokens=10_000)
    report = cost_report(TWO_RUNS, "r2", PRICE, budget)
    assert report is not None
    pass_cost, issue_cost = (4_000 * 2 + 200 * 8) / 1e6, (7_000 * 2 + 800 * 8) / 1e6
    headline = report.headline()
    assert (
        "this pass: 2 model calls, 4,200 tokens (4,000 prompt + 200 completion), "
        f"{money(pass_cost)}" in headline
    )
    assert (
        "issue so far: 4 model calls, 7,800 tokens (7,000 prompt + 800 completion), "
        f"{money(issue_cost)}" in headline
    )
    assert "budget left: 8 of 10 model calls, 5,800 of 10,000 tokens per pass" in headline
    assert "| `execute` | 2 / 3 | 4,000 / 6,000 | 200 / 300 |" in report.table()
    assert "$" not in cost_report(TWO_RUNS, "r2", {}, budget).headline()  # type: ignore[union-attr]


def test_an_issue_without_model_calls_has_no_usage_section() -> None:
    assert cost_report([{"type": "run_start", "run_id": "r"}], "r", PRICE, BudgetConfig()) is None


# ---------------------------------------------------------------------------- where people look


def test_a_real_run_shows_calls_tokens_and_cost_in_the_tracking_comment(tmp_path: Path) -> None:
    # The registry of secrets is per process: an earlier test's key ("scripted") would redact
    # the model's name in the usage table and hide its price.
    SECRETS.clear()
    root = tmp_path / "greeter"
    root.mkdir()
    comment, _pull = example_run.run_example(root)
    entries = history_entries(root)
    usage = usage_of(entries)
    price = ModelPrice(**example_run.PRICES["scripted-demo"])
    summary = re.search(r"<summary>Usage — (.*?)</summary>", comment)
    assert summary is not None, comment
    assert f"this pass: {usage.total.calls} model calls" in summary[1]
    assert money(usage.cost({"scripted-demo": price}) or 0) in summary[1]
    for kind, tally in usage.kinds.items():
        assert f"| `{kind}` | {tally.calls} / {tally.calls} |" in comment


def test_without_a_price_the_comment_shows_tokens_but_no_money(tmp_path: Path) -> None:
    root = tmp_path / "greeter"
    root.mkdir()
    comment, _pull = example_run.run_example(root, prices={})
    assert "Usage — this pass: 11 model calls" in comment and "$" not in comment


def test_the_job_summary_shows_usage_by_kind_and_cost(tmp_path: Path) -> None:
    store = PlanningHistoryStore(tmp_path, "o/r", "7")
    for entry in TWO_RUNS:
        fields = {k: v for k, v in entry.items() if k not in ("type", "run_id")}
        PlanningHistoryStore(tmp_path, "o/r", "7", entry["run_id"]).append(entry["type"], **fields)
    outcome = CiOutcome(status="completed", issue_number=7, model_calls=2, tokens_used=4_200)
    facts = SummaryFacts(history=store, prices=PRICE, budget=BudgetConfig(max_model_calls=10))
    text = render_summary(outcome, facts)
    assert "**Usage**" in text and "this pass: 2 model calls" in text and "issue so far: 4" in text
    assert "| `execute` | 2 / 3 |" in text and money((4_000 * 2 + 200 * 8) / 1e6) in text
    assert "**Usage**" not in render_summary(
        outcome.model_copy(update={"status": "skipped"}), facts
    )


def history_entries(root: Path) -> list[dict[str, Any]]:
    [path] = (root / "planning_history").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------------------- the plan graph


def plan(*task_ids: str) -> Plan:
    return Plan.model_validate(plan_doc(*task_ids))


def test_the_graph_has_every_task_its_dependencies_and_status_colours() -> None:
    tasks = [
        TaskView(id="a", description="Read", status="completed"),
        TaskView(id="b", description="Write", status="in_progress"),
        TaskView(id="c", description="Test", status="pending"),
    ]
    graph = render_graph(tasks, plan("a", "b", "c"))
    assert '  t0["a: Read (done)"]:::completed' in graph
    assert '  t1["b: Write (in progress)"]:::in_progress' in graph
    assert "  t0 --> t1" in graph and "  t1 --> t2" in graph
    assert "classDef completed fill:#d3f9d8" in graph and "classDef failed" in graph


HOSTILE = (
    'x"] --> evil["pwned"]\nclick t0 call alert(1)\n```\n</details><img src=x onerror=alert(1)>'
    " `code` #quot; @maintainer fixes #1 {{secrets}} %%{init: {'securityLevel':'loose'}}%%"
)
GRAPH_LINE = re.compile(
    r'  t\d+\["(?:[A-Za-z0-9 .,:\-_/()\'!?+=…]|#\d+;)*"\]:::(completed|in_progress|failed|pending)'
    r"|  t\d+ --> t\d+|  classDef \w+ [\w:#,]+|flowchart TD"
)


def test_model_text_cannot_break_out_of_the_graph_the_fence_or_the_comment() -> None:
    """Attack: a task id and description written to end the Mermaid label, add nodes and click
    callbacks, close the code fence and the <details>, inject HTML and a Mermaid init directive.
    Every line of the graph must still be one of the shapes planner writes."""
    doc = plan_doc("task_1", "task_2")
    doc["task_decomposition"]["subtasks"][1]["description"] = HOSTILE
    tasks = [
        TaskView(id="task_1", description="fine", status="completed"),
        TaskView(id="task_2", description=HOSTILE, status="failed"),
    ]
    result = PassResult(status="failed", plan=Plan.model_validate(doc), tasks=tasks)
    body = render_tracking(TrackingView(state="failed", result=result))
    section = body[body.index("<summary>Plan graph</summary>") :]
    section = section[: section.index("</details>") + len("</details>")]
    graph = section.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    assert [line for line in graph.splitlines() if not GRAPH_LINE.fullmatch(line)] == []
    assert section.count("```") == 2 and section.count("</details>") == 1
    assert "x#34;#93; --#62; evil#91;#34;pwned" in graph  # shown, not interpreted
    assert len(graph.splitlines()) == 1 + 2 + 1 + 4


def test_labels_are_one_line_and_short() -> None:
    label = mermaid_label("a\nb\tc " + "x" * 200, limit=20)
    assert (
        "\n" not in label and label.startswith("a b c ") and label.endswith("…".encode().decode())
    )
    assert mermaid_label("café #1") == "caf#233; #35;1"


def test_the_hostile_plan_reaches_the_issue_inert_end_to_end(tmp_path: Path) -> None:
    """The same attack through a whole run: the model's plan carries it into the comment."""
    script = demo_script()
    document = json.loads(script[0].content or "{}")
    document["task_decomposition"]["subtasks"][1]["description"] = HOSTILE
    script[0] = dataclasses.replace(script[0], content=json.dumps(document))
    root = tmp_path / "greeter"
    root.mkdir()
    comment, _pull = example_run.run_example(root, script)
    graph = comment.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    assert [line for line in graph.splitlines() if not GRAPH_LINE.fullmatch(line)] == []
    fences = [line for line in comment.splitlines() if line.lstrip().startswith("```")]
    assert fences == ["```mermaid", "```"] and "<img" not in comment


def test_no_plan_no_graph() -> None:
    assert graph_section(None) == ""
    assert graph_section(PassResult(status="failed")) == ""
