"""The verifier's own count of a plan's figures (SPEC §10, §17): KPIs and costs, the objective
value, per-phase summaries and the order book, from the racks and the scenario alone, written apart
from the optimiser's :mod:`planner.plan.kpis`, :mod:`planner.rules.costs` and
:mod:`planner.plan.orders` (money, retirement, power: :mod:`planner.verifier.rules_recount`; designed
fabrics: :mod:`planner.verifier.fabric_recount`). Goodput per cluster (for $ per useful GPU-hour)
and the backup-power choice are the reliability model's (:func:`recount_kpis` takes them)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.schema import (
    BackupChoice,
    Kpis,
    LinkClass,
    Order,
    PhaseSummary,
    PlacedRack,
    Plan,
    RackType,
    Scenario,
)
from planner.verifier.fabric_recount import all_figures, chosen, design_for
from planner.verifier.rules_recount import (
    HOURS,
    flow,
    left_on_books,
    phase_index,
    planning_kw,
    retired_at,
    stands,
    start_years,
    structure_pue,
    structure_rate,
    worth,
)
from planner.verifier.rules_recount import (
    network_kw as network_allowance_kw,
)
from planner.verifier.site import placed_by


@dataclass
class _Sums:
    """Running sums over the racks (USD, kW, hours)."""

    gpus: int = 0
    racks: int = 0
    spares: int = 0
    retired: int = 0
    optics: int = 0
    kw: float = 0.0
    allowance_kw: float = 0.0
    facility_kw: float = 0.0
    """Σ kW × the annual PUE of its building, of what stands at the end."""
    max_kw: float = 0.0
    pflops: float = 0.0
    hbm_tb: float = 0.0
    storage_pb: float = 0.0
    storage_gbs: float = 0.0
    cable_m: float = 0.0
    capex: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("racks", "fabric", "links", "facility", "retrofits"), 0.0)
    )
    opex: float = 0.0
    tco: float = 0.0
    hours: float = 0.0
    hours_npv: float = 0.0
    useful_npv: float = 0.0
    removal: float = 0.0
    residual: float = 0.0
    depreciation: float = 0.0
    halls: set[str] = field(default_factory=set)
    own_build: float = 0.0
    """Facility build at structures' own rates, USD."""


def facility_usd(scenario: Scenario, kw: float, building: str | None = None) -> float:
    """Facility build for kW of critical IT in ``building`` (none when the site is leased): a
    structure's own rate where it has one, else the building rate."""
    c = scenario.costs
    own = structure_rate(scenario, building)
    per_mw = c.facility_usd_per_mw if own is None else own[0]
    return 0.0 if c.colocation_usd_per_kw_month is not None else per_mw * kw / 1000.0


def facility_life(scenario: Scenario, building: str | None) -> float | None:
    """Years the build of a position in ``building`` keeps book value over: a structure's own life
    where it has its own rate (the facility's when it states none), else the facility's."""
    own = structure_rate(scenario, building)
    life = None if own is None else own[1]
    return life if life is not None else scenario.costs.facility_life_years


def opex_usd(scenario: Scenario, kw: float, equipment_usd: float, pue: float) -> float:
    """A year of energy (kW × utilisation × PUE × 8,760 h × $/kWh), colocation and maintenance."""
    c = scenario.costs
    energy = kw * pue * c.average_utilisation * HOURS * c.energy_usd_per_kwh
    lease = 0.0 if c.colocation_usd_per_kw_month is None else 12.0 * c.colocation_usd_per_kw_month * kw
    return energy + lease + c.maintenance_share_per_year * equipment_usd


def _cable(scenario: Scenario, r: PlacedRack, t: RackType, picks: dict[str, str]) -> float:
    """Cable metres of a rack's links: every fabric link at the rack's cable length; a designed
    fabric with leaves in the rack sends only its uplinks out (⌈GPUs × NICs ÷ first oversubscription⌉)."""
    d = design_for(scenario, r.cluster, picks)
    if d is not None and d.leaf_in_rack and t.gpus and not r.spare:
        return math.ceil(t.gpus * d.nics_per_gpu / d.oversubscription[0]) * r.cable_length_m
    return t.links * r.cable_length_m


