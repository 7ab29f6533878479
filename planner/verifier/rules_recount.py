"""The verifier's own reading of the rules a plan's figures rest on, written apart from the
optimiser's (the schema's methods and :mod:`planner.rules.costs`): planning power, retirement at the
end of a service life, power arrived by a phase, what stands in a phase, and money over the horizon.
``tests/test_verifier_second_opinion.py`` holds both readings to the same figures on random inputs.

Money (SPEC §10, §17), t a rack's start in years from the first phase, H the horizon, r the
discount rate, v(t) = (1 + r)^-t:

- capex at t is worth capex × v(t); opex flows from t to the rack's end e = min(retirement, H):
  worth opex × ∫_t^e v(s) ds = opex × (v(t) − v(e)) / ln(1 + r)  (e − t when r = 0);
- removal is paid at retirement (within H), worth removal × v(τ); a rack with a service life L
  standing at H leaves equipment × max(0, 1 − (H − t)/L), credited at H: − residual × v(H);
- GPU-hours: GPUs × 8,760 × (e − t); discounted like dollars: GPUs × 8,760 × ∫_t^e v(s) ds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from functools import lru_cache

from planner.schema import PlacedRack, RackType, Scenario

HOURS = 8760.0
"""Hours in a year."""
YEAR_DAYS = 365.25
"""Days in a year (a phase's start in years = days since the first phase ÷ 365.25)."""


def planning_kw(scenario: Scenario, t: RackType) -> float:
    """kW the plan reserves for one rack: (servers × (non-GPU kW + GPUs × min(TDP, cap) W ÷ 1000)
    + overhead kW) × power_budget_ratio."""
    cap = scenario.gpu_power_cap_w
    gpu_w = t.gpu_power_w if cap is None else min(cap, t.gpu_power_w)
    rack = (
        t.servers_per_rack * (t.non_gpu_power_kw_per_server + t.gpus_per_server * gpu_w / 1000.0)
        + t.overhead_power_kw
    )
    ratio = scenario.power_budget_ratio
    return rack if ratio is None else rack * ratio


def nameplate_kw(scenario: Scenario, t: RackType) -> float:
    """Rated kW of one rack with any GPU cap applied (no power budget ratio)."""
    cap = scenario.gpu_power_cap_w
    gpu_w = t.gpu_power_w if cap is None else min(cap, t.gpu_power_w)
    return (
        t.servers_per_rack * (t.non_gpu_power_kw_per_server + t.gpus_per_server * gpu_w / 1000.0)
        + t.overhead_power_kw
    )


def held(scenario: Scenario, racks: Iterable[PlacedRack]) -> set[tuple[str, int]]:
    """(row, position) of every position the racks take (a multi-rack unit: its width of them)."""
    width = {t.id: len(t.parts or []) or 1 for t in scenario.catalog.rack_types}
    return {(r.row, r.position + k) for r in racks for k in range(width.get(r.rack_type, 1))}


def phase_index(scenario: Scenario) -> Mapping[str, int]:
    """Phase ID → its index (the scenario's own read-only map)."""
    return scenario.phase_at


def start_years(scenario: Scenario) -> list[float]:
    """Each phase's start, years after the first phase's start."""
    if not scenario.phases:
        return []
    first = scenario.phases[0].start
    return [(p.start - first).days / YEAR_DAYS for p in scenario.phases]


def retired_at(scenario: Scenario, rack_type: str, phase: str | None) -> int | None:
    """Index of the first phase starting on or after the day the type's service life, begun when
    ``phase`` starts, ends by the calendar: the rack no longer stands from then; None when it stands
    to the end."""
    life = scenario.service_life.get(rack_type)
    if life is None:
        return None
    return _retired_at(tuple((p.id, p.start) for p in scenario.phases), life.years, phase or "")


@lru_cache(maxsize=4096)
def _retired_at(phases: tuple[tuple[str, date], ...], years: float, phase: str) -> int | None:
    at = next((i for i, (pid, _) in enumerate(phases) if pid == phase), None)
    if at is None:
        return None
    ends = _calendar_end(phases[at][1], years)
    later = [i for i in range(at + 1, len(phases)) if phases[i][1] >= ends]
    return later[0] if later else None


def _calendar_end(start: date, years: float) -> date:
    """The verifier's own calendar: ``years`` as months (12 a year) stepped one at a time from
    ``start`` (a day past the month's end becomes its last day), a part month as that share of the
    landing month's days, rounded up."""
    months = round(years * 12, 9)
    y, m = start.year, start.month
    for _ in range(int(months)):
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    last = (date(y + (m == 12), m % 12 + 1, 1) - timedelta(days=1)).day
    end = date(y, m, min(start.day, last))
    part = months - int(months)
    return end + timedelta(days=math.ceil(part * last - 1e-9)) if part > 1e-9 else end


def arrived_kw(scenario: Scenario, index: int) -> float | None:
    """Facility kW arrived by phase ``index``: Σ (interconnect + generation) MW × 1000 of the steps
    from phases up to it (a step without a phase: from the start); None when nothing is stated."""
    if not scenario.power_arrival:
        return None
    at = phase_index(scenario)
    mw = 0.0
    for step in scenario.power_arrival:
        if step.phase is None or at.get(step.phase, 0) <= index:
            mw += step.interconnect_mw + step.generation_mw
    return mw * 1000.0


def stands(scenario: Scenario, r: PlacedRack, index: int | None) -> bool:
    """Whether a rack stands in phase ``index`` (None: the last): installed or placed by then, and
    not retired by then. Without phases every rack stands."""
    if not scenario.phases:
        return True
    return _stands(scenario, phase_index(scenario), r, len(scenario.phases) - 1 if index is None else index)


def _stands(scenario: Scenario, pi: dict[str, int], r: PlacedRack, at: int) -> bool:
    if not r.existing and pi.get(r.phase or "", 0) > at:
        return False
    gone = retired_at(scenario, r.rack_type, r.phase)
    return gone is None or at < gone


def standing_racks(
    scenario: Scenario, racks: Iterable[PlacedRack], index: int | None = None
) -> list[PlacedRack]:
    """The racks that stand in phase ``index`` (None: the last)."""
    if not scenario.phases:
        return list(racks)
    pi, at = phase_index(scenario), len(scenario.phases) - 1 if index is None else index
    return [r for r in racks if _stands(scenario, pi, r, at)]


def worth(t: float, rate: float) -> float:
    """Today's value of 1 USD paid at year t: 1 / (1 + rate)^t."""
    return 1.0 / (1.0 + rate) ** t


def left_on_books(usd: float, t: float, life: float | None, horizon: float) -> float:
    """What of ``usd`` spent at year t a straight-line life leaves at the horizon, USD (0 without one)."""
    if life is None or t >= horizon:
        return 0.0
    return usd * max(0.0, (life - (horizon - t)) / life)


def flow(t: float, end: float, rate: float) -> float:
    """Today's value of 1 USD a year flowing from year t to year end (0 when end ≤ t)."""
    if end <= t:
        return 0.0
    if rate == 0:
        return end - t
    return (worth(t, rate) - worth(end, rate)) / math.log(1.0 + rate)


def structure_rate(scenario: Scenario, building: str | None) -> tuple[float, float | None] | None:
    """(USD per MW, life years) of a structure built with a rate of its own in ``building``; None
    where the building rate applies."""
    for x in scenario.retrofits:
        e = x.effect
        if e.kind == "build_structure" and e.building == building and e.facility_usd_per_mw is not None:
            return e.facility_usd_per_mw, (e.life_years if e.life_years is not None else None)
    return None


def structure_pue(scenario: Scenario, building: str | None, design_day: bool) -> tuple[float, str]:
    """(PUE, what it is) of a rack in ``building``: the first structure built as it with a PUE of its
    own (on the design day its design-day PUE, else its annual one), else the scenario's (on the design
    day its design-day PUE where stated)."""
    for x in scenario.retrofits:
        e = x.effect
        if e.kind == "build_structure" and e.building == building:
            if design_day and e.design_day_pue is not None:
                return e.design_day_pue, f"design-day PUE of structure {building}"
            if e.pue is not None:
                return e.pue, f"PUE of structure {building}"
            break
    if design_day and scenario.design_day_pue is not None:
        return scenario.design_day_pue, "design-day PUE"
    return scenario.pue, "PUE"


def network_kw(scenario: Scenario, t: RackType) -> float:
    """Back-end network kW a rack the plan places outside a designed fabric draws: GPUs × the type's
    network W per GPU ÷ 1000, none where the scenario turns the allowance off."""
    if not scenario.network_allowance:
        return 0.0
    return t.servers_per_rack * t.gpus_per_server * t.network_w_per_gpu / 1000.0
