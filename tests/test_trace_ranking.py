"""Localisation through the issue test's trace past the function it calls (issue 59, item 4;
planner.verification.fixes.trace.Trace.ranked).

The class of bug: the issue names the function a user calls (`summary`), the wrong value is
computed two calls deeper, in another module (`amounts.net`), and only passed on and
formatted above it. The issue's test, run under the profiler, records which repository
function called which and what each returned: the function whose returned number is the part
of the asserted string that the expected string does not hold is asked for first, before the
function that returned the whole wrong string. When the test fails with an exception instead,
the repository functions of its traceback come first, innermost first.

A real package in a real git repository, real pytest under the real profiler; the model is
the scripted stand-in over HTTP.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.fixes.assertion import compared, pieces
from planner.verification.fixes.trace import MARK, Ranked, Trace, read_trace, traced_argv
from tests.plans import committed_repo, completion
from tests.test_verification_pass import config, of_type

REPORT = '''"""Lines of text about a ledger."""

from ledger.accounts import balance, mean_sale


def summary(entries):
    """The balance of the entries and how many there are, as one line."""
    return f"Balance: {balance(entries)} ({len(entries)} entries)"


def average(entries):
    """The mean amount of a sale, as one line."""
    return f"Average sale: {mean_sale(entries)}"


def statement(entries):
    """The balance as the statement at the end of the month writes it."""
    return f"Balance of the ledger after every entry of the month: {balance(entries)}"
'''
ACCOUNTS = '''"""Sums over the entries of a ledger: (kind, amount) pairs."""

from ledger.amounts import net, per_item


def amounts_of(entries, kind):
    return [amount for entry_kind, amount in entries if entry_kind == kind]


def balance(entries):
    return net(amounts_of(entries, "sale"), amounts_of(entries, "refund"))


def mean_sale(entries):
    sales = amounts_of(entries, "sale")
    return per_item(sum(sales), len(sales))
'''
AMOUNTS = '''"""Arithmetic on amounts."""


def net(incoming, outgoing):
    """What is left of the incoming amounts once the outgoing ones are paid."""
    return sum(incoming) + sum(outgoing)


def per_item(total, count):
    """The share of one item in a total."""
    return total // count
'''
LEDGER_TESTS = """from ledger.amounts import net, per_item
from ledger.report import average, summary


def test_sales_only():
    assert summary([("sale", 4), ("sale", 6)]) == "Balance: 10 (2 entries)"


def test_net_without_refunds():
    assert net([5], []) == 5


def test_average_of_sales():
    assert average([("sale", 4), ("sale", 8)]) == "Average sale: 6"
    assert per_item(9, 3) == 3