@dataclass
class _Rack:
    """One rack's terms: planning kW, link class, equipment USD and its start, end and retirement (years)."""

    kw: float
    link: LinkClass | None
    per_gpu: float
    links_usd: float
    equipment: float
    t0: float
    end: float
    retire: float | None
    life: object | None
    pue: float
    net: float
    """Its back-end network allowance, kW (none installed or on a designed fabric)."""


def _terms(scenario: Scenario, r: PlacedRack, t: RackType, picks: dict[str, str]) -> _Rack:
    designed = design_for(scenario, r.cluster, picks) is not None
    link: LinkClass | None = None
    if not (designed and t.gpus and not r.spare):  # a designed fabric's GPU links are the fabric's
        link = {c.id: c for c in scenario.site.fabric.link_classes}.get(r.link_class or "")
    per_gpu = 0.0 if designed else scenario.site.fabric.cost_usd_per_gpu
    links = t.links * link.cost_usd_per_link if link is not None and t.links else 0.0
    starts = start_years(scenario)
    at = phase_index(scenario).get(r.phase or "")
    life = scenario.service_life.get(r.rack_type)
    gone = retired_at(scenario, r.rack_type, r.phase) if life is not None else None
    retire = None if gone is None else starts[gone]
    h = scenario.costs.horizon_years
    return _Rack(
        kw=planning_kw(scenario, t),
        link=link,
        per_gpu=per_gpu,
        links_usd=links,
        equipment=t.capex_usd + t.gpus * per_gpu + links,
        t0=0.0 if r.existing or at is None else starts[at],
        end=h if retire is None else min(retire, h),
        retire=retire,
        life=life,
        pue=structure_pue(scenario, r.building, design_day=False)[0],
        net=0.0 if designed else network_allowance_kw(scenario, t),
    )


def _add_rack(
    s: _Sums, scenario: Scenario, r: PlacedRack, t: RackType, picks: dict[str, str], good: dict[str, float]
) -> None:
    """One rack's share of every sum (module docstring of :mod:`planner.verifier.rules_recount`)."""
    x = _terms(scenario, r, t, picks)
    _add_money(s, scenario, r, t, x, good)
    s.cable_m += _cable(scenario, r, t, picks)
    s.halls.add(r.hall)
    if x.retire is not None:  # gone by the last phase: none of what stands
        s.retired += 1
        return
    s.opex += opex_usd(scenario, x.kw + x.net, x.equipment, x.pue)
    if x.life is not None and not r.existing:
        s.depreciation += x.equipment / x.life.years
    s.racks += 1
    s.kw += x.kw
    s.allowance_kw += x.net
    s.facility_kw += (x.kw + x.net) * x.pue
    s.max_kw = max(s.max_kw, x.kw)
    if r.spare:
        s.spares += 1
    else:
        s.gpus += t.gpus
        s.pflops += t.gpus * t.tflops_bf16_per_gpu / 1000.0
        s.hbm_tb += t.gpus * t.hbm_gb_per_gpu / 1000.0
    s.storage_pb += t.storage_capacity_pb
    s.storage_gbs += t.storage_write_gb_per_s
    if x.link is not None and x.link.optical:
        s.optics += 2 * t.links


