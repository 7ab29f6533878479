"""Process-wide stores shared by dashboard sessions, bounded, with no Streamlit in them.

- :class:`SolveHub`: finished solves by scenario key. Only final answers are kept
  (a proven optimum or proven infeasibility); a time-limited or failed result
  is returned to its caller but never cached, so "Solve" again retries it.
  Identical solves in flight run once: a second caller waits for the first.
  A session sees a result only after it asked for it (the pages keep their own
  list of keys), so a new session never opens on another session's work.
- :class:`TextStore`: scenario texts by key, so a browser reload (a new
  session) can find the scenario it had loaded through the URL.

Both evict the least recently used entries beyond a count and a size in bytes.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable

from planner.enums import Status

FINAL = (Status.optimal.value, Status.infeasible.value)
"""Statuses whose result a re-solve would repeat exactly: cached."""


def entry_size(entry: dict) -> int:
    """Approximate bytes an entry holds (its JSON length)."""
    return len(json.dumps(entry, default=str))


class SolveHub:
    """Bounded LRU of finished solves with in-flight de-duplication (module docstring)."""

    def __init__(self, max_entries: int = 16, max_bytes: int = 200_000_000) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._done: OrderedDict[str, tuple[dict, int]] = OrderedDict()
        self._running: dict[str, threading.Event] = {}
        self.runs = 0
        """How many solves actually ran (for tests and the sidebar)."""

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._done.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def get(self, key: str) -> dict | None:
        """A cached final result, or none."""
        with self._lock:
            hit = self._done.get(key)
            if hit is None:
                return None
            self._done.move_to_end(key)
            return hit[0]

    def run(self, key: str, solve: Callable[[], dict], wait_s: float = 3600.0) -> dict:
        """The result for ``key``: cached, or awaited from a solve in flight, or solved now."""
        with self._lock:
            hit = self._done.get(key)
            if hit is not None:
                self._done.move_to_end(key)
                return hit[0]
            event = self._running.get(key)
            owner = event is None
            if owner:
                event = self._running[key] = threading.Event()
        if not owner:
            event.wait(wait_s)
            cached = self.get(key)
            if cached is not None:
                return cached
            return self.run(key, solve, wait_s)  # the other solve was not final: run our own
        entry: dict = {}
        try:
            self.runs += 1
            entry = solve()
        finally:
            with self._lock:
                if entry.get("plan", {}).get("status") in FINAL and "error" not in entry:
                    self._store(key, entry)
                self._running.pop(key, None)
                event.set()
        return entry

    def _store(self, key: str, entry: dict) -> None:
        size = entry_size(entry)
        if size > self.max_bytes:
            return
        self._done[key] = (entry, size)
        self._done.move_to_end(key)
        total = sum(s for _, s in self._done.values())
        while len(self._done) > self.max_entries or total > self.max_bytes:
            _, (_, s) = self._done.popitem(last=False)
            total -= s

    def update(self, key: str, **fields) -> None:
        """Add fields (an explanation) to a cached entry, if it is cached."""
        with self._lock:
            hit = self._done.get(key)
            if hit is not None:
                hit[0].update(fields)


class TextStore:
    """Bounded LRU of texts by key."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 100_000_000) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._items: OrderedDict[str, str] = OrderedDict()

    def put(self, key: str, text: str) -> None:
        if len(text) > self.max_bytes:
            return
        with self._lock:
            self._items[key] = text
            self._items.move_to_end(key)
            total = sum(len(t) for t in self._items.values())
            while len(self._items) > self.max_entries or total > self.max_bytes:
                _, old = self._items.popitem(last=False)
                total -= len(old)

    def get(self, key: str) -> str | None:
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text
