"""The plan's answer to §21 for its racks: per phase each cluster's synchronous swing, the storage and
power floors that keep it within what the sources accept, the energy dispatched over the power
sources, emissions and water, at the least cost (one small LP over the plan's racks, which are
fixed: storage capex and its losses, the floors' energy, the sources' price and the carbon price).

The optimiser decides whether racks may stand (:mod:`planner.model.grid` states the same limits);
this sizes what absorbs their swing for the racks it placed, so a max_gpus plan too buys the least.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pulp

from planner.enums import SolverName
from planner.errors import SolverFailure
from planner.input.site_index import network_racks
from planner.rules.costs import HOURS_PER_YEAR, build_npv_usd, phase_annuities, phase_years
from planner.schema import GridPhase, GridReport, NetworkRack, PlacedRack, Plan, Scenario

ROUND = 1e-6
"""Storage and floors are rounded up, energy to the nearest, to this many MW or MWh per year."""


@dataclass
class PhaseLoad:
    """What stands in one phase: swings, IT kW per building (None: designed fabrics, at the
    scenario's PUE)."""

    swing: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    it_kw: dict[str | None, float] = field(default_factory=lambda: defaultdict(float))


def phase_loads(scenario: Scenario, racks: list[PlacedRack], nets: list[NetworkRack]) -> list[PhaseLoad]:
    """Per phase (one without phases): each cluster's swing per building, MW (GPU racks, hot spares
    idle), and IT kW per building (racks with their back-end network outside a designed fabric,
    the pods' network racks of the rows online, designed fabrics' network racks)."""
    s = scenario
    order = s.phase_at
    ids = [p.id for p in s.phases]
    row_at: dict[str, tuple[str, int]] = {
        r.id: (b.id, max(order.get(h.online_phase, 0), order.get(r.online_phase, 0)))
        for b in s.site.buildings
        for h in b.halls
        for r in h.rows
    }
    pods = [(row_at[row][0], row_at[row][1], s.rack_power_kw(t)) for _, row, t in network_racks(s)]
    out = []
    for i in range(max(1, len(ids))):
        load = _racks_load(s, s.standing(racks, i if ids else None))
        for b, on, kw in pods:
            load.it_kw[b] += kw if on <= i else 0.0
        load.it_kw[None] += sum(
            (nr.kw_by_phase.get(ids[i], nr.kw) if ids else nr.kw)
            for nr in nets
            if order.get(nr.phase, 0) <= i
        )
        out.append(load)
    return out


def _racks_load(s: Scenario, standing: list[PlacedRack]) -> PhaseLoad:
    """Swings and IT kW of the racks standing in one phase."""
    types = s.catalog.by_id()
    designed = s.designed
    load = PhaseLoad()
    for r in standing:
        t = types.get(r.rack_type)
        if t is None:
            continue
        kw = s.rack_power_kw(t)
        load.it_kw[r.building] += kw + (0.0 if r.cluster in designed else s.allowance_kw(t))
        if t.gpus and not r.spare:
            load.swing[r.cluster, r.building] += kw * (1.0 - s.trough_share(t)) / 1000.0
    return load


def with_grid(scenario: Scenario, plan: Plan) -> Plan:
    """The plan with its §21 sizing (:func:`size_grid`) when it has racks to size for."""
    return plan.model_copy(update={"grid": size_grid(scenario, plan)}) if plan.status.has_plan else plan


def size_grid(scenario: Scenario, plan: Plan) -> GridReport | None:
    """The least-cost storage, floors and dispatch for the plan's racks (module docstring); None when
    the scenario states none of ``power_stability``, ``power_sources`` and ``water``. Raises
    :class:`SolverFailure` when no storage or floor can make the racks fit (the verifier would
    reject the plan)."""
    s = scenario
    if s.power_stability is None and not s.power_sources and s.water is None:
        return None
    loads = phase_loads(s, plan.racks, plan.network_racks)
    lp = _Sizing(s, loads)
    values = lp.solve()
    return lp.report(values)


class _Sizing:
    """The sizing LP (rows as :mod:`planner.model.grid` states them, the racks fixed)."""

    def __init__(self, scenario: Scenario, loads: list[PhaseLoad]):
        self.s, self.loads = scenario, loads
        self.ids = [p.id for p in scenario.phases]
        self.prob = pulp.LpProblem("grid", pulp.LpMinimize)
        self.store: dict[tuple[str, int], pulp.LpVariable] = {}
        self.floor: dict[tuple[str, int], pulp.LpVariable] = {}
        self.energy: dict[tuple[str, int], pulp.LpVariable] = {}
        self.cost: list = []
        self.weight = phase_annuities(scenario)
        self.price = scenario.costs.energy_usd_per_kwh * 1000.0
        if scenario.power_stability is not None:
            self._swings()
        if scenario.power_sources:
            self._dispatch()
        self.prob += pulp.lpSum(self.cost)

    def _swings(self) -> None:
        s, ps = self.s, self.s.power_stability
        buildings = sorted({b for load in self.loads for _, b in load.swing})
        years = list(phase_years(s).values())[1:] or [0.0]
        hours = ps.trough_hours_share * HOURS_PER_YEAR
        for i, load in enumerate(self.loads):
            for b in buildings:
                if ps.storage:
                    v = self.store[b, i] = self.prob.add_variable(f"store_{b}_{i}", lowBound=0)
                    npv = build_npv_usd(
                        ps.storage_usd_per_mw_bought, years[i], ps.storage_life_years, s.costs
                    )[0]
                    self.cost.append(npv * (v - self.store[b, i - 1] if i else v))
                    self.cost.append(self.weight[i] * hours * (1 - ps.storage_round_trip) * self.price * v)
                    if i:
                        self.prob += v >= self.store[b, i - 1]
                if ps.floor:
                    f = self.floor[b, i] = self.prob.add_variable(f"floor_{b}_{i}", lowBound=0)
                    self.cost.append(self.weight[i] * hours * self.price * s.pue_in(b) * f)
            accepted = s.swing_accepted_mw(i)
            for cid in sorted({c for c, _ in load.swing}):
                left = []
                for (c, b), mw in sorted(load.swing.items()):
                    if c != cid:
                        continue
                    mit = [x for x in (self.store.get((b, i)), self.floor.get((b, i))) if x is not None]
                    e = self.prob.add_variable(f"left_{c}_{b}_{i}", lowBound=0)
                    self.prob += e >= mw - pulp.lpSum(mit)
                    left.append(e)
                self.prob += pulp.lpSum(left) <= accepted

    def _dispatch(self) -> None:
        s = self.s
        k = s.costs.average_utilisation * HOURS_PER_YEAR / 1000.0
        carbon = s.costs.carbon_usd_per_t or 0.0
        for i, load in enumerate(self.loads):
            need = sum(kw * k * s.pue_in(b) for b, kw in load.it_kw.items())
            ys, co2 = [], []
            for src, mw in sorted(s.source_mw(i).items()):
                ps = s.power_sources[src]
                y = self.energy[src, i] = self.prob.add_variable(
                    f"y_{src}_{i}", lowBound=0, upBound=mw * HOURS_PER_YEAR * ps.capacity_factor
                )
                c = ps.intensity_at(self.ids, i)
                price = ps.usd_per_mwh if ps.usd_per_mwh is not None else self.price
                self.cost.append(self.weight[i] * ((price - self.price) + carbon * c) * y)
                ys.append(y)
                co2.append(c * y)
            self.prob += pulp.lpSum(ys) == need
            if s.budgets.t_co2_per_year is not None:
                self.prob += pulp.lpSum(co2) <= s.budgets.t_co2_per_year

    def solve(self) -> dict[str, float]:
        name = self.s.solver.name
        solver = (
            pulp.HiGHS(msg=False)
            if name == SolverName.highs and pulp.HiGHS().available()
            else pulp.PULP_CBC_CMD(msg=False)
        )
        self.prob.solve(solver)
        if self.prob.sol_status != pulp.LpSolutionOptimal and self.prob.status != pulp.LpStatusOptimal:
            raise SolverFailure(
                "no storage, power floor or dispatch makes the plan's racks fit what the power sources "
                f"accept ({pulp.LpStatus[self.prob.status]})"
            )
        return {v.name: float(v.varValue or 0.0) for v in self.prob.variables()}

    def report(self, values: dict[str, float]) -> GridReport:
        import math

        s = self.s
        up = {k: math.ceil(max(0.0, values[v.name]) / ROUND - 1e-3) * ROUND for k, v in self.store.items()}
        for (b, i), x in sorted(up.items()):  # kept: never below the phase before after rounding
            if i and up[b, i - 1] > x:
                up[b, i] = up[b, i - 1]
        fl = {k: math.ceil(max(0.0, values[v.name]) / ROUND - 1e-3) * ROUND for k, v in self.floor.items()}
        en = {k: round(values[v.name], 6) for k, v in self.energy.items() if round(values[v.name], 6) > 0}
        return grid_figures(s, self.loads, up, fl, en)


def grid_figures(s: Scenario, loads: list[PhaseLoad], store: dict, floor: dict, energy: dict) -> GridReport:
    """The report of a sizing: per phase and over the horizon, with its costs (formulas of
    :mod:`planner.model.grid`)."""
    ids = [p.id for p in s.phases]
    years = list(phase_years(s).values())[1:] or [0.0]
    h = s.costs.horizon_years
    span = [max(0.0, min(b, h) - min(a, h)) for a, b in zip(years, [*years[1:], h], strict=True)]
    weight = phase_annuities(s)
    price = s.costs.energy_usd_per_kwh * 1000.0
    carbon = s.costs.carbon_usd_per_t or 0.0
    ps = s.power_stability
    k = s.costs.average_utilisation * HOURS_PER_YEAR
    phases, capex, tco, t_co2, water = [], 0.0, 0.0, 0.0, 0.0
    for i, load in enumerate(loads):
        per: dict[str, float] = defaultdict(float)
        for (c, _), mw in load.swing.items():
            per[c] += mw
        top = max(per.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0.0))
        top = top if top[1] > 0 else ("", 0.0)
        st = {b: x for (b, j), x in store.items() if j == i and x > 0}
        fl = {b: x for (b, j), x in floor.items() if j == i and x > 0}
        en = {src: y for (src, j), y in energy.items() if j == i}
        if ps is not None:
            hours = ps.trough_hours_share * HOURS_PER_YEAR
            for b, x in st.items():
                bought = x - store.get((b, i - 1), 0.0)
                usd = ps.storage_usd_per_mw_bought * bought
                capex += usd
                tco += build_npv_usd(usd, years[i], ps.storage_life_years, s.costs)[0]
                tco += weight[i] * hours * (1 - ps.storage_round_trip) * price * x
            tco += sum(weight[i] * hours * price * s.pue_in(b) * x for b, x in fl.items())
        co2 = sum(y * s.power_sources[src].intensity_at(ids, i) for src, y in en.items())
        for src, y in en.items():
            src_price = s.power_sources[src].usd_per_mwh
            tco += weight[i] * y * ((src_price if src_price is not None else price) - price)
        tco += weight[i] * carbon * co2
        m3 = sum(kw * k * s.wue_in(b) for b, kw in load.it_kw.items()) / 1000.0
        peak = sum(kw / 1000.0 * s.peak_water_in(b) for b, kw in load.it_kw.items())
        t_co2 += co2 * span[i]
        water += m3 * span[i]
        phases.append(
            GridPhase(
                phase=ids[i] if ids else None,
                swing_mw=round(top[1], 6),
                swing_cluster=top[0],
                accepted_mw=round(min(s.swing_accepted_mw(i), 1e12), 6),
                storage_mw=st,
                floor_mw=fl,
                energy_mwh_per_year=en,
                t_co2_per_year=round(co2, 6),
                water_m3_per_year=round(m3, 6),
                peak_water_l_per_s=round(peak, 6),
            )
        )
    return GridReport(
        phases=phases,
        storage_capex_usd=round(capex, 2),
        tco_usd=round(tco, 2),
        t_co2=round(t_co2, 3),
        water_m3=round(water, 3),
    )
