"""KPIs and costs of a placement (§10); the cost formulas themselves are in :mod:`planner.rules.costs`.

- gpus = Σ rack GPUs; racks = number of placed racks (existing ones included).
- pflops_bf16 = Σ GPUs × dense BF16 TFLOPS per GPU / 1000.
- racks_kw = Σ planning power per rack (rated, capped GPUs, × power_budget_ratio);
  network_kw = Σ planning power of every pod's network rack (they stand in every plan);
  it_kw = racks_kw + network_kw; facility_kw = it_kw × PUE.
- hbm_tb = Σ GPUs × HBM per GPU / 1000; hbm_gb_per_gpu = hbm_tb × 1000 / gpus.
- storage_pb, storage_write_gb_per_s = Σ over storage racks.
- gpus_per_mw = gpus / (it_kw / 1000); pflops_per_mw likewise.
- avg_kw_per_rack = racks_kw / racks; max_kw_per_rack = max rack planning power.
- gpus_per_m2 = gpus / Σ floor area of halls holding at least one rack.
- capex (placed racks only; existing racks are sunk): racks, fabric and links (equipment,
  :func:`planner.rules.costs.rack_capex_usd`), facility (planning kW of the placed racks and of the
  network racks × facility build per kW, none when leased), retrofits bought; capex_usd = the sum.
- opex_usd_per_year: energy, colocation and maintenance of everything standing at full build-out.
- tco_usd: net present value over the horizon (each rack from its phase's start; network racks
  and existing racks from the start); gpu_hours and usd_per_gpu_hour = tco_usd ÷ gpu_hours.
- cable_m = Σ rack links × cable length.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from planner.enums import LimitKind
from planner.input.site_index import fits, index_site, network_racks
from planner.rules.costs import (
    FACILITY_USD_PER_KW,  # noqa: F401 - re-exported
    annuity,
    build_npv_usd,
    fabric_usd,
    facility_usd,
    lifecycle,
    links_usd,
    opex_usd_per_year,
    phase_years,
    rack_capex_usd,
    rack_cost,
    structure_life,
)
from planner.rules.fabric_sizing import design_of, fabric_sizes, spanning_clusters
from planner.rules.reliability import cluster_goodput
from planner.schema import BackupChoice, Kpis, NetworkRack, PhaseSummary, PlacedRack, Scenario


def retrofit_costs(
    scenario: Scenario, bought: Iterable[tuple[str, str | None]]
) -> tuple[float, float, float]:
    """(capex, NPV, residual) of the retrofits bought: (retrofit ID, phase) pairs; a structure's
    residual value at the horizon taken off its NPV (:func:`planner.rules.costs.build_npv_usd`)."""
    by_id = {r.id: r for r in scenario.retrofits}
    years = phase_years(scenario)
    capex = npv = residual = 0.0
    for rid, phase in bought:
        r = by_id.get(rid)
        if r is not None:
            capex += r.cost_usd
            v, left = build_npv_usd(r.cost_usd, years.get(phase, 0.0), structure_life(r), scenario.costs)
            npv += v
            residual += left
    return capex, npv, residual


@dataclass
class _Acc:
    """Running sums of a placement's KPIs (USD, kW, hours)."""

    gpus: int = 0
    n: int = 0
    spares: int = 0
    optics: int = 0
    retired: int = 0
    racks_kw: float = 0.0
    allowance_kw: float = 0.0
    facility_kw: float = 0.0
    pflops: float = 0.0
    max_kw: float = 0.0
    capex_racks: float = 0.0
    capex_links: float = 0.0
    capex_fabric: float = 0.0
    hbm_tb: float = 0.0
    storage_pb: float = 0.0
    storage_gbs: float = 0.0
    facility: float = 0.0
    facility_own: float = 0.0
    """Of ``facility``: the build at structures' own rates."""
    opex: float = 0.0
    tco: float = 0.0
    hours: float = 0.0
    hours_npv: float = 0.0
    useful_npv: float = 0.0
    removal: float = 0.0
    residual: float = 0.0
    depreciation: float = 0.0


