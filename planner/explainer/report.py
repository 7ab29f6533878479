"""What an explanation says: findings, the explanation, and the thresholds that make a limit binding."""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.schema import Demand, Scenario

BINDING_SHARE = 0.99
"""A limit used to at least this share is binding."""
NEAR_SHARE = 0.95
"""Limits used to at least this share are relaxed together in one joint re-solve."""


@dataclass(frozen=True)
class Finding:
    """One statement of the explanation."""

    kind: str
    """conflict | unplaceable | binding | note."""
    element: str
    text: str
    amount: float | None = None
    unit: str = ""


@dataclass
class Explanation:
    """What explain found; ``feasible`` is none when no answer came in time."""

    scenario: str
    feasible: bool | None
    headline: str
    findings: list[Finding] = field(default_factory=list)
    method: str = ""
    relaxations: list = field(default_factory=list)
    """Feasible: every candidate limit as a :class:`Relaxation` (for tables)."""

    def render(self) -> str:
        """Plain text for the terminal."""
        lines = [self.headline]
        lines += [f"  - {f.text}" for f in self.findings]
        if self.method:
            lines.append(f"  ({self.method})")
        return "\n".join(lines)


def _demand_text(s: Scenario) -> str:
    """What the clusters ask, e.g. "a at exactly 1,024 GPUs, b at 512+ GPUs (1,152+ from q3)"."""
    wants = []
    for c in s.clusters:
        if c.demand not in (Demand.exact, Demand.at_least):
            continue
        how = "exactly " if c.demand == Demand.exact else ""
        plus = "+" if c.demand == Demand.at_least else ""
        if c.gpus is not None:
            text = f"{c.id} at {how}{c.gpus:,}{plus} GPUs"
        else:
            text = f"{c.id} at {how}" + ", ".join(
                f"{n:,}{plus} GPUs from {ph}" for ph, n in (c.gpus_by_phase or {}).items()
            )
        wants.append(text)
    return ", ".join(wants) or "the clusters"


def _fmt(x: float) -> str:
    return f"{x:,.1f}".removesuffix(".0")
