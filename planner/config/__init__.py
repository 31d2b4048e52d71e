"""Configuration: one pydantic model per section, loaded with a fixed precedence.

defaults < YAML file (default `.github/planner.yml` in the target repo) < environment < explicit
inputs (CLI flags / action inputs). Every problem is reported at once, naming the key path, the
offending value, where it came from and what is allowed — before anything has side effects.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from planner.core.errors import ConfigError
from planner.text.redaction import is_secret_name

DEFAULT_CONFIG_PATH = ".github/planner.yml"
DEFAULT_MODEL = "gpt-4.1"


class Section(BaseModel):
    """Base for config sections: unknown keys are errors, values are validated on assignment."""

    # Attribute docstrings become field descriptions: the generated reference and JSON Schema.
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, use_attribute_docstrings=True
    )


class ReflectionConfig(Section):
    """planning.reflection — when the model is asked to evaluate what was done."""

    enabled: bool = True
    """Run reflection at all."""
    trigger_on_error: bool = True
    """Reflect automatically after a failed action. A call the tool refused for its own input
    before changing anything (arguments that do not fit, an edit that matches nothing, a Python
    file that would no longer parse, an unknown tool) is not one: its error is the model's next
    input. A task that fails still is."""
    trigger_interval: int = Field(default=3, ge=0)
    """Reflect every N actions; 0 disables periodic reflection."""
    depth: Literal["deep", "moderate", "shallow"] = "moderate"
    """How thorough a reflection should be (passed to the reflection prompt). Replanning off
    only: with planning.replanning.enabled another value is rejected."""


class RevisionConfig(Section):
    """planning.revision — how often the plan may be revised before a person is asked."""

    max_revisions: int = Field(default=3, ge=0)
    """Plan revisions allowed for an issue; past this the run requires human intervention.
    With planning.replanning.enabled it applies only when set explicitly, as a cap on the
    plan revisions replanning may make between human checkpoints (the replanning limits,
    e.g. planning.replanning.global.max_total_replans, apply as well)."""


class HistoryConfig(Section):
    """planning.history — where the JSONL planning history lives."""

    storage_type: Literal["jsonl"] = "jsonl"
    """Only JSONL files are supported."""
    directory: str = "planning_history"
    """History directory, relative to the repository root unless absolute."""
    retention_days: float = Field(default=90, ge=0)
    """The history of another issue whose work was completed and has no entry newer than
    this many days is deleted at the start of a pass, with its approval plans, planning
    sessions, their logs and its stored payloads; plans and planning sessions that ended this
    long ago and that no remaining history names go too, and so do older telemetry lines
    (plans/events.ndjson). 0 keeps everything."""


class LLMDecisionConfig(Section):
    """planning.replanning.llm_decision — how far replan decisions are trusted (§9.3)."""

    min_confidence_threshold: float = Field(default=0.5, ge=0, le=1)
    """Below this confidence a proposed replan is not executed (0.5-0.8 runs with a warning)."""
    require_user_confirmation_on_low_confidence: bool = True
    """Between user_confirmation_threshold and min_confidence_threshold, ask a person first;
    false keeps the current plan instead."""
    user_confirmation_threshold: float = Field(default=0.3, ge=0, le=1)
    """Below this confidence the decision is not trusted at all and the plan is kept."""

    @model_validator(mode="before")
    @classmethod
    def _follow_min_confidence(cls, data: Any) -> Any:
        """A lowered min_confidence_threshold takes the unset user threshold down with it,
        so REPLANNING_MIN_CONFIDENCE=0.2 alone is a valid configuration."""
        if not isinstance(data, dict) or "user_confirmation_threshold" in data:
            return data
        try:
            minimum = float(data.get("min_confidence_threshold", 0.5))
        except (TypeError, ValueError):
            return data  # the field validator reports the bad value
        return {**data, "user_confirmation_threshold": min(0.3, minimum)}

    @model_validator(mode="after")
    def _ordered(self) -> LLMDecisionConfig:
        if self.user_confirmation_threshold > self.min_confidence_threshold:
            raise ValueError(
                f"user_confirmation_threshold ({self.user_confirmation_threshold}) must not "
                f"exceed min_confidence_threshold ({self.min_confidence_threshold})"
            )
        return self


class GoalReplanConfig(Section):
    """planning.replanning.goal_understanding — questions to people (§4, §9.1)."""

    max_clarification_requests: int = Field(default=2, ge=0)
    """Questions planner may put to people about one piece of work (clarifications and
    low-confidence confirmations from any phase); past this it proceeds on its assumptions."""
    auto_assume_on_no_response: bool = True
    """Without an answer after auto_assume_timeout_minutes, the next run proceeds on the
    assumptions it stated; false waits for an answer indefinitely."""
    auto_assume_timeout_minutes: float = Field(default=30, ge=0)
    """How long to wait for an answer before assuming (checked when the next run starts; the
    scheduled sweep, planner.ci.handlers.sweep, starts that run on an issue nobody comments on)."""


class DecompositionReplanConfig(Section):
    """planning.replanning.task_decomposition (§5, §9.1)."""

    max_redecomposition_attempts: int = Field(default=3, ge=0)
    """Level-4 replans (subtasks decomposed again)."""


class ActionSequenceReplanConfig(Section):
    """planning.replanning.action_sequence (§6, §9.1)."""

    max_regeneration_attempts: int = Field(default=3, ge=0)
    """Level-3 replans (whole action plan generated again)."""


class ExecutionReplanConfig(Section):
    """planning.replanning.execution (§7, §9.1)."""

    max_action_retries: int = Field(default=3, ge=0)
    """Level-1 replans (the failed action run again as it was)."""
    max_partial_replans: int = Field(default=2, ge=0)
    """Level-2 replans decided during execution (remaining work planned again)."""


class ReflectionReplanConfig(Section):
    """planning.replanning.reflection (§8, §9.1)."""

    max_plan_revisions: int = Field(default=2, ge=0)
    """Plan revisions decided at the final evaluation, after every task has run."""


class GlobalReplanConfig(Section):
    """planning.replanning.global — limits across phases (§9.1, §9.2, §13.3)."""

    max_total_replans: int = Field(default=10, ge=0)
    """Executed replans of every kind, questions to people included."""
    infinite_loop_detection: bool = True
    """Refuse a replan that repeats the same approach to the same trigger too often."""
    same_trigger_max_count: int = Field(default=2, ge=1)
    """Replans allowed with the same trigger and approach; the next one is skipped and the
    model is asked for a different approach."""


class ReplanningConfig(Section):
    """planning.replanning — model-decided replanning at every phase (seed: replanning.md §12)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    enabled: bool = True
    """Let the model decide after each phase whether to go back to an earlier one; false keeps
    the plain reflection/revision path of planning.reflection and planning.revision."""
    decision_mode: Literal["separate", "folded"] = "separate"
    """Not a seed key. "separate": each decision is its own short model call (the seed's
    design). "folded": the decision rides in the phase's own reply (the planning reply, a
    request_replan tool during execution, the completion reply) and costs no extra call, but
    the model judges its own output while writing it, execution is only evaluated when the
    model volunteers a request_replan call, and periodic checks disappear. See
    docs/replanning.md."""
    llm_decision: LLMDecisionConfig = Field(default_factory=LLMDecisionConfig)
    """Confidence thresholds."""
    goal_understanding: GoalReplanConfig = Field(default_factory=GoalReplanConfig)
    """Clarification limits and automatic assumptions."""
    task_decomposition: DecompositionReplanConfig = Field(default_factory=DecompositionReplanConfig)
    """Re-decomposition limit."""
    action_sequence: ActionSequenceReplanConfig = Field(default_factory=ActionSequenceReplanConfig)
    """Action plan regeneration limit."""
    execution: ExecutionReplanConfig = Field(default_factory=ExecutionReplanConfig)
    """Retry and partial replan limits."""
    reflection: ReflectionReplanConfig = Field(default_factory=ReflectionReplanConfig)
    """Final-evaluation revision limit."""
    global_: GlobalReplanConfig = Field(default_factory=GlobalReplanConfig, alias="global")
    """Overall limit and loop detection (YAML key `global`)."""


