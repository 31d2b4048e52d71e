"""The action's inputs as the runner passes them, and the configuration they make.

The runner gives a Docker action each input as INPUT_<NAME> (upper-cased, spaces replaced by
underscores), filled with action.yml's default when the workflow does not set it. An empty value
means "not set": the config file's value is used, else the built-in default. Precedence:
defaults < config file (input config_path) < environment (OPENAI_*, ...) < inputs.

Standard library only at import time: this runs before the skip decision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.core.errors import ConfigError

if TYPE_CHECKING:
    from planner.config import PlannerConfig, ServedModel

INPUT_NAMES = (
    "github_token",
    "openai_api_key",
    "openai_base_url",
    "model",
    "trigger_label",
    "trigger_phrase",
    "config_path",
    "history_dir",
    "history_backend",
    "max_actions",
    "max_model_calls",
    "max_tokens",
    "max_minutes",
    "branch_prefix",
    "draft_pr",
    "allowed_users",
    "allowed_bots",
    "verification_command",
    "verification_setup",
)
TEXT_KEYS = {
    "model": "llm.model",
    "openai_base_url": "llm.base_url",
    "openai_api_key": "llm.api_key",
    "trigger_label": "forge.trigger_label",
    "trigger_phrase": "forge.trigger_phrase",
    "branch_prefix": "forge.branch_prefix",
    "history_dir": "planning.history.directory",
    "verification_command": "verification.command",
    "verification_setup": "verification.setup",
}
WHOLE_NUMBER_KEYS = {
    "max_actions": "budget.max_actions",
    "max_model_calls": "budget.max_model_calls",
    "max_tokens": "budget.max_total_tokens",
}
INPUT_KEYS = {
    **TEXT_KEYS,
    **WHOLE_NUMBER_KEYS,
    "max_minutes": "budget.max_wall_seconds",
    "draft_pr": "forge.draft_pr",
    "allowed_users": "forge.allowed_users",
    "allowed_bots": "forge.allowed_bots",
}
"""Every input that sets a config key (allowed_users and allowed_bots add to the file's list)."""
BACKENDS = ("cache", "artifact")
DEFAULT_CONFIG_PATH = ".github/planner.yml"
BOOLEANS = {"true": True, "false": False}
LIST_SEPARATORS = re.compile(r"[,\n]")


def input_variable(name: str) -> str:
    """The variable the runner sets for input `name`."""
    return "INPUT_" + name.replace(" ", "_").upper()


def read_inputs(env: Mapping[str, str]) -> dict[str, str]:
    """Every input of action.yml, trimmed; '' when not set."""
    return {name: env.get(input_variable(name), "").strip() for name in INPUT_NAMES}


def split_names(text: str) -> list[str]:
    """Comma- or newline-separated logins ('@' optional)."""
    return [part.strip().lstrip("@") for part in LIST_SEPARATORS.split(text) if part.strip()]


@dataclass
class Settings:
    """What the inputs say, checked: config overrides and the parts config cannot hold."""

    overrides: dict[str, Any]
    allowed_users: list[str]
    allowed_bots: list[str]
    config_path: str
    history_backend: str


def settings_from(inputs: Mapping[str, str]) -> Settings:
    """Check every input at once; a ConfigError lists all the problems."""
    problems: list[str] = []
    overrides: dict[str, Any] = {
        key: inputs[name] for name, key in TEXT_KEYS.items() if inputs[name]
    }
    for name, key in WHOLE_NUMBER_KEYS.items():
        if inputs[name]:
            overrides[key] = _whole_number(name, inputs[name], problems)
    if inputs["max_minutes"]:
        overrides["budget.max_wall_seconds"] = _minutes(inputs["max_minutes"], problems)
    if inputs["draft_pr"]:
        overrides["forge.draft_pr"] = _boolean("draft_pr", inputs["draft_pr"], problems)
    backend = inputs["history_backend"] or "cache"
    if backend not in BACKENDS:
        problems.append(f"input history_backend = {backend!r}: must be cache or artifact")
    if problems:
        raise ConfigError("invalid action inputs:\n" + "\n".join(f"  - {p}" for p in problems))
    return Settings(
        overrides={k: v for k, v in overrides.items() if v is not None},
        allowed_users=split_names(inputs["allowed_users"]),
        allowed_bots=split_names(inputs["allowed_bots"]),
        config_path=inputs["config_path"] or DEFAULT_CONFIG_PATH,
        history_backend=backend,
    )


def _whole_number(name: str, text: str, problems: list[str]) -> int | None:
    if re.fullmatch(r"\d+", text):
        return int(text)
    problems.append(f"input {name} = {text!r}: must be a whole number")
    return None


def _minutes(text: str, problems: list[str]) -> float | None:
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if minutes > 0 and minutes != float("inf"):
        return minutes * 60
    problems.append(f"input max_minutes = {text!r}: must be a positive number of minutes")
    return None


def _boolean(name: str, text: str, problems: list[str]) -> bool | None:
    value = BOOLEANS.get(text.lower())
    if value is None:
        problems.append(f"input {name} = {text!r}: must be true or false")
    return value


def load_action_config(
    settings: Settings,
    workspace: Path,
    env: Mapping[str, str],
    served_model: ServedModel | None = None,
) -> PlannerConfig:
    """defaults < the config file < environment < inputs; the allowed lists add to the file's.
    `served_model`: see load_config (only once the event is known to start a pass)."""
    from planner.config import load_config

    path = workspace / settings.config_path
    config = load_config(
        path,
        env=env,
        overrides=settings.overrides,
        required_file=settings.config_path != DEFAULT_CONFIG_PATH,
        served_model=served_model,
    )
    forge = config.forge
    forge.allowed_users = [*forge.allowed_users, *settings.allowed_users]
    forge.allowed_bots = [*forge.allowed_bots, *settings.allowed_bots]
    return config


def secret_values(inputs: Mapping[str, str], env: Mapping[str, str]) -> list[str]:
    """Values to mask before anything is printed."""
    names = ("GITLAB_TOKEN", "GITHUB_TOKEN", "OPENAI_API_KEY")
    values = [inputs["github_token"], inputs["openai_api_key"], *(env.get(n, "") for n in names)]
    return [value for value in dict.fromkeys(values) if value]
