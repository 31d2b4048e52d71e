"""Changes to documents: they never prove behaviour, and they keep what the issue did not ask to
change (issue 59, items 7 and 8).

Two small repositories ended wrong with the 1.5B model. In one without tests, an issue asking for
a new command-line option (and a README line for it) ended `completed` after the model changed
only the README: the test the model wrote was dropped and nothing ran. Now the command the issue
shows is the issue's test, and a change to documents alone never proves behaviour. In the other,
asked to add a section to a 7-line README, the model wrote the file back with only the new
section and the pass ended `completed`: now the write goes back to the model with the lines it
would remove, and `completed` needs the document's other content.

Whole passes: the scripted model over real HTTP, a real git repository, real pytest runs of the
command the issue shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.tools.files.destructive import destructive_change
from planner.verification.reproduction.behaviour import behaviour_asked
from planner.verification.reproduction.commands import command_examples
from tests.plans import commit_all, completion, finish, git_repo, planning
from tests.test_verification_pass import config, last_prompt, of_type, write

TOOL = (
    "import argparse\n\n\n"
    "def main():\n"
    "    parser = argparse.ArgumentParser()\n"
    '    parser.add_argument("file")\n'
    '    parser.add_argument("--upper", action="store_true")\n'
    "    arguments = parser.parse_args()\n"
    "    text = open(arguments.file).read()\n"
    '    print(text.upper() if arguments.upper else text, end="")\n\n\n'
    'if __name__ == "__main__":\n'
    "    main()\n"
)
WITH_COUNT = TOOL.replace(
    '    parser.add_argument("--upper", action="store_true")\n',
    '    parser.add_argument("--upper", action="store_true")\n'
    '    parser.add_argument("--count", action="store_true")\n',
).replace(
    "    print(text.upper()",
    "    if arguments.count:\n"
    "        print(len(text.splitlines()))\n"
    "        return\n"
    "    print(text.upper()",
)
README = "# tool\n\nPrints a text file.\n\n## Usage\n\n    python3 tool.py FILE [--upper]\n"
COUNT_LINE = "`--count` prints the number of lines instead.\n"
COUNT_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Add a --count option",
    body=(
        "`tool.py` should be able to count the lines of a file:\n\n"
        "```console\n$ python3 tool.py --count notes.txt\n3\n```\n\n"
        "Please add the option, and a line for it to the README.\n"
    ),
)
PLACEHOLDER_ISSUE = COUNT_ISSUE.model_copy(
    update={
        "body": "Add a `--count` option: `python3 tool.py --count FILE` should print the number "
        "of lines of FILE. Add a line for it to the README too.\n"
    }
)
SECTION_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="README: add a License section",
    body="The README does not say under which license the tool is. Add a License section: MIT.\n",
)
LICENSE = "\n## License\n\nMIT\n"
STRICT = {"verification.max_repair_attempts": 0, "verification.attempts": 1}
"""One attempt, no repair: the pass ends on what the first change proves."""


def tool_repo(root: Path) -> Path:
    """A small repository without tests: a script, a text file, a 7-line README."""
    root.mkdir()
    (root / "tool.py").write_text(TOOL, encoding="utf-8")
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    repo = git_repo(root)
    (repo / "README.md").write_text(README, encoding="utf-8")
    commit_all(repo, "readme")
    return repo


def run(
    workspace: Path, server: ScriptedModelServer, issue: IssueContext, **more: Any
) -> PassResult:
    """A pass with a plan, as a user runs it on a repository without tests: the test runner is
    found (none) and the issue's test is on, as by default."""
    overrides = {
        "verification.command": None,
        "verification.issue_test": True,
        "llm.edit_format": "whole_file",
        **more,
    }
    setup = PassSetup(config=config(server, **overrides), workspace=workspace)
    return run_pass(setup, issue)


def readme_pass(
    workspace: Path,
    server: ScriptedModelServer,
    issue: IssueContext,
    no_test: str,
    new_readme: str,
    *,
    judged: bool,
) -> PassResult:
    """A one-task pass whose model answers the request for a test of the issue with `no_test`
    and writes `new_readme` as the README; `judged`: whether the pass gets as far as asking for
    its completion (a change nothing proves ends the pass before)."""
    server.add(
        planning("task_1"),
        reply_text("issue_test", no_test),
        write("README.md", new_readme),
        finish(),
        completion(),
    )
    server.allow_leftovers = not judged  # the completion the pass no longer asks for
    return run(workspace, server, issue)


def readme(workspace: Path) -> str:
    return (workspace / "README.md").read_text(encoding="utf-8")


# -- item 7: an issue that asks for behaviour is never proven by a documentation change -----------