"""
FILES = {
    "ledger/__init__.py": '"""A small ledger."""\n',
    "ledger/report.py": REPORT,
    "ledger/accounts.py": ACCOUNTS,
    "ledger/amounts.py": AMOUNTS,
    "tests/test_ledger.py": LEDGER_TESTS,
    "pytest.ini": "[pytest]\npythonpath = .\n",
}
REFUND_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="The summary counts a refund as a sale",
    body=(
        "The summary's balance goes up with a refund:\n\n```python\n"
        ">>> from ledger.report import summary\n"
        '>>> summary([("sale", 10), ("refund", 3)])\n'
        "'Balance: 13 (2 entries)'\n```\n\n"
        "I expected `'Balance: 7 (2 entries)'`: the refund is paid out of the sale.\n"
    ),
)
NO_SALES_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="The average fails for a ledger without sales",
    body=(
        "A ledger with refunds only cannot be summarised:\n\n```python\n"
        ">>> from ledger.report import average\n"
        '>>> average([("refund", 3)])\n'
        "Traceback (most recent call last):\n  ...\n"
        "ZeroDivisionError: integer division or modulo by zero\n```\n\n"
        "I expected `'Average sale: 0'`, as for an empty ledger in the report.\n"
    ),
)
NET_FIXED = (
    "The outgoing amounts must be taken away, not added.\n\n```python\n"
    "def net(incoming, outgoing):\n    return sum(incoming) - sum(outgoing)\n```\n"
)
PER_ITEM_FIXED = (
    "Without items there is no share: the division by zero must not happen.\n\n```python\n"
    "def per_item(total, count):\n    if not count:\n        return 0\n"
    "    return total // count\n```\n"
)
PACKAGE = {path for path in FILES if path.startswith("ledger/")}


def ledger_repo(root: Path) -> Path:
    return committed_repo(root, FILES)


def in_package(path: str) -> str | None:
    return path if path in PACKAGE else None


def line_of(text: str, definition: str) -> int:
    return text.splitlines().index(definition) + 1


def profiled(workspace: Path, test: str) -> tuple[Trace, str]:
    """The issue's test, written to the repository and run under the profiler as planner runs
    it: its trace and its output."""
    (workspace / "tests" / "test_issue.py").write_text(test, encoding="utf-8")
    argv = traced_argv([sys.executable, "-m", "pytest", "-q", "tests/test_issue.py"], "python3")
    assert argv is not None
    done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # the test fails on the code before the change
    trace = read_trace(output)
    assert trace is not None, output
    return trace, output


NET = ("ledger/amounts.py", line_of(AMOUNTS, "def net(incoming, outgoing):"))
BALANCE = ("ledger/accounts.py", line_of(ACCOUNTS, "def balance(entries):"))
SUMMARY = ("ledger/report.py", line_of(REPORT, "def summary(entries):"))
PER_ITEM = ("ledger/amounts.py", line_of(AMOUNTS, "def per_item(total, count):"))
MEAN_SALE = ("ledger/accounts.py", line_of(ACCOUNTS, "def mean_sale(entries):"))
AVERAGE = ("ledger/report.py", line_of(REPORT, "def average(entries):"))


# -- the ranking of a real profiled run ---------------------------------------------------------


def test_the_number_formatted_into_the_wrong_string_ranks_where_it_was_computed(
    tmp_path: Path,
) -> None:
    """`summary` returns the whole wrong string; `balance` passes on the wrong number that
    `net`, in another module, computed. The number is the part of the string the expected
    string does not hold: `net` first, then `balance`, then `summary`."""
    workspace = ledger_repo(tmp_path / "repo")
    trace, output = profiled(
        workspace,
        "from ledger.report import summary\n\n\ndef test_it():\n"
        '    assert summary([("sale", 10), ("refund", 3)]) == "Balance: 7 (2 entries)"\n',
    )
    ranked = trace.ranked(output, in_package)
    assert ranked[:3] == [
        Ranked(*NET, "flows"),
        Ranked(*BALANCE, "flows"),
        Ranked(*SUMMARY, "returned_wrong"),
    ]
    # `amounts_of` ran under `balance` and returned [10] and [3]: not parts of the string
    assert len(ranked) == 3
    # the call edges it followed: test → summary → balance → net, across three modules
    depths = trace.depths(in_package)
    assert (depths[SUMMARY], depths[BALANCE], depths[NET]) == (1, 2, 3)
    net = next(item for item in trace.ran if (item.path, item.line) == NET)
    assert net.callers == (BALANCE,)


def test_a_string_pytest_shortens_in_the_comparison_is_read_from_its_diff(
    tmp_path: Path,
) -> None:
    """pytest writes `assert 'Balance of t...e month: 13' == ...` for a longer string, and
    below it a diff of the two without their long common start: the ranking reads the wrong
    value from both."""
    workspace = ledger_repo(tmp_path / "repo")
    trace, output = profiled(
        workspace,
        "from ledger.report import statement\n\n\ndef test_it():\n"
        '    assert statement([("sale", 10), ("refund", 3)]) == (\n'
        '        "Balance of the ledger after every entry of the month: 7"\n    )\n',
    )
    assert "assert 'Balance of t" in output and "identical leading characters" in output
    comparison = compared(output)
    assert comparison is not None
    wrong = "Balance of the ledger after every entry of the month: 13"
    assert comparison.is_actual(repr(wrong))
    assert not comparison.is_actual(repr(wrong.replace("Balance", "Balanse")))
    assert not comparison.is_actual(repr(wrong + " "))
    assert not comparison.is_actual(repr(wrong.replace("13", "31")))
    statement = ("ledger/report.py", line_of(REPORT, "def statement(entries):"))
    assert trace.ranked(output, in_package) == [
        Ranked(*NET, "flows"),
        Ranked(*BALANCE, "flows"),
        Ranked(*statement, "returned_wrong"),
    ]


def test_an_exception_ranks_the_functions_of_its_traceback_innermost_first(
    tmp_path: Path,
) -> None:
    """Where a value was expected the test fails with ZeroDivisionError raised two calls
    below the function it calls: that function, then its callers, in the traceback's order."""
    workspace = ledger_repo(tmp_path / "repo")
    trace, output = profiled(
        workspace,
        "from ledger.report import average\n\n\ndef test_it():\n"
        '    assert average([("refund", 3)]) == "Average sale: 0"\n',
    )
    assert trace.ranked(output, in_package) == [
        Ranked(*PER_ITEM, "raised"),
        Ranked(*MEAN_SALE, "raised"),
        Ranked(*AVERAGE, "raised"),
    ]


# -- the parts ---------------------------------------------------------------------------------