def compute_kpis(
    scenario: Scenario,
    racks: Iterable[PlacedRack],
    bought: Iterable[tuple[str, str | None]] = (),
    chosen: dict[str, str] | None = None,
    network: Iterable[NetworkRack] = (),
) -> Kpis:
    """KPIs of placed racks (and retrofits bought) under a scenario (formulas in the module docstring).
    ``chosen``: cluster → fabric design (the plan's choice where a cluster allows several). Racks
    alike in type, link class, phase, cluster and standing cost the same: each kind is costed once."""
    racks = list(racks)
    design = {c.id: design_of(scenario, c, chosen or {}) for c in scenario.clusters}
    designed = {cid for cid, d in design.items() if d is not None}
    kinds, cable_m, halls_used = _kinds(scenario, racks, design)
    acc = _Acc()
    good = cluster_goodput(scenario, racks)
    years = phase_years(scenario)
    for kind, k in kinds.items():
        _add_kind(acc, scenario, kind, k, designed, years, good)
    sizes = fabric_sizes(scenario, racks, chosen or {}) if designed else {}
    network_kw, fabric_kw, retro_capex = _add_white_space(acc, scenario, sizes, bought)
    area = {h.id: h.floor_area_m2 for b in scenario.site.buildings for h in b.halls}
    floor = sum(area.get(h, 0.0) for h in halls_used)
    return _as_kpis(
        acc, scenario, sizes, network_kw, fabric_kw, retro_capex, floor, cable_m, sum(1 for _ in network)
    )


def _kinds(scenario: Scenario, racks: list[PlacedRack], design: dict):
    """Racks by kind (type, link class, phase, installed, spare, cluster, building) → count; cable
    metres; halls used."""
    types = scenario.catalog.by_id()
    kinds: dict[tuple[str, str | None, str | None, bool, bool, str, str], int] = defaultdict(int)
    cable_m = 0.0
    halls_used: set[str] = set()
    for r in racks:
        t = types.get(r.rack_type)
        if t is None:
            continue
        phase = None if r.existing else r.phase
        kinds[r.rack_type, r.link_class, phase, r.existing, r.spare, r.cluster, r.building] += 1
        d = design.get(r.cluster)
        if (
            d is not None and d.leaf_in_rack and t.gpus and not r.spare
        ):  # GPU links stay in the rack; uplinks leave it
            cable_m += math.ceil(t.gpus * d.nics_per_gpu / d.oversubscription[0]) * r.cable_length_m
        else:
            cable_m += t.links * r.cable_length_m
        halls_used.add(r.hall)
    return kinds, cable_m, halls_used


def _add_kind(
    acc: _Acc, scenario: Scenario, kind: tuple, k: int, designed: set, years: dict, good: dict
) -> None:
    """k racks of one kind: their cost terms (:func:`planner.rules.costs.rack_cost`) and what stands."""
    tid, lc, phase, existing, spare, cluster, building = kind
    t = scenario.catalog.by_id()[tid]
    costs = scenario.costs_in(building)  # a structure may have a rate of its own
    kw = scenario.rack_power_kw(t)
    net = 0.0 if cluster in designed else scenario.allowance_kw(t)  # its back-end network
    in_fabric = cluster in designed and t.gpus and not spare  # its links are the designed fabric's
    link = None if in_fabric else {c.id: c for c in scenario.site.fabric.link_classes}.get(lc or "")
    life = lifecycle(scenario, tid, phase, years) if scenario.service_life else {}
    per_gpu = 0.0 if cluster in designed else scenario.site.fabric.cost_usd_per_gpu
    start = 0.0 if existing else years.get(phase, 0.0)
    pue = scenario.pue_in(building)  # a structure may have its own
    cost = rack_cost(t, kw + net, link, per_gpu, costs, pue, start, existing, **life)
    acc.removal += k * cost.removal_usd
    acc.residual += k * cost.residual_usd
    acc.tco += k * cost.tco_usd
    if not spare:
        acc.hours += k * cost.gpu_hours
        acc.hours_npv += k * cost.gpu_hours_npv
        acc.useful_npv += k * cost.gpu_hours_npv * good.get(cluster, 1.0)
    if not existing:
        acc.capex_racks += k * t.capex_usd
        acc.capex_fabric += k * fabric_usd(t, per_gpu)
        acc.capex_links += k * links_usd(t, link)
        build = k * facility_usd(kw + net, costs)
        acc.facility += build
        acc.facility_own += build if scenario.own_rate(building) else 0.0
    if life and life["retire"] is not None:  # retired by the last phase: no longer stands
        acc.retired += k
        return
    acc.opex += k * cost.opex_usd_per_year
    if life and not existing:
        acc.depreciation += k * rack_capex_usd(t, link, per_gpu) / life["life_years"]
    acc.facility_kw += k * (kw + net) * pue
    acc.allowance_kw += k * net
    _add_standing(acc, t, k, kw, spare, link)


