"""Power (§4): feed-group loads and the node limits in normal operation and under N-1, stated in
each phase where what is online changes (coefficients from :mod:`planner.input.power_model`)."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import FailoverPolicy, LimitKind, RetrofitKind
from planner.model.core import Model, summed
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey, lp_name
from planner.model.phases import add_count_variables, add_retrofit_variables
from planner.model.registry import LimitRows, amount, declare
from planner.model.space import add_fixed_loads
from planner.rules.costs import FACILITY_USD_PER_KW


@declare("loads", needs=(add_count_variables, add_fabric_constraints))
def add_group_load_definitions(m: Model) -> None:
    """Feed-group load in phase p: P_{g,p} = Σ_{k in rows of g, t, G, q ≤ p} n[k,t,G,q] · p_t (kW),
    p_t the planning power of t, plus the designed fabrics' power charged to network-rack rows of
    g; only at the phases where a power limit is stated; named ``load(BW~A1&BW~B1)`` after the
    group's feeds. Gives ``m.group_kw``."""
    types = m.scenario.catalog.by_id()
    for p in m.points:
        terms: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            terms[m.pm.group_of_row[key.cls.row]].append(
                (var, round(m.scenario.rack_power_kw(types[key.rack_type]), 9))
            )
        for row, items in m.fabric_at(p).items():  # designed fabrics standing in p
            terms[m.pm.group_of_row[row]].extend(items)
        for g, items in terms.items():
            v = m.var(lp_name("load", g, *m.sfx(p)))
            m.group_kw[m.at_phase(g, p)] = v
            m.add(summed(items) - v == 0, lp_name("load_def", g, *m.sfx(p)))


@declare("failover", needs=(add_group_load_definitions,))
def add_failover_loads(m: Model) -> None:
    """Only when some cluster caps or sheds: P_eff_{g,p} = Σ n · p_t · f_c over the group's racks,
    f_c the share of planning power the cluster's policy leaves a rack in a contingency (keep 1,
    cap cap_ratio, shed 0); designed fabrics' switches keep their power. Gives ``m.group_eff``,
    which the power family uses in its N-1 rows."""
    if all(g.head.on_power_failure == FailoverPolicy.keep for g in m.groups.values()):
        return
    types = m.scenario.catalog.by_id()
    for p in m.points:
        eff: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            head = m.groups[key.group].head
            f = head.on_power_failure.factor(head.cap_ratio)
            if f > 0:
                eff[m.pm.group_of_row[key.cls.row]].append(
                    (var, round(m.scenario.rack_power_kw(types[key.rack_type]) * f, 9))
                )
        for row, items in m.fabric_at(p).items():  # switches keep power
            eff[m.pm.group_of_row[row]].extend(items)
        for name in [k for k in m.group_kw if not m.tl.phased or k.endswith(f"|{m.ph(p)}")]:
            g = name.rsplit("|", 1)[0] if m.tl.phased else name
            m.group_eff[name] = summed(eff.get(g, []))


