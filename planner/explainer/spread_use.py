"""The use of failure-domain spread limits in a plan, for the explainer's screen: per cluster group
with a limit s of a kind and each element e of that kind it stands in, the GPUs its failure takes
down, D_e, against s · T (T: the group's GPUs), in the model's own terms
(:func:`planner.model.spread.spread_domains`), named as the model names the row (``group@element``)."""

from __future__ import annotations

from collections import defaultdict

from planner.enums import FailoverPolicy, LimitKind
from planner.input.site_index import index_site
from planner.model.classes import cluster_groups
from planner.model.spread import SPREAD_KINDS, spread_domains
from planner.plan import Plan
from planner.schema import Scenario, Usage


def spread_usage(scenario: Scenario, plan: Plan) -> list[Usage]:
    """One :class:`Usage` (kind spread, GPUs) per group, kind and element with GPUs of the group."""
    groups = [g for g in cluster_groups(scenario).values() if any(_share(g.head, k) for k in SPREAD_KINDS)]
    if not groups:
        return []
    types = scenario.catalog.by_id()
    ix = index_site(scenario.site)
    gpus_in: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))  # cluster → row → GPUs
    for r in plan.racks:
        if not r.spare and types[r.rack_type].gpus:
            gpus_in[r.cluster][r.row] += types[r.rack_type].gpus
    out: list[Usage] = []
    for shed in (False, True):
        mine = [g for g in groups if (g.head.on_power_failure == FailoverPolicy.shed) == shed]
        if mine:
            domains = spread_domains(scenario, ix, shed)
            for g in mine:
                out += _group_usage(g, domains, gpus_in)
    return out


def _group_usage(g, domains: dict, gpus_in: dict) -> list[Usage]:
    """The group's use of each spread limit: D_e against s · T per element it stands in."""
    rows: dict[str, float] = defaultdict(float)
    for m in g.members:
        for row, n in gpus_in.get(m.id, {}).items():
            rows[row] += n
    total = sum(rows.values())
    out = []
    for (kind, eid), where in domains.items():
        share = _share(g.head, kind)
        down = sum(rows.get(r, 0.0) for r in where)
        if share is not None and down > 0:
            out.append(
                Usage(kind=LimitKind.spread, id=f"{g.id}@{eid}", value=down, limit=share * total, unit="GPUs")
            )
    return out


def _share(cluster, kind: str) -> float | None:
    return getattr(cluster, f"max_share_per_{kind}")
