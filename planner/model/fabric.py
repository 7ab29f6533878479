"""Designed fabrics (§13) in the optimiser: a design choice per cluster, switches per tier as
integers, their capex, and their power charged to the network-rack rows of the pods the cluster's
GPUs stand in (sizing rules: :mod:`planner.fabric`)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import LimitKind
from planner.fabric import leaf_down_of, max_endpoints, ports, rates
from planner.model.core import Model
from planner.model.keys import Family, LimitKey, lp_name


def add_fabric_constraints(m: Model) -> None:
    """Designed fabrics (§13, :mod:`planner.fabric`), per cluster c on designs D_c (a choice y[c,d]
    ∈ {0,1}, Σ_d y = 1, when there are several). x[d,t,p]: c's GPU racks of type t in pod p on
    design d (its racks there when D_c is one design; else Σ_d x[d,t,p] = its racks of t in p,
    x[d,t,p] ≤ positions_p · y[c,d]); R[d,t] = Σ_p x[d,t,p]; endpoints E_d = Σ_t R[d,t]·gpus_t·nics
    ≤ the design's largest build; leaves L_d = Σ_t R[d,t] (leaves in racks) or integer
    L_d ≥ E_d / d₁ (in multiples of the server's GPUs when rail-optimised); integer spines
    S_d ≥ U₁ / k₂ (2 tiers) or U₁ / d₂ (3 tiers), U₁ = L_d·u₁ (Σ_t R[d,t]·u₁(t) for leaves in racks);
    integer cores C_d ≥ S_d·u₂ / k₃. Capex += prices × switches (not leaves in racks) + links above
    the racks; power: x[d,t,p] · gpus_t · the design's kW per GPU on pod p's network-rack row
    (its feeds and its air zone)."""
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
    net_row = {pid: pod.network_rack.row for pid, pod in m.ix.pods.items()}
    pod_size: dict[str, int] = defaultdict(int)
    for k, cls in m.classes.items():
        pod_size[m.ix.rows[k.row].row.pod] += cls.size
    rows: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    capex: list = []
    power: list = []
    lcs_by = {lk.id: lk for lk in s.site.fabric.link_classes}
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
        choice = len(designs) > 1
        ys = {}
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
        for d in designs:
            leaf_down = max((leaf_down_of(d, types[t]) for t in kinds), default=None)
            p = ports(d, sw, leaf_down)
            r_dt = {t: pulp.lpSum(x[d.id, t2, pod] for (t2, pod) in here if t2 == t) for t in kinds}
            ends = pulp.lpSum(r_dt[t] * (types[t].gpus * d.nics_per_gpu) for t in kinds)
            m.add_limit(LimitKey(Family.fabric_size, f"{c.id}@{d.id}"), LimitKind.fabric, ends, float(max_endpoints(d, sw, leaf_down)), "endpoints")
            if d.leaf_in_rack:
                up1 = pulp.lpSum(r_dt[t] * math.ceil(types[t].gpus * d.nics_per_gpu / d.oversubscription[0]) for t in kinds)
                for unit, out, what in (("usd", capex, "cost_usd_per_link"), ("kw", power, "power_w_per_link")):
                    scale = 1.0 if unit == "usd" else 0.001
                    terms = [(var, math.ceil(types[key.rack_type].gpus * d.nics_per_gpu / d.oversubscription[0]) * scale
                              * getattr(lcs_by.get(m.classes[key.cls].link.get(key.rack_type) or longest.id, longest), what)) for key, var in keys]
                    if choice:  # rack uplinks at their position classes' link classes, when built on d
                        big = sum(pod_size.values()) * max((co for _, co in terms), default=0.0)
                        links = m.var(lp_name(f"fabric_rack_links_{unit}", c.id, d.id))
                        m.add(links - pulp.LpAffineExpression(terms) + big * (1 - ys[d.id]) >= 0, lp_name(f"fabric_rack_links_{unit}", c.id, d.id))
                        out.append(pulp.LpAffineExpression(links))
                    else:
                        out.append(pulp.LpAffineExpression(terms))
            else:
                per = (max((types[t].gpus_per_server for t in kinds), default=1) or 1) if d.rail_optimized else 1
                lv = m.var(lp_name("fabric_leaves", c.id, d.id), 0, None, integer=True)
                m.add(ends - p.down[0] * per * lv <= 0, lp_name("fabric_leaves", c.id, d.id))
                up1 = lv * (per * p.up[0])
                capex.append(lv * (per * (sw[d.switches[0]].price_usd + p.up[0] * shortest.cost_usd_per_link)))
                power.append(lv * (per * (sw[d.switches[0]].power_w + p.up[0] * shortest.power_w_per_link) / 1000))
            sp = m.var(lp_name("fabric_spines", c.id, d.id), 0, None, integer=True)
            m.add(up1 - (p.radix[1] if d.tiers == 2 else p.down[1]) * sp <= 0, lp_name("fabric_spines", c.id, d.id))
            capex.append(sp * sw[d.switches[1]].price_usd)
            power.append(sp * (sw[d.switches[1]].power_w / 1000))
            if d.tiers == 3:
                co = m.var(lp_name("fabric_cores", c.id, d.id), 0, None, integer=True)
                m.add(sp * p.up[1] - p.radix[2] * co <= 0, lp_name("fabric_cores", c.id, d.id))
                capex.append(co * sw[d.switches[2]].price_usd + sp * (p.up[1] * longest.cost_usd_per_link))
                power.append(co * (sw[d.switches[2]].power_w / 1000) + sp * (p.up[1] * longest.power_w_per_link / 1000))
            for (d_id, t, pod), expr in x.items():
                if d_id == d.id:
                    kw = round(rates(s, d, types[t]).kw_per_gpu * types[t].gpus, 9)
                    rows[net_row[pod]].extend((v, kw * a) for v, a in expr.items())
    m.fabric_rows = dict(rows)
    m.fabric_capex = pulp.lpSum(capex)
    m.fabric_kw = pulp.lpSum(power)
