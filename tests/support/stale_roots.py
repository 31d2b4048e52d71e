"""A machine's temporary folder as a long-lived runner's looks: old numbered pytest roots.

pytest, run on tests that use `tmp_path`, deletes when it exits every unlocked numbered root but
the last three under <temp>/pytest-of-<user>: other jobs' folders, when the temporary folder is
shared. Tests plant such roots and check that what planner starts leaves them alone.
"""

from __future__ import annotations

import getpass
import tempfile
from pathlib import Path

import pytest

ROOTS = [f"pytest-{number}" for number in range(6)]
SCRATCH_TEST = "def test_scratch(tmp_path):\n    (tmp_path / 'note').write_text('x')\n"
"""A test that makes pytest create (and afterwards clean) numbered roots."""


def shared_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """planner's own temporary folder, holding the six old roots: (the folder, their parent)."""
    shared = tmp_path / "shared"
    roots = shared / f"pytest-of-{getpass.getuser()}"
    for name in ROOTS:
        (roots / name).mkdir(parents=True)
        (roots / name / "kept.txt").write_text("another job's file\n")
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    return shared, roots