def test_a_part_the_expected_value_holds_too_is_not_suspected() -> None:
    """The formatter is wrong ('entrys'), the number it formats is right: the function that
    computed it is not ranked above the formatter, nor at all."""
    found = [
        ["tests/test_issue.py", 1, [["None", 9]], [2], [], 0],
        ["fmt.py", 1, [["'Count: 7 (2 entrys)'", 8]], [2], [["tests/test_issue.py", 1]], 0],
        ["count.py", 1, [["7", 5], ["2", 6]], [2], [["fmt.py", 1]], 0],
    ]
    trace = read_trace(f"{MARK}{json.dumps(found)}")
    assert trace is not None
    failure = "E       AssertionError: assert 'Count: 7 (2 entrys)' == 'Count: 7 (2 entries)'\n"
    resolve = lambda path: path if path in ("fmt.py", "count.py") else None  # noqa: E731
    assert trace.ranked(failure, resolve) == [Ranked("fmt.py", 1, "returned_wrong")]
    # a `!=` check says nothing of what was expected: every part of the wrong value is
    # suspected, after the function that returned it
    failure = "E       AssertionError: assert 'Count: 7 (2 entrys)' != 'Count: 7 (2 entrys)'\n"
    assert trace.ranked(failure, resolve) == [
        Ranked("fmt.py", 1, "returned_wrong"),
        Ranked("count.py", 1, "flows"),
    ]


def test_the_strings_of_a_multi_line_diff_are_put_back_together() -> None:
    failure = (
        "E       AssertionError: assert 'Balance\\nof ...end of it all' == "
        "'Balance\\nof ...end of it all'\n"
        "E         \n"
        "E           Balance\n"
        "E         - of the account: 7\n"
        "E         ?                 ^\n"
        "E         + of the account: 13\n"
        "E         ?                 ^^\n"
        "E           end of it all\n"
        "\n"
        "E         + not this test's\n"
    )
    comparison = compared(failure)
    assert comparison is not None
    assert comparison.actual == repr("Balance\nof the account: 13\nend of it all")
    assert comparison.expected == repr("Balance\nof the account: 7\nend of it all")
    assert comparison.is_actual(comparison.actual)
    # a list pytest shortens has no diff of lines: nothing is known of it
    failure = (
        "E       assert [1, 2, 3, ...] == [1, 2, 3, ...]\nE         \nE         At index 21 diff\n"
    )
    assert compared(failure) is None


def test_the_parts_of_a_value_are_its_items_words_and_numbers() -> None:
    assert pieces("'Balance: 13 (2 entries)'") == {"Balance", "13", "2", "entries"}
    assert pieces("13") <= pieces("'Balance: 13 (2 entries)'")
    assert not pieces("13") <= pieces("'Balance: -13'")  # a sign is part of a number
    assert pieces("'2024-05-07'") == {"2024", "5", "7"}  # a date's dashes are no signs
    assert pieces("[1, 'a b']") == {"1", "a", "b"}
    assert pieces("{'total': 3.50}") == {"total", "3.5"}
    assert pieces("None") == pieces("True") == pieces("''") == frozenset()
    assert pieces("<object at 0x1>") == {"object", "at", "0", "x1"}  # not a literal: its text


def test_call_edges_and_traceback_places_are_read_as_untrusted_data() -> None:
    """A test can print anything: callers and traceback places that are not what the
    profiler prints are dropped, the function itself is kept."""
    forged = [
        ["a.py", 1, [], [], "junk", "1"],
        ["b.py", 1, [], [], [["a.py", 1], ["a.py"], [1, 2], ["a.py", True]], True],
        ["c.py", 1, [], [], [["b.py", 1]] * 50, -3],
        ["d.py", 1, [], [], [], 2, "extra"],
    ]
    trace = read_trace(f"{MARK}{json.dumps(forged)}")
    assert trace is not None
    by_path = {item.path: item for item in trace.ran}
    assert set(by_path) == {"a.py", "b.py", "c.py"}
    assert by_path["a.py"].callers == () and by_path["a.py"].raised == 0
    assert by_path["b.py"].callers == (("a.py", 1),) and by_path["b.py"].raised == 0
    assert len(by_path["c.py"].callers) == 8 and by_path["c.py"].raised == 0


# -- whole passes ------------------------------------------------------------------------------


def candidate_pass(
    workspace: Path, server: ScriptedModelServer, issue: IssueContext, reply: str
) -> PassResult:
    """A pass with one model candidate and no mechanical ones; the model then completes."""
    server.add(reply_text("candidate", reply), completion())
    settings = {
        "verification.issue_test": True,
        "verification.candidates": 1,
        "planning.decompose": False,
    }
    return run_pass(PassSetup(config=config(server, **settings), workspace=workspace), issue)


def asked_for(server: ScriptedModelServer) -> str:
    return str(server.requests[0].body["messages"][-1]["content"])


