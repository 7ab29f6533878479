"""Failover policies and failure-domain spread (§4, §11): the load a contingency leaves each feed
group when clusters cap or shed, and the share of a cluster one element's failure may take down."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import FailoverPolicy, LimitKind
from planner.input.site_index import SiteIndex
from planner.model.core import Model, summed
from planner.model.keys import Family, LimitKey
from planner.rules.reliability import domain_rows, node_failure_rows, rows_of_feed
from planner.schema import Scenario


def add_failover_loads(m: Model) -> None:
    """Only when some cluster caps or sheds: P_eff_{g,p} = Σ n · p_t · f_c over the group's racks,
    f_c the share of planning power the cluster's policy leaves a rack in a contingency (keep 1,
    cap cap_ratio, shed 0); designed fabrics' switches keep their power. Gives ``m.group_eff``,
    which the power family uses in its N-1 rows."""
    m.needs_done("failover", "loads")
    m.done("failover")
    if all(g.head.on_power_failure == FailoverPolicy.keep for g in m.groups.values()):
        return
    types = m.scenario.catalog.by_id()
    for p in m.points:
        eff: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            head = m.groups[key.group].head
            f = head.on_power_failure.factor(head.cap_ratio)
            if f > 0:
                eff[m.pm.group_of_row[key.cls.row]].append((var, round(m.scenario.rack_power_kw(types[key.rack_type]) * f, 9)))
        for row, items in m.fabric_rows.items():  # switches keep power
            eff[m.pm.group_of_row[row]].extend(items)
        for name in [k for k in m.group_kw if not m.tl.phased or k.endswith(f"|{m.ph(p)}")]:
            g = name.rsplit("|", 1)[0] if m.tl.phased else name
            m.group_eff[name] = summed(eff.get(g, []))


def spread_domains(scenario: Scenario, ix: SiteIndex, shed: bool) -> dict[tuple[str, str], frozenset[str]]:
    """Failure domains for spread limits: (kind, element) → the rows its failure takes down.
    Power nodes that can fail: rows left with no live feed (and, for a cluster that sheds, every
    row the failure hits); cooling zones and loops: their rows; pods: their rows."""
    out: dict[tuple[str, str], frozenset[str]] = {}
    by_feed = rows_of_feed(ix)
    for fid, node in ix.power_nodes.items():
        if node.can_fail:
            down, hit = node_failure_rows(ix, fid, by_feed)
            if down or (shed and hit):
                out["power_node", fid] = frozenset(down | hit if shed else down)
    rows = domain_rows(ix)
    out.update({(kind, e): frozenset(r) for kind in ("cooling_zone", "pod") for e, r in rows[kind].items()})
    return out


def add_spread_constraints(m: Model) -> None:
    """Failure-domain spread (§11), per cluster c with a limit s for a kind of element, and every
    element e of that kind whose failure takes rows R_e down (:func:`spread_domains`):
    Σ_{k in R_e, t} n[k,t,c] · gpus_t ≤ s · Σ_{k,t} n[k,t,c] · gpus_t (over the racks standing at
    the end); named ``spread_pod(job~a@POD~1)``."""
    m.needs_done("spread", "counts")
    m.done("spread")
    types = m.scenario.catalog.by_id()
    family = {"power_node": Family.spread_power_node, "cooling_zone": Family.spread_cooling_zone, "pod": Family.spread_pod}
    for g in m.groups.values():
        head = g.head
        limits = {"power_node": head.max_share_per_power_node, "cooling_zone": head.max_share_per_cooling_zone, "pod": head.max_share_per_pod}
        if all(v is None for v in limits.values()):
            continue
        mine = [(key, var) for key, var in m.counts_of(g.id) if types[key.rack_type].gpus and not key.role]
        total = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in mine])
        by_row: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in mine:
            by_row[key.cls.row].append((var, types[key.rack_type].gpus))
        seen: set[tuple[str, frozenset[str]]] = set()
        for (kind, eid), rows in spread_domains(m.scenario, m.ix, head.on_power_failure == FailoverPolicy.shed).items():
            share = limits[kind]
            here = [x for r in rows if r in by_row for x in by_row[r]]
            if share is None or not here or (kind, rows) in seen:
                continue
            seen.add((kind, rows))
            m.add_limit(LimitKey(family[kind], f"{g.id}@{eid}"), LimitKind.spread, pulp.LpAffineExpression(here) - share * total, 0.0, "GPUs")