def _add_money(
    s: _Sums, scenario: Scenario, r: PlacedRack, t: RackType, x: _Rack, good: dict[str, float]
) -> None:
    """The rack's capex parts, TCO terms (capex, opex to its end, removal, residual) and GPU-hours."""
    h, rate = scenario.costs.horizon_years, scenario.costs.discount_rate
    build = facility_usd(scenario, x.kw + x.net, r.building)
    capex = 0.0 if r.existing else x.equipment + build
    life = x.life
    removal = life.removal_cost_usd if life is not None and x.retire is not None and x.retire < h else 0.0
    residual = 0.0
    if life is not None and not r.existing and (x.retire is None or x.retire >= h) and x.t0 < h:
        residual = x.equipment * max(0.0, 1.0 - (h - x.t0) / life.years)
    if not r.existing:  # its position's build, with a facility life, stays on the books
        residual += left_on_books(build, x.t0, facility_life(scenario, r.building), h)
    s.tco += capex * worth(x.t0, rate) + opex_usd(scenario, x.kw + x.net, x.equipment, x.pue) * flow(
        x.t0, x.end, rate
    )
    s.tco += removal * worth(x.retire or 0.0, rate) - residual * worth(h, rate)
    s.removal += removal
    s.residual += residual
    if not r.spare:
        s.hours += t.gpus * HOURS * max(0.0, x.end - x.t0)
        s.hours_npv += t.gpus * HOURS * flow(x.t0, x.end, rate)
        s.useful_npv += t.gpus * HOURS * flow(x.t0, x.end, rate) * good.get(r.cluster, 1.0)
    if not r.existing:
        s.capex["racks"] += t.capex_usd
        s.capex["fabric"] += t.gpus * x.per_gpu
        s.capex["links"] += x.links_usd
        s.capex["facility"] += build
        s.own_build += build if structure_rate(scenario, r.building) is not None else 0.0


def _parts(scenario: Scenario, build: float, own: float) -> dict[str, float]:
    """Shell, electrical, mechanical and backup shares of the build at the facility rate; structures'
    own builds whole."""
    split = scenario.costs.facility_split
    if split is None:
        return {}
    rated = build - own
    out = {
        "shell": rated * split.shell,
        "electrical": rated * split.electrical,
        "mechanical": rated * split.mechanical,
        "backup": rated * split.backup,
    }
    if own:
        out["structures"] = own
    return out


def network_kw(scenario: Scenario) -> tuple[float, float]:
    """(planning kW, kW × the annual PUE of its building) of every pod's network rack (they stand in
    every plan)."""
    types = scenario.catalog.by_id()
    it = facility = 0.0
    for b in scenario.site.buildings:
        pue = structure_pue(scenario, b.id, design_day=False)[0]
        for hall in b.halls:
            for p in hall.pods:
                if p.network_rack_type is not None and p.network_rack_type in types:
                    kw = planning_kw(scenario, types[p.network_rack_type])
                    it, facility = it + kw, facility + kw * pue
    return it, facility


def retrofit_usd(scenario: Scenario, bought: Iterable[tuple[str, str | None]]) -> tuple[float, float, float]:
    """(capex, discounted capex less discounted residual, residual) of the retrofits bought, each at
    its phase's start; a structure with a life keeps its book value at the horizon."""
    by_id = {x.id: x for x in scenario.retrofits}
    starts, at = start_years(scenario), phase_index(scenario)
    h, rate = scenario.costs.horizon_years, scenario.costs.discount_rate
    capex = npv = residual = 0.0
    for i, p in bought:
        if i not in by_id:
            continue
        x = by_id[i]
        y = starts[at[p]] if p in at else 0.0
        life = x.effect.life_years if x.effect.kind == "build_structure" else None
        kept = left_on_books(x.cost_usd, y, life, h)
        capex += x.cost_usd
        npv += x.cost_usd * worth(y, rate) - kept * worth(h, rate)
        residual += kept
    return capex, npv, residual


def recount_kpis(
    scenario: Scenario,
    racks: list[PlacedRack],
    bought: list[tuple[str, str | None]],
    picks: dict[str, str],
    fabric_racks: int = 0,
    good: dict[str, float] | None = None,
    backup: list[BackupChoice] | None = None,
    stranded_kw: float = 0.0,
    grid: tuple[float, float] = (0.0, 0.0),
) -> Kpis:
    """Every KPI of placed racks and retrofits bought (``picks``: cluster → fabric design chosen;
    ``fabric_racks``: the designed fabrics' network racks placed; ``good``: goodput per cluster;
    ``backup``: the backup power chosen per building; ``stranded_kw``: the stranded power found;
    ``grid``: §21's storage capex and TCO, :func:`planner.verifier.grid_recount.grid_costs`)."""
    types = scenario.catalog.by_id()
    good = good or {}
    backup = backup or []
    s = _Sums()
    for r in racks:
        if r.rack_type in types:
            _add_rack(s, scenario, r, types[r.rack_type], picks, good)
    fabric = list(all_figures(scenario, racks, picks).values())
    white = _add_white_space(s, scenario, fabric, bought)
    return _as_kpis(s, scenario, fabric, white, backup, fabric_racks, stranded_kw, grid)


