"""Explain: why a scenario is infeasible, or which limits bind and what relaxing them buys.

Infeasible: an *elastic* copy of the model gives every capacity limit
(space, power normal and N-1, cooling, pods, demand caps, budgets) a slack
s ≥ 0 (lhs − s ≤ limit) and minimises Σ s / max(limit, 1) while every
cluster's demand stays hard. Each positive slack is a conflict, stated in the
limit's own units with the clusters that load it. Clusters whose rack types
fit no position at all are reported before any solve.

Feasible: a limit is binding when it is used to ≥ 99 % (normal or worst N-1)
or what is left of it is less than one more rack of the smallest allowed
type would take (power, heat, GPU ports, one rack, one position). Every used
limit is first screened with the row duals of the LP relaxation (first-order
gain of one step, :func:`dual_screen`); the most promising are then re-solved
one by one with that limit relaxed by one step, from the base plan with the
same settings: a power node +10 % capacity (together with the binding nodes
that feed the same rows, since one side of a 2N pair alone buys nothing), a
cooling zone +10 % of its capacity (each unit's kW, not one more unit), a pod
+10 % of its GPU ports or racks, a budget +10 %. A final re-solve relaxes them
all together. The reported gains come from the re-solves (duals of a MILP say
little about integer steps; they only choose what to re-solve); a re-solve
that stops at its limit gives a range.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any

import pulp

from planner.enums import LimitKind, Objective, Status
from planner.input.asks import storage_racks
from planner.input.site_index import index_site
from planner.model import Limit, Model, build, limit_rows
from planner.plan import Plan
from planner.plan.pipeline import plan_scenario, start_from_racks
from planner.rules.fabric_sizing import leaf_down_of, limit_text
from planner.schema import Demand, Scenario, Usage
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import Progress, ProgressFn, solve
from planner.verifier import verify

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
    relaxations: list = field(default_factory=list)
    """Feasible: every candidate limit as a :class:`Relaxation` (for tables)."""

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
    with_vars = {key.group for key in m.n}
    types = m.scenario.catalog.by_id()
    for c in m.scenario.clusters:
        usable = m.scenario.gpu_types_for(c)
        sizes = sorted({types[t].gpus for t in usable if types[t].gpus})
        if c.demand == Demand.exact and c.gpus and not _reachable(c.gpus, sizes):
            out.append(
                Finding(
                    "unplaceable",
                    c.id,
                    f"cluster {c.id}: exactly {c.gpus:,} GPUs is no sum of its racks' GPU counts "
                    f"({', '.join(map(str, sizes)) or 'none'})",
                )
            )
            continue
        needs = c.demand in (Demand.exact, Demand.at_least) and (c.gpus or 0) > 0
        if needs and c.id not in with_vars:
            hbm = f" with at least {c.min_hbm_gb_per_gpu:g} GB HBM per GPU" if c.min_hbm_gb_per_gpu else ""
            out.append(
                Finding(
                    "unplaceable",
                    c.id,
                    f"cluster {c.id}: none of its rack types ({', '.join(c.rack_types)}){hbm} fits any "
                    "position "
                    f"(row power, weight or floor limit, liquid loop, or cable reach)",
                )
            )
    return out


def _clusters_in(m: Model, lim: Limit, counts: dict) -> list[str]:
    """Clusters with racks counted in a limit's left-hand side in the elastic solution: count
    variables directly, feed-group and node loads through the rows they cover (mapped by keys)."""
    key_of = {v.name: k for k, v in m.n.items()}
    group_of = {v.name: g for g, v in m.group_kw.items()}
    node_of = {v.name: n for n, v in m.node_kw.items()}
    rows, found = set(), set()
    for var in lim.lhs.keys():
        if var.name in key_of:
            if counts.get(key_of[var.name]):
                found.add(key_of[var.name].group)
        elif var.name in group_of:
            rows |= set(m.pm.groups[group_of[var.name]].rows)
        elif var.name in node_of:
            for g in m.pm.normal.get(node_of[var.name], {}):
                rows |= set(m.pm.groups[g].rows)
    for key, n in counts.items():
        if n and key.cls.row in rows:
            found.add(key.group)
    members = {g.id: [c.id for c in g.members] for g in m.groups.values()}
    found_ids = {c for g in found for c in members.get(g, [g])}
    order = [c.id for c in m.scenario.clusters]
    return sorted(found_ids, key=order.index)


def _what(m: Model, lim: Limit) -> tuple[str, str]:
    """(family words, element) of a limit, for a sentence."""
    kind = lim.kind
    if kind == LimitKind.row_positions:
        return kind.words, f"row {lim.ident.rsplit('@', 1)[0]}"
    if kind == LimitKind.row_redundant:
        rows = ", ".join(m.pm.groups[lim.ident].rows)
        return kind.words, f"rows {rows} (redundant)"
    if kind == LimitKind.cooling_zone:
        return kind.words, f"{lim.ident} ({m.ix.zones[lim.ident].medium.value})"
    if kind == LimitKind.power_arrival:
        return (
            kind.words,
            f"(interconnect + generation) in {lim.key.phase}"
            if lim.key.phase
            else "(interconnect + generation)",
        )
    if kind == LimitKind.supply:
        if lim.ident.startswith("switch:"):
            return kind.words, f"of {lim.ident.removeprefix('switch:')} switches"
        return kind.words, f"of {lim.ident} racks" + (f" by {lim.key.phase}" if lim.key.phase else "")
    return ("pod GPUs" if kind == LimitKind.pod_gpus else kind.words), lim.ident


def _storage_alternative(
    scenario: Scenario, found: list[Finding], time_limit_s: float | None
) -> list[Finding]:
    """When clusters need storage racks: whether everything fits with only their storage short
    (every capacity kept), and by how much write bandwidth, where."""
    if not any(storage_racks(scenario, c) for c in scenario.clusters) or any(
        f.text.startswith("storage") for f in found
    ):
        return []
    m = build(scenario, elastic=True)
    for key, var in m.slack.items():
        if m.limits[key].kind != LimitKind.storage:
            var.upBound = 0
    result = solve(m, None, time_limit_s, tie_breaks=False)
    if result.objective is None:
        return []
    out = []
    for key, var in m.slack.items():
        short = result.values.get(var.name, 0.0)
        if m.limits[key].kind == LimitKind.storage and short > 1e-6:
            gid, sid = key.ident.split("@", 1)
            head = m.groups[gid].head
            st = scenario.catalog.by_id().get(head.storage_rack_type)
            where = (f"pod {sid}" if sid in m.ix.pods else f"building {sid}") if sid else "the site"
            racks = round(short)
            what = (
                f"storage write short by {_fmt(racks * st.storage_write_gb_per_s)} GB/s"
                if st and st.storage_write_gb_per_s
                else "storage short"
            )
            out.append(
                Finding(
                    "conflict",
                    sid or "site",
                    f"or, keeping every capacity: {what} for {head.id} in {where} ({racks} of its "
                    f"{storage_racks(scenario, head)} storage racks do not fit)",
                    short,
                    "racks",
                )
            )
    return out


def explain_infeasible(
    scenario: Scenario, time_limit_s: float | None = None, progress: ProgressFn | None = None
) -> Explanation:
    """Elastic relaxation of the capacity limits (module docstring)."""
    m = build(scenario, elastic=True)
    found = unplaceable(m)
    if found:
        return Explanation(
            scenario.name, False, f"Cannot place {_demand_text(scenario)}:", found, "checked before solving"
        )
    result = solve(m, progress, time_limit_s, tie_breaks=False)
    if result.objective is None:
        text = (
            "no assignment meets the demands even with every capacity relaxed: check hop budgets "
            "(max_hops) against pod and building sizes"
        )
        return Explanation(
            scenario.name,
            False,
            f"Cannot place {_demand_text(scenario)}:",
            [Finding("conflict", "scope", text)],
            "elastic relaxation",
        )
    worst: dict[tuple[str, str], tuple[float, str, Limit]] = {}
    findings: list[Finding] = []
    for key, lim in m.limits.items():
        s = m.slack.get(key)
        short = result.values.get(s.name) if s is not None else None
        if short is None or short <= 1e-6:
            continue
        special = _SPECIAL.get(lim.kind)
        if special is not None:
            findings.append(special(m, lim, short))
            continue
        family, element = _what(m, lim)
        k = (family, element)
        if lim.kind == LimitKind.row_positions and k in worst:  # a row's cable-length bands add up
            prev = worst[k]
            merged = replace(lim, limit=prev[2].limit + lim.limit, lhs=prev[2].lhs + lim.lhs)
            worst[k] = (prev[0] + short, "", merged)
        elif k not in worst or short > worst[k][0]:
            worst[k] = (short, lim.failed, lim)
    for (family, element), (short, when, lim) in sorted(
        worst.items(), key=lambda kv: -kv[1][0] / max(kv[1][2].limit, 1.0)
    ):
        findings.append(_capacity_finding(m, family, element, short, when, lim, result.counts))
    findings += _storage_alternative(scenario, findings, time_limit_s)
    return Explanation(
        scenario.name,
        False,
        f"Cannot place {_demand_text(scenario)}; the smallest relaxation (relative) that makes it fit:",
        findings,
        "elastic relaxation: every capacity limit given a slack, demands kept, Σ slack / limit minimised",
    )


def _storage_finding(m: Model, lim: Limit, short: float) -> Finding:
    """Storage racks short for a cluster in a scope: the write bandwidth it leaves out."""
    gid, sid = lim.ident.split("@", 1)
    head = m.groups[gid].head
    st = m.scenario.catalog.by_id().get(head.storage_rack_type)
    where = (f"pod {sid}" if sid in m.ix.pods else f"building {sid}") if sid else "the site"
    racks = round(short)
    gbps = (
        f"storage write short by {_fmt(racks * st.storage_write_gb_per_s)} GB/s"
        if st and st.storage_write_gb_per_s
        else "storage short"
    )
    what = (
        f"{gbps} for {head.id} in {where} ({racks} of its {storage_racks(m.scenario, head)} storage racks "
        "do not fit)"
    )
    return Finding("conflict", sid or "site", what, short, "racks")


def _fabric_finding(m: Model, lim: Limit, short: float) -> Finding:
    """A cluster larger than its fabric design's largest build."""
    cid, did = lim.ident.split("@", 1)
    design = next(d for d in m.scenario.fabrics if d.id == did)
    cluster = next(c for c in m.scenario.clusters if c.id == cid)
    types = m.scenario.catalog.by_id()
    downs = [leaf_down_of(design, types[t]) for t in m.scenario.gpu_types_for(cluster) if types[t].gpus]
    text = limit_text(
        design, m.scenario.catalog.switch_by_id(), max(downs) if downs and design.leaf_in_rack else None
    )
    return Finding("conflict", did, f"{text}; {cid} needs {_fmt(lim.limit + short)}", short, "endpoints")