class RepositoryMapConfig(Section):
    """planning.repository_map — what the planning prompt shows of the repository (issue 16).

    The seed names the repository context as an input of goal understanding (§2.1). planner
    builds a compact map locally: the file tree (as git sees it, so .gitignore holds), for
    source files their top-level symbols with one-line docstrings, ranked by relevance to the
    issue, and the files the issue names in full. Not a seed key.
    """

    enabled: bool = True
    """Show the repository map in the planning prompt."""
    max_tokens: int = Field(default=700, ge=50)
    """Budget of the whole map section in tokens (estimated: a token per digit, 3.8 characters
    per token otherwise, as Qwen2.5 counts a map); less relevant files are summarised per
    directory when the map would exceed it."""
    named_file_max_tokens: int = Field(default=400, ge=0)
    """A file the issue names is shown in full up to this many tokens (cut beyond); 0 shows
    no file contents."""
    max_named_files: int = Field(default=2, ge=0)
    """At most this many files the issue names are shown in full."""
    max_file_bytes: int = Field(default=262_144, ge=1)
    """Files larger than this are listed with their size only, never parsed."""
    max_symbols_per_file: int = Field(default=6, ge=0)
    """Top-level symbols listed per source file."""
    cache: bool = True
    """Keep the file index per commit under the git directory (never committed) so the next
    pass on the same commit skips parsing."""


class TaskContextConfig(Section):
    """planning.task_context — the files a task is about, shown in its prompt (also without
    planning, in the request). A task should not need a read_file to see the file it is asked
    to change: the current content of the files the task, the tasks it depends on and the issue
    name (or whose symbols they name) is shown, line-numbered, within a token budget. Not a
    seed key."""

    enabled: bool = True
    """Show the files in the task prompt."""
    max_files: int = Field(default=3, ge=0)
    """At most this many files are shown."""
    max_tokens: int = Field(default=1_500, ge=0)
    """Budget of all files shown, in estimated tokens; a file that does not fit is cut with a
    note saying which lines are missing."""


class ExplorationConfig(Section):
    """planning.exploration — a bounded, read-only look at the repository before the plan
    (issue 16). Not a seed key."""

    mode: Literal["auto", "always", "off"] = "auto"
    """auto: explore only when the repository map had to leave files out; always; off."""
    max_actions: int = Field(default=4, ge=1)
    """Tool calls (read_file, list_directory, search_files) the exploration may make."""
    max_tokens: int = Field(default=12_000, ge=500)
    """Prompt plus completion tokens the exploration may spend; it is asked for its findings
    once this is reached."""
    max_result_chars: int = Field(default=3_000, ge=200)
    """Each tool result is cut to this many characters for the exploration."""
    max_summary_chars: int = Field(default=1_200, ge=100)
    """The findings the model writes are cut to this length for the planning prompt."""


