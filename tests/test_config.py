"""Config precedence (defaults < file < env < explicit) and every kind of error."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.config import PlannerConfig, load_config
from planner.core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_match_the_seed() -> None:
    planning = load_config(None, env={}).planning
    assert (planning.enabled, planning.strategy, planning.max_subtasks) == (
        True,
        "chain_of_thought",
        100,
    )
    assert planning.decomposition_level == "moderate"
    assert planning.reflection.model_dump() == {
        "enabled": True,
        "trigger_on_error": True,
        "trigger_interval": 3,
        "depth": "moderate",
    }
    assert planning.revision.max_revisions == 3
    assert planning.history.model_dump() == {
        "storage_type": "jsonl",
        "directory": "planning_history",
        "retention_days": 90,  # planning-process.md §11.1
    }


def test_missing_default_file_means_defaults(tmp_path: Path) -> None:
    # Loaded, profile auto names the profile it picked: the default model has no size.
    assert load_config(tmp_path / "absent.yml", env={}) == PlannerConfig(profile="standard")


def test_explicit_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.yml", env={}, required_file=True)


def test_precedence_defaults_file_env_explicit(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "planning:\n  max_subtasks: 10\n  reflection:\n    trigger_interval: 5\n"
        "  revision:\n    max_revisions: 7\n",
    )
    env = {"REFLECTION_INTERVAL": "2", "MAX_PLAN_REVISIONS": "4"}
    config = load_config(path, env=env, overrides={"planning.revision.max_revisions": 1})
    assert config.planning.max_subtasks == 10  # file beats default
    assert config.planning.reflection.trigger_interval == 2  # env beats file
    assert config.planning.revision.max_revisions == 1  # explicit beats env
    assert config.planning.reflection.trigger_on_error is True  # untouched default survives


@pytest.mark.parametrize(
    ("name", "value", "path", "expected"),
    [
        ("PLANNING_ENABLED", "false", ("planning", "enabled"), False),
        ("PLANNING_STRATEGY", "hierarchical", ("planning", "strategy"), "hierarchical"),
        ("PLANNING_MAX_SUBTASKS", "12", ("planning", "max_subtasks"), 12),
        ("REFLECTION_ENABLED", "0", ("planning", "reflection", "enabled"), False),
        ("REFLECTION_INTERVAL", "0", ("planning", "reflection", "trigger_interval"), 0),
        ("MAX_PLAN_REVISIONS", "9", ("planning", "revision", "max_revisions"), 9),
        ("OPENAI_MODEL", "llama3", ("llm", "model"), "llama3"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", ("llm", "base_url"), "http://127.0.0.1:9/v1"),
    ],
)
def test_each_seed_env_var(name: str, value: str, path: tuple[str, ...], expected: object) -> None:
    node: object = load_config(None, env={name: value})
    for part in path:
        node = getattr(node, part)
    assert node == expected


def test_empty_env_values_are_ignored() -> None:
    """Actions pass unset inputs as empty strings; they must not override anything."""
    assert load_config(None, env={"PLANNING_MAX_SUBTASKS": ""}).planning.max_subtasks == 100


def test_bad_env_value_names_variable_key_and_allowed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, env={"PLANNING_STRATEGY": "random"})
    message = str(caught.value)
    assert "planning.strategy = 'random'" in message
    assert "environment variable PLANNING_STRATEGY" in message
    assert "'chain_of_thought', 'hierarchical' or 'simple'" in message


def test_unknown_key_lists_allowed_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "planning:\n  reflection:\n    intervall: 3\n"), env={})
    message = str(caught.value)
    assert "planning.reflection.intervall = 3" in message
    assert "allowed here: depth, enabled, trigger_interval, trigger_on_error" in message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, "planning:\n  max_subtasks: 0\n  decomposition_level: huge\nbogus: 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={"REFLECTION_INTERVAL": "-2"})
    message = str(caught.value)
    assert message.startswith("invalid configuration (4 problem(s))")
    for key in (
        "planning.max_subtasks",
        "planning.decomposition_level",
        "bogus",
        "planning.reflection.trigger_interval",
    ):
        assert key in message


def test_api_key_value_is_never_echoed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "llm:\n  api_key: [sk-secret-value]\n"), env={})
    assert "sk-secret-value" not in str(caught.value)
    assert "llm.api_key = ***" in str(caught.value)


@pytest.mark.parametrize("text", ["planning: [1, 2\n", "- a list\n", "\tbad: indent\n"])
def test_malformed_yaml_is_a_config_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="config file"):
        load_config(write(tmp_path, text), env={})


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "# nothing\n"), env={}) == PlannerConfig(profile="standard")


# -- profiles ----------------------------------------------------------------------------------


def test_the_small_model_profile_sets_its_keys(tmp_path: Path) -> None:
    file = tmp_path / "planner.yml"
    file.write_text("profile: small_model\n", encoding="utf-8")
    config = load_config(file, env={})
    assert config.profile == "small_model"
    assert config.llm.tool_calling == "auto" and config.llm.max_output_tokens == 2048
    assert config.llm.timeout_seconds == 900 and config.llm.max_retries == 1
    assert config.planning.refinement.enabled is False
    assert config.llm.temperature == 0
    assert config.planning.decompose is False and config.planning.exploration.mode == "off"
    assert config.verification.attempts == 3 and config.verification.max_repair_attempts == 1
    standard = load_config(None, env={})
    assert standard.planning.refinement.enabled is True
    assert standard.planning.decompose is True and standard.planning.exploration.mode == "auto"
    assert standard.llm.temperature is None  # the provider's default


def test_a_key_set_anywhere_wins_over_the_profile(tmp_path: Path) -> None:
    file = tmp_path / "planner.yml"
    file.write_text(
        "profile: small_model\nplanning:\n  refinement:\n    enabled: true\n", encoding="utf-8"
    )
    config = load_config(file, env={"LLM_TOOL_CALLING": "native"}, overrides={"llm.max_retries": 3})
    assert config.planning.refinement.enabled is True
    assert config.llm.tool_calling == "native" and config.llm.max_retries == 3
    assert config.llm.max_output_tokens == 2048  # the rest still comes from the profile


def test_the_profile_comes_from_the_environment_too() -> None:
    config = load_config(None, env={"PLANNER_PROFILE": "small_model"})
    assert config.llm.timeout_seconds == 900


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        ("qwen2.5-coder-1.5b-instruct", "small_model"),
        ("qwen2.5-coder:7b-instruct-q4_K_M", "small_model"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "small_model"),
        ("llama3.1:8b", "small_model"),
        ("smollm2:360m", "small_model"),
        ("gemma3n:e4b", "small_model"),
        ("gpt-4.1", "standard"),  # no size in the name
        ("gpt-4o-mini", "standard"),
        ("qwen2.5-coder:14b", "standard"),
        ("qwen3-30b-a3b", "standard"),  # 30B in all, 3B active: the largest counts
        ("mixtral-8x7b", "standard"),  # eight experts of 7B are not a 7B model
        ("llama-3.3-70b-versatile", "standard"),
    ],
)
def test_profile_auto_goes_by_the_size_the_models_name_gives(model: str, profile: str) -> None:
    config = load_config(None, env={"OPENAI_MODEL": model})
    assert config.profile == profile
    assert config.planning.refinement.enabled is (profile == "standard")


def test_profile_auto_reads_the_model_from_every_source(tmp_path: Path) -> None:
    file = tmp_path / "planner.yml"
    file.write_text("llm:\n  model: llama3.2:3b\n", encoding="utf-8")
    assert load_config(file, env={}).profile == "small_model"
    hosted = load_config(file, env={}, overrides={"llm.model": "gpt-4.1"})
    assert hosted.profile == "standard" and hosted.llm.temperature is None


def test_a_profile_set_anywhere_wins_over_the_models_size() -> None:
    config = load_config(
        None, env={"OPENAI_MODEL": "qwen2.5-coder:7b", "PLANNER_PROFILE": "standard"}
    )
    assert config.profile == "standard" and config.llm.max_output_tokens is None
    named = load_config(None, env={"OPENAI_MODEL": "phi4-mini", "PLANNER_PROFILE": "small_model"})
    assert named.llm.max_output_tokens == 2048


def test_an_unknown_profile_names_the_allowed_ones() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(None, env={"PLANNER_PROFILE": "tiny"})
    message = str(raised.value)
    assert "environment variable PLANNER_PROFILE" in message
    assert "'standard'" in message and "'small_model'" in message
