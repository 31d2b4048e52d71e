"""A repair that mends nothing is undone.

A repair task is the model's answer to failing tests. When the tests after it pass none of the
tests that failed before it, its files go back to what they were before it: the 1.5B fixed
`to_fahrenheit` (`+ 32`), the issue's own test (written by the model, wrong) still failed, and
its repair wrote the inverse formula, which that test failed too. The code from before the
repair was the fix.

The files are those the repair wrote with planner's write tools (whole-file blocks included),
saved before its first write of each; a change made by a command is not undone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from planner.core.interfaces import ToolCall, TreeCheck
from planner.core.tool_names import WRITE_TOOLS, path_argument


@dataclass
class RepairUndo:
    """The running repair task: what failed before it, and its files as they were."""

    workspace: Path
    task_id: str = ""
    failing_before: frozenset[str] = frozenset()
    saved: dict[str, bytes | None] = field(default_factory=dict)
    """Each file the repair wrote, as it was before (None: it did not exist)."""

    def start(self, task_id: str, failing: list[str]) -> None:
        self.task_id, self.failing_before, self.saved = task_id, frozenset(failing), {}

    def before_write(self, task_id: str, call: ToolCall) -> None:
        path = path_argument(call.arguments)
        if task_id != self.task_id or call.name not in WRITE_TOOLS or not path:
            return
        target = self.workspace / path
        if path not in self.saved and _inside(self.workspace, target) and not target.is_symlink():
            self.saved[path] = target.read_bytes() if target.is_file() else None

    def mended_nothing(self, task_id: str, failing_after: list[str]) -> bool:
        """The repair `task_id` wrote files and passes none of the tests failing before it (a
        repair that mends one and breaks another is kept: the next repair sees the new one)."""
        if task_id != self.task_id or not self.saved:
            return False
        return self.failing_before <= frozenset(failing_after)

    def undo(self) -> list[str]:
        """Put the saved files back; a link put in a file's place is removed, never written
        through. The paths put back."""
        saved = self.saved.items()
        restored = [path for path, content in saved if put_back(self.workspace, path, content)]
        self.task_id, self.saved = "", {}
        return restored


def put_back(workspace: Path, path: str, content: bytes | None, executable: bool = False) -> bool:
    """`path` holds `content` again (None: it is removed); a link put in a file's place is
    removed, never written through, and a folder is left alone. Whether it was put back."""
    target = workspace / path
    if not _inside(workspace, target) or (target.is_dir() and not target.is_symlink()):
        return False
    if target.is_symlink() or target.exists():
        target.unlink()
    if content is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        if executable:
            target.chmod(0o755)
    return True


def _inside(workspace: Path, target: Path) -> bool:
    """`target`'s folder, links resolved, lies in the workspace."""
    try:
        target.parent.resolve().relative_to(workspace.resolve())
    except (OSError, ValueError):
        return False
    return True


@contextmanager
def own_change(tree: TreeCheck | None) -> Iterator[None]:
    """planner changes the tree itself (an undo, a reset): what is not its own is judged
    first, and the tree afterwards counts as judged, so the approval gate (`tree`) never
    takes planner's change for one made outside any judged call."""
    if tree is not None:
        tree.settle()
    try:
        yield
    finally:
        if tree is not None:
            tree.accept()