class RefinementConfig(Section):
    """planning.refinement — a separate quality judge scores each plan (and the finished work)
    and decides accept, replan with its feedback, or reject (seed: task-refinement.md)."""

    enabled: bool = True
    """Judge every new or changed plan, and the finished work before completion; false lets
    plans run unjudged (no extra model calls)."""
    max_refinement_attempts: int = Field(default=2, ge=0)
    """Replans with the judge's feedback for one plan (and, counted apart, for the finished
    work); when they are spent an acceptable plan runs and an unacceptable one is rejected."""
    max_quality_retries: int | None = Field(default=None, ge=0)
    """Legacy name of max_refinement_attempts, read only when that key is not set."""
    refine_suggestions_on_success: bool = False
    """Replan an acceptable plan when the judge still has suggestions."""
    max_suggestion_replans: int = Field(default=1, ge=0)
    """Replans for suggestions alone (refine_suggestions_on_success) per plan."""
    enable_individual_fallback: bool = True
    """When a replanned plan breaks the structure, keep the previous tasks and take over only
    the changed tasks that still fit; false keeps the previous plan as it was."""
    delta_threshold: float = Field(default=5, ge=0)
    """Stagnation: a score gain below this many points ends the refinement."""
    delta_threshold_percent: float = Field(default=5, ge=0)
    """Stagnation: a score gain below this percentage of the previous score ends it too."""
    task_count_change_threshold: float = Field(default=0.3, ge=0)
    """A replanned plan whose task count changed by more than this fraction ..."""
    task_count_change_min_absolute: int = Field(default=2, ge=0)
    """... and by more than this many tasks breaks the structure."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_retries(cls, data: Any) -> Any:
        """The seed's coexistence rule: max_quality_retries stands in for an unset
        max_refinement_attempts; when both are set, max_refinement_attempts wins."""
        if not isinstance(data, dict) or data.get("max_quality_retries") is None:
            return data
        if "max_refinement_attempts" in data:
            return data
        return {**data, "max_refinement_attempts": data["max_quality_retries"]}


class PlanningConfig(Section):
    """planning — the five-phase planning process (seed: planning-process.md §9.1)."""

    enabled: bool = True
    """Plan before acting; false runs the plain tool loop (legacy mode)."""
    decompose: bool = True
    """Not a seed key. The model makes the plan: goal understanding, task decomposition and
    action plan in one planning call, then the plan review. false: the plan is the issue as one
    task, made without a model call and not reviewed; the task's prompt still carries the
    issue, the code it points to and the issue's test, and verification, attempts, the
    checklist and replanning after failures run as with any plan. The small_model profile sets
    false: a 1.5B model's plans turned an eviction bug into "remove LRUCache" and a typed-key
    bug into ten tasks from "understand the issue" to "deploy the changes", and its review
    accepted each at full confidence."""
    strategy: Literal["chain_of_thought", "hierarchical", "simple"] = "chain_of_thought"
    """How the model is told to decompose the task."""
    max_subtasks: int = Field(default=100, ge=1)
    """A plan with more subtasks than this is rejected."""
    decomposition_level: Literal["detailed", "moderate", "minimal"] = "moderate"
    """How fine-grained subtasks should be."""
    reflection: ReflectionConfig = Field(default_factory=ReflectionConfig)
    """Reflection settings."""
    revision: RevisionConfig = Field(default_factory=RevisionConfig)
    """Plan revision settings."""
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    """History storage settings."""
    replanning: ReplanningConfig = Field(default_factory=ReplanningConfig)
    """Replanning decided by the model at every phase (replanning.md)."""
    repository_map: RepositoryMapConfig = Field(default_factory=RepositoryMapConfig)
    """The repository map shown when planning (issue 16)."""
    exploration: ExplorationConfig = Field(default_factory=ExplorationConfig)
    """The read-only exploration before planning (issue 16)."""
    task_context: TaskContextConfig = Field(default_factory=TaskContextConfig)
    """The files each task is about, shown in its prompt."""
    refinement: RefinementConfig = Field(default_factory=RefinementConfig)
    """Quality judge of plans and finished work (task-refinement.md)."""

    @model_validator(mode="after")
    def _depth_needs_the_reflection_path(self) -> PlanningConfig:
        """reflection.depth only shapes the reflection prompt, which replanning replaces: a
        depth other than the default must not be silently ignored."""
        depth = self.reflection.depth
        if self.enabled and self.replanning.enabled and depth != "moderate":
            raise ValueError(
                f"planning.reflection.depth: {depth} only applies with "
                "planning.replanning.enabled: false (the reflection prompt); with replanning on, "
                "the decisions at the reflection points follow planning.replanning "
                "(llm_decision thresholds, execution and reflection limits) and have no depth. "
                "Remove planning.reflection.depth or set planning.replanning.enabled: false"
            )
        return self


class ModelPrice(Section):
    """llm.prices.<model> — what one model costs."""

    prompt_per_million: float = Field(ge=0)
    """USD per million prompt tokens."""
    completion_per_million: float = Field(ge=0)
    """USD per million completion tokens."""


class LLMConfig(Section):
    """llm — the OpenAI-compatible chat endpoint (OpenAI, Azure, Ollama, vLLM, LiteLLM, ...)."""

    model: str = DEFAULT_MODEL
    """Model name sent with every request. Not set anywhere, with a base_url other than
    OpenAI's: the model that endpoint lists at GET /models when it lists one (llama.cpp, vLLM,
    an Ollama with one model pulled); when it lists several others than this default, the run
    stops and names them."""
    base_url: str | None = None
    """API base URL, e.g. http://localhost:11434/v1 for Ollama; None means OpenAI."""
    api_key: SecretStr | None = None
    """API key; normally supplied through OPENAI_API_KEY rather than a file."""
    structured_output: Literal["json_schema", "json_mode"] = "json_schema"
    """json_schema sends response_format json_schema; json_mode asks for JSON in plain text."""
    timeout_seconds: float = Field(default=180.0, gt=0)
    """Timeout of one HTTP request to the model."""
    max_retries: int = Field(default=4, ge=0)
    """Retries on 429, 5xx and connection errors."""
    max_retry_wait_seconds: float = Field(default=60.0, ge=0)
    """Upper bound for one wait between retries (also caps Retry-After)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; None leaves the provider's default."""
    max_prompt_bytes: int = Field(default=1_500_000, ge=10_000)
    """A request whose messages (as JSON) are larger than this is not sent: the call fails with
    a clear message instead of spending the pass's budget on one oversized prompt."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Upper bound on the tokens of one reply (sent as max_tokens); None leaves the endpoint's
    default. A local server's default may be "until the context is full": a small model that
    starts repeating itself then runs into the request timeout, and every retry again."""
    context_tokens: int | None = Field(default=None, ge=512)
    """The model's context window in tokens. None: what the endpoint says (llama.cpp's
    /props n_ctx, Ollama's num_ctx) or, for a known hosted model, its published limit. Every
    request is fitted to it with room for the reply (llm.max_output_tokens, else a quarter of
    the window up to 4096): long tool results of earlier turns are cut to a window around what
    was asked, older turns summarised; a server's context-overflow error shrinks the request
    and sends it again."""
    stop_repeating: bool = False
    """Stream each reply and stop it once it keeps repeating itself (the same passage over and
    over, as small models do at temperature 0, until the output limit): what came before is the
    reply, treated as cut off at the output limit. Needs an endpoint that streams with
    `stream_options.include_usage` (OpenAI, llama.cpp, Ollama, vLLM). A stopped reply ends
    before the endpoint's count: it reports the tokens it streamed and its prompt estimated at
    4 characters per token."""
    tool_calling: Literal["native", "json", "auto"] = "auto"
    """How tool calls travel: native `tools`/`tool_calls`; json (the model answers a JSON
    document naming the tool and its arguments, validated and re-asked once); auto (native,
    switching to json for the rest of the pass when the endpoint or model gives no tool calls).
    In every mode a reply that writes a well-formed call as text runs as that call."""
    edit_format: Literal["whole_file", "edit_file"] = "whole_file"
    """How the model is asked to change the files its prompt shows whole: whole_file (reply
    with the file's path and its complete new content in a code block; small models get this
    right far more often than search/replace edits; that turn sends no tools, later turns do)
    or edit_file (search/replace edits with the edit_file tool, every turn offers the tools;
    cheaper in output tokens on large files). In both, a reply holding such a block for a file
    shown whole writes that file through write_file."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """USD per million tokens by model name: the cost shown in the tracking comment, the job
    summary and `planner eval`; for a model not listed only tokens are shown."""


class BudgetConfig(Section):
    """budget — limits of one pass. Reaching one ends the pass as in_progress, not failed."""

    max_actions: int = Field(default=40, ge=1)
    """Tool calls per pass."""
    max_actions_per_task: int = Field(default=8, ge=1)
    """Tool calls one task may make before it must decide: from then on reading is refused
    and the model must change files, finish or give up with a reason; four calls later the
    task ends as failed. Calls that were refused count too, so the loop cannot read forever."""
    max_model_calls: int = Field(default=80, ge=1)
    """Model requests per pass (retries of one request count once)."""
    max_wall_seconds: float = Field(default=1800.0, gt=0)
    """Wall-clock seconds per pass."""
    max_total_tokens: int = Field(default=1_000_000, ge=1)
    """Prompt plus completion tokens per pass."""
    finish_reserve_seconds: float = Field(default=120.0, ge=0)
    """Seconds of max_wall_seconds kept for the end of a CI run (commit, push, history, final
    comment): model requests, retries and commands get at most the time left before that
    (at most a quarter of max_wall_seconds is kept)."""


class McpServerConfig(Section):
    """tools.mcpServers.<name> — one MCP server, in the common `mcpServers` shape.

    Strings may use `${VAR}` and `${VAR:-default}`; they are expanded from the environment when
    the pass starts (an undefined variable without a default is a configuration error).
    """

    type: Literal["stdio", "http", "streamable-http"] | None = None
    """Transport; inferred when omitted (`command` means stdio, `url` means streamable HTTP)."""
    command: str | None = None
    """stdio: the program to start."""
    args: list[str] = Field(default_factory=list)
    """stdio: its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: extra environment variables. Nothing else is inherited except PATH, HOME, USER,
    LOGNAME, SHELL and TERM, so tokens reach a server only when listed here."""
    cwd: str | None = None
    """stdio: working directory, relative to the workspace; default the workspace itself."""
    url: str | None = None
    """streamable HTTP: the endpoint URL."""
    headers: dict[str, str] = Field(default_factory=dict)
    """streamable HTTP: headers sent with every request (e.g. Authorization)."""
    allow_tools: list[str] | None = None
    """Only these tools (names or fnmatch patterns) are offered; None offers every tool."""
    deny_tools: list[str] = Field(default_factory=list)
    """Tools (names or fnmatch patterns) never offered, even when allowed."""
    timeout_seconds: float | None = Field(default=None, gt=0)
    """Per-call timeout for this server; None uses tools.mcp_call_timeout_seconds."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type stdio needs `command`")
        if self.type in ("http", "streamable-http") and self.url is None:
            raise ValueError(f"type {self.type} needs `url`")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


