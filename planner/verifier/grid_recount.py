"""§21 checked from the plan alone: each cluster's synchronous swing per phase against what the
sources arrived accept after the plan's storage and floors; the plan's dispatch against the energy
its racks draw and its sources deliver; emissions and design-day water within their limits; every
figure of the plan's grid report and its costs recounted; N-1 while a maintained node is out.

Own counts throughout (planning power, PUE per structure, discounting): nothing of the optimiser's.
"""

from __future__ import annotations

from collections import defaultdict

from planner.enums import LimitKind
from planner.schema import GridPhase, GridReport, Plan, Scenario, Usage
from planner.verifier.capacity import feed_shares, row_loads
from planner.verifier.report import TOL, VerifyReport, fmt
from planner.verifier.rules_recount import flow, left_on_books, network_kw, planning_kw, start_years, worth
from planner.verifier.site import PhaseState, SiteView, network_load

HOURS = 8760.0
MW_TOL = 1e-5
"""MW (and MWh per year, t per year, L/s) a stated figure may be off by."""


def _trough(scenario: Scenario, t) -> float:
    if t.trough_share is not None:
        return t.trough_share
    return scenario.power_stability.trough_share if scenario.power_stability is not None else 1.0


def _accepted(scenario: Scenario, index: int) -> float:
    """min(ramp × seconds, range) of the site and of every step arrived by the phase, MW."""
    ps = scenario.power_stability
    at = {p.id: i for i, p in enumerate(scenario.phases)}
    total = min(ps.ramp_mw_per_s * ps.swing_s, ps.dynamic_range_mw)
    for step in scenario.power_arrival:
        if at.get(step.phase, 0) <= index:
            total += min(step.ramp_mw_per_s * ps.swing_s, step.dynamic_range_mw)
    return total


def _claimed(plan: Plan, st: PhaseState) -> GridPhase:
    """The plan's grid figures for a phase (an empty one when it states none)."""
    if plan.grid is not None:
        for g in plan.grid.phases:
            if g.phase == st.id:
                return g
    return GridPhase(phase=st.id)


def swing_checks(
    plan: Plan, scenario: Scenario, rep: VerifyReport, st: PhaseState, usage: bool = False
) -> None:
    """For every cluster: Σ_b max(0, its swing in b − storage_b − floor_b) ≤ the swing accepted then;
    storage and floors only where allowed; storage never falls."""
    ps = scenario.power_stability
    if ps is None:
        return
    g = _claimed(plan, st)
    _mitigation_checks(plan, scenario, rep, st, g)
    store = g.storage_mw if ps.storage else {}
    floor = g.floor_mw if ps.floor else {}
    accepted = _accepted(scenario, st.index)
    swings = _swings(scenario, st)
    if plan.grid is not None:
        top = max((sum(per.values()) for per in swings.values()), default=0.0)
        _figure(rep, st, "swing_mw", g.swing_mw, top)
        _figure(rep, st, "accepted_mw", g.accepted_mw, accepted)
        if top > 0 and abs(sum(swings.get(g.swing_cluster, {}).values()) - top) > MW_TOL:
            rep.add(
                "grid swing_cluster",
                "claim",
                f"{g.swing_cluster or 'none'} is not the largest swing{st.where}",
            )
    for cid, per in sorted(swings.items()):
        left = sum(max(0.0, mw - store.get(b, 0.0) - floor.get(b, 0.0)) for b, mw in per.items())
        if usage and not ps.storage and not ps.floor:  # with storage or a floor it limits no rack
            rep.usage.append(
                Usage(kind=LimitKind.swing, id=cid, value=round(left, 9), limit=accepted, unit="MW")
            )
        if left > accepted + MW_TOL:
            rep.add(
                f"swing {cid}",
                "swing",
                f"{fmt(sum(per.values()))} MW swing, {fmt(left)} MW left after storage and floors, exceeds "
                f"the {fmt(accepted)} MW the power sources accept{st.where}",
            )


def _swings(scenario: Scenario, st: PhaseState) -> dict[str, dict[str, float]]:
    """Cluster → building → the swing of its GPU racks standing (hot spares idle), MW."""
    types = scenario.catalog.by_id()
    swing: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in st.racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus and not r.spare:
            swing[r.cluster][r.building] += planning_kw(scenario, t) * (1.0 - _trough(scenario, t)) / 1000.0
    return swing


