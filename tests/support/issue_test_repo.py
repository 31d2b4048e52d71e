"""What the passes that write or check the issue's own test share: a committed repository of
one Python module and its pytest test, and the model's replies in legacy mode (its test of the
issue, then whole files)."""

from __future__ import annotations

from pathlib import Path

from planner.testing.steps import Step, reply_text
from tests.plans import git_repo


def module_repo(root: Path, module: str, source: str, test: str) -> Path:
    """`module`.py holding `source`, its test tests/test_`module`.py holding `test`, and a
    pytest.ini that puts the root on the path; committed with a README."""
    (root / "tests").mkdir(parents=True)
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    (root / "tests" / f"test_{module}.py").write_text(test, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    return git_repo(root)


def block(path: str, content: str) -> str:
    """A whole file as the model writes it in a reply: its path, then its content fenced."""
    return f"{path}\n```python\n{content}```\n"


def issue_test_then_fixes(test_reply: str, path: str, *contents: str) -> list[Step]:
    """The model's reply to the request for a test of the issue, then one legacy reply for each
    of `contents`: `path` written whole."""
    writes = [reply_text("legacy", block(path, content)) for content in contents]
    return [reply_text("issue_test", test_reply), *writes]