class ToolsConfig(Section):
    """tools — the workspace tools and MCP servers the model may call."""

    max_read_bytes: int = Field(default=200_000, ge=1)
    """read_file returns at most this many bytes and says when it cut."""
    max_write_bytes: int = Field(default=1_000_000, ge=1)
    """write_file and edit_file refuse content larger than this."""
    allow_workflow_edits: bool = False
    """Allow writes under .github/workflows/ and to .gitlab-ci.yml (CI that runs with secrets)."""
    allowed_commands: list[str] = Field(default_factory=list)
    """run_command accepts an argv only if it starts with one of these prefixes, written as a
    command line (`python -m pytest`, `npm test`). Empty (the default) disables run_command."""
    command_timeout_seconds: float = Field(default=300.0, gt=0)
    """run_command kills the command's whole process group after this many seconds."""
    max_output_bytes: int = Field(default=20_000, ge=200)
    """Cap per output stream of run_command, and for MCP and search results; longer output is
    cut in the middle with the sizes noted."""
    max_search_results: int = Field(default=100, ge=1)
    """search_files lists at most this many matching lines (and counts the rest)."""
    search_timeout_seconds: float = Field(default=30.0, gt=0)
    """search_files gives up after this many seconds (a pathological regex cannot hang a pass)."""
    mcpServers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """MCP servers by name; their tools appear to the model as `<name>__<tool>`."""
    mcp_config_file: str | None = None
    """A `.mcp.json`-style file (`{"mcpServers": {...}}`), relative to the workspace; entries in
    mcpServers above win over same-named entries in the file. The file is write-protected."""
    mcp_call_timeout_seconds: float = Field(default=120.0, gt=0)
    """Default timeout of one MCP tool call."""
    mcp_startup_timeout_seconds: float = Field(default=30.0, gt=0)
    """An MCP server that has not listed its tools after this long is reported and left out."""
    env_passthrough: list[str] = Field(default_factory=list)
    """Environment variables run_command and MCP servers inherit besides the built-in
    allow-list (PATH, HOME, locale, certificates, proxies). A name that looks like a credential
    (TOKEN, KEY, SECRET, PASSWORD, ...) is refused: tools never see a secret."""
    sandbox_user: str = Field(default="auto", pattern=r"^(auto|off|\d+(:\d+)?)$")
    """Which user runs commands and MCP servers when planner runs as root: `auto` (the
    workspace's owner, or uid 65534 when root owns it or its owner runs a process above planner,
    as under `sudo`; always with group 65534: a GitHub-hosted runner's user has the group docker,
    whose socket a Docker action is given), `off`, or `UID[:GID]`. A different user cannot read
    planner's or the CI job's process memory and environment."""

    @field_validator("env_passthrough")
    @classmethod
    def _no_secret_passthrough(cls, names: list[str]) -> list[str]:
        refused = [name for name in names if _credential_name(name)]
        if refused:
            raise ValueError(f"credentials are never passed to tools: {', '.join(refused)}")
        return names

    @field_validator("allowed_commands")
    @classmethod
    def _prefixes_split(cls, prefixes: list[str]) -> list[str]:
        for prefix in prefixes:
            try:
                words = shlex.split(prefix)
            except ValueError as exc:
                raise ValueError(f"command prefix {prefix!r} cannot be split: {exc}") from None
            if not words:
                raise ValueError(f"command prefix {prefix!r} is empty")
        return prefixes

    @property
    def command_prefixes(self) -> list[tuple[str, ...]]:
        """allowed_commands as argv prefixes."""
        return [tuple(shlex.split(prefix)) for prefix in self.allowed_commands]


