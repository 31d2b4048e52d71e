"""The whole configuration file: the root model holding every section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.config.approval import ApprovalConfig
from planner.config.base import Section
from planner.config.budget import BudgetConfig
from planner.config.forge import ForgeConfig
from planner.config.interactive import InteractiveConfig
from planner.config.llm import LLMConfig
from planner.config.planning import PlanningConfig
from planner.config.review import ReviewConfig
from planner.config.tools import ToolsConfig
from planner.config.verification import VerificationConfig


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
