"""Loading the configuration: every source merged with a fixed precedence, validated once.

defaults < YAML file (default `.github/planner.yml` in the target repo) < environment < explicit
inputs (CLI flags / action inputs). Every problem is reported at once, naming the key path, the
offending value, where it came from and what is allowed — before anything has side effects.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ValidationError

from planner.config.llm import DEFAULT_MODEL, LLMConfig
from planner.config.profiles import PROFILES, profile_for, sizes_in_name
from planner.config.root import PlannerConfig
from planner.core.errors import ConfigError

DEFAULT_CONFIG_PATH = ".github/planner.yml"


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
        profile = merged["profile"] = profile_for(_model_named(merged), size)
    chosen = PROFILES.get(profile, {}) if isinstance(profile, str) else {}
    unset = {key: value for key, value in chosen.items() if key not in sources}
    _merge_flat(merged, sources, unset, lambda key: f"profile {profile}")


def _model_named(merged: Mapping[str, Any]) -> str:
    llm = merged.get("llm")
    model = llm.get("model") if isinstance(llm, Mapping) else None
    return model if isinstance(model, str) else DEFAULT_MODEL


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
