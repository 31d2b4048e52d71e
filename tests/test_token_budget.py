"""Token counting for the seed's budget (benchmarks/bench_tokens.py) and compact schemas."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from planner.evaluation.tokens import message_tokens, qwen_encoder, request_tokens
from planner.model.schemas import compact_schema, json_schema_of
from planner.plan.documents import PlanningReply

FIXED = [
    {"role": "system", "content": "You are planner."},
    {"role": "user", "content": "Fix the bug in pager.py: page 2 repeats an item."},
]


def test_counts_a_fixed_prompt_with_the_qwen_tokenizer() -> None:
    encode = qwen_encoder()
    # 31 is what llama-server's /tokenize of the local Qwen2.5 models answers for this text.
    assert encode("Hello world") == 2
    layout = (
        "<|im_start|>system\nYou are planner.<|im_end|>\n"
        "<|im_start|>user\nFix the bug in pager.py: page 2 repeats an item.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert message_tokens(FIXED, encode) == encode(layout) == 31


def test_request_tokens_split_messages_schema_and_tools() -> None:
    encode = qwen_encoder()
    schema = {"type": "object", "properties": {"done": {"type": "boolean"}}}
    body = {
        "messages": FIXED,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    counted = request_tokens("completion", body, encode)
    assert counted.messages == 31
    assert counted.schema == encode(json.dumps(schema)) > 0
    assert counted.tools == 0


def test_compact_schema_keeps_every_constraint_and_field_names() -> None:
    full = PlanningReply.model_json_schema()
    compact = json_schema_of(PlanningReply)
    text = json.dumps(compact)
    assert '"title"' not in text.replace('"title": {', "")  # no pydantic titles left
    assert len(text) < len(json.dumps(full)) * 0.75
    subtask = compact["$defs"]["Subtask"]
    assert set(subtask["properties"]) == set(full["$defs"]["Subtask"]["properties"])
    assert subtask["required"] == full["$defs"]["Subtask"]["required"]
    assert (
        subtask["properties"]["id"]["pattern"]
        == full["$defs"]["Subtask"]["properties"]["id"]["pattern"]
    )


def test_compact_schema_keeps_a_field_named_like_a_keyword() -> None:
    schema = {
        "properties": {
            "title": {"type": "string", "title": "Title"},
            "default": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "properties": {"title": {"type": "string"}, "default": {"type": "integer"}},
        "required": ["title"],
    }


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_tokens.py"
    spec = importlib.util.spec_from_file_location("bench_tokens", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_tokens"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    return bench


def test_planners_own_share_meets_the_seeds_targets_with_margin() -> None:
    """planning-process.md §13.4 (planning < 2,000 tokens, each reflection or decision < 500),
    with a 10% margin, for planner's own share of each request: counted with the real
    tokenizer on a realistic issue (16 lines) and a six-task plan (benchmarks/bench_tokens.py),
    every message token that is not the issue's text, the model's plan or the diff judged."""
    bench = _bench()
    encode = qwen_encoder()
    assert 8 <= len(bench.ISSUE.body.splitlines()) <= 20
    assert len(bench.PLAN["task_decomposition"]["subtasks"]) == 6
    assert (bench.PLANNING_TARGET, bench.DECISION_TARGET) == (1_800, 450)
    for replanning, refinement in ((True, True), (True, False), (False, True)):
        measured = bench.measure_shares(replanning, "separate", refinement, encode)
        planning = bench.planning_phase(measured)
        assert all(m.issue > 150 for m in planning)  # the realistic issue is shown whole
        own = sum(m.own for m in planning)
        assert own <= bench.PLANNING_TARGET, (replanning, refinement, own)
        decisions = [m for m in measured if m.counted.kind in bench.DECISION_KINDS]
        assert len(decisions) >= 3
        for decision in decisions:
            assert decision.own <= bench.DECISION_TARGET, (decision.counted.kind, decision.own)


def test_a_long_issue_is_cut_to_its_budget_and_the_prompt_says_so() -> None:
    """What grows with the issue is cut: a 400-line issue body costs the planning phase no more
    than its budgets (1,500 tokens in the planning request, 400 where the plan is judged), and
    each request says the text was cut."""
    bench = _bench()
    encode = qwen_encoder()
    lines = [f"Step {n}: the report lists every entry of page {n} twice." for n in range(400)]
    long_issue = bench.ISSUE.model_copy(update={"body": "\n".join(lines)})
    requests = bench.pass_requests(True, "separate", True, long_issue)
    planning = next(body for kind, body in requests if kind == "planning")
    review = next(body for kind, body in requests if kind == "replan_review")
    planning_text = planning["messages"][-1]["content"]
    review_text = review["messages"][-1]["content"]
    assert "[planner: issue text cut to 1,500 tokens here" in planning_text
    assert "the full text is on the issue" in planning_text
    assert "[planner: issue text cut to 400 tokens here" in review_text
    assert "Step 399" not in planning_text and "Step 0:" in planning_text
    whole = encode("\n".join(lines))
    counted = [request_tokens(kind, body, encode).messages for kind, body in requests[:2]]
    assert whole > 5_000 and sum(counted) < 1_500 + 400 + 2_000


def test_the_final_evaluation_lists_each_action_on_one_short_line() -> None:
    """The transcript in the final evaluation is planner's summary: a line per action with the
    tool, its path and how it went (the failed read keeps its error), no file contents."""
    bench = _bench()
    requests = bench.pass_requests(True, "separate", True)
    body = next(body for kind, body in requests if kind == "replan_reflection")
    text = body["messages"][-1]["content"]
    assert "- read_file CONTRIBUTING.md: ERROR 'CONTRIBUTING.md' does not exist" in text
    assert "- edit_file README.md, docs/index.md, CHANGELOG.md, CONTRIBUTING.md: ok" in text
    assert "oldText" not in text and "Run the tests with" not in text


def test_a_long_plan_is_cut_in_its_outline_and_the_outline_says_so() -> None:
    """The plan's outline grows with the plan: 80 tasks are cut to PLAN_OUTLINE_TOKENS in the
    review and the judgements, the first tasks kept, and a note says where the rest is."""
    from planner.plan.documents import PlanningReply
    from planner.text.budget import PLAN_OUTLINE_TOKENS
    from planner.text.prompts import render
    from tests.plans import plan_doc

    encode = qwen_encoder()
    ids = [f"task_{n}" for n in range(1, 81)]
    plan = PlanningReply.model_validate(plan_doc(*ids, chain=False)).plan()
    outline = render("plan_outline.md.j2", plan=plan)
    assert "- task_1 (low): Do task_1" in outline and "Do task_80" not in outline
    assert "[planner: plan outline cut to 700 tokens here" in outline
    assert "the whole plan is in the issue's history]" in outline
    assert encode(outline) <= PLAN_OUTLINE_TOKENS * 1.2
    short = PlanningReply.model_validate(plan_doc(*ids[:6])).plan()
    assert "[planner:" not in render("plan_outline.md.j2", plan=short)