def per(x: float, y: float) -> float:
    """x ÷ y, 0 when y is 0."""
    return x / y if y else 0.0


def _as_kpis(
    s: _Sums,
    scenario: Scenario,
    fabric: list,
    white: float,
    backup: list,
    fabric_racks: int,
    stranded_kw: float,
    grid: tuple[float, float] = (0.0, 0.0),
) -> Kpis:
    """The sums as KPIs, with the backup power chosen (its capex spent at the start) and §21's
    storage and TCO (``grid``)."""
    fabric_kw = sum(z.kw for z in fabric)
    backup_usd = sum(c.capex_usd for c in backup)
    tco = s.tco + backup_usd + grid[1]
    it = s.kw + s.allowance_kw + white
    area = {hall.id: hall.floor_area_m2 for b in scenario.site.buildings for hall in b.halls}
    floor = sum(area.get(x, 0.0) for x in s.halls)
    mw = it / 1000.0
    useful = (
        backup[0].usd_per_useful_gpu_hour[backup[0].design] if backup else per(tco - grid[1], s.useful_npv)
    )
    if grid[1] and tco - grid[1]:
        useful *= tco / (tco - grid[1])  # the same useful hours
    capex = sum(s.capex.values()) + backup_usd + grid[0]
    return Kpis(
        gpus=s.gpus,
        racks=s.racks,
        spare_racks=s.spares,
        pflops_bf16=s.pflops,
        it_kw=it,
        racks_kw=s.kw,
        network_kw=white - fabric_kw,
        allowance_kw=s.allowance_kw,
        facility_kw=s.facility_kw,
        gpus_per_mw=per(s.gpus, mw),
        pflops_per_mw=per(s.pflops, mw),
        avg_kw_per_rack=per(s.kw, s.racks),
        max_kw_per_rack=s.max_kw,
        gpus_per_m2=per(s.gpus, floor),
        hbm_tb=s.hbm_tb,
        hbm_gb_per_gpu=per(s.hbm_tb * 1000.0, s.gpus),
        storage_pb=s.storage_pb,
        storage_write_gb_per_s=s.storage_gbs,
        switches=sum(sum(z.switches) for z in fabric),
        optics=s.optics + sum(z.optics for z in fabric),
        fabric_kw=fabric_kw,
        fabric_racks=fabric_racks,
        fabric_capex_usd=s.capex["fabric"],
        fabric_usd_per_gpu=per(s.capex["fabric"], s.gpus),
        capex_racks_usd=s.capex["racks"],
        capex_fabric_usd=s.capex["fabric"],
        capex_links_usd=s.capex["links"],
        capex_facility_usd=s.capex["facility"],
        capex_facility_parts_usd=_parts(scenario, s.capex["facility"], s.own_build),
        capex_retrofits_usd=s.capex["retrofits"],
        capex_backup_usd=backup_usd,
        capex_storage_usd=grid[0],
        capex_usd=capex,
        opex_usd_per_year=s.opex,
        tco_usd=tco,
        removal_usd=s.removal,
        residual_value_usd=s.residual,
        depreciation_usd_per_year=s.depreciation,
        retired_racks=s.retired,
        gpu_hours=s.hours,
        gpu_hours_npv=s.hours_npv,
        usd_per_gpu_hour=per(tco, s.hours_npv),
        usd_per_useful_gpu_hour=useful,
        cable_m=s.cable_m,
        stranded_kw=stranded_kw,
    )


