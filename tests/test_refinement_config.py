"""planning.refinement: the seed's keys and defaults, environment overrides, and the legacy
max_quality_retries key living beside max_refinement_attempts."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.config import load_config
from planner.core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_seeds() -> None:
    refinement = load_config(None, env={}).planning.refinement
    assert refinement.model_dump() == {
        "enabled": True,
        "max_refinement_attempts": 2,
        "max_quality_retries": None,
        "refine_suggestions_on_success": False,
        "max_suggestion_replans": 1,
        "enable_individual_fallback": True,
        "delta_threshold": 5,
        "delta_threshold_percent": 5,
        "task_count_change_threshold": 0.3,
        "task_count_change_min_absolute": 2,
    }


def test_every_key_is_read_from_the_file(tmp_path: Path) -> None:
    text = (
        "planning:\n  refinement:\n    enabled: false\n    max_refinement_attempts: 4\n"
        "    refine_suggestions_on_success: true\n    max_suggestion_replans: 2\n"
        "    enable_individual_fallback: false\n    delta_threshold: 3\n"
        "    delta_threshold_percent: 8\n    task_count_change_threshold: 0.5\n"
        "    task_count_change_min_absolute: 1\n"
    )
    refinement = load_config(write(tmp_path, text), env={}).planning.refinement
    assert (refinement.enabled, refinement.max_refinement_attempts) == (False, 4)
    assert refinement.refine_suggestions_on_success and refinement.max_suggestion_replans == 2
    assert not refinement.enable_individual_fallback
    assert (refinement.delta_threshold, refinement.delta_threshold_percent) == (3, 8)
    assert refinement.task_count_change_threshold == 0.5
    assert refinement.task_count_change_min_absolute == 1


@pytest.mark.parametrize(
    ("name", "value", "key", "expected"),
    [
        ("REFINEMENT_ENABLED", "false", "enabled", False),
        ("MAX_REFINEMENT_ATTEMPTS", "5", "max_refinement_attempts", 5),
        ("MAX_QUALITY_RETRIES", "1", "max_refinement_attempts", 1),
    ],
)
def test_environment_overrides(name: str, value: str, key: str, expected: object) -> None:
    refinement = load_config(None, env={name: value}).planning.refinement
    assert getattr(refinement, key) == expected


def test_env_beats_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "planning:\n  refinement:\n    max_refinement_attempts: 4\n")
    config = load_config(path, env={"MAX_REFINEMENT_ATTEMPTS": "1"})
    assert config.planning.refinement.max_refinement_attempts == 1


def test_legacy_max_quality_retries_alone_sets_the_attempts(tmp_path: Path) -> None:
    path = write(tmp_path, "planning:\n  refinement:\n    max_quality_retries: 3\n")
    assert load_config(path, env={}).planning.refinement.max_refinement_attempts == 3


def test_max_refinement_attempts_wins_when_both_are_set(tmp_path: Path) -> None:
    text = "planning:\n  refinement:\n    max_quality_retries: 5\n    max_refinement_attempts: 1\n"
    assert (
        load_config(write(tmp_path, text), env={}).planning.refinement.max_refinement_attempts == 1
    )


def test_max_refinement_attempts_wins_even_over_a_legacy_env_var(tmp_path: Path) -> None:
    path = write(tmp_path, "planning:\n  refinement:\n    max_refinement_attempts: 1\n")
    config = load_config(path, env={"MAX_QUALITY_RETRIES": "6"})
    assert config.planning.refinement.max_refinement_attempts == 1
    assert config.planning.refinement.max_quality_retries == 6


def test_bad_values_are_reported_with_their_key(tmp_path: Path) -> None:
    text = "planning:\n  refinement:\n    max_refinement_attempts: -1\n    retries: 2\n"
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, text), env={})
    message = str(error.value)
    assert "planning.refinement.max_refinement_attempts = -1" in message
    assert "planning.refinement.retries" in message and "max_quality_retries" in message
    with pytest.raises(ConfigError, match=r"planning\.refinement\.max_quality_retries"):
        load_config(None, env={"MAX_QUALITY_RETRIES": "many"})
