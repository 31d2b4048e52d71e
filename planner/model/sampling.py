"""How a request samples: its temperature (warmer after a repeated or unusable reply, and in a
later attempt at the issue), its seed and its output limit."""

from __future__ import annotations

from typing import Any

from planner.config import LLMConfig

REPEAT_TEMPERATURE = 0.7
"""The temperature of the call after a reply that repeats an earlier one word for word, was cut off
at the output limit or could not be used, when llm.temperature is lower: re-asked at temperature 0,
the 1.5B wrote the same unchanged file three times in a row, and the same plan looping on one
subtask until the output limit twice (Whisper's decoder falls back to a higher temperature the
same way)."""
ATTEMPT_TEMPERATURE = 0.5
"""The lowest temperature of the calls of a second or later attempt at the issue
(verification.attempts): at temperature 0 the model would make the failed attempt again."""
WARM_SEEDS = 1_000
"""Seeds of warmer calls start at this multiple of the attempt: a warmer call samples, and
without a seed two runs of the same pass went apart there (identical requests, different
replies), so a run could not be repeated nor two versions compared; each warmer call gets a
seed of its own, so it still differs from the warmer call before it."""
SHORT_REPLIES = {"issue_test": 768}
"""Output limits of call kinds whose reply is short by nature: the issue's test is a few
assertions (about 100 tokens from the 1.5B), and a longer reply was a loop of made-up
assertions until llm.max_output_tokens (2 minutes on two cores). What was written before the
cut is used; nothing re-asks it, so the cut does not warm the next call."""


def sampling(
    config: LLMConfig, kind: str, warmer: bool, attempt: int, warm_calls: int = 0
) -> dict[str, Any]:
    """The sampling arguments of a `kind` request: `warmer` after a reply that repeated an
    earlier one or could not be used, `attempt` the attempt at the issue (1: the first),
    `warm_calls` the warmer calls made before this one."""
    settings: dict[str, Any] = {}
    temperature = config.temperature
    if temperature is not None and warmer:
        temperature = max(temperature, REPEAT_TEMPERATURE)
    if temperature is not None and attempt > 1:
        temperature = max(temperature, ATTEMPT_TEMPERATURE)
    if attempt > 1:
        settings["seed"] = attempt
    if warmer:
        settings["seed"] = WARM_SEEDS * attempt + warm_calls
    if temperature is not None:
        settings["temperature"] = temperature
    limits = [config.max_output_tokens, SHORT_REPLIES.get(kind)]
    if any(limit is not None for limit in limits):
        settings["max_tokens"] = min(limit for limit in limits if limit is not None)
    return settings
