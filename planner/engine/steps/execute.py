"""Execute step (seed §7.4.1 phase 4): one task through OpenAI tool calling.

run_task(run, task_id) holds the task's conversation: the prompt shows the files the task is
about, every tool call is one recorded action (phases see it before and after it runs),
`finish_task` ends the task, and a reply without tool calls gets one nudge before it counts as
the task's end (failed when the task did nothing). A reply holding code blocks for files the
prompt showed whole writes them (llm.edit_format, planner.model.file_blocks) and, written, ends
the task. A TaskGuard keeps the loop moving: repeated
calls and reads of files already shown are answered without running, reading stops at the
per-task cap, and a task meant to change something is not ticked when it changed nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from planner.core.interfaces import ChatReply, ToolCall, ToolResult
from planner.core.tool_names import WRITE_TOOLS
from planner.engine.context import PassContext
from planner.memory.summaries import assumptions_in_force, task_actions_digest
from planner.model.conversation import FINISH_TASK, assistant, tool_message, user
from planner.model.file_blocks import WrittenFiles, written_files
from planner.model.hunks import edits_between
from planner.outcome.evidence import verification_note
from planner.outcome.result import render_checklist
from planner.plan.documents import Plan, Subtask
from planner.plan.task_guard import (
    TaskCapReached,
    TaskGuard,
    changes_in_plan,
    did_nothing,
    looks_in_plan,
)
from planner.text.issue import comments_since, prompt_view
from planner.text.prompts import render

Finish = tuple[str, str]
"""How the model ended a task: (status, summary)."""


def run_task(run: PassContext, task_id: str) -> None:
    run.store.append("task", task_id=task_id, status="in_progress")
    run.report(run.snapshot("in_progress", f"working on {task_id}"))
    run.last_action = None
    prompt, guard, whole_file = _task_prompt(run, task_id)
    messages = [run.system("execution"), user(prompt)]
    undone = partial(_claims_undone_work, run, task_id)
    finish = task_turns(run, task_id, messages, guard, undone, write_first=whole_file)
    end_task(
        run, task_id, *(finish if guard.done_before else _checked_finish(run, task_id, finish))
    )


def task_turns(
    run: PassContext,
    task_id: str,
    messages: list[dict[str, Any]],
    guard: TaskGuard,
    undone: Callable[[Finish], bool],
    kind: str = "execute",
    write_first: bool = False,
) -> Finish:
    """The model's turns until it finishes. A reply without a call is nudged once, a second
    ends the task; finish_task while `undone` says nothing was done is told so once.

    With `write_first` the prompt asks for files written whole: that turn, and a turn after a
    block that could not be written, sends no tools on the wire (a small model offered tools
    answers with a call, not the file); a call written as text still runs."""
    nudged = warned = retry = False
    write_turn = write_first
    opening = len(messages)  # the request this call answers: a first write is retried on it
    try:
        while True:
            # The tool list is read every turn: a tool server that died is left out from then.
            tools = [*run.tools.specs(), FINISH_TASK, *run.phases.tools(run)]
            reply = run.chat(kind, messages, tools, tools_on_wire=not write_turn, retry=retry)
            write_turn = retry = False
            messages.append(assistant(reply.content, reply.tool_calls))
            if not reply.tool_calls:
                written = _written_files(run, reply, guard, write_first)
                if written.files:
                    finish = _write_blocks(run, task_id, written, messages, guard)
                    if finish is not None:
                        return finish
                    write_turn = write_first
                    continue
                if write_first and _all_written_before(run, task_id, written.unchanged):
                    guard.done_before = True
                    paths = ", ".join(written.unchanged)
                    return "completed", f"{paths} already had this change: an earlier task made it"
                if write_first and _kept(guard, written.unchanged):
                    paths = ", ".join(written.unchanged)
                    return "completed", f"the model kept its change to {paths}"
                if nudged:
                    return _ended_without_finish(run, task_id, reply)
                nudged = True
                problems = "\n".join(written.problems)
                write_turn = write_first and bool(problems)
                if write_turn and len(messages) == opening + 1:
                    _ask_again(messages, opening, problems)
                    retry = True  # the most likely answer could not be used: sample another
                    continue
                messages.append(user(problems or _nudge(task_id, reply)))
                continue
            finish = run_tool_calls(run, task_id, reply.tool_calls, messages, guard)
            if finish is not None and not warned and undone(finish):
                warned = True  # once: small models call finish_task before (or instead of) acting
                gave_up = finish[0] == "failed"
                messages.append(
                    user(render("nothing_done.md.j2", task_id=task_id, gave_up=gave_up))
                )
                continue
            if finish is not None:
                return finish
    except TaskCapReached as cap:
        return "failed", f"stopped: {cap}"


def _ask_again(messages: list[dict[str, Any]], opening: int, problems: str) -> None:
    """A first answer that wrote nothing (a file unchanged, a fragment) is dropped and the
    request asked again with what was wrong: shown their own answer, the 0.5B and 1.5B
    repeated it."""
    request = str(messages[opening - 1]["content"])
    del messages[opening - 1 :]
    messages.append(user(render("write_again.md.j2", request=request, problems=problems)))


def _nudge(task_id: str, reply: ChatReply) -> str:
    """What a reply without a function call is told (once)."""
    broken = "{" in (reply.content or "") and '"' in (reply.content or "")
    return render("nudge.md.j2", task_id=task_id, broken_call=broken)


def run_tool_calls(
    run: PassContext,
    task_id: str,
    calls: list[ToolCall],
    messages: list[dict[str, Any]],
    guard: TaskGuard | None = None,
) -> Finish | None:
    """Answer every call of one model turn; finish_task's arguments if it was among them."""
    finish = None
    for call in calls:
        if call.name == FINISH_TASK.name:
            finish = (
                str(call.arguments.get("status", "completed")),
                str(call.arguments.get("summary", "")),
            )
            messages.append(tool_message(call.id, "noted"))
            continue
        messages.append(tool_message(call.id, _answer(run, task_id, call, guard)[1]))
    if finish and finish[0] not in ("completed", "failed"):
        finish = ("completed", finish[1])
    return finish


