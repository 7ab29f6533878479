"""Designed fabrics' network racks (§13) in the optimiser: per phase, the switches of each tier
standing in each network row and the racks holding them, a share τ of the links' transceiver power
per row (Σ_k τ ≥ the links' kW); switches, racks and each row's share once stood stay
(``s[p] ≥ s[p − 1]``, ``r[p] ≥ r[p − 1]``, ``τ[p] ≥ τ[p − 1]``): every row's load then only
grows, so the limits stated where capacity changes hold in every phase between."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.errors import SolverFailure
from planner.model.core import Model
from planner.model.keys import lp_name
from planner.rules.fabric_sizing import fabric_sizes


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


def _keep(m: Model, key: tuple, var: pulp.LpVariable, store: dict, name: str, p: int) -> None:
    """What stood in the phase before stays: var ≥ its value then (named ``name`` with the phase)."""
    if p <= m.from_phase:
        return
    before = store.get((*key, m.ph(p - 1)))
    if before is not None:
        m.add(var - before >= 0, lp_name(name + "_kept", *key, *m.sfx(p)))


def _switch_racks(
    m: Model, cid: str, designs, allowed: dict, in_row: dict, here_kw: dict, here_racks: dict, p: int
) -> dict:
    """Per design, tier and allowed row online in phase p: integer switches s and racks r ≥ s / cap
    holding them, cap = min(⌊units ÷ height⌋, ⌊row rack kW ÷ switch kW⌋) (rows where no switch fits
    get none); both at least what stood there in the phase before."""
    sw = m.scenario.catalog.switch_by_id()
    region = m.scenario.region_tier
    s_vars: dict[tuple[str, str, int], pulp.LpVariable] = {}
    for d in designs:
        for tier in (1, 2, 3, 4):
            if not allowed.get((d.id, tier)):
                continue
            sm = sw[region.switch] if tier == 4 and region is not None else sw[d.switches[tier - 1]]
            for rid in sorted(allowed[d.id, tier]):
                limit = m.ix.rows[rid].row.max_rack_power_kw
                cap = min(d.rack_units // sm.height_u, math.floor(limit * 1000 / sm.power_w + 1e-9))
                if cap < 1 or m.tl.row_on.get(rid, 0) > p:
                    continue
                sfx = m.sfx(p)
                sv = m.var(lp_name("net_switches", cid, d.id, tier, rid, *sfx), 0, None, integer=True)
                rv = m.var(
                    lp_name("net_racks", cid, d.id, tier, rid, *sfx),
                    0,
                    len(m.network_rows[rid]),
                    integer=True,
                )
                m.add(sv - cap * rv <= 0, lp_name("net_racks", cid, d.id, tier, rid, *sfx))
                key = (cid, d.id, rid, tier)
                _keep(m, key, sv, m.network_switches, "net_switches", p)
                _keep(m, key, rv, m.network_racks, "net_racks", p)
                s_vars[d.id, rid, tier] = sv
                m.network_switches[(*key, m.ph(p))] = sv
                m.network_racks[(*key, m.ph(p))] = rv
                in_row[rid].append(rv)
                here_racks[rid].append(rv)
                here_kw[rid].append((sv, sm.power_w / 1000))
    return s_vars


def place_network_racks(
    m: Model,
    cid: str,
    designs,
    needs: list,
    link_kw: pulp.LpAffineExpression,
    rows: dict,
    in_row: dict,
    present: dict,
    spanning: pulp.LpVariable | None,
    p: int,
) -> None:
    """Network racks of one cluster in phase index p (see :func:`planner.model.fabric.
    add_fabric_constraints`): per row and tier the switches standing there and the racks holding
    them, per row a share of the links' transceiver power; racks only in buildings the cluster
    stands in (``present``: building → its indicator, when it may stand in several), and the region
    tier's building when it spans."""
    region = m.scenario.region_tier
    allowed: dict[tuple[str, int], set[str]] = defaultdict(set)
    for did, tier, where, *_ in needs:
        allowed[did, tier].update(where)
    standing = _standing(m, cid)
    for d in designs:  # rows with racks standing may hold racks of any tier the design houses
        for rid in standing[2]:
            for tier in range(2 if d.leaf_in_rack else 1, d.tiers + 1):
                allowed[d.id, tier].add(rid)
    here_kw: dict[str, list] = defaultdict(list)
    here_racks: dict[str, list] = defaultdict(list)
    s_vars = _switch_racks(m, cid, designs, allowed, in_row, here_kw, here_racks, p)
    _keep_standing(m, cid, s_vars, here_racks, standing, p)
    eligible = sorted({rid for (_, rid, _) in s_vars})
    hub = region.building if region is not None else None
    sfx = m.sfx(p)
    for rid in eligible:
        b = m.ix.rows[rid].building
        if b in present:
            on = present[b] + (spanning if spanning is not None and b == hub else 0)
            m.add(
                pulp.lpSum(here_racks[rid]) - len(m.network_rows[rid]) * on <= 0,
                lp_name("net_in_building", cid, rid, *sfx),
            )
    _cover_needs(m, cid, needs, s_vars, p)
    if not eligible:
        m.add(link_kw <= 0, lp_name("no_network_rows", cid, *sfx))
        return
    shares = []
    for rid in eligible:
        tau = m.var(lp_name("net_optics_kw", cid, rid, *sfx))
        _keep(m, (cid, rid), tau, m.network_kw, "net_optics_kw", p)
        m.network_kw[cid, rid, m.ph(p)] = tau
        shares.append(tau)
        load = pulp.LpAffineExpression(here_kw[rid]) + tau
        m.add(
            load - m.ix.rows[rid].row.max_rack_power_kw * pulp.lpSum(here_racks[rid]) <= 0,
            lp_name("net_kw", cid, rid, *sfx),
        )
        rows[rid].extend([*here_kw[rid], (tau, 1.0)])
    m.add(pulp.lpSum(shares) - link_kw >= 0, lp_name("net_optics_kw", cid, *sfx))