def test_a_readme_only_change_to_an_issue_asking_for_an_option_is_not_completed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The command the issue shows is its test (no model call for one): it fails before the
    change (no such option) and still fails after a change to the README alone."""
    workspace = tool_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"), write("README.md", README + COUNT_LINE), finish(), completion()
    )
    scripted_model.allow_leftovers = True  # the completion the pass no longer asks for
    result = run(workspace, scripted_model, COUNT_ISSUE, **STRICT)

    assert result.status == "needs_human", result.stop_reason
    first = of_type(workspace, "issue_test")[0]
    assert (first["status"], first["source"]) == ("active", "issue command")
    assert "'--count', 'notes.txt'" in first["content"] and "assert '3' in" in first["content"]
    issue_runs = [r for r in of_type(workspace, "verification") if r.get("issue_test")]
    assert issue_runs and all(r["status"] == "failed" for r in issue_runs)
    assert "unrecognized arguments: --count" in issue_runs[0]["tail"]
    assert readme(workspace).endswith(COUNT_LINE)  # the change stays for a person to judge
    assert "issue_test" not in [request.kind for request in scripted_model.requests]


def test_the_change_the_issue_asks_for_passes_its_command_and_completes(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = tool_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"),
        write("tool.py", WITH_COUNT),
        write("README.md", README + COUNT_LINE),
        finish(),
        completion(),
    )
    result = run(workspace, scripted_model, COUNT_ISSUE)

    assert result.status == "completed", result.stop_reason
    kept = (workspace / "test_planner_issue_3.py").read_text(encoding="utf-8")
    assert "def test_issue_command_1(tmp_path):" in kept
    assert of_type(workspace, "issue_test")[-1]["status"] == "kept"
    assert not (workspace / "notes.txt.orig").exists()
    assert sorted(path.name for path in workspace.iterdir() if path.suffix == ".txt") == [
        "notes.txt"
    ]  # the command ran in a folder of its own


def test_without_a_command_that_can_run_a_documentation_change_ends_needs_human_saying_so(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The issue shows `FILE`, a placeholder: no command can run, and the model's test is
    dropped. The README-only change was `completed`; now nothing proves the option, and the
    pass says so."""
    workspace = tool_repo(tmp_path / "repo")
    no_test = "The option does not exist yet, so I cannot test it."
    result = readme_pass(
        workspace, scripted_model, PLACEHOLDER_ISSUE, no_test, README + COUNT_LINE, judged=False
    )

    assert result.status == "needs_human", result.stop_reason
    assert result.stop_reason.startswith("the fix is unproven: only documentation changed")
    assert "it says what should happen (“should print”)" in result.stop_reason
    assert result.stop_reason.endswith("no check of that behaviour could run")
    assert result.verification is not None
    assert "only documentation changed" in result.verification.unproven


