"""Candidate fixes before the first task (verification.candidates;
planner.verification.fixes.candidates).

Once per issue, after the plan and the issue's test are made and that test fails on the code
before the change, the model is asked for candidate fixes: one call each, one located
definition written back corrected, each located definition once in the order of its rank
(planner.verification.fixes.candidates.spots), then the one whose answers came closest first
(_Sampling.next_spot). The first request for a definition is at the configured temperature,
later ones warmer, each with its own seed; they alternate between asking for the wrong line
first and for the code first, which the 1.5B answers differently. Each candidate is put in
place, judged by the issue's test and then by the tests of the changed file, and taken back;
a candidate that fails and changed a few separate places is tried place by place
(planner.verification.fixes.candidates.single_changes). A later request for the same
definition shows what the one before it changed and failed on, so that a fix of several lines
can converge instead of being sampled blind.

Candidates take the pass's time up to their count: before each, the time left before the
pass's deadline is compared with the longest candidate so far, and they stop when another
would not fit (with one that passes the issue's test in hand, when the end of the pass with it
would not fit either), so the deadline never cuts one off and loses what passed. When they
spent the time and none passed the issue's test, the pass ends in progress: what is left is
less than one candidate, too little for the task's own conversation.

With verification.mutants, one-token changes to the lines of those definitions that the
issue's test ran (planner.verification.fixes.mutants) are tried first, judged the same way: no model
call, and a bug one token off is found in seconds.

The first candidate whose tests all pass is written like any change (a recorded write_file
through the tools, so the approval gate and path rules judge it) as the work of the plan's
next task, which is then complete; the pass goes on to the final run and completion. When none
does, the closest one that passes the issue's test without breaking a test wins; when none
passes the issue's test, the task runs as it would have, on the untouched tree, and the
history says what each candidate failed on.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from planner.core.interfaces import ToolCall
from planner.engine.context import PassContext
from planner.engine.phase import Phase
from planner.engine.steps.execute import end_task
from planner.model.conversation import user
from planner.outcome.deadline import DEADLINE, stop_if_expired
from planner.outcome.evidence import (
    CANDIDATE,
    CANDIDATES,
    TestRun,
    is_test_file,
    new_failures,
)
from planner.outcome.flow import StopPass
from planner.text.issue import prompt_view
from planner.text.prompts import render
from planner.verification.fixes.candidates import (
    Spot,
    failure_excerpt,
    single_changes,
    spliced,
    spots,
)
from planner.verification.fixes.mutants import mutants, raised_in
from planner.verification.fixes.trace import RETURNED_WRONG
from planner.verification.phase import VerificationPhase

WARMER_SEED = 100
"""Seeds of the rounds after the first start here (a seed above 1 samples warmer)."""
UNUSABLE_REPLY_CHARS = 2_000
"""Characters of a reply no definition could be taken from that its history entry keeps."""
EARLIER_DIFF_LINES = 16
"""Changed lines of the candidate before it that a request for the same definition shows."""
EARLIER_FAILURE_CHARS = 600
"""Characters of that candidate's failing output the request shows (its end kept)."""
DISTANCE = {"issue_test_passes": 0, "breaks_tests": 0, "issue_test_fails": 1, "not_run": 1}
"""How far a definition's latest answer was from a fix, as the turns after the first round
weigh it (_Sampling.next_spot): it passed the issue's test, or it changed the code; an answer
that changed nothing, could not be used or repeated an earlier one counts UNCHANGED_DISTANCE."""
UNCHANGED_DISTANCE = 2


@dataclass(frozen=True)
class Earlier:
    """What the latest candidate for a definition came to, as the next request for the same
    definition shows it: its outcome, the lines it changed and why its tests failed."""

    outcome: str
    diff: str = ""
    failure: str = ""