def _add_white_space(s: _Sums, scenario: Scenario, fabric: list, bought) -> float:
    """The network racks and designed fabrics (standing from the start to the horizon: facility,
    equipment, energy and maintenance) and the retrofits bought; their kW."""
    fabric_kw = sum(z.kw for z in fabric)
    designed_usd = sum(z.capex_usd for z in fabric)
    net, net_facility = network_kw(scenario)
    white = net + fabric_kw
    s.facility_kw += net_facility + fabric_kw * scenario.pue  # designed fabrics at the scenario's PUE
    white_opex = opex_usd(scenario, net, 0.0, net_facility / net if net else scenario.pue)
    white_opex += opex_usd(scenario, fabric_kw, designed_usd, scenario.pue)
    retro, retro_npv, retro_kept = retrofit_usd(scenario, bought)
    s.capex["fabric"] += designed_usd
    s.capex["facility"] += facility_usd(scenario, white)
    s.capex["retrofits"] = retro
    s.opex += white_opex
    h, rate = scenario.costs.horizon_years, scenario.costs.discount_rate
    white_kept = left_on_books(facility_usd(scenario, white), 0.0, scenario.costs.facility_life_years, h)
    s.tco += facility_usd(scenario, white) - white_kept * worth(h, rate)
    s.tco += designed_usd + white_opex * flow(0.0, h, rate) + retro_npv
    s.residual += white_kept + retro_kept
    return white


def recount_objective(
    scenario: Scenario,
    racks: list[PlacedRack],
    bought: list[tuple[str, str | None]],
    picks: dict[str, str],
    grid: tuple[float, float] = (0.0, 0.0),
) -> float:
    """The objective's figure: capex or TCO as counted (before backup power; with §21's ``grid``
    costs); GPUs (PFLOPS) of the racks placed (not installed ones, not spares), each × the phases it
    stands in when phased."""
    if scenario.objective in ("min_capex", "min_tco"):
        k = recount_kpis(scenario, racks, bought, picks, grid=grid)
        return k.capex_usd if scenario.objective == "min_capex" else k.tco_usd
    types = scenario.catalog.by_id()
    total = 0.0
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or r.existing or r.spare:
            continue
        phases = (
            sum(1 for i in range(len(scenario.phases)) if stands(scenario, r, i)) if scenario.phases else 1
        )
        total += phases * (
            t.gpus if scenario.objective == "max_gpus" else t.gpus * t.tflops_bf16_per_gpu / 1000.0
        )
    return total


def recount_phases(
    scenario: Scenario, plan: Plan, phase_usage: dict, backup_usd: float = 0.0
) -> list[PhaseSummary]:  # noqa: C901 - one pass per phase over every part of its capex
    """Per phase: GPUs and racks standing, racks new in it, IT kW (standing racks, the network
    racks of rows online and the designed fabrics of the racks placed by then), capex spent in it
    (racks placed: equipment — at the site's fabric cost per GPU outside a designed fabric — and
    facility; the network racks' facility as their row comes online; what each designed fabric
    grows by in it: its switches, links and their facility; retrofits bought; the backup power
    chosen, ``backup_usd``, in the first), and its three tightest limits."""
    types = scenario.catalog.by_id()
    at = phase_index(scenario)
    online = {
        r.id: max(at.get(hall.online_phase or "", 0), at.get(r.online_phase or "", 0))
        for b in scenario.site.buildings
        for hall in b.halls
        for r in hall.rows
    }
    pods = [
        (p.network_rack.row, types[p.network_rack_type])
        for b in scenario.site.buildings
        for hall in b.halls
        for p in hall.pods
        if p.network_rack_type is not None and p.network_rack_type in types
    ]
    cost = {x.id: x.cost_usd for x in scenario.retrofits}
    picks = chosen(plan)
    span = {cid for cid, z in all_figures(scenario, plan.racks, picks).items() if z.region_links}
    fabric_then = (0.0, 0.0)  # (capex, kW) of the designed fabrics by the phase before
    out = []
    for i, ph in enumerate(scenario.phases):
        every = [r for r in plan.racks if stands(scenario, r, i)]
        up = [r for r in every if r.rack_type in types]
        new = [r for r in plan.racks if not r.existing and r.phase == ph.id]
        figs = all_figures(scenario, placed_by(scenario, plan.racks, i), picks, span).values()
        fabric_now = (sum(z.capex_usd for z in figs), sum(z.kw for z in figs))
        kw = sum(
            planning_kw(scenario, types[r.rack_type]) + _terms(scenario, r, types[r.rack_type], picks).net
            for r in up
        )
        kw += sum(planning_kw(scenario, t) for row, t in pods if online.get(row, 0) <= i) + fabric_now[1]
        spent = sum(cost.get(b.id, 0.0) for b in plan.retrofits if b.phase == ph.id) + (
            backup_usd if i == 0 else 0
        )
        spent += facility_usd(
            scenario, sum(planning_kw(scenario, t) for row, t in pods if online.get(row, 0) == i)
        )
        spent += fabric_now[0] - fabric_then[0] + facility_usd(scenario, fabric_now[1] - fabric_then[1])
        fabric_then = fabric_now
        spent += _storage_bought(scenario, plan, i)
        for r in new:
            t = types.get(r.rack_type)
            if t is not None:
                x = _terms(scenario, r, t, picks)
                spent += x.equipment + facility_usd(scenario, x.kw + x.net, r.building)
        tight = sorted(
            (u for u in phase_usage.get(ph.id, []) if u.limit > 0),
            key=lambda u: (-u.worst_share, u.kind, u.id),
        )[:3]
        out.append(
            PhaseSummary(
                phase=ph.id,
                start=ph.start.isoformat(),
                gpus=sum(types[r.rack_type].gpus for r in up if not r.spare),
                racks=len(every),
                new_racks=len(new),
                it_kw=round(kw, 6),
                capex_usd=round(spent, 2),
                tightest=[f"{u.id} {u.worst_share:.1%}" for u in tight],
            )
        )
    return out


