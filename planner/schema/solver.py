"""Solver settings (§8): the ``solver:`` block of a scenario, also recorded in every plan."""

from __future__ import annotations

from pydantic import Field

from planner.enums import SolverName
from planner.schema.base import Float, Int, StrictModel


class SolverSettings(StrictModel):
    """Which solver runs and how long (§8)."""

    name: SolverName = SolverName.highs
    """Solver: highs (default) or cbc."""
    time_limit_s: Float = Field(60, gt=0, le=604_800)
    """Wall-clock limit of the whole run (load to written plan), s."""
    rel_gap: Float = Field(0.001, ge=0, lt=1)
    """Relative MIP gap at which the solve stops."""
    threads: Int = Field(1, ge=1, le=64)
    """Solver threads."""
    work_limit: Int | None = Field(None, ge=1, le=10**9)
    """Branch-and-bound nodes each MILP solve may explore (HiGHS ``mip_max_nodes``, CBC
    ``maxNodes``; ``--work-limit``): a limit in work, not seconds, so a run gives the same answer on
    every machine and executor under any load. With it first-fit is never cut short by the clock;
    the time limit stays a safety net (a run that reaches it first is no longer repeatable)."""