def _add_standing(acc: _Acc, t, k: int, kw: float, spare: bool, link) -> None:
    """k racks of a type standing at the end: counts, kW, GPUs, PFLOPS, HBM, storage, optics."""
    acc.n += k
    acc.racks_kw += k * kw
    acc.max_kw = max(acc.max_kw, kw)
    if spare:
        acc.spares += k
    else:
        acc.gpus += k * t.gpus
        acc.pflops += k * t.pflops_bf16
        acc.hbm_tb += k * t.hbm_tb
    acc.storage_pb += k * t.storage_capacity_pb
    acc.storage_gbs += k * t.storage_write_gb_per_s
    if link is not None and link.optical:
        acc.optics += k * 2 * t.links


def _add_white_space(acc: _Acc, scenario: Scenario, sizes: dict, bought) -> tuple[float, float, float]:
    """The white space beyond the placed racks: network racks and designed fabrics, built at the start
    (undiscounted), running to the horizon (facility, energy and maintenance of their equipment); and
    the retrofits bought. Returns (network kW, fabric kW, retrofit capex)."""
    costs = scenario.costs
    building_of = {r.id: b.id for b in scenario.site.buildings for h in b.halls for r in h.rows}
    nets = [
        (scenario.rack_power_kw(t), scenario.pue_in(building_of[row]))
        for _, row, t in network_racks(scenario)
    ]
    network_kw = sum(kw for kw, _ in nets)
    acc.optics += sum(z.optics for z in sizes.values())
    fabric_kw = sum(z.kw for z in sizes.values())
    designed_capex = sum(z.capex_usd for z in sizes.values())
    acc.capex_fabric += designed_capex
    white_kw = network_kw + fabric_kw
    acc.facility += facility_usd(white_kw, costs)
    white_facility_kw = sum(kw * pue for kw, pue in nets) + fabric_kw * scenario.pue  # each at its building's
    acc.facility_kw += white_facility_kw
    white_pue = white_facility_kw / white_kw if white_kw else scenario.pue
    white_opex = opex_usd_per_year(white_kw, designed_capex, costs, white_pue)
    acc.opex += white_opex
    white_npv, white_left = build_npv_usd(
        facility_usd(white_kw, costs), 0.0, costs.facility_life_years, costs
    )
    acc.tco += (
        white_npv + designed_capex + white_opex * annuity(0.0, costs.horizon_years, costs.discount_rate)
    )
    retro_capex, retro_npv, retro_left = retrofit_costs(scenario, bought)
    acc.tco += retro_npv
    acc.residual += white_left + retro_left
    return network_kw, fabric_kw, retro_capex


