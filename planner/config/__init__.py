"""Configuration: one pydantic model per section, loaded with a fixed precedence.

defaults < YAML file (default `.github/planner.yml` in the target repo) < environment < explicit
inputs (CLI flags / action inputs). Every problem is reported at once, naming the key path, the
offending value, where it came from and what is allowed — before anything has side effects.

One module per top-level section (`planning.py`, `llm.py`, `budget.py`, `tools.py`, `forge.py`,
`review.py`, `interactive.py`, `approval.py`, `verification.py`), the root model (`root.py`),
the profiles (`profiles.py`) and loading (`loading.py`); this package's face names them all.
"""

from planner.config.approval import BULK_APPROVED, ApprovalConfig, RiskLevel
from planner.config.base import Section
from planner.config.budget import BudgetConfig
from planner.config.forge import BRANCH_PREFIX_PATTERN, ForgeConfig
from planner.config.interactive import InteractiveConfig
from planner.config.llm import DEFAULT_MODEL, LLMConfig, ModelPrice
from planner.config.loading import (
    DEFAULT_CONFIG_PATH,
    ENV_KEYS,
    SECRET_KEYS,
    SERVED_MODELS_SHOWN,
    ServedModel,
    ServedModels,
    load_config,
)
from planner.config.planning import (
    ActionSequenceReplanConfig,
    DecompositionReplanConfig,
    ExecutionReplanConfig,
    ExplorationConfig,
    GlobalReplanConfig,
    GoalReplanConfig,
    HistoryConfig,
    LLMDecisionConfig,
    PlanningConfig,
    RefinementConfig,
    ReflectionConfig,
    ReflectionReplanConfig,
    ReplanningConfig,
    RepositoryMapConfig,
    RevisionConfig,
    TaskContextConfig,
)
from planner.config.profiles import PROFILES, SMALL_MODEL_BILLIONS, profile_settings, sizes_in_name
from planner.config.review import ReviewConfig
from planner.config.root import PlannerConfig
from planner.config.tools import McpServerConfig, ToolsConfig
from planner.config.verification import TEST_PATHS, VerificationConfig

__all__ = [
    "BRANCH_PREFIX_PATTERN",
    "BULK_APPROVED",
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_MODEL",
    "ENV_KEYS",
    "PROFILES",
    "SECRET_KEYS",
    "SERVED_MODELS_SHOWN",
    "SMALL_MODEL_BILLIONS",
    "TEST_PATHS",
    "ActionSequenceReplanConfig",
    "ApprovalConfig",
    "BudgetConfig",
    "DecompositionReplanConfig",
    "ExecutionReplanConfig",
    "ExplorationConfig",
    "ForgeConfig",
    "GlobalReplanConfig",
    "GoalReplanConfig",
    "HistoryConfig",
    "InteractiveConfig",
    "LLMConfig",
    "LLMDecisionConfig",
    "McpServerConfig",
    "ModelPrice",
    "PlannerConfig",
    "PlanningConfig",
    "RefinementConfig",
    "ReflectionConfig",
    "ReflectionReplanConfig",
    "ReplanningConfig",
    "RepositoryMapConfig",
    "ReviewConfig",
    "RevisionConfig",
    "RiskLevel",
    "Section",
    "ServedModel",
    "ServedModels",
    "TaskContextConfig",
    "ToolsConfig",
    "VerificationConfig",
    "load_config",
    "profile_settings",
    "sizes_in_name",
]
