"""Structures of a region as a plan leaves them (§16): per building whether it stands from the
start, comes online in a phase (its halls' ``online_phase``) or is a structure the plan builds
(a ``build_structure`` retrofit: a tent …), and per phase its GPUs, its racks' IT load (kW) and the
region's facility load (IT × PUE) against the power arrived. Read by the dashboard's Region page and
the plan summary; computed from the scenario and the plan's racks alone."""

from __future__ import annotations

from dataclasses import dataclass

from planner.enums import RetrofitKind
from planner.input.site_index import network_racks
from planner.input.timeline import timeline
from planner.plan import Plan
from planner.schema import Scenario


@dataclass(frozen=True)
class Structure:
    """One building of the region in a plan."""

    building: str
    kind: str
    """'building', or the structure kind of the retrofit that builds it (tent …)."""
    location_km: tuple[float, float]
    usable_kw: float
    """Usable power of its root power nodes (the utility; capacity × derate), kW: what it is built for."""
    online: str | None
    """Phase from which it can hold racks: its halls' online phase, or the phase a structure the plan
    builds stands (bought + lead); None: from the start."""
    built: bool
    """False for a structure the plan does not build (it stays empty)."""
    retrofit: str | None
    """The retrofit that builds it, if any."""
    bought: str | None
    """Phase in which the plan buys it (None: not bought, or nothing to buy)."""
    gpus: tuple[int, ...]
    """GPUs standing at the end of each phase (one figure without phases)."""
    it_kw: tuple[float, ...]
    """Planning power of its racks standing at the end of each phase, kW."""
    backup: str | None = None
    """Backup-power design the plan's reliability report chose or was given (None: no choice stated)."""


@dataclass(frozen=True)
class RegionPower:
    """Per phase: the region's facility load (IT of every rack and network rack × PUE) and the power
    arrived (interconnect + generation), kW; arrived is None without ``power_arrival``."""

    phase: str | None
    facility_kw: float
    arrived_kw: float | None

    @property
    def headroom_kw(self) -> float | None:
        return None if self.arrived_kw is None else self.arrived_kw - self.facility_kw


def structures(scenario: Scenario, plan: Plan) -> list[Structure]:
    """Every building of the site as the plan leaves it (module docstring)."""
    tl = timeline(scenario)
    types = scenario.catalog.by_id()
    builds = {
        r.effect.building: r for r in scenario.retrofits if r.effect.kind == RetrofitKind.build_structure
    }
    bought = {b.id: b.phase for b in plan.retrofits}
    backup = {b.building: b.design for b in (plan.reliability.backup if plan.reliability else [])}
    n = len(tl.phases)
    out = []
    for b in scenario.site.buildings:
        gpus, kw = [0] * n, [0.0] * n
        for r in plan.racks:
            if r.building != b.id:
                continue
            t = types[r.rack_type]
            for i in range(0 if r.existing else tl.at(r.phase), n):
                gpus[i] += t.gpus
                kw[i] += scenario.rack_power_kw(t)
        nodes = [*b.power_nodes, *(x for h in b.halls for x in h.power_nodes)]
        usable = sum(x.usable_kw for x in nodes if x.parent is None)
        r = builds.get(b.id)
        if r is not None:
            phase = bought.get(r.id)
            built = r.id in bought
            online = None
            if built:
                at = (tl.at(phase) if tl.phased else 0) + r.lead_phases
                online = tl.phases[min(at, n - 1)]
            out.append(
                Structure(
                    b.id,
                    r.effect.structure,
                    (b.location_km[0], b.location_km[1]),
                    usable,
                    online,
                    built,
                    r.id,
                    phase,
                    tuple(gpus),
                    tuple(round(v, 6) for v in kw),
                    backup.get(b.id),
                )
            )
        else:
            ons = [h.online_phase for h in b.halls]
            online = None if any(o is None for o in ons) else min(ons, key=tl.at)
            out.append(
                Structure(
                    b.id,
                    "building",
                    (b.location_km[0], b.location_km[1]),
                    usable,
                    online,
                    True,
                    None,
                    None,
                    tuple(gpus),
                    tuple(round(v, 6) for v in kw),
                    backup.get(b.id),
                )
            )
    return out


def region_power(scenario: Scenario, plan: Plan) -> list[RegionPower]:
    """Facility load (IT × design-day PUE, each rack at its building's) against power arrived, per
    phase (from the plan's phase summaries; one row from its KPIs without phases)."""
    pue = scenario.arrival_pue
    if plan.phases:
        return [
            RegionPower(
                p.phase,
                pue * p.it_kw + _own_pue_kw(scenario, plan, i),
                scenario.power_available_kw(i) if scenario.power_arrival else None,
            )
            for i, p in enumerate(plan.phases)
        ]
    it = plan.kpis.it_kw if plan.kpis else 0.0
    return [
        RegionPower(
            None,
            pue * it + _own_pue_kw(scenario, plan, None),
            scenario.power_available_kw(0) if scenario.power_arrival else None,
        )
    ]


def _own_pue_kw(scenario: Scenario, plan: Plan, index: int | None) -> float:
    """Σ (design-day PUE of its building − the scenario's) × kW over the racks and network racks
    standing in phase ``index`` (every rack without phases): what structures with a PUE of their own
    add to the facility load, kW (0 when none states one)."""
    base = scenario.arrival_pue
    pues = {b.id: scenario.arrival_pue_in(b.id) for b in scenario.site.buildings}
    if all(v == base for v in pues.values()):
        return 0.0
    types = scenario.catalog.by_id()
    racks = plan.racks if index is None else scenario.standing(plan.racks, index)
    designed = scenario.designed

    def drawn(r) -> float:  # with its back-end network where it has one
        t = types[r.rack_type]
        net = 0.0 if r.cluster in designed else scenario.allowance_kw(t)
        return scenario.rack_power_kw(t) + net

    out = sum((pues[r.building] - base) * drawn(r) for r in racks)
    tl = timeline(scenario)
    building_of = {r.id: b.id for b in scenario.site.buildings for h in b.halls for r in h.rows}
    for _, row, t in network_racks(scenario):
        if index is None or tl.row_on.get(row, 0) <= index:
            out += (pues[building_of[row]] - base) * scenario.rack_power_kw(t)
    return out
