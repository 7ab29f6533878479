"""Explain: why a scenario is infeasible, or which limits bind and what relaxing them buys.

Infeasible: an *elastic* copy of the model gives every capacity limit
(space, power normal and N-1, cooling, pods, demand caps, budgets) a slack
s ≥ 0 (lhs − s ≤ limit) and minimises Σ s / max(limit, 1) while every
cluster's demand stays hard. Each positive slack is a conflict, stated in the
limit's own units with the clusters that load it. Clusters whose rack types
fit no position at all are reported before any solve.

Feasible: a limit is binding when it is used to ≥ 99 % (normal or worst N-1)
or what is left of it is less than one more rack of the smallest allowed
type would take (power, heat, GPU ports, one rack, one position). For
each of the most used ones the scenario is re-solved with that limit relaxed
by one step (power node +10 % capacity, together with the binding nodes
that feed the same rows, since one side of a 2N pair alone buys nothing; cooling zone +1 unit, pod +10 %,
budget +10 %) and the change in the objective is reported. These figures are
computed by re-solves, not LP duals: duals of a MILP say little about integer
steps.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any

import pulp

from planner.build import Model, build
from planner.plan import Plan
from planner.schema import Demand, Scenario
from planner.site_index import index_site
from planner.solve import Progress, ProgressFn, solve

BINDING_SHARE = 0.99
"""A limit used to at least this share is binding."""
NEAR_SHARE = 0.95
"""Limits used to at least this share are relaxed together in one joint re-solve."""


@dataclass(frozen=True)
class Finding:
    """One statement of the explanation."""

    kind: str
    """conflict | unplaceable | binding | note."""
    element: str
    text: str
    amount: float | None = None
    unit: str = ""


@dataclass
class Explanation:
    """What explain found; ``feasible`` is none when no answer came in time."""

    scenario: str
    feasible: bool | None
    headline: str
    findings: list[Finding] = field(default_factory=list)
    method: str = ""

    def render(self) -> str:
        """Plain text for the terminal."""
        lines = [self.headline]
        lines += [f"  - {f.text}" for f in self.findings]
        if self.method:
            lines.append(f"  ({self.method})")
        return "\n".join(lines)


def _demand_text(s: Scenario) -> str:
    wants = []
    for c in s.clusters:
        if c.demand == Demand.exact:
            wants.append(f"{c.id} at exactly {c.gpus:,} GPUs")
        elif c.demand == Demand.at_least:
            wants.append(f"{c.id} at {c.gpus:,}+ GPUs")
    return ", ".join(wants) or "the clusters"


def _fmt(x: float) -> str:
    return f"{x:,.1f}".removesuffix(".0")


def _reachable(total: int, sizes: list[int]) -> bool:
    """Whether ``total`` is a sum of the given rack sizes (unbounded counts)."""
    ok = [True] + [False] * total
    for v in range(1, total + 1):
        ok[v] = any(v >= s and ok[v - s] for s in sizes)
    return ok[total]


def unplaceable(m: Model) -> list[Finding]:
    """Clusters whose demand no placement can meet, found before any solve: an exact GPU count
    that no mix of its rack sizes adds up to, or rack types that fit no position."""
    out = []
    with_vars = {c for (_, _, c) in m.n}
    types = m.scenario.catalog.by_id()
    for c in m.scenario.clusters:
        sizes = sorted({types[t].gpus for t in c.rack_types if types[t].gpus})
        if c.demand == Demand.exact and c.gpus and not _reachable(c.gpus, sizes):
            out.append(
                Finding("unplaceable", c.id, f"cluster {c.id}: exactly {c.gpus:,} GPUs is no sum of its racks' GPU counts ({', '.join(map(str, sizes)) or 'none'})")
            )
            continue
        needs = c.demand in (Demand.exact, Demand.at_least) and (c.gpus or 0) > 0
        if needs and c.id not in with_vars:
            out.append(
                Finding(
                    "unplaceable",
                    c.id,
                    f"cluster {c.id}: none of its rack types ({', '.join(c.rack_types)}) fits any position "
                    f"(row power or weight limit, liquid loop, or cable reach)",
                )
            )
    return out


def _clusters_in(m: Model, lhs: pulp.LpAffineExpression, counts: dict[tuple[str, str, str], int], names: tuple[dict, dict]) -> list[str]:
    """Clusters with racks counted in a limit's left-hand side in the elastic solution;
    ``names`` maps variable names to rows (row loads) and to count keys."""
    row_of_p, key_of_n = names
    rows, found = set(), set()
    for var in lhs.keys():
        if var.name in key_of_n and counts.get(key_of_n[var.name]):
            found.add(key_of_n[var.name][2])
        elif var.name in row_of_p:
            rows.add(row_of_p[var.name])
    for (k, _, c), n in counts.items():
        if n and m.classes[k].row in rows:
            found.add(c)
    order = [c.id for c in m.scenario.clusters]
    return sorted(found, key=order.index)


def explain_infeasible(scenario: Scenario, time_limit_s: float | None = None, progress: ProgressFn | None = None) -> Explanation:
    """Elastic relaxation of the capacity limits (module docstring)."""
    m = build(scenario, elastic=True)
    found = unplaceable(m)
    if found:
        return Explanation(scenario.name, False, f"Cannot place {_demand_text(scenario)}:", found, "checked before solving")
    result = solve(m, progress, time_limit_s, tie_breaks=False)
    if result.objective is None:
        text = "no assignment meets the demands even with every capacity relaxed: check hop budgets (max_hops) against pod and building sizes"
        return Explanation(scenario.name, False, f"Cannot place {_demand_text(scenario)}:", [Finding("conflict", "scope", text)], "elastic relaxation")
    names = ({p.name: r for r, p in m.row_kw.items()}, {v.name: k for k, v in m.n.items()})
    worst: dict[str, tuple[float, str, Any]] = {}
    for name, lim in m.limits.items():
        s = m.slack.get(name)
        short = result.values.get(s.name) if s is not None else None
        if short is None or short <= 1e-6:
            continue
        element, _, when = lim.element.partition(" when ")
        key = f"{lim.family.removesuffix(' N-1')}|{element}"
        if lim.family == "space" and key in worst:  # a row's cable-length bands add up
            prev = worst[key]
            worst[key] = (prev[0] + short, "", replace(lim, limit=prev[2].limit + lim.limit, lhs=prev[2].lhs + lim.lhs))
        elif key not in worst or short > worst[key][0]:
            worst[key] = (short, when, lim)
    findings = []
    for key, (short, when, lim) in sorted(worst.items(), key=lambda kv: -kv[1][0] / max(kv[1][2].limit, 1.0)):
        family, element = key.split("|", 1)
        who = _clusters_in(m, lim.lhs, result.counts, names)
        whom = f" for {', '.join(who)}" if who else ""
        case = f" when {when}" if when else ""
        findings.append(
            Finding(
                "conflict",
                element,
                f"{family} {element}: short by {_fmt(short)} {lim.unit}{case}{whom} "
                f"(limit {_fmt(lim.limit)} {lim.unit}, needs {_fmt(lim.limit + short)} {lim.unit})",
                short,
                lim.unit,
            )
        )
    return Explanation(
        scenario.name,
        False,
        f"Cannot place {_demand_text(scenario)}; the smallest relaxation (relative) that makes it fit:",
        findings,
        "elastic relaxation: every capacity limit given a slack, demands kept, Σ slack / limit minimised",
    )


# ----------------------------------------------------------------- feasible


def _relaxed(scenario: Scenario, kind: str, ident: str, peers: tuple[str, ...] = ()) -> tuple[Scenario, str] | None:
    """The scenario with one limit (and its binding peer feeds) relaxed by one step, and a description."""
    data: dict[str, Any] = copy.deepcopy(scenario.model_dump(mode="json"))
    step = None
    group = {ident, *peers}
    if kind == "budget":
        b = data["budgets"]
        old = b[ident]
        b[ident] = old * 1.1
        step = f"+10% on budget {ident} (+{_fmt(old * 0.1)})"
    for bld in data["site"]["buildings"]:
        for node in [*bld["power_nodes"], *(n for h in bld["halls"] for n in h["power_nodes"])]:
            if kind == "power_node" and node["id"] in group:
                node["capacity_kw"] *= 1.1
                step = f"+10% rating on {ident}" + (f" and {', '.join(peers)} (binding, same rows)" if peers else "")
        for h in bld["halls"]:
            for z in h["cooling_zones"]:
                if kind == "cooling_zone" and z["id"] == ident:
                    z["units"] += 1
                    step = f"+1 cooling unit ({_fmt(z['unit_capacity_kw'])} kW) in {ident}"
            for p in h["pods"]:
                if kind == "pod_gpus" and p["id"] == ident:
                    add = math.ceil(p["max_gpus"] * 0.1)
                    p["max_gpus"] += add
                    step = f"+{add} GPU ports on pod {ident}"
                if kind == "pod_racks" and p["id"] == ident and p.get("max_racks"):
                    add = math.ceil(p["max_racks"] * 0.1)
                    p["max_racks"] += add
                    step = f"+{add} racks on pod {ident}"
    if step is None:
        return None
    return Scenario.model_validate(data), step


def _relaxed_all(scenario: Scenario, usages) -> Scenario:
    """The scenario with every listed limit relaxed by one step."""
    s = scenario
    for u in usages:
        r = _relaxed(s, u.kind, u.id)
        if r is not None:
            s = r[0]
    return s


def _power_peers(scenario: Scenario, binding: set[str]) -> dict[str, set[str]]:
    """Binding power node → other binding nodes that feed some of the same rows (2N partners):
    relaxing one side of a redundant pair alone buys nothing."""
    ix = index_site(scenario.site)
    rows_of: dict[str, set[str]] = {}
    for u in binding:
        under = ix.subtree(u)
        rows_of[u] = {r for r, ref in ix.rows.items() if under & set(ref.row.feeds)}
    return {
        u: {v for v in binding if v != u and rows_of[u] & rows_of[v] and v not in ix.ancestors(u) and u not in ix.ancestors(v)}
        for u in binding
    }


def _smallest_steps(scenario: Scenario) -> dict[str, float]:
    """What one more rack of the cheapest allowed kind adds to each kind of limit."""
    types = scenario.catalog.by_id()
    allowed = [types[t] for c in scenario.clusters for t in c.rack_types if t in types]
    if not allowed:
        return {}
    kw = [scenario.rack_power_kw(t) for t in allowed]
    heat = [h for t, p in zip(allowed, kw, strict=True) for h in (p * (1 - t.liquid_fraction), p * t.liquid_fraction) if h > 0]
    return {
        "power_node": min(kw),
        "cooling_zone": min(heat, default=0.0),
        "pod_gpus": float(min((t.gpus for t in allowed if t.gpus), default=0)),
        "pod_racks": 1.0,
        "hall_positions": 1.0,
    }


def explain_feasible(
    scenario: Scenario, plan: Plan, time_limit_s: float | None = None, top: int = 5, progress: ProgressFn | None = None
) -> Explanation:
    """Binding limits of a plan and what one relaxation step of each buys (module docstring)."""
    step = _smallest_steps(scenario)
    binding = sorted(
        (
            u
            for u in plan.utilisation
            if u.limit > 0
            and (u.worst_share >= BINDING_SHARE or u.limit - max(u.value, u.worst_value or 0.0) < step.get(u.kind, 0.0) - 1e-9)
        ),
        key=lambda u: -u.worst_share,
    )
    findings: list[Finding] = []
    peers = _power_peers(scenario, {u.id for u in binding if u.kind == "power_node"})
    done: set[str] = set()
    base = plan.objective_value or 0.0
    unit = {"max_gpus": "GPUs", "max_pflops": "PFLOPS", "min_capex": "USD capex"}[scenario.objective]
    resolves = 0
    for u in binding:
        worst = max(u.value, u.worst_value or 0.0)
        when = f" when {u.worst_failure} fails" if u.worst_failure and (u.worst_value or 0) > u.value + 1e-9 else ""
        text = f"{u.kind.replace('_', ' ')} {u.id}: {_fmt(worst)} of {_fmt(u.limit)} {u.unit} used ({worst / u.limit:.1%}){when}"
        if resolves < top and u.kind != "hall_positions" and u.id not in done:
            mates = tuple(sorted(peers.get(u.id, set()))) if u.kind == "power_node" else ()
            done |= {u.id, *mates}
            relaxed = _relaxed(scenario, u.kind, u.id, mates)
            if relaxed is not None:
                resolves += 1
                s2, step = relaxed
                if progress:
                    progress(Progress(f"re-solving with {step}", 0.0))
                p2 = solve(build(s2), None, time_limit_s, tie_breaks=False)
                if p2.objective is not None:
                    delta = p2.objective - base
                    text += f"; {step} → {'+' if delta >= 0 else ''}{_fmt(delta)} {unit}"
        findings.append(Finding("binding", u.id, text, worst, u.unit))
    near = [u for u in plan.utilisation if u.limit > 0 and u.kind != "hall_positions" and u.worst_share >= NEAR_SHARE]
    if near and binding:
        joint = _relaxed_all(scenario, near)
        p3 = solve(build(joint), None, time_limit_s, tie_breaks=False)
        if p3.objective is not None:
            delta = p3.objective - base
            findings.append(
                Finding("note", "joint", f"relaxing all {len(near)} limits used ≥ {NEAR_SHARE:.0%} by one step together → {'+' if delta >= 0 else ''}{_fmt(delta)} {unit}")
            )
    if not findings:
        findings.append(Finding("note", "", "no limit is used to 99% or more: demand, not capacity, decides this plan"))
    head = f"Plan for {scenario.name}: {plan.kpis.gpus:,} GPUs ({plan.status}); binding limits (≥ {BINDING_SHARE:.0%} used, or no room for one more rack; normal or worst N-1):"
    return Explanation(scenario.name, True, head, findings, "gains computed by re-solving with each limit relaxed by one step")


def explain(scenario: Scenario, time_limit_s: float | None = None, progress: ProgressFn | None = None) -> tuple[Explanation, Plan | None]:
    """Solve; explain the conflict if infeasible, else the binding limits."""
    from planner.pipeline import plan_scenario

    plan = plan_scenario(scenario, progress, time_limit_s)
    if plan.status == "infeasible":
        return explain_infeasible(scenario, time_limit_s, progress), plan
    if plan.status == "time_limit":
        return Explanation(scenario.name, None, f"No plan found within {time_limit_s or scenario.solver.time_limit_s} s; feasibility is unknown. Raise the time limit."), plan
    return explain_feasible(scenario, plan, time_limit_s, progress=progress), plan
