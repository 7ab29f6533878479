"""Designed fabrics (§13) in the optimiser: a design choice per cluster, switches per tier as
integers, every fabric link priced and powered by its class, and the switches in network racks
placed at network rows, their power on those rows' feeds and their heat in those rows' zones
(sizing rules: :mod:`planner.rules.fabric_sizing`)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import LimitKind, Scope
from planner.model.core import Model
from planner.model.keys import LimitKey, lp_name
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare
from planner.rules.fabric_sizing import (
    building_km,
    km_between,
    latency_us,
    leaf_down_of,
    max_endpoints,
    ports,
    rail_width,
)


def serving(m: Model) -> dict[str, list[str]]:
    """Pod → the network rows that may hold its switches: rows serving that pod, its hall or its
    building (``Row.network``)."""
    out: dict[str, list[str]] = defaultdict(list)
    pods_of_hall: dict[str, list[str]] = defaultdict(list)
    pods_of_building: dict[str, list[str]] = defaultdict(list)
    for pid, hid in m.ix.pod_hall.items():
        pods_of_hall[hid].append(pid)
        pods_of_building[m.ix.halls[hid][0]].append(pid)
    for rid in m.network_rows:
        ref = m.ix.rows[rid]
        kind = ref.row.network
        pods = (
            [ref.row.pod]
            if kind == "pod"
            else pods_of_hall[ref.hall]
            if kind == "hall"
            else pods_of_building[ref.building]
        )
        for p in pods:
            out[p].append(rid)
    return out


def _position_links(
    m: Model,
    keys: list,
    per_rack: dict[str, int],
    attr: str,
    y: pulp.LpVariable | None,
    name: str,
    positions: int,
) -> pulp.LpAffineExpression:
    """Links whose class depends on where the rack stands (cabled GPU links, rack uplinks):
    Σ count · links per rack · the class's cost (USD) or power (kW) at the count's position class.
    For one design among several (``y``): a variable ≥ that sum when y = 1, ≥ 0 otherwise."""
    lcs = m.scenario.site.fabric.link_classes
    by_id = {lk.id: lk for lk in lcs}
    longest = max(lcs, key=lambda lk: lk.max_length_m)
    scale = 1.0 if attr == "cost_usd_per_link" else 0.001
    terms = [
        (
            var,
            per_rack[key.rack_type]
            * scale
            * getattr(by_id.get(m.classes[key.cls].link.get(key.rack_type) or longest.id, longest), attr),
        )
        for key, var in keys
    ]
    if y is None:
        return pulp.LpAffineExpression(terms)
    v = m.var(name)
    m.add(
        v - pulp.LpAffineExpression(terms) + positions * max((co for _, co in terms), default=0.0) * (1 - y)
        >= 0,
        name,
    )
    return pulp.LpAffineExpression(v)


@declare(
    "fabric",
    needs=(add_count_variables,),
    limits={"fabric_size": LimitRows(LimitKind.fabric), "space": LimitRows(LimitKind.row_positions)},
)
def add_fabric_constraints(m: Model) -> None:
    """Designed fabrics (§13, :mod:`planner.rules.fabric_sizing`), per cluster c on designs D_c (a choice
    y[c,d]
    ∈ {0,1}, Σ_d y = 1, when there are several). x[d,t,p]: c's GPU racks of type t in pod p on
    design d (its racks there when D_c is one design; else Σ_d x[d,t,p] = its racks of t in p,
    x[d,t,p] ≤ positions_p · y[c,d]); endpoints E_{d,b} = Σ_{p in b} x·gpus_t·nics ≤ the design's
    largest build, per building b (one tree per building).

    Per building b: leaves one per GPU rack when in the racks; else per pod p integer groups
    q[d,p] with w·q ≥ E_{d,p} / d₁ (w the rail width). Spines S_{d,b} ≥ U_b / k₂ (2 tiers) or
    U_b / d₂ (3 tiers), U_b the leaves' uplinks, or for the largest build U_b = 2^j·u₁ with binaries
    choosing the power of two 2^j ≥ leaves; cores C_{d,b} ≥ S·u₂ / k₃. Links by class: GPU to leaf
    (in-rack copper, or cabled at each rack's position class), leaf to spine (at the rack's class
    when leaves are in the racks, else the shortest), spine to core (the longest). Capex and kW:
    switches not in GPU racks and every link.

    Buildings: u[c,b] ∈ {0,1} marks the buildings c stands in (u ≤ racks in b ≤ positions_b · u) when
    its hop budget lets it leave one; without a region tier Σ_b u ≤ 1. With one, σ_c ∈ {0,1} ≥
    (Σ_b u − 1)/(B − 1), ≤ Σ_b u / 2, marks spanning; then per building ℓ_{d,b} ≥ E_{d,b}·g_e/(r·g_R) − M(1 −
    σ)
    region links (fibre of b's distance to the tier's building, optics of the longest class),
    border switches β_{d,b} ≥ ℓ/k_top in b's top tier, tier switches R_d ≥ Σ_b ℓ / k_R in the tier's
    building; buildings whose fibre delay through the tier exceeds max_latency_us never pair:
    u[b₁] + u[b₂] ≤ 1.

    Network racks: integer s[d,k,t] tier-t switches in network row k and racks r[d,k,t] ≥ s / cap,
    cap(k,t) = min(⌊units ÷ height_t⌋, ⌊row rack kW ÷ switch kW_t⌋); leaves of pod p in rows
    serving p, spines and cores of building b in b's rows serving c's pods, tier switches in the
    tier building's network rows: Σ over those rows of s ≥ the need. The links' transceiver kW
    τ[c,k] ≥ 0 with Σ_k τ = the fabric's optics kW; per row Σ_t s·kW_t + τ ≤ row rack kW · Σ r;
    Σ r ≤ positions of row k. Switch kW and τ load row k's feeds and air zone. Named
    ``fabric_leaves(c,d,pod)``, ``net_racks(c,d,t,row)``, ``space(row@net)``, ``region_links(c,d,b)``."""
    s = m.scenario
    if not s.fabrics:
        return
    types = s.catalog.by_id()
    sw = s.catalog.switch_by_id()
    by_id = {d.id: d for d in s.fabrics}
    lcs = sorted(s.site.fabric.link_classes, key=lambda c: c.max_length_m)
    shortest, longest = lcs[0], lcs[-1]
    lcs_by = {lk.id: lk for lk in s.site.fabric.link_classes}
    region = s.region_tier
    at = building_km(s)
    pod_size: dict[str, int] = defaultdict(int)
    for k, cls in m.classes.items():
        pod_size[m.ix.rows[k.row].row.pod] += cls.size
    building_of_pod = {pid: m.ix.halls[hid][0] for pid, hid in m.ix.pod_hall.items()}
    total_positions = sum(pod_size.values())
    rows_for = serving(m)
    rows: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    in_row: dict[str, list[pulp.LpVariable]] = defaultdict(list)
    capex: list = []
    power: list = []
    for g in m.groups.values():
        c = g.head
        if not c.fabrics:
            continue
        designs = [by_id[d] for d in c.fabrics]
        keys = [(key, var) for key, var in m.counts_of(g.id) if types[key.rack_type].gpus and not key.role]
        kinds = sorted({key.rack_type for key, _ in keys})
        here: dict[tuple[str, str], list[pulp.LpVariable]] = defaultdict(list)  # (type, pod) → counts
        for key, var in keys:
            here[key.rack_type, m.ix.rows[key.cls.row].row.pod].append(var)
        pods = sorted({pod for _, pod in here})
        bldgs = sorted({building_of_pod[p] for p in pods})
        spanning, present = _buildings(m, c.id, g.scope, bldgs, here, building_of_pod, pod_size)
        if (
            not present and len(bldgs) > 1 and g.scope in (Scope.pod, Scope.building)
        ):  # homed by the scope binaries
            present = {
                b: pulp.lpSum(
                    z
                    for key, z in m.z.items()
                    if key.group == g.id
                    and (key.scope == b if g.scope == Scope.building else building_of_pod.get(key.scope) == b)
                )
                for b in bldgs
            }
        choice = len(designs) > 1
        ys: dict[str, pulp.LpVariable] = {}
        x: dict[tuple[str, str, str], pulp.LpAffineExpression] = {}
        if choice:
            ys = {d.id: m.var(lp_name("fabric_pick", c.id, d.id), 0, 1, integer=True) for d in designs}
            m.fabric_pick.update({(c.id, d): y for d, y in ys.items()})
            m.add(pulp.lpSum(ys.values()) == 1, lp_name("fabric_one", c.id))
            for (t, pod), vs in here.items():
                parts = []
                for d in designs:
                    v = m.var(lp_name("fabric_racks", c.id, d.id, t, pod))
                    m.add(v - pod_size[pod] * ys[d.id] <= 0, lp_name("fabric_racks_on", c.id, d.id, t, pod))
                    x[d.id, t, pod] = pulp.LpAffineExpression(v)
                    parts.append(v)
                m.add(pulp.lpSum(parts) - pulp.lpSum(vs) == 0, lp_name("fabric_racks_sum", c.id, t, pod))
        else:
            for (t, pod), vs in here.items():
                x[designs[0].id, t, pod] = pulp.lpSum(vs)
        needs: list[
            tuple[str, int, list[str], pulp.LpAffineExpression]
        ] = []  # (design, tier, rows allowed, switches needed)
        optics_c: list = []
        for d in designs:
            leaf_down = max((leaf_down_of(d, types[t]) for t in kinds), default=None)
            p = ports(d, sw, leaf_down)
            y = ys.get(d.id)
            cost: list = []
            watts: list = []  # switches (not in GPU racks), kW
            optics: list = []  # the links' transceivers, kW
            per_rack = {
                t: (
                    math.ceil(types[t].gpus * d.nics_per_gpu / d.oversubscription[0])
                    if d.leaf_in_rack
                    else types[t].links
                )
                for t in kinds
            }
            cost.append(
                _position_links(
                    m,
                    keys,
                    per_rack,
                    "cost_usd_per_link",
                    y,
                    lp_name("fabric_links_usd", c.id, d.id),
                    total_positions,
                )
            )
            optics.append(
                _position_links(
                    m,
                    keys,
                    per_rack,
                    "power_w_per_link",
                    y,
                    lp_name("fabric_links_kw", c.id, d.id),
                    total_positions,
                )
            )
            if d.leaf_in_rack:
                inrack = lcs_by[d.in_rack_link]
                links0 = pulp.lpSum(x[d.id, t, pod] * types[t].links for (t, pod) in here)
                cost.append(links0 * inrack.cost_usd_per_link)
                optics.append(links0 * (inrack.power_w_per_link / 1000))
            rail = rail_width(d, (types[t] for t in kinds))
            top = sw[d.switches[-1]]
            region_lk: list = []
            for b in bldgs:
                mine = [(t, pod) for (t, pod) in here if building_of_pod[pod] == b]
                ends = pulp.lpSum(x[d.id, t, pod] * (types[t].gpus * d.nics_per_gpu) for t, pod in mine)
                label = f"{c.id}@{d.id}" if len(bldgs) == 1 else f"{c.id}@{d.id}@{b}"
                m.add_limit(
                    LimitKey("fabric_size", label), ends, float(max_endpoints(d, sw, leaf_down)), "endpoints"
                )
                b_rows = sorted(
                    {r for pod in pods if building_of_pod[pod] == b for r in rows_for.get(pod, [])}
                )
                if d.leaf_in_rack:
                    leaves = pulp.lpSum(x[d.id, t, pod] for t, pod in mine)
                    m.switch_need[d.switches[0]].append(leaves)
                    up1 = pulp.lpSum(x[d.id, t, pod] * per_rack[t] for t, pod in mine)
                    per_leaf_up = max(per_rack.values(), default=0)
                    n_leaf_max = sum(pod_size[pod] for pod in {pod for _, pod in mine})
                else:
                    groups = []
                    for pod in sorted({pod for _, pod in mine}):
                        e_p = pulp.lpSum(
                            x[d.id, t, pod] * (types[t].gpus * d.nics_per_gpu)
                            for t in kinds
                            if (d.id, t, pod) in x
                        )
                        q = m.var(lp_name("fabric_leaves", c.id, d.id, pod), 0, None, integer=True)
                        m.add(e_p - p.down[0] * rail * q <= 0, lp_name("fabric_leaves", c.id, d.id, pod))
                        needs.append((d.id, 1, rows_for.get(pod, []), q * rail))
                        groups.append(q * rail)
                    leaves = pulp.lpSum(groups)
                    m.switch_need[d.switches[0]].append(leaves)
                    up1 = leaves * p.up[0]
                    per_leaf_up = p.up[0]
                    leaf = sw[d.switches[0]]
                    cost.append(leaves * (leaf.price_usd + p.up[0] * shortest.cost_usd_per_link))
                    watts.append(leaves * (leaf.power_w / 1000))
                    optics.append(leaves * (p.up[0] * shortest.power_w_per_link / 1000))
                    n_leaf_max = sum(pod_size[pod] for pod in {pod for _, pod in mine}) + len(groups) * rail
                facing = p.radix[1] if d.tiers == 2 else p.down[1]
                sp = m.var(lp_name("fabric_spines", c.id, d.id, b), 0, None, integer=True)
                m.add(up1 - facing * sp <= 0, lp_name("fabric_spines", c.id, d.id, b))
                if (
                    d.spines_for == "largest_build"
                ):  # leaves rounded up to a power of two 2^j: binaries pick j
                    powers = [1 << j for j in range(max(1, math.ceil(math.log2(max(2, n_leaf_max)))) + 1)]
                    bs = [
                        m.var(lp_name("fabric_build", c.id, d.id, b, pw), 0, 1, integer=True) for pw in powers
                    ]
                    m.add(pulp.lpSum(bs) <= 1, lp_name("fabric_build_one", c.id, d.id, b))
                    m.add(
                        leaves - pulp.lpSum(pw * bv for pw, bv in zip(powers, bs, strict=True)) <= 0,
                        lp_name("fabric_build", c.id, d.id, b),
                    )
                    m.add(
                        facing * sp
                        - pulp.lpSum(
                            math.ceil(pw * per_leaf_up - 1e-9) * bv for pw, bv in zip(powers, bs, strict=True)
                        )
                        >= 0,
                        lp_name("fabric_build_spines", c.id, d.id, b),
                    )
                spine = sw[d.switches[1]]
                m.switch_need[d.switches[1]].append(pulp.LpAffineExpression(sp))
                cost.append(sp * spine.price_usd)
                watts.append(sp * (spine.power_w / 1000))
                tops: pulp.LpAffineExpression = pulp.LpAffineExpression(sp)
                if d.tiers == 3:
                    co = m.var(lp_name("fabric_cores", c.id, d.id, b), 0, None, integer=True)
                    m.add(sp * p.up[1] - p.radix[2] * co <= 0, lp_name("fabric_cores", c.id, d.id, b))
                    core = sw[d.switches[2]]
                    m.switch_need[d.switches[2]].append(pulp.LpAffineExpression(co))
                    cost.append(co * core.price_usd + sp * (p.up[1] * longest.cost_usd_per_link))
                    watts.append(co * (core.power_w / 1000))
                    optics.append(sp * (p.up[1] * longest.power_w_per_link / 1000))
                    needs.append((d.id, 2, b_rows, pulp.LpAffineExpression(sp)))
                    tops = pulp.LpAffineExpression(co)
                if spanning is not None:  # region links from b's top tier, on border switches there
                    assert region is not None
                    rate = sw[d.switches[0]].port_gbps / (
                        region.oversubscription * sw[region.switch].port_gbps
                    )
                    km = km_between(at[b], at[region.building])
                    lk = m.var(lp_name("region_links", c.id, d.id, b), 0, None, integer=True)
                    most = (
                        sum(pod_size[pod] for pod in {pod for _, pod in mine})
                        * max(types[t].gpus for t in kinds)
                        * d.nics_per_gpu
                    )
                    big = math.ceil(most * rate) + 1  # ℓ's largest need in b
                    m.add(
                        lk - rate * ends + big * (1 - spanning) >= 0, lp_name("region_links", c.id, d.id, b)
                    )
                    border = m.var(lp_name("region_border", c.id, d.id, b), 0, None, integer=True)
                    m.add(top.ports * border - lk >= 0, lp_name("region_border", c.id, d.id, b))
                    tops += border
                    m.switch_need[d.switches[-1]].append(pulp.LpAffineExpression(border))
                    cost.append(
                        border * top.price_usd
                        + lk * (longest.cost_usd_per_link + region.fibre_usd_per_km * km)
                    )
                    watts.append(border * (top.power_w / 1000))
                    optics.append(lk * (longest.power_w_per_link / 1000))
                    region_lk.append(lk)
                needs.append((d.id, d.tiers, b_rows, tops))
            if region_lk:
                assert region is not None
                agg = sw[region.switch]
                rv = m.var(lp_name("region_switches", c.id, d.id), 0, None, integer=True)
                m.add(agg.ports * rv - pulp.lpSum(region_lk) >= 0, lp_name("region_switches", c.id, d.id))
                m.switch_need[region.switch].append(pulp.LpAffineExpression(rv))
                cost.append(rv * agg.price_usd)
                watts.append(rv * (agg.power_w / 1000))
                needs.append(
                    (
                        d.id,
                        4,
                        sorted(r for r in m.network_rows if m.ix.rows[r].building == region.building),
                        pulp.LpAffineExpression(rv),
                    )
                )
            capex += cost
            power += watts + optics
            optics_c += optics
        _place_network_racks(m, c.id, designs, needs, pulp.lpSum(optics_c), rows, in_row, present, spanning)
    for rid, vs in in_row.items():
        m.add_limit(LimitKey("space", f"{rid}@net"), pulp.lpSum(vs), len(m.network_rows[rid]), "positions")
    m.fabric_rows = dict(rows)
    m.fabric_capex = pulp.lpSum(capex)
    m.fabric_kw = pulp.lpSum(power)


def _buildings(
    m: Model,
    cid: str,
    scope: Scope,
    bldgs: list[str],
    here: dict,
    building_of_pod: dict[str, str],
    pod_size: dict[str, int],
) -> tuple[pulp.LpVariable | None, dict]:
    """Which buildings a site-scoped cluster stands in (u[c,b]), held to one without a region tier;
    with one, its spanning indicator σ_c (and its latency budget kept). (None, {}) when it cannot
    leave one building by its hop budget, or the site has one."""
    if scope != Scope.site or len(bldgs) < 2:
        return None, {}
    s = m.scenario
    us = {}
    for b in bldgs:
        u = m.var(lp_name("in_building", cid, b), 0, 1, integer=True)
        cap = sum(pod_size[p] for p in {pod for _, pod in here if building_of_pod[pod] == b})
        racks_b = pulp.lpSum(v for (_, pod), vs in here.items() if building_of_pod[pod] == b for v in vs)
        m.add(racks_b - cap * u <= 0, lp_name("in_building", cid, b))
        m.add(racks_b - u >= 0, lp_name("in_building_some", cid, b))  # u = 1 only where it has racks
        us[b] = u
    if s.region_tier is None:
        m.add(pulp.lpSum(us.values()) <= 1, lp_name("one_building", cid))
        return None, us
    sigma = m.var(lp_name("spans", cid), 0, 1, integer=True)
    m.add(pulp.lpSum(us.values()) - 1 - (len(bldgs) - 1) * sigma <= 0, lp_name("spans", cid))
    m.add(pulp.lpSum(us.values()) - 2 * sigma >= 0, lp_name("spans_some", cid))  # σ = 1 only when it spans
    limit = next(c.max_latency_us for c in s.clusters if c.id == cid)
    if limit is not None:
        for i, b1 in enumerate(bldgs):
            for b2 in bldgs[i + 1 :]:
                if latency_us(s, [b1, b2]) > limit + 1e-9:
                    m.add(us[b1] + us[b2] <= 1, lp_name("latency", cid, b1, b2))
    return sigma, us


def _place_network_racks(
    m: Model,
    cid: str,
    designs,
    needs: list,
    link_kw: pulp.LpAffineExpression,
    rows: dict,
    in_row: dict,
    present: dict,
    spanning: pulp.LpVariable | None,
) -> None:
    """Network racks of one cluster (see :func:`add_fabric_constraints`): per row and tier the
    switches standing there and the racks holding them, per row a share of the links'
    transceiver power; racks only in buildings the cluster stands in (``present``: building → its
    indicator, when it may stand in several), and the region tier's building when it spans."""
    sw = m.scenario.catalog.switch_by_id()
    region = m.scenario.region_tier
    allowed: dict[tuple[str, int], set[str]] = defaultdict(set)
    for did, tier, where, _ in needs:
        allowed[did, tier].update(where)
    eligible = sorted({r for where in allowed.values() for r in where})
    s_vars: dict[tuple[str, str, int], pulp.LpVariable] = {}
    here_kw: dict[str, list] = defaultdict(list)
    here_racks: dict[str, list] = defaultdict(list)
    for d in designs:
        for tier in (1, 2, 3, 4):
            if not allowed.get((d.id, tier)):
                continue
            sm = sw[region.switch] if tier == 4 and region is not None else sw[d.switches[tier - 1]]
            for rid in sorted(allowed[d.id, tier]):
                limit = m.ix.rows[rid].row.max_rack_power_kw
                cap = min(d.rack_units // sm.height_u, math.floor(limit * 1000 / sm.power_w + 1e-9))
                if cap < 1:
                    continue
                sv = m.var(lp_name("net_switches", cid, d.id, tier, rid), 0, None, integer=True)
                rv = m.var(
                    lp_name("net_racks", cid, d.id, tier, rid), 0, len(m.network_rows[rid]), integer=True
                )
                m.add(sv - cap * rv <= 0, lp_name("net_racks", cid, d.id, tier, rid))
                s_vars[d.id, rid, tier] = sv
                m.network_racks[cid, d.id, rid, tier] = rv
                in_row[rid].append(rv)
                here_racks[rid].append(rv)
                here_kw[rid].append((sv, sm.power_w / 1000))
    hub = region.building if region is not None else None
    for rid in eligible:
        b = m.ix.rows[rid].building
        if b in present:
            on = present[b] + (spanning if spanning is not None and b == hub else 0)
            m.add(
                pulp.lpSum(here_racks[rid]) - len(m.network_rows[rid]) * on <= 0,
                lp_name("net_in_building", cid, rid),
            )
    for k, (did, tier, where, need) in enumerate(needs):
        mine = [s_vars[did, rid, tier] for rid in where if (did, rid, tier) in s_vars]
        m.add(pulp.lpSum(mine) - need >= 0, lp_name("net_switches_need", cid, did, tier, k))
    if not eligible:
        m.add(link_kw <= 0, lp_name("no_network_rows", cid))
        return
    shares = []
    for rid in eligible:
        tau = m.var(lp_name("net_optics_kw", cid, rid))
        m.network_kw[cid, rid] = tau
        shares.append(tau)
        load = pulp.LpAffineExpression(here_kw[rid]) + tau
        m.add(
            load - m.ix.rows[rid].row.max_rack_power_kw * pulp.lpSum(here_racks[rid]) <= 0,
            lp_name("net_kw", cid, rid),
        )
        rows[rid].extend([*here_kw[rid], (tau, 1.0)])
    m.network_switches.update({(cid, *k): v for k, v in s_vars.items()})
    m.add(pulp.lpSum(shares) - link_kw == 0, lp_name("net_optics_kw", cid))
