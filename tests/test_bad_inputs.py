"""Red team: inputs that must not break a run.

Each test states the hostile or broken input and fails if it crashes the run, loses what was
recorded, or gets through unneutralised.
"""

from __future__ import annotations

import copy
import io
import os
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

from planner.ci.events.github import parse_github_event
from planner.ci.events.gitlab import parse_gitlab_event
from planner.ci.forges.base import TRACKING_MARKER
from planner.config import ForgeConfig, ToolsConfig
from planner.core.errors import UserInputError
from planner.storage.archive import extract_archive
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.inert import no_closing_keywords
from planner.tools.files.workspace import WorkspaceTools
from planner.tools.registry import ToolRegistry
from tests.fake_forge import FakeGitHub
from tests.fake_forge.scenario import (
    commit_message,
    github_payload,
    gitlab_payload,
    one_file_plan,
)
from tests.harness import Harness
from tests.support.ci_job import GitHubWorkflow

# -- file names and files ----------------------------------------------------------------------


def test_non_utf8_file_names_are_listed_and_searched_escaped(tmp_path: Path) -> None:
    """A file name that is not UTF-8 crashed search_files and put lone surrogates in prompts."""
    root = os.fsencode(tmp_path)
    with open(os.path.join(root, b"caf\xe9.txt"), "wb") as handle:
        handle.write(b"needle\n")
    registry = ToolRegistry([WorkspaceTools(tmp_path, ToolsConfig())])

    listing = registry.call("list_directory", {"path": "."})
    found = registry.call("search_files", {"pattern": "needle"})

    assert listing.ok and "caf\\xe9.txt" in listing.content
    assert found.ok and "caf\\xe9.txt:1: needle" in found.content
    for result in (listing, found):
        result.content.encode("utf-8")  # valid UTF-8 for the prompt and the history


def test_a_line_range_of_a_huge_file_is_streamed(tmp_path: Path) -> None:
    """read_file with start_line/end_line loaded the whole file (a 40 MB log, say) into memory."""
    big = tmp_path / "big.log"
    line = b"x" * 99 + b"\n"
    with big.open("wb") as handle:
        for _ in range(40):
            handle.write(line * 10_000)
    tools = WorkspaceTools(tmp_path, ToolsConfig())
    tracemalloc.start()
    try:
        result = tools.call("read_file", {"path": "big.log", "start_line": 5, "end_line": 6})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok and result.content == ("x" * 99 + "\n") * 2 + "\n[lines 5-6 of 400000]"
    assert peak < 4_000_000, f"peak {peak} bytes: the file was read whole"


