"""Decision prompts carry what replanning.md §2.3 lists: the goal and the replan history; and
the reflection interval the configuration sets is what the reflection prompt says.

Before, an execution decision saw the action and the remaining plan but not the goal it
serves, no decision prompt said how many replans had been made (or why), and
planning.reflection.trigger_interval reached the system prompt's variables but no text.
"""

from __future__ import annotations

from planner.text.prompts import render
from tests.harness import Harness
from tests.plans import (
    completed,
    finish,
    partial_replan_steps,
    planned,
    planning,
    reflection,
    write,
)


def test_decision_prompts_carry_the_goal_and_the_replans_made_so_far(harness: Harness) -> None:
    harness.server.add(*partial_replan_steps())

    result = harness.run()

    assert result.status == "completed"
    kinds = harness.kinds()
    first, second = [i for i, kind in enumerate(kinds) if kind == "replan_execution"]
    before = harness.prompt(first)
    assert "Goal: Write the files\nReplans: none (limit 10)\n" in before
    replanned = (
        "Replans: 1 (limit 10): execution, level 2 partial_replan: the path is outside the "
        "workspace; write inside it instead"
    )
    assert replanned in harness.prompt(second)
    assert replanned in harness.prompt(kinds.index("replan_reflection"))


def test_the_reflection_prompt_says_the_configured_interval(harness: Harness) -> None:
    harness.server.add(planning("task_1"), write("a.txt"), reflection(False, status="success"))
    harness.server.add(write("b.txt"), reflection(False, status="success"), finish())
    harness.server.add(*completed()[1:])

    harness.run(**{"planning.replanning.enabled": False, "planning.reflection.trigger_interval": 1})

    system = harness.server.requests[harness.kinds().index("reflection")].body["messages"][0]
    assert "This runs after a failed action and every 1 action." in system["content"]
    never = render("system_planning.md.j2", phase="reflection", strategy="chain_of_thought",
                   decomposition_level="moderate", reflection_interval=0)  # fmt: skip
    assert "every 0 actions" not in never and "Compare results with" in never


def test_the_review_shows_the_plan_once_not_again_as_the_historys_digest(
    harness: Harness,
) -> None:
    """Issue 44, item 12: the review's context repeated the plan under review as the history's
    digest of it (`PLAN goal=… tasks=[…]`), beside the plan itself."""
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    harness.run()

    review = harness.prompt(harness.kinds().index("replan_review"))
    assert "PLAN goal=" not in review and "planning history" not in review
    assert review.count("Do task_1") == 1
