"""What each building could host of each group of clusters, counted from the site without a solve,
and the scenario data of one building with the clusters it is given: the inputs of the
decomposition by building (:mod:`planner.scale.decompose`, :mod:`planner.scale.region_master`)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from functools import reduce

from planner.enums import Demand, FailoverPolicy, Scope
from planner.input.site_index import SiteIndex, fits, index_site, place
from planner.model import cluster_groups, position_classes
from planner.model.core import unit_slots
from planner.model.room import site_room
from planner.plan.kpis import compute_kpis
from planner.schema import Scenario

SPANNING = (Scope.site,)
"""Scopes a cluster may spread across buildings in."""


@dataclass
class Group:
    """Identical clusters (or one spanning cluster) the master places together."""

    id: str
    members: list[dict]
    demand: Demand
    gpus: int | None
    spanning: bool
    unit: int
    """GPUs per rack step of its rack types (gcd), the rounding unit of a spanning share."""
    types: list[str] = field(default_factory=list)
    """GPU rack types its clusters may use."""
    scope: Scope = Scope.building
    share: float | None = None
    """Its clusters' max_share_per_pod, if any."""


@dataclass
class Proposal:
    """What a building can host of one group alone."""

    cap: float = 0.0
    whole: int = 0
    kw: float = 0.0
    capex: float = 0.0
    tco: float = 0.0
    pflops: float = 0.0
    most: float = 0.0
    """The most GPUs one of its clusters can take there (a pod's room for one-pod scope)."""
    pods: dict[str, float] = field(default_factory=dict)
    """Pod → GPUs of the group that pod alone could hold (the master packs one-pod clusters into
    pods by it)."""
    use: dict[str, float] = field(default_factory=dict)
    """Per GPU of its best rack type: planning kW (``kw``), air and liquid heat kW (the master
    shares each building's power and heat by it, :func:`building_resources`)."""


def groups_of(scenario: Scenario, data: dict) -> list[Group]:
    """Groups of identical building-bound clusters; every spanning cluster alone."""
    types = scenario.catalog.by_id()
    by_id = {c["id"]: c for c in data["clusters"]}
    out = []
    for g in cluster_groups(scenario).values():
        sizes = [types[t].gpus for t in g.gpu_types if types[t].gpus]
        unit = reduce(math.gcd, sizes) if sizes else 1
        spanning = g.scope in SPANNING
        chunks = [[m] for m in g.members] if spanning else [g.members]
        for chunk in chunks:
            gid = chunk[0].id if spanning else g.id
            head = chunk[0]
            figures = [f for f in (head.gpus, *(head.gpus_by_phase or {}).values()) if f is not None]
            peak = max(figures) if figures else None  # a phased cluster needs room for its largest figure
            out.append(
                Group(
                    gid,
                    [by_id[m.id] for m in chunk],
                    chunk[0].demand,
                    peak,
                    spanning,
                    unit,
                    list(g.gpu_types),
                    g.scope,
                    chunk[0].max_share_per_pod,
                )
            )
    return out