def _as_kpis(
    acc: _Acc,
    scenario: Scenario,
    sizes: dict,
    network_kw,
    fabric_kw,
    retro_capex,
    floor,
    cable_m,
    fabric_racks,
) -> Kpis:
    """The sums as KPIs, rounded as a plan states them."""
    total_kw = acc.racks_kw + (network_kw + acc.allowance_kw + fabric_kw)
    mw = total_kw / 1000.0
    gpus, n, pflops, hbm_tb, tco = acc.gpus, acc.n, acc.pflops, acc.hbm_tb, acc.tco
    capex = acc.capex_racks + acc.capex_fabric + acc.capex_links + acc.facility + retro_capex
    return Kpis(
        gpus=gpus,
        racks=n,
        spare_racks=acc.spares,
        pflops_bf16=round(pflops, 6),
        it_kw=round(total_kw, 6),
        racks_kw=round(acc.racks_kw, 6),
        network_kw=round(network_kw, 6),
        allowance_kw=round(acc.allowance_kw, 6),
        facility_kw=round(acc.facility_kw, 6),
        gpus_per_mw=round(gpus / mw, 6) if mw else 0.0,
        pflops_per_mw=round(pflops / mw, 6) if mw else 0.0,
        avg_kw_per_rack=round(acc.racks_kw / n, 6) if n else 0.0,
        max_kw_per_rack=round(acc.max_kw, 6),
        gpus_per_m2=round(gpus / floor, 6) if floor else 0.0,
        hbm_tb=round(hbm_tb, 6),
        hbm_gb_per_gpu=round(hbm_tb * 1000 / gpus, 6) if gpus else 0.0,
        storage_pb=round(acc.storage_pb, 6),
        storage_write_gb_per_s=round(acc.storage_gbs, 6),
        switches=sum(sum(z.switches) for z in sizes.values()),
        optics=acc.optics,
        fabric_kw=round(fabric_kw, 6),
        fabric_racks=fabric_racks,
        fabric_capex_usd=round(acc.capex_fabric, 2),
        fabric_usd_per_gpu=round(acc.capex_fabric / gpus, 6) if gpus else 0.0,
        capex_racks_usd=round(acc.capex_racks, 2),
        capex_fabric_usd=round(acc.capex_fabric, 2),
        capex_links_usd=round(acc.capex_links, 2),
        capex_facility_usd=round(acc.facility, 2),
        capex_facility_parts_usd=facility_parts(scenario, acc.facility, acc.facility_own),
        capex_retrofits_usd=round(retro_capex, 2),
        capex_usd=round(capex, 2),
        opex_usd_per_year=round(acc.opex, 2),
        tco_usd=round(tco, 2),
        removal_usd=round(acc.removal, 2),
        residual_value_usd=round(acc.residual, 2),
        depreciation_usd_per_year=round(acc.depreciation, 2),
        retired_racks=acc.retired,
        gpu_hours=round(acc.hours, 3),
        gpu_hours_npv=round(acc.hours_npv, 3),
        usd_per_gpu_hour=round(tco / acc.hours_npv, 6) if acc.hours_npv else 0.0,
        usd_per_useful_gpu_hour=round(tco / acc.useful_npv, 6) if acc.useful_npv else 0.0,
        cable_m=round(cable_m, 6),
    )


def facility_parts(scenario: Scenario, facility_usd: float, own_usd: float) -> dict[str, float]:
    """The facility build by part (``costs.facility_split`` of what is built at the facility rate,
    and ``structures``: what is built at their own rates), USD; empty without a split."""
    split = scenario.costs.facility_split
    if split is None:
        return {}
    out = {part: round((facility_usd - own_usd) * share, 2) for part, share in split.parts().items()}
    return {**out, "structures": round(own_usd, 2)} if own_usd else out


CAPEX_PARTS = (
    ("racks", "capex_racks_usd"),
    ("fabric", "capex_fabric_usd"),
    ("links", "capex_links_usd"),
    ("facility", "capex_facility_usd"),
    ("retrofits", "capex_retrofits_usd"),
    ("backup power", "capex_backup_usd"),
    ("energy storage", "capex_storage_usd"),
)
"""The parts capex is made of (every part, so they add up to capex_usd), for every breakdown shown."""


def with_backup(k: Kpis, choices: Iterable[BackupChoice]) -> Kpis:
    """KPIs with the backup power chosen per building (:mod:`planner.rules.backup`): its capex, spent at
    the start, added to capex and TCO; $ per GPU-hour over the same discounted GPU-hours; $ per useful
    GPU-hour the chosen assignment's (TCO + backup capex over the useful GPU-hours its outages leave)."""
    choices = list(choices)
    if not choices:
        return k
    capex = round(sum(c.capex_usd for c in choices), 2)
    tco = k.tco_usd + capex
    return k.model_copy(
        update={
            "capex_backup_usd": capex,
            "capex_usd": round(k.capex_usd + capex, 2),
            "tco_usd": round(tco, 2),
            "usd_per_gpu_hour": round(tco / k.gpu_hours_npv, 6) if k.gpu_hours_npv else 0.0,
            "usd_per_useful_gpu_hour": choices[0].usd_per_useful_gpu_hour[choices[0].design],
        }
    )


