"""The messages of the command line (planner/cli/) and of `planner eval`
(planner/evaluation/)."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

COMMANDS: tuple[Entry, ...] = (
    Entry(
        "PLN084",
        "eval: {}: {} (sha256 verified)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN085",
        "eval: {}: {} ({}{}, {} calls, {} prompt tokens, {}s)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN086",
        "eval: resolved {}/{}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN087",
        "run {} renewed the lease of issue {} lately (until {}), so it may still be working; "
        "wait for that time, or give --force if you know it is gone",
        "freeing-a-lease-by-hand",
    ),
    Entry(
        "PLN088",
        "{} has no git remote {}: {}",
        "freeing-a-lease-by-hand",
    ),
    Entry(
        "PLN089",
        "planner: error: {}",
        "where-to-look-first",
    ),
    Entry(
        "PLN090",
        "--repo {} is not a directory",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN091",
        "warning: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN092",
        'give an instruction (planner plan "what to build") or --resume',
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN093",
        "plan-tool {} needs a plan id (see plan-tool list)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN130",
        "{} is not in the evaluation cache ({}); fetch it first: planner eval --suite real "
        "--fetch-only (--suite holdout for the held-out tasks)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN131",
        "the downloaded {} has sha256 {}, but the task pins {}: not used",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN132",
        "downloading {} gave {}, not one archive",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN133",
        "pip download {} failed: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN134",
        "{} cannot be unpacked: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN135",
        "{} holds {}, outside its folder",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN136",
        "the recorded edit names {}, outside the package",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN137",
        "the recorded edit of {} cannot be applied: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN138",
        "the recorded edit of {} does not apply: its old text occurs {} times (it must occur once)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN139",
        "bad evaluation task {}: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN140",
        "no such task(s): {}; the suite has: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN220",
        "no such suite: {} is neither a suite's name ({}) nor a folder",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
)
