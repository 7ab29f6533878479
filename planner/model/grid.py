"""Power the grid accepts (§21): training swings within what the sources accept, absorbed by energy
storage or a GPU power floor per building; each phase's energy dispatched over the power sources,
their emissions and the design-day water draw within their limits; and what all this costs.

Units: MW for swings, storage and floors; MWh per year for energy; t CO2 per year; L/s of water.
"""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import LimitKind
from planner.model.core import Model, summed
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey, lp_name
from planner.model.objective import add_expressions
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, amount, declare
from planner.model.space import add_fixed_loads
from planner.rules.costs import HOURS_PER_YEAR, build_npv_usd, phase_annuities, phase_years


def relax_swing(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """More swing accepted in the named phase: a power-arrival step of no MW whose dynamic range and
    ramp accept step × what was accepted then (step × 1 MW when nothing was), from that phase on (no
    price)."""
    order = scenario.phase_at
    ps = scenario.power_stability
    steps = []
    for ident in sorted(idents):
        now = scenario.swing_accepted_mw(order.get(ident, 0))
        mw = step * (now if now > 0 else 1.0)
        data["power_arrival"].append(
            {
                **({"phase": ident} if ident in order else {}),
                "dynamic_range_mw": mw,
                "ramp_mw_per_s": mw / ps.swing_s,
            }
        )
        more = f"{amount(mw)} MW" if mw >= 1 else f"{amount(mw * 1000)} kW"
        steps.append(f"{ident if ident in order else 'region'}: +{more} more ramp acceptance")
    return steps, None


def swing_mw(scenario, rack) -> float:
    """Swing of one rack in a synchronous training step, MW: planning kW × (1 − trough share) ÷ 1000."""
    return scenario.rack_power_kw(rack) * (1.0 - scenario.trough_share(rack)) / 1000.0


@declare(
    "swing",
    needs=(add_count_variables, add_fixed_loads, add_expressions),
    limits={"swing": LimitRows(LimitKind.swing, relax_swing)},
)
def add_swing_constraints(m: Model) -> None:
    """With ``power_stability`` (every cluster its own group then), in each phase p, for each
    cluster c, with S[c,b,p] the swing of its GPU racks standing in building b (MW, hot spares idle):

        e[c,b,p] ≥ S[c,b,p] − store[b,p] − floor[b,p],   e ≥ 0
        Σ_b e[c,b,p] ≤ A_p                                (swing(c,p): A_p the swing accepted then)
        store[b,p] ≥ store[b,p−1]                         (storage bought stays)

    Different jobs do not swing together: each cluster alone fits what is accepted, and storage or a
    floor in a building absorbs any one job's swing there. Costs: storage bought in p at
    (usd/MW + hours × usd/MWh) in capex and, discounted less its residual value, in TCO; a floor's
    energy floor[b,p] × trough share × 8,760 h × price × PUE_b and the storage's loss store[b,p] ×
    trough share × 8,760 h × (1 − round trip) × price, per year of phase p, discounted, in TCO."""
    s = m.scenario
    ps = s.power_stability
    if ps is None:
        return
    types = s.catalog.by_id()
    buildings = sorted({ref.building for ref in m.ix.rows.values()})
    phases = range(m.from_phase, m.horizon + 1)
    store, floor = _mitigation(m, buildings, phases)
    for p in phases:
        swing: dict[tuple[str, str], list] = defaultdict(list)
        for key, var in m.upto(p):
            rt = types[key.rack_type]
            if rt.gpus and not key.role:
                cid = m.groups[key.group].head.id
                swing[cid, m.ix.rows[key.cls.row].building].append((var, round(swing_mw(s, rt), 9)))
        fixed = _installed_swing(m, p)
        for cid in sorted({c for c, _ in swing} | {c for c, _ in fixed}):
            terms, const = [], 0.0
            for b in buildings:
                items, f = swing.get((cid, b), []), fixed.get((cid, b), 0.0)
                if not items and not f:
                    continue
                mit = [x for x in (store.get((b, p)), floor.get((b, p))) if x is not None]
                if not mit:
                    terms.extend(items)
                    const += f
                    continue
                e = m.var(lp_name("swing_left", cid, b, *m.sfx(p)))
                m.add(e - summed(items) + pulp.lpSum(mit) >= f, lp_name("swing_left_def", cid, b, *m.sfx(p)))
                terms.append((e, 1.0))
            m.add_limit(
                LimitKey("swing", cid, "", m.ph(p)),
                summed(terms),
                round(s.swing_accepted_mw(p) - const, 9),
                "MW",
                const,
            )
    _mitigation_costs(m, store, floor, phases)


def _mitigation(m: Model, buildings: list[str], phases) -> tuple[dict, dict]:
    """store[b,p] (kept once bought) and floor[b,p], MW, where the scenario allows them."""
    ps = m.scenario.power_stability
    store, floor = {}, {}
    for p in phases:
        for b in buildings:
            if ps.storage:
                store[b, p] = m.var(lp_name("storage_mw", b, *m.sfx(p)))
                if (b, p - 1) in store:
                    m.add(store[b, p] - store[b, p - 1] >= 0, lp_name("storage_kept", b, *m.sfx(p)))
            if ps.floor:
                floor[b, p] = m.var(lp_name("floor_mw", b, *m.sfx(p)))
    m.grid_vars["storage_mw"] = store
    m.grid_vars["floor_mw"] = floor
    return store, floor


def _installed_swing(m: Model, p: int) -> dict[tuple[str, str], float]:
    """(cluster, building) → swing of its installed racks standing in phase index p, MW."""
    out: dict[tuple[str, str], float] = defaultdict(float)
    for r in m.scenario.existing:
        t = m.scenario.catalog.by_id()[r.rack_type]
        if r.cluster and t.gpus and p < m.until(r.rack_type, r.phase):
            out[r.cluster, r.building] += swing_mw(m.scenario, t)
    return out


def _mitigation_costs(m: Model, store: dict, floor: dict, phases) -> None:
    """Storage capex and the floor's and storage's energy into ``capex_usd`` and ``tco_usd``."""
    s = m.scenario
    ps = s.power_stability
    years = list(phase_years(s).values())[1:] or [0.0]
    weight = phase_annuities(s)
    price = s.costs.energy_usd_per_kwh * 1000.0  # USD per MWh
    hours = ps.trough_hours_share * HOURS_PER_YEAR
    capex, tco = [], []
    for (b, p), v in store.items():
        before = store.get((b, p - 1))
        per_mw = ps.storage_usd_per_mw_bought
        npv = build_npv_usd(per_mw, years[p], ps.storage_life_years, s.costs)[0]
        capex.append((v, per_mw))
        tco.append((v, npv))
        if before is not None:  # what is bought in p is store[p] − store[p−1]
            capex.append((before, -per_mw))
            tco.append((before, -npv))
        tco.append((v, weight[p] * hours * (1.0 - ps.storage_round_trip) * price))
    for (b, p), v in floor.items():
        tco.append((v, weight[p] * hours * price * s.pue_in(b)))
    m.exprs["capex_usd"] = m.exprs["capex_usd"] + summed(capex)
    m.exprs["tco_usd"] = m.exprs["tco_usd"] + summed(tco)
    m.exprs["grid_usd"] = summed(tco)


def relax_limits(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """The emissions or water limit × (1 + step) (no price)."""
    steps = []
    del idents  # one limit a phase, relaxed everywhere
    for key, unit in (("t_co2_per_year", "t CO2 per year"), ("peak_water_l_per_s", "L/s")):
        old = data["budgets"].get(key)
        if old is not None:
            data["budgets"][key] = old * (1 + step)
            steps.append(f"+{step:.0%} on {key} (+{amount(old * step)} {unit})")
    return steps, None


@declare(
    "energy",
    needs=(add_count_variables, add_fabric_constraints, add_fixed_loads, add_expressions),
    limits={
        "source_energy": LimitRows(LimitKind.source_energy),
        "emissions": LimitRows(LimitKind.emissions, relax_limits),
        "water": LimitRows(LimitKind.water, relax_limits),
    },
)
def add_energy_constraints(m: Model) -> None:
    """With ``power_sources``, in each phase p the facility energy
    E_p = 8.76 × utilisation × Σ PUE_b × kW standing (MWh per year: racks with their back-end
    network, network racks, designed fabrics, installed racks) is dispatched over the sources arrived:

        Σ_s y[s,p] = E_p,   y[s,p] ≤ MW_s(p) × 8,760 × capacity factor_s   (source_energy(s,p))
        Σ_s y[s,p] × CO2_s(p) ≤ budgets.t_co2_per_year                    (emissions(region,p))

    and in TCO, per year of phase p discounted: Σ_s y[s,p] × (price_s − the scenario's price) (the
    racks' energy is already priced at the scenario's) + carbon price × emissions. With ``water``
    and ``budgets.peak_water_l_per_s``: Σ_b IT MW_b × peak L/s per MW_b ≤ the limit (water(region,p))."""
    s = m.scenario
    if not s.power_sources and (s.water is None or s.budgets.peak_water_l_per_s is None):
        return
    weight = phase_annuities(s)
    base = s.costs.energy_usd_per_kwh * 1000.0
    carbon = s.costs.carbon_usd_per_t or 0.0
    ids = [str(x) for x in m.tl.phases] if m.tl.phased else []
    tco = []
    for p in range(m.from_phase, m.horizon + 1):
        items, fixed = _it_by_building(m, p)
        if s.power_sources:
            tco += _dispatch(m, p, items, fixed, ids, weight[p], base, carbon)
        if s.water is not None and s.budgets.peak_water_l_per_s is not None:
            lhs = summed([(v, c * s.peak_water_in(b) / 1000.0) for b, its in items.items() for v, c in its])
            f = sum(kw * s.peak_water_in(b) / 1000.0 for b, kw in fixed.items())
            m.add_limit(
                LimitKey("water", "region", "", m.ph(p)), lhs, s.budgets.peak_water_l_per_s - f, "L/s", f
            )
    if tco:
        m.exprs["tco_usd"] = m.exprs["tco_usd"] + summed(tco)
        m.exprs["grid_usd"] = m.exprs.get("grid_usd", pulp.LpAffineExpression()) + summed(tco)


def _it_by_building(m: Model, p: int) -> tuple[dict[str | None, list], dict[str, float]]:
    """Building → (variable, IT kW) terms standing in phase index p (None: the designed fabrics), and
    building → fixed IT kW."""
    s = m.scenario
    types = s.catalog.by_id()
    items: dict[str, list] = defaultdict(list)
    for key, var in m.upto(p):
        rt = types[key.rack_type]
        kw = s.rack_power_kw(rt) + (0.0 if m.groups[key.group].head.fabrics else s.allowance_kw(rt))
        items[m.ix.rows[key.cls.row].building].append((var, kw))
    for fab in m.fabric_at(p).values():  # designed fabrics at the scenario's PUE, as the KPIs count them
        items[None].extend(fab)
    fixed: dict[str, float] = defaultdict(float)
    for row, kw in [*m.fixed_at(p).items(), *m.fixed_net_at(p).items()]:
        fixed[m.ix.rows[row].building] += kw
    return items, fixed


def _dispatch(
    m: Model, p: int, items: dict, fixed: dict, ids: list, weight: float, base: float, carbon: float
):
    """Dispatch rows of phase index p; returns its TCO terms."""
    s = m.scenario
    k = s.costs.average_utilisation * HOURS_PER_YEAR / 1000.0  # MWh per year per kW standing
    energy = summed([(v, c * k * s.pue_in(b)) for b, its in items.items() for v, c in its])
    e0 = sum(kw * k * s.pue_in(b) for b, kw in fixed.items())
    y, emissions, tco = [], [], []
    for src, mw in sorted(s.source_mw(p).items()):
        ps = s.power_sources[src]
        v = m.var(lp_name("energy", src, *m.sfx(p)))
        cap = mw * HOURS_PER_YEAR * ps.capacity_factor
        m.add_limit(
            LimitKey("source_energy", src, "", m.ph(p)), pulp.LpAffineExpression([(v, 1.0)]), cap, "MWh/yr"
        )
        co2 = ps.intensity_at(ids, p)
        y.append((v, 1.0))
        emissions.append((v, co2))
        price = ps.usd_per_mwh if ps.usd_per_mwh is not None else base
        tco.append((v, weight * ((price - base) + carbon * co2)))
        m.grid_vars.setdefault("energy", {})[src, p] = v
    if y:
        m.add(summed(y) - energy == e0, lp_name("energy_def", *(m.sfx(p) or ["region"])))
    elif energy.keys() or e0 > 0:  # nothing arrived to draw from: nothing may stand
        m.add(energy <= -e0, lp_name("energy_def", *(m.sfx(p) or ["region"])))
    if s.budgets.t_co2_per_year is not None:
        m.add_limit(
            LimitKey("emissions", "region", "", m.ph(p)), summed(emissions), s.budgets.t_co2_per_year, "t/yr"
        )
    return tco
