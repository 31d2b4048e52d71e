"""Token counting for the seed's budget (benchmarks/bench_tokens.py) and compact schemas."""

from __future__ import annotations

import json

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


def test_the_default_planning_phase_is_under_the_seeds_target_with_refinement_on_and_off() -> None:
    """planning-process.md §13.4: < 2,000 message tokens before the first action, < 500 per
    decision request, counted with the real tokenizer on the benchmark's pass
    (benchmarks/bench_tokens.py). With refinement on, the plan review and the plan judgement
    used to read the same plan in two requests (about 2,300 tokens)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_tokens.py"
    spec = importlib.util.spec_from_file_location("bench_tokens", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    encode = qwen_encoder()
    for refinement in (True, False):
        counted = bench.measure(True, "separate", refinement, encode)
        planning = bench.planning_phase(counted)
        assert [c.kind for c in planning] == ["planning", "replan_review"]
        assert sum(c.messages for c in planning) < bench.PLANNING_TARGET, refinement
        decisions = [c for c in counted if c.kind in bench.DECISION_KINDS]
        assert decisions and all(c.messages < bench.DECISION_TARGET for c in decisions)