def _credential_name(name: str) -> bool:
    return is_secret_name(name)  # the one rule, shared with the tools


BRANCH_PREFIX_PATTERN = r"^[A-Za-z0-9._/-]+$"


class ForgeConfig(Section):
    """forge — how planner is triggered on GitHub/GitLab and what it writes there."""

    trigger_label: str = Field(default="planner", min_length=1)
    """Adding this label to an issue starts a pass."""
    trigger_phrase: str = Field(default="/planner", min_length=1)
    """A comment containing this phrase (case-insensitive, on a word boundary) starts a pass;
    the text after it is the instruction for that pass."""
    trigger_on_opened: bool = False
    """Also start a pass when an issue is opened."""
    trigger_on_assigned: bool = False
    """Also start a pass when an issue is assigned."""
    label_working: str = "planner:working"
    """Status label while a pass runs."""
    label_needs_input: str = "planner:needs-input"
    """Status label when a person must answer a question (needs_human). While it is set, any
    plain comment from someone with write access is taken as the answer and starts a pass."""
    label_paused: str = "planner:paused"
    """Status label when a pass paused at its budget, failed or was stopped: only a comment with
    the trigger phrase (such as `/planner resume`) starts the next pass."""
    label_done: str = "planner:done"
    """Status label when the plan is complete."""
    branch_prefix: str = Field(default="planner/issue-", pattern=BRANCH_PREFIX_PATTERN)
    """The issue's branch is this prefix followed by the issue number."""
    draft_pr: bool = True
    """Open the pull/merge request as a draft while the plan is unfinished."""
    allowed_users: list[str] = Field(default_factory=list)
    """Users who may trigger a pass without write access to the repository."""
    allowed_bots: list[str] = Field(default_factory=list)
    """Bot accounts whose events may trigger a pass (bots never do otherwise)."""
    commit_name: str | None = None
    """Commit author name; None uses the platform's bot (github-actions[bot] on GitHub)."""
    commit_email: str | None = None
    """Commit author e-mail; None uses the platform bot's no-reply address."""
    bot_login: str = Field(default="github-actions[bot]", min_length=1)
    """GitHub: the account planner's token posts as — github-actions[bot] for the workflow's
    token, `<app-slug>[bot]` for a GitHub App token, your login for a personal access token.
    Only its comments count as planner's own (the tracking comment and its run log). GitLab
    asks the API whose GITLAB_TOKEN it is instead."""
    api_max_retries: int = Field(default=5, ge=0)
    """Retries of a forge API request on 5xx, 429 and secondary rate limits."""
    api_max_wait_seconds: float = Field(default=60.0, ge=0)
    """Upper bound of one wait between retries; a longer rate-limit reset is an error."""
    label_interactive: str = Field(default="planner:interactive", min_length=1)
    """Adding this label starts an interactive planning session (discovery -> design -> review)
    on the issue instead of planning straight away."""
    lease_seconds: float = Field(default=90.0, gt=0)
    """How long a run's lease on its issue (the ref refs/planner/issues/<N>) lasts unless
    renewed: a living run renews it every third of this time, so the lease of a run that died
    (runner lost, killed) expires within this time and the next event takes it over."""
    lease_wait_seconds: float | None = Field(default=None, gt=0)
    """How long an event waits for a living run that holds the issue's lease before it gives
    up and says so. None: budget.max_wall_seconds plus 60 seconds (a run's longest life)."""


class ReviewConfig(Section):
    """review — a review of planner's own pull request (GitHub review comments, GitLab diff
    notes): the next pass makes each open thread a task, applies suggestions as written, and
    answers (and, when the change is committed with the tests passing, resolves) each thread.
    See docs/github.md, "Reviews of planner's pull request"."""

    act_on_changes_requested: bool = False
    """GitHub: every "Request changes" review of planner's pull request by someone with write
    access starts a pass, with or without the trigger phrase. False: a review starts one only
    when its text or one of its comments contains forge.trigger_phrase. GitLab has no such
    review state in its events; a diff note there needs the phrase."""


class InteractiveConfig(Section):
    """interactive — planning sessions with the people on the issue before any pass
    (seeds/interactive-planning.md, ADR-021)."""

    enabled: bool = False
    """Every triggered issue without a session starts one (otherwise only the label
    forge.label_interactive or `/planner plan <instruction>` does)."""
    question_timeout_minutes: float = Field(default=5, ge=0)
    """Questions still open this long after the session's last activity are recorded as
    skipped (answer null) by the next event or the scheduled sweep."""


RiskLevel = Literal["low", "medium", "high"]
BULK_APPROVED: tuple[RiskLevel, ...] = ("low", "medium")


class ApprovalConfig(Section):
    """The approval gate: which action specs run without a person."""

    mode: Literal["risky", "plan", "off"] = "risky"
    """risky: pause only at specs that need a person; plan: a person approves the whole plan's
    specs before anything runs; off: no gate except for high risk."""
    auto_approve: list[RiskLevel] = Field(default_factory=lambda: list(BULK_APPROVED))
    """Risk levels approved in bulk without a person (risky mode). high always needs a person."""
    large_file_bytes: int = Field(default=100_000, ge=1)
    """Overwriting or deleting a file at least this large is high risk; a write that keeps 90% of
    its lines, in order, is an edit of it (medium)."""
    max_spec_bytes: int = Field(default=1_000_000, ge=1)
    """A spec whose content is larger is refused."""
    forbidden_extensions: list[str] = Field(
        default_factory=lambda: [".exe", ".dll", ".so", ".dylib", ".pem", ".key", ".p12", ".jks"]
    )
    """File endings no spec may write (compared case-insensitively)."""

    @field_validator("auto_approve")
    @classmethod
    def _no_bulk_high(cls, levels: list[str]) -> list[str]:
        if "high" in levels:
            raise ValueError("high risk always needs a person; allowed: low, medium")
        return levels


TEST_PATHS = (
    "test_*.py", "*_test.py", "tests/*", "test/*", "*/tests/*", "*/test/*",
    "*.test.*", "*.spec.*", "*_test.go", "__tests__/*", "*/__tests__/*",
)  # fmt: skip
"""The default verification.test_paths."""