def _spread_finding(m: Model, lim: Limit, short: float) -> Finding:
    """A cluster that needs more GPUs behind one failure domain than its spread limit allows."""
    cluster, element = lim.ident.split("@", 1)
    kind = lim.family.removeprefix("spread_")
    what = f"spread {element}: {cluster} needs {_fmt(short)} GPUs more there than max_share_per_{kind} allows"
    return Finding("conflict", element, what, short, "GPUs")


_SPECIAL = {
    LimitKind.storage: _storage_finding,
    LimitKind.fabric: _fabric_finding,
    LimitKind.spread: _spread_finding,
}
"""Limit kinds whose shortfall is told in their own words (the rest: :func:`_capacity_finding`)."""


def _capacity_finding(
    m: Model, family: str, element: str, short: float, when: str, lim: Limit, counts
) -> Finding:
    """A capacity limit short by an amount, in its unit, with the failure it is worst in and the
    clusters that load it."""
    who = _clusters_in(m, lim, counts)
    whom = f" for {', '.join(who)}" if who else ""
    case = f" when {when} fails" if when else ""
    shown = lim.limit + lim.fixed
    fixed = f" of which {_fmt(lim.fixed)} {lim.unit} is taken by network racks" if lim.fixed > 1e-9 else ""
    what = (
        f"{family} {element}: short by {_fmt(short)} {lim.unit}{case}{whom} "
        f"(limit {_fmt(shown)} {lim.unit}{fixed}, needs {_fmt(shown + short)} {lim.unit})"
    )
    return Finding("conflict", element, what, short, lim.unit)


