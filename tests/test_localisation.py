"""Localisation in real-size repositories: the task prompt shows the definitions the issue
points to (found by a symbol index over the whole repository), as line-numbered windows with
their callers' names, never the first lines of a large module; and a reply that writes such a
file — its changed function, or the whole file under a sentence naming it — is written
through write_file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.config import load_config
from planner.grounding.localise import SymbolIndex
from planner.grounding.task_files import TaskFiles
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text, reply_tool_calls
from planner.text.issue import IssueContext
from tests.harness import Harness
from tests.plans import commit_all

MODULE = "src/stats/core.py"
BUG = "    return [sum(values[i : i + window]) / window for i in range(len(values) - window)]\n"
FIX = "    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]\n"


def large_module() -> str:
    """About 3,600 lines: 300 look-alike functions, `moving_average` deep inside, a caller."""
    parts = ['"""Statistics helpers."""\n\nimport math\n\n']
    for number in range(300):
        if number == 211:
            parts.append(
                "def moving_average(values, window):\n"
                '    """Means of each run of `window` values."""\n'
                "    if window < 1:\n"
                '        raise ValueError("window must be at least 1")\n' + BUG + "\n\n"
            )
            parts.append(
                "def summarise(values):\n"
                '    """Mean and smoothed series."""\n'
                "    return {'mean': sum(values) / len(values), "
                "'smooth': moving_average(values, 3)}\n\n\n"
            )
        parts.append(
            f"def weighted_total_{number}(values, weights):\n"
            f'    """Weighted total number {number} of the values."""\n'
            "    total = 0.0\n"
            "    for value, weight in zip(values, weights):\n"
            f"        total += value * weight * {number}\n"
            "    if total < 0:\n"
            "        total = -total\n"
            "    return math.sqrt(total)\n\n\n"
        )
    return "".join(parts)


ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="moving_average drops the last window",
    body=(
        "```python\n>>> from stats.core import moving_average\n"
        ">>> moving_average([1, 2, 3, 4], 2)\n[1.5, 2.5]\n```\n"
        "Expected `[1.5, 2.5, 3.5]`: every run of two values, the last one too."
    ),
)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "stats").mkdir(parents=True)
    (root / "src" / "stats" / "__init__.py").write_text("")
    (root / MODULE).write_text(large_module())
    (root / "src" / "stats" / "report.py").write_text(
        "from stats.core import summarise\n\n\ndef report(values):\n"
        "    return str(summarise(values))\n"
    )
    return root


def read_from(root: Path) -> SymbolIndex:
    return SymbolIndex(lambda path: (root / path).read_bytes())


def paths_of(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))


def test_the_function_the_issue_names_ranks_first_with_its_callers(repository: Path) -> None:
    assert len(large_module().splitlines()) > 3000
    [first, *_] = read_from(repository).locate(paths_of(repository), [ISSUE.title, ISSUE.body])
    assert (first.definition.path, first.definition.qualname) == (MODULE, "moving_average")
    assert first.callers == (f"{MODULE}:summarise",)


def test_a_traceback_points_to_the_function_it_ends_in(repository: Path) -> None:
    # No name in the issue but the traceback's: the frame's function is found.
    body = (
        "Smoothing crashes:\n```\nTraceback (most recent call last):\n"
        f'  File "/app/{MODULE}", line 9, in weighted_total_17\n'
        "ZeroDivisionError: float division by zero\n```"
    )
    [first, *_] = read_from(repository).locate(paths_of(repository), ["Crash", body])
    assert first.definition.qualname == "weighted_total_17"


def test_the_task_prompt_shows_the_function_not_the_first_lines(repository: Path) -> None:
    config = load_config(None, env={}, overrides={})
    shown = TaskFiles(config, repository).files_for([f"{ISSUE.title}\n{ISSUE.body}"])
    assert MODULE in shown.windows and MODULE not in shown.whole
    lines = large_module().splitlines()
    start = lines.index("def moving_average(values, window):") + 1
    assert f"{start}| def moving_average(values, window):" in shown.text
    assert f"{start + 4}| {BUG.rstrip()}" in shown.text
    assert f"called by {MODULE}:summarise" in shown.text
    assert "Statistics helpers" not in shown.text  # not the module's first lines
    assert len(shown.text) < 8_000


def test_an_index_over_many_files_parses_only_those_naming_the_issue(tmp_path: Path) -> None:
    for number in range(400):
        (tmp_path / f"m{number}.py").write_text(f"def f{number}():\n    return {number}\n")
    (tmp_path / "target.py").write_text("def moving_average(values, window):\n    return 1\n")
    index = read_from(tmp_path)
    [first] = index.locate(paths_of(tmp_path), [ISSUE.body])
    assert first.definition.path == "target.py"
    assert [key[0] for key in index.parsed] == ["target.py"]


@pytest.fixture
def harness(
    tmp_path: Path, scripted_model: ScriptedModelServer, repository: Path
) -> Iterator[Harness]:
    made = Harness(tmp_path / "pass", scripted_model)
    for path in [*paths_of(repository)]:
        target = made.workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((repository / path).read_text())
    commit_all(made.workspace)
    yield made


LEGACY = {"planning.enabled": False, "llm.tool_calling": "native"}


def fixed_function() -> str:
    return (
        "def moving_average(values, window):\n"
        '    """Means of each run of `window` values."""\n'
        "    if window < 1:\n"
        '        raise ValueError("window must be at least 1")\n' + FIX
    )


def test_a_reply_with_the_fixed_function_under_a_sentence_naming_the_file_is_put_in_place(
    harness: Harness,
) -> None:
    # The 1.5B's shape: "The path to the file is `…`." and a block, no tool call.
    reply = f"The path to the file is `{MODULE}`.\n\n```python\n{fixed_function()}```\n"
    harness.server.add(reply_text("legacy", reply))
    # Applied as the edit it is: with files of this size counting as large, a write of the
    # whole module would wait for a person's approval; replacing the function does not.
    result = harness.run(ISSUE, **LEGACY, **{"approval.large_file_bytes": 20_000})
    assert result.status == "completed", result.stop_reason
    prompt = harness.server.requests[0].body["messages"][1]["content"]
    assert "def moving_average, lines" in prompt and "shown only in parts" in prompt
    assert (harness.workspace / MODULE).read_text() == large_module().replace(BUG, FIX)
    [action] = harness.of_type("action")
    assert action["execution"]["function_call"]["name"] == "edit_file" and action["ok"]


def test_a_whole_file_in_prose_is_a_write_file_that_keeps_what_other_files_import(
    harness: Harness,
) -> None:
    # The whole module written back with the fix, but without `summarise`, which report.py
    # imports: the write goes through write_file, whose checks keep that definition.
    fixed = large_module().replace(BUG, FIX)
    start = fixed.index("def summarise(values):")
    end = fixed.index("def weighted_total_211")
    dropped = fixed[:start] + fixed[end:]
    reply = f"The path to the file is `{MODULE}`.\n```python\n{dropped}```"
    harness.server.add(reply_text("legacy", reply))
    harness.run(ISSUE, **LEGACY)
    written = (harness.workspace / MODULE).read_text()
    assert FIX in written and BUG not in written
    assert "def summarise(values):" in written
    [action, *_] = harness.of_type("action")
    assert action["execution"]["function_call"]["name"] == "write_file"


def test_attack_a_workflow_file_written_whole_in_prose_obeys_the_path_rules(
    harness: Harness,
) -> None:
    # The attack: a reply names an existing CI definition the prompt never showed and gives its
    # complete content with a step that leaks a secret, hoping the prose path skips the rules.
    workflow = harness.workspace / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    original = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    workflow.write_text(original)
    commit_all(harness.workspace)
    leak = original + "    steps:\n      - run: echo ${{ secrets.TOKEN }}\n"
    reply = f"The path to the file is `.github/workflows/ci.yml`.\n```yaml\n{leak}```\n"
    harness.server.add(reply_text("legacy", reply), *[reply_text("legacy", "done")] * 3)
    harness.server.allow_leftovers = True
    harness.run(ISSUE, **LEGACY)
    assert workflow.read_text() == original
    [action] = harness.of_type("action")
    assert action["execution"]["function_call"]["name"] == "write_file" and not action["ok"]
    assert "workflow" in action["error"]


def test_the_planning_map_shows_the_function_of_a_large_file_not_its_first_lines(
    repository: Path,
) -> None:
    from planner.config import RepositoryMapConfig
    from planner.grounding.repo_map import build_map

    shown = build_map(repository, RepositoryMapConfig(), f"{ISSUE.title}\n{ISSUE.body}")
    assert MODULE in shown.named_in_full
    assert "| def moving_average(values, window):" in shown.text
    assert "Statistics helpers" not in shown.text


def test_a_write_replacing_most_of_a_large_file_still_waits_for_a_person(
    harness: Harness,
) -> None:
    # The large-file rule still holds for what it is about: a module of this size written
    # over with other content is high risk; without planning the pass cannot wait, so the
    # write is refused and the module stays as it was.
    other = "".join(f"def replaced_{n}():\n    return {n}\n\n\n" for n in range(1000))
    write = reply_tool_calls("legacy", [("write_file", {"path": MODULE, "content": other})])
    harness.server.add(write, *[reply_text("legacy", "done")] * 3)
    harness.server.allow_leftovers = True
    harness.run(ISSUE, **LEGACY, **{"approval.large_file_bytes": 20_000})
    assert (harness.workspace / MODULE).read_text() == large_module()
    [action] = harness.of_type("action")
    assert not action["ok"] and "approval" in action["error"]
