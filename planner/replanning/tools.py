"""The request_replan tool offered during execution in folded mode (decision_mode: folded).

Its arguments are the §7.5 decision; replan_needed is implied by calling it.
"""

from __future__ import annotations

from planner.core.interfaces import ToolSpec

_LIST = {"type": "array", "items": {"type": "string"}}

REQUEST_REPLAN = ToolSpec(
    name="request_replan",
    description=(
        "Ask planner to change the plan (retry the failed action, replan the remaining work, "
        "regenerate the action plan, decompose the tasks again, or re-check the goal), or to "
        "ask the people on the issue. planner applies its limits and tells you the outcome."
    ),
    parameters={
        "type": "object",
        "properties": {
            "confidence": {"type": "number", "description": "0.0-1.0"},
            "reasoning": {"type": "string"},
            "replan_type": {
                "type": "string",
                "enum": ["retry", "partial_replan", "full_replan", "clarification_request"],
            },
            "replan_level": {
                "type": "integer",
                "description": "1 retry, 2 partial replan, 3 action regeneration, "
                "4 task redecomposition, 5 goal re-check",
            },
            "target_phase": {"type": "string"},
            "issues_found": _LIST,
            "recommended_actions": _LIST,
            "clarification_questions": _LIST,
            "assumptions_to_make": _LIST,
            "error_classification": {
                "type": "string",
                "enum": ["transient", "persistent", "fatal"],
            },
            "recovery_strategy": {"type": "string"},
            "affected_actions": _LIST,
        },
        "required": ["confidence", "reasoning", "replan_type"],
    },
)
