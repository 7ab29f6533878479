"""A run its user stops: a run started inside :func:`stoppable` ends at its next check once the
event is set — a progress report, a deadline check (every model family, every first-fit cluster),
and inside a HiGHS solve, whose interrupt callback reads the event (the solver stops within a
node). :class:`Stopped` is a ``BaseException``, like ``KeyboardInterrupt``: code that catches
``Exception`` to fall back on another answer does not swallow it. Nothing of the run is kept.

The event is per thread: runs in other threads (another dashboard session's) are not touched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCAL = threading.local()


class Stopped(BaseException):
    """The run was stopped by its user (at ``stage``)."""

    def __init__(self, stage: str = "") -> None:
        super().__init__(f"stopped by the user{' while ' + stage if stage else ''}")
        self.stage = stage


@contextmanager
def stoppable(event: threading.Event) -> Iterator[threading.Event]:
    """Runs in this thread within the block stop once ``event`` is set."""
    before = getattr(_LOCAL, "event", None)
    _LOCAL.event = event
    try:
        yield event
    finally:
        _LOCAL.event = before


def current() -> threading.Event | None:
    """The stop event of this thread's run, if it is stoppable."""
    return getattr(_LOCAL, "event", None)


def requested() -> bool:
    """Whether this thread's run has been asked to stop."""
    event = current()
    return event is not None and event.is_set()


def check(stage: str = "") -> None:
    """Raise :class:`Stopped` when this thread's run has been asked to stop."""
    if requested():
        raise Stopped(stage)
