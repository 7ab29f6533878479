"""Named expressions (GPUs, PFLOPS, capex, TCO, IT kW, cable), budgets and the objective. Every
money figure comes from :mod:`planner.rules.costs`, the same formulas the KPIs use."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import LimitKind, Objective
from planner.input.site_index import network_racks
from planner.model.core import Model
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey
from planner.model.phases import add_count_variables, add_retrofit_variables
from planner.model.registry import LimitRows, amount, declare
from planner.model.space import add_fixed_loads
from planner.rules.costs import (
    FACILITY_USD_PER_KW,
    annuity,
    build_npv_usd,
    facility_usd,
    lifecycle,
    opex_usd_per_year,
    phase_years,
    rack_capex_usd,
    rack_cost,
    structure_life,
)


@declare("expressions", needs=(add_count_variables, add_retrofit_variables, add_fabric_constraints))
def add_expressions(m: Model) -> None:
    """Named expressions (planner.rules.costs for every money figure): gpus and pflops (in the last phase;
    the objective of a phased max_* sums them over phases), capex_usd (equipment + facility +
    retrofits, plus the network racks' facility as a constant),
    tco_usd (each rack from its phase's start, to its retirement with its removal cost, less its
    residual value: planner.rules.costs), it_kw (standing in the last phase), cable_usd, cable_m. With
    service lives a rack counts GPU-phases only while it stands."""
    s = m.scenario
    years = phase_years(s)
    e: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    costs_of = {b.id: s.costs_in(b.id) for b in s.site.buildings}  # a structure may have a rate of its own
    for key, var in m.n.items():
        m.tick()
        _count_terms(m, key, var, years, e, costs_of)
    for key, var in m.buy.items():
        r = m.retrofit(key.retrofit)
        e["capex_usd"].append((var, r.cost_usd))
        e["tco_usd"].append(
            (var, build_npv_usd(r.cost_usd, years.get(key.phase, 0.0), structure_life(r), s.costs)[0])
        )
    m.exprs = {}
    for name, items in e.items():
        m.tick()
        m.exprs[name] = pulp.LpAffineExpression([(v, round(c, 9)) for v, c in items if c])
    names = (
        "gpus",
        "gpu_phases",
        "pflops",
        "pflop_phases",
        "capex_usd",
        "tco_usd",
        "it_kw",
        "cable_usd",
        "cable_m",
    )
    for key in names:
        m.exprs.setdefault(key, pulp.LpAffineExpression())
    for g in m.groups:
        m.exprs.setdefault(f"gpus:{g}", pulp.LpAffineExpression())
    _fixed_money(m)


def _count_terms(m: Model, key, var, years: dict, e: dict, costs_of: dict) -> None:
    """One count's coefficients in every named expression (:func:`add_expressions`)."""
    s = m.scenario
    rt = s.catalog.by_id()[key.rack_type]
    cls = m.classes[key.cls]
    lc = cls.link.get(key.rack_type)
    designed = bool(m.groups[key.group].head.fabrics)
    in_fabric = designed and rt.gpus and not key.role  # links priced by planner.model.fabric
    link = {c.id: c for c in s.site.fabric.link_classes}[lc] if lc and not in_fabric else None
    kw = s.rack_power_kw(rt)
    drawn = kw + (0.0 if designed else s.allowance_kw(rt))  # with its back-end network
    per_gpu = 0.0 if designed else s.site.fabric.cost_usd_per_gpu
    life = lifecycle(s, key.rack_type, key.phase, years)
    building = m.ix.rows[key.cls.row].building
    cost = rack_cost(
        rt, drawn, link, per_gpu, costs_of[building], s.pue_in(building), years.get(key.phase, 0.0), **life
    )
    until = (
        m.until(key.rack_type, key.phase) if s.service_life else len(m.tl.phases)
    )  # retired from then (§17)
    at_end = until > m.horizon  # standing in the last phase
    if not key.role:  # hot spares: paid for and powered, not counted as GPUs
        if at_end:
            e["gpus"].append((var, rt.gpus))
            e[f"gpus:{key.group}"].append((var, rt.gpus))
            e["pflops"].append((var, rt.pflops_bf16))
        e["gpu_phases"].append((var, rt.gpus * (until - m.tl.at(key.phase))))
        e["pflop_phases"].append((var, rt.pflops_bf16 * (until - m.tl.at(key.phase))))
    e["capex_usd"].append((var, cost.capex_usd))
    e["tco_usd"].append((var, cost.tco_usd))
    if at_end:
        e["it_kw"].append((var, kw))  # the racks' own (budgets.it_power_kw)
    e["cable_usd"].append((var, rack_capex_usd(rt, link, 0.0) - rt.capex_usd))
    e["cable_m"].append((var, rt.links * cls.cable_m.get(key.rack_type, 0.0)))


def _fixed_money(m: Model) -> None:
    """What every plan pays whatever it places: the network racks' facility and energy, installed
    racks' running costs (their capex is sunk), and the designed fabrics' switches and links, built
    at the start (undiscounted) and running to the horizon, as the KPIs count them."""
    s = m.scenario
    types = s.catalog.by_id()
    classes = {c.id: c for c in s.site.fabric.link_classes}
    a = annuity(0.0, s.costs.horizon_years, s.costs.discount_rate)
    nets = [(s.rack_power_kw(t), s.pue_in(m.ix.rows[row].building)) for _, row, t in network_racks(s)]
    net_kw = sum(kw for kw, _ in nets)
    net_pue = sum(kw * pue for kw, pue in nets) / net_kw if net_kw else s.pue  # each at its building's
    net_facility = facility_usd(net_kw, s.costs)
    kept = build_npv_usd(1.0, 0.0, s.costs.facility_life_years, s.costs)[
        0
    ]  # NPV per USD of build at the start
    inst_opex = 0.0
    designed = s.designed
    for r in s.existing:
        t = types[r.rack_type]
        link = classes.get(r.link_class or "")
        fabric = s.site.fabric.cost_usd_per_gpu
        net = 0.0 if r.cluster in designed else s.allowance_kw(t)  # with its back-end network
        inst_opex += rack_cost(
            t, s.rack_power_kw(t) + net, link, fabric, s.costs, s.pue_in(r.building), 0.0, existing=True
        ).tco_usd
    if m.fabric_capex is not None:
        kw = m.fabric_kw if m.fabric_kw is not None else pulp.LpAffineExpression()
        per_kw = facility_usd(1.0, s.costs)
        m.exprs["capex_usd"] = m.exprs["capex_usd"] + m.fabric_capex + per_kw * kw
        m.exprs["tco_usd"] = (
            m.exprs["tco_usd"]
            + (1 + a * opex_usd_per_year(0.0, 1.0, s.costs, s.pue)) * m.fabric_capex
            + (per_kw * kept + a * opex_usd_per_year(1.0, 0.0, s.costs, s.pue)) * kw
        )
    m.exprs["capex_usd"].constant = round(net_facility, 6)
    m.exprs["tco_usd"].constant = round(
        net_facility * kept + opex_usd_per_year(net_kw, 0.0, s.costs, net_pue) * a + inst_opex, 6
    )


def relax_budgets(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named budget × (1 + step), priced at its own size (capex) or the facility build cost (IT kW)."""
    steps, cost = [], 0.0
    for ident in idents:
        old = data["budgets"][ident]
        data["budgets"][ident] = old * (1 + step)
        steps.append(f"+{step:.0%} on budget {ident} (+{amount(old * step)})")
        cost += old * step if ident == "capex_usd" else old * step * FACILITY_USD_PER_KW
    return steps, cost


@declare(
    "budgets",
    needs=(add_expressions, add_fixed_loads),
    limits={"budget": LimitRows(LimitKind.budget, relax_budgets)},
)
def add_budget_constraints(m: Model) -> None:
    """Budgets: capex = Σ n · rack capex + Σ retrofits bought (planner.rules.costs) ≤ capex_usd; IT power of
    all racks (installed included) in the last phase ≤ it_power_kw."""
    b = m.scenario.budgets
    if b.capex_usd is not None:
        m.add_limit(LimitKey("budget", "capex_usd"), m.exprs["capex_usd"], b.capex_usd, "USD")
    if b.it_power_kw is not None:
        m.add_limit(
            LimitKey("budget", "it_power_kw"),
            m.exprs["it_kw"],
            b.it_power_kw - m.existing_kw,
            "kW",
            m.existing_kw,
        )


OBJECTIVES = {
    Objective.max_gpus: "gpus",
    Objective.max_pflops: "pflops",
    Objective.min_capex: "capex_usd",
    Objective.min_tco: "tco_usd",
}
"""Objective → the named expression it optimises (sense from :attr:`Objective.maximise`); a phased
max_gpus or max_pflops optimises the sum over phases (gpu_phases, pflop_phases): earlier is better."""


def objective_expr(m: Model, objective: Objective) -> pulp.LpAffineExpression:
    """The expression an objective optimises in this model (see :data:`OBJECTIVES`)."""
    name = OBJECTIVES[objective]
    if m.tl.phased and name == "gpus":
        name = "gpu_phases"
    if m.tl.phased and name == "pflops":
        name = "pflop_phases"
    return m.exprs[name]
