"""The seams of planner: every adapter implements one of these protocols.

Kept short on purpose. Concrete adapters live elsewhere (llm.py, tools/, forges/, storage/);
the coordinator only ever sees these shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field

DocT = TypeVar("DocT", bound=BaseModel)


class ToolSpec(BaseModel):
    """A tool as the model sees it (OpenAI function-calling shape)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolResult(BaseModel):
    """What a tool call produced. A refusal or failure is a result, never an exception."""

    ok: bool
    content: str = ""
    error: str | None = None
    refused: bool = False
    """The tool refused the call for its own input before changing anything (arguments that do
    not fit, an edit that matches nothing, a file that would no longer parse, an unknown tool):
    the model's to fix with its next call, not an event that puts the plan in question."""

    def for_model(self) -> str:
        return self.content if self.ok else f"ERROR: {self.error}\n{self.content}".rstrip()


class ToolCall(BaseModel):
    """One tool call requested by the model."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""


class ShownFiles(BaseModel):
    """Files shown to the model in a request: the text block, and which files it shows whole
    (a read of one of those, unchanged since, needs no tool call)."""

    text: str = ""
    whole: frozenset[str] = frozenset()
    windows: frozenset[str] = frozenset()
    """Files shown as windows around the definitions the request is about (a large file): a
    code block of such a file holding some of its definitions is put in their place."""


class PointedDefinition(BaseModel):
    """A function, class or method of the repository that a text points to, ranked."""

    path: str
    qualname: str
    """`divide`, `LRUCache`, `LRUCache.popitem`."""
    kind: str
    """def or class."""
    start: int
    """First line (1-based, decorators included)."""
    end: int
    score: float
    called_by: str = ""
    """One of the best-ranked definitions, of the same file, that calls this one."""
    located: bool = True
    """The text points to it; False: only one of the best-ranked calls it (the bug may be
    one call deeper)."""


class FileContext(Protocol):
    def files_for(self, texts: Sequence[str]) -> ShownFiles:
        """The files `texts` are about (most specific text first), rendered for a prompt."""
        ...

    def pointed(
        self, texts: Sequence[str], ran: Collection[tuple[str, int]] = ()
    ) -> list[PointedDefinition]:
        """The definitions `texts` point to, best first (the same ranking `files_for` shows),
        then the short functions of the same file that the best of them call. Given `ran`
        (path, first line) of the functions a test ran, only definitions that ran (or hold one
        that did) are given, every one the test ran ranked by how much `texts` point to it."""
        ...

    def existing(self, path: str) -> str | None:
        """`path` when it is a file of the repository; else the one file it most likely means
        (the only file with that name, `eval/durations.py` for `durations.py`); else None."""
        ...

    def closest(self, path: str, limit: int = 5) -> list[str]:
        """Files of the repository whose paths are most like `path`."""
        ...

    def current(self, path: str) -> str | None:
        """The current text of the repository file `path`, or None when it cannot be read."""
        ...


class ChatReply(BaseModel):
    """A model turn in a tool-calling conversation."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)


@runtime_checkable
class Model(Protocol):
    """A chat model: structured documents and tool-calling turns.

    `on_call` is told about every request (kind, tokens, latency) so usage lands in history.
    `context` is passed to pydantic validation (e.g. plan rules), so semantic problems are
    re-asked exactly like malformed JSON.
    """

    name: str
    on_call: Callable[[Any], None] | None

    def structured(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        schema: type[DocT],
        context: Any = None,
    ) -> DocT: ...

    def structured_text(
        self, kind: str, messages: Sequence[dict[str, Any]], schema: type[BaseModel]
    ) -> str: ...

    def chat(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        tools_on_wire: bool = True,
        retry: bool = False,
    ) -> ChatReply:
        """One tool-calling turn. With tools_on_wire False the request carries no tools (the
        reply is free text, e.g. files written as code blocks), but a call the reply writes as
        text is still read and checked against `tools`. `retry`: the request asks again after
        an answer that could not be used (a model may then sample another reply)."""
        ...


@runtime_checkable
class ToolProvider(Protocol):
    """A source of tools: the built-in workspace tools or one MCP server."""

    def list_tools(self) -> list[ToolSpec]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...

    def close(self) -> None: ...


@runtime_checkable
class ProgressReporter(Protocol):
    """Told about the pass as it goes (the forge keeps its tracking comment current)."""

    def update(self, snapshot: Any) -> None: ...


@runtime_checkable
class Checkpoint(Protocol):
    """Told when a task ends, so its work reaches the branch before the pass goes on.

    A reporter that also implements this commits and pushes the working tree; it returns the
    commit that now carries every finished task ('' when nothing could be published). The
    commit message carries `marker`, so the commit is recognised after a rebase. It may raise
    planner.outcome.flow.StopPass (for example when the push met a conflicting foreign commit).
    """

    def checkpoint(self, task_id: str, marker: str) -> str: ...


class TreeCheck(Protocol):
    """The working tree as the approval gate last judged it (planner.approval.gate).

    `settle` judges what changed since then outside any judged call (a process that outlived
    its command, an MCP server writing later) and may raise StopPass when a person must approve
    it first; `accept` makes the tree as it is now the judged state (after a commit's rebase).
    """

    def settle(self) -> None: ...

    def accept(self) -> None: ...


@runtime_checkable
class Forge(Protocol):
    """Where issues, comments, branches and pull requests live (GitHub, GitLab, local files).

    Implemented by planner.ci.forges.base.ForgeAdapter; values are the models defined there.
    """

    platform: str
    repository: str

    def get_issue(self, number: int) -> Any: ...

    def list_comments(self, number: int) -> list[Any]: ...

    def can_write(self, actor: Any) -> bool: ...

    def upsert_tracking_comment(self, number: int, body: str) -> Any: ...

    def post_comment(self, number: int, body: str) -> Any: ...

    def set_status_label(
        self, number: int, label: str | None, status_labels: Sequence[str], current: Sequence[str]
    ) -> list[str]: ...

    def default_branch(self) -> str: ...

    def get_pull_request(self, number: int) -> Any: ...

    def upsert_pull_request(
        self, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> Any: ...

    def git_remote(self) -> Any: ...


@runtime_checkable
class HistoryBackend(Protocol):
    """Moves the JSONL history directory between CI runs (cache, artifact)."""

    def restore(self, directory: Path, issue: str) -> bool: ...

    def save(self, directory: Path, issue: str) -> None: ...


@runtime_checkable
class Tools(Protocol):
    """Every tool of a pass behind one front (planner.tools.registry.ToolRegistry)."""

    def specs(self) -> list[ToolSpec]:
        """The tools the model may call now (a tool server that died is left out)."""
        ...

    def catalogue(self) -> list[ToolSpec]:
        """The tools as the planning prompt lists them."""
        ...

    def names(self) -> frozenset[str]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...
