"""The phase interface: how a phase plugs into the pass loop (planner.engine.coordinator).

The loop runs three fixed steps — plan (engine/steps/plan.py), execute each task
(engine/steps/execute.py), complete (engine/steps/complete.py) — and around them calls the
hooks of every registered phase, in registration order (planner/run/phases.py). A phase is
a subclass of `Phase` that overrides only the hooks it needs; the others do nothing.

    pass start ─ start()
    plan ─────── before_planning() → [planning call + addendum("planning")] → on_clarification()
                 → after_plan(reply, "planned")
    plan changed/resumed ─ after_plan(None, "revised" | "resumed")
    each task ── [task prompt + addendum("execute"), tools()] → per tool call:
                 before_action() → [the tool runs, is counted and recorded] → after_action()
                 → after_task()
    no task left ─ before_completion() → [completion call + addendum("completion")]
                 → on_completion_reply() → [completion recorded, pass ends]
    pass ends ─── on_stop(status): whatever stopped it (completion, a budget, a question)

Every hook gets `run`, the PassContext (config, issue, store, state(), model calls within the
budget, act(), snapshot(), progress()). A hook changes the course of the pass only by raising:

    StopPass(status, reason, messages, questions)  end the pass now, e.g. "needs_human" while
                                                   people answer; record what you asked first
    PlanChanged()                                  you saved a revised plan (store.save_revision):
                                                   the loop picks the next task from it
    PlanChanged(feedback="...")                    plan again from scratch; the planning request
                                                   carries the feedback (a judge's verdict)

Record what your phase decided in the history (run.store.append(kind, ...)) before raising, so
a crash or the next trigger finds it, and bound your own repeats (count your entries in
run.store.entries()): the loop re-plans as often as it is asked to, within the pass budget.

To add a phase: write `planner/<package>/phase.py` with a `Phase` subclass and add one line to
planner/run/phases.py (or pass it in PassSetup.phases). The engine never imports a phase
package; the registration list above it does.

The classes are defined in planner.engine.context: every hook takes the PassContext and the
PassContext holds the registered phases, so split over two modules each would import the other.
Phase packages import them from here.
"""

from planner.engine.context import Phase, Phases, PlanEvent, Request, ReviewSection

__all__ = ["Phase", "Phases", "PlanEvent", "Request", "ReviewSection"]
