"""Red team: build and cache outputs never reach a commit, whatever `.gitignore` says.

Attack: the repository's `.gitignore` un-ignores caches (or the model writes one that does), and
running the tests leaves bytecode, a test runner's cache and installed packages in the tree. The
test fails if any of them is on the pushed branch.
"""

from __future__ import annotations

from planner.ci.branch.gitops import GitWorkspace
from tests.fake_forge import FakeGitHub
from tests.test_commit_policy import commit_and_push, pushed_files, repo, write

__all__ = ["repo"]  # the fixture, shared with the commit policy's own tests

OUTPUTS = [
    "__pycache__/conftest.cpython-311-pytest-8.0.pyc",
    "src/pkg/__pycache__/mod.cpython-311.pyc",
    "legacy/mod.pyc",
    ".pytest_cache/v/cache/lastfailed",
    "node_modules/left-pad/index.js",
    "web/node_modules/.bin/run",
]


def test_caches_and_bytecode_are_never_committed(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    write(repo.root, ".gitignore", "!__pycache__/\n!*.pyc\n!.pytest_cache/\n!node_modules/\n")
    for path in OUTPUTS:
        write(repo.root, path, "cached\n")
    write(repo.root, "src/pkg/mod.py", "VALUE = 1\n")

    notes = commit_and_push(repo)

    pushed = pushed_files(fake_github)
    assert "src/pkg/mod.py" in pushed and ".gitignore" in pushed
    assert [path for path in OUTPUTS if path in pushed] == []
    assert notes == []  # expected leftovers of a test run: dropped without a note
