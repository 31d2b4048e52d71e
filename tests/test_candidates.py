"""Candidate fixes before the first task (issue 46, verification.candidates): one model call
each writes back one located definition; each is put in place, judged by the issue's test and
the tests of the changed file, and taken back; the first whose tests pass is the task's work.

The whole-pass tests run a real git repository with a real pytest suite; the model is the
scripted stand-in over HTTP, its replies shaped like the 1.5B's (a sentence, then the
method alone, outside its class, without its docstring).
"""

from __future__ import annotations

from pathlib import Path

from planner.core.interfaces import PointedDefinition
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.fixes.candidates import Spot, failure_excerpt, spliced, spots
from tests.plans import completion, finish, git_repo
from tests.test_verification_pass import config, of_type

QUEUES = '''"""Two queues."""


class Fifo:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        """Remove and return the oldest item."""
        return self.items.pop(0)


class Lifo:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    @property
    def size(self):
        return len(self.items)

    def pop(self):
        """Remove and return the newest item."""
        items = self.items
        if not items:
            raise IndexError("pop from an empty Lifo")
        # the newest item comes out first
        return items.pop(0)
'''
QUEUE_TESTS = """import pytest

from queues import Fifo, Lifo


def test_fifo_pops_the_oldest():
    queue = Fifo()
    queue.push(1)
    queue.push(2)
    assert queue.pop() == 1


def test_lifo_pops_the_only_item():
    stack = Lifo()
    stack.push(7)
    assert stack.pop() == 7
    assert stack.size == 0


def test_an_empty_lifo_cannot_pop():
    with pytest.raises(IndexError, match="empty Lifo"):
        Lifo().pop()
"""
ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Lifo.pop returns the oldest item",
    body=(
        "`Lifo` should pop the newest item first:\n\n"
        "```python\n>>> from queues import Lifo\n>>> stack = Lifo()\n>>> stack.push(1)\n"
        ">>> stack.push(2)\n>>> stack.pop()\n1\n```\n\nI expected `2`.\n"
    ),
)
UNCHANGED_PUSH = (
    "`push` is right.\n```python\ndef push(self, item):\n    self.items.append(item)\n```"
)
GUARD = 'raise IndexError("pop from an empty Lifo")'


def pop_reply(sentence: str, last: str, guard: str = GUARD) -> str:
    """Lifo.pop alone, outside its class and without its docstring, as the 1.5B writes it."""
    return (
        f"{sentence}\n\n```python\ndef pop(self):\n    items = self.items\n    if not items:\n"
        f"        {guard}\n    # the newest item comes out first\n    {last}\n```\n"
    )


NOT_IT = pop_reply("The line `return items.pop(0)` is wrong.", "return items.pop(-2)")
PEEKS = pop_reply("The newest item is the last one.", "return items[-1]")  # leaves it in
RIGHT = pop_reply("The line `return items.pop(0)` takes the oldest item.", "return items.pop()")
CANDIDATES = {"verification.candidates": 5, "planning.decompose": False}
ISSUE_TEST = "tests/test_planner_issue_3.py"


