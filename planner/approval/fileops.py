"""Carrying out one approved spec: through the same tools the model uses, so every path rule,
size limit and command allow-list applies again at execution time."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner.approval.effects import EffectGuard
from planner.approval.models import ActionSpecExt
from planner.core.interfaces import ToolResult
from planner.tools.files.paths import PathPolicy, PathRefused

CallTool = Callable[[str, dict[str, Any]], ToolResult]


@dataclass(frozen=True)
class SpecExecutor:
    policy: PathPolicy
    call_tool: CallTool
    effects: EffectGuard | None = None
    """Judges what a command or MCP call changed (None: not watched, e.g. the CLI's PlanTool)."""

    def __call__(self, spec: ActionSpecExt) -> ToolResult:
        if self.effects is None:
            return self._carry_out(spec)
        if spec.kind == "run":
            return self.effects.run(spec, lambda: self._carry_out(spec))
        # Judged by its own spec; what it writes becomes the state later changes are judged from.
        return self.effects.carry_out(spec, lambda: self._carry_out(spec))

    def _carry_out(self, spec: ActionSpecExt) -> ToolResult:
        if spec.payload_missing:
            return ToolResult(
                ok=False,
                error=f"{spec.id} was not run: the text it carries (stored once in the planning "
                "history's payloads/ folder) is missing or damaged; reject it and redo the change",
            )
        if spec.invocation is not None:
            arguments = dict(spec.invocation.arguments)
            if spec.kind in ("create", "write"):
                # The previewed (resolved) path, not the model's raw one: a symlink on the raw
                # path may point elsewhere by now, past the preflight check of the previewed file.
                arguments["path"] = spec.path
            return self.call_tool(spec.invocation.name, arguments)
        if spec.kind in ("create", "write"):
            return self.call_tool("write_file", {"path": spec.path, "content": spec.content or ""})
        if spec.kind == "run":
            return self.call_tool("run_command", {"argv": shlex.split(spec.content or "")})
        if spec.kind in ("mkdir", "delete"):
            return self._file_operation(spec)
        return ToolResult(ok=True, content=f"{spec.kind} {spec.path}: nothing to change")

    def _file_operation(self, spec: ActionSpecExt) -> ToolResult:
        try:
            path = self.policy.resolve(spec.path, for_write=True)
            if spec.kind == "mkdir":
                path.mkdir(parents=True, exist_ok=True)
                return ToolResult(ok=True, content=f"created directory {spec.path}")
            path.unlink()
            return ToolResult(ok=True, content=f"deleted {spec.path}")
        except PathRefused as refusal:
            return ToolResult(ok=False, error=str(refusal))
        except OSError as exc:
            return ToolResult(ok=False, error=f"{spec.kind} {spec.path} failed: {exc.strerror}")