def _answer(
    run: PassContext, task_id: str, call: ToolCall, guard: TaskGuard | None
) -> tuple[ToolResult, str]:
    """Run one call (or let the guard or a phase answer it): its result, and the text the
    model is shown."""
    call, note = _real_path(run, call)
    result = guard.answer(call) if guard is not None else None
    if result is not None:
        run.store.append("guarded", task_id=task_id, tool=call.name, answer=result.content)
    else:
        result = run.phases.before_action(run, task_id, call)
        if result is not None and guard is not None:
            guard.ran(call, result)  # a phase's own tool (run_tests) counts as a call made
    if result is None:
        result = run.phases.after_action(run, task_id, call, run.act(task_id, call))
        run.last_action = (call, result)
        if guard is not None:
            guard.ran(call, result)
    return result, note + result.for_model() + _paths_hint(run, call, result)


def _written_files(
    run: PassContext, reply: ChatReply, guard: TaskGuard, asked: bool
) -> WrittenFiles:
    """The files a reply without a tool call writes as code blocks (llm.edit_format). A block
    that leaves its file as it is changes nothing: said so when files were asked for and no
    other block changed one (the 1.5B wrote README.md changed and greet.py, which it only
    quoted, unchanged), else it is a file quoted in prose, and no block is a problem then."""
    test_paths = run.config.verification.test_paths
    written = written_files(reply.content, guard.shown, run.current_text, test_paths, guard.windows)
    if not asked:
        written.problems = []
        return written
    written.problems += [
        f"The code block for {path} is its current content: nothing changed. Write the file "
        "with the change the issue asks for."
        for path in ([] if written.files else written.unchanged)
    ]
    return written