@dataclass
class _Sampling:
    """The model's candidates of one pass so far."""

    before: TestRun | None
    """The tests' run before the change (what a candidate's runs are compared with)."""
    tried: set[str] = field(default_factory=set)
    """The file texts judged already: a repeat is not judged again."""
    passing: list[dict[str, Any]] = field(default_factory=list)
    """Those that pass the issue's test and break none, with tests failing before still
    failing."""
    earlier: dict[str, Earlier] = field(default_factory=dict)
    """By definition (Spot.label), what its latest candidate failed on."""
    spent: list[float] = field(default_factory=list)
    """Seconds each candidate took: its model call and its test runs."""
    asked: dict[str, int] = field(default_factory=dict)
    """By definition, the candidates asked for it."""
    latest: dict[str, str] = field(default_factory=dict)
    """By definition, its latest candidate's outcome (a repeat included)."""

    def next_spot(self, chosen: list[Spot]) -> Spot:
        """The definition the next candidate is asked for: each once in `chosen`'s order (the
        rank of the located ones), then the one with the fewest asks plus its latest answer's
        DISTANCE, the better-ranked among equals. A definition whose answer passed the issue's
        test but broke another gets about two more turns than one the model gave back
        unchanged: the model seldom finds a bug it said was not there, and it can refine an
        answer it is shown failing."""
        fresh = [spot for spot in chosen if spot.label not in self.asked]
        if fresh:
            return fresh[0]
        return min(
            chosen,
            key=lambda spot: (
                self.asked[spot.label]
                + DISTANCE.get(self.latest.get(spot.label, ""), UNCHANGED_DISTANCE)
            ),
        )  # min keeps the first of equals: the better-ranked

    def time_for_another(self, first_guess: float) -> bool:
        """The pass's deadline (its budget less the finish reserve) leaves time for another
        candidate as long as the longest so far (before any: `first_guess`); with one that
        passes the issue's test in hand, time for the pass to end with it as well (its
        final test run and completion, about as long again)."""
        left = DEADLINE.left()
        if left is None:
            return True
        one = max(self.spent, default=first_guess)
        return left > 0 and left >= one * (2 if self.passing else 1)

    def best(self) -> dict[str, Any] | None:
        """The closest of those passing the issue's test: fewest earlier failures left, then
        the smallest change."""
        if not self.passing:
            return None
        return min(self.passing, key=lambda r: (len(r["still_failing"]), r["added"] + r["removed"]))


