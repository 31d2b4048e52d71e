"""One registry in front of every ToolProvider: the only thing the coordinator calls.

A call never raises: unknown tools, bad arguments and provider crashes all come back as a failed
ToolResult the model can react to.
"""

from __future__ import annotations

import logging
from typing import Any

from planner.interfaces import ToolProvider, ToolResult, ToolSpec

log = logging.getLogger(__name__)


class ToolRegistry:
    """Routes tool calls by name to the provider that offers the tool."""

    def __init__(self, providers: list[ToolProvider] | None = None) -> None:
        self._providers: list[ToolProvider] = []
        self._routes: dict[str, ToolProvider] = {}
        self._specs: dict[str, ToolSpec] = {}
        self.problems: list[str] = []
        for provider in providers or []:
            self.add(provider)

    def add(self, provider: ToolProvider) -> None:
        self._providers.append(provider)
        for spec in provider.list_tools():
            if spec.name in self._routes:
                self.problems.append(f"tool {spec.name!r} is offered twice; the first one is kept")
                continue
            self._routes[spec.name] = provider
            self._specs[spec.name] = spec

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def names(self) -> frozenset[str]:
        return frozenset(self._specs)

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        provider = self._routes.get(name)
        if provider is None:
            available = ", ".join(sorted(self._specs)) or "(none)"
            return ToolResult(
                ok=False, error=f"unknown tool {name!r}; available tools: {available}"
            )
        try:
            return provider.call(name, arguments)
        except Exception as exc:  # a provider bug must not end the pass
            log.exception("tool %s crashed", name)
            return ToolResult(ok=False, error=f"tool {name!r} failed: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        for provider in self._providers:
            try:
                provider.close()
            except Exception:
                log.exception("closing a tool provider failed")