def _kept(guard: TaskGuard, paths: list[str]) -> bool:
    """Files this task changed, written back as they are after the issue's test failed."""
    return guard.stands_by and bool(paths) and set(paths) <= guard.changed


def _all_written_before(run: PassContext, task_id: str, paths: list[str]) -> bool:
    """Every file an earlier task of the plan wrote: a block that leaves it as it is shows the
    change is there. (1.5B: "Add a `## Usage` section" wrote it; the next task, "Write the
    example command in the `## Usage` section", wrote README.md as it now was, was told
    "nothing changed", and failed.) Not while tests that passed before fail: then the change
    there is what broke them (the 1.5B, asked to repair slug.py, wrote it back as it was, twice,
    and each repair task was ticked)."""
    note = verification_note(run.store.entries())
    if not paths or (note is not None and note.regressed):
        return False
    written = {
        str(action["execution"]["function_call"].get("arguments", {}).get("path", ""))
        for other, actions in run.state().actions_by_task.items()
        if other != task_id
        for action in actions
        if action.get("ok") and action["execution"]["function_call"].get("name") in WRITE_TOOLS
    }
    return all(path in written for path in paths)


def _write_blocks(
    run: PassContext,
    task_id: str,
    written: WrittenFiles,
    messages: list[dict[str, Any]],
    guard: TaskGuard,
) -> Finish | None:
    """Write the files of a reply's code blocks as write_file calls. When every one was
    written, the reply ends the task; else the model is told what failed and goes on."""
    answers, ok = [], not written.problems
    for index, (path, text) in enumerate(written.files, start=1):
        call = _block_call(run, f"block_{run.action_counter + index}", path, text, written)
        result, shown = _answer(run, task_id, call, guard)
        ok = ok and result.ok
        answers.append(f"Result of writing {path}:\n{shown}")
    messages.append(user("\n\n".join([*answers, *written.problems])))
    if not ok:
        return None
    paths = ", ".join(path for path, _ in written.files)
    return "completed", f"wrote {paths}"


def _block_call(
    run: PassContext, call_id: str, path: str, text: str, written: WrittenFiles
) -> ToolCall:
    """The call writing one block's file: edit_file edits when the block changed only some
    definitions of a file not shown whole (its effect is those definitions replaced), else
    write_file with the file's new content."""
    before = run.current_text(path) if path in written.parts else None
    edits = edits_between(before, text) if before is not None else None
    if edits:
        return ToolCall(id=call_id, name="edit_file", arguments={"path": path, "edits": edits})
    return ToolCall(id=call_id, name="write_file", arguments={"path": path, "content": text})


PATH_TOOLS = ("read_file", "edit_file")
"""Tools whose path must name an existing file (write_file may create one)."""


def _real_path(run: PassContext, call: ToolCall) -> tuple[ToolCall, str]:
    """A path that names no file but one file of that name exists (`eval/durations.py` for
    durations.py: small models prefix the repository's name) is that file, said so."""
    path = call.arguments.get("path")
    if call.name not in PATH_TOOLS or not isinstance(path, str):
        return call, ""
    real = run.existing_path(path)
    if real is None or real == path.strip().removeprefix("./"):
        return call, ""
    moved = call.model_copy(update={"arguments": {**call.arguments, "path": real}})
    return moved, f"[{path} does not exist; used {real}, the only file of that name]\n"


def _paths_hint(run: PassContext, call: ToolCall, result: Any) -> str:
    if result.ok or "does not exist" not in (result.error or ""):
        return ""
    paths = run.closest_paths(str(call.arguments.get("path", "")))
    return f"\nFiles that exist: {', '.join(paths)}" if paths else ""