class VerificationConfig(Section):
    """verification — the repository's tests, run before the model acts (the baseline) and
    after each task that changed files; new failures go back to the model (issue 23). Not a
    seed key. See docs/verification.md."""

    enabled: Literal["auto", "on", "off"] = "auto"
    """auto: run `command`, or the test command detected from the repository's files (pytest
    or unittest, `npm test`, `go test ./...`, `cargo test`, `make test`), and say plainly when
    none was found; on: the same, but a repository without a test command is a configuration
    error; off: never run tests (the pass result says the tests were not run)."""
    command: str | None = None
    """The test command, written as a command line (`python -m pytest -q`); split like a
    shell would, never run by one. None: detected."""
    setup: str | None = None
    """Installs what the tests need (`pip install -e .[test]`, `npm ci`), once per issue before
    the baseline, with the runner's network and without any token in its environment. None:
    detected (requirements*.txt, pyproject.toml extras named test or dev, package-lock.json).
    Python packages go into a virtual environment of the verification's own, never planner's."""
    detect_setup: bool = True
    """Detect a setup command when `setup` is not set; false runs none."""
    timeout_seconds: float = Field(default=600.0, gt=0)
    """The test command is killed, with everything it started, after this many seconds; the
    run is recorded as timed out and the pass goes on."""
    setup_timeout_seconds: float = Field(default=900.0, gt=0)
    """The same for the setup command."""
    max_output_bytes: int = Field(default=200_000, ge=1_000)
    """Output kept per stream of one run (cut in the middle beyond this); what the model is
    shown of it is cut further to max_feedback_chars."""
    max_feedback_chars: int = Field(default=3_000, ge=200)
    """The tail of a failing run's output shown to the model with the failing test names."""
    max_repair_attempts: int = Field(default=2, ge=0)
    """Repair tasks planner adds when the work leaves tests failing that passed at the
    baseline (or that it added); when they are spent the next attempt starts (attempts), or
    the pass ends needs_human with a draft pull request. The small_model profile sets 1."""
    issue_test: bool = True
    """In a Python repository (pytest, unittest or no tests at all): before the change, the
    model writes a pytest test of what the issue states (one model call per issue). Used only
    when it fails on the code before the change; it runs with the tests, its failures go back
    to the model like theirs, and it is added to the pull request once it passes. A pass whose
    issue test still fails ends needs_human with a draft pull request."""
    test_paths: list[str] = Field(default_factory=lambda: list(TEST_PATHS))
    """fnmatch patterns of test files; the pull request lists those the model changed."""
    attempts: int = Field(default=1, ge=1, le=10)
    """Attempts at the issue in one pass. When an attempt ends with the issue's test failing or
    tests failing that passed before (its repair tasks spent), the working tree goes back to
    the code before the change and the model tries again from the start, told what the
    earlier attempts failed on and sampling differently (at temperature 0.5 at least). The
    first attempt whose tests pass wins; the pull request says which and what the others
    failed on. Attempts share the pass's budgets. The small_model profile sets 3."""
    candidates: int = Field(default=0, ge=0, le=20)
    """Candidate fixes asked for before the first task, once per issue, where the issue's test
    fails on the code before the change: each is one model call that writes back one of the
    definitions the issue points to (a few of them in turn; after the first round, sampling
    warmer), tried with the issue's test and the tests of the changed file, and taken back. The
    first whose tests pass becomes the task's work (written like any change); when none does,
    the task runs as usual. 0: none. The small_model profile sets 6."""
    mutants: int = Field(default=0, ge=0, le=500)
    """Mechanical candidate fixes tried at most, before the model's candidates: the exception
    the issue's test fails with added to an `except` clause it reached that catches others,
    then one token changed in a line of the located definitions that the issue's test ran
    (`<` to `<=`, `1` to `-1`, `and` to `or`, a `not` taken away, …), then a call changed to
    its dual (`iter` to `reversed`, `min` to `max`, …) or two operands swapped (`a - b` to
    `b - a`); each judged like a candidate by the issue's test and the tests of the changed
    file, and the first whose tests all pass becomes the task's work. No model call. 0:
    none. The small_model profile sets 60."""
    index_url: str | None = None
    """The package index pip uses in the verification's environment (pip's --index-url), for
    the setup and for what planner installs when pytest is missing. None: pip's own default."""
    find_links: list[str] = Field(default_factory=list)
    """Folders or pages of packages pip looks in first (pip's --find-links), in the same
    environment. Set without index_url, pip uses these alone (no index): a runner without
    network installs pytest from a folder of wheels."""

    @field_validator("command", "setup")
    @classmethod
    def _splits(cls, line: str | None) -> str | None:
        if line is None:
            return None
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise ValueError(f"{line!r} cannot be split: {exc}") from None
        if not words:
            raise ValueError("empty; leave it unset to detect the command")
        return line


class PlannerConfig(Section):
    """The whole configuration file."""

    profile: Literal["auto", "standard", "small_model"] = "auto"
    """Defaults for a kind of model; any key set in the file, the environment or an input wins.
    auto picks small_model when llm.model's name gives a size of at most 8 billion parameters
    (`qwen2.5-coder:7b`, `Qwen2.5-Coder-1.5B-Instruct`, `smollm2:360m`) or, for a name that
    gives none, when an endpoint other than OpenAI's says so as a run starts (llama.cpp's
    model list, Ollama's model tags), else standard; once loaded, this key holds the profile
    picked. standard leaves every default as it is.
    small_model, for local models of a few billion parameters: llm.tool_calling auto,
    llm.temperature 0 (the most likely reply; after a reply repeated word for word, cut off at
    the output limit or unusable, the next call samples at 0.7), llm.max_output_tokens 2048,
    llm.stop_repeating true,
    llm.timeout_seconds 900, llm.max_retries 1, planning.refinement.enabled false (a small
    model judging finished work rejects correct fixes and asks for follow-up work that undoes
    them), planning.exploration.mode off (a 1.5B model's findings read as facts to the plan:
    "LRUCache is deprecated and should be replaced by MRUCache" turned an eviction bug into a
    plan to delete the class; the functions the issue points to are shown to each task
    instead), planning.decompose false (the plan is the issue as one task, with no planning
    call and no plan review) and verification.attempts 3 (an unproven fix is tried again from
    the start)."""
    planning: PlanningConfig = Field(default_factory=PlanningConfig)
    """Planning process (seed keys)."""
    llm: LLMConfig = Field(default_factory=LLMConfig)
    """Model endpoint."""
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    """Per-pass limits."""
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    """Workspace tools and MCP servers."""
    forge: ForgeConfig = Field(default_factory=ForgeConfig)
    """GitHub/GitLab/local triggers, labels, branch and pull request settings."""
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    """Reviews of planner's pull request: threads become tasks, replies, resolved threads."""
    interactive: InteractiveConfig = Field(default_factory=InteractiveConfig)
    """Interactive planning sessions (discovery, design, review) before the pass."""
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig)
    """The approval gate: which writes and commands need a person."""
    verification: VerificationConfig = Field(default_factory=VerificationConfig)
    """The repository's tests: baseline, runs after changes, repair attempts."""