# ----------------------------------------------------------------- feasible

STEP = 0.10
"""One relaxation step: +10 % of a limit (power rating, cooling capacity, pod ports or racks, budget)."""
TOP = 5
"""Candidates re-solved one by one (then all together)."""
RELAXERS = {rows.kind: rows.relax for rows in limit_rows().values() if rows.relax is not None}
"""Limit kind → its relaxation step, as the families declare them (:mod:`planner.model.registry`)."""
RELAXABLE = tuple(RELAXERS)
PER_PHASE = tuple(k for k in RELAXABLE if k.per_phase)
"""Limits stated per phase: relaxed in the phase they bind (their element names it)."""


@dataclass
class Relaxation:
    """One limit (with its peers), how much it is used, one step of relaxing it, and what that buys."""

    kind: str
    ident: str
    peers: tuple[str, ...]
    use_share: float
    """Worst use ÷ limit (normal or worst single failure)."""
    used: float
    limit: float
    unit: str
    when: str
    """The failure at which the use is worst ('' for normal operation)."""
    step: str = ""
    """The relaxation, in words."""
    cost_usd: float | None = None
    """Indicative cost of the relaxation (see :func:`_relaxed`), USD."""
    estimate: float = 0.0
    """LP-dual screen: first-order gain of the step (objective units)."""
    gain: float | None = None
    """Objective gained by the step, re-solved from the base plan; none if not re-solved."""
    gain_upper: float | None = None
    """Upper end of the gain when the re-solve stopped at its limit (from its bound)."""

    @property
    def label(self) -> str:
        names = ", ".join((self.ident, *self.peers))
        return f"{LimitKind(self.kind).words} {names}"