def _claims_undone_work(run: PassContext, task_id: str, finish: Finish) -> bool:
    """The task reports completed, was meant to change something, and changed and ran nothing."""
    state = run.state()
    done = state.actions_by_task.get(task_id, [])
    meant = changes_in_plan(state.plan, task_id)
    if finish[0] != "completed" or not meant or not did_nothing(done):
        return False
    return not _tests_ran(run, task_id)


def _tests_ran(run: PassContext, task_id: str) -> bool:
    """The model ran the tests (run_tests, answered by the verification phase) in this task:
    evidence that may show no change was needed."""
    return any(
        e.get("type") == "verification" and e.get("stage") == "tool" and e.get("task_id") == task_id
        for e in run.store.entries()
    )


def _checked_finish(run: PassContext, task_id: str, finish: Finish) -> Finish:
    """A task meant to change something that changed and ran nothing is not completed."""
    if _claims_undone_work(run, task_id, finish):
        return "failed", (
            "it changed no file and ran nothing that shows no change was needed, so nothing "
            f"was done. It said: {finish[1]}"
        )
    return finish


def _ended_without_finish(run: PassContext, task_id: str, reply: ChatReply) -> Finish:
    """Two replies without a function call end the task. With actions behind it the model only
    forgot finish_task; with none, nothing was done (small models write their calls as prose
    or claim success), and ticking the task would make the checklist lie."""
    text = reply.content or ""
    state = run.state()
    if state.actions_by_task.get(task_id) or looks_in_plan(state.plan, task_id):
        return "completed", text  # a task that only looks may answer in prose
    return "failed", f"ended without calling any tool, so nothing was done. It said: {text}"


def end_task(run: PassContext, task_id: str, status: str, summary: str) -> None:
    """Record how a task ended, tell the reporter, and let the phases judge it."""
    run.store.append("task", task_id=task_id, status=status, summary=summary)
    run.report(run.snapshot("in_progress", f"{task_id} {status}"))
    run.phases.after_task(run, task_id, status, summary)


def _task_prompt(run: PassContext, task_id: str) -> tuple[str, TaskGuard, bool]:
    """The task's prompt, its guard, and whether it asks for files written whole."""
    state = run.state()
    assert state.plan is not None
    task = state.plan.subtask(task_id)
    actions = state.plan.actions_for(task_id)
    files = run.shown_files(_task_texts(run, state.plan, task_id))
    # A task that only looks (read, check, run the tests …) is not asked to write files.
    looks = looks_in_plan(state.plan, task_id)
    whole_file = run.writes_whole(files) and not looks
    prompt = render(
        "execute_task.md.j2",
        issue=prompt_view(run.issue),
        recent=comments_since(run.issue, state.plan_comments_seen),
        plan=state.plan,
        checklist=render_checklist(run.snapshot("in_progress", ""), history=False),
        task=task,
        actions=actions,
        files=files.text,
        whole_file=whole_file,
        windows=whole_file and bool(files.windows),
        looks=looks,
        numbered=run.config.llm.edit_format == "edit_file",
        earlier=task_actions_digest(state.actions_by_task.get(task_id, [])),
        assumptions=assumptions_in_force(run.store.entries()),
    )
    guard = TaskGuard(run.config.budget.max_actions_per_task, files.whole, files.windows)
    return prompt + run.phases.addendum(run, "execute"), guard, whole_file


def _task_texts(run: PassContext, plan: Plan, task_id: str) -> list[str]:
    """What names the task's files, most specific first: the task and its planned actions,
    the tasks it depends on, the issue."""
    task = plan.subtask(task_id)
    own = [task.description if task else "", *(a.purpose for a in plan.actions_for(task_id))]
    dependencies = [d.description for d in _dependencies(plan, task)]
    return ["\n".join(own), *dependencies, f"{run.issue.title}\n{run.issue.body}"]


def _dependencies(plan: Plan, task: Subtask | None) -> list[Subtask]:
    if task is None:
        return []
    return [dep for d in task.dependencies if (dep := plan.subtask(d)) is not None]
