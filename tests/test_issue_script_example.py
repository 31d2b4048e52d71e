"""The issue's own script as its test (planner.verification.reproduction.script, issue 59): a
short script in a code block that prints what it computes, the output the issue shows for it
(another code block, or "it prints `6`") and the value the issue says it expected become the
issue's test with no model call; so does a script, or a `>>>` session, whose call raised where
a value was expected. The test goes the way of the `>>>` session's (test_issue_example.py).

Of eight released packages with a real bug put back, four issues that showed such an example
got no issue test from the 1.5B ("the reply held no test"). The builders below are run against
tiny invented packages, and their tests by pytest: failing on the bug, passing on the fix.
"""

from __future__ import annotations

from pathlib import Path

from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.reproduction.script import script_test
from planner.verification.reproduction.transcript import transcript_test
from tests.support.issue_test_replies import block, issue_test_then_fixes
from tests.test_candidates import module_repo
from tests.test_issue_example import fails_then_passes, module, pytest_on
from tests.test_issue_test import LEGACY, issue_test_entries
from tests.test_verification_pass import config, last_prompt

FENCE = "```"
MEAN = 'def mean(values):\n    """The arithmetic mean."""\n    return sum(values) // len(values)\n'
MEAN_FIXED = MEAN.replace("//", "/")
MEAN_ROUNDED = MEAN.replace("sum(values) // len(values)", "round(sum(values) / len(values))")
MEAN_SCRIPT = (
    f"{FENCE}python\nfrom tally import mean\n\nprint(mean([1, 2]))\nprint(mean([2, 4]))\n{FENCE}\n"
)
SETTINGS = (
    'SETTINGS = {"host": "localhost"}\n\n\n'
    "def get(key, default=None):\n"
    '    """The setting `key`, or `default` when it is not set."""\n'
    "    return SETTINGS[key]\n"
)
SETTINGS_FIXED = SETTINGS.replace("SETTINGS[key]", "SETTINGS.get(key, default)")
PORT_TRACEBACK = (
    f"{FENCE}\nlocalhost\nTraceback (most recent call last):\n"
    '  File "show.py", line 4, in <module>\n'
    '    port = get("port", 8000)\n'
    '  File "/venv/lib/settings.py", line 6, in get\n'
    "    return SETTINGS[key]\n"
    f"KeyError: 'port'\n{FENCE}\n"
)


def built(folder: Path, body: str, name: str, text: str) -> str:
    """The test built from `body`'s script (there must be one), `name` holding `text`."""
    test = script_test(body, module(folder, name, text))
    assert test is not None
    return test


def checks(test: str) -> list[str]:
    return [line.strip() for line in test.splitlines() if line.strip().startswith("assert")]


# -- a script that prints ------------------------------------------------------------------------


def test_a_print_script_with_its_output_below_becomes_a_check_of_the_printed_value(
    tmp_path: Path,
) -> None:
    """The output block says what each print showed; the expected value goes to the print
    whose shown number it replaces (`1`, not `3`), and the check is of the value printed."""
    body = (
        MEAN_SCRIPT + f"Output:\n\n{FENCE}\n1\n3\n{FENCE}\n\nI expected `1.5` on the first line.\n"
    )
    test = built(tmp_path, body, "tally", MEAN)
    assert checks(test) == ["assert printed == 1.5 or str(printed) == '1.5'"]
    assert "    printed = (mean([1, 2]))" in test
    assert "print(mean([2, 4]))" not in test  # after the checked call: not replayed
    assert "from tally import mean" in test
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)
    (tmp_path / "tally.py").write_text(MEAN_ROUNDED, encoding="utf-8")
    assert pytest_on(tmp_path, "test_mean.py", test).returncode == 1  # round(1.5) is 2