MAX_UNSOLVED_LINES = 8
"""Limits listed without a re-solve, at most (the rest are counted)."""


def _relaxed(scenario: Scenario, kind: str, idents: set[str]) -> tuple[Scenario, str, float | None] | None:
    """The scenario with one kind of limit relaxed by one step (:data:`STEP`) on the given elements,
    the step in words, and an indicative cost (each kind's step and price: :data:`RELAXERS`)."""
    data: dict[str, Any] = copy.deepcopy(scenario.model_dump(mode="json"))
    steps, cost = RELAXERS[LimitKind(kind)](data, scenario, idents, STEP)
    if not steps:
        return None
    return Scenario.model_validate(data), "; ".join(steps), cost


def _power_peers(scenario: Scenario, nodes: set[str]) -> dict[str, set[str]]:
    """Power node → other listed nodes that feed some of the same rows (2N partners):
    relaxing one side of a redundant pair alone buys nothing."""
    ix = index_site(scenario.site)
    rows_of: dict[str, set[str]] = {}
    for u in nodes:
        under = ix.subtree(u)
        rows_of[u] = {r for r, ref in ix.rows.items() if under & set(ref.row.feeds)}
    return {
        u: {
            v
            for v in nodes
            if v != u and rows_of[u] & rows_of[v] and v not in ix.ancestors(u) and u not in ix.ancestors(v)
        }
        for u in nodes
    }


