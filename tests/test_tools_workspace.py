"""The built-in file tools: read_file, write_file, edit_file, list_directory, search_files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from planner.config import ToolsConfig
from planner.tools.files.workspace import WorkspaceTools


def tools_for(root: Path, **config: object) -> WorkspaceTools:
    return WorkspaceTools(root, ToolsConfig.model_validate(config))


def git(root: Path, *command: str) -> None:
    subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


# -- read_file ------------------------------------------------------------------------------


def test_read_file_line_range(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = tools_for(tmp_path).call(
        "read_file", {"path": "f.txt", "start_line": 3, "end_line": 5}
    )
    assert result.ok
    assert result.content == "line 3\nline 4\nline 5\n\n[lines 3-5 of 10]"


def test_read_file_beyond_the_end_says_how_long_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    result = tools_for(tmp_path).call("read_file", {"path": "f.txt", "start_line": 9})
    assert result.content == "[the file has only 2 lines]"


def test_read_file_cuts_at_the_cap_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 5000)
    result = tools_for(tmp_path, max_read_bytes=1000).call("read_file", {"path": "big.txt"})
    assert result.ok
    assert result.content.startswith("x" * 1000 + "\n[cut: showing 1000 of 5000 bytes")


def test_binary_file_is_reported_not_dumped(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    result = tools_for(tmp_path).call("read_file", {"path": "logo.png"})
    assert result.ok
    assert result.content == "logo.png is a binary file (272 bytes), not shown"


def test_missing_file_and_directory_give_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    tools = tools_for(tmp_path)
    assert tools.call("read_file", {"path": "nope.txt"}).error == "'nope.txt' does not exist"
    error = tools.call("read_file", {"path": "dir"}).error
    assert error is not None and "is a directory; use list_directory" in error


def test_bad_arguments_are_a_result_not_an_exception(tmp_path: Path) -> None:
    tools = tools_for(tmp_path)
    assert (
        tools.call("read_file", {}).error == "bad arguments for read_file: missing argument 'path'"
    )
    result = tools.call("read_file", {"path": "f", "start_line": "3"})
    assert (
        result.error
        == "bad arguments for read_file: argument 'start_line' must be a positive integer"
    )
    result = tools.call("write_file", {"path": "f", "content": 3})
    assert (
        result.error == "bad arguments for write_file: argument 'content' must be a string, not int"
    )


# -- write_file -----------------------------------------------------------------------------


def test_write_file_creates_parents_and_reports_created_or_replaced(tmp_path: Path) -> None:
    tools = tools_for(tmp_path)
    first = tools.call("write_file", {"path": "docs/new/guide.md", "content": "# Guide\n"})
    assert first.content == "created docs/new/guide.md (8 bytes)"
    second = tools.call("write_file", {"path": "docs/new/guide.md", "content": "# G\r\n"})
    assert second.content == "replaced docs/new/guide.md (5 bytes)"
    assert (tmp_path / "docs" / "new" / "guide.md").read_bytes() == b"# G\r\n"


# -- edit_file ------------------------------------------------------------------------------

SOURCE = "def greet(name):\r\n    return 'Hello, ' + name\r\n\r\ndef bye():\r\n    return 'Bye'\r\n"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "greet.py"
    path.write_bytes(SOURCE.encode())
    return path


def test_edit_file_applies_several_edits_and_shows_the_file_as_it_now_is(source: Path) -> None:
    edits = [
        {"oldText": "'Hello, ' + name", "newText": "f'Hello, {name}!'"},
        {"oldText": "'Bye'", "newText": "'Goodbye'"},
    ]
    result = tools_for(source.parent).call("edit_file", {"path": "greet.py", "edits": edits})
    assert result.ok
    # The lines as they now are, numbered (small models copy a diff's +/- lines as code).
    assert result.content.startswith("applied 2 edit(s):\ngreet.py now reads (lines 1-")
    assert "| def bye():" in result.content and "|     return 'Goodbye'" in result.content
    assert "'Bye'" not in result.content and "+" not in result.content
    expected = SOURCE.replace("'Hello, ' + name", "f'Hello, {name}!'").replace("'Bye'", "'Goodbye'")
    assert source.read_bytes() == expected.encode()  # CRLF line endings survive


def test_edit_file_is_all_or_nothing(source: Path) -> None:
    edits = [
        {"oldText": "'Bye'", "newText": "'Goodbye'"},
        {"oldText": "not in the file", "newText": "x"},
    ]
    result = tools_for(source.parent).call("edit_file", {"path": "greet.py", "edits": edits})
    assert not result.ok
    assert result.error is not None and result.error.startswith(
        "edits[1].oldText 'not in the file' is not in the file; no edit was applied, the file "
        "is unchanged (edits apply in order, each to the text the earlier ones left)."
    )
    assert source.read_bytes() == SOURCE.encode()


def test_edit_file_refuses_text_that_is_not_unique(source: Path) -> None:
    edits = [{"oldText": "return", "newText": "yield"}]
    result = tools_for(source.parent).call("edit_file", {"path": "greet.py", "edits": edits})
    assert result.error is not None
    assert "edits[0].oldText 'return' matches more than one place (lines 2, 5)" in result.error
    assert source.read_bytes() == SOURCE.encode()


def test_edit_file_dry_run_writes_nothing(source: Path) -> None:
    arguments = {"path": "greet.py", "edits": [{"oldText": "'Bye'", "newText": "'Ciao'"}]}
    result = tools_for(source.parent).call("edit_file", {**arguments, "dryRun": True})
    assert result.ok and result.content.startswith("dry run, nothing written:")
    assert "+    return 'Ciao'" in result.content
    assert source.read_bytes() == SOURCE.encode()


def test_edit_file_refuses_binary_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"ab\0cd")
    tools = tools_for(tmp_path)
    edits = [{"oldText": "ab", "newText": "x"}]
    error = tools.call("edit_file", {"path": "blob.bin", "edits": edits}).error
    assert error == "'blob.bin' is a binary file; edit_file only changes text"
    assert (
        tools.call("edit_file", {"path": "gone.py", "edits": edits}).error
        == "'gone.py' does not exist"
    )
    error = tools.call(
        "edit_file", {"path": "blob.bin", "edits": [{"oldText": "", "newText": "x"}]}
    ).error
    assert error == "'blob.bin' is a binary file; edit_file only changes text"


# -- list_directory -------------------------------------------------------------------------


def test_list_directory(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a").mkdir()
    tools = tools_for(tmp_path)
    assert tools.call("list_directory", {"path": "."}).content == "[DIR] a\n[FILE] b.txt"
    assert tools.call("list_directory", {"path": "a"}).content == "(empty directory)"
    assert tools.call("list_directory", {"path": "b.txt"}).error == "'b.txt' is not a directory"


# -- search_files ---------------------------------------------------------------------------


def test_search_honours_gitignore_and_finds_untracked_files(repo: Path) -> None:
    (repo / ".gitignore").write_text("build/\n*.log\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("import os\nTODO = 'tracked'\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("TODO = 'ignored build output'\n")
    (repo / "debug.log").write_text("TODO in a log\n")
    git(repo, "add", ".")
    (repo / "new.py").write_text("# TODO untracked but not ignored\n")
    result = tools_for(repo).call("search_files", {"pattern": "TODO"})
    assert result.ok
    assert result.content == (
        "new.py:1: # TODO untracked but not ignored\n"
        "src/app.py:2: TODO = 'tracked'\n"
        "[2 matching lines in 2 of 3 files]"  # .gitignore, new.py, src/app.py
    )


def test_search_outside_git_walks_the_tree_but_skips_git_dirs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("needle\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\nneedle = 2\n")
    result = tools_for(tmp_path).call("search_files", {"pattern": r"^needle\b"})
    assert result.content == "pkg/mod.py:2: needle = 2\n[1 matching lines in 1 of 1 files]"


def test_search_caps_results_and_counts_the_rest(tmp_path: Path) -> None:
    for index in range(3):
        (tmp_path / f"f{index}.txt").write_text("hit\n" * 4)
    result = tools_for(tmp_path, max_search_results=5).call("search_files", {"pattern": "hit"})
    lines = result.content.splitlines()
    assert lines[:5] == [
        "f0.txt:1: hit",
        "f0.txt:2: hit",
        "f0.txt:3: hit",
        "f0.txt:4: hit",
        "f1.txt:1: hit",
    ]
    assert lines[5] == "[12 matching lines in 3 of 3 files; showing the first 5]"


def test_search_path_glob_case_and_binary_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("Needle\n")
    (tmp_path / "src" / "a.md").write_text("needle\n")
    (tmp_path / "src" / "b.bin").write_bytes(b"needle\0\0")
    (tmp_path / "top.py").write_text("needle\n")
    tools = tools_for(tmp_path)
    result = tools.call(
        "search_files", {"pattern": "needle", "path": "src", "glob": "*.py", "ignore_case": True}
    )
    assert result.content == "src/a.py:1: Needle\n[1 matching lines in 1 of 1 files]"
    result = tools.call("search_files", {"pattern": "needle", "path": "src"})
    assert result.content == "src/a.md:1: needle\n[1 matching lines in 1 of 3 files]"


def test_search_skips_symlinks_that_leave_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("needle outside\n")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    (root / "inside.txt").write_text("needle inside\n")
    result = tools_for(root).call("search_files", {"pattern": "needle"})
    assert result.content == "inside.txt:1: needle inside\n[1 matching lines in 1 of 1 files]"


def test_search_reports_no_match_and_bad_patterns(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    tools = tools_for(tmp_path)
    assert (
        tools.call("search_files", {"pattern": "absent"}).content
        == "no match for 'absent' in 1 files"
    )
    error = tools.call("search_files", {"pattern": "(unclosed"}).error
    assert error is not None and "pattern is not a valid regular expression" in error


def test_pathological_regex_costs_a_timeout_not_the_pass(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 64 + "!\n")
    tools = tools_for(tmp_path, search_timeout_seconds=0.5)
    result = tools.call("search_files", {"pattern": "^(a+)+$"})
    assert not result.ok
    assert result.error == (
        "search_files stopped after 0.5s (rule 'search-timeout'); "
        "use a simpler pattern or a narrower path"
    )


# -- a folder swapped for a link between the check and the open --------------------------------
# Attack: a process the tools left running (a daemon an allowed command started) replaces `pkg`
# with a link to a folder outside the checkout in the moment between planner checking the path
# and opening it. planner's file tools run in planner's own process, as root in a container:
# followed, the link would let the model write (or read) any file there.


def checkout_and_outside(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with pkg/mod.py, and a folder outside it with a mod.py of root's."""
    workspace = tmp_path / "checkout"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("ROOT_ONLY = 'secret'\n", encoding="utf-8")
    return workspace, outside