def pod_room(
    scenario: Scenario, ix: SiteIndex, cells: dict | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """Building → pod → rack type → racks (or multi-rack units) of that type its rows hold, counted
    as the model counts them: per position class (row and cable band, less reserved positions, pod
    network racks and installed racks) its size, or for a unit its whole slots in the class's runs."""
    types = scenario.catalog.by_id()
    gpu = [t for t in types.values() if t.gpus > 0]
    out: dict[str, dict[str, dict[str, int]]] = {}
    fit: dict[tuple[str, str], bool] = {}
    for cls in position_classes(scenario, ix).values():
        ref = ix.rows[cls.row]
        room = out.setdefault(ref.building, {}).setdefault(ref.row.pod, {})
        for t in gpu:
            if (cls.row, t.id) not in fit:
                fit[cls.row, t.id] = fits(scenario, ix, cls.row, t)
            if fit[cls.row, t.id]:
                room[t.id] = room.get(t.id, 0) + unit_slots(cls, t.width)
                if cells is not None:
                    cells.setdefault(ref.row.pod, []).append((cls, t))
    return out


def per_gpu(
    scenario: Scenario, ix: SiteIndex, t: str, cluster: str, building: str
) -> tuple[float, float, float, float]:
    """Marginal IT kW, capex, TCO and PFLOPS of one more GPU of rack type ``t`` in ``building``:
    the KPIs of two racks less those of one, per GPU (fixed items cancel)."""
    rt = scenario.catalog.by_id()[t]
    spots = ix.pod_locations()
    where = [
        (rid, i)
        for rid, ref in ix.rows.items()
        if ref.building == building and fits(scenario, ix, rid, rt)
        for i in range(min(ref.row.positions, 4))
        if (rid, i) not in spots and i not in ref.row.reserved
    ][:2]
    if len(where) < 2 or rt.gpus <= 0:
        return (
            rt.rated_power_kw / max(rt.gpus, 1),
            rt.capex_usd / max(rt.gpus, 1),
            rt.capex_usd / max(rt.gpus, 1),
            rt.pflops_bf16 / max(rt.gpus, 1),
        )
    one = compute_kpis(scenario, [place(ix, *where[0], rt, cluster)])
    two = compute_kpis(scenario, [place(ix, *where[0], rt, cluster), place(ix, *where[1], rt, cluster)])
    g = rt.gpus
    return (
        (two.racks_kw - one.racks_kw) / g,
        (two.capex_usd - one.capex_usd) / g,
        (two.tco_usd - one.tco_usd) / g,
        (two.pflops_bf16 - one.pflops_bf16) / g,
    )


def proposals(
    scenario: Scenario, groups: list[Group], buildings: list[str], size: dict | None = None
) -> dict[tuple[str, str], Proposal]:
    """What each building could host of each group alone, counted from the site, no solve:

        pod room[p] = min(pod GPU ports, pod racks × g_t, max_t positions_t(p) × g_t,
                          what p's power and heat hold of g's types)   (the last unphased:
                          planner.model.room; an upper bound, as the others)
        cap[g,b]    = Σ_p room[p]
        whole[g,b]  = Σ_p ⌊room[p]/size⌋ (one-pod scope), ⌊cap/size⌋ (building), |g| (as many as fit)
        most[g,b]   = max_p room[p] (one-pod scope), Σ_p min(room[p], s × size) (building, spread limit s)

    with per-GPU kW, capex, TCO and PFLOPS of its best rack type (marginal KPIs) and its use of
    power and heat (:attr:`Proposal.use`). An estimate the building solves then check: a building
    that cannot host its share is repaired. ``size``: given, it gets ``counts``, the count
    variables the whole model would make (:attr:`planner.scale.budget.Budget.whole_counts`)."""
    ix = index_site(scenario.site)
    cells: dict[str, list] = {}
    rooms = pod_room(scenario, ix, cells)
    if size is not None:  # the whole model's counts: class × rack type × group (× phase)
        by_type = Counter(t.id for cs in cells.values() for _, t in cs)
        size["counts"] = max(1, len(scenario.phases)) * sum(by_type[t] for g in groups for t in set(g.types))
    room = site_room(scenario, ix) if not scenario.phases else None  # a phased region: space alone
    types = scenario.catalog.by_id()
    pods = ix.pods
    figures: dict[tuple[str, str], tuple[float, float, float, float]] = {}
    out: dict[tuple[str, str], Proposal] = {}
    for g in groups:
        for b in buildings:
            by_pod, best = _pod_caps(g, rooms.get(b, {}), pods, types)
            by_pod = _powered(g, by_pod, cells, room)
            per_pod = list(by_pod.values())
            cap = float(sum(per_pod))
            if cap <= 0 or best is None:
                continue
            size = g.gpus or 0
            spread = (
                cap
                if g.share is None or not size
                else float(sum(min(c, int(g.share * size)) for c in per_pod))
            )
            whole = _whole_clusters(g, per_pod, cap, spread)
            if (best, b) not in figures:
                figures[best, b] = per_gpu(scenario, ix, best, g.members[0]["id"], b)
            kw, capex, tco, pf = figures[best, b]
            one_pod = g.scope in (Scope.pod, Scope.rack)
            most = max(per_pod) if one_pod else spread
            out[g.id, b] = Proposal(
                cap,
                whole,
                kw,
                capex,
                tco,
                pf,
                most,
                dict(by_pod) if one_pod else {},
                _use(scenario, types[best]),
            )
    return out


def _powered(g: Group, by_pod: dict[str, int], cells: dict[str, list], room) -> dict[str, int]:
    """Each pod's GPUs of the group (:func:`_pod_caps`) within what its power and heat hold of the
    group's rack types (:meth:`planner.model.room.SiteRoom.gpus`); as counted without a room."""
    if room is None:
        return by_pod
    head = g.members[0]
    factor = FailoverPolicy(head.get("on_power_failure", "keep")).factor(head.get("cap_ratio", 0.6))
    mine = set(g.types)
    out = {}
    for pid, c in by_pod.items():
        held = room.gpus([(cls, t) for cls, t in cells.get(pid, []) if t.id in mine], factor)
        if min(c, held) > 0:
            out[pid] = int(min(c, held))
    return out


def _use(scenario: Scenario, t) -> dict[str, float]:
    """Per GPU of rack type t: planning kW, air and liquid heat kW, positions, racks and ports."""
    kw = scenario.rack_power_kw(t)
    air, liquid = t.heat_kw(kw)
    g = max(t.gpus, 1)
    return {
        "kw": kw / g,
        "air": air / g,
        "liquid": liquid / g,
        "positions": t.width / g,
        "racks": 1.0 / g,
        "ports": 1.0,
    }


def building_resources(scenario: Scenario, buildings: list[str]) -> dict[str, dict[str, float]]:
    """Per building the power and heat its GPU rows hold, with the pods' network racks and the
    installed racks standing: ``kw`` Σ over the feed groups of its GPU rows of their power room,
    ``air`` and ``liquid`` Σ over their zones of the heat room (:mod:`planner.model.room`; an
    upper bound on what all its racks together may draw or make); ``positions`` its GPU rows'
    positions, ``ports`` and ``racks`` its pods' GPU ports and rack limits (infinite where a pod
    has none): what racks of every medium share, where each group's own room (the master's
    capacity rows) counts one medium. None for a phased scenario."""
    if scenario.phases:
        return {}
    ix = index_site(scenario.site)
    room = site_room(scenario, ix)
    kw = room.group_kw(min((c.on_power_failure.factor(c.cap_ratio) for c in scenario.clusters), default=1.0))
    out: dict[str, dict[str, float]] = {
        b: {"kw": 0.0, "air": 0.0, "liquid": 0.0, "positions": 0.0, "ports": 0.0, "racks": 0.0}
        for b in buildings
    }
    seen: set[tuple[str, str]] = set()
    for rid, ref in ix.rows.items():
        if ref.row.network is not None or ref.building not in out:
            continue
        b = out[ref.building]
        b["positions"] += ref.row.positions
        if ("pod", ref.row.pod) not in seen:
            seen.add(("pod", ref.row.pod))
            pod = ix.pods[ref.row.pod]
            b["ports"] += pod.max_gpus
            b["racks"] += math.inf if pod.max_racks is None else pod.max_racks
        for what, key in (
            ("kw", room.pm.group_of_row[rid]),
            ("air", ref.row.air_zone),
            ("liquid", ref.row.liquid_loop),
        ):
            if key and (what, key) not in seen:
                seen.add((what, key))
                b[what] += kw.get(key, math.inf) if what == "kw" else room.zone_kw(key)
    return out


def _pod_caps(g: Group, rooms: dict, pods: dict, types: dict) -> tuple[dict[str, int], str | None]:
    """GPUs of the group each pod of a building could hold (its best rack type, within the pod's
    racks and ports), and the best rack type of the first pod that holds any."""
    per_pod: dict[str, int] = {}
    best = None
    for pid, room in rooms.items():
        pod = pods.get(pid)
        if not pod:
            continue
        caps = [
            (min(room.get(t, 0), pod.max_racks or 10**9) * types[t].gpus, t)
            for t in g.types
            if room.get(t, 0) > 0
        ]
        if not caps:
            continue
        c, t = max(caps)
        c = min(c, pod.max_gpus)
        if c > 0:
            per_pod[pid] = c
            best = best or t
    return per_pod, best


def _whole_clusters(g: Group, per_pod: list[int], cap: float, spread: float) -> int:
    """Whole clusters of the group a building could hold (module docstring of :func:`proposals`)."""
    size = g.gpus or 0
    if g.spanning or size <= 0 or g.demand == Demand.max and g.gpus is None:
        whole = len(g.members)
    elif g.scope in (Scope.pod, Scope.rack):
        whole = min(len(g.members), sum(c // size for c in per_pod))
    else:
        whole = min(len(g.members), int(cap // size)) if spread >= size else 0
    if g.demand == Demand.max and g.gpus is not None and not g.spanning:
        whole = max(whole, min(len(g.members), len(per_pod)))  # a part of each fits
    return whole


def building_ids(building: dict) -> set[str]:
    """IDs a building's data holds: itself, its halls, rows, power nodes and cooling zones."""
    out = {building["id"], *(n["id"] for n in building.get("power_nodes", []))}
    for h in building.get("halls", []):
        out.add(h["id"])
        out.update(
            x["id"] for key in ("rows", "power_nodes", "cooling_zones", "pods") for x in h.get(key, [])
        )
    return out


GRID_KEYS = ("power_stability", "power_sources", "water")
"""§21 blocks a building's own plan leaves out: where they cannot couple the buildings
(:func:`grid_coupling`), the joined plan sizes storage, floors and dispatch for the whole."""


def grid_coupling(scenario) -> str | None:
    """Why §21 couples a decomposition's buildings (None: it does not). Storage or a floor can absorb
    any swing and sources of full capacity factor carry whatever power arrival lets stand, so only
    swings with neither, emissions and water limits, and sources of less capacity limit the racks."""
    ps = scenario.power_stability
    if ps is not None and not ps.storage and not ps.floor:
        return "training swings with neither storage nor a power floor allowed couple the buildings"
    if scenario.budgets.t_co2_per_year is not None or scenario.budgets.peak_water_l_per_s is not None:
        return "a region's emissions or water limit couples the buildings"
    if any(s.capacity_factor < 1 for s in scenario.power_sources.values()):
        return "power sources of less than full capacity factor couple the buildings"
    return None


def building_data(
    data: dict,
    building: dict,
    clusters: list[dict],
    name: str,
    budgets: dict | None = None,
    objective: str | None = None,
) -> dict:
    """Scenario data of one building with the given clusters (and budget share): its own installed
    racks and the retrofits that change something in it (phases as in the whole)."""
    out = {
        k: v
        for k, v in data.items()
        if k not in ("site", "clusters", "budgets", "name", "existing", "retrofits", *GRID_KEYS)
    }
    out["name"] = name
    out["site"] = {**data["site"], "buildings": [building]}
    out["clusters"] = clusters
    mine = building_ids(building)
    if data.get("existing"):
        out["existing"] = [r for r in data["existing"] if r["building"] == building["id"]]
    if data.get("retrofits"):
        out["retrofits"] = [
            r
            for r in data["retrofits"]
            if (r["effect"].get("row") or r["effect"].get("target")) in mine
            or r["effect"].get("building") == building["id"]
        ]
    if data.get("backup_power"):
        bp = data["backup_power"]
        out["backup_power"] = {
            **bp,
            "fixed": {k: v for k, v in bp.get("fixed", {}).items() if k == building["id"]},
        }
    if data.get("maintenance"):  # §21: the level where it applies to this building
        out["maintenance"] = [
            {**m, "buildings": []}
            for m in data["maintenance"]
            if not m.get("buildings") or building["id"] in m["buildings"]
        ]
    if budgets:
        out["budgets"] = budgets
    if objective:
        out["objective"] = objective
    return out


# ------------------------------------------------------------------ shares of the master


def building_shares(
    groups: list[Group],
    buildings: list[str],
    alloc: dict[tuple[str, str], float],
    whole: dict[tuple[str, str], int],
) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Clusters each building gets from the master, all of them and the fixed-demand ones
    (exact or at_least; spanning ones at their share, in whole rack steps)."""
    subs: dict[str, list[dict]] = {b: [] for b in buildings}
    fixed: dict[str, list[dict]] = {b: [] for b in buildings}
    next_id = {g.id: 0 for g in groups}
    for b in buildings:
        for g in groups:
            if g.spanning:
                continue
            n = whole.get((g.id, b), 0)
            got = g.members[next_id[g.id] : next_id[g.id] + n]
            next_id[g.id] += n
            subs[b] += got
            if g.demand != Demand.max:
                fixed[b] += got
    for g in groups:
        if g.spanning:
            c = g.members[0]
            for b, n in round_share(
                g.gpus, {b: alloc.get((g.id, b), 0.0) for b in buildings}, g.unit, g.demand
            ).items():
                share = {**c, "gpus": n} if g.demand != Demand.max or c.get("gpus") is not None else c
                subs[b].append(share)
                if g.demand != Demand.max:
                    fixed[b].append(share)
    return subs, fixed


def offer_left(
    groups: list[Group],
    buildings: list[str],
    props: dict[tuple[str, str], Proposal],
    alloc: dict[tuple[str, str], float],
    subs: dict[str, list[dict]],
) -> int:
    """Clusters of "as many as fit" the master left out, each offered to the one building with the
    most estimated room left for its rack types (room = largest cap there less the master's use):
    a building solve places what fits and never fails for it. Returns how many were offered."""
    used = {b: sum(v for (_, bb), v in alloc.items() if bb == b) for b in buildings}
    given = {c["id"] for cs in subs.values() for c in cs}
    room = {b: max([p.cap for (_, bb), p in props.items() if bb == b] or [0.0]) for b in buildings}
    offered = 0
    for g in sorted(groups, key=lambda g: -(g.gpus or 0)):
        if g.spanning or g.demand != Demand.max:
            continue
        for c in g.members:
            if c["id"] in given:
                continue
            spare = {
                b: min(room[b] - used[b], props[g.id, b].most or props[g.id, b].cap)
                for b in buildings
                if (g.id, b) in props and props[g.id, b].cap > 0
            }
            if not spare:
                continue
            b = max(spare, key=lambda b: (spare[b], b))
            if spare[b] < (g.unit or 1):
                continue
            subs[b].append(c)
            used[b] += min(spare[b], c.get("gpus") or spare[b])
            offered += 1
    return offered


def as_exact(c: dict) -> dict:
    """A fixed-demand cluster at exactly its figure (what it must at least cost)."""
    return {k: v for k, v in {**c, "demand": "exact"}.items() if k != "gpus_by_phase"}


def recalibrate(
    groups: list[Group],
    props: dict[tuple[str, str], Proposal],
    alloc: dict[tuple[str, str], float],
    fixed: dict[str, list[dict]],
    floor: dict[str, dict[str, float]],
) -> bool:
    """Raise the per-GPU kW and capex the master charges a building's fixed groups to what their
    least-cost plan spends (never lower); whether anything changed."""
    changed = False
    for b, got in fixed.items():
        if not got:
            continue
        keys = [(g.id, b) for g in groups if g.demand != Demand.max and alloc.get((g.id, b), 0) > 0]
        gpus = sum(alloc[k] for k in keys)
        if gpus <= 0:
            continue
        for w in ("kw", "capex"):
            est = sum(alloc[k] * getattr(props[k], w) for k in keys)
            if floor[b][w] > est * (1 + 1e-9) and est > 0:
                f = floor[b][w] / est
                for k in keys:
                    setattr(props[k], w, getattr(props[k], w) * f)
                changed = True
    return changed


def round_share(total: int | None, shares: dict[str, float], unit: int, demand: Demand) -> dict[str, int]:
    """Spanning cluster shares in whole rack steps; an exact total is kept exactly (largest remainder)."""
    floors = {b: int(math.floor(v / unit + 1e-6)) for b, v in shares.items()}
    if demand != Demand.max and total is not None:
        need = math.ceil(total / unit) - sum(floors.values())
        for b in sorted(shares, key=lambda b: -(shares[b] / unit - floors[b]))[: max(0, need)]:
            floors[b] += 1
    return {b: k * unit for b, k in floors.items() if k > 0}