def _smallest_steps(scenario: Scenario) -> dict[str, float]:
    """What one more rack of the cheapest allowed kind adds to each kind of limit."""
    types = scenario.catalog.by_id()
    allowed = [types[t] for c in scenario.clusters for t in c.rack_types if t in types]
    if not allowed:
        return {}
    kw = [scenario.rack_power_kw(t) for t in allowed]
    heat = [
        h
        for t, p in zip(allowed, kw, strict=True)
        for h in (p * (1 - t.liquid_fraction), p * t.liquid_fraction)
        if h > 0
    ]
    return {
        LimitKind.power_node: min(kw),
        LimitKind.cooling_zone: min(heat, default=0.0),
        LimitKind.pod_gpus: float(min((t.gpus for t in allowed if t.gpus), default=0)),
        LimitKind.pod_racks: 1.0,
        LimitKind.hall_positions: 1.0,
        LimitKind.supply: 1.0,
    }


def dual_screen(scenario: Scenario, time_limit_s: float) -> dict[tuple[str, str], float]:
    """First-order gain of one relaxation step per limit, from the row duals of the LP relaxation:
    Σ over the limit's rows (normal and N-1) of |dual| × STEP × right-hand side."""
    m = build(scenario)
    backend = from_name("highs")
    res = backend.solve(
        SolveRequest(
            m.prob,
            m.prob.objective,
            m.prob.sense == pulp.LpMaximize,
            time_limit_s,
            0.0,
            relax_integrality=True,
        )
    )
    out: dict[tuple[str, str], float] = {}
    if not res.duals:
        return out
    for lim in m.limits.values():
        if lim.kind in RELAXABLE:
            d = abs(res.duals.get(lim.name, 0.0))
            if d > 1e-9:
                ident = _per_phase_ident(lim.kind, lim.ident, lim.key.phase)
                out[lim.kind, ident] = out.get((lim.kind, ident), 0.0) + d * STEP * (lim.limit + lim.fixed)
    return out


def _per_phase_ident(kind: str, ident: str, phase: str | None) -> str:
    """The element a per-phase limit is relaxed by: the phase for power arrival ("region" without
    phases), "rack type@phase" for supply (the type without phases); other limits their own ID."""
    if kind == LimitKind.power_arrival:
        return phase or ident
    if kind == LimitKind.supply:
        return f"{ident}@{phase}" if phase else ident
    return ident


def per_phase_usage(scenario: Scenario, plan: Plan) -> list[Usage]:
    """The use of the per-phase limits in every phase, recomputed by the verifier from the plan's
    racks (one verification): region power arrival (element: the phase; its own ID without phases),
    rack supply ("type@phase"; the type without phases) and switch supply ("switch:<model>")."""
    if not scenario.power_arrival and not scenario.supply and not scenario.switch_supply:
        return []
    rep = verify(plan, scenario)
    if not scenario.phases:
        return [u for u in rep.usage if u.kind in PER_PHASE]
    return [
        u.model_copy(update={"id": ph if u.kind == LimitKind.power_arrival else f"{u.id}@{ph}"})
        for ph, us in rep.phase_usage.items()
        for u in us
        if u.kind in PER_PHASE
    ]


def _resolve_gain(
    scenario: Scenario, relaxed: Scenario, plan: Plan, time_limit_s: float
) -> tuple[float, float | None]:
    """(gain, upper end or none) of a relaxed scenario against the base plan: the relaxed model
    starts from the base plan (still feasible: relaxing only loosens), with the same settings."""
    m = build(relaxed)
    start = start_from_racks(m, plan.racks)
    r = solve(m, None, time_limit_s, tie_breaks=False, start=start or None)
    base = plan.objective_value or 0.0
    maximise = Objective(scenario.objective).maximise
    sign = 1.0 if maximise else -1.0
    got = base if r.objective is None else r.objective
    gain = max(0.0, sign * (got - base))  # the base plan is a solution of the relaxed model
    upper = None
    if r.status != Status.optimal:
        upper = max(gain, sign * (r.bound - base)) if r.bound is not None else math.inf
    return gain, upper


