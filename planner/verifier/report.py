"""The verifier's report: violations found and the use of every limit."""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.schema import Usage

TOL = 1e-6
"""Absolute tolerance for comparing loads (kW) and lengths (m)."""


@dataclass(frozen=True)
class Violation:
    """One broken constraint: which element, which check, the value and the limit."""

    element: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.element}: {self.message}"


@dataclass
class VerifyReport:
    """Outcome of :func:`planner.verifier.verify`: violations (empty when the plan is valid) and
    usage of every limit."""

    violations: list[Violation] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    phase_usage: dict[str, list[Usage]] = field(default_factory=dict)
    """Phased plans: power and cooling use at the end of each phase."""

    @property
    def ok(self) -> bool:
        """True when no constraint is violated."""
        return not self.violations

    def add(self, element: str, check: str, message: str) -> None:
        """Record a violation."""
        self.violations.append(Violation(element, check, message))


def fmt(x: float) -> str:
    """A number for a message: thousands separators, at most three decimals, no trailing zeros."""
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def close(a: float | None, b: float | None, rel: float = 1e-6, abs_: float = 1e-6) -> bool:
    """Whether two claimed figures agree (both absent, or within the tolerances)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))
