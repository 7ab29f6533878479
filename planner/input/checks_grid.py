"""Cross-reference checks of §21 (power the grid accepts, water, carbon, maintenance): what a step
names, what a limit needs, what a maintenance level names. Each returns problems like
:mod:`planner.input.checks`'s."""

from __future__ import annotations

from planner.errors import Problem, known
from planner.schema import Scenario


def check_grid(scenario: Scenario) -> list[Problem]:
    """Power sources named by steps exist; intensities by phase name phases; the emissions limit
    has sources and the water limit has water; maintenance names buildings that exist."""
    out: list[Problem] = []
    sources = scenario.power_sources
    phases = [p.id for p in scenario.phases]
    if sources:
        for i, step in enumerate(scenario.power_arrival):
            for name in step.mw_by_source():
                if name not in sources:
                    where = "power_source" if step.power_source else "interconnect_mw/generation_mw"
                    what = f"source '{name}' is not in power_sources {known(sources)}"
                    out.append(Problem(f"power_arrival[{i}].{where}", what))
    for name, src in sources.items():
        for ph in src.t_co2_per_mwh_by_phase:
            if ph not in phases:
                out.append(Problem(f"power_sources.{name}.t_co2_per_mwh_by_phase.{ph}", f"unknown phase '{ph}' {known(phases)}"))
    if scenario.budgets.t_co2_per_year is not None and not sources:
        what = "an emissions limit needs power_sources (each with its t_co2_per_mwh) to count emissions"
        out.append(Problem("budgets.t_co2_per_year", what))
    if scenario.budgets.peak_water_l_per_s is not None and scenario.water is None:
        out.append(Problem("budgets.peak_water_l_per_s", "a water limit needs water (wue and design-day draw)"))
    if sources and not scenario.power_arrival:
        what = "power_sources need power_arrival steps that bring their MW (each step names its source)"
        out.append(Problem("power_sources", what))
    buildings = [b.id for b in scenario.site.buildings]
    for i, m in enumerate(scenario.maintenance):
        for j, b in enumerate(m.buildings):
            if b not in buildings:
                out.append(Problem(f"maintenance[{i}].buildings[{j}]", f"unknown building '{b}' {known(buildings)}"))
    return out