def _mitigation_checks(
    plan: Plan, scenario: Scenario, rep: VerifyReport, st: PhaseState, g: GridPhase
) -> None:
    """Storage and floors only where the scenario allows them; storage never falls."""
    ps = scenario.power_stability
    if g.storage_mw and not ps.storage:
        rep.add("grid storage", "swing", f"storage stated{st.where}, but the scenario allows none")
    if g.floor_mw and not ps.floor:
        rep.add("grid floor", "swing", f"a power floor stated{st.where}, but the scenario allows none")
    if not st.index or plan.grid is None:
        return
    before = _claimed(plan, _prev(scenario, st))
    for b, x in before.storage_mw.items():
        if g.storage_mw.get(b, 0.0) < x - MW_TOL:
            what = f"storage falls from {fmt(x)} MW to {fmt(g.storage_mw.get(b, 0.0))} MW{st.where}"
            rep.add(f"grid storage {b}", "swing", what)


def _prev(scenario: Scenario, st: PhaseState) -> PhaseState:
    return PhaseState(st.index - 1, scenario.phases[st.index - 1].id, [])


def it_by_building(scenario: Scenario, site: SiteView, st: PhaseState) -> dict[str | None, float]:
    """IT kW standing per building: racks with their back-end network outside a designed fabric, the
    pods' network racks of rows online; None: the designed fabrics (at the scenario's PUE)."""
    types = scenario.catalog.by_id()
    designed = {c.id for c in scenario.clusters if c.fabrics}
    out: dict[str | None, float] = defaultdict(float)
    for r in st.racks:
        t = types.get(r.rack_type)
        if t is not None:
            out[r.building] += planning_kw(scenario, t) + (
                0.0 if r.cluster in designed else network_kw(scenario, t)
            )
    for row, t in network_load(scenario, site):
        if site.on.get(row, 0) <= st.index:
            out[site.rows[row][0]] += planning_kw(scenario, t)
    out[None] += sum(st.fabric_kw.values())
    return out


def _structure(scenario: Scenario, building: str | None):
    for r in scenario.retrofits:
        if r.effect.kind == "build_structure" and r.effect.building == building:
            return r.effect
    return None


def _pue(scenario: Scenario, b: str | None) -> float:
    e = _structure(scenario, b)
    return e.pue if e is not None and e.pue is not None else scenario.pue


def _wue(scenario: Scenario, b: str | None) -> float:
    e = _structure(scenario, b)
    if e is not None and e.wue_l_per_kwh is not None:
        return e.wue_l_per_kwh
    return scenario.water.wue_l_per_kwh if scenario.water is not None else 0.0


def _peak(scenario: Scenario, b: str | None) -> float:
    e = _structure(scenario, b)
    if e is not None and e.peak_water_l_per_s_per_mw is not None:
        return e.peak_water_l_per_s_per_mw
    return scenario.water.peak_l_per_s_per_mw if scenario.water is not None else 0.0


def _source_mw(scenario: Scenario, index: int) -> dict[str, float]:
    at = {p.id: i for i, p in enumerate(scenario.phases)}
    out: dict[str, float] = defaultdict(float)
    for step in scenario.power_arrival:
        if at.get(step.phase, 0) <= index:
            if step.interconnect_mw > 0:
                out[step.power_source or "grid"] += step.interconnect_mw
            if step.generation_mw > 0:
                out[step.power_source or "onsite"] += step.generation_mw
    return out


def _intensity(scenario: Scenario, src: str, index: int) -> float:
    s = scenario.power_sources[src]
    out = s.t_co2_per_mwh
    for p in scenario.phases[: index + 1]:
        out = s.t_co2_per_mwh_by_phase.get(p.id, out)
    return out


