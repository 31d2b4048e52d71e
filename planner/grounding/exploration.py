"""A bounded, read-only look at the repository before the plan is made.

The model may call read_file, list_directory and search_files — nothing that writes or runs —
at most `max_actions` times and within `max_tokens`, then reports its findings in a few
sentences, which the planning prompt and the history carry. Any other tool name is refused
without being run. The pass budget wins: exploration stops early when the pass would be left
without room to plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from planner.config import ExplorationConfig, PlannerConfig
from planner.core.errors import ApiError, ModelBehaviourError
from planner.core.interfaces import ChatReply, ToolCall, ToolResult, ToolSpec
from planner.core.tool_names import READ_ONLY_TOOLS
from planner.model.conversation import assistant, tool_message, user
from planner.outcome.result import Usage
from planner.text.issue import IssueContext, prompt_view, sanitize_untrusted
from planner.text.prompts import render

REPORT = ToolSpec(
    name="report_findings",
    description="End the exploration with what you found (a few sentences).",
    parameters={
        "type": "object",
        "properties": {"findings": {"type": "string", "description": "Files, symbols, facts"}},
        "required": ["findings"],
    },
)
RESERVED_MODEL_CALLS = 3
"""Model calls the pass keeps for planning; exploration stops before using them."""


class ExplorationPort(Protocol):
    """What exploration needs from the pass (the coordinator has all of it)."""

    config: PlannerConfig
    model: Any
    tools: Any
    usage: Usage
    issue: IssueContext


@dataclass
class Exploration:
    findings: str = ""
    actions: list[dict[str, Any]] = field(default_factory=list)
    model_calls: int = 0
    tokens: int = 0
    stopped: str = ""

    def record(self) -> dict[str, Any]:
        return {
            "findings": self.findings,
            "actions": self.actions,
            "model_calls": self.model_calls,
            "tokens": self.tokens,
            "stopped": self.stopped,
        }


def explore(port: ExplorationPort, repository_map: str) -> Exploration:
    """Run the exploration; never raises for the model's or a tool's misbehaviour."""
    limits = port.config.planning.exploration
    run = _Run(port, limits, Exploration())
    run.messages = [
        {"role": "system", "content": render("exploration_system.md.j2")},
        user(_request(port, limits, repository_map)),
    ]
    run.loop()
    run.result.findings = sanitize_untrusted(run.result.findings.strip(), limits.max_summary_chars)
    return run.result


def _request(port: ExplorationPort, limits: ExplorationConfig, repository_map: str) -> str:
    return render(
        "exploration_request.md.j2",
        issue=prompt_view(port.issue),
        repository=repository_map,
        max_actions=limits.max_actions,
        summary_chars=limits.max_summary_chars,
    )


@dataclass
class _Run:
    port: ExplorationPort
    limits: ExplorationConfig
    result: Exploration
    messages: list[dict[str, Any]] = field(default_factory=list)

    def loop(self) -> None:
        tools = [s for s in self.port.tools.specs() if s.name in READ_ONLY_TOOLS] + [REPORT]
        while not self.result.stopped:
            if (reason := self._limit_reached()) is not None:
                return self._final_report(reason)
            reply = self._ask(tools)
            if reply is None:
                return
            self._take(reply)

    def _take(self, reply: ChatReply) -> None:
        self.messages.append(assistant(reply.content, reply.tool_calls))
        if not reply.tool_calls:
            self.result.findings, self.result.stopped = reply.content or "", "answered"
            return
        for call in reply.tool_calls:
            if call.name == REPORT.name:
                self.result.findings = str(call.arguments.get("findings", ""))
                self.result.stopped = "reported"
                answer = "noted"
            else:
                answer = self._act(call)
            self.messages.append(tool_message(call.id, answer))

    def _act(self, call: ToolCall) -> str:
        if len(self.result.actions) >= self.limits.max_actions:
            return "ERROR: the exploration's action limit is reached; report your findings"
        if call.name not in READ_ONLY_TOOLS:
            result = ToolResult(
                ok=False,
                error=f"{call.name!r} cannot be used while exploring: only read_file, "
                "list_directory and search_files (nothing can be changed before the plan)",
            )
        else:
            result = self.port.tools.call(call.name, call.arguments)
        self.result.actions.append(
            {"tool": call.name, "arguments": call.arguments, "ok": result.ok}
        )
        return result.for_model()[: self.limits.max_result_chars]

    def _limit_reached(self) -> str | None:
        if len(self.result.actions) >= self.limits.max_actions:
            return f"{self.limits.max_actions} actions"
        if self.result.tokens >= self.limits.max_tokens:
            return f"{self.limits.max_tokens} tokens"
        return None

    def _final_report(self, reason: str) -> None:
        self.messages.append(user(render("exploration_report.md.j2")))
        self.result.stopped = f"limit: {reason}"
        reply = self._ask([REPORT])  # the tool stays offered: a transcript with calls needs it
        if reply is None:
            return
        reported = [c for c in reply.tool_calls if c.name == REPORT.name]
        self.result.findings = (
            str(reported[0].arguments.get("findings", "")) if reported else reply.content or ""
        )

    def _ask(self, tools: list[ToolSpec]) -> ChatReply | None:
        if not self._pass_budget_allows():
            self.result.stopped = self.result.stopped or "pass budget"
            return None
        before = self.port.usage.total_tokens
        try:
            reply: ChatReply = self.port.model.chat("explore", self.messages, tools)
        except (ApiError, ModelBehaviourError) as exc:  # exploration is optional: plan anyway
            self.result.stopped = f"model error: {type(exc).__name__}"
            return None
        finally:
            self.result.model_calls += 1
            self.result.tokens += self.port.usage.total_tokens - before
        return reply

    def _pass_budget_allows(self) -> bool:
        budget, usage = self.port.config.budget, self.port.usage
        calls_left = budget.max_model_calls - usage.model_calls
        tokens_left = budget.max_total_tokens - usage.total_tokens
        return calls_left > RESERVED_MODEL_CALLS and tokens_left > self.limits.max_tokens