def test_what_the_prose_says_it_printed_is_the_shown_output_not_an_expected_value(
    tmp_path: Path,
) -> None:
    """ "It prints `1` but should print `1.5`" is one expecting sentence: `1` is what the user
    got. Taken as expected, it would pair with the print and the check would hold the bug."""
    script = f"{FENCE}python\nfrom tally import mean\nprint(mean([1, 2]))\n{FENCE}\n"
    body = script + "It prints `1` but should print `1.5`.\n"
    test = built(tmp_path, body, "tally", MEAN)
    assert checks(test) == ["assert printed == 1.5 or str(printed) == '1.5'"]
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)

    (tmp_path / "tally.py").write_text(MEAN, encoding="utf-8")
    two = (  # `2` taken as expected would go to the first print: a check no fix passes
        f"{FENCE}python\nfrom tally import mean\nprint(mean([1, 2]))\nprint(mean([2, 3]))\n"
        f"{FENCE}\n{FENCE}\n1\n2\n{FENCE}\nThe second line shows `2` where I expected `2.5`.\n"
    )
    test = built(tmp_path, two, "tally", MEAN)
    assert checks(test) == ["assert printed == 2.5 or str(printed) == '2.5'"]
    expected_result = two.replace(
        "The second line shows `2` where I expected", "The correct result is"
    )
    assert script_test(expected_result, tmp_path) == test
    assert "    print(mean([1, 2]))\n    printed = (mean([2, 3]))" in test


def test_the_comment_after_each_print_is_what_it_printed(tmp_path: Path) -> None:
    body = (
        f"{FENCE}python\nfrom tally import mean\n\nprint(mean([1, 2]))  # 1\n"
        f"print(mean([2, 4]))  # -> 3\n{FENCE}\nThe first should be `1.5`.\n"
    )
    test = built(tmp_path, body, "tally", MEAN)
    assert checks(test) == ["assert printed == 1.5 or str(printed) == '1.5'"]
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)
    said = body.replace("# -> 3", "# should print 3")  # what was expected, not what printed
    assert script_test(said, tmp_path) is None


def test_several_prints_pair_in_order_with_the_values_one_sentence_lists(tmp_path: Path) -> None:
    """A value a print shows already is right: no check, but it keeps its place. The
    command that ran the script is no line it printed."""
    body = (
        f"{FENCE}python\nfrom tally import mean\nprint(mean([1, 2]))\nprint(mean([2, 4]))\n"
        f"print(mean([1, 4]))\n{FENCE}\n{FENCE}console\n$ python show.py\n1\n3\n2\n{FENCE}\n"
        "I expected `1.5`, `3` and `2.5`.\n"
    )
    test = built(tmp_path, body, "tally", MEAN)
    assert checks(test) == [
        "assert printed == 1.5 or str(printed) == '1.5'",
        "assert printed == 2.5 or str(printed) == '2.5'",
    ]
    assert "    print(mean([2, 4]))\n    printed = (mean([1, 4]))" in test
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)


def test_a_printed_number_may_come_from_text_the_fix_returns(tmp_path: Path) -> None:
    """print shows `12` alike for 12 and "12": a fix that returns the text "3" is right."""
    joined = "def total(parts):\n    return ''.join(parts)\n"
    body = (
        f"{FENCE}python\nfrom counts import total\nprint(total(['1', '2']))\n{FENCE}\n"
        "The output is `12`. I expected `3`.\n"
    )
    test = built(tmp_path, body, "counts", joined)
    right = "def total(parts):\n    return str(sum(int(part) for part in parts))\n"
    fails_then_passes(tmp_path, "test_total.py", test, "counts.py", right)


