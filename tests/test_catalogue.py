"""The error catalogue (planner/core/catalogue/): every message planner logs at warning level
or above, raises, stops a pass with, posts, exits with or prints to standard error is an entry,
word for word, with a code and its fix in docs/troubleshooting.md.

The messages are read from the source with `ast` (scripts/error_messages.py): the first argument
of each logging call, the text of each posting call, what each raise, StopPass, sys.exit and
print to stderr carries, with names, `%s` arguments and parameters followed to their text. The
comparison is exact: a message of three words, or one whose words are all in `%s` arguments,
is checked like any other.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from planner.core.catalogue import CATALOGUE, Entry
from scripts import check_links, error_messages

# The messages issue 58 found without an entry: short, or with their text in `%s` arguments.
ONCE_UNSEEN = [
    "tool {} crashed",
    "MCP server {} {}; its tools are left out",
    "task {} re-opened: its commit is not on the branch",
    "replan at {} {}",
    "skipped {}: {}",
]


@pytest.fixture(scope="module")
def found() -> list[error_messages.Message]:
    return error_messages.messages()


def test_every_message_is_in_the_catalogue_word_for_word(
    found: list[error_messages.Message],
) -> None:
    missing = [
        f"{message.where}: {message.template!r}" for message in error_messages.uncatalogued(found)
    ]
    assert missing == [], (
        f"add each to planner/core/catalogue/ (next code {error_messages.next_code()}) "
        "with its fix in docs/troubleshooting.md"
    )
    assert len(found) > 150


def test_no_entry_outlives_its_message(found: list[error_messages.Message]) -> None:
    assert [entry.code for entry in error_messages.stale_entries(found)] == []


def test_the_messages_once_unseen_are_caught_and_catalogued(
    found: list[error_messages.Message],
) -> None:
    made = {message.template for message in found}
    texts = {entry.text for entry in CATALOGUE}
    assert [text for text in ONCE_UNSEEN if text not in made or text not in texts] == []


def test_codes_are_unique_and_each_fix_is_a_section_of_troubleshooting() -> None:
    codes = [entry.code for entry in CATALOGUE]
    assert all(re.fullmatch(r"PLN\d{3}", code) for code in codes)
    assert len(set(codes)) == len(codes)
    texts = [entry.text for entry in CATALOGUE]
    assert len(set(texts)) == len(texts)
    sections = check_links.anchors(error_messages.TROUBLESHOOTING)
    assert [entry.code for entry in CATALOGUE if entry.fix not in sections] == []


def test_the_messages_page_lists_every_code_with_a_link_to_its_fix() -> None:
    page = error_messages.MESSAGES_PAGE.read_text(encoding="utf-8")
    assert page == error_messages.render_page(), "run: python3 scripts/dev.py docs"
    for entry in CATALOGUE:
        assert f"| {entry.code} | " in page and f"(troubleshooting.md#{entry.fix})" in page
    troubleshooting = error_messages.TROUBLESHOOTING.read_text(encoding="utf-8")
    assert "[messages.md](messages.md)" in troubleshooting


PLANTED = """
import logging, sys
log = logging.getLogger(__name__)
MARK = ": skipped "
REOPENED = "re-opened: its commit is not on the branch"
TRACKING = "<!-- planner:tracking -->"


class Server:
    def fail(self, problem):
        self.problem = f"server {problem}; its tools are left out"
        log.warning("%s%s", self.problem, "")


def stop_note(branch):
    return f"the branch {branch} moved"


def work(forge, run, path, task, exc, body, reason):
    log.exception("tool %s crashed", path)
    log.warning("task %s %s", task, REOPENED)
    log.warning("%s", exc)
    log.info("an information line that is not a problem")
    log.warning(f"{path}{MARK}a line ({len(body)} bytes)")
    run.reply("skipped", f"`cancel` did not count: {exc}")
    forge.post_comment(1, f"{TRACKING}\\n{body}")
    print(f"planner: error: {exc}", file=sys.stderr)
    raise StopPass("in_progress", reason or "interrupted")
    raise StopPass("needs_human", stop_note(path))
"""


def test_the_walk_reads_each_message_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short messages, text in `%s` arguments, an attribute, a constant in an f-string, a reply,
    each alternative of `a or b`, what a function returns are messages; a bare `%s` and a body
    that only carries a marker relay one made elsewhere."""
    package = tmp_path / "planner"
    package.mkdir()
    (package / "module.py").write_text(textwrap.dedent(PLANTED), encoding="utf-8")
    monkeypatch.setattr(error_messages, "ROOT", tmp_path)
    monkeypatch.setattr(error_messages, "PACKAGE", package)

    found = error_messages.messages()

    assert sorted((m.error, m.template) for m in found) == [
        ("StopPass", "interrupted"),
        ("StopPass", "the branch {} moved"),
        ("log.exception", "tool {} crashed"),
        ("log.warning", "server {}; its tools are left out"),
        ("log.warning", "task {} re-opened: its commit is not on the branch"),
        ("log.warning", "{}: skipped a line ({} bytes)"),
        ("post.reply", "`cancel` did not count: {}"),
        ("stderr", "planner: error: {}"),
    ]
    monkeypatch.setattr(
        error_messages, "CATALOGUE", (Entry("PLN001", "tool {} crashed", "anywhere"),)
    )
    assert {m.template for m in error_messages.uncatalogued(found)} == {
        m.template for m in found if m.template != "tool {} crashed"
    }
    assert [e.code for e in error_messages.stale_entries(found)] == []
    monkeypatch.setattr(
        error_messages, "CATALOGUE", (Entry("PLN001", "tool {} crashed!", "anywhere"),)
    )
    assert "tool {} crashed" in {m.template for m in error_messages.uncatalogued(found)}
    assert [e.code for e in error_messages.stale_entries(found)] == ["PLN001"]