def _storage_bought(scenario: Scenario, plan: Plan, i: int) -> float:
    """Energy storage bought in the phase with index i (§21), USD: its MW over the phase before."""
    ps = scenario.power_stability
    if ps is None or plan.grid is None or i >= len(plan.grid.phases):
        return 0.0
    now = plan.grid.phases[i].storage_mw
    before = plan.grid.phases[i - 1].storage_mw if i else {}
    per = ps.storage_usd_per_mw + ps.storage_hours * ps.storage_usd_per_mwh
    return per * sum(x - before.get(b, 0.0) for b, x in now.items())


def recount_orders(scenario: Scenario, plan: Plan) -> list[Order]:
    """The order book: a rack placed in phase p (not installed) is ordered lead phases earlier (not
    before the first); a retrofit bought in q stands lead phases later (not after the last); a power
    step's long-lead plant lead phases before its power arrives (before the first phase, named so).
    Sorted by phase ordered, item, ID, phase standing."""
    ids = [p.id for p in scenario.phases]
    at = phase_index(scenario)
    books: Counter = Counter()
    for r in plan.racks:
        if not r.existing and r.phase in at:
            books[
                "rack",
                r.rack_type,
                ids[max(0, at[r.phase] - scenario.lead_phases.get(r.rack_type, 0))],
                r.phase,
            ] += 1
    lead = {x.id: x.lead_phases for x in scenario.retrofits}
    for b in plan.retrofits:
        if b.phase in at and b.id in lead:
            books["retrofit", b.id, b.phase, ids[min(len(ids) - 1, at[b.phase] + lead[b.id])]] += 1
    when = {k: at[k[2]] for k in books}
    for i, step in enumerate(scenario.power_arrival):  # long-lead plant, ordered ahead of its power
        if step.lead_phases > 0 and ids:
            arrives = at.get(step.phase or "", 0)
            back = arrives - step.lead_phases
            name = f"power_arrival[{i}]: {step.plant}" if step.plant else f"power_arrival[{i}]"
            early = f"before {ids[0]} ({-back} phase{'s' if back < -1 else ''})"
            key = ("power", name, ids[back] if back >= 0 else early, ids[arrives])
            books[key] += 1
            when[key] = back
    rank = {"rack": 0, "retrofit": 1, "power": 2}
    keys = sorted(books, key=lambda k: (when[k], rank[k[0]], k[1], at[k[3]]))
    return [Order(item=k[0], id=k[1], ordered=k[2], stands=k[3], count=books[k]) for k in keys]
