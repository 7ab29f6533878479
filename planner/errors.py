"""Input problems, gathered and reported together.

Every problem names its YAML path (``site.buildings[0].halls[0].rows[3].feeds[1]``),
the bad value and what is allowed. The CLI turns an :class:`InputError` into
exit code 2 and the dashboard into an error box; neither shows a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where it is and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


MAX_PROBLEMS = 50
"""Problems kept and shown per error; the rest are counted ("and 12,345 more")."""


class InputError(Exception):
    """The input cannot be planned; ``problems`` lists the first :data:`MAX_PROBLEMS` reasons
    found and ``more`` counts the rest."""

    def __init__(self, problems: list[Problem] | Problem | str, source: str = "", more: int = 0) -> None:
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        problems = list(problems)
        self.problems: list[Problem] = problems[:MAX_PROBLEMS]
        self.more = more + max(0, len(problems) - MAX_PROBLEMS)
        self.source = source
        super().__init__(self.render())

    @property
    def total(self) -> int:
        """Number of problems found, shown or not."""
        return len(self.problems) + self.more

    def lines(self) -> list[str]:
        """The problems as text, with a last line counting those left out."""
        out = [str(p) for p in self.problems]
        if self.more:
            out.append(f"… and {self.more:,} more problem{'s' if self.more != 1 else ''}")
        return out

    def render(self) -> str:
        head = f"{self.source}: " if self.source else ""
        n = self.total
        lines = [f"{head}{n:,} problem{'s' if n != 1 else ''} in the input:"]
        lines += [f"  - {line}" for line in self.lines()]
        return "\n".join(lines)


def join_path(*parts: str | int) -> str:
    """Join YAML path parts: names with dots, list indices in brackets."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else str(part)
    return out


class SolverFailure(RuntimeError):
    """The solver returned something that is not a usable plan (CLI exit 1)."""


MAX_KNOWN = 8


def known(ids: Iterable[str]) -> str:
    """A short '(known: a, b, …)' list for a message."""
    ids = sorted(ids)
    if not ids:
        return "(none defined)"
    more = f", … {len(ids) - MAX_KNOWN} more" if len(ids) > MAX_KNOWN else ""
    return f"(known: {', '.join(ids[:MAX_KNOWN])}{more})"