def with_grid(k: Kpis, grid) -> Kpis:
    """KPIs with §21's costs (:mod:`planner.plan.grid`): energy storage in capex; storage, floors'
    energy, storage losses, the sources' price and carbon in TCO; $ per GPU-hour over the same
    discounted GPU-hours, $ per useful GPU-hour scaled alike."""
    if grid is None or (not grid.storage_capex_usd and not grid.tco_usd):
        return k
    tco = k.tco_usd + grid.tco_usd
    useful = k.usd_per_useful_gpu_hour * tco / k.tco_usd if k.tco_usd else 0.0
    return k.model_copy(
        update={
            "capex_storage_usd": grid.storage_capex_usd,
            "capex_usd": round(k.capex_usd + grid.storage_capex_usd, 2),
            "tco_usd": round(tco, 2),
            "usd_per_gpu_hour": round(tco / k.gpu_hours_npv, 6) if k.gpu_hours_npv else 0.0,
            "usd_per_useful_gpu_hour": round(useful, 6),
        }
    )


def storage_by_phase(scenario: Scenario, grid) -> dict[str | None, float]:
    """Phase → energy storage bought in it, USD (§21)."""
    if grid is None or scenario.power_stability is None:
        return {}
    per = scenario.power_stability.storage_usd_per_mw_bought
    out: dict[str | None, float] = {}
    before: dict[str, float] = {}
    for ph in grid.phases:
        bought = sum(x - before.get(b, 0.0) for b, x in ph.storage_mw.items())
        out[ph.phase] = bought * per
        before = dict(ph.storage_mw)
    return out


def capex_parts(k: Kpis) -> dict[str, float]:
    """Capex by part, USD: racks + fabric + links + facility + retrofits + backup power = capex_usd."""
    return {name: getattr(k, field) for name, field in CAPEX_PARTS}


def capex_text(k: Kpis) -> str:
    """The breakdown in words: "racks $X + fabric $Y + … = $total"."""
    return " + ".join(f"{n} ${v:,.0f}" for n, v in capex_parts(k).items()) + f" = ${k.capex_usd:,.0f}"


def objective_value(
    scenario: Scenario,
    racks: Iterable[PlacedRack],
    bought: Iterable[tuple[str, str | None]] = (),
    chosen: dict[str, str] | None = None,
) -> float:
    """The figure an objective optimises, from a plan's racks: GPUs (or PFLOPS) of the racks it
    places (installed ones are not its doing), summed over the phases each stands in when the
    scenario is phased; capex or TCO as the KPIs count them."""
    objective = str(scenario.objective)
    if objective in ("min_capex", "min_tco"):
        k = compute_kpis(scenario, racks, bought, chosen)
        return k.capex_usd if objective == "min_capex" else k.tco_usd
    types = scenario.catalog.by_id()
    order = scenario.phase_at
    n = max(len(scenario.phases), 1)
    total = 0.0
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or r.existing or r.spare:
            continue
        until = scenario.retire_index(r.rack_type, r.phase) if scenario.service_life else None
        weight = (n if until is None else until) - order.get(r.phase, 0) if scenario.phases else 1
        total += weight * (t.gpus if objective == "max_gpus" else t.pflops_bf16)
    return round(total, 6)


