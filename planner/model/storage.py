"""Storage racks and hot spares (§11): placed with their cluster, inside its hop scope."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import LimitKind, Scope
from planner.input.asks import storage_racks
from planner.model.core import Limit, Model
from planner.model.keys import LimitKey, lp_name
from planner.model.network import add_cluster_constraints, group_counts, installed_storage
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare


def _storage_rows(
    m: Model, gid: str, sid: str, lhs: pulp.LpAffineExpression, rhs: float, need: int | None
) -> None:
    """Storage racks placed = wanted (``lhs == rhs``); in an elastic model the count may fall short
    by a slack (so an explanation can say by how much storage is short, and where)."""
    name = lp_name("scope_storage", gid, sid) if sid else lp_name("storage", gid)
    if not m.elastic:
        m.add(lhs == rhs, name)
        return
    key = LimitKey("storage", f"{gid}@{sid}")
    slack = m.var(lp_name("slack_storage", gid, sid))
    m.slack[key] = slack
    m.add(lhs <= rhs, name + "_le")
    m.add(lhs + slack >= rhs, name)
    m.limits[key] = Limit(
        key, name, "racks", float(need if need is not None else rhs), lhs, LimitKind.storage
    )


@declare(
    "storage",
    needs=(add_count_variables, add_cluster_constraints),
    limits={"storage": LimitRows(LimitKind.storage)},
)
def add_storage_constraints(m: Model) -> None:
    """Per group G of k members, each wanting s storage racks (:func:`planner.input.asks.storage_racks`)
    and h hot spares (:func:`planner.input.asks.spares_needed`), I of its storage racks installed:

    site and rack scope:  Σ storage racks = k·s − I;  Σ spares = k·h;
    pod/building scope:   storage racks in scope σ = s·z[G,σ] − I_σ;  spares in σ = h·z[G,σ].

    Named ``storage(job~a)``, ``scope_storage(job~a,POD~1)``, ``spares(job~a)``,
    ``scope_spares(job~a,POD~1)``."""
    for g in m.groups.values():
        if not g.storage_type and not g.spares:
            continue
        if g.scope in (Scope.site, Scope.rack):
            _site_storage(m, g)
        else:
            _scoped_storage(m, g)


def _site_storage(m: Model, g) -> None:
    """Site and rack scope: Σ spares = k·h, Σ storage racks = k·s − I."""
    mine, spare = group_counts(m, g)
    if g.spares:
        m.add(pulp.lpSum(var for _, var in spare) == g.k * g.spares, lp_name("spares", g.id))
    if g.storage_type:
        store = [var for key, var in mine if key.rack_type == g.storage_type]
        want = storage_racks(m.scenario, g.head)
        _storage_rows(m, g.id, "", pulp.lpSum(store), g.k * want - installed_storage(m, g), None)


def _scoped_storage(m: Model, g) -> None:
    """Pod and building scope: spares in σ = h·z[G,σ], storage racks in σ = s·z[G,σ] − I_σ."""
    mine, spare = group_counts(m, g)
    want = storage_racks(m.scenario, g.head)
    store_in: dict[str, list[pulp.LpVariable]] = defaultdict(list)
    spare_in: dict[str, list[pulp.LpVariable]] = defaultdict(list)
    for key, var in mine:
        if key.rack_type == g.storage_type:
            store_in[m.scope_of_row(key.cls.row, g.scope)].append(var)
    for key, var in spare:
        spare_in[m.scope_of_row(key.cls.row, g.scope)].append(var)
    for (gid, sid), z in m.z.items():
        if gid != g.id:
            continue
        if g.spares:  # hot spares stand where the cluster is homed
            m.add(pulp.lpSum(spare_in.get(sid, [])) - g.spares * z == 0, lp_name("scope_spares", g.id, sid))
        if g.storage_type:
            have = installed_storage(m, g) if sid in m.homes.get(g.id, set()) else 0
            _storage_rows(m, g.id, sid, pulp.lpSum(store_in.get(sid, [])) - want * z, -have, want)