class CandidatePhase(Phase):
    name = "candidates"

    def __init__(self, verification: VerificationPhase, count: int, mutants: int = 0) -> None:
        self.verification = verification
        self.count = count
        self.mutants = mutants
        """Mechanical candidates tried at most, before the model's."""

    def after_plan(self, run: PassContext, reply: Any, event: Any) -> None:
        if event != "planned" or not self._due(run):
            return
        tests = self.verification.tests
        failure = tests.issue_failure(run) or tests.reproduction_failure(run)
        task_id = run.state().next_task()
        if failure is None or task_id is None or self.verification.tests.work_begun(run):
            return
        test, output = failure
        chosen, covered = self._spots(run, output)
        if not chosen:
            run.store.append(CANDIDATES, status="none", reason="no short definition located")
            return
        # mechanical changes first: no model call, a few seconds each, and a fix a reviewer
        # checks at a glance; then the model's candidates
        raised = raised_in(output)
        best, tried = self._mutate(run, chosen, covered, raised) if self.mutants else (None, 0)
        if best is None:
            best = self._sample(run, chosen, test, failure_excerpt(output), tried)
        if best is None:
            run.store.append(CANDIDATES, status="none", reason="no candidate passed the tests")
            return
        self._take(run, task_id, best)

    def _spots(self, run: PassContext, output: str) -> tuple[list[Spot], dict[str, set[int]]]:
        """The definitions to ask for: among those the issue's test runs when it can be
        profiled (planner.verification.fixes.trace), those its failure points to first (a part
        of the wrong value its assertion found, that value itself, the traceback of its
        error: Trace.ranked), then the others by the issue's words, those nearer the test
        first among equals; else those the issue's text points to. With them, the lines the
        test ran, by file."""
        texts = [f"{run.issue.title}\n{run.issue.body}"]
        trace = self.verification.tests.issue_trace(run)
        resolve = run.existing_path
        ran = trace.lines(resolve) if trace is not None else []
        covered = trace.covered(resolve) if trace is not None else {}
        ranked = trace.ranked(output, resolve) if trace is not None else []
        pointed = run.pointed(texts, ran) if ran else []
        if pointed and trace is not None:
            depth = trace.depths(resolve)
            pointed.sort(key=lambda p: (-p.score, depth.get((p.path, p.start), len(depth))))
        if not pointed:  # not profiled, or it ran nothing the index knows
            pointed = run.pointed(texts)
        test_file = partial(is_test_file, patterns=self.verification.settings.test_paths)
        first = {(r.path, r.line): r.why for r in ranked}
        chosen = spots(pointed, run.current_text, test_file, first=first, ran=ran, covered=covered)
        returned = [r for r in ranked if r.why == RETURNED_WRONG]
        run.store.append(
            CANDIDATES,
            status="located",
            profiled=trace is not None,
            ran=len(ran),
            returned_wrong=[f"{r.path}:{r.line}" for r in returned[:5]],
            ranking=[{"spot": spot.label, "why": spot.why or "named"} for spot in chosen],
        )
        return chosen, covered

    def _due(self, run: PassContext) -> bool:
        """Candidates are asked for once per issue."""
        return not any(entry.get("type") == CANDIDATES for entry in run.store.entries())

    def _sample(
        self, run: PassContext, chosen: list[Spot], test: str, failure: str, tried_before: int
    ) -> dict[str, Any] | None:
        """Ask, judge and take back each candidate (numbered after the `tried_before`
        mechanical ones) while the pass has time for another; the winner's record (None: none
        passed the issue's test without breaking one). A pass whose time the candidates spent
        with none passing the issue's test ends here (StopPass): what is left is less than
        one more candidate, too little for the task's own conversation."""
        sampling = _Sampling(before=self.verification.tests.baseline(run))
        first_guess = _first_guess(run)
        for number in range(1, self.count + 1):
            if not sampling.time_for_another(first_guess):
                return self._out_of_time(run, sampling, number - 1)
            began = time.monotonic()
            try:
                won = self._candidate(run, chosen, test, failure, tried_before, number, sampling)
            except StopPass as stop:  # a budget struck mid-candidate: keep what passed before
                if not sampling.passing:
                    raise
                run.store.append(CANDIDATES, status="stopped", reason=stop.reason)
                break
            finally:
                sampling.spent.append(time.monotonic() - began)
            if won is not None:
                return won
        return sampling.best()

    def _out_of_time(
        self, run: PassContext, sampling: _Sampling, asked: int
    ) -> dict[str, Any] | None:
        """The candidates stop for time: the best in hand, or the pass ends."""
        spent = f"{asked} asked, the longest {max(sampling.spent, default=0.0):.0f} s"
        reason = f"budget: the candidate fixes spent the pass's time ({spent})"
        run.store.append(CANDIDATES, status="stopped", reason=reason)
        best = sampling.best()
        if best is None:
            run.store.append(CANDIDATES, status="none", reason="no candidate passed the tests")
            raise StopPass(
                "in_progress",
                f"budget: the candidate fixes spent the pass's time ({spent});"
                " none passed the issue's test",
            )
        return best

    def _candidate(
        self,
        run: PassContext,
        chosen: list[Spot],
        test: str,
        failure: str,
        tried_before: int,
        number: int,
        sampling: _Sampling,
    ) -> dict[str, Any] | None:
        """Candidate `number`: asked for, judged whole and then place by place, taken back;
        its record when its tests all pass. What it failed on is what the next request for
        the same definition is shown."""
        spot = sampling.next_spot(chosen)
        round_ = sampling.asked.get(spot.label, 0)
        sampling.asked[spot.label] = round_ + 1
        original = run.current_text(spot.path)
        if original is None:
            sampling.latest[spot.label] = "unusable"
            return None
        earlier = sampling.earlier.get(spot.label)
        with run.sampled(1 if round_ == 0 else WARMER_SEED + round_):
            request = self._request(run, spot, test, failure, round_, earlier)
            reply = run.chat("candidate", request, [])
        text = spliced(original, spot, reply.content or "")
        record: dict[str, Any] = {
            "number": tried_before + number,
            "spot": spot.label,
            "round": round_ + 1,
            "asked": number,
        }
        if text is None or text == original or text in sampling.tried:
            outcome = "unusable" if text is None else "unchanged"
            outcome = "repeated" if text in sampling.tried else outcome
            if outcome == "unusable":  # kept so that a person sees what could not be used
                record["reply"] = (reply.content or "")[:UNUSABLE_REPLY_CHARS]
            if outcome != "repeated":  # a repeat's failure is shown already
                sampling.earlier[spot.label] = Earlier(outcome)
            sampling.latest[spot.label] = outcome
            run.store.append(CANDIDATE, **record, outcome=outcome)
            return None
        for part, variant in enumerate([text, *single_changes(original, text)]):
            if variant in sampling.tried:
                continue
            sampling.tried.add(variant)
            judged, excerpt = self._trial(run, spot, original, variant, sampling.before)
            if not part:  # the model wrote the whole; its parts are planner's
                sampling.earlier[spot.label] = Earlier(
                    judged["outcome"], _shown_diff(original, text, spot), excerpt
                )
                sampling.latest[spot.label] = judged["outcome"]
            judged = {**record, **({"part": part} if part else {}), **judged}
            run.store.append(CANDIDATE, **judged)
            if judged["outcome"] == "passes":
                return {**judged, "path": spot.path, "text": variant}
            if judged["outcome"] == "issue_test_passes":
                sampling.passing.append({**judged, "path": spot.path, "text": variant})
            if judged["outcome"] not in ("issue_test_fails", "breaks_tests"):
                break  # the parts of a change the tests did not judge are not tried
        return None

    def _mutate(
        self,
        run: PassContext,
        chosen: list[Spot],
        covered: dict[str, set[int]],
        raised: list[str],
    ) -> tuple[dict[str, Any] | None, int]:
        """Small mechanical changes of the lines of the spots the issue's test ran
        (planner.verification.fixes.mutants; `raised`: the exceptions its failure shows), judged as
        candidates are: the first whose tests all pass (None: none did, or nothing ran), and
        how many were tried."""
        before = self.verification.tests.baseline(run)
        number = 0
        for spot in chosen:
            original = run.current_text(spot.path)
            lines = covered.get(spot.path, set())
            if original is None or not lines:
                continue
            for mutant in mutants(original, spot, lines, raised):
                if number >= self.mutants:
                    return None, number
                stop_if_expired()  # no model call here to check the run's deadline
                number += 1
                judged = self._judge(run, spot, original, mutant.text, before)
                record = {"number": number, "spot": spot.label, "change": mutant.change}
                run.store.append(CANDIDATE, **record, **judged)
                if judged["outcome"] == "passes":
                    return {**record, **judged, "path": spot.path, "text": mutant.text}, number
        return None, number

    def _judge(
        self, run: PassContext, spot: Spot, original: str, text: str, before: TestRun | None
    ) -> dict[str, Any]:
        return self._trial(run, spot, original, text, before)[0]

    def _trial(
        self, run: PassContext, spot: Spot, original: str, text: str, before: TestRun | None
    ) -> tuple[dict[str, Any], str]:
        """What the tests say of `text`, and the lines of their output that say why it failed
        ('' when it passed)."""
        runs = self.verification.tests.trial(run, spot.path, text, original)
        added, removed = _changed_lines(original, text)
        judged = {**_judged(runs, before), "added": added, "removed": removed}
        return judged, _why(runs, judged["outcome"])

    def _request(
        self,
        run: PassContext,
        spot: Spot,
        test: str,
        failure: str,
        round_: int,
        earlier: Earlier | None = None,
    ) -> list[dict[str, Any]]:
        request = render(
            "candidate_request.md.j2",
            issue=prompt_view(run.issue),
            test=test.strip(),
            failure=failure,
            spot=spot,
            explain_first=round_ % 2 == 0,
            earlier=earlier,
        )
        return [run.system("candidate"), user(request)]

    def _take(self, run: PassContext, task_id: str, best: dict[str, Any]) -> None:
        """The winner written as the next task's work; the task is complete when it was."""
        run.store.append("task", task_id=task_id, status="in_progress")
        arguments = {"path": best["path"], "content": best["text"]}
        call = ToolCall(id=f"{CANDIDATE}_{best['number']}", name="write_file", arguments=arguments)
        result = run.act(task_id, call)
        if not result.ok:
            reason = f"the winning candidate could not be written: {result.error or 'refused'}"
            run.store.append(CANDIDATES, status="not_written", won=best["number"], reason=reason)
            return  # the task runs as it would have
        held = "its tests pass" if best["outcome"] == "passes" else "the issue's test passes"
        what = (
            f"mechanical candidate fix ({best['change']})"
            if "change" in best
            else f"candidate fix {best['asked']} of {self.count}"
        )
        summary = f"{what} for {best['spot']} (+{best['added']}/-{best['removed']} lines): {held}"
        run.store.append(CANDIDATES, status="won", won=best["number"], summary=summary)
        end_task(run, task_id, "completed", summary)


