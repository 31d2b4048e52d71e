"""The pass's wall-clock deadline, shared by everything that may wait (issue 15).

One deadline per process (a CI job runs one pass): the CI layer starts it with the budget
minus the time the end of a run needs (commit, push, history, final comment), and a signal
handler can expire it at once. A pass that no caller gave a deadline (`planner run`, the
evaluation harness) starts its own for its duration (`pass_deadline`), so the budget holds
wherever a pass runs. Model requests, their retries and commands ask `bounded()` for
their timeout, so none outlives the deadline; the coordinator's budget check calls
`stop_if_expired()` between steps. `guarded(model)` lets a signal end an in-flight model request:
the handler raises `Interrupted` only while a request is in flight, and the guard turns it into
StopPass, so the pass ends the ordinary way (history entry, commit, push, comment).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from planner.config import BudgetConfig
from planner.outcome.flow import StopPass

WAIT_STEP = 0.2
"""How often the main thread looks up from a model request (signals run in between)."""
MIN_TIMEOUT = 1.0
"""A request or command always gets at least this long, even at the very end."""


class Interrupted(BaseException):
    """Raised by the signal handler inside an in-flight model request (never elsewhere).

    A BaseException, so no `except Exception` on the way (the client's retry loop) eats it."""


class Deadline:
    def __init__(self) -> None:
        self.end: float | None = None
        self.reason = ""
        self.in_flight = 0

    def start(self, seconds: float) -> None:
        self.end = time.monotonic() + max(seconds, 0.0)
        self.reason = ""

    def clear(self) -> None:
        self.end, self.reason = None, ""

    def expire(self, reason: str) -> None:
        self.reason = reason
        self.end = time.monotonic()

    def left(self) -> float | None:
        return None if self.end is None else self.end - time.monotonic()


DEADLINE = Deadline()


def bounded(seconds: float) -> float:
    """`seconds`, or less when the deadline is nearer (at least MIN_TIMEOUT)."""
    left = DEADLINE.left()
    return seconds if left is None else max(MIN_TIMEOUT, min(seconds, left))


def expired() -> bool:
    """The deadline has passed: nothing new may start."""
    left = DEADLINE.left()
    return left is not None and left <= 0


def stop_if_expired() -> None:
    if expired():
        reason = DEADLINE.reason or "budget: the wall-clock deadline of the run was reached"
        raise StopPass("in_progress", reason)


def working_seconds(budget: BudgetConfig) -> float:
    """The part of max_wall_seconds a pass may work: the finish reserve (at most a quarter of
    the budget) stays for the end of the run."""
    return budget.max_wall_seconds - min(budget.finish_reserve_seconds, budget.max_wall_seconds / 4)


@contextlib.contextmanager
def pass_deadline(budget: BudgetConfig) -> Iterator[None]:
    """The pass's deadline, when no caller started one (the CI layer does, counting the time
    the job ran before): started now for `budget`, cleared when the pass ends."""
    if DEADLINE.end is not None:
        yield
        return
    DEADLINE.start(working_seconds(budget))
    try:
        yield
    finally:
        DEADLINE.clear()


@contextlib.contextmanager
def in_flight() -> Iterator[None]:
    """A section a signal may interrupt (only on the main thread)."""
    main = threading.current_thread() is threading.main_thread()
    DEADLINE.in_flight += main
    try:
        yield
    except Interrupted:
        raise StopPass("in_progress", DEADLINE.reason or "interrupted") from None
    finally:
        DEADLINE.in_flight -= main


class GuardedModel:
    """A Model whose requests end at once (as StopPass) when the run is cancelled."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "inner", inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)  # on_call: the coordinator records usage

    def structured(self, *args: Any, **kwargs: Any) -> Any:
        return _waited(self.inner.structured, *args, **kwargs)

    def structured_text(self, *args: Any, **kwargs: Any) -> Any:
        return _waited(self.inner.structured_text, *args, **kwargs)

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        return _waited(self.inner.chat, *args, **kwargs)


def _waited(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run `method` on a helper thread while the main thread waits in short steps.

    A signal may be delivered to any thread of the process, and a main thread blocked in a
    socket read would only see it once the reply came. Waiting in short steps, the main
    thread runs the handler within a fraction of a second; an abandoned request finishes on
    its daemon thread, which never holds up the end of the job."""
    if threading.current_thread() is not threading.main_thread():
        return method(*args, **kwargs)
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = method(*args, **kwargs)
        except BaseException as exc:  # handed to the waiting thread as it is
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="planner-model-request", daemon=True).start()
    with in_flight():
        while not done.wait(WAIT_STEP):
            pass
    if "error" in box:
        raise box["error"]
    return box["value"]


def guarded(model: Any) -> Any:
    return model if isinstance(model, GuardedModel) else GuardedModel(model)
