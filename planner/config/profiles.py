"""Profiles: the defaults each kind of model gets, and the model sizes profile auto reads
from a name."""

from __future__ import annotations

import re
from typing import Any

from planner.config.root import PlannerConfig

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
        "verification.candidates": 12,
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


SMALL_MODEL_BILLIONS = 8.0
"""The largest size, in billions of parameters, that profile auto treats as a small model."""

# A size in a model's name: `7b`, `1.5B`, `360m`; not the `7b` of a mixture such as `8x7b`.
_MODEL_SIZE = re.compile(r"(?<![\w.])[a-z]?(\d+(?:\.\d+)?)([bm])(?![a-z0-9])", re.IGNORECASE)


def profile_for(model: str, size: float | None = None) -> str:
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