def _standing(m: Model, cid: str) -> tuple[dict, dict, dict]:
    """The cluster's network racks standing already (``m.installed_network``): (design, row, tier) →
    switches, (design, row, tier) → racks holding them, row → every rack of it there (transceivers
    only too)."""
    switches: dict[tuple[str, str, int], int] = defaultdict(int)
    racks: dict[tuple[str, str, int], int] = defaultdict(int)
    in_row: dict[str, int] = defaultdict(int)
    for nr in m.installed_network:
        if nr.cluster != cid:
            continue
        in_row[nr.row] += 1
        tiers = {sc.tier for sc in nr.switches}
        for sc in nr.switches:
            switches[nr.design, nr.row, sc.tier] += sc.count
        for tier in tiers:
            racks[nr.design, nr.row, tier] += 1
    return switches, racks, in_row


def _keep_standing(m: Model, cid: str, s_vars: dict, here_racks: dict, standing: tuple, p: int) -> None:
    """What stands already stays: s ≥ its switches, r ≥ its racks per tier, and in each row at least
    as many racks as stand there (a rack of transceivers only among them)."""
    switches, racks, in_row = standing
    sfx = m.sfx(p)
    for (did, rid, tier), n in sorted(switches.items()):
        sv = s_vars.get((did, rid, tier))
        if sv is None:
            raise SolverFailure(
                f"network racks of {cid}: {n} tier-{tier} switches stand in {rid}, a row they no longer fit"
            )
        m.add(sv >= n, lp_name("net_switches_standing", cid, did, tier, rid, *sfx))
        rv = m.network_racks.get((cid, did, rid, tier, m.ph(p)))
        if rv is not None:
            m.add(rv >= racks[did, rid, tier], lp_name("net_racks_standing", cid, did, tier, rid, *sfx))
    for rid, n in sorted(in_row.items()):
        m.add(pulp.lpSum(here_racks.get(rid, [])) >= n, lp_name("net_row_standing", cid, rid, *sfx))


def standing_shares(m: Model, cid: str) -> dict[tuple[str, str], int]:
    """(pod, row) → the cluster's standing leaves (``m.installed_network``) in a row serving several
    pods that serve that pod: the installed racks' leaves per pod, each pod's own rows first, then
    the rows serving fewer pods (most specific first: exact for the site's pod ⊂ hall ⊂ building
    rows). The model keeps these shares and the fill starts from them."""
    mine = [nr for nr in m.installed_network if nr.cluster == cid]
    if not mine:
        return {}
    racks = [r for r in m.scenario.existing if r.cluster == cid]
    z = fabric_sizes(m.scenario, racks, {cid: mine[0].design}).get(cid)
    if z is None or not z.leaves_per_pod:
        return {}
    leaves: dict[str, int] = defaultdict(int)
    for nr in mine:
        leaves[nr.row] += sum(sc.count for sc in nr.switches if sc.tier == 1)
    rows_for = serving(m)
    pods_of: dict[str, int] = defaultdict(int)
    for rows in rows_for.values():
        for rid in rows:
            pods_of[rid] += 1
    out: dict[tuple[str, str], int] = {}
    for pod, n in sorted(z.leaves_per_pod.items()):
        for rid in sorted(rows_for.get(pod, []), key=lambda r: (pods_of[r], r)):
            k = min(n, leaves[rid])
            if k > 0:
                leaves[rid] -= k
                n -= k
                if pods_of[rid] > 1:
                    out[pod, rid] = k
    return out


def _cover_needs(m: Model, cid: str, needs: list, s_vars: dict, p: int) -> None:
    """Each need (design, tier, rows, switches, what) met by the switches of its rows. A row several
    needs of one design and tier may use (a hall's or building's network row serving several pods'
    leaves) splits its switches between them: a[k,row] ≥ 0, Σ_k a[k,row] ≤ s[row], need_k ≤ Σ of
    its own rows' s + Σ_row a[k,row] (a transportation split: integral needs and s make it exact);
    a share once given stays (a[k,row,p] ≥ a[k,row,p − 1]: leaves are not moved between pods)."""
    sfx = m.sfx(p)
    standing = standing_shares(m, cid) if p == m.from_phase else {}
    users: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for k, (did, tier, where, *_) in enumerate(needs):
        for rid in where:
            if (did, rid, tier) in s_vars:
                users[did, tier, rid].append(k)
    share: dict[tuple[str, int, str], list] = defaultdict(list)
    for did, tier, where, need, what in needs:
        mine = []
        for rid in where:
            if (did, rid, tier) not in s_vars:
                continue
            if len(users[did, tier, rid]) == 1:
                mine.append(s_vars[did, rid, tier])
                continue
            key = (cid, did, tier, what, rid)
            a = m.var(lp_name("net_share", *key, *sfx), standing.get((what, rid), 0) if tier == 1 else 0)
            _keep(m, key, a, m.network_share, "net_share", p)
            m.network_share[(*key, m.ph(p))] = a
            share[did, tier, rid].append(a)
            mine.append(a)
        m.add(pulp.lpSum(mine) - need >= 0, lp_name("net_switches_need", cid, did, tier, what, *sfx))
    for (did, tier, rid), parts in sorted(share.items()):
        m.add(
            pulp.lpSum(parts) - s_vars[did, rid, tier] <= 0,
            lp_name("net_share_row", cid, did, tier, rid, *sfx),
        )