PROFILES: dict[str, dict[str, Any]] = {
    "standard": {},
    "small_model": {
        "llm.tool_calling": "auto",
        "llm.temperature": 0.0,
        "llm.max_output_tokens": 2048,
        "llm.stop_repeating": True,
        "llm.timeout_seconds": 900,
        "llm.max_retries": 1,
        "planning.refinement.enabled": False,
        "planning.exploration.mode": "off",
        "planning.decompose": False,
        "verification.attempts": 3,
        "verification.max_repair_attempts": 1,
        "verification.candidates": 6,
        "verification.mutants": 60,
    },
}
"""The keys each `profile` sets when no source sets them."""


def profile_settings(config: PlannerConfig) -> list[str]:
    """`key value` for each key of the profile in effect that holds the profile's value: what
    the profile changed (for the job summary)."""
    shown = []
    for key, value in PROFILES.get(config.profile, {}).items():
        held: Any = config
        for part in key.split("."):
            held = getattr(held, part, None)
        if held == value:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            shown.append(f"{key} {text}")
    return shown


ENV_KEYS: dict[str, str] = {
    "PLANNER_PROFILE": "profile",
    "PLANNING_ENABLED": "planning.enabled",
    "PLANNING_STRATEGY": "planning.strategy",
    "PLANNING_MAX_SUBTASKS": "planning.max_subtasks",
    "REFLECTION_ENABLED": "planning.reflection.enabled",
    "REFLECTION_INTERVAL": "planning.reflection.trigger_interval",
    "MAX_PLAN_REVISIONS": "planning.revision.max_revisions",
    "REPLANNING_ENABLED": "planning.replanning.enabled",
    "REPLANNING_MIN_CONFIDENCE": "planning.replanning.llm_decision.min_confidence_threshold",
    "MAX_TOTAL_REPLANS": "planning.replanning.global.max_total_replans",
    "REPOSITORY_MAP_ENABLED": "planning.repository_map.enabled",
    "REPOSITORY_MAP_MAX_TOKENS": "planning.repository_map.max_tokens",
    "EXPLORATION_MODE": "planning.exploration.mode",
    "REFINEMENT_ENABLED": "planning.refinement.enabled",
    "MAX_REFINEMENT_ATTEMPTS": "planning.refinement.max_refinement_attempts",
    "MAX_QUALITY_RETRIES": "planning.refinement.max_quality_retries",
    "APPROVAL_MODE": "approval.mode",
    "OPENAI_MODEL": "llm.model",
    "OPENAI_BASE_URL": "llm.base_url",
    "OPENAI_API_KEY": "llm.api_key",
    "INTERACTIVE_ENABLED": "interactive.enabled",
    "INTERACTIVE_QUESTION_TIMEOUT_MINUTES": "interactive.question_timeout_minutes",
    "LLM_TOOL_CALLING": "llm.tool_calling",
    "LLM_EDIT_FORMAT": "llm.edit_format",
    "VERIFICATION_ENABLED": "verification.enabled",
    "VERIFICATION_COMMAND": "verification.command",
    "VERIFICATION_SETUP": "verification.setup",
    "VERIFICATION_DETECT_SETUP": "verification.detect_setup",
    "VERIFICATION_TIMEOUT_SECONDS": "verification.timeout_seconds",
    "VERIFICATION_MAX_REPAIR_ATTEMPTS": "verification.max_repair_attempts",
    "VERIFICATION_ATTEMPTS": "verification.attempts",
    "VERIFICATION_CANDIDATES": "verification.candidates",
    "VERIFICATION_MUTANTS": "verification.mutants",
}
"""Environment variables and the key each one sets."""

SECRET_KEYS = frozenset({"llm.api_key"})


ServedModels = Mapping[str, "float | None"]
"""What an endpoint lists: each model's name and its size in billions of parameters, where
the endpoint gives one."""
ServedModel = Callable[["LLMConfig"], "ServedModels | None"]
"""Asks an endpoint which models it serves (planner.model.llm.served_model); None when it
does not answer."""
SERVED_MODELS_SHOWN = 10


def load_config(
    config_file: Path | None,
    *,
    env: Mapping[str, str],
    overrides: Mapping[str, Any] | None = None,
    required_file: bool = False,
    served_model: ServedModel | None = None,
) -> PlannerConfig:
    """Merge every source and validate once; raise ConfigError listing every problem.
    `served_model`, given where a pass is about to start: an endpoint other than OpenAI's is
    asked for its model when no source names one, and for the model's size when profile auto
    cannot tell it from the name."""
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if config_file is not None:
        _merge_file(merged, sources, config_file, required_file)
    env_values = {key: env[name] for name, key in ENV_KEYS.items() if env.get(name, "") != ""}
    _merge_flat(merged, sources, env_values, _env_source)
    _merge_flat(merged, sources, dict(overrides or {}), lambda key: "explicit input")
    size = _merge_served_model(merged, sources, served_model) if served_model else None
    _merge_profile(merged, sources, size)
    try:
        return PlannerConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, sources)) from None


def _merge_served_model(
    merged: dict[str, Any], sources: dict[str, str], served_model: ServedModel
) -> float | None:
    """llm.model, when no source sets it, for an endpoint other than OpenAI's: the model the
    endpoint serves (a model name for OpenAI's default means nothing to llama.cpp or vLLM).
    Returns the model's size as the endpoint gives it, when profile auto needs it."""
    endpoint = _local_endpoint(merged)
    named = "llm.model" in sources
    if endpoint is None or (named and not _size_unknown(merged)):
        return None
    listed = served_model(endpoint)
    if not listed:
        return None
    if not named:
        model = _served_choice(listed, endpoint.base_url or "")
        if model is None:
            return None
        source = f"the model {endpoint.base_url} serves"
        _merge_flat(merged, sources, {"llm.model": model}, lambda key: source)
    return listed.get(_model_named(merged))


