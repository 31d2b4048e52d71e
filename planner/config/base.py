"""What every config section shares: unknown keys are errors, attribute docstrings are the
field descriptions; command lines a section holds are split like a shell would."""

from __future__ import annotations

import shlex

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """Base for config sections: unknown keys are errors, values are validated on assignment."""

    # Attribute docstrings become field descriptions: the generated reference and JSON Schema.
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, use_attribute_docstrings=True
    )


def command_words(line: str, named: str = "") -> list[str]:
    """The words of a command line as a shell splits it (nothing runs it); a line that cannot be
    split is a ValueError naming it (`named` before the line: "command prefix ")."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise ValueError(f"{named}{line!r} cannot be split: {exc}") from None