def phase_summaries(
    scenario: Scenario,
    racks: list[PlacedRack],
    bought: Iterable[tuple[str, str | None]],
    phase_usage: dict,
    backup_usd: float = 0.0,
    chosen: dict[str, str] | None = None,
    storage_usd: dict[str | None, float] | None = None,
) -> list:
    """Per phase: GPUs, racks (all standing, new), IT kW (standing racks, network racks online and
    the designed fabrics of the racks placed by then), capex spent in it (racks placed with their
    facility build, the pods' network racks' facility build in the phase their row comes online,
    what each designed fabric grows by then — switches, links and their facility build —,
    retrofits bought, ``backup_usd``, the backup power chosen, in the first phase, and the energy
    storage bought, ``storage_usd`` by phase), tightest limits: the phases' capex adds up to capex_usd."""
    if not scenario.phases:
        return []
    types = scenario.catalog.by_id()
    classes = {c.id: c for c in scenario.site.fabric.link_classes}
    order = scenario.phase_at
    row_on: dict[str, int] = {}
    for b in scenario.site.buildings:
        for h in b.halls:
            for r in h.rows:
                row_on[r.id] = max(order.get(h.online_phase, 0), order.get(r.online_phase, 0))
    bought = list(bought)
    by_id = {r.id: r for r in scenario.retrofits}
    nets = [(row_on.get(row, 0), scenario.rack_power_kw(t)) for _, row, t in network_racks(scenario)]
    designed = {c.id for c in scenario.clusters if design_of(scenario, c, chosen or {}) is not None}
    fabric_before = (0.0, 0.0)  # the designed fabrics' (capex, kW) by the phase before
    span = spanning_clusters(fabric_sizes(scenario, racks, chosen or {})) if designed else set()
    out = []
    for i, ph in enumerate(scenario.phases):
        standing = scenario.standing(racks, i)
        new = [r for r in racks if not r.existing and r.phase == ph.id]
        placed = [r for r in racks if r.existing or order.get(r.phase, 0) <= i]
        sizes = fabric_sizes(scenario, placed, chosen or {}, span) if designed else {}
        fabric = (sum(z.capex_usd for z in sizes.values()), sum(z.kw for z in sizes.values()))
        kw = sum(  # a rack outside a designed fabric with its back-end network
            scenario.rack_power_kw(types[r.rack_type])
            + (0.0 if r.cluster in designed else scenario.allowance_kw(types[r.rack_type]))
            for r in standing
            if r.rack_type in types
        )
        kw += sum(k for on, k in nets if on <= i) + fabric[1]  # network racks of the rows online by then
        spent = (backup_usd if i == 0 else 0.0) + facility_usd(
            sum(k for on, k in nets if on == i), scenario.costs
        )
        spent += fabric[0] - fabric_before[0] + facility_usd(fabric[1] - fabric_before[1], scenario.costs)
        fabric_before = fabric
        for r in new:
            t = types.get(r.rack_type)
            if t is not None:
                spent += _rack_capex(scenario, r, t, r.cluster in designed, classes)
        spent += sum(by_id[b].cost_usd for b, p in bought if p == ph.id and b in by_id)
        spent += (storage_usd or {}).get(ph.id, 0.0)  # energy storage bought (§21)
        usage = sorted(
            (u for u in phase_usage.get(ph.id, []) if u.limit > 0),
            key=lambda u: (-u.worst_share, u.kind, u.id),
        )[:3]
        out.append(
            PhaseSummary(
                phase=ph.id,
                start=ph.start.isoformat(),
                gpus=sum(types[r.rack_type].gpus for r in standing if r.rack_type in types and not r.spare),
                racks=len(standing),
                new_racks=len(new),
                it_kw=round(kw, 6),
                capex_usd=round(spent, 2),
                tightest=[f"{u.id} {u.worst_share:.1%}" for u in usage],
            )
        )
    return out


def _rack_capex(scenario: Scenario, r: PlacedRack, t, designed: bool, classes: dict) -> float:
    """A placed rack's capex with its facility build: outside a designed fabric with its back-end
    network (kW and the site's fabric cost per GPU) and its links; on one, its links are the fabric's."""
    in_fabric = designed and t.gpus and not r.spare
    return rack_cost(
        t,
        scenario.rack_power_kw(t) + (0.0 if designed else scenario.allowance_kw(t)),
        None if in_fabric else classes.get(r.link_class or ""),
        0.0 if designed else scenario.site.fabric.cost_usd_per_gpu,
        scenario.costs_in(r.building),
        scenario.pue,
    ).capex_usd


STRANDED_ORDER = ("space", "ports", "cooling", "rack limits", "N-1")
"""The checks a rack must pass, in the order a stranded kW is attributed to the first that fails."""


