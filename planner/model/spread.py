"""Failover policies and failure-domain spread (§4, §11): the load a contingency leaves each feed
group when clusters cap or shed, and the share of a cluster one element's failure may take down."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import FailoverPolicy, LimitKind
from planner.input.site_index import SiteIndex
from planner.model.core import Model
from planner.model.keys import LimitKey
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare
from planner.rules.reliability import domain_rows, node_failure_rows, rows_of_feed
from planner.schema import Scenario

SPREAD_KINDS = ("power_node", "cooling_zone", "pod")
"""Kinds of element a cluster's spread limit (``max_share_per_<kind>``) is stated for."""


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


def relax_spread(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named cluster's (``group@element``) spread limits × (1 + step), at most 1 (no price: a
    spread limit is a reliability choice; its cost is the GPUs a failure may take down)."""
    from planner.model.classes import cluster_groups

    named = {i.split("@", 1)[0] for i in idents}
    ids = {m.id for gid, g in cluster_groups(scenario).items() if gid in named for m in g.members} | named
    steps = []
    for c in data["clusters"]:
        for kind in SPREAD_KINDS:
            field, old = f"max_share_per_{kind}", c.get(f"max_share_per_{kind}")
            if c["id"] in ids and old is not None and old < 1:
                c[field] = min(1.0, round(old * (1 + step), 6))
                steps.append(f"cluster {c['id']} {field} {old:g} → {c[field]:g}")
    return steps, None


@declare(
    "spread",
    needs=(add_count_variables,),
    limits={f"spread_{k}": LimitRows(LimitKind.spread, relax_spread) for k in SPREAD_KINDS},
)
def add_spread_constraints(m: Model) -> None:
    """Failure-domain spread (§11), per cluster c with a limit s for a kind of element, and every
    element e of that kind whose failure takes rows R_e down (:func:`spread_domains`):
    Σ_{k in R_e, t} n[k,t,c] · gpus_t ≤ s · Σ_{k,t} n[k,t,c] · gpus_t (over the racks standing at
    the end); named ``spread_pod(job~a@POD~1)``."""
    types = m.scenario.catalog.by_id()
    family = {k: f"spread_{k}" for k in SPREAD_KINDS}
    for g in m.groups.values():
        head = g.head
        limits = {
            "power_node": head.max_share_per_power_node,
            "cooling_zone": head.max_share_per_cooling_zone,
            "pod": head.max_share_per_pod,
        }
        if all(v is None for v in limits.values()):
            continue
        mine = [(key, var) for key, var in m.counts_of(g.id) if types[key.rack_type].gpus and not key.role]
        total = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in mine])
        by_row: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in mine:
            by_row[key.cls.row].append((var, types[key.rack_type].gpus))
        seen: set[tuple[str, frozenset[str]]] = set()
        for (kind, eid), rows in spread_domains(
            m.scenario, m.ix, head.on_power_failure == FailoverPolicy.shed
        ).items():
            share = limits[kind]
            here = [x for r in rows if r in by_row for x in by_row[r]]
            if share is None or not here or (kind, rows) in seen:
                continue
            seen.add((kind, rows))
            m.add_limit(
                LimitKey(family[kind], f"{g.id}@{eid}"),
                pulp.LpAffineExpression(here) - share * total,
                0.0,
                "GPUs",
            )
