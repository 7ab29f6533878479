"""Whole racks per feed group (valid cuts): the LP relaxation may stand 8.4 racks where power holds
8, in every row at once; the integer room of each feed group says so.

For a feed group g in phase p, with K_g its power room (:mod:`planner.model.room`, at the least
failover factor of any cluster, so that it holds whatever racks stand there), its positions P_g
(Σ over its classes) and the GPU rack shapes that may stand there (G GPUs, w positions, planning
kW, N most units; shapes alike in all three merged):

    Σ_{counts n[k,t,G] standing in p, k in g} G_t · n  ≤  R_g,
    R_g = max Σ G·x  over whole racks: x_t ≤ N_t, Σ w·x ≤ P_g, Σ kW·x ≤ K_g

(:func:`planner.model.room.most_gpus`: exact for one or two shapes). Every plan obeys it — its
racks in g are such an x — so it removes no plan; it is stated only where R_g is below the plain
bound min(Σ G·N, P_g · max G/w, K_g · max G/kW), i.e. where it cuts. Named ``room(BW~A1&BW~B1)``.
Not in an elastic model (its limits may be exceeded by their slack)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.model.core import Model, unit_slots
from planner.model.keys import lp_name
from planner.model.phases import add_count_variables
from planner.model.power import add_power_constraints
from planner.model.registry import declare
from planner.model.room import most_gpus, room_at
from planner.model.space import add_fixed_loads


@declare("rounding", needs=(add_count_variables, add_fixed_loads, add_power_constraints))
def add_rounding_cuts(m: Model) -> None:
    """The cuts of the module docstring, per feed group and phase where a power limit is stated."""
    if m.elastic or not m.groups:
        return
    types = m.scenario.catalog.by_id()
    factor = min(g.head.on_power_failure.factor(g.head.cap_ratio) for g in m.groups.values())
    for p in m.points:
        room = room_at(m, p)
        kw = room.group_kw(factor)
        terms: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        classes: dict[str, dict] = defaultdict(lambda: defaultdict(set))
        for key, var in m.upto(p):
            t = types[key.rack_type]
            if t.gpus <= 0:
                continue
            g = m.pm.group_of_row[key.cls.row]
            terms[g].append((var, float(t.gpus)))
            classes[g][key.cls].add(t.id)
        for g, items in sorted(terms.items()):
            cut = _room(m, classes[g], kw.get(g, math.inf), types)
            if cut is not None:
                m.add(pulp.LpAffineExpression(_summed(items)) <= cut, lp_name("room", g, *m.sfx(p)))


def _summed(items: list[tuple[pulp.LpVariable, float]]) -> list[tuple[pulp.LpVariable, float]]:
    out: dict[pulp.LpVariable, float] = defaultdict(float)
    for v, c in items:
        out[v] += c
    return list(out.items())


def _room(m: Model, classes: dict, power_kw: float, types: dict) -> int | None:
    """R_g of the module docstring (``classes``: class key → the GPU rack types with counts
    there), or None where it does not cut (or power leaves no bound)."""
    if math.isinf(power_kw):
        return None
    positions = sum(m.classes[c].size for c in classes)
    shapes: dict[tuple[int, int, float], int] = defaultdict(int)
    for ckey, ids in classes.items():
        for tid in ids:
            t = types[tid]
            shapes[t.gpus, t.width, round(m.scenario.rack_power_kw(t), 9)] += unit_slots(
                m.classes[ckey], t.width
            )
    listed = [(g, w, k, n) for (g, w, k), n in shapes.items()]
    cut = most_gpus(listed, positions, power_kw)
    plain = min(
        sum(g * n for g, _, _, n in listed),
        positions * max(g / w for g, w, _, _ in listed),
        power_kw * max((g / k if k > 0 else math.inf) for g, _, k, _ in listed),
    )
    return cut if cut < plain - 1e-6 else None
