"""Designed fabrics (§13) in the optimiser: a design choice per cluster, switches per tier as
integers, every fabric link priced and powered by its class, and the switches in network racks
placed at network rows, their power on those rows' feeds and their heat in those rows' zones
(sizing rules: :mod:`planner.fabric`)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import LimitKind
from planner.fabric import leaf_down_of, max_endpoints, ports, rail_width
from planner.model.core import Model
from planner.model.keys import Family, LimitKey, lp_name


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
        pods = [ref.row.pod] if kind == "pod" else pods_of_hall[ref.hall] if kind == "hall" else pods_of_building[ref.building]
        for p in pods:
            out[p].append(rid)
    return out


def _position_links(m: Model, keys: list, per_rack: dict[str, int], attr: str, y: pulp.LpVariable | None, name: str,
                    positions: int) -> pulp.LpAffineExpression:
    """Links whose class depends on where the rack stands (cabled GPU links, rack uplinks):
    Σ count · links per rack · the class's cost (USD) or power (kW) at the count's position class.
    For one design among several (``y``): a variable ≥ that sum when y = 1, ≥ 0 otherwise."""
    lcs = m.scenario.site.fabric.link_classes
    by_id = {lk.id: lk for lk in lcs}
    longest = max(lcs, key=lambda lk: lk.max_length_m)
    scale = 1.0 if attr == "cost_usd_per_link" else 0.001
    terms = [(var, per_rack[key.rack_type] * scale * getattr(by_id.get(m.classes[key.cls].link.get(key.rack_type) or longest.id, longest), attr))
             for key, var in keys]
    if y is None:
        return pulp.LpAffineExpression(terms)
    v = m.var(name)
    m.add(v - pulp.LpAffineExpression(terms) + positions * max((co for _, co in terms), default=0.0) * (1 - y) >= 0, name)
    return pulp.LpAffineExpression(v)


def add_fabric_constraints(m: Model) -> None:
    """Designed fabrics (§13, :mod:`planner.fabric`), per cluster c on designs D_c (a choice y[c,d]
    ∈ {0,1}, Σ_d y = 1, when there are several). x[d,t,p]: c's GPU racks of type t in pod p on
    design d (its racks there when D_c is one design; else Σ_d x[d,t,p] = its racks of t in p,
    x[d,t,p] ≤ positions_p · y[c,d]); endpoints E_d = Σ x·gpus_t·nics ≤ the design's largest build.

    Leaves: one per GPU rack when in the racks; else per pod p integer groups q[d,p] with
    w·q ≥ E_{d,p} / d₁ (w the rail width). Spines S_d ≥ U₁ / k₂ (2 tiers) or U₁ / d₂ (3 tiers), U₁
    the leaves' uplinks, or for the largest build U₁ = 2^j·u₁ with binaries choosing the power of
    two 2^j ≥ leaves; cores C_d ≥ S_d·u₂ / k₃. Links by class: GPU to leaf (in-rack copper, or
    cabled at each rack's position class), leaf to spine (at the rack's class when leaves are in
    the racks, else the shortest), spine to core (the longest). Capex and kW: switches not in GPU
    racks and every link.

    Network racks: integer r[k,c,t] in network row k holding tier-t switches, at most
    cap(k,t) = min(⌊units ÷ height_t⌋, ⌊row rack kW ÷ switch kW_t⌋) each: Σ_k r·cap ≥ S_t, leaves of
    pod p only in rows serving p (Σ_{k serves p} r[k,c,1]·cap ≥ leaves of p); continuous kW
    w[k,c] ≤ Σ_t r[k,c,t] · row rack kW with Σ_k w[k,c] = the fabric's kW (its power, spread over
    its racks); Σ_{c,t} r[k,c,t] ≤ positions of row k. w is load on row k's feeds and heat in its air
    zone. Named ``fabric_leaves(c,d,pod)``, ``net_racks(c,t,row)``, ``space(row@net)``."""
    m.needs_done("fabric", "counts")
    m.done("fabric")
    s = m.scenario
    if not s.fabrics:
        return
    types = s.catalog.by_id()
    sw = s.catalog.switch_by_id()
    by_id = {d.id: d for d in s.fabrics}
    lcs = sorted(s.site.fabric.link_classes, key=lambda c: c.max_length_m)
    shortest, longest = lcs[0], lcs[-1]
    lcs_by = {lk.id: lk for lk in s.site.fabric.link_classes}
    pod_size: dict[str, int] = defaultdict(int)
    for k, cls in m.classes.items():
        pod_size[m.ix.rows[k.row].row.pod] += cls.size
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
        keys = [(key, var) for key, var in m.n.items() if key.group == g.id and types[key.rack_type].gpus and not key.role]
        kinds = sorted({key.rack_type for key, _ in keys})
        here: dict[tuple[str, str], list[pulp.LpVariable]] = defaultdict(list)  # (type, pod) → counts
        for key, var in keys:
            here[key.rack_type, m.ix.rows[key.cls.row].row.pod].append(var)
        pods = sorted({pod for _, pod in here})
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
        # switches per tier (all designs: only the chosen one's are non-zero), and per pod the leaves
        tier_switch: dict[tuple[str, int], pulp.LpAffineExpression] = {}
        pod_leaves: dict[tuple[str, str], pulp.LpAffineExpression] = {}
        optics_c: list = []
        for d in designs:
            leaf_down = max((leaf_down_of(d, types[t]) for t in kinds), default=None)
            p = ports(d, sw, leaf_down)
            r_dt = {t: pulp.lpSum(x[d.id, t2, pod] for (t2, pod) in here if t2 == t) for t in kinds}
            ends = pulp.lpSum(r_dt[t] * (types[t].gpus * d.nics_per_gpu) for t in kinds)
            m.add_limit(LimitKey(Family.fabric_size, f"{c.id}@{d.id}"), LimitKind.fabric, ends, float(max_endpoints(d, sw, leaf_down)), "endpoints")
            cost: list = []
            watts: list = []  # switches (not in GPU racks), kW
            optics: list = []  # the links' transceivers, kW
            y = ys.get(d.id)
            if d.leaf_in_rack:
                inrack = lcs_by[d.in_rack_link]
                links0 = pulp.lpSum(r_dt[t] * types[t].links for t in kinds)
                cost.append(links0 * inrack.cost_usd_per_link)
                optics.append(links0 * (inrack.power_w_per_link / 1000))
                up = {t: math.ceil(types[t].gpus * d.nics_per_gpu / d.oversubscription[0]) for t in kinds}
                up1 = pulp.lpSum(r_dt[t] * up[t] for t in kinds)
                per_rack = {t: up[t] for t in kinds}
                cost.append(_position_links(m, keys, per_rack, "cost_usd_per_link", y, lp_name("fabric_links_usd", c.id, d.id), total_positions))
                optics.append(_position_links(m, keys, per_rack, "power_w_per_link", y, lp_name("fabric_links_kw", c.id, d.id), total_positions))
                leaves = pulp.lpSum(r_dt.values())
                per_leaf_up = max(up.values(), default=0)
            else:
                per_rack = {t: types[t].links for t in kinds}
                cost.append(_position_links(m, keys, per_rack, "cost_usd_per_link", y, lp_name("fabric_links_usd", c.id, d.id), total_positions))
                optics.append(_position_links(m, keys, per_rack, "power_w_per_link", y, lp_name("fabric_links_kw", c.id, d.id), total_positions))
                per = rail_width(d, (types[t] for t in kinds))
                groups = []
                for pod in pods:
                    e_p = pulp.lpSum(x[d.id, t, pod] * (types[t].gpus * d.nics_per_gpu) for t in kinds if (d.id, t, pod) in x)
                    q = m.var(lp_name("fabric_leaves", c.id, d.id, pod), 0, None, integer=True)
                    m.add(e_p - p.down[0] * per * q <= 0, lp_name("fabric_leaves", c.id, d.id, pod))
                    pod_leaves[d.id, pod] = q * per
                    groups.append(q * per)
                leaves = pulp.lpSum(groups)
                up1 = leaves * p.up[0]
                per_leaf_up = p.up[0]
                leaf = sw[d.switches[0]]
                cost.append(leaves * (leaf.price_usd + p.up[0] * shortest.cost_usd_per_link))
                watts.append(leaves * (leaf.power_w / 1000))
                optics.append(leaves * (p.up[0] * shortest.power_w_per_link / 1000))
                tier_switch[d.id, 1] = leaves
            facing = p.radix[1] if d.tiers == 2 else p.down[1]
            sp = m.var(lp_name("fabric_spines", c.id, d.id), 0, None, integer=True)
            m.add(up1 - facing * sp <= 0, lp_name("fabric_spines", c.id, d.id))
            if d.spines_for == "largest_build":  # leaves rounded up to a power of two 2^j: binaries pick j
                most = total_positions * (1 if d.leaf_in_rack else 1) + len(pods) * rail_width(d, (types[t] for t in kinds))
                powers = [1 << j for j in range(max(1, math.ceil(math.log2(max(2, most)))) + 1)]
                bs = [m.var(lp_name("fabric_build", c.id, d.id, pw), 0, 1, integer=True) for pw in powers]
                m.add(pulp.lpSum(bs) <= 1, lp_name("fabric_build_one", c.id, d.id))
                m.add(leaves - pulp.lpSum(pw * b for pw, b in zip(powers, bs, strict=True)) <= 0, lp_name("fabric_build", c.id, d.id))
                m.add(facing * sp - pulp.lpSum(math.ceil(pw * per_leaf_up - 1e-9) * b for pw, b in zip(powers, bs, strict=True)) >= 0,
                      lp_name("fabric_build_spines", c.id, d.id))
            spine = sw[d.switches[1]]
            cost.append(sp * spine.price_usd)
            watts.append(sp * (spine.power_w / 1000))
            tier_switch[d.id, 2] = pulp.LpAffineExpression(sp)
            if d.tiers == 3:
                co = m.var(lp_name("fabric_cores", c.id, d.id), 0, None, integer=True)
                m.add(sp * p.up[1] - p.radix[2] * co <= 0, lp_name("fabric_cores", c.id, d.id))
                core = sw[d.switches[2]]
                cost.append(co * core.price_usd + sp * (p.up[1] * longest.cost_usd_per_link))
                watts.append(co * (core.power_w / 1000))
                optics.append(sp * (p.up[1] * longest.power_w_per_link / 1000))
                tier_switch[d.id, 3] = pulp.LpAffineExpression(co)
            capex += cost
            power += watts + optics
            optics_c += optics
        _place_network_racks(m, c.id, designs, tier_switch, pod_leaves, pods, rows_for, pulp.lpSum(optics_c), rows, in_row)
    for rid, vs in in_row.items():
        m.add_limit(LimitKey(Family.space, f"{rid}@net"), LimitKind.row_positions, pulp.lpSum(vs), len(m.network_rows[rid]), "positions")
    m.fabric_rows = dict(rows)
    m.fabric_capex = pulp.lpSum(capex)
    m.fabric_kw = pulp.lpSum(power)


def _place_network_racks(m: Model, cid: str, designs, tier_switch, pod_leaves, pods: list[str], rows_for: dict[str, list[str]],
                         link_kw: pulp.LpAffineExpression, rows: dict, in_row: dict) -> None:
    """Network racks of one cluster (see :func:`add_fabric_constraints`): per row and tier the
    switches standing there and the racks holding them, per row a share of the links'
    transceiver power."""
    sw = m.scenario.catalog.switch_by_id()
    eligible = sorted({r for p in pods for r in rows_for.get(p, [])})
    if not eligible:
        if pods:  # no network row serves its pods: its switches have nowhere to stand
            m.add(link_kw <= 0, lp_name("no_network_rows", cid))
            for (d_id, t), n in tier_switch.items():
                m.add(n <= 0, lp_name("no_network_rows", cid, d_id, t))
        return
    limit = {r: m.ix.rows[r].row.max_rack_power_kw for r in eligible}
    here_kw: dict[str, list] = defaultdict(list)
    here_racks: dict[str, list] = defaultdict(list)
    s_vars: dict[tuple[str, str, int], pulp.LpVariable] = {}
    for d in designs:
        for tier, model_id in enumerate(d.switches, start=1):
            if (d.id, tier) not in tier_switch:
                continue  # leaves in the GPU racks
            sm = sw[model_id]
            placed = []
            for rid in eligible:
                cap = min(d.rack_units // sm.height_u, math.floor(limit[rid] * 1000 / sm.power_w + 1e-9))
                if cap < 1:
                    continue
                sv = m.var(lp_name("net_switches", cid, d.id, tier, rid), 0, None, integer=True)
                rv = m.var(lp_name("net_racks", cid, d.id, tier, rid), 0, len(m.network_rows[rid]), integer=True)
                m.add(sv - cap * rv <= 0, lp_name("net_racks", cid, d.id, tier, rid))
                s_vars[d.id, rid, tier] = sv
                m.network_racks[cid, d.id, rid, tier] = rv
                placed.append(sv)
                in_row[rid].append(rv)
                here_racks[rid].append(rv)
                here_kw[rid].append((sv, sm.power_w / 1000))
            m.add(pulp.lpSum(placed) - tier_switch[d.id, tier] >= 0, lp_name("net_switches", cid, d.id, tier))
        for pod in pods:
            if (d.id, pod) in pod_leaves:
                mine = [s_vars[d.id, rid, 1] for rid in rows_for.get(pod, []) if (d.id, rid, 1) in s_vars]
                m.add(pulp.lpSum(mine) - pod_leaves[d.id, pod] >= 0, lp_name("net_switches_pod", cid, d.id, pod))
    shares = []
    for rid in eligible:
        tau = m.var(lp_name("net_optics_kw", cid, rid))
        m.network_kw[cid, rid] = tau
        shares.append(tau)
        load = pulp.LpAffineExpression(here_kw[rid]) + tau
        m.add(load - limit[rid] * pulp.lpSum(here_racks[rid]) <= 0, lp_name("net_kw", cid, rid))
        rows[rid].extend([*here_kw[rid], (tau, 1.0)])
    m.network_switches.update({(cid, *k): v for k, v in s_vars.items()})
    m.add(pulp.lpSum(shares) - link_kw == 0, lp_name("net_optics_kw", cid))
