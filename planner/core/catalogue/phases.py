"""The messages of the phase packages: approval, grounding, interactive planning, refinement,
replanning and verification."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

PHASES: tuple[Entry, ...] = (
    Entry(
        "PLN001",
        "files changed outside any judged call ({}) need a person's approval, but could not be "
        "rolled back: {}. Nothing of this run was committed or pushed after it.",
        "effectnotundone--a-commands-effect-that-could-not-be-rolled-back-exit-code-1",
    ),
    Entry(
        "PLN002",
        "{}: its effect needs a person's approval ({}), but it could not be rolled back: {}. "
        "Nothing of this run was committed or pushed after it.",
        "effectnotundone--a-commands-effect-that-could-not-be-rolled-back-exit-code-1",
    ),
    Entry(
        "PLN003",
        "plan {}: {} is unreadable ({}); it is left as it is",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN004",
        "an approval_plan history entry is malformed; it is skipped",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN141",
        "repository index cache {} unreadable ({}); indexing again",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN142",
        "repository index cache not written ({})",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN143",
        "interactive planning session {} is in {}: no plan before it is approved",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN144",
        "saving {} failed (attempt {}{}): {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN145",
        "could not save planning session {} to {} after {} retries: {}",
        "sessionsaveerror--interactive-planning-exit-code-1",
    ),
    Entry(
        "PLN146",
        "no planning session {} in {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN147",
        "skipped {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN148",
        "{} is not a planning session id (planning-<uuid>)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN149",
        "{} is not a valid planning session: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN150",
        "the issue's last planning_session entry is unreadable; ignored",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN151",
        "quality judge gave no usable reply: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN152",
        "the quality judge rejected the {} ({} after {} of {} refinement attempts)",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN153",
        "a quality_judgement history entry is malformed; the subject is judged again",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN154",
        "waiting for answers to the questions asked at {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN155",
        "replanning question at {} not asked: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN156",
        "replan decision at {} ignored: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN157",
        "replan at {} {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN158",
        "clarification needed at {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN159",
        "replan decision unusable ({}): {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN160",
        "replan decision is not JSON; continuing without a replan: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN161",
        "replan decision at {} unparseable; continuing without a replan",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN204",
        "verification.enabled is on, but: {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN205",
        "the fix is unproven: no test of the issue passed (planner's was dropped: {})",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN215",
        "replanning question at {} not asked: the issue already says what the named code should do",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN216",
        "replanning question at {} not asked: a tool call failed: correcting the call is "
        "the model's work, not a question",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN217",
        "replanning question at {} not asked: the issue already says what the questions ask",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN222",
        "the fix is unproven: only documentation changed, but the issue asks for behaviour ({}) "
        "and {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN223",
        "the change removes lines the issue did not ask to change from {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
)