def explain_feasible(
    scenario: Scenario,
    plan: Plan,
    time_limit_s: float | None = None,
    top: int = TOP,
    progress: ProgressFn | None = None,
) -> Explanation:
    """Which limits bind and what relaxing each buys: screen every used limit with LP duals, re-solve
    the most promising (each from the base plan, same settings and gap), then all of them together."""
    limit_s = time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s
    unit = Objective(scenario.objective).unit
    screen = dual_screen(scenario, limit_s)
    cands = _candidates(scenario, plan, screen)
    chosen = cands[:top]
    for c in chosen:
        r = _relaxed(scenario, c.kind, {c.ident, *c.peers})
        if r is None:
            continue
        relaxed, c.step, c.cost_usd = r
        if progress:
            progress(Progress(f"re-solving with {c.step}", 0.0))
        c.gain, c.gain_upper = _resolve_gain(scenario, relaxed, plan, limit_s)
    findings = _relaxation_findings(cands, unit)
    joint = [c for c in chosen if c.step]
    if len(joint) > 1:
        findings.append(_joint_finding(scenario, plan, joint, limit_s, unit, progress))
    capped = _clusters_at_cap(scenario, plan)
    if capped and all((c.gain or 0.0) <= 1e-9 for c in chosen):
        its = "its" if len(capped) == 1 else "their"
        what = f"{_names(capped)} at {its} GPU cap: demand, not capacity, decides this plan"
        findings.insert(0, Finding("note", "demand", what))
    elif not cands:
        findings.append(Finding("note", "", "no limit binds: demand, not capacity, decides this plan"))
    gpus = plan.kpis.gpus if plan.kpis else 0
    head = (
        f"Plan for {scenario.name}: {gpus:,} GPUs ({plan.status}); limits that bind or whose relaxation "
        "pays, most valuable first (normal or worst N-1 use):"
    )
    how = (
        f"ranked by an LP-dual screen; the top {len(chosen)} re-solved from the base plan with the same "
        f"settings; +{STEP:.0%} per step"
    )
    ex = Explanation(scenario.name, True, head, findings, how)
    ex.relaxations = cands
    return ex


def _candidates(scenario: Scenario, plan: Plan, screen: dict) -> list[Relaxation]:
    """Every relaxable limit worth a look, most valuable first (LP screen, then use): used to the
    full or close, or gaining in the screen, or without room for one more rack; one side of a 2N
    pair stands for both (its peers)."""
    room = _smallest_steps(scenario)
    usage = [
        u for u in (plan.utilisation or []) if u.limit > 0 and u.kind in RELAXABLE and u.kind not in PER_PHASE
    ]
    usage += [u for u in per_phase_usage(scenario, plan) if u.limit > 0 or u.kind == LimitKind.power_arrival]
    tight = {
        u.id
        for u in usage
        if u.kind == LimitKind.power_node
        and (u.worst_share >= NEAR_SHARE or screen.get((u.kind, u.id), 0) > 0)
    }
    peers = _power_peers(scenario, tight)
    cands: list[Relaxation] = []
    grouped: set[tuple[str, str]] = set()
    for u in sorted(usage, key=lambda u: (-screen.get((u.kind, u.id), 0.0), -u.worst_share, u.kind, u.id)):
        if (u.kind, u.id) in grouped:
            continue
        mates = tuple(sorted(peers.get(u.id, set()))) if u.kind == LimitKind.power_node else ()
        grouped |= {(u.kind, u.id), *((u.kind, p) for p in mates)}
        used = max(u.value, u.worst_value or 0.0)
        est = screen.get((u.kind, u.id), 0.0) + sum(screen.get((u.kind, p), 0.0) for p in mates)
        no_room = u.limit - used < room.get(u.kind, 0.0) - 1e-9
        if est <= 1e-9 and u.worst_share < BINDING_SHARE and not no_room:
            continue
        when = u.worst_failure if u.worst_failure and (u.worst_value or 0) > u.value + 1e-9 else ""
        cands.append(
            Relaxation(u.kind, u.id, mates, used / u.limit, used, u.limit, u.unit, when, estimate=est)
        )
    return cands