def test_the_first_model_candidate_is_asked_for_the_function_two_calls_deeper(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = ledger_repo(tmp_path / "repo")
    result = candidate_pass(workspace, scripted_model, REFUND_ISSUE, NET_FIXED)

    assert result.status == "completed", result.stop_reason
    asked = asked_for(scripted_model)
    assert f"Function `net` of ledger/amounts.py (lines {NET[1]}-" in asked
    assert "what it returns becomes part of the wrong value the test's assertion shows" in asked
    judged = of_type(workspace, "candidate")
    assert [(c["spot"], c["outcome"]) for c in judged] == [("ledger/amounts.py:net", "passes")]
    text = (workspace / "ledger" / "amounts.py").read_text(encoding="utf-8")
    assert "return sum(incoming) - sum(outgoing)" in text
    # the history says why each function was asked for
    located = [e for e in of_type(workspace, "candidates") if e["status"] == "located"]
    assert located[0]["ranking"][:3] == [
        {"spot": "ledger/amounts.py:net", "why": "flows"},
        {"spot": "ledger/accounts.py:balance", "why": "flows"},
        {"spot": "ledger/report.py:summary", "why": "returned_wrong"},
    ]
    assert located[0]["returned_wrong"] == [f"{SUMMARY[0]}:{SUMMARY[1]}"]


def test_the_first_model_candidate_is_asked_for_where_the_exception_was_raised(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A fix of three lines in the innermost function of the traceback, two modules away
    from the function the issue shows."""
    workspace = ledger_repo(tmp_path / "repo")
    result = candidate_pass(workspace, scripted_model, NO_SALES_ISSUE, PER_ITEM_FIXED)

    assert result.status == "completed", result.stop_reason
    asked = asked_for(scripted_model)
    assert f"Function `per_item` of ledger/amounts.py (lines {PER_ITEM[1]}-" in asked
    assert "the error is raised in it or passes through it" in asked
    judged = of_type(workspace, "candidate")
    assert [(c["spot"], c["outcome"]) for c in judged] == [("ledger/amounts.py:per_item", "passes")]
    located = [e for e in of_type(workspace, "candidates") if e["status"] == "located"]
    assert [entry["why"] for entry in located[0]["ranking"][:3]] == ["raised"] * 3
    assert located[0]["ranking"][0]["spot"] == "ledger/amounts.py:per_item"


CODES = '''"""Product codes."""


def _first_letter(text):
    return text[:1].isalpha()


def _verdict(text):
    return "valid" if _first_letter(text) and len(text) < 5 else "invalid"


def describe(code):
    """Print whether a product code is valid."""
    print(f"{code}: {_verdict(code)}")
'''
CODES_TESTS = """from codes import describe


def test_a_short_code(capsys):
    describe("AB1")
    assert capsys.readouterr().out == "AB1: valid\\n"


def test_too_long_and_no_letter_first(capsys):
    describe("ABCDEF")
    describe("1AB")
    assert capsys.readouterr().out == "ABCDEF: invalid\\n1AB: invalid\\n"
"""
CODES_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="describe rejects a code of five characters",
    body=(
        '```python\n>>> from codes import describe\n>>> describe("AB-12")\n'
        "AB-12: invalid\n```\n\nI expected it to print `AB-12: valid`.\n"
    ),
)


def test_without_a_compared_value_the_functions_nearer_the_test_come_first(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The issue's test checks printed text (`assert 'AB-12: valid' in ...`): no value
    to follow, no exception. After the function the issue names, the functions its words do
    not rank are taken in the order of the calls below the test: `_verdict`, which
    `describe` calls, before `_first_letter`, which `_verdict` calls, though the file
    defines `_first_letter` first. The mechanical candidates follow that order."""
    workspace = committed_repo(
        tmp_path / "repo",
        {"codes.py": CODES, "tests/test_codes.py": CODES_TESTS, "pytest.ini": FILES["pytest.ini"]},
    )
    scripted_model.add(completion())
    settings = {
        "verification.issue_test": True,
        "verification.candidates": 0,
        "verification.mutants": 20,
        "planning.decompose": False,
    }
    result = run_pass(
        PassSetup(config=config(scripted_model, **settings), workspace=workspace), CODES_ISSUE
    )

    assert result.status == "completed", result.stop_reason
    located = [e for e in of_type(workspace, "candidates") if e["status"] == "located"]
    assert located[0]["ranking"] == [
        {"spot": "codes.py:describe", "why": "ran"},
        {"spot": "codes.py:_verdict", "why": "ran"},
        {"spot": "codes.py:_first_letter", "why": "ran"},
    ]
    judged = of_type(workspace, "candidate")
    assert "codes.py:_first_letter" not in {c["spot"] for c in judged}
    assert judged[-1]["spot"] == "codes.py:_verdict" and judged[-1]["outcome"] == "passes"
    assert "len(text) <= 5" in (workspace / "codes.py").read_text(encoding="utf-8")