def energy_checks(
    plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport, st: PhaseState, usage: bool = False
) -> None:
    """Dispatch: Σ sources = the facility energy the racks draw; each source within its MW arrived ×
    8,760 h × capacity factor; emissions within the limit. Water: design-day draw within the limit.
    The plan's stated energy, emissions and water figures are recounted."""
    if not scenario.power_sources and scenario.water is None:
        return
    g = _claimed(plan, st)
    it = it_by_building(scenario, site, st)
    k = scenario.costs.average_utilisation * HOURS / 1000.0
    if scenario.power_sources:
        _dispatch_checks(scenario, rep, st, g, sum(kw * k * _pue(scenario, b) for b, kw in it.items()), usage)
    m3 = sum(kw * k * _wue(scenario, b) for b, kw in it.items())
    peak = sum(kw / 1000.0 * _peak(scenario, b) for b, kw in it.items())
    if plan.grid is not None:
        _figure(rep, st, "water_m3_per_year", g.water_m3_per_year, m3)
        _figure(rep, st, "peak_water_l_per_s", g.peak_water_l_per_s, peak)
    lim = scenario.budgets.peak_water_l_per_s
    if lim is not None and usage:
        rep.usage.append(
            Usage(kind=LimitKind.water, id="region", value=round(peak, 9), limit=lim, unit="L/s")
        )
    if lim is not None and peak > lim + MW_TOL:
        what = f"{fmt(peak)} L/s on the design day exceeds {fmt(lim)}{st.where}"
        rep.add("budgets.peak_water_l_per_s", "water", what)


def _dispatch_checks(
    scenario: Scenario, rep: VerifyReport, st: PhaseState, g: GridPhase, need: float, usage: bool
) -> None:
    """The plan's energy per source against what the racks draw (``need``, MWh a year) and what each
    source delivers; emissions recounted and within the limit."""
    got = sum(g.energy_mwh_per_year.values())
    if abs(got - need) > max(MW_TOL, 1e-6 * need):
        what = f"sources give {fmt(got)} MWh a year, the racks draw {fmt(need)}{st.where}"
        rep.add("grid energy", "energy", what)
    arrived = _source_mw(scenario, st.index)
    co2 = 0.0
    for src, y in sorted(g.energy_mwh_per_year.items()):
        if src not in scenario.power_sources:
            rep.add(f"grid energy {src}", "energy", f"unknown source{st.where}")
            continue
        cap = arrived.get(src, 0.0) * HOURS * scenario.power_sources[src].capacity_factor
        if y > cap + max(MW_TOL, 1e-6 * cap) or y < -MW_TOL:
            rep.add(f"source {src}", "energy", f"{fmt(y)} MWh a year drawn, {fmt(cap)} available{st.where}")
        co2 += y * _intensity(scenario, src, st.index)
    _figure(rep, st, "t_co2_per_year", g.t_co2_per_year, co2)
    cap_t = scenario.budgets.t_co2_per_year
    if cap_t is not None and usage:
        rep.usage.append(
            Usage(kind=LimitKind.emissions, id="region", value=round(co2, 9), limit=cap_t, unit="t/yr")
        )
    if cap_t is not None and co2 > cap_t + max(MW_TOL, 1e-6 * cap_t):
        what = f"{fmt(co2)} t CO2 a year exceeds {fmt(cap_t)}{st.where}"
        rep.add("budgets.t_co2_per_year", "emissions", what)


def _figure(rep: VerifyReport, st: PhaseState, name: str, got: float, want: float) -> None:
    if abs(got - want) > max(MW_TOL, 1e-6 * abs(want)):
        rep.add(f"grid {name}", "claim", f"plan says {fmt(got)}, the racks give {fmt(want)}{st.where}")


def grid_costs(scenario: Scenario, grid: GridReport | None) -> tuple[float, float]:
    """(storage capex, TCO of §21) of a plan's grid report, USD, by the verifier's own discounting:
    storage bought at its phase's start less its book value at the horizon; per year of each phase
    (discounted), the floors' energy, the storage's losses, the sources' price over the scenario's
    and the carbon price."""
    if grid is None:
        return 0.0, 0.0
    s = scenario
    h, r = s.costs.horizon_years, s.costs.discount_rate
    starts = start_years(s) if s.phases else [0.0]
    ends = [*starts[1:], h]
    price = s.costs.energy_usd_per_kwh * 1000.0
    carbon = s.costs.carbon_usd_per_t or 0.0
    ps = s.power_stability
    capex = tco = 0.0
    before: dict[str, float] = {}
    for i, g in enumerate(grid.phases):
        w = flow(min(starts[i], h), h, r) - flow(min(ends[i], h), h, r)
        if ps is not None:
            hours = ps.trough_hours_share * HOURS
            per = ps.storage_usd_per_mw + ps.storage_hours * ps.storage_usd_per_mwh
            for b, x in g.storage_mw.items():
                usd = per * (x - before.get(b, 0.0))
                capex += usd
                tco += usd * worth(starts[i], r) - left_on_books(
                    usd, starts[i], ps.storage_life_years, h
                ) * worth(h, r)
                tco += w * hours * (1 - ps.storage_round_trip) * price * x
            tco += sum(w * hours * price * _pue(s, b) * x for b, x in g.floor_mw.items())
            before = dict(g.storage_mw)
        for src, y in g.energy_mwh_per_year.items():
            p = s.power_sources[src].usd_per_mwh if src in s.power_sources else None
            tco += w * y * ((p if p is not None else price) - price)
            tco += w * carbon * y * (_intensity(s, src, i) if src in s.power_sources else 0.0)
    return capex, tco


