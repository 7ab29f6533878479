"""Counts, phases and retrofits: the model's variables (racks added per class, type, group and
phase; retrofits bought per phase) and the gates that keep a rack type out of a row until the
retrofit it needs is in effect."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import RetrofitKind
from planner.input.site_index import SiteIndex, fits, floor_load_kg_per_m2
from planner.model.core import Model, Needs, unit_slots
from planner.model.keys import BuyKey, CountKey, class_label, lp_name
from planner.model.registry import declare
from planner.schema import RackType, Scenario


def retrofit_needs(scenario: Scenario, ix: SiteIndex, row_id: str, t: RackType) -> Needs | None:
    """What a rack type needs to fit a row: nothing (fits as built), retrofits (which ones), or
    None (no retrofit makes it fit). A row of a structure to build needs it built (and the
    structure's cooling media to include the rack's)."""
    building = ix.rows[row_id].building
    builds = [
        r
        for r in scenario.retrofits
        if r.effect.kind == RetrofitKind.build_structure and r.effect.building == building
    ]
    if builds:
        builds = [r for r in builds if t.liquid_fraction == 0 or "liquid" in {str(m) for m in r.effect.media}]
        if not builds:
            return None  # the structure cannot cool this rack type
        inner = _site_needs(scenario, ix, row_id, t)
        if inner is None:
            return None
        inner.structure = [r.id for r in builds]
        return inner
    return _site_needs(scenario, ix, row_id, t)


def _site_needs(scenario: Scenario, ix: SiteIndex, row_id: str, t: RackType) -> Needs | None:
    """The row's own needs (as built, or a liquid loop or higher rack limit a retrofit gives)."""
    if fits(scenario, ix, row_id, t):
        return Needs()
    row = ix.rows[row_id].row
    needs = Needs()
    wants_loop = t.liquid_fraction > 0 and row.liquid_loop is None
    if wants_loop:
        needs.loop = [
            r.id
            for r in scenario.retrofits
            if r.effect.kind == RetrofitKind.add_liquid_loop and r.effect.row == row_id
        ]
        if not needs.loop:
            return None
    limit_kw = scenario.position_limit_power_kw(t)
    if limit_kw > row.max_rack_power_kw + 1e-9:
        needs.power = [
            r.id
            for r in scenario.retrofits
            if r.effect.kind == RetrofitKind.raise_rack_power
            and r.effect.row == row_id
            and r.effect.max_rack_power_kw + 1e-9 >= limit_kw
        ]
        if not needs.power:
            return None
    probe = row.model_copy(
        update={
            "liquid_loop": row.liquid_loop or ("retrofit" if wants_loop else None),
            "max_rack_power_kw": max(row.max_rack_power_kw, limit_kw),
        }
    )
    hall = ix.halls[ix.rows[row_id].hall][1]
    rating = hall.floor_rating_kg_per_m2
    ok = t.position_weight_kg <= probe.max_rack_weight_kg + 1e-9 and (
        rating is None or floor_load_kg_per_m2(t, probe) <= rating + 1e-9
    )
    return needs if ok else None


@declare("retrofits")
def add_retrofit_variables(m: Model) -> None:
    """buy[r, p] ∈ {0, 1}: retrofit r bought in phase p, at most once: Σ_p buy[r, p] ≤ 1; a purchase
    whose effect would land after the last phase is never made. Gives ``m.buy``."""
    last = len(m.tl.phases) - 1
    bought = {r for r, _ in m.fixed_buys}
    for r in m.scenario.retrofits:
        if r.id in bought:
            continue
        mine = []
        for p, ph in enumerate(m.tl.phases):
            if p + r.lead_phases > last or p < m.from_phase or p > m.horizon:
                continue
            v = m.var(lp_name("buy", r.id, *([ph] if ph else [])), 0, 1, integer=True)
            m.buy[BuyKey(r.id, ph)] = v
            mine.append(v)
        if len(mine) > 1:
            m.add(pulp.lpSum(mine) <= 1, lp_name("buy_once", r.id))


@declare("counts")
def add_count_variables(m: Model) -> None:
    """n[k, t, G, p] racks of type t for group G added to class k in phase p (integer, 0…size_k),
    for every type allowed for G that fits k as built or after retrofits it could buy, from the
    phase the row exists, the group wants GPUs and the type's lead time allows (ordered in a phase
    this model decides: from_phase + lead; a rolling step decides one phase, so a type with a lead
    time never stands in it). Gives ``m.n`` and ``m.needs``."""
    types = m.scenario.catalog.by_id()
    for k, cls in m.classes.items():
        fitting: dict[str, Needs] = {}
        for t in cls.link:
            need = retrofit_needs(m.scenario, m.ix, cls.row, types[t])
            if need is not None:
                fitting[t] = need
        row_on = m.tl.row_on.get(cls.row, 0)
        for g in m.groups.values():
            start = max(row_on, m.tl.first_wanted(g.head), m.from_phase) if m.tl.phased else 0
            wanted = [
                *((t, "") for t in g.gpu_types),
                *([(g.storage_type, "")] if g.storage_type else []),
                *([(g.spare_type, "spare")] if g.spare_type else []),
            ]
            for t, role in wanted:
                if t not in fitting:
                    continue
                slots = unit_slots(cls, types[t].width)
                if slots == 0:
                    continue  # a multi-rack unit wider than every run of the class
                m.needs[k, t] = fitting[t]
                # ordered in a phase this model decides, standing its lead time later (§17)
                lead = m.from_phase + m.scenario.lead_phases.get(t, 0) if m.tl.phased else 0
                for p in range(max(start, lead), m.horizon + 1):
                    up = None if m.elastic else slots
                    ph = m.tl.phases[p]
                    m.n[CountKey(k, t, g.id, ph, role)] = m.var(
                        lp_name(
                            "n" + ("_spare" if role else ""), class_label(k), t, g.id, *([ph] if ph else [])
                        ),
                        0,
                        up,
                        integer=True,
                    )


@declare("retrofit_gates", needs=(add_retrofit_variables, add_count_variables))
def add_retrofit_gates(m: Model) -> None:
    """A rack type that fits a row only after a retrofit: Σ_{q ≤ p} n[k,t,·,q] ≤ size_k × Σ (retrofits
    in effect in p that give it), per need (a liquid loop, a higher rack limit), per phase."""
    by_class: dict[tuple, list] = defaultdict(
        list
    )  # (class, type) → (phase index, var): one pass over the counts
    for key, var in m.n.items():
        by_class[key.cls, key.rack_type].append((m.tl.at(key.phase), var))
    for (k, t), need in m.needs.items():
        if not need.any:
            continue
        for p in range(m.horizon + 1):
            placed = [var for q, var in by_class.get((k, t), ()) if q <= p]
            if not placed:
                continue
            for what, alts in (("loop", need.loop), ("power", need.power), ("structure", need.structure)):
                if alts:
                    eff = pulp.lpSum(m.effect(r, p) for r in alts)
                    m.add(
                        pulp.lpSum(placed) - m.classes[k].size * eff <= 0,
                        lp_name(f"needs_{what}", class_label(k), t, *m.sfx(p)),
                    )