def test_printed_text_that_is_no_value_must_appear_in_what_the_script_prints(
    tmp_path: Path,
) -> None:
    greet = "def greet(name):\n    return 'Hello ' + name\n"
    body = (
        f'{FENCE}py\nfrom greeting import greet\n\nif __name__ == "__main__":\n'
        f'    print(greet("Ann"))\n{FENCE}\n\nshows\n\n{FENCE}\nHello Ann\n{FENCE}\n\n'
        "It should print `Hello, Ann!`.\n"
    )
    test = built(tmp_path, body, "greeting", greet)
    assert checks(test) == ["assert 'Hello, Ann!' in _shown(lambda: print(greet(\"Ann\")))"]
    right = "def greet(name):\n    return f'Hello, {name}!'\n"
    fails_then_passes(tmp_path, "test_greet.py", test, "greeting.py", right)


def test_a_guarded_script_is_replayed_with_its_compound_statements_lined_up(
    tmp_path: Path,
) -> None:
    body = (
        f"{FENCE}python\nfrom tally import mean\n\n\nif __name__ == '__main__':\n"
        "    try:\n        mean([])\n    except ZeroDivisionError:\n        pass\n"
        f"    print(mean([1, 2]))\n{FENCE}\nIt prints `1`; I expected `1.5`.\n"
    )
    test = built(tmp_path, body, "tally", MEAN)
    assert "    try:\n        mean([])\n    except ZeroDivisionError:\n        pass\n" in test
    assert "__name__" not in test
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)


def test_no_check_where_the_script_cannot_show_what_the_value_belongs_to(tmp_path: Path) -> None:
    module(tmp_path, "tally", MEAN)
    shown = f"{FENCE}\n1\n{FENCE}\n"
    no_expectation = MEAN_SCRIPT + f"{FENCE}\n1\n3\n{FENCE}\nThe first line is wrong.\n"
    assert script_test(no_expectation, tmp_path) is None
    keywords = (  # print(x, end="!") shows no value: what it shows is not `x` alone
        f'{FENCE}python\nfrom tally import mean\nprint(mean([1, 2]), end="!")\n{FENCE}\n'
        f"{FENCE}\n1\n{FENCE}\nI expected `1.5`.\n"
    )
    assert script_test(keywords, tmp_path) is None
    labelled = (  # what raised shows two values: `8000` is no value of the statement's
        f'{FENCE}python\nfrom settings import get\nprint("port:", get("port", 8000))\n{FENCE}\n'
        f"{FENCE}\nTraceback (most recent call last):\n  ...\nKeyError: 'port'\n{FENCE}\n"
        "I expected `8000`.\n"
    )
    assert script_test(labelled, module(tmp_path, "settings", SETTINGS)) is None
    right_already = f"{FENCE}python\nfrom tally import mean\nprint(mean([2, 4]))\n{FENCE}\n"
    assert (
        script_test(right_already + shown.replace("1", "3") + "I expected `3`.", tmp_path) is None
    )
    fixed_script_below = (  # the block after the script is the user's fix, not its output
        MEAN_SCRIPT + f"{FENCE}python\ndef mean(values):\n    return sum(values) / len(values)\n"
        f"{FENCE}\nI expected `1.5`.\n"
    )
    assert script_test(fixed_script_below, tmp_path) is None


# -- a script, or a session, that raised where a value was expected --------------------------------


def test_a_script_ending_in_a_traceback_checks_the_value_the_raising_call_should_give(
    tmp_path: Path,
) -> None:
    """The traceback names the script's line that raised: an assignment in the middle, so the
    statements after it never ran and are not replayed; the check is of its value."""
    body = (
        f'{FENCE}python\nfrom settings import get\n\nprint(get("host"))\n'
        f'port = get("port", 8000)\nprint(port + 1)\n{FENCE}\n{PORT_TRACEBACK}\n'
        "It should return the default `8000` instead of raising.\n"
    )
    test = built(tmp_path, body, "settings", SETTINGS)
    assert checks(test) == ['assert (get("port", 8000)) == 8000']
    assert "port + 1" not in test
    fails_then_passes(tmp_path, "test_settings.py", test, "settings.py", SETTINGS_FIXED)


