"""A change waiting for approval keeps its text once (issue 44, item 7): a 900 KB write_file
made a 1.8 MB JSONL, a 1.8 MB plan.json and a 0.9 MB preview, all carried between runs. End to
end on the fake GitHub (run_for_event in process): the pass asks, the history is measured, the
next runner has only the issue's lease to restore from, and the approval writes the file."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from planner.storage.payloads import PAYLOADS_DIR
from planner.testing.steps import reply_tool_calls
from tests.fake_forge import FakeGitHub
from tests.fake_forge.core import git
from tests.fake_forge.rig import Rig, github_rig, say
from tests.fake_forge.scenario import labeled_event
from tests.plans import completion, finish, planning, write

QUIET = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}
BRANCH = "planner/issue-1"
ROW = "fixture row {:07d}: the quick brown fox jumps over the lazy dog, twice\n"
BIG = "".join(ROW.format(n) for n in range(12_500))  # 900,000 characters


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    return github_rig(fake_github, tmp_path, "Add the fixture", "Add BIG.txt.")


def sizes(history: Path, pattern: str) -> list[int]:
    return [path.stat().st_size for path in history.rglob(pattern) if path.is_file()]


def test_a_large_write_waiting_for_approval_is_stored_once_and_still_carried_out(
    rig: Rig,
) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    asked = rig.run(
        labeled_event(), [planning("task_1"), write("BIG.txt", BIG)], event_name="issues", **QUIET
    )
    assert asked.status == "needs_human"  # a large file: a person approves it

    payloads = sizes(rig.history / PAYLOADS_DIR, "*.jsonl")
    assert len(BIG) == 900_000
    assert len(payloads) == 1 and len(BIG) < payloads[0] < len(BIG) * 1.02  # JSON's \\n
    [history] = [p for p in rig.history.glob("*.jsonl")]
    assert history.stat().st_size < 60_000  # was twice the file, and more with every save
    assert max(sizes(rig.history / "plans", "plan.json")) < 20_000
    assert max(sizes(rig.history / "plans", "*.diff")) < 1_000  # points to the one copy
    total = sum(sizes(rig.history, "*"))
    assert total < len(BIG) * 1.15, f"{total:,} bytes for a {len(BIG):,}-character payload"

    shutil.rmtree(rig.history)  # a runner without the cache: the lease brings it back
    done = say(rig, "/planner approve a1", [finish(), completion()], **QUIET)
    assert done.status == "completed", done.reason
    shown = git(fake.bare, "show", f"{BRANCH}:BIG.txt")
    assert (
        hashlib.sha256((shown + "\n").encode()).hexdigest()
        == hashlib.sha256(BIG.encode()).hexdigest()
    )


def test_a_payload_changed_after_it_was_shown_is_never_carried_out(rig: Rig) -> None:
    """The attack: the stored text is swapped between the request and the approval (a file in
    the history directory, which travels through caches and artifacts). The approved spec must
    not write the swapped text, nor an empty file."""
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    text = "safe line\n" * 400
    small = {"approval.large_file_bytes": 20, **QUIET}
    first = [planning("task_1"), write("NOTES.md", text)]
    rig.run(labeled_event(), first, event_name="issues", **small)
    [stored] = list((rig.history / PAYLOADS_DIR).rglob("*.jsonl"))
    stored.write_text(stored.read_text().replace("safe line", "evil line"), encoding="utf-8")

    script = [finish("failed", "not written"), completion(done=False, completed=0)]
    before = len(rig.prompts)
    outcome = say(rig, "/planner approve a1", script, **small)

    told = rig.prompts[before]  # the task's next request: the refusal as the call's result
    # the witness finds the text is not the one shown (the payload's own check is the next line)
    assert "a1 was not run: a1 is not the change that was shown" in told
    assert "evil line" not in told
    assert outcome.status != "completed"
    assert not fake.branch_exists(BRANCH)  # nothing was written, so nothing was committed


OLD = "".join(ROW.format(n).replace("fixture", "original") for n in range(12_500))


@pytest.mark.parametrize("existing", ["", OLD], ids=["small-file", "900kb-file"])
def test_a_large_edit_is_stored_once_whatever_the_arguments_type(rig: Rig, existing: str) -> None:
    """Issue 57, item 4: only string arguments were stored once. An edit_file whose `edits`
    (a list) held a 900 KB newText was written four times (JSONL, plan.json, preview, payload);
    replacing an existing 900 KB file wrote a 1.8 MB preview. Any argument over the threshold
    is stored once by hash, a large preview is cut and says where the whole text is, and the
    approval still makes exactly the change that was shown."""
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    before = existing or "# Big\nplaceholder\n"
    fake.push_branch("main", "BIG.txt", before)
    old_text = before if existing else "placeholder\n"
    edit = {"path": "BIG.txt", "edits": [{"oldText": old_text, "newText": BIG}]}
    script = [planning("task_1"), reply_tool_calls("execute", [("edit_file", edit)])]
    asked = rig.run(labeled_event(), script, event_name="issues", **QUIET)
    assert asked.status == "needs_human"

    [history] = list(rig.history.glob("*.jsonl"))
    assert history.stat().st_size < 60_000
    assert max(sizes(rig.history / "plans", "plan.json")) < 20_000
    [diff] = list((rig.history / "plans").rglob("*.diff"))
    assert diff.stat().st_size < 120_000
    said = diff.read_text(encoding="utf-8")
    assert "cut" in said and f"{PAYLOADS_DIR}/" in said  # says so, and where the whole text is
    total = sum(sizes(rig.history, "*"))  # the edits (old and new text) once, the new file once
    assert total < (len(existing) + 2 * len(BIG)) * 1.05 + 150_000, f"{total:,} bytes"

    shutil.rmtree(rig.history)  # the next runner restores from the lease only
    done = say(rig, "/planner approve a1", [finish(), completion()], **QUIET)
    assert done.status == "completed", done.reason
    expected = BIG if existing else "# Big\n" + BIG
    shown = git(fake.bare, "show", f"{BRANCH}:BIG.txt") + "\n"
    assert hashlib.sha256(shown.encode()).digest() == hashlib.sha256(expected.encode()).digest()