def test_line_range_past_the_end_and_without_trailing_newline(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\ntwo\nthree")
    tools = WorkspaceTools(tmp_path, ToolsConfig())
    assert tools.call("read_file", {"path": "f.txt", "start_line": 9}).content == (
        "[the file has only 3 lines]"
    )
    tail = tools.call("read_file", {"path": "f.txt", "start_line": 2}).content
    assert tail == "two\nthree\n[lines 2-3 of 3]"
    head = tools.call("read_file", {"path": "f.txt", "end_line": 1}).content
    assert head == "one\n\n[lines 1-1 of 3]"


def test_an_over_long_archive_entry_name_is_reported_not_fatal(tmp_path: Path) -> None:
    """A history archive with a 300-character file name crashed the restore (ENAMETOOLONG)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a" * 300 + ".jsonl", '{"type":"plan"}\n')
        archive.writestr("good.jsonl", '{"type":"plan"}\n')
    report = extract_archive(buffer.getvalue(), tmp_path / "history")
    assert report.written == ["good.jsonl"]
    assert len(report.problems) == 1 and "too long" in report.problems[0].lower()


# -- model replies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '{"phase": "planning", "n": ' + "9" * 5_000 + "}",
        "[" * 50_000 + "]" * 50_000,
        '{"a":' * 5_000 + "1" + "}" * 5_000,
    ],
    ids=["5000-digit number", "deep list", "deep object"],
)
def test_a_hostile_json_reply_is_re_asked_not_a_crash(tmp_path: Path, reply: str) -> None:
    """The endpoint answers the planning request with JSON Python cannot load."""
    steps = [reply_text("planning", reply), *one_file_plan("a.txt", "a\n", "Write a")]
    with ScriptedModelServer(steps) as server:
        result = Harness(tmp_path, server).run()
        server.assert_consumed()
        reask = str(server.requests[1].body["messages"])
    assert result.status == "completed"
    assert "cannot be used" in reask


# -- events ------------------------------------------------------------------------------------


def labeled() -> dict[str, Any]:
    payload = github_payload("issues.labeled")
    payload["label"]["name"] = "planner"
    return payload


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p["issue"].update(number="12; rm -rf /"), "issue.number must be"),
        (lambda p: p["issue"].update(number=True), "issue.number must be"),
        (lambda p: p.update(issue=[]), "no issue.number"),
        (lambda p: p.update(sender=["x"]), "no sender.login"),
        (lambda p: p.update(repository=None), "no repository.full_name"),
    ],
)
def test_a_github_event_with_wrong_types_is_bad_input(change: Any, message: str) -> None:
    payload = copy.deepcopy(labeled())
    change(payload)
    with pytest.raises(UserInputError, match=message):
        parse_github_event("issues", payload, ForgeConfig())


def test_a_gitlab_event_with_wrong_types_is_bad_input() -> None:
    payload = gitlab_payload("note_hook_issue")
    payload["object_attributes"] = ["not", "an", "object"]
    with pytest.raises(UserInputError, match="object_attributes is not an object"):
        parse_gitlab_event(payload, ForgeConfig())


def test_a_broken_event_exits_2_before_anything_is_written(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """The whole entry point: exit 2, one clear error line, no request that writes."""
    payload = labeled()
    payload["issue"]["number"] = {"nested": "object"}
    finished, _, _ = GitHubWorkflow(fake_github, tmp_path).job("issues", payload, [])
    assert finished.returncode == 2, finished.stdout
    assert "issue.number must be an issue number" in finished.stdout
    assert "Traceback" not in finished.stdout + finished.stderr
    assert fake_github.writes() == []


# -- retried writes and closing keywords -------------------------------------------------------


def test_a_retried_post_whose_first_attempt_succeeded_leaves_one_tracking_comment(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """The first POST of the tracking comment is carried out, but its reply is a 502."""
    fake_github.add_issue(1, "fixes #42 in the parser", "Body.", labels=["planner"])
    fake_github.permissions["Codertocat"] = "write"
    fake_github.fail("POST", r"/issues/1/comments$", 502, after=True)
    payload = labeled()
    payload["issue"]["number"] = 1
    payload["repository"]["full_name"] = fake_github.repository
    workflow = GitHubWorkflow(fake_github, tmp_path)
    finished, _, _ = workflow.job("issues", payload, one_file_plan("a.txt", "a\n", "Write a"))
    assert finished.returncode == 0, finished.stdout
    tracking = [c for c in fake_github.comments_on(1) if TRACKING_MARKER in c.body]
    assert len(tracking) == 1
    posts = [r for r in fake_github.api_requests("POST") if r.path.endswith("/comments")]
    assert len(posts) == 1  # the retry found the comment instead of posting it again

    # The title's "fixes #42" reaches no commit message, pull request title or body as such.
    [pull] = fake_github.pulls.values()
    message = commit_message(fake_github.bare, "planner/issue-1")
    for text in (message, pull.title, pull.body):
        assert "fixes #42" not in text.lower()
    assert "“fixes” #42" in message and "“fixes” #42" in pull.title


@pytest.mark.parametrize(
    "text",
    ["fixes #42", "Closes: #7", "resolved o/r#3", "Fixes https://github.com/o/r/issues/9",
     "closing !12", "implements ABC-123", "fixed issue #5"],
)  # fmt: skip
def test_closing_keywords_are_neutralised(text: str) -> None:
    assert no_closing_keywords(text).startswith("“")


def test_ordinary_uses_of_the_words_stay() -> None:
    text = "This fixes the crash and closes the gap; fix 3 items"
    assert no_closing_keywords(text) == text
