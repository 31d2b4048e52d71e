"""What the model calls cost: this pass and the issue so far, by call kind, from the history.

Every model request is a `model_call` entry (kind, model, prompt and completion tokens, run id),
so the figures survive restarts and cover every pass of the issue. Money is shown only when
`llm.prices` knows every model the calls used (as `planner eval` prices its runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planner.config import BudgetConfig, ModelPrice


@dataclass
class Tally:
    """Calls and tokens of one group of model calls."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0

    def add(self, entry: Mapping[str, Any]) -> None:
        self.calls += 1
        self.prompt += _count(entry.get("prompt_tokens"))
        self.completion += _count(entry.get("completion_tokens"))

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion


@dataclass
class Usage:
    """Model calls grouped by call kind and by model."""

    total: Tally = field(default_factory=Tally)
    kinds: dict[str, Tally] = field(default_factory=dict)
    models: dict[str, Tally] = field(default_factory=dict)

    def add(self, entry: Mapping[str, Any]) -> None:
        self.total.add(entry)
        self.kinds.setdefault(str(entry.get("kind") or "other"), Tally()).add(entry)
        self.models.setdefault(str(entry.get("model") or ""), Tally()).add(entry)

    def cost(self, prices: Mapping[str, ModelPrice]) -> float | None:
        """USD; None when a model used has no price (or nothing was called)."""
        if not self.models or any(model not in prices for model in self.models):
            return None
        return sum(_priced(tally, prices[model]) for model, tally in self.models.items())


def _count(value: object) -> int:
    """A token count from an entry; anything else (a corrupt entry) counts as none."""
    return value if isinstance(value, int) and value >= 0 else 0


def _priced(tally: Tally, price: ModelPrice) -> float:
    return (
        tally.prompt * price.prompt_per_million + tally.completion * price.completion_per_million
    ) / 1_000_000


def usage_of(entries: Iterable[Mapping[str, Any]], run_id: str | None = None) -> Usage:
    """The model calls of the history, or of one run (`run_id`) of it."""
    usage = Usage()
    for entry in entries:
        if entry.get("type") == "model_call" and run_id in (None, entry.get("run_id")):
            usage.add(entry)
    return usage


def last_run_id(entries: Iterable[Mapping[str, Any]]) -> str:
    """The run id of the newest run_start entry ('' without one)."""
    runs = [str(e.get("run_id", "")) for e in entries if e.get("type") == "run_start"]
    return runs[-1] if runs else ""


@dataclass
class CostReport:
    """This pass and the issue so far, for the job summary and the tracking comment."""

    this_pass: Usage
    issue: Usage
    prices: Mapping[str, ModelPrice]
    budget: BudgetConfig

    def headline(self) -> str:
        """One line: the pass, the issue so far, the budget left."""
        parts = [f"this pass: {_tally_text(self.this_pass, self.prices)}"]
        if self.issue.total.calls != self.this_pass.total.calls:
            parts.append(f"issue so far: {_tally_text(self.issue, self.prices)}")
        return "; ".join(parts) + f" · budget left: {self.budget_left()}"

    def budget_left(self) -> str:
        calls = max(self.budget.max_model_calls - self.this_pass.total.calls, 0)
        tokens = max(self.budget.max_total_tokens - self.this_pass.total.tokens, 0)
        return (
            f"{calls:,} of {self.budget.max_model_calls:,} model calls, "
            f"{tokens:,} of {self.budget.max_total_tokens:,} tokens per pass"
        )

    def table(self) -> list[str]:
        """Calls and tokens by call kind: this pass and the issue so far."""
        lines = [
            "| call kind | calls (pass / issue) | prompt tokens (pass / issue) "
            "| completion tokens (pass / issue) |",
            "| --- | --- | --- | --- |",
        ]
        for kind in sorted(self.issue.kinds, key=lambda k: -self.issue.kinds[k].tokens):
            mine, all_ = self.this_pass.kinds.get(kind, Tally()), self.issue.kinds[kind]
            lines.append(
                f"| {_cell(kind)} | {mine.calls:,} / {all_.calls:,} | {mine.prompt:,} / "
                f"{all_.prompt:,} | {mine.completion:,} / {all_.completion:,} |"
            )
        return lines


def cost_report(
    entries: Sequence[Mapping[str, Any]],
    run_id: str,
    prices: Mapping[str, ModelPrice],
    budget: BudgetConfig,
) -> CostReport | None:
    """The report for run `run_id`; None when the issue has no model calls yet."""
    issue = usage_of(entries)
    if not issue.total.calls:
        return None
    return CostReport(usage_of(entries, run_id), issue, prices, budget)


def _tally_text(usage: Usage, prices: Mapping[str, ModelPrice]) -> str:
    total = usage.total
    text = (
        f"{total.calls:,} model calls, {total.tokens:,} tokens "
        f"({total.prompt:,} prompt + {total.completion:,} completion)"
    )
    cost = usage.cost(prices)
    return f"{text}, {money(cost)}" if cost is not None else text


def money(usd: float) -> str:
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"


def _cell(text: str) -> str:
    """A call kind as a table cell (kinds are planner's names; a corrupt entry's is not)."""
    cleaned = "".join(c for c in text if c.isalnum() or c in "_-.")[:40]
    return f"`{cleaned}`" if cleaned else "`other`"


def render_usage_details(report: CostReport | None) -> str:
    """The tracking comment's footer: the headline, the table by kind folded under it."""
    if report is None:
        return ""
    table = "\n".join(report.table())
    return f"<details><summary>Usage — {report.headline()}</summary>\n\n{table}\n\n</details>"


def render_usage_section(report: CostReport | None) -> list[str]:
    """The job summary's usage section (markdown lines)."""
    if report is None:
        return []
    return ["**Usage**", "", report.headline(), "", *report.table()]
