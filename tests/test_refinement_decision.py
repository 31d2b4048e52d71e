"""make_refinement_decision: every priority of the seed, in order, and the stagnation rule."""

from __future__ import annotations

import pytest

from planner.config import RefinementConfig
from planner.refinement.decision import (
    DecisionInputs,
    make_refinement_decision,
    stagnation_of,
)
from planner.refinement.judgement import QualityJudgement

DEFAULTS = RefinementConfig()
EAGER = RefinementConfig(refine_suggestions_on_success=True)


def judged(score: int | None, ok: bool, suggestions: tuple[str, ...] = ()) -> QualityJudgement:
    return QualityJudgement(score=score, is_acceptable=ok, suggestions=list(suggestions))


# (name, judgement, inputs, settings, decision, rule)
TABLE = [
    # 1: attempts exhausted wins over everything below it, both ways
    (
        "exhausted_ok",
        judged(40, True),
        DecisionInputs(2, 10),
        DEFAULTS,
        "accept",
        "attempts_exhausted",
    ),
    (
        "exhausted_bad",
        judged(90, False),
        DecisionInputs(2, 10),
        DEFAULTS,
        "reject",
        "attempts_exhausted",
    ),
    (
        "exhausted_no_score",
        judged(None, False),
        DecisionInputs(3, 50),
        DEFAULTS,
        "accept",
        "no_score",
    ),
    (
        "exhausted_not_acceptable",
        judged(10, False),
        DecisionInputs(3, 50),
        DEFAULTS,
        "reject",
        "attempts_exhausted",
    ),
    (
        "exhausted_before_suggestions",
        judged(90, True, ("x",)),
        DecisionInputs(2, 10),
        EAGER,
        "accept",
        "attempts_exhausted",
    ),
    # no score: no judgement, never a rejection (issue 23)
    ("no_score_ok", judged(None, True), DecisionInputs(0), DEFAULTS, "accept", "no_score"),
    ("no_score_bad", judged(None, False), DecisionInputs(0), DEFAULTS, "accept", "no_score"),
    (
        "no_score_after_replan",
        judged(None, False),
        DecisionInputs(1, 40),
        DEFAULTS,
        "accept",
        "no_score",
    ),
    # 3: stagnation (a replan happened and the score barely moved)
    ("stagnant_ok", judged(72, True, ("x",)), DecisionInputs(1, 70), EAGER, "accept", "stagnation"),
    ("stagnant_bad", judged(42, False), DecisionInputs(1, 40), DEFAULTS, "replan", "stagnation"),
    ("worse_bad", judged(30, False), DecisionInputs(1, 40), DEFAULTS, "replan", "stagnation"),
    # 4: not acceptable
    ("first_bad", judged(40, False), DecisionInputs(0), DEFAULTS, "replan", "not_acceptable"),
    (
        "improving_bad",
        judged(60, False),
        DecisionInputs(1, 40),
        DEFAULTS,
        "replan",
        "not_acceptable",
    ),
    # 5: acceptable with suggestions, only when configured and under the limit
    ("suggestions_on", judged(85, True, ("x",)), DecisionInputs(0), EAGER, "replan", "suggestions"),
    # 6: acceptable
    (
        "suggestions_off",
        judged(85, True, ("x",)),
        DecisionInputs(0),
        DEFAULTS,
        "accept",
        "acceptable",
    ),
    (
        "suggestions_spent",
        judged(85, True, ("x",)),
        DecisionInputs(1, 60, 1),
        EAGER,
        "accept",
        "acceptable",
    ),
    ("no_suggestions", judged(85, True), DecisionInputs(0), EAGER, "accept", "acceptable"),
    ("improved_ok", judged(85, True), DecisionInputs(1, 40), DEFAULTS, "accept", "acceptable"),
]


