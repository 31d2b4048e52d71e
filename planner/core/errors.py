"""The error taxonomy: who is at fault decides how a failure is reported.

- ConfigError: the person configuring the run made a mistake; exit code 2, before any side effect.
- UserInputError: an issue file, event payload or CLI argument is unusable.
- ModelBehaviourError: the model answered, but not with something we can use.
- ApiError: a remote service (model endpoint, forge) failed; carries status and retry-after.
"""

from __future__ import annotations


class PlannerError(Exception):
    """Base of every error planner raises on purpose."""

    exit_code = 1


class ConfigError(PlannerError):
    """Bad configuration: a key, a value or a missing setting."""

    exit_code = 2


class UserInputError(PlannerError):
    """Unusable input from a person or an event (issue file, payload, argument)."""

    exit_code = 2


class ModelBehaviourError(PlannerError):
    """The model replied with something that is not what was asked for."""

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        raw: str = "",
        cut_off: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.raw = raw
        self.cut_off = cut_off
        """The reply ended before the document did: stopped for repeating itself, or at the
        output limit (a loop, mostly), not a malformed answer."""


class ApiError(PlannerError):
    """A remote API answered with an error or could not be reached."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        service: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.service = service

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in (408, 409, 429) or self.status >= 500
