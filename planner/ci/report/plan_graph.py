"""The plan as a Mermaid graph for the tracking comment: tasks, dependencies, status colours.

Task ids and descriptions come from the model, so they never become Mermaid syntax: nodes are
named t0, t1, … by position, and a label keeps letters, digits, spaces and plain punctuation;
every other character is written as a Mermaid entity (`#60;`), so no quote, bracket, backtick,
newline or HTML from the model can end the label, the code block or the comment's markup.
"""

from __future__ import annotations

from planner.outcome.result import PassResult, TaskView
from planner.plan.documents import Plan

LABEL_CHARS = 60
SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:-_/()'!?+=…")
STATUS_STYLES = {
    "completed": "fill:#d3f9d8,stroke:#2b8a3e,color:#1b4332",
    "in_progress": "fill:#fff3bf,stroke:#f08c00,color:#5c3d00",
    "failed": "fill:#ffe3e3,stroke:#c92a2a,color:#5c0011",
    "pending": "fill:#f1f3f5,stroke:#868e96,color:#212529",
    "waiting": "fill:#e7f5ff,stroke:#1971c2,color:#0b3a66",
}
STATUS_WORDS = {
    "completed": "done",
    "in_progress": "in progress",
    "failed": "failed",
    "pending": "to do",
    "waiting": "waiting for approval",
}


def mermaid_label(text: str, limit: int = LABEL_CHARS) -> str:
    """Untrusted text as the inside of a quoted Mermaid label: one line, inert."""
    line = " ".join(text.split())
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return "".join(c if c in SAFE else f"#{ord(c)};" for c in line)


def dependencies(plan: Plan | None) -> dict[str, list[str]]:
    """Task id → the ids it waits for, as the plan states them."""
    if plan is None:
        return {}
    return {task.id: list(task.dependencies) for task in plan.task_decomposition.subtasks}


def render_graph(tasks: list[TaskView], plan: Plan | None) -> str:
    """The flowchart source (without the fence); '' without tasks."""
    if not tasks:
        return ""
    node = {task.id: f"t{index}" for index, task in enumerate(tasks)}
    lines = ["flowchart TD"]
    for task in tasks:
        label = mermaid_label(f"{task.id}: {task.description}")
        shown = task.shown_status  # as the checklist shows it: a held change waits
        lines.append(f'  {node[task.id]}["{label} ({STATUS_WORDS[shown]})"]:::{shown}')
    for task in tasks:
        for needed in dependencies(plan).get(task.id, []):
            if needed in node:
                lines.append(f"  {node[needed]} --> {node[task.id]}")
    waits = any(task.waiting for task in tasks)
    lines += [
        f"  classDef {status} {style}"
        for status, style in STATUS_STYLES.items()
        if status != "waiting" or waits  # the class of a held change only when one is shown
    ]
    return "\n".join(lines)


def graph_section(result: PassResult | None) -> str:
    """The collapsed section under the checklist; '' when there is no plan to draw."""
    if result is None:
        return ""
    graph = render_graph(result.tasks, result.plan)
    if not graph:
        return ""
    return f"<details><summary>Plan graph</summary>\n\n```mermaid\n{graph}\n```\n\n</details>"
