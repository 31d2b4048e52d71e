"""A candidate request shows a long docstring as its summary line, and the file keeps its whole
docstring whatever the reply does with it (planner.verification.fixes.candidates)."""

from __future__ import annotations

from pathlib import Path

from planner.core.interfaces import PointedDefinition
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.verification.fixes.candidates import Spot, shortened_docstring, spliced, spots
from tests.plans import completion
from tests.test_candidates import ISSUE, module_repo, run
from tests.test_verification_pass import of_type

DOCUMENTED = '''"""Two queues, documented like a released package."""


class Lifo:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        """Remove and return the newest item.

        The newest item is the one pushed last.

        >>> stack = Lifo()
        >>> stack.push(1)
        >>> stack.pop()
        1

        Raises IndexError when the stack is empty.
        """
        items = self.items
        if not items:
            raise IndexError("pop from an empty Lifo")
        return items.pop(0)
'''
DOCSTRING = DOCUMENTED[DOCUMENTED.index('        """Remove') : DOCUMENTED.index("        items =")]
TESTS = """from queues import Lifo


def test_one_item():
    stack = Lifo()
    stack.push(1)
    assert stack.pop() == 1
"""


def pop_spot(text: str = DOCUMENTED) -> Spot:
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if "def pop" in line)
    return Spot("queues.py", "Lifo.pop", "def", first + 1, len(lines), "".join(lines[first:]))


def reply(docstring: str) -> str:
    """Lifo.pop fixed, with the docstring the model chose to write."""
    return (
        f"```python\ndef pop(self):\n{docstring}    items = self.items\n    if not items:\n"
        '        raise IndexError("pop from an empty Lifo")\n    return items.pop()\n```'
    )


FIXED = DOCUMENTED.replace("return items.pop(0)", "return items.pop()")


def test_a_long_docstring_is_shown_as_its_summary_line_and_the_code_whole() -> None:
    shown = pop_spot().shown
    assert shown.startswith('def pop(self):\n    """Remove and return the newest item."""\n')
    assert ">>> stack" not in shown and "Raises" not in shown
    assert shown.endswith('raise IndexError("pop from an empty Lifo")\n    return items.pop(0)\n')


def test_short_docstrings_and_odd_ones_are_shown_as_the_file_has_them() -> None:
    three = 'def f():\n    """One.\n\n    Two."""\n    return 1\n'
    assert shortened_docstring(three) == three
    on_the_def_line = 'def f(): """One.\n\nTwo.\n\nThree."""\n'
    assert shortened_docstring(on_the_def_line) == on_the_def_line
    # the summary on the line after the quotes, a raw docstring
    raw = 'def f():\n    r"""\n    Match \\d+.\n\n    More.\n    """\n    return 1\n'
    assert shortened_docstring(raw) == 'def f():\n    r"""Match \\d+."""\n    return 1\n'
    # a summary that would end the string early is not cut
    quoted = "def f():\n    '''Says \"\"\" once.\n\n    More.\n\n    End.\n    '''\n    return 1\n"
    assert shortened_docstring(quoted).startswith("def f():\n    '''Says \"\"\" once.'''")


def test_the_reply_docstring_whatever_it_says_gives_way_to_the_files_whole_one() -> None:
    summary_only = '    """Remove and return the newest item."""\n'
    rewritten = '    """Pop the newest item (fixed)."""\n'
    for docstring in (summary_only, rewritten, ""):
        assert spliced(DOCUMENTED, pop_spot(), reply(docstring)) == FIXED, docstring
    # a reply that is only a docstring is no fix, and nothing is lost: it is left as written
    only_doc = '```python\ndef pop(self):\n    """Remove and return the newest item."""\n```'
    result = spliced(DOCUMENTED, pop_spot(), only_doc)
    assert result is not None and DOCSTRING in result


def test_a_definition_is_measured_by_its_code_not_its_docstring() -> None:
    documented = 'def big():\n    """Summary.\n' + "    text\n" * 150 + '    """\n'
    documented += "    x = 1\n" * 40
    long_code = "def long():\n" + "    x = 1\n" * 120
    files = {"m.py": documented + "\n\n" + long_code}
    size = len(documented.splitlines())
    places = [
        PointedDefinition(path="m.py", qualname="big", kind="def", start=1, end=size, score=9),
        PointedDefinition(
            path="m.py", qualname="long", kind="def", start=size + 3, end=size + 123, score=8
        ),
    ]
    chosen = spots(places, files.get, lambda path: False)
    assert [spot.qualname for spot in chosen] == ["big"]
    assert chosen[0].shown == 'def big():\n    """Summary."""\n' + "    x = 1\n" * 40


def test_a_pass_asks_without_the_docstring_and_the_winner_keeps_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = module_repo(tmp_path / "repo", "queues", DOCUMENTED, TESTS)
    scripted_model.add(
        reply_text("candidate", reply('    """Remove and return the newest item."""\n')),
        completion(),
    )
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    asked = str(scripted_model.requests[0].body["messages"][-1]["content"])
    assert '"""Remove and return the newest item."""' in asked
    assert ">>> stack.push(1)" not in asked.split("Method `Lifo.pop`")[1]
    assert (workspace / "queues.py").read_text(encoding="utf-8") == FIXED
    won = of_type(workspace, "candidates")[-1]
    assert won["status"] == "won" and "(+1/-1 lines)" in won["summary"]
    assert ISSUE.title
