"""What the passes that write or check the issue's own test share: the model's replies in
legacy mode (its test of the issue, then whole files)."""

from __future__ import annotations

from planner.testing.steps import Step, reply_text


def block(path: str, content: str) -> str:
    """A whole file as the model writes it in a reply: its path, then its content fenced."""
    return f"{path}\n```python\n{content}```\n"


def issue_test_then_fixes(test_reply: str, path: str, *contents: str) -> list[Step]:
    """The model's reply to the request for a test of the issue, then one legacy reply for each
    of `contents`: `path` written whole."""
    writes = [reply_text("legacy", block(path, content)) for content in contents]
    return [reply_text("issue_test", test_reply), *writes]
