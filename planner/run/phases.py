"""The registration list: which phases a pass runs, in the order their hooks are called.

The pass loop (planner.engine.coordinator) runs the fixed steps plan → execute → complete and
calls these phases' hooks around them (interface and hook points: planner/engine/phase.py).
Adding a phase = one module with a Phase subclass + one line below. Registration lives here,
above the engine, because the engine never imports a phase package.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from planner.approval.gate import ApprovalGate
from planner.approval.phase import ApprovalPhase
from planner.config import PlannerConfig
from planner.engine.checkpoints import CheckpointPhase
from planner.engine.phase import Phase
from planner.engine.reflection import ReflectionPhase
from planner.grounding.phase import GroundingPhase
from planner.interactive.phase import InteractivePhase
from planner.refinement.phase import RefinementPhase
from planner.replanning.phase import ReplanningPhase
from planner.tools.sandbox.isolation import SandboxUser
from planner.tools.sandbox.leftovers import held
from planner.verification.candidate_phase import CandidatePhase
from planner.verification.phase import VerificationPhase
from planner.verification.runs import PassTests
from planner.verification.suite.runner import TestRunner


def pass_phases(
    config: PlannerConfig,
    gate: ApprovalGate | None = None,
    diff: Callable[[], str] | None = None,
    *,
    workspace: Path | None = None,
    excluded: tuple[Path, ...] = (),
    sandbox: SandboxUser | None = None,
) -> list[Phase]:
    """The phases for one pass under `config` (legacy mode has no plan: only verification).
    `diff` gives the work's changes for the final quality judgement (planner.run.workdiff);
    `workspace` is the checkout the repository map describes (None: no map); `excluded` are
    paths the map never lists (planner's history and state); `sandbox` is the user commands
    run as (planner.tools.sandbox.isolation), for the tests too."""
    planning = config.planning
    watch = gate.watched if gate else None
    checker = (
        VerificationPhase(PassTests(TestRunner(workspace, config, sandbox, watch), gate, excluded))
        if workspace is not None
        else None
    )
    verification: list[Phase] = [checker] if checker is not None else []
    if not planning.enabled:
        return verification  # without a plan, the tests still check the change
    settings = config.verification
    if checker is not None and (settings.candidates or settings.mutants):
        # after verification: its after_plan writes the test the candidates need
        verification.append(CandidatePhase(checker, settings.candidates, settings.mutants))
    return [
        # durable: a finished task's work reaches the branch first, and what the tools left
        # running stands still from its judgement to its commit
        CheckpointPhase(gate, partial(held, sandbox)),
        InteractivePhase(),
        *([ApprovalPhase(gate)] if gate is not None else []),
        *verification,
        ReplanningPhase() if planning.replanning.enabled else ReflectionPhase(),
        *([RefinementPhase(diff)] if planning.refinement.enabled else []),
        *([GroundingPhase(workspace, excluded)] if workspace is not None else []),
    ]