def _relaxation_findings(cands: list[Relaxation], unit: str) -> list[Finding]:
    """One line per candidate: its use, and the gain of its step where re-solved (at most
    :data:`MAX_UNSOLVED_LINES` of those not re-solved, the rest counted)."""
    findings: list[Finding] = []
    unsolved = 0
    for c in cands:
        when = f" when {c.when} fails" if c.when else ""
        text = f"{c.label}: {_fmt(c.used)} of {_fmt(c.limit)} {c.unit} used ({c.use_share:.1%}){when}"
        if c.gain is not None:
            text += f"; {c.step} → {_gain_text(c.gain, c.gain_upper)} {unit}"
            if c.cost_usd is not None:
                text += f" (≈ ${c.cost_usd:,.0f})"
        else:
            unsolved += 1
            if unsolved > MAX_UNSOLVED_LINES:
                continue
            why = (
                "not re-solved (the LP screen ranks it below the top ones)"
                if c.estimate > 0
                else "the LP screen finds no gain"
            )
            text += f"; {why}"
        findings.append(Finding("binding", c.ident, text, c.used, c.unit))
    if unsolved > MAX_UNSOLVED_LINES:
        more = unsolved - MAX_UNSOLVED_LINES
        what = f"… and {more:,} more limits used to the full or close, not re-solved (table: every one)"
        findings.append(Finding("note", "", what))
    return findings


def _joint_finding(
    scenario: Scenario, plan: Plan, joint: list[Relaxation], limit_s: float, unit: str, progress
) -> Finding:
    """What relaxing the re-solved limits together by one step buys."""
    s2 = scenario
    for c in joint:
        r = _relaxed(s2, c.kind, {c.ident, *c.peers})
        if r is not None:
            s2 = r[0]
    if progress:
        progress(Progress(f"re-solving with {len(joint)} limits relaxed together", 0.0))
    g, up = _resolve_gain(scenario, s2, plan, limit_s)
    names = "; ".join(c.label for c in joint)
    return Finding(
        "note", "joint", f"relaxing {names} together by one step → {_gain_text(g, up)} {unit}", g, unit
    )


def _clusters_at_cap(scenario: Scenario, plan: Plan) -> list[str]:
    """Clusters whose GPUs reach their stated cap (demand max with gpus, or exact)."""
    types = scenario.catalog.by_id()
    got: dict[str, int] = {}
    for r in plan.racks:
        got[r.cluster] = got.get(r.cluster, 0) + types[r.rack_type].gpus
    return [
        c.id
        for c in scenario.clusters
        if c.gpus is not None and c.demand != Demand.at_least and got.get(c.id, 0) >= c.gpus
    ]


def _names(ids: list[str], most: int = 4) -> str:
    head = ", ".join(ids[:most])
    return (
        ("cluster " if len(ids) == 1 else "clusters ")
        + head
        + (f" and {len(ids) - most} more" if len(ids) > most else "")
    )


def _gain_text(gain: float, upper: float | None) -> str:
    if upper is None or upper <= gain + 1e-9:
        return f"+{_fmt(gain)}"
    if math.isinf(upper):
        return f"at least +{_fmt(gain)} (re-solve stopped at its limit, no bound)"
    return f"+{_fmt(gain)} to +{_fmt(upper)} (re-solve stopped at its limit)"


def explain(
    scenario: Scenario, time_limit_s: float | None = None, progress: ProgressFn | None = None
) -> tuple[Explanation, Plan | None]:
    """Solve; explain the conflict if infeasible, else the binding limits."""
    plan = plan_scenario(scenario, progress, time_limit_s)
    if plan.status == Status.infeasible:
        return explain_infeasible(scenario, time_limit_s, progress), plan
    if not plan.status.has_plan:
        return Explanation(
            scenario.name,
            None,
            f"No plan found within {time_limit_s or scenario.solver.time_limit_s} s; feasibility is "
            "unknown. Raise the time limit.",
        ), plan
    return explain_feasible(scenario, plan, time_limit_s, progress=progress), plan
