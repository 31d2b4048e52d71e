"""The phase interface: a phase plugged in from outside sees every hook point and can steer the
pass with StopPass / PlanChanged, as the refinement, interactive and approval phases will."""

from __future__ import annotations

from typing import Any

from planner.core.interfaces import ToolCall, ToolResult, ToolSpec
from planner.engine.context import PassContext
from planner.engine.phase import Phase, PlanEvent, Request
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import PassResult
from planner.plan.documents import CompletionReply, PlanningReply
from planner.run.phases import pass_phases
from planner.run.runner import PassSetup, run_pass
from tests.harness import ISSUE, Harness
from tests.plans import completed, finish, planned, planning, review_ok, write


def run_with(harness: Harness, *phases: Phase, **overrides: Any) -> PassResult:
    setup = PassSetup(
        config=harness.config(**overrides),
        workspace=harness.workspace,
        reporter=harness.reporter,
        clock=harness.clock,
        phases=phases,
    )
    return run_pass(setup, ISSUE)


class Recorder(Phase):
    """Writes down every hook call, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, run: PassContext) -> None:
        self.calls.append("start")

    def before_planning(self, run: PassContext, instruction: str) -> str:
        self.calls.append("before_planning")
        return instruction

    def addendum(self, run: PassContext, request: Request) -> str:
        self.calls.append(f"addendum:{request}")
        return ""

    def tools(self, run: PassContext) -> list[ToolSpec]:
        self.calls.append("tools")
        return []

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        assert (reply is not None) == (event == "planned")
        self.calls.append(f"after_plan:{event}")

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        self.calls.append(f"before_action:{call.name}")
        return None

    def after_action(
        self, run: PassContext, task_id: str, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        self.calls.append(f"after_action:{call.name}:{result.ok}")
        return result

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        self.calls.append(f"after_task:{task_id}:{status}")

    def before_completion(self, run: PassContext) -> None:
        self.calls.append("before_completion")

    def on_completion_reply(self, run: PassContext, reply: CompletionReply) -> None:
        self.calls.append(f"on_completion_reply:{reply.done}")


def test_hooks_run_in_pass_order(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    recorder = Recorder()
    result = run_with(harness, recorder)
    assert result.status == "completed" and (harness.workspace / "a.txt").exists()
    assert recorder.calls == [
        "start",
        "before_planning",
        "addendum:planning",
        "tools",  # a plan may name a phase's tool (run_tests): it is checked against them
        "after_plan:planned",
        "addendum:execute",
        "tools",
        "before_action:write_file",
        "after_action:write_file:True",
        "tools",
        "after_task:task_1:completed",
        "before_completion",
        "addendum:completion",
        "tools",
        "on_completion_reply:True",
    ]


def test_a_resumed_plan_is_shown_to_the_phases_as_resumed(harness: Harness) -> None:
    harness.server.add(*planned("task_1", "task_2"), write("a.txt"), finish(), write("b.txt"))
    assert harness.run(**{"budget.max_actions": 1}).status == "in_progress"
    harness.server.add(write("b.txt"), finish(), *completed(completed=2))
    recorder = Recorder()
    assert run_with(harness, recorder).status == "completed"
    assert recorder.calls[:2] == ["start", "after_plan:resumed"]


class Gate(Phase):
    """An approval gate: refuses writes, or ends the pass waiting for people."""

    def __init__(self, wait: bool) -> None:
        self.wait = wait

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        if call.name != "write_file":
            return None
        run.store.append("approval_pending", task_id=task_id, tool=call.name)
        if self.wait:
            question = f"May I run {call.name} for {task_id}?"
            raise StopPass("needs_human", "waiting for approval", [question], [question])
        return ToolResult(ok=False, error="refused: writes need approval")


def test_a_gate_refuses_an_action_without_running_or_counting_it(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    result = run_with(harness, Gate(wait=False))
    assert result.status == "completed" and result.actions == 0
    assert not (harness.workspace / "a.txt").exists()
    assert "action" not in harness.types()
    tool_reply = harness.server.requests[3].body["messages"][-1]
    assert tool_reply["role"] == "tool" and "refused: writes need approval" in tool_reply["content"]


def test_a_gate_ends_the_pass_waiting_with_its_question(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), write("a.txt"))
    result = run_with(harness, Gate(wait=True))
    assert result.status == "needs_human" and result.stop_reason == "waiting for approval"
    assert result.questions == ["May I run write_file for task_1?"]
    assert not (harness.workspace / "a.txt").exists()
    types = harness.types()
    assert types.index("approval_pending") < types.index("run_end")
    assert harness.of_type("run_end")[0]["status"] == "needs_human"


class Judge(Phase):
    """A quality judge: rejects the first plan once with feedback."""

    def __init__(self) -> None:
        self.rejected = False

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        if event == "planned" and not self.rejected:
            self.rejected = True
            run.store.append("judgement", verdict="revise")
            raise PlanChanged(feedback="Judge: split the work into smaller tasks.")


def test_a_judge_sends_the_plan_back_with_feedback(harness: Harness) -> None:
    harness.server.add(
        planning("task_1"),
        review_ok(),  # the replanning phase (registered first) reviews it, then the judge
        planning("task_1", "task_2"),
        review_ok(),
        write("a.txt"),
        finish(),
        write("b.txt"),
        finish(),
        *completed(completed=2),
    )
    result = run_with(harness, Judge())
    assert result.status == "completed" and [t.id for t in result.tasks] == ["task_1", "task_2"]
    assert harness.types().count("plan") == 2 and "judgement" in harness.types()
    second_planning = harness.server.requests[2].body["messages"][-1]["content"]
    assert second_planning.endswith("Judge: split the work into smaller tasks.")
    assert "Judge:" not in harness.server.requests[0].body["messages"][-1]["content"]


class Enhancer(Phase):
    def before_planning(self, run: PassContext, instruction: str) -> str:
        return "Agreed design: write a.txt only."


def test_before_planning_replaces_the_instruction_the_plan_is_made_with(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    assert run_with(harness, Enhancer()).status == "completed"
    assert "Agreed design: write a.txt only." in harness.prompt(0)


def test_the_registration_list_follows_the_config(harness: Harness) -> None:
    names = [p.name for p in pass_phases(harness.config())]
    assert names == ["checkpoint", "interactive", "replanning"]
    off = harness.config(**{"planning.replanning.enabled": False})
    assert [p.name for p in pass_phases(off)] == ["checkpoint", "interactive", "reflection"]
    assert pass_phases(harness.config(**{"planning.enabled": False})) == []
