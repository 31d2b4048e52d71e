"""Compact text views of history for prompts: what happened before, without the noise."""

from __future__ import annotations

import json
from typing import Any

from planner.memory.history import latest_plan_of
from planner.text.issue import sanitize_untrusted

DIGEST_CHARS = 12_000


def history_digest(entries: list[dict[str, Any]], limit: int = DIGEST_CHARS) -> str:
    """Past plans, task outcomes, reflections, revisions, questions and answers, newest kept."""
    lines = [sanitize_untrusted(line, 4_000) for entry in entries if (line := _describe(entry))]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    return "[older history omitted]\n" + text[-limit:].split("\n", 1)[-1]


def _describe(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    stamp = str(entry.get("timestamp", ""))[:19]
    describe = _DESCRIBERS.get(str(kind))
    return f"{stamp} {describe(entry)}" if describe else ""


def _plan(entry: dict[str, Any]) -> str:
    plan = latest_plan_of(entry)
    goal = plan.get("goal_understanding", {}).get("main_objective", "?")
    tasks = [
        f"{t.get('id')}: {t.get('description')}"
        for t in plan.get("task_decomposition", {}).get("subtasks", [])
    ]
    head = (
        "PLAN"
        if entry.get("type") == "plan"
        else f"REVISION #{entry.get('revision')} ({entry.get('reason', '')})"
    )
    return f"{head} goal={goal!r} tasks=[{'; '.join(tasks)}]"


def _task(entry: dict[str, Any]) -> str:
    if entry.get("status") == "in_progress":
        return ""
    return f"TASK {entry.get('task_id')} {entry.get('status')}: {entry.get('summary', '')}"


def _reflection(entry: dict[str, Any]) -> str:
    reflection = entry.get("evaluation", {}).get("reflection", {})
    return f"REFLECTION {reflection.get('status')}: {reflection.get('evaluation', '')}"


def _clarification(entry: dict[str, Any]) -> str:
    error = entry.get("error", {})
    questions = error.get("clarification_needed", [])
    return f"ASKED THE USER: {error.get('message', '')} questions={questions}"


def _completion(entry: dict[str, Any]) -> str:
    return f"COMPLETION done={entry.get('done')} {json.dumps(entry.get('summary', {}))}"


def _human(entry: dict[str, Any]) -> str:
    return f"USER INSTRUCTION (untrusted data): {str(entry.get('text', ''))[:2000]!r}"


def _intervention(entry: dict[str, Any]) -> str:
    summary = entry.get("document", {}).get("summary", {})
    return f"STOPPED FOR HUMAN INTERVENTION: {summary.get('reason', '')}"


def _replan(entry: dict[str, Any]) -> str:
    if entry.get("outcome") in ("no_replan", "superseded"):
        return ""  # routine "carry on" decisions would only crowd out the history
    decision = entry.get("llm_decision") or {}
    level = f" level {entry['level']}" if entry.get("level") else ""
    why = entry.get("override_reason") or decision.get("reasoning", "")
    return (
        f"REPLAN DECISION at {entry.get('phase')} ({entry.get('trigger')}):{level} "
        f"{entry.get('outcome')}: {why}"
    )


def _quality(entry: dict[str, Any]) -> str:
    score = entry.get("score")
    verdict = "acceptable" if entry.get("acceptable") else "NOT acceptable"
    return (
        f"QUALITY JUDGEMENT of the {entry.get('subject', 'plan')}: "
        f"{'unscored' if score is None else f'{score}/100'}, {verdict}; "
        f"issues={entry.get('issues', [])} suggestions={entry.get('suggestions', [])}"
    )


def _refinement(entry: dict[str, Any]) -> str:
    if entry.get("decision") == "accept":
        return ""  # the judgement above already says it was good enough
    return (
        f"QUALITY DECISION on the {entry.get('subject', 'plan')}: {entry.get('decision')} "
        f"(rule {entry.get('priority')}: {entry.get('rule')})"
    )


def assumptions_in_force(entries: list[dict[str, Any]]) -> list[str]:
    """Assumptions planner proceeds on because nobody answered (or no more questions were
    allowed), so every later prompt works from them rather than only a comment saying so."""
    found: list[str] = []
    for entry in entries:
        assumed = entry.get("type") == "assumed" or entry.get("resolution") == "assumed"
        if entry.get("type") in ("assumed", "clarification_resolved") and assumed:
            found += [sanitize_untrusted(str(a), 1_000) for a in entry.get("assumptions") or []]
    return found


def _assumed(entry: dict[str, Any]) -> str:
    return f"PLANNED ON ASSUMPTIONS ({entry.get('reason', '')}): {entry.get('assumptions', [])}"


def _resolved(entry: dict[str, Any]) -> str:
    if entry.get("resolution") == "assumed":
        return f"NO ANSWER IN TIME; PROCEEDING ON ASSUMPTIONS: {entry.get('assumptions', [])}"
    return "THE USER ANSWERED THE QUESTIONS (see USER INSTRUCTION)"


_DESCRIBERS = {
    "assumed": _assumed,
    "plan": _plan,
    "revision": _plan,
    "task": _task,
    "reflection": _reflection,
    "clarification": _clarification,
    "completion": _completion,
    "human_input": _human,
    "human_intervention": _intervention,
    "replan_decision": _replan,
    "clarification_resolved": _resolved,
    "quality_judgement": _quality,
    "refinement_decision": _refinement,
}


def task_actions_digest(
    actions: list[dict[str, Any]], limit: int = 6_000, *, first_lines: bool = False
) -> str:
    """Actions already taken for a task (possibly in earlier runs), for resuming it; each
    result cut to 300 characters. `first_lines` (for a judgement of how the work went): each
    result's first line, which says how it went, and argument values to their start."""
    lines = []
    values = FIRST_LINES_VALUE_CHARS if first_lines else ARGUMENT_VALUE_CHARS
    for action in actions:
        call = action.get("execution", {}).get("function_call", {})
        outcome = "ok" if action.get("ok") else f"ERROR {action.get('error')}"
        arguments = _argument_text(call.get("arguments", {}), values)
        result = str(action.get("result", ""))
        result = _first_line(result) if first_lines else result[:300]
        lines.append(
            f"- {call.get('name')}({arguments[:300]}) -> {outcome}{': ' * bool(result)}{result}"
        )
    text = sanitize_untrusted("\n".join(lines))
    return text if len(text) <= limit else "[earlier actions omitted]\n" + text[-limit:]


def actions_outline(actions: list[dict[str, Any]]) -> str:
    """One short line per action for the judgement of a whole run: the tool, what it worked
    on (its path, or its first argument's start) and how it went (an error's first line);
    consecutive successes of one tool share a line. The task results say what was done, the
    repository holds what was written."""
    lines: list[str] = []
    last_ok = ""
    for action in actions:
        call = action.get("execution", {}).get("function_call", {})
        name, target = str(call.get("name")), _target(call.get("arguments", {}))
        if not action.get("ok"):
            lines.append(f"- {name} {target}: ERROR {_first_line(str(action.get('error')))}")
            last_ok = ""
        elif name == last_ok:
            lines[-1] = lines[-1].removesuffix(": ok") + f", {target}: ok"
        else:
            lines.append(f"- {name} {target}: ok")
            last_ok = name
    return sanitize_untrusted("\n".join(lines))


def _target(arguments: Any) -> str:
    """What an action worked on: its path, else its first argument's start."""
    if not isinstance(arguments, dict) or not arguments:
        return ""
    value = arguments.get("path", next(iter(arguments.values())))
    return str(_short_value(str(value), FIRST_LINES_VALUE_CHARS))[:120]


ARGUMENT_VALUE_CHARS = 80
FIRST_LINES_VALUE_CHARS = 40


def _first_line(text: str, limit: int = 160) -> str:
    line = text.split("\n", 1)[0][:limit]
    return line if line == text else f"{line} …"


def _argument_text(arguments: Any, value_chars: int = ARGUMENT_VALUE_CHARS) -> str:
    """`key=value, ...` with long values (a written file's content) cut to their start and
    length: the digest says what was done; the repository holds what was written."""
    if not isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    return ", ".join(f"{key}={_value_text(value, value_chars)}" for key, value in arguments.items())


def _value_text(value: Any, limit: int) -> str:
    """A value as JSON; in a judgement's digest (limit below ARGUMENT_VALUE_CHARS) a list or
    object (edit_file's edits) is cut to its start as well, as a string is."""
    text = json.dumps(_short_value(value, limit), ensure_ascii=False)
    if isinstance(value, (list, dict)) and limit < ARGUMENT_VALUE_CHARS and len(text) > limit:
        return text[:limit] + "…"
    return text


def _short_value(value: Any, limit: int = ARGUMENT_VALUE_CHARS) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return (
            f"{value[:limit]}…({len(value)} chars)"
            if limit >= ARGUMENT_VALUE_CHARS
            else value[:limit] + "…"
        )
    return value
