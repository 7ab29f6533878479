"""Space and fixed loads: what stands in every plan, and positions per class. Weight, floor load,
rack power and cooling medium are per-position filters (:func:`planner.input.site_index.fits`): a count
exists only where its rack type fits."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import LimitKind
from planner.input.site_index import network_racks
from planner.model.core import FixedItem, Model, unit_slots
from planner.model.keys import ClassKey, LimitKey, class_label, lp_name
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare


@declare("fixed_loads")
def add_fixed_loads(m: Model) -> None:
    """Fixed load: every pod's network rack (from its row's phase) and every installed rack: power
    on its row, heat in its row's zones, GPUs and a rack in its pod, GPUs toward its cluster.
    Gives ``m.fixed_items``, ``m.fixed_row_kw``, ``m.fixed_heat`` and the ``existing_*`` maps."""
    s = m.scenario
    types = s.catalog.by_id()
    for _, row_id, t in network_racks(s):
        m.fixed_items.append(FixedItem(row_id, s.rack_power_kw(t), m.tl.row_on.get(row_id, 0), t))
    designed = s.designed
    for r in s.existing:
        t = types[r.rack_type]
        kw = s.rack_power_kw(t)
        until = m.until(r.rack_type, r.phase)
        net = 0.0 if r.cluster in designed else s.allowance_kw(t)  # its back-end network
        m.fixed_items.append(
            FixedItem(
                r.row,
                kw,
                m.tl.index.get(r.phase, 0),
                t,  # from the phase it was placed in (rolling), else always
                until if until < len(m.tl.phases) else None,
                net,
            )
        )  # to the end of its service life
        m.existing_kw += kw
        pod = m.ix.rows[r.row].row.pod
        m.existing_pod_gpus[pod] = m.existing_pod_gpus.get(pod, 0) + t.gpus
        m.existing_pod_racks[pod] = m.existing_pod_racks.get(pod, 0) + 1
        m.existing_gpus[r.cluster] = m.existing_gpus.get(r.cluster, 0) + t.gpus
        m.existing_home.setdefault(r.cluster, set()).update({pod, m.ix.rows[r.row].building})
    for it in m.fixed_items:
        m.fixed_row_kw[it.row] = m.fixed_row_kw.get(it.row, 0.0) + it.kw
        row = m.ix.rows[it.row].row
        air, liquid = it.rack_type.heat_kw(it.kw)
        m.fixed_heat[row.air_zone] = m.fixed_heat.get(row.air_zone, 0.0) + air
        if liquid and row.liquid_loop:
            m.fixed_heat[row.liquid_loop] = m.fixed_heat.get(row.liquid_loop, 0.0) + liquid


def relax_positions(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named row, and every rack row of each named hall, × (1 + step) positions, rounded up
    (at least one more): the row runs on at its pitch. No price: lengthening rows is a building
    change the planner cannot cost."""
    steps = []
    for bld in data["site"]["buildings"]:
        for h in bld["halls"]:
            grow = [r for r in h["rows"] if not r.get("network") and (r["id"] in idents or h["id"] in idents)]
            if not grow:
                continue
            added = 0
            for r in grow:
                add = max(1, math.ceil(r["positions"] * step))
                r["positions"] += add
                added += add
            where = f"hall {h['id']}" if h["id"] in idents else "row " + ", ".join(r["id"] for r in grow)
            steps.append(f"{where} +{added} positions")
    return steps, None


@declare(
    "space",
    needs=(add_count_variables,),
    limits={"space": LimitRows(LimitKind.row_positions, relax_positions)},
)
def add_space_constraints(m: Model) -> None:
    """Space: Σ_{t,G,p} w_t · n[k,t,G,p] ≤ size_k for every class k, w_t the positions a rack type
    takes (1, or a multi-rack unit's width); racks never leave, so the last phase's count bounds
    every earlier one; named ``space(R01@2)``. Units of width w > 1 also fit whole in the class's
    runs of adjacent positions: Σ_{t: w_t = w} n ≤ Σ_runs ⌊run / w⌋, named ``units(R01@2,6)``. With
    one unit width per class (checked on input) the two are exact: units take whole slots of the
    runs, plain racks the positions left. Where service lives (§17) end within the phases racks retire
    and free their positions: Σ over the racks standing in phase p ≤ size_k for every phase,
    ``space(R01@2,p3)``."""
    if m.scenario.retires:  # racks retire and free their positions: space per phase (one-position types only)
        _space_over_time(m)
        return
    types = m.scenario.catalog.by_id()
    by_class: dict[ClassKey, list[tuple[pulp.LpVariable, int]]] = defaultdict(list)
    for key, var in m.n.items():
        by_class[key.cls].append((var, types[key.rack_type].width))
    for k, items in by_class.items():
        wide = sorted({w for _, w in items if w > 1})
        if len(items) > 1 or m.elastic or wide:
            m.add_limit(
                LimitKey("space", class_label(k)),
                pulp.LpAffineExpression(items),
                m.classes[k].size,
                "positions",
            )
        for w in wide:
            units = [var for var, vw in items if vw == w]
            if len(units) > 1 or m.elastic:  # one variable is bounded by the slots already
                m.add(pulp.lpSum(units) <= unit_slots(m.classes[k], w), lp_name("units", class_label(k), w))


def _space_over_time(m: Model) -> None:
    """Per phase: the racks standing in a class (placed by then, not retired) and the installed
    racks still standing there fit its positions."""
    types = m.scenario.catalog.by_id()
    where = {(cls.row, pos): k for k, cls in m.classes.items() for _, pos in cls.positions}
    for p in m.points:
        here: dict[ClassKey, list[tuple[pulp.LpVariable, int]]] = defaultdict(list)
        for key, var in m.upto(p):
            here[key.cls].append((var, types[key.rack_type].width))
        held: dict[ClassKey, int] = defaultdict(
            int
        )  # installed racks in the class, standing until they retire
        for r in m.scenario.existing:
            k = where.get((r.row, r.position))
            if k is not None and p < m.until(r.rack_type, r.phase):
                held[k] += 1
        for k, items in here.items():
            key = LimitKey("space", class_label(k), "", m.ph(p))
            m.add_limit(
                key, pulp.LpAffineExpression(items), m.classes[k].size - held[k], "positions", held[k]
            )