def report_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """The grid report's totals recounted: storage capex, TCO, emissions and water over the horizon;
    a report where the scenario asks for one."""
    wants = scenario.power_stability is not None or bool(scenario.power_sources) or scenario.water is not None
    if plan.grid is None:
        if wants and plan.racks and plan.kpis is not None:
            rep.add(
                "grid", "claim", "the scenario counts swings, energy sources or water, the plan states none"
            )
        return
    capex, tco = grid_costs(scenario, plan.grid)
    s = scenario
    h = s.costs.horizon_years
    starts = start_years(s) if s.phases else [0.0]
    span = [max(0.0, min(b, h) - min(a, h)) for a, b in zip(starts, [*starts[1:], h], strict=True)]
    t_co2 = sum(g.t_co2_per_year * span[i] for i, g in enumerate(plan.grid.phases))
    water = sum(g.water_m3_per_year * span[i] for i, g in enumerate(plan.grid.phases))
    for name, got, want in (
        ("storage_capex_usd", plan.grid.storage_capex_usd, capex),
        ("tco_usd", plan.grid.tco_usd, tco),
        ("t_co2", plan.grid.t_co2, t_co2),
        ("water_m3", plan.grid.water_m3, water),
    ):
        if abs(got - want) > max(0.01, 1e-6 * abs(want)):
            rep.add(
                f"grid {name}",
                "claim",
                f"plan says {fmt(got)}, its storage, floors and dispatch give {fmt(want)}",
            )
    if len(plan.grid.phases) != max(1, len(s.phases)):
        rep.add(
            "grid phases",
            "claim",
            f"{len(plan.grid.phases)} phases stated, the scenario has {max(1, len(s.phases))}",
        )


def maintenance_checks(scenario: Scenario, site: SiteView, rep: VerifyReport, st: PhaseState) -> None:
    """Concurrent maintainability (§21): with each node of a maintained class out and any other
    node failing, every surviving node within its usable kW (rows left with no feed drop)."""
    if not scenario.maintenance:
        return
    loads = row_loads(st.racks, scenario, site, st)
    gone: set[str] = set()
    for v in st.offline:
        if v in site.nodes:
            gone |= site.down(v)
    usable = {nid: node.usable_kw + st.node_add.get(nid, 0.0) for nid, node in site.nodes.items()}
    for mid, fid, out in _maintenance_pairs(scenario, site, gone):
        dead = gone | out | site.down(fid)
        load: dict[str, float] = defaultdict(float)
        for row_id, kw in loads.items():
            for v, x in (feed_shares(kw, site.rows[row_id][2].feeds, dead, site) or {}).items():
                load[v] += x
        for v, kw in load.items():
            if kw > usable[v] + TOL:
                what = (
                    f"load {fmt(kw)} kW exceeds {fmt(usable[v])} kW while {mid} is maintained and {fid} fails"
                )
                rep.add(v, "power maintenance", what + st.where)


def _maintenance_pairs(scenario: Scenario, site: SiteView, gone: set[str]) -> list[tuple[str, str, set[str]]]:
    """(node out for maintenance, another node that can fail, the first's subtree) for every maintained
    node online."""
    kept = {
        nid: site.down(nid)
        for nid, node in site.nodes.items()
        if nid not in gone
        and any(
            m.kind == node.kind and (not m.buildings or site.node_building.get(nid) in m.buildings)
            for m in scenario.maintenance
        )
    }
    return [
        (mid, fid, out)
        for mid, out in kept.items()
        for fid, fnode in site.nodes.items()
        if fid != mid and fnode.can_fail and fid not in gone and fid not in out
    ]