@pytest.mark.parametrize(
    ("judgement", "inputs", "settings", "decision", "rule"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_decision_table(
    judgement: QualityJudgement,
    inputs: DecisionInputs,
    settings: RefinementConfig,
    decision: str,
    rule: str,
) -> None:
    outcome = make_refinement_decision(judgement, inputs, settings)
    assert (outcome.decision, outcome.rule) == (decision, rule)


def test_every_rule_and_decision_is_in_the_table() -> None:
    covered = {(row[4], row[5]) for row in TABLE}
    assert {("accept", "attempts_exhausted"), ("reject", "attempts_exhausted")} <= covered
    assert ("accept", "no_score") in covered and ("reject", "no_score") not in covered
    assert {("accept", "stagnation"), ("replan", "stagnation")} <= covered
    assert {("replan", "not_acceptable"), ("replan", "suggestions")} <= covered
    assert ("accept", "acceptable") in covered


def test_limit_zero_means_no_replan_at_all() -> None:
    none = RefinementConfig(max_refinement_attempts=0)
    outcome = make_refinement_decision(judged(10, False), DecisionInputs(0), none)
    assert (outcome.decision, outcome.rule) == ("reject", "attempts_exhausted")


def test_stagnation_by_the_absolute_threshold_alone() -> None:
    # 200 -> 204 is +2% as well; use a setting where only the absolute figure trips
    settings = RefinementConfig(delta_threshold=5, delta_threshold_percent=1)
    figures = stagnation_of(80, 84, settings)
    assert figures is not None
    assert figures.improvement == 4 and figures.relative_improvement == pytest.approx(5.0)
    assert figures.stagnated  # 4 < 5 points, although 5% >= 1%


def test_stagnation_by_the_relative_threshold_alone() -> None:
    settings = RefinementConfig(delta_threshold=5, delta_threshold_percent=10)
    figures = stagnation_of(80, 86, settings)
    assert figures is not None
    assert figures.improvement == 6 and figures.relative_improvement == pytest.approx(7.5)
    assert figures.stagnated  # 7.5% < 10%, although 6 >= 5 points


def test_no_stagnation_when_both_figures_clear_their_thresholds() -> None:
    figures = stagnation_of(40, 60, DEFAULTS)
    assert figures is not None and not figures.stagnated


def test_stagnation_needs_two_scores() -> None:
    assert stagnation_of(None, 60, DEFAULTS) is None
    assert stagnation_of(60, None, DEFAULTS) is None


def test_a_previous_score_of_zero_counts_any_real_gain() -> None:
    figures = stagnation_of(0, 30, DEFAULTS)
    assert figures is not None and figures.relative_improvement is None
    assert not figures.stagnated
    flat = stagnation_of(0, 3, DEFAULTS)
    assert flat is not None and flat.stagnated  # 3 < 5 points


def test_the_stagnation_figures_are_returned_with_the_decision() -> None:
    outcome = make_refinement_decision(judged(42, False), DecisionInputs(1, 40), DEFAULTS)
    assert outcome.stagnation is not None
    assert outcome.stagnation.to_dict() == {
        "previous_score": 40,
        "score": 42,
        "improvement": 2.0,
        "relative_improvement": 5.0,
        "stagnated": True,
    }
    assert outcome.rule_number == 3


def test_scores_are_whole_points_on_the_seed_scale() -> None:
    assert QualityJudgement.model_validate({"score": 82.6, "is_acceptable": True}).score == 83
    assert QualityJudgement.model_validate({"score": "70", "is_acceptable": False}).score == 70
    with pytest.raises(ValueError):
        QualityJudgement.model_validate({"score": 101, "is_acceptable": True})


@pytest.mark.parametrize("number", ["1e400", "-1e400", "Infinity", "NaN"])
def test_a_non_finite_score_is_an_unusable_reply_not_a_crash(number: str) -> None:
    """1e400 is valid JSON (and Python's parser also takes Infinity/NaN): rounding it raised
    OverflowError, which escaped the reply validation and ended the pass with a traceback."""
    from planner.core.errors import ModelBehaviourError
    from planner.model.replies import parse_document

    with pytest.raises(ModelBehaviourError, match="score"):
        parse_document(f'{{"score": {number}, "is_acceptable": true}}', QualityJudgement)


@pytest.mark.parametrize(
    "damaged", [{}, {"judgement": {"score": 80}}, {"judgement": "good"}, {"judgement": [1]}]
)
def test_a_damaged_judgement_entry_is_judged_again_not_fatal(damaged: dict[str, object]) -> None:
    """The refinement state is read from the history on every pass; one hand-edited or
    truncated quality_judgement entry raised ValidationError there, and every later pass on the
    issue crashed. Now the damaged judgement counts as missing: the plan is judged again."""
    from planner.refinement.state import RefinementState

    entries = [
        {"type": "plan", "source": "planning"},
        {"type": "quality_judgement", "subject": "plan", **damaged},
    ]
    state = RefinementState.from_entries(entries)
    assert state.plan.step == "judge" and state.plan.judgement is None
