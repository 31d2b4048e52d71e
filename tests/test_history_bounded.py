"""The history holds what a person needs to follow a pass, not the payloads it refused.

Attack on the history's size: a model writes a 1.2 MB file (over tools.max_write_bytes, so the
write is refused) and a 60 KB one (written). The JSONL history used to keep every byte of both
calls' arguments, so each such call grew the history (and the lease ref and the cache that
carry it) by megabytes. Each string argument is kept as a short excerpt that says how much was
left out; the file itself is on disk and in the branch, where it belongs.
"""

from __future__ import annotations

from tests.harness import Harness
from tests.plans import completion, finish, planning, write

BIG = "x" * 1_200_000
MEDIUM = "y" * 3_500  # over the history excerpt, within a preview: written at once
OFF = {
    "planning.replanning.enabled": False,
    "planning.reflection.enabled": False,
    "budget.max_total_tokens": 10**9,
    "tools.max_write_bytes": 100_000,  # the scripted replies count their bytes as tokens
}


def test_refused_and_large_tool_arguments_are_kept_as_excerpts_in_the_history(
    harness: Harness,
) -> None:
    harness.server.add(
        planning("task_1"),
        write("big.txt", BIG),
        write("medium.txt", MEDIUM),
        finish(),
        completion(),
    )

    result = harness.run(**OFF)

    assert result.status == "completed", result.stop_reason
    assert (harness.workspace / "medium.txt").read_text() == MEDIUM  # the write itself is whole
    big, medium = harness.of_type("action")
    assert not big["ok"] and "refused" in big["error"]
    for entry, size in ((big, len(BIG)), (medium, len(MEDIUM))):
        arguments = entry["execution"]["function_call"]["arguments"]
        assert len(arguments["content"]) < 3_000
        assert (
            f"[{size - 2_000:,} more characters not kept in the history]" in (arguments["content"])
        )
    history = next(harness.workspace.glob("planning_history/*.jsonl"))
    assert history.stat().st_size < 100_000
