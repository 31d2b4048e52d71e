"""Built-in tools that work on the repository checkout, confined to it.

Names and argument shapes follow the official filesystem MCP server where they overlap, so plans
read the same whichever provider executes them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.config import ToolsConfig
from planner.interfaces import ToolResult, ToolSpec
from planner.tools.paths import PathRefused, resolve_in_workspace

Handler = Callable[[dict[str, Any]], ToolResult]

PATH_ONLY = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Path relative to the repository"}},
    "required": ["path"],
}


class WorkspaceTools:
    """read_file, write_file and list_directory inside one workspace directory."""

    def __init__(self, root: Path, config: ToolsConfig, protected: tuple[Path, ...] = ()) -> None:
        self.root = root.resolve()
        self.config = config
        self.protected = tuple(p.resolve() for p in protected)
        self._handlers: dict[str, tuple[ToolSpec, Handler]] = {
            "read_file": (_spec("read_file", "Read a UTF-8 text file.", PATH_ONLY), self._read),
            "write_file": (
                _spec("write_file", "Create or overwrite a text file.", _WRITE),
                self._write,
            ),
            "list_directory": (
                _spec("list_directory", "List a directory's entries.", PATH_ONLY),
                self._list,
            ),
        }

    def list_tools(self) -> list[ToolSpec]:
        return [spec for spec, _ in self._handlers.values()]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        entry = self._handlers.get(name)
        if entry is None:
            return ToolResult(ok=False, error=f"unknown workspace tool {name!r}")
        try:
            return entry[1](arguments)
        except PathRefused as refusal:
            return ToolResult(ok=False, error=str(refusal))
        except (KeyError, TypeError) as exc:
            return ToolResult(ok=False, error=f"bad arguments for {name}: {exc}")
        except OSError as exc:
            return ToolResult(ok=False, error=f"{name} failed: {exc.strerror or exc}")

    def close(self) -> None:
        return None

    def _path(self, arguments: dict[str, Any], *, for_write: bool = False) -> Path:
        raw = arguments["path"]
        if not isinstance(raw, str):
            raise TypeError("path must be a string")
        return resolve_in_workspace(self.root, raw, protected=self.protected, for_write=for_write)

    def _read(self, arguments: dict[str, Any]) -> ToolResult:
        path = self._path(arguments)
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            return ToolResult(
                ok=True, content=f"{arguments['path']} is a binary file ({len(data)} bytes)"
            )
        text = data[: self.config.max_read_bytes].decode("utf-8", errors="replace")
        if len(data) > self.config.max_read_bytes:
            text += f"\n[cut: showing {self.config.max_read_bytes} of {len(data)} bytes]"
        return ToolResult(ok=True, content=text)

    def _write(self, arguments: dict[str, Any]) -> ToolResult:
        content = arguments["content"]
        if not isinstance(content, str):
            raise TypeError("content must be a string")
        size = len(content.encode("utf-8"))
        if size > self.config.max_write_bytes:
            return ToolResult(ok=False, error=f"refused: {size} bytes exceeds max_write_bytes")
        path = self._path(arguments, for_write=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return ToolResult(ok=True, content=f"wrote {size} bytes to {arguments['path']}")

    def _list(self, arguments: dict[str, Any]) -> ToolResult:
        path = self._path(arguments)
        entries = sorted(path.iterdir(), key=lambda p: p.name)
        lines = [
            f"[{'DIR' if e.is_dir() else 'FILE'}] {e.name}" for e in entries if e.name != ".git"
        ]
        return ToolResult(ok=True, content="\n".join(lines) or "(empty directory)")


_WRITE = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path relative to the repository"},
        "content": {"type": "string", "description": "The complete new file content"},
    },
    "required": ["path", "content"],
}


def _spec(name: str, description: str, parameters: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters=parameters)