def swap(workspace: Path, outside: Path) -> None:
    """What the left-running process does: pkg becomes a link to the outside folder."""
    (workspace / "pkg").rename(workspace / "pkg.moved")
    (workspace / "pkg").symlink_to(outside)


@pytest.fixture
def swapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[WorkspaceTools, Path]:
    from planner.tools.files.paths import PathPolicy

    workspace, outside = checkout_and_outside(tmp_path)
    resolve = PathPolicy.resolve

    def racing(self: PathPolicy, raw: str, *, for_write: bool = False) -> Path:
        checked = resolve(self, raw, for_write=for_write)
        if not (workspace / "pkg").is_symlink():
            swap(workspace, outside)
        return checked

    monkeypatch.setattr(PathPolicy, "resolve", racing)
    return tools_for(workspace), outside


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write_file", {"path": "pkg/mod.py", "content": "x = 2\n"}),
        (
            "edit_file",
            {
                "path": "pkg/mod.py",
                "edits": [{"oldText": "ROOT_ONLY = 'secret'", "newText": "ROOT_ONLY = 'mine'"}],
            },
        ),
    ],
)
def test_a_write_never_follows_a_link_planted_after_the_check(
    swapped: tuple[WorkspaceTools, Path], tool: str, arguments: dict[str, object]
) -> None:
    tools, outside = swapped
    result = tools.call(tool, arguments)
    assert (outside / "mod.py").read_text(encoding="utf-8") == "ROOT_ONLY = 'secret'\n"
    assert not result.ok


def test_a_read_never_follows_a_link_planted_after_the_check(
    swapped: tuple[WorkspaceTools, Path],
) -> None:
    tools, _ = swapped
    result = tools.call("read_file", {"path": "pkg/mod.py"})
    assert "secret" not in (result.content or "") + (result.error or "")
    assert not result.ok


def test_a_task_prompt_never_shows_a_file_through_a_link_planted_after_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The files a task names are listed (links left out), then read for its prompt, as root:
    # a folder swapped for a link in between must not put a file from outside into the prompt.
    from planner.config import PlannerConfig
    from planner.grounding import task_files

    workspace, outside = checkout_and_outside(tmp_path)
    listed = task_files.build_index

    def listed_then_swapped(*args: object, **kwargs: object) -> object:
        index = listed(*args, **kwargs)  # type: ignore[arg-type]
        swap(workspace, outside)
        return index

    monkeypatch.setattr(task_files, "build_index", listed_then_swapped)
    files = task_files.TaskFiles(PlannerConfig(), workspace)

    shown = files.files_for(["Fix pkg/mod.py"])

    assert "secret" not in shown.text
    assert files.current("pkg/mod.py") is None
