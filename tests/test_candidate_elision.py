"""A candidate request leaves out the blocks of a definition the issue's test did not run, and
the file gets them back from the reply's markers, as they were
(planner.verification.fixes.elision)."""

from __future__ import annotations

from pathlib import Path

from planner.core.interfaces import PointedDefinition
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.verification.fixes.candidates import Spot, spliced, spots
from planner.verification.fixes.elision import unrun_blocks
from tests.plans import completion
from tests.test_candidates import module_repo, run
from tests.test_verification_pass import of_type

MODULE = '''"""A stack with a pop at a chosen place."""


class Lifo:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self, where=None):
        items = self.items
        if where is not None:
            index = int(where)
            if index < 0:
                index += len(items)
            return items.pop(index)
        if not items:
            raise IndexError("pop from an empty Lifo")
        return items.pop(0)
'''
BLOCK = MODULE[MODULE.index("            index = int") : MODULE.index("        if not items")]
FIXED = MODULE.replace("return items.pop(0)", "return items.pop()")
TESTS = """from queues import Lifo


def test_one_item():
    stack = Lifo()
    stack.push(1)
    assert stack.pop() == 1
"""
FIRST = MODULE.splitlines().index("    def pop(self, where=None):") + 1
RAN = {FIRST + 1, FIRST + 2, FIRST + 7, FIRST + 9}  # the lines `stack.pop()` runs


def pop_spot(text: str = MODULE, ran: set[int] = RAN) -> Spot:
    lines = text.splitlines(keepends=True)
    source = "".join(lines[FIRST - 1 :])
    blocks = unrun_blocks(source, FIRST, ran)
    return Spot("queues.py", "Lifo.pop", "def", FIRST, len(lines), source, elided=blocks)


def reply(marker: str = "        ...  # block A: 4 lines the test does not run\n") -> str:
    """Lifo.pop fixed, written back with the marker it was shown (or what the model made of it)."""
    return (
        "```python\ndef pop(self, where=None):\n    items = self.items\n"
        f"    if where is not None:\n{marker}    if not items:\n"
        '        raise IndexError("pop from an empty Lifo")\n    return items.pop()\n```'
    )


def test_the_blocks_the_test_did_not_run_are_shown_as_one_line_each() -> None:
    shown = pop_spot().shown
    assert shown == (
        "def pop(self, where=None):\n    items = self.items\n    if where is not None:\n"
        "        ...  # block A: 4 lines the test does not run\n    if not items:\n"
        '        raise IndexError("pop from an empty Lifo")\n    return items.pop(0)\n'
    )
    # the outermost block only; a line of it that ran keeps the whole block shown
    assert pop_spot(ran=RAN | {FIRST + 3}).shown == pop_spot(ran=set()).shown
    assert "index += len(items)" in pop_spot(ran=set()).shown  # nothing ran: nothing to go by


def test_short_blocks_elifs_and_one_line_bodies_are_shown() -> None:
    source = (
        "def f(x):\n"
        "    if x == 1:\n        return 1\n"  # one line: shown
        "    elif x == 2:\n        a = 2\n        a += 1\n        return a\n"  # the elif's body
        "    elif x == 3: a = 3; a += 1; return a\n"  # on its header's line
        "    return 0\n"
    )
    ran = {2, 4, 8, 9}
    blocks = unrun_blocks(source, 1, ran)
    assert [(block.first, block.last) for block in blocks] == [(5, 7)]
    shown = Spot("m.py", "f", "def", 1, 9, source, elided=blocks).shown
    assert "    elif x == 2:\n        ...  # block A: 3 lines" in shown
    assert "    elif x == 3: a = 3; a += 1; return a\n" in shown


def test_the_reply_gets_the_blocks_back_as_they_were() -> None:
    assert spliced(MODULE, pop_spot(), reply()) == FIXED
    # the marker's words rewritten, its `...` dropped: still the same block
    assert spliced(MODULE, pop_spot(), reply("        # block A (unchanged)\n")) == FIXED
    # the block moved in by the model: its lines move with it
    moved = reply("        if True:\n            ...  # block A\n")
    result = spliced(MODULE, pop_spot(), moved)
    assert result is not None
    assert "\n".join("    " + line if line else line for line in BLOCK.split("\n")) in result


def test_a_reply_that_drops_or_repeats_a_block_is_not_used() -> None:
    dropped = reply("        pass\n")
    assert spliced(MODULE, pop_spot(), dropped) is None
    twice = reply("        ...  # block A\n        ...  # block A\n")
    assert spliced(MODULE, pop_spot(), twice) is None


def test_the_limit_on_a_definitions_length_counts_the_blocks_left_out() -> None:
    body = "    if x:\n" + "        y = 1\n" * 150 + "    return 0\n"
    short = "def small(x):\n    if x:\n" + "        y = 2\n" * 5 + "    return 1\n"
    files = {"m.py": "def big(x):\n" + body + "\n\n" + short}
    places = [
        PointedDefinition(path="m.py", qualname="big", kind="def", start=1, end=153, score=9),
        PointedDefinition(path="m.py", qualname="small", kind="def", start=156, end=163, score=8),
    ]
    covered = {"m.py": {2, 153, 157, 163}}
    chosen = spots(places, files.get, lambda path: False, covered=covered)
    # the long one is not asked for, though the test ran four lines of it
    assert [spot.qualname for spot in chosen] == ["small"]
    assert chosen[0].shown == (
        "def small(x):\n    if x:\n        ...  # block A: 5 lines the test does not run\n"
        "    return 1\n"
    )


def test_a_pass_asks_without_the_unrun_block_and_the_winner_keeps_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = module_repo(tmp_path / "repo", "queues", MODULE, TESTS)
    scripted_model.add(reply_text("candidate", reply()), completion())
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    asked = str(scripted_model.requests[0].body["messages"][-1]["content"])
    method = asked.split("Method `Lifo.pop`")[1]
    assert "...  # block A: 4 lines the test does not run" in method
    assert "index += len(items)" not in method
    assert (workspace / "queues.py").read_text(encoding="utf-8") == FIXED
    won = of_type(workspace, "candidates")[-1]
    assert won["status"] == "won" and "(+1/-1 lines)" in won["summary"]
