"""Models read back from the history: the payloads of one entry type that still validate."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def recorded(
    entries: Iterable[Mapping[str, Any]], entry_type: str, key: str, model: type[Model]
) -> Iterator[Model]:
    """The `key` payloads of the `entry_type` entries as `model`, in the order given. A payload
    that does not validate is skipped: a damaged or older entry never stops a reader."""
    for entry in entries:
        if entry.get("type") != entry_type:
            continue
        try:
            found = model.model_validate(entry.get(key))
        except ValidationError:
            continue
        yield found