def test_without_the_scripts_frame_the_last_statement_raised(tmp_path: Path) -> None:
    body = (
        f'{FENCE}python\nfrom settings import get\nprint(get("port", 8000))\n{FENCE}\n'
        f"{FENCE}pytb\nTraceback (most recent call last):\n  ...\nKeyError: 'port'\n{FENCE}\n"
        "I expected `8000`.\n"
    )
    test = built(tmp_path, body, "settings", SETTINGS)
    assert checks(test) == ["assert printed == 8000 or str(printed) == '8000'"]
    fails_then_passes(tmp_path, "test_settings.py", test, "settings.py", SETTINGS_FIXED)


def test_what_follows_the_exception_is_no_exception_and_a_frame_without_its_line_names_none(
    tmp_path: Path,
) -> None:
    """An IDE adds a line after the traceback; a script fed to `python -` shows no line
    under its frame: the last statement raised."""
    body = (
        f'{FENCE}python\nfrom settings import get\nprint(get("host"))\nport = get("port", 8000)\n'
        f"{FENCE}\n{FENCE}\nlocalhost\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 3, in <module>\n'
        '  File "/venv/settings.py", line 6, in get\n    return SETTINGS[key]\n'
        f"KeyError: 'port'\n\nProcess finished with exit code 1\n{FENCE}\n"
        "I expected `8000`.\n"
    )
    test = built(tmp_path, body, "settings", SETTINGS)
    assert checks(test) == ['assert (get("port", 8000)) == 8000']
    fails_then_passes(tmp_path, "test_settings.py", test, "settings.py", SETTINGS_FIXED)


def test_a_session_whose_assignment_or_print_raised_is_checked_by_its_value(
    tmp_path: Path,
) -> None:
    """`>>> port = get(...)` that raised was checked as `assert (port = get(...)) == 8000`, a
    syntax error; `>>> print(mean(...))` as `assert (print(...)) == 1.5`, false on any code."""
    assignment = (
        f'{FENCE}pycon\n>>> from settings import get\n>>> port = get("port", 8000)\n'
        "Traceback (most recent call last):\n  ...\nKeyError: 'port'\n"
        f"{FENCE}\nI expected `8000`.\n"
    )
    test = transcript_test(assignment, module(tmp_path, "settings", SETTINGS))
    assert test is not None and checks(test) == ['assert (get("port", 8000)) == 8000']
    fails_then_passes(tmp_path, "test_settings.py", test, "settings.py", SETTINGS_FIXED)

    printing = f"{FENCE}pycon\n>>> from tally import mean\n>>> print(mean([1, 2]))\n1\n{FENCE}\n"
    test = transcript_test(printing + "I expected `1.5`.\n", module(tmp_path, "tally", MEAN))
    assert test is not None and checks(test) == ["assert printed == 1.5 or str(printed) == '1.5'"]
    fails_then_passes(tmp_path, "test_mean.py", test, "tally.py", MEAN_FIXED)


def test_a_printed_none_is_replaced_by_the_value_expected(tmp_path: Path) -> None:
    """`None` is no value of a type: the default the user expected replaces it."""
    lookup = "def get(key, default=None):\n    return {}.get(key)\n"
    body = (
        f'{FENCE}python\nfrom settings import get\nprint(get("port", 8000))\n{FENCE}\n'
        "It prints `None`; it should print `8000`.\n"
    )
    test = built(tmp_path, body, "settings", lookup)
    assert checks(test) == ["assert printed == 8000 or str(printed) == '8000'"]
    right = "def get(key, default=None):\n    return {}.get(key, default)\n"
    fails_then_passes(tmp_path, "test_get.py", test, "settings.py", right)


# -- hostile scripts -----------------------------------------------------------------------------


