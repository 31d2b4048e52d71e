"""Which definition the next candidate is asked for: each located one once, in the order of its
rank, then the one whose answers came closest to a fix (planner.verification.candidate_phase)."""

from __future__ import annotations

from planner.verification.candidate_phase import _Sampling
from planner.verification.fixes.candidates import Spot


def spot(name: str) -> Spot:
    return Spot("m.py", name, "def", 1, 2, f"def {name}():\n    return 1\n")


def turns(answers: dict[str, list[str]], count: int) -> list[str]:
    """The definitions asked for, in order, when each answers with its next outcome in turn."""
    chosen = [spot(name) for name in answers]
    sampling, asked = _Sampling(before=None), []
    left = {name: list(outcomes) for name, outcomes in answers.items()}
    for _ in range(count):
        chosen_spot = sampling.next_spot(chosen)
        name = chosen_spot.qualname
        asked.append(name)
        sampling.asked[chosen_spot.label] = sampling.asked.get(chosen_spot.label, 0) + 1
        sampling.latest[chosen_spot.label] = left[name].pop(0)
    return asked


def test_each_definition_once_in_rank_order_then_the_closest_gets_more_turns() -> None:
    answers = {
        "ranked_first": ["unchanged"] * 9,
        "close": ["breaks_tests"] * 9,  # passes the test, breaks another
        "third": ["unusable"] * 9,
    }
    asked = turns(answers, 9)
    assert asked[:3] == ["ranked_first", "close", "third"]
    assert asked[3:6] == ["close", "close", "ranked_first"]
    assert asked.count("close") == 4 and asked.count("third") == 2


def test_a_definition_whose_answers_stop_changing_gives_its_turns_back() -> None:
    answers = {
        "first": ["issue_test_fails", "repeated", "repeated", "repeated"],
        "second": ["unchanged", "issue_test_fails", "issue_test_fails", "unchanged"],
    }
    asked = turns(answers, 6)
    # the first changed the code: one turn more; once it repeats itself the second gets two
    assert asked == ["first", "second", "first", "second", "second", "first"]


def test_a_changed_answer_keeps_a_definition_ahead_of_one_that_changed_nothing() -> None:
    answers = {"a": ["unchanged"] * 6, "b": ["issue_test_fails"] * 6}
    assert turns(answers, 6) == ["a", "b", "b", "a", "b", "a"]