def _local_endpoint(merged: Mapping[str, Any]) -> LLMConfig | None:
    """The llm section, when it names an endpoint other than OpenAI's."""
    section = merged.get("llm")
    if not isinstance(section, dict) or not section.get("base_url"):
        return None
    try:
        endpoint = LLMConfig.model_validate(section)
    except ValidationError:
        return None  # the validation of the whole file reports it
    hostname = urlsplit(endpoint.base_url or "").hostname
    return None if hostname == "api.openai.com" else endpoint


def _size_unknown(merged: Mapping[str, Any]) -> bool:
    """Profile auto is to pick, and the model's name gives no size."""
    return merged.get("profile", "auto") == "auto" and not sizes_in_name(_model_named(merged))


def _served_choice(listed: ServedModels, base_url: str) -> str | None:
    """The one model listed; None when the default is among several (a proxy that routes
    it); ConfigError when several others are, since which one is the maintainer's choice."""
    names = sorted(listed)
    if len(names) > 1 and DEFAULT_MODEL not in names:
        more = len(names) - SERVED_MODELS_SHOWN
        shown = ", ".join(names[:SERVED_MODELS_SHOWN]) + (f" and {more} more" if more > 0 else "")
        raise ConfigError(
            f"llm.model is not set and {base_url} serves {len(names)} models ({shown}): name "
            "one in llm.model, the environment variable OPENAI_MODEL or the action's input model"
        )
    return names[0] if len(names) == 1 else None


def _merge_profile(merged: dict[str, Any], sources: dict[str, str], size: float | None) -> None:
    """The chosen profile's keys, where no source set them (an unknown profile is left for
    validation to report). `size`: the model's, as its endpoint gives it."""
    profile = merged.get("profile", "auto")
    if profile == "auto":
        profile = merged["profile"] = _profile_for(_model_named(merged), size)
    chosen = PROFILES.get(profile, {}) if isinstance(profile, str) else {}
    unset = {key: value for key, value in chosen.items() if key not in sources}
    _merge_flat(merged, sources, unset, lambda key: f"profile {profile}")


SMALL_MODEL_BILLIONS = 8.0
"""The largest size, in billions of parameters, that profile auto treats as a small model."""

# A size in a model's name: `7b`, `1.5B`, `360m`; not the `7b` of a mixture such as `8x7b`.
_MODEL_SIZE = re.compile(r"(?<![\w.])[a-z]?(\d+(?:\.\d+)?)([bm])(?![a-z0-9])", re.IGNORECASE)


def _model_named(merged: Mapping[str, Any]) -> str:
    llm = merged.get("llm")
    model = llm.get("model") if isinstance(llm, Mapping) else None
    return model if isinstance(model, str) else DEFAULT_MODEL


def _profile_for(model: str, size: float | None = None) -> str:
    """small_model for a model whose name gives a size of at most SMALL_MODEL_BILLIONS (a name
    with several sizes, `qwen3-30b-a3b`: 30B, 3B active, counts its largest), or whose
    endpoint gives such a size for a name that gives none."""
    sizes = sizes_in_name(model) or ([size] if size else [])
    return "small_model" if sizes and max(sizes) <= SMALL_MODEL_BILLIONS else "standard"


def sizes_in_name(model: str) -> list[float]:
    """The sizes a model's name (or a size such as Ollama's `3.2B`) gives, in billions of
    parameters."""
    return [
        float(number) / (1000 if unit.lower() == "m" else 1)
        for number, unit in _MODEL_SIZE.findall(model)
    ]


def _env_source(key: str) -> str:
    name = next(name for name, target in ENV_KEYS.items() if target == key)
    return f"environment variable {name}"


def _merge_file(
    merged: dict[str, Any], sources: dict[str, str], path: Path, required: bool
) -> None:
    if not path.is_file():
        if required:
            raise ConfigError(f"config file {path} does not exist")
        return
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if loaded is None:
        return
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping, not {type(loaded).__name__}")
    merged.update(loaded)
    for key in _leaf_paths(loaded):
        sources[key] = f"config file {path}"


def _leaf_paths(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        paths.extend(_leaf_paths(value, path + ".") if isinstance(value, dict) else [path])
    return paths


def _merge_flat(
    merged: dict[str, Any], sources: dict[str, str], flat: Mapping[str, Any], source_of: Any
) -> None:
    """Set dotted keys (`budget.max_actions`) into the nested mapping."""
    for dotted, value in flat.items():
        node = merged
        *parents, leaf = dotted.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
        sources[dotted] = source_of(dotted)


def _describe(exc: ValidationError, sources: Mapping[str, str]) -> str:
    lines = [f"invalid configuration ({exc.error_count()} problem(s)):"]
    for error in exc.errors():
        path = ".".join(str(part) for part in error["loc"])
        value = "***" if path in SECRET_KEYS else repr(error.get("input"))
        allowed = (
            _allowed_keys(error["loc"]) if error["type"] == "extra_forbidden" else error["msg"]
        )
        origin = sources.get(path) or _sources_below(sources, path)
        lines.append(f"  - {path} = {value} (from {origin}): {allowed}")
    return "\n".join(lines)


def _sources_below(sources: Mapping[str, str], path: str) -> str:
    """Where the keys inside a section came from (for errors about a whole section)."""
    below = sorted({origin for key, origin in sources.items() if key.startswith(path + ".")})
    return "; ".join(below) or "defaults"


def _allowed_keys(loc: tuple[int | str, ...]) -> str:
    model: type[BaseModel] = PlannerConfig
    for part in loc[:-1]:
        field = _field_named(model, str(part))
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            break
        model = annotation
    names = sorted(field.alias or name for name, field in model.model_fields.items())
    closest = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    hint = f"did you mean {closest[0]}? " if closest else ""
    return f"unknown key; {hint}allowed here: {', '.join(names)}"


def _field_named(model: type[BaseModel], key: str) -> Any:
    """The field a config key names (a YAML key may be a field's alias, e.g. `global`)."""
    return next(
        (f for name, f in model.model_fields.items() if key in (name, f.alias)),
        None,
    )