def module_repo(root: Path, module: str, text: str, tests: str) -> Path:
    """A git repository of one module and its pytest tests (`tests/test_<module>.py`)."""
    (root / "tests").mkdir(parents=True)
    (root / f"{module}.py").write_text(text, encoding="utf-8")
    (root / "tests" / f"test_{module}.py").write_text(tests, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    return git_repo(root)


def queues_repo(root: Path) -> Path:
    return module_repo(root, "queues", QUEUES, QUEUE_TESTS)


def run(workspace: Path, server: ScriptedModelServer, **overrides: object) -> PassResult:
    values = {"verification.issue_test": True, **CANDIDATES, **overrides}
    return run_pass(PassSetup(config=config(server, **values), workspace=workspace), ISSUE)


def kinds(server: ScriptedModelServer) -> list[str | None]:
    return [request.kind for request in server.requests]


# -- whole passes ------------------------------------------------------------------------------


def test_a_wrong_candidate_is_taken_back_and_the_one_whose_tests_pass_is_the_tasks_work(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = queues_repo(tmp_path / "repo")
    scripted_model.add(
        reply_text("candidate", NOT_IT),
        reply_text("candidate", UNCHANGED_PUSH),
        reply_text("candidate", "It is `Fifo.push`.\n```python\nimport os\n```"),  # no __init__
        reply_text("candidate", RIGHT),
        completion(),
    )
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    assert kinds(scripted_model) == [*["candidate"] * 4, "completion"]  # no task conversation
    judged = of_type(workspace, "candidate")
    # the functions the issue's test ran, the one that returned the wrong value first
    assert [(c["number"], c["spot"], c["outcome"]) for c in judged] == [
        (1, "queues.py:Lifo.pop", "issue_test_fails"),
        (2, "queues.py:Lifo.push", "unchanged"),
        (3, "queues.py:Lifo.__init__", "unusable"),
        (4, "queues.py:Lifo.pop", "passes"),
    ]
    assert judged[2]["reply"].startswith("It is `Fifo.push`.")  # what could not be used
    # the second round samples warmer, with a seed of its own
    bodies = [request.body for request in scripted_model.requests]
    assert "seed" not in bodies[0] and bodies[3]["seed"] == 101
    # the request shows the issue's failing test, the error and the method alone
    asked = str(bodies[0]["messages"][-1]["content"])
    assert "Method `Lifo.pop` of queues.py (lines 27-33)" in asked
    assert "E       assert 1 == 2" in asked and "assert (stack.pop()) == 2" in asked
    # the winner is in the tree, in Lifo only, with its docstring; Fifo is as it was
    text = (workspace / "queues.py").read_text(encoding="utf-8")
    assert text == QUEUES[: QUEUES.rindex("return items.pop(0)")] + "return items.pop()\n"
    # written like any change, as the task's work, and the task is complete
    writes = [e for e in of_type(workspace, "action") if e["task_id"] == "task_1"]
    assert writes[0]["execution"]["function_call"]["name"] == "write_file"
    done = [e for e in of_type(workspace, "task") if e["status"] == "completed"]
    assert done[0]["summary"] == (
        "candidate fix 4 of 5 for queues.py:Lifo.pop (+1/-1 lines): its tests pass"
    )
    assert of_type(workspace, "candidates")[-1]["status"] == "won"
    # the issue's test proves it and goes into the change
    assert (workspace / ISSUE_TEST).is_file()
    note = result.verification
    assert note is not None and not note.unfinished and not note.issue_failures
    # the pull request says which candidate the change began as
    assert (
        "This change began as candidate fix 4, for `queues.py:Lifo.pop`, after 3 taken back."
        in (note.details())
    )


def test_when_no_candidate_holds_the_tree_is_untouched_and_the_task_runs_as_usual(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """PEEKS passes the issue's test but breaks a test that passed before: it never wins."""
    workspace = queues_repo(tmp_path / "repo")
    empty = "```python\ndef __init__(self):\n    self.items = list()\n```"
    scripted_model.add(
        reply_text("candidate", PEEKS),
        reply_text("candidate", UNCHANGED_PUSH),
        reply_text("candidate", empty),  # Lifo's test still fails
        # the task, the repair task the failing test adds, and the repair's second try
        *[finish("failed", "I could not find it.")] * 3,
    )
    result = run(workspace, scripted_model, **{"verification.candidates": 3})

    judged = of_type(workspace, "candidate")
    assert [c["outcome"] for c in judged] == ["breaks_tests", "unchanged", "issue_test_fails"]
    assert judged[0]["failing"] == ["tests/test_queues.py::test_lifo_pops_the_only_item"]
    assert of_type(workspace, "candidates")[-1] == {
        **of_type(workspace, "candidates")[-1],
        "status": "none",
        "reason": "no candidate passed the tests",
    }
    # the task's own conversation ran on the code before any candidate
    assert kinds(scripted_model)[3] == "execute"
    task_prompt = str(scripted_model.requests[3].body["messages"][-1]["content"])
    assert "self.items.insert(0, item)" not in task_prompt and "items[-1]" not in task_prompt
    assert (workspace / "queues.py").read_text(encoding="utf-8") == QUEUES
    assert result.status != "completed"


def test_a_candidate_that_changes_two_places_is_tried_place_by_place(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The right line, and an empty Lifo that no longer raises: the whole change breaks a test
    that passed before; its second change alone is the fix."""
    workspace = queues_repo(tmp_path / "repo")
    both = pop_reply("Two lines.", "return items.pop()", guard="return None")
    scripted_model.add(reply_text("candidate", both), completion())
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    judged = [
        (c["number"], c.get("part", 0), c["outcome"]) for c in of_type(workspace, "candidate")
    ]
    assert judged == [(1, 0, "breaks_tests"), (1, 1, "issue_test_fails"), (1, 2, "passes")]
    text = (workspace / "queues.py").read_text(encoding="utf-8")
    assert 'raise IndexError("pop from an empty Lifo")' in text
    assert text.endswith("        return items.pop()\n")


def test_without_the_setting_no_candidate_is_asked_for(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = queues_repo(tmp_path / "repo")
    scripted_model.add(*[finish("failed", "I could not find it.")] * 3)
    run(workspace, scripted_model, **{"verification.candidates": 0})
    assert "candidate" not in kinds(scripted_model)
    assert not of_type(workspace, "candidate")


# -- the parts ---------------------------------------------------------------------------------


def spot_of(text: str, qualname: str, kind: str = "def") -> Spot:
    name = qualname.rsplit(".", 1)[-1]
    lines = text.splitlines(keepends=True)
    owner = qualname.split(".")[0] if "." in qualname else ""
    start = 0
    if owner:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"class {owner}"))
    first = next(
        i
        for i, line in enumerate(lines)
        if i >= start and line.lstrip().startswith((f"def {name}(", f"class {name}"))
    )
    end = first + 1
    indent = len(lines[first]) - len(lines[first].lstrip())
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    while first > 0 and lines[first - 1].lstrip().startswith("@"):
        first -= 1
    return Spot("queues.py", qualname, kind, first + 1, end, "".join(lines[first:end]))


def test_a_method_written_alone_replaces_the_method_of_its_own_class() -> None:
    spot = spot_of(QUEUES, "Lifo.pop")
    result = spliced(QUEUES, spot, RIGHT)
    assert result is not None
    assert result.count("return self.items.pop(0)") == 1  # Fifo's
    assert result.endswith(
        "        # the newest item comes out first\n        return items.pop()\n"
    )
    assert (
        '        """Remove and return the newest item."""\n        items = self.items\n' in result
    )


def test_a_reply_without_the_decorator_keeps_it_and_one_that_does_not_parse_is_unusable() -> None:
    spot = spot_of(QUEUES, "Lifo.size")
    result = spliced(
        QUEUES, spot, "```python\ndef size(self):\n    return len(self.items) + 0\n```"
    )
    assert result is not None and "    @property\n    def size(self):\n" in result
    assert spliced(QUEUES, spot, "```python\ndef size(self)\n    return 1\n```") is None
    assert spliced(QUEUES, spot, "```python\ndef other(self):\n    return 1\n```") is None


def test_a_corrected_line_alone_replaces_the_line_most_like_it() -> None:
    """Replies the 1.5B gave: the corrected line alone, or the wrong line and then the
    corrected one, each in a block of its own."""
    spot = spot_of(QUEUES, "Lifo.pop")
    alone = "The corrected line should be:\n```python\nreturn items.pop()\n```"
    result = spliced(QUEUES, spot, alone)
    assert result is not None and result.endswith("        return items.pop()\n")
    assert result.count("return self.items.pop(0)") == 1  # Fifo's, outside the spot
    pair = (
        "It is:\n```python\nreturn items.pop(0)\n```\nShould be:\n```python\nreturn items[-1]\n```"
    )
    assert str(spliced(QUEUES, spot, pair)).endswith("        return items[-1]\n")
    # the wrong line quoted alone, or a line like none of the definition's, changes nothing
    assert spliced(QUEUES, spot, "```python\nreturn items.pop(0)\n```") is None
    assert spliced(QUEUES, spot, "```python\nimport collections\n```") is None


def test_a_reply_that_only_strips_blank_lines_changes_nothing() -> None:
    text = 'def f():\n    """Doc.\n    \n    More."""\n    return 1\n'
    spot = Spot("m.py", "f", "def", 1, 5, text)
    reply = '```python\ndef f():\n    """Doc.\n\n    More."""\n    return 1\n```'
    assert spliced(text, spot, reply) == text


def test_spots_leave_out_tests_long_definitions_and_what_lies_inside_a_chosen_one() -> None:
    long_body = "def long():\n" + "    x = 1\n" * 120
    files = {"queues.py": QUEUES, "tests/test_queues.py": QUEUE_TESTS, "big.py": long_body}

    def pointed(
        path: str, qualname: str, start: int, end: int, **extra: object
    ) -> PointedDefinition:
        return PointedDefinition(
            path=path, qualname=qualname, kind="def", start=start, end=end, score=50, **extra
        )

    places = [
        pointed("tests/test_queues.py", "test_lifo_pops_the_only_item", 13, 17),
        pointed("big.py", "long", 1, 121),
        pointed("queues.py", "Lifo", 16, 33),
        pointed("queues.py", "Lifo.pop", 27, 33),
        pointed("queues.py", "Fifo.pop", 11, 13),
        pointed("queues.py", "Fifo", 4, 13),
        pointed("queues.py", "Fifo.push", 8, 9, called_by="long"),
    ]
    chosen = spots(places, files.get, lambda path: path.startswith("tests/"), limit=4)
    # a function the too-long `long` calls comes first; Lifo.pop lies inside Lifo, and Fifo
    # holds Fifo.pop, chosen before it
    assert [s.qualname for s in chosen] == ["Fifo.push", "Lifo", "Fifo.pop"]
    assert chosen[1].source.startswith("class Lifo:")


def test_the_failure_shown_is_the_pointed_line_and_the_error() -> None:
    tail = (
        "    def get_in(keys, coll):\n        try:\n"
        ">           return reduce(getitem, keys, coll)\n"
        "E           TypeError: list indices must be integers\n\n"
        "toolz/dicttoolz.py:335: TypeError\n=== short test summary info ===\nFAILED x\n"
    )
    assert failure_excerpt(tail) == (
        ">           return reduce(getitem, keys, coll)\n"
        "E           TypeError: list indices must be integers\n"
        "toolz/dicttoolz.py:335: TypeError"
    )


def test_a_file_with_crlf_line_endings_keeps_them() -> None:
    text = QUEUES.replace("\n", "\r\n")
    result = spliced(text, spot_of(text, "Lifo.pop"), RIGHT)
    assert result is not None and result.endswith("return items.pop()\r\n")
    assert "\n" not in result.replace("\r\n", "")
