"""Input problems, gathered and reported together.

Every problem names its YAML path (``site.buildings[0].halls[0].rows[3].feeds[1]``),
the bad value and what is allowed. The CLI turns an :class:`InputError` into
exit code 2 and the dashboard into an error box; neither shows a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where it is and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class InputError(Exception):
    """The input cannot be planned; ``problems`` lists every reason found."""

    def __init__(self, problems: list[Problem] | Problem | str, source: str = "") -> None:
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.source}: " if self.source else ""
        n = len(self.problems)
        lines = [f"{head}{n} problem{'s' if n != 1 else ''} in the input:"]
        lines += [f"  - {p}" for p in self.problems]
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