def _judged(runs: list[TestRun], baseline: TestRun | None) -> dict[str, Any]:
    """What the runs say of a candidate: its outcome, the tests it broke (judged as any run
    after a change is, planner.outcome.evidence.new_failures) and those failing before
    that still fail."""
    issue = runs[0]
    if issue.status != "passed":
        outcome = "issue_test_fails" if issue.ran else "not_run"
        return {"outcome": outcome, "failing": issue.failing[:10], "still_failing": []}
    if len(runs) == 1:
        return {"outcome": "passes", "failing": [], "still_failing": []}
    tests = runs[1]
    new = new_failures(baseline, tests)
    before = set(baseline.failing) if baseline is not None else set()
    still = [name for name in tests.failing if name in before]
    outcome = "breaks_tests" if new else "issue_test_passes" if still else "passes"
    return {"outcome": outcome, "failing": new[:10], "still_failing": still[:10]}


def _changed_lines(before: str, after: str) -> tuple[int, int]:
    """Lines the change adds and removes."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    changed = [line for line in diff if not line.startswith(("+++", "---"))]
    return sum(line[:1] == "+" for line in changed), sum(line[:1] == "-" for line in changed)


def _first_guess(run: PassContext) -> float:
    """Seconds the first candidate may take, before one was timed: the longest model call
    of this pass so far."""
    entries = run.store.entries()
    starts = [at for at, entry in enumerate(entries) if entry.get("type") == "run_start"]
    this_pass = entries[starts[-1] :] if starts else entries
    latencies = [
        float(entry.get("latency_ms") or 0) / 1000
        for entry in this_pass
        if entry.get("type") == "model_call"
    ]
    return max(latencies, default=0.0)


def _why(runs: list[TestRun], outcome: str) -> str:
    """The lines of the last run's output that say why a candidate failed ('' when it
    passed): the issue's test when it failed, else the tests of the changed file."""
    if outcome == "passes":
        return ""
    last = runs[-1]
    text = failure_excerpt(last.tail) if last.tail.strip() else last.reason
    return text[-EARLIER_FAILURE_CHARS:]


def _shown_diff(original: str, text: str, spot: Spot) -> str:
    """The lines a candidate removed (`-`) and added (`+`), indented as the request shows
    the definition; places apart are separated by `@@`. At most EARLIER_DIFF_LINES."""
    first = spot.source.splitlines()[0] if spot.source.strip() else ""
    indent = first[: len(first) - len(first.lstrip())]
    diff = difflib.unified_diff(original.splitlines(), text.splitlines(), lineterm="", n=0)
    lines: list[str] = []
    for line in diff:
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("@@"):
            lines += ["@@"] if lines else []
            continue
        body = line[1:]
        lines.append(line[0] + (body[len(indent) :] if body.startswith(indent) else body))
    if len(lines) > EARLIER_DIFF_LINES:
        more = len(lines) - EARLIER_DIFF_LINES
        lines = [*lines[:EARLIER_DIFF_LINES], f"... ({more} more lines)"]
    return "\n".join(lines)