def test_a_documentation_task_still_completes_with_a_documentation_change(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """Documenting an option the code has is no request for behaviour."""
    workspace = tool_repo(tmp_path / "repo")
    issue = SECTION_ISSUE.model_copy(
        update={
            "title": "Document --upper",
            "body": "The README does not explain `--upper`. Add a line saying what it does.\n",
        }
    )
    upper = README + "`--upper` prints the text in capitals.\n"
    no_test = "Nothing to test: this is documentation."
    result = readme_pass(workspace, scripted_model, issue, no_test, upper, judged=True)

    assert result.status == "completed", result.stop_reason
    assert readme(workspace) == upper


def test_a_command_that_already_works_lets_its_documentation_complete(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The issue shows a command that runs as it says before any change: the option is there,
    and the README describing it is what the issue needs (the command, tried as the issue's
    test, passes before the change and is dropped)."""
    workspace = tool_repo(tmp_path / "repo")
    issue = COUNT_ISSUE.model_copy(
        update={
            "title": "Mention --upper in the README",
            "body": "```console\n$ python3 tool.py --upper notes.txt\nONE\n```\n"
            "works, but the README does not say so. Add a line for it.\n",
        }
    )
    upper = README + "`--upper` prints the text in capitals.\n"
    result = readme_pass(workspace, scripted_model, issue, "Nothing to test.", upper, judged=True)

    assert result.status == "completed", result.stop_reason
    dropped = of_type(workspace, "issue_test")[1]
    assert dropped["status"] == "dropped" and "passes on the code before" in dropped["reason"]


def test_what_asks_for_behaviour_and_what_runs(tmp_path: Path) -> None:
    workspace = tool_repo(tmp_path / "repo")
    files = ["tool.py", "notes.txt", "README.md"]
    assert behaviour_asked(COUNT_ISSUE.body, workspace, files) == (
        "it names `--count`, which the code does not have yet"
    )
    assert behaviour_asked("Add `python3 report.py notes.txt`.", workspace, files).startswith(
        "it shows a command to run (`python3 report.py notes.txt`) of a script still to write"
    )
    assert behaviour_asked("`count_lines()` should return 0 for an empty file.", workspace, [])
    assert behaviour_asked(SECTION_ISSUE.body, workspace, files) == ""
    assert behaviour_asked("Fix the typo in the README: teh tool.", workspace, files) == ""
    assert behaviour_asked("Explain `--upper` in the README.", workspace, files) == ""
    usage = "Add a Usage section showing `python3 tool.py ...` in a code block, and `--upper`."
    assert behaviour_asked(usage, workspace, files) == ""
    assert command_examples(usage, workspace) == []  # `...` stands for arguments
    [example] = command_examples(COUNT_ISSUE.body, workspace)
    assert example.arguments == ("tool.py", "--count", "notes.txt")
    assert (example.inputs, example.output) == (("notes.txt",), ("3",))


def test_attack_a_command_in_the_issue_that_is_not_the_repositorys_code_never_runs(
    tmp_path: Path,
) -> None:
    """The issue's text is anyone's: only the repository's own script or module runs, with
    plain arguments; shell syntax, other programs and paths outside the checkout are no check."""
    workspace = tool_repo(tmp_path / "repo")
    (tmp_path / "outside.py").write_text("print(1)\n", encoding="utf-8")
    (workspace / "linked.py").symlink_to(tmp_path / "outside.py")
    for line in (
        "python3 tool.py notes.txt; touch pwned",
        "python3 tool.py $(touch pwned)",
        "python3 tool.py notes.txt > pwned",
        "python3 -c 'import os; os.system(\"touch pwned\")'",
        "python3 ../outside.py",
        "python3 linked.py",
        "python3 tool.py /etc/passwd",
        "python3 tool.py ../repo/notes.txt",
        "sh -c 'touch pwned'",
        "python3 -m http.server",
    ):
        body = f"```console\n$ {line}\n```\n"
        assert command_examples(body, workspace) == [], line


def test_attack_an_issue_showing_commands_outside_the_repository_runs_none_of_them(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """End to end: the issue shows a program of its own (`python3 -c`) and a script outside the
    checkout, each writing a marker file. Taken for the issue's test, they would run before the
    change and again at its end."""
    workspace = tool_repo(tmp_path / "repo")
    marker = tmp_path / "pwned"
    (tmp_path / "outside.py").write_text(f"open({str(marker)!r}, 'w')\n", encoding="utf-8")
    body = (
        "Add a `--count` option.\n\n```console\n"
        f"$ python3 -c \"open('{marker}', 'w')\"\n"
        "$ python3 ../outside.py --count notes.txt\n3\n```\n"
    )
    hostile = COUNT_ISSUE.model_copy(update={"body": body})
    result = readme_pass(
        workspace, scripted_model, hostile, "No test.", README + COUNT_LINE, judged=False
    )

    assert not marker.exists()
    assert all(e.get("source") != "issue command" for e in of_type(workspace, "issue_test"))
    assert result.status == "needs_human"
    assert result.stop_reason.endswith("no check of that behaviour could run")


# -- item 8: lines removed from a document are a destructive write -----------------------------


def test_a_readme_written_back_with_only_the_new_section_is_refused_and_the_next_write_kept(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = tool_repo(tmp_path / "repo")
    whole = README + LICENSE
    scripted_model.add(
        planning("task_1"),
        reply_text("issue_test", "Nothing to test."),
        write("README.md", LICENSE.lstrip()),
        write("README.md", whole),
        finish(),
        completion(),
    )
    result = run(workspace, scripted_model, SECTION_ISSUE)

    assert result.status == "completed", result.stop_reason
    assert readme(workspace) == whole
    told = last_prompt(scripted_model, 3)
    assert "this change removes 4 line(s) of README.md that the issue does not ask to change" in (
        told
    )
    assert "`# tool`; `Prints a text file.`; `## Usage`" in told
    assert "write the file with all of its current lines" in told


def test_a_document_losing_its_other_content_is_not_completed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The content went in an earlier pass of the issue (a command's effect, a person's commit):
    the pass that finds it gone at its end does not call the work complete."""
    workspace = tool_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"),
        reply_text("issue_test", "Nothing to test."),
        write("NOTES.md", "draft\n"),
        finish(),
        completion(done=False),
    )
    first = run(workspace, scripted_model, SECTION_ISSUE)
    assert first.status == "needs_human", first.stop_reason
    (workspace / "README.md").write_text(LICENSE.lstrip(), encoding="utf-8")
    scripted_model.add(completion())
    scripted_model.allow_leftovers = True  # the completion the pass no longer asks for
    result = run(workspace, scripted_model, SECTION_ISSUE)

    assert result.status == "needs_human", result.stop_reason
    assert result.stop_reason == (
        "the change removes lines the issue did not ask to change from README.md "
        "(`# tool`; `Prints a text file.`; `## Usage`; `python3 tool.py FILE [--upper]`)"
    )


def test_lines_the_issue_asks_to_change_may_go() -> None:
    removed_usage = README.replace("## Usage\n\n    python3 tool.py FILE [--upper]\n", "")
    asked = "Remove the Usage section from the README: it is outdated."
    assert destructive_change("README.md", README, removed_usage, issue_text=asked) is None
    told = destructive_change("README.md", README, removed_usage, issue_text="Add a License.")
    assert told is not None and "`## Usage`; `python3 tool.py FILE [--upper]`" in told
    reworded = README.replace("Prints a text file.", "Prints a text file, or its line count.")
    assert destructive_change("README.md", README, reworded, issue_text="Add --count.") is None
    rewrite = "Rewrite the README from scratch."
    assert destructive_change("README.md", README, "# tool\n\nNew.\n", issue_text=rewrite) is None
    code = "def f():\n    return 1\n"
    assert destructive_change("tool.py", code, "def f():\n    return 2\n") is None
