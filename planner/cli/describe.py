"""How the command line shows a pass's result (`planner run`, `planner plan`, the demo)."""

from __future__ import annotations

from planner.outcome.result import PassResult, render_checklist


def describe(result: PassResult) -> str:
    usage = result.usage
    lines = [render_checklist(result), f"Status: {result.status} ({result.stop_reason})"]
    lines += [f"  {message}" for message in result.messages if message]
    lines += [f"  ? {question}" for question in result.questions]
    judged = result.result_quality
    if judged is not None and judged.suggestions:  # the final quality judgement's advice
        lines += ["Suggestions of the final quality judgement:"]
        lines += [f"  - {suggestion}" for suggestion in judged.suggestions]
    lines.append(
        f"Model calls: {usage.model_calls}, tokens: {usage.total_tokens} "
        f"({usage.prompt_tokens} prompt + {usage.completion_tokens} completion), "
        f"actions: {result.actions}"
    )
    lines.append(f"History: {result.history_path}")
    return "\n".join(lines)