def test_attack_a_script_that_reaches_beyond_the_repository_is_never_replayed(
    tmp_path: Path,
) -> None:
    """The script is the issue's text, written by anyone: replayed as the issue's test,
    `os.system` would run in the job and go into the pull request. Each line below runs a
    program, opens a file or imports something the repository does not have."""
    module(tmp_path, "tally", MEAN)
    marker = tmp_path / "pwned"
    for line in (
        f"import os; os.system('touch {marker}')",
        f"__import__('os').system('touch {marker}')",
        f"open('{marker}', 'w').write('x')",
        "import subprocess",
        f"exec(\"open('{marker}', 'w')\")",
        "getattr(mean, '__globals__')",
        "mean.__globals__['__builtins__']",
    ):
        body = (
            f"{FENCE}python\nfrom tally import mean\n{line}\nprint(mean([1, 2]))\n{FENCE}\n"
            "It prints `1`, but I expected `1.5`.\n"
        )
        assert script_test(body, tmp_path) is None, line
    safe = f"{FENCE}python\nimport math\nfrom tally import mean\nprint(mean([1, 2]))\n{FENCE}\n"
    assert script_test(safe + "It prints `1`, but I expected `1.5`.\n", tmp_path) is not None
    assert not marker.exists()


# -- whole passes --------------------------------------------------------------------------------

MEAN_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="mean of two numbers is off",
    body=(
        "This script\n\n" + MEAN_SCRIPT + "\nprints\n\n"
        f"{FENCE}\n1\n3\n{FENCE}\n\nI expected `1.5` for the first one.\n"
    ),
)
MEAN_TESTS = "from tally import mean\n\n\ndef test_even() -> None:\n    assert mean([2, 4]) == 3\n"


def test_a_pass_takes_its_issue_test_from_the_print_script_and_it_judges_the_fixes(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """No issue_test call: the script is the test. The rounding fix passes the repository's
    test and goes back with the script's check failing; the right one passes it."""
    workspace = module_repo(tmp_path / "repo", "tally", MEAN, MEAN_TESTS)
    scripted_model.add(
        reply_text("legacy", block("tally.py", MEAN_ROUNDED)),
        reply_text("legacy", block("tally.py", MEAN_FIXED)),
    )
    setup = PassSetup(config=config(scripted_model, **LEGACY), workspace=workspace)
    result = run_pass(setup, MEAN_ISSUE)

    assert result.status == "completed", result.stop_reason
    assert len(scripted_model.requests) == 2  # the two fixes: no call for a test
    first = issue_test_entries(workspace)[0]
    assert (first["status"], first["source"]) == ("active", "issue example")
    assert "printed = (mean([1, 2]))" in first["content"]
    told = last_prompt(scripted_model, 1)
    assert "test_issue_example_1" in told and "1.5" in told
    assert issue_test_entries(workspace)[-1]["status"] == "kept"
    assert (workspace / "tally.py").read_text(encoding="utf-8") == MEAN_FIXED


def test_attack_an_issue_script_that_runs_a_program_does_not_run_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """End to end: the issue's script writes a file through `os`. Replayed as the issue's
    test, the file would appear when the test runs before the change."""
    workspace = module_repo(tmp_path / "repo", "tally", MEAN, MEAN_TESTS)
    marker = tmp_path / "pwned"
    hostile_script = MEAN_SCRIPT.replace(
        "from tally import mean\n",
        f"from tally import mean\nimport os\nos.system('touch {marker}')\n",
    )
    hostile = MEAN_ISSUE.model_copy(
        update={"body": MEAN_ISSUE.body.replace(MEAN_SCRIPT, hostile_script)}
    )
    scripted_model.add(*issue_test_then_fixes("no test today", "tally.py", MEAN_FIXED))
    setup = PassSetup(config=config(scripted_model, **LEGACY), workspace=workspace)
    run_pass(setup, hostile)

    assert not marker.exists()
    assert all(e.get("source") != "issue example" for e in issue_test_entries(workspace))
    assert not any("os.system" in str(e.get("content")) for e in issue_test_entries(workspace))