def relax_power_nodes(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named power node's capacity × (1 + step), priced at the facility build cost per kW."""
    steps, cost = [], 0.0
    for bld in data["site"]["buildings"]:
        for node in [*bld["power_nodes"], *(n for h in bld["halls"] for n in h["power_nodes"])]:
            if node["id"] in idents:
                add = node["capacity_kw"] * step
                node["capacity_kw"] += add
                cost += add * FACILITY_USD_PER_KW
                steps.append(f"{node['id']} +{amount(add)} kW")
    return steps, cost


@declare(
    "power",
    needs=(add_group_load_definitions, add_failover_loads, add_fixed_loads, add_retrofit_variables),
    limits={
        "power": LimitRows(LimitKind.power_node, relax_power_nodes),
        "power_n1": LimitRows(LimitKind.power_node, relax_power_nodes),
        "power_maint": LimitRows(LimitKind.power_node, relax_power_nodes),
        "redundant": LimitRows(LimitKind.row_redundant),
        "unpowered": LimitRows(LimitKind.row_unpowered),
    },
)
def add_power_constraints(m: Model) -> None:
    """Power, normal and N-1, in each phase where what is online changes (coefficients from
    :mod:`planner.input.power_model` over the nodes online then), F the fixed loads, R the capacity
    retrofits in effect:

    normal:   Σ_g a_0(v,g) · P_g − Σ_r add_r · eff_r
                  ≤ usable_v − Σ_g a_0(v,g) · F_g          (through L_v where v has N-1 limits);
    N-1:      L_v + Σ_{g hit by f} δ_f(v,g) · P_g − Σ_r add_r · eff_r
                  ≤ usable_v − Σ_g a_0(v,g) F_g − Σ_g δ_f(v,g) F_g;

    with a failover policy in force, racks in the rows a failure hits count at the power their
    policy leaves them: a_f·P_eff − a_0·P = (δ + a_0)·P_eff − a_0·P. A redundant group that some
    single failure leaves without feeds, or a group with no feed online yet, gets P_g + F_g ≤ 0 (a
    fixed load there makes the model infeasible, as the verifier would find). Named
    ``power(UPS~A)`` and ``power_n1(BW~B1,UPS~A)``: BW-B1 when UPS-A has failed; with a maintenance
    level (§21) the same change for a maintained node out and another failing, named
    ``power_maint(UPS~C,UPS~A&UPS~B)``: UPS-C while UPS-A is maintained and UPS-B fails."""
    raises: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for r in m.scenario.retrofits:
        if r.effect.kind == RetrofitKind.raise_capacity and r.effect.target in m.ix.power_nodes:
            raises[r.effect.target].append((r.id, r.effect.add_kw))
    for p in m.points:
        pm = m.pms[p]
        fixed = pm.fixed_by_group(m.fixed_at(p))
        live = {g for g in pm.groups if m.gkw(g, p) is not None}
        _normal_rows(m, p, pm, fixed, live, raises)
        for c in pm.contingencies:
            _n1_row(m, p, pm, fixed, live, raises, c)
        for c in pm.maintenance:
            _n1_row(m, p, pm, fixed, live, raises, c, "power_maint")
        _empty_rows(m, p, pm, fixed, live)


def _normal_rows(m: Model, p: int, pm, fixed: dict, live: set, raises: dict) -> None:
    """Each node's normal load within its usable kW (through L_v where the node has N-1 limits)."""
    with_n1 = {c.node for c in [*pm.contingencies, *pm.maintenance] if any(g in live for g in c.delta)}
    for v, coef in pm.normal.items():
        items = [(m.gkw(g, p), a) for g, a in coef.items() if g in live]
        if not items:
            continue
        expr = pulp.LpAffineExpression(items)
        if v in with_n1:
            lv = m.var(lp_name("node_load", v, *m.sfx(p)))
            m.node_kw[m.at_phase(v, p)] = lv
            m.add(expr - lv == 0, lp_name("node_load_def", v, *m.sfx(p)))
            expr = pulp.LpAffineExpression([(lv, 1.0)])
        extra = [m.effect(r, p) * add for r, add in raises.get(v, [])]
        f0 = pm.fixed_normal(v, fixed)
        m.add_limit(
            LimitKey("power", v, "", m.ph(p)), expr - pulp.lpSum(extra), pm.usable_kw[v] - f0, "kW", f0
        )


def _n1_row(m: Model, p: int, pm, fixed: dict, live: set, raises: dict, c, family: str = "power_n1") -> None:
    """A surviving node's load when ``c.failed`` has failed: L_v plus the change over the groups hit
    (at the power their failover policy leaves them, when one is in force); ``power_maint`` rows
    for a node out for maintenance while another fails (§21, ``c.failed`` is ``maintained+failed``)."""
    lv = m.node_kw.get(m.at_phase(c.node, p))
    hit = [g for g in c.delta if g in live]
    if not hit or lv is None:
        return
    if m.group_eff and family == "power_n1":  # maintenance rows count every rack in full
        a0 = pm.normal.get(c.node, {})
        moved = pulp.lpSum(
            (c.delta[g] + a0.get(g, 0.0)) * m.group_eff[m.at_phase(g, p)] - a0.get(g, 0.0) * m.gkw(g, p)
            for g in hit
        )
        expr = lv + moved
    else:
        expr = pulp.LpAffineExpression([(lv, 1.0), *((m.gkw(g, p), c.delta[g]) for g in hit)])
    f1 = pm.fixed_normal(c.node, fixed) + pm.fixed_delta(c, fixed)
    extra = [m.effect(r, p) * add for r, add in raises.get(c.node, [])]
    key = LimitKey(family, c.node, c.failed, m.ph(p))
    m.add_limit(key, expr - pulp.lpSum(extra), pm.usable_kw[c.node] - f1, "kW", f1)


def _empty_rows(m: Model, p: int, pm, fixed: dict, live: set) -> None:
    """Groups that must stay empty: redundant ones a single failure leaves unfed, and ones with no
    feed online yet (fixed loads obey the same rule: they leave less than nothing)."""
    for g, failed in pm.forced_empty.items():
        if g in live or fixed.get(g, 0.0) > 0:
            f = fixed.get(g, 0.0)
            m.add_limit(LimitKey("redundant", g, failed, m.ph(p)), _load_or_zero(m, g, p), -f, "kW", f)
    for g in sorted(pm.dark & (live | {g for g, kw in fixed.items() if kw > 0})):
        f = fixed.get(g, 0.0)
        m.add_limit(LimitKey("unpowered", g, "", m.ph(p)), _load_or_zero(m, g, p), -f, "kW", f)


def _load_or_zero(m: Model, g: str, p: int) -> pulp.LpAffineExpression:
    """P_g in phase index p, or 0 when no rack can stand in the group then."""
    v = m.gkw(g, p)
    return pulp.LpAffineExpression([(v, 1.0)] if v is not None else [])
