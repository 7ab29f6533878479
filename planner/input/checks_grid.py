"""Cross-reference checks of §21 (power the grid accepts, water, carbon, maintenance): what a step
names, what a limit needs, what a maintenance level names. Each returns problems like
:mod:`planner.input.checks`'s."""

from __future__ import annotations

from planner.errors import Problem, known
from planner.schema import Scenario


def check_grid(scenario: Scenario) -> list[Problem]:
    """Power sources named by steps exist; intensities by phase name phases; the emissions limit
    has sources and the water limit has water; maintenance names buildings that exist."""
    return [*_sources(scenario), *_limits(scenario), *_maintenance(scenario)]


def _sources(scenario: Scenario) -> list[Problem]:
    out: list[Problem] = []
    sources = scenario.power_sources
    if not sources:
        return out
    if not scenario.power_arrival:
        what = "power_sources need power_arrival steps that bring their MW (each step names its source)"
        out.append(Problem("power_sources", what))
    for i, step in enumerate(scenario.power_arrival):
        for name in step.mw_by_source():
            if name not in sources:
                where = "power_source" if step.power_source else "interconnect_mw/generation_mw"
                what = f"source '{name}' is not in power_sources {known(sources)}"
                out.append(Problem(f"power_arrival[{i}].{where}", what))
    phases = [p.id for p in scenario.phases]
    for name, src in sources.items():
        for ph in src.t_co2_per_mwh_by_phase:
            if ph not in phases:
                path = f"power_sources.{name}.t_co2_per_mwh_by_phase.{ph}"
                out.append(Problem(path, f"unknown phase '{ph}' {known(phases)}"))
    return out


def _limits(scenario: Scenario) -> list[Problem]:
    out: list[Problem] = []
    if scenario.budgets.t_co2_per_year is not None and not scenario.power_sources:
        what = "an emissions limit needs power_sources (each with its t_co2_per_mwh) to count emissions"
        out.append(Problem("budgets.t_co2_per_year", what))
    if scenario.budgets.peak_water_l_per_s is not None and scenario.water is None:
        what = "a water limit needs water (wue and design-day draw)"
        out.append(Problem("budgets.peak_water_l_per_s", what))
    return out


def _maintenance(scenario: Scenario) -> list[Problem]:
    buildings = [b.id for b in scenario.site.buildings]
    return [
        Problem(f"maintenance[{i}].buildings[{j}]", f"unknown building '{b}' {known(buildings)}")
        for i, m in enumerate(scenario.maintenance)
        for j, b in enumerate(m.buildings)
        if b not in buildings
    ]
