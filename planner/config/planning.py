"""planning — the five-phase planning process and every sub-section of it (seed:
planning-process.md §9.1, replanning.md §12, task-refinement.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from planner.config.base import Section


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