def stranded_power(
    scenario: Scenario, racks: list[PlacedRack], usage: list
) -> tuple[float, list[tuple[str, float, str]]]:
    """Usable kW left that no allowed rack can use, per top power node (roots of the power tree),
    attributed to the limit that binds it (SPEC §10). For each root with room for the smallest
    allowed rack, every free position under it is tried for one more rack of each allowed type:
    space, pod ports and racks, cooling zone room, the row's rack limits, then N-1 (every node
    above the row's feeds keeps its worst single-failure load plus the rack within its usable
    capacity: a conservative screen). If no position passes, the root's room is stranded, attributed
    to the check most positions fail first. Returns (total kW, [(root, kW, reason)])."""
    allowed = {t for c in scenario.clusters for t in scenario.gpu_types_for(c)}
    if not allowed:
        return 0.0, []
    st = _Stranded(scenario, racks, usage, allowed)
    smallest = min(st.kw_of.values())
    out = []
    for root, node in st.ix.power_nodes.items():
        if node.parent is not None or st.room(root) < smallest - 1e-9:
            continue
        why = st.verdict(root)
        if why is not None:
            out.append((root, round(st.room(root), 6), why))
    return round(sum(kw for _, kw, _ in out), 6), out


class _Stranded:
    """What the racks leave of the site, for trying one more rack anywhere (:func:`stranded_power`)."""

    def __init__(self, scenario: Scenario, racks: list[PlacedRack], usage: list, allowed: set[str]):
        self.scenario, self.allowed = scenario, allowed
        self.types = types = scenario.catalog.by_id()
        self.ix = ix = index_site(scenario.site)
        self.use = {(u.kind, u.id): u for u in usage}
        racks = scenario.standing(racks)  # retired racks (§17) free their positions
        self.taken = scenario.positions_held(racks) | ix.pod_locations()
        self.pod_gpus: dict[str, int] = {}
        self.pod_racks: dict[str, int] = {}
        for r in racks:
            pod = ix.rows[r.row].row.pod if r.row in ix.rows else None
            if pod is not None and r.rack_type in types:
                self.pod_gpus[pod] = self.pod_gpus.get(pod, 0) + types[r.rack_type].gpus
                self.pod_racks[pod] = self.pod_racks.get(pod, 0) + 1
        self.kw_of = {t: scenario.rack_power_kw(types[t]) for t in allowed}

    def room(self, node: str) -> float:
        """Usable kW a node has left at its worst (normal or single failure)."""
        u = self.use.get((LimitKind.power_node, node))
        return 0.0 if u is None else u.limit - max(u.value, u.worst_value or 0.0)

    def verdict(self, root: str) -> str | None:
        """None when one more allowed rack fits somewhere under the root; else the reason most
        tries fail with first (:data:`STRANDED_ORDER` breaks ties)."""
        under = self.ix.subtree(root)
        reasons: dict[str, int] = {}
        for rid, ref in self.ix.rows.items():
            if not set(ref.row.feeds) & under:
                continue
            for t in self.allowed:
                why = self.why_not(rid, ref, t)
                if why is None:
                    return None
                reasons[why] = reasons.get(why, 0) + 1
        return max(STRANDED_ORDER, key=lambda r: (reasons.get(r, 0), -STRANDED_ORDER.index(r)))

    def why_not(self, rid: str, ref, t: str) -> str | None:
        """The first check one more rack of type t in row rid fails (None: it fits)."""
        ix, rt, use = self.ix, self.types[t], self.use
        row = ref.row
        if not any((rid, i) not in self.taken and i not in row.reserved for i in range(row.positions)):
            return "space"
        pod = ix.pods[row.pod]
        full = pod.max_racks is not None and self.pod_racks.get(pod.id, 0) >= pod.max_racks
        if self.pod_gpus.get(pod.id, 0) + rt.gpus > pod.max_gpus or full:
            return "ports"
        air, liquid = rt.heat_kw(self.kw_of[t])
        zone_room = [use.get((LimitKind.cooling_zone, z)) for z in (row.air_zone, row.liquid_loop) if z]
        if any(
            u is not None and u.value + h > u.limit + 1e-9
            for u, h in zip(zone_room, (air, liquid), strict=False)
        ):
            return "cooling"
        if not fits(self.scenario, ix, rid, rt):
            return "rack limits"
        above = {a for f in row.feeds for a in ix.ancestors(f)}
        if any(self.room(a) < self.kw_of[t] - 1e-9 for a in above):
            return "N-1"
        return None
