"""Replanning decided by the model at every phase, bounded by the system (replanning.md).

decision.py        ReplanDecision (§2.4/§2.5 + phase extras), phases, replan types (§2.6)
levels.py          levels 1-5 (§7.4) and the phase each one re-enters
controls.py        limits, confidence bands, loop detection (§9, §13.3, §13.4)
state.py           counts and pending work derived from history (§10.2)
facts.py           what decision prompts are told (§2.3)
prompt_builder.py  ReplanPromptBuilder (§14.3), templates in prompts/replan_*.md.j2
executor.py        carrying out a replan: the model writes, planner validates
notices.py         markdown for the issue (§11.2, §11.3)
manager.py         ReplanManager (§14.2): the decision points
phase.py           ReplanningPhase: the decision points as hooks of the pass loop
port.py            what the manager needs from the pass (PassContext implements it)
tools.py           request_replan, the folded-mode execution tool
"""

from planner.replanning.limits.levels import LEVELS, Level
from planner.replanning.limits.statistics import ReplanStatistics
from planner.replanning.manager import ReplanManager
from planner.replanning.prompting.decision import ReplanDecision
from planner.replanning.prompting.prompt_builder import ReplanPromptBuilder

__all__ = [
    "LEVELS",
    "Level",
    "ReplanDecision",
    "ReplanManager",
    "ReplanPromptBuilder",
    "ReplanStatistics",
]
