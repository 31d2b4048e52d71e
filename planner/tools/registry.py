"""One registry in front of every ToolProvider: the only thing the coordinator calls.

A call never raises: unknown tools, bad arguments and provider crashes all come back as a failed
ToolResult the model can react to. A provider may carry a `problem` (an MCP server that did not
start or died): its tools are then left out of specs() and names(), and the problem is listed
once in `problems`, for the log and the pass result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from planner.core.interfaces import ToolProvider, ToolResult, ToolSpec
from planner.text.redaction import redact
from planner.tools.output import escaped
from planner.tools.sandbox.isolation import SandboxUser

log = logging.getLogger(__name__)


class ToolRegistry:
    """Routes tool calls by name to the provider that offers the tool."""

    def __init__(self, providers: list[ToolProvider] | None = None) -> None:
        self._providers: list[ToolProvider] = []
        self._routes: dict[str, ToolProvider] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._own_problems: list[str] = []
        self._cleanups: list[Callable[[], None]] = []
        self.guard: Callable[[str, dict[str, Any]], ToolResult | None] | None = None
        """Sees every call of a known tool first (the approval gate): a result answers the call
        instead of the tool; raising ends the pass. None lets every call through."""
        self.sandbox_user: SandboxUser | None = None
        """The user programs run as this pass (planner.tools.sandbox.isolation); None: planner's
        own."""
        for provider in providers or []:
            self.add(provider)

    def add(self, provider: ToolProvider) -> None:
        self._providers.append(provider)
        for spec in provider.list_tools():
            if spec.name in self._routes:
                self._report(f"tool {spec.name!r} is offered twice; the first one is kept")
                continue
            self._routes[spec.name] = provider
            self._specs[spec.name] = spec

    def add_cleanup(self, cleanup: Callable[[], None]) -> None:
        """Run `cleanup` in close(), after every provider is closed (e.g. stop the MCP loop).
        Cleanups run last added first: what was set up first (the sandbox user, whose close
        ends whatever the tools left running) is undone after what depends on it (the MCP
        servers, which stop themselves first)."""
        self._cleanups.append(cleanup)

    @property
    def problems(self) -> list[str]:
        """Everything that went wrong with tools this pass, each once, oldest first."""
        provider_problems = [_problem(p) for p in self._providers]
        return self._own_problems + [p for p in provider_problems if p]

    def specs(self) -> list[ToolSpec]:
        return [spec for name, spec in self._specs.items() if self._available(name)]

    def catalogue(self) -> list[ToolSpec]:
        """specs() with one-line descriptions, for prompts that list the tools."""
        return [
            spec.model_copy(update={"description": one_line(spec.description)})
            for spec in self.specs()
        ]

    def names(self) -> frozenset[str]:
        return frozenset(name for name in self._specs if self._available(name))

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if self.guard is not None and name in self._routes:
            answer = self.guard(name, arguments)
            if answer is not None:
                return answer
        return self.dispatch(name, arguments)

    def dispatch(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """The call without the guard: how an approved action spec reaches its tool."""
        provider = self._routes.get(name)
        if provider is None:
            available = ", ".join(sorted(self.names())) or "(none)"
            return ToolResult(
                ok=False,
                error=f"unknown tool {name!r}; available tools: {available}",
                refused=True,
            )
        try:
            result = provider.call(name, arguments)
        except Exception as exc:  # a provider bug must not end the pass
            log.exception("tool %s crashed", name)
            result = ToolResult(
                ok=False, error=f"tool {name!r} failed: {type(exc).__name__}: {exc}"
            )
        return redacted(result)

    def close(self) -> None:
        for provider in self._providers:
            _quietly(provider.close, "closing a tool provider failed")
        for cleanup in reversed(self._cleanups):
            _quietly(cleanup, "tool cleanup failed")
        self._cleanups.clear()

    def _available(self, name: str) -> bool:
        return not _problem(self._routes[name])

    def _report(self, problem: str) -> None:
        log.warning(problem)
        self._own_problems.append(problem)


def redacted(result: ToolResult) -> ToolResult:
    """The result without any known secret, file names that are not UTF-8 shown escaped: it
    goes into a prompt and into the history."""
    return result.model_copy(
        update={
            "content": redact(escaped(result.content)) if result.content else result.content,
            "error": redact(escaped(result.error)) if result.error else result.error,
        }
    )


def one_line(description: str, limit: int = 160) -> str:
    """The first sentence of the first line, at most `limit` characters."""
    first = description.strip().split("\n", 1)[0].strip()
    sentence = first.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 3].rstrip() + "..."


def _problem(provider: ToolProvider) -> str | None:
    problem = getattr(provider, "problem", None)
    return problem if isinstance(problem, str) else None


def _quietly(action: Callable[[], None], message: str) -> None:
    try:
        action()
    except Exception:
        log.exception(message)
