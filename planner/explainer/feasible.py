"""Which limits bind and what relaxing each buys: the LP-dual screen and the re-solves (package docstring)."""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import pulp

from planner.clock import Deadline
from planner.enums import LimitKind, Objective, Status
from planner.explainer.report import BINDING_SHARE, NEAR_SHARE, Explanation, Finding, _fmt
from planner.explainer.spread_use import spread_usage
from planner.input.site_index import index_site
from planner.input.timeline import timeline
from planner.model import build, limit_rows
from planner.plan import Plan
from planner.plan.fill import start_from_racks
from planner.schema import Demand, Scenario, Usage
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import Progress, ProgressFn, solve
from planner.verifier import verify

STEP = 0.10
"""One relaxation step: +10 % of a limit (power rating, cooling capacity, pod ports or racks, budget)."""
TOP = 5
"""Candidates re-solved one by one (then all together)."""
RELAXERS = {rows.kind: rows.relax for rows in limit_rows().values() if rows.relax is not None}
"""Limit kind → its relaxation step, as the families declare them (:mod:`planner.model.registry`)."""
ALIASES = {LimitKind.hall_positions: LimitKind.row_positions}
"""Limits the plan reports whose model rows are of another kind: a hall's positions are the sum of
its rows' (relaxed by lengthening them)."""
RELAXERS.update({k: RELAXERS[v] for k, v in ALIASES.items() if v in RELAXERS})
RELAXABLE = tuple(RELAXERS)
PER_PHASE = tuple(k for k in RELAXABLE if k.per_phase)
"""Limits stated per phase: relaxed in the phase they bind (their element names it)."""


class Replanned(Protocol):
    """A relaxed scenario re-planned at region scale: its plan (None: none in time), the buildings
    that solved again, why there is no plan."""

    plan: Plan | None
    buildings: list[str]
    why: str
    seconds: float


class Replanner(Protocol):
    """Plans at region scale without a model of the whole (:class:`planner.scale.relaxed.RegionReplanner`)."""

    def base(self, scenario: Scenario, deadline: Deadline) -> Plan: ...

    def relaxed(self, base: Scenario, relaxed: Scenario, plan: Plan, deadline: Deadline) -> Replanned: ...

    def bound(self, relaxed: Scenario, time_limit_s: float) -> float | None: ...


MIN_BOUND_S = 10.0
"""Least seconds left to start bounding a re-planned gain at region scale (an LP of the whole)."""
MIN_REPLAN_S = 3.0
"""Least seconds a re-plan at region scale is started with (more once one has been measured)."""


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
    found_by: str = ""
    """At region scale: what re-planned it ('' for a re-solve of the whole model)."""
    upper_by: str = ""
    """At region scale: the bound the upper end comes from ('' for none)."""
    why: str = ""
    """Why it has no gain although chosen (no re-plan in time)."""

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
    hall_of = {rid: ref.hall for rid, ref in m.ix.rows.items()}
    for lim in m.limits.values():
        if lim.kind in RELAXABLE:
            d = abs(res.duals.get(lim.name, 0.0))
            if d > 1e-9:
                kind, ident = lim.kind, _per_phase_ident(lim.kind, lim.ident, lim.key.phase)
                if kind == LimitKind.row_positions:  # a row's positions count toward its hall's
                    kind, ident = LimitKind.hall_positions, hall_of.get(ident.split("@")[0], ident)
                out[kind, ident] = out.get((kind, ident), 0.0) + d * STEP * (lim.limit + lim.fixed)
    return out


def _per_phase_ident(kind: str, ident: str, phase: str | None) -> str:
    """The element a per-phase limit is relaxed by: the phase for power arrival ("region" without
    phases), "rack type@phase" for supply (the type without phases); other limits their own ID."""
    if kind in BY_PHASE:
        return phase or ident
    if kind == LimitKind.supply:
        return f"{ident}@{phase}" if phase else ident
    return ident


BY_PHASE = (LimitKind.power_arrival, LimitKind.swing, LimitKind.emissions, LimitKind.water)
"""Per-phase limits relaxed by their phase (the region's power, swing acceptance, emissions, water)."""


def per_phase_usage(scenario: Scenario, plan: Plan) -> list[Usage]:
    """The use of the per-phase limits in every phase, recomputed by the verifier from the plan's
    racks (one verification): region power arrival (element: the phase; its own ID without phases),
    rack supply ("type@phase"; the type without phases) and switch supply ("switch:<model>")."""
    grid = scenario.power_stability is not None or scenario.power_sources or scenario.water is not None
    if not scenario.power_arrival and not scenario.supply and not scenario.switch_supply and not grid:
        return []
    rep = verify(plan, scenario)
    if not scenario.phases:
        return [u for u in rep.usage if u.kind in PER_PHASE]
    return [
        u.model_copy(update={"id": ph if u.kind in BY_PHASE else f"{u.id}@{ph}"})
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
    replan: Replanner | None = None,
    deadline: Deadline | None = None,
) -> Explanation:
    """Which limits bind and what relaxing each buys: screen every used limit with LP duals, re-solve
    the most promising (each from the base plan, same settings and gap), then all of them together.
    ``replan`` (region scale): no LP screen of the whole; the tightest limit of each kind is relaxed
    and re-planned from the base plan within ``deadline`` (only the buildings the step touches solve
    again); the gain is what that re-plan found, a lower bound, said so."""
    limit_s = time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s
    unit = Objective(scenario.objective).unit_for(bool(scenario.phases))
    screen = dual_screen(scenario, limit_s) if replan is None else {}
    cands = _candidates(scenario, plan, screen)
    chosen = cands[:top] if replan is None else _one_per_kind(cands, top)
    relaxed = []
    for c in chosen:
        r = _relaxed(scenario, c.kind, {c.ident, *c.peers})
        if r is not None:
            c.step, c.cost_usd = r[1], r[2]
            relaxed.append((c, r[0]))
    if replan is None:
        for c, s2 in relaxed:
            if progress:
                progress(Progress(f"re-solving with {c.step}", 0.0))
            c.gain, c.gain_upper = _resolve_gain(scenario, s2, plan, limit_s)
    else:
        _replan_gains(scenario, plan, relaxed, replan, deadline or Deadline(limit_s), progress)
        cands.sort(key=lambda c: -(c.gain or 0.0))  # no screen ranked them: the re-plans' gains do
    findings = _relaxation_findings(cands, unit, screened=replan is None)
    joint = [c for c in chosen if c.step]
    if len(joint) > 1 and replan is None:
        findings.append(_joint_finding(scenario, plan, joint, limit_s, unit, progress))
    findings[:0] = _demand_findings(scenario, plan, cands, chosen)
    if scenario.maintenance and replan is None:
        findings.append(_maintenance_finding(scenario, plan, limit_s, unit))
    gpus = plan.kpis.gpus if plan.kpis else 0
    head = (
        f"Plan for {scenario.name}: {gpus:,} GPUs ({plan.status}); limits that bind or whose relaxation "
        "pays, most valuable first (normal or worst N-1 use):"
    )
    how = (
        f"ranked by an LP-dual screen; the top {len(chosen)} re-solved from the base plan with the same "
        f"settings; +{STEP:.0%} per step"
        if replan is None
        else f"the tightest limit of each kind ({len(chosen)}) relaxed by +{STEP:.0%} and re-planned from "
        "the base plan: only the buildings the step touches solve again (for a region limit, those most "
        "able to use it), the others keep their racks, the joined plan verified whole; a gain is what the "
        "re-plan found (at least that much); its upper end, where the time left allowed, is the relaxed "
        "scenario's LP bound"
    )
    ex = Explanation(scenario.name, True, head, findings, how)
    ex.relaxations = cands
    return ex


def _maintenance_finding(scenario: Scenario, plan: Plan, limit_s: float, unit: str) -> Finding:
    """What the maintenance level (§21) costs: the scenario re-solved without it, from the base plan
    (which it still admits), same settings; its gain is the level's cost."""
    without = scenario.model_copy(update={"maintenance": []})
    gain, upper = _resolve_gain(scenario, without, plan, limit_s)
    levels = ", ".join(m.kind for m in scenario.maintenance)
    figure, _, aside = _gain_text(gain, upper, "").partition(" (")
    text = f"maintenance level ({levels}): N-1 only would give {figure} {unit}" + (
        f" ({aside}" if aside else ""
    )
    return Finding("binding", "maintenance", text, gain, unit)


def _one_per_kind(cands: list[Relaxation], top: int) -> list[Relaxation]:
    """The first (tightest) candidate of each kind, at most ``top``; slots left go to further phases
    of the per-phase limits (power arrived, supply), which every building can use."""
    seen: set[str] = set()
    out = []
    for c in cands:
        if c.kind not in seen:
            seen.add(c.kind)
            out.append(c)
    out = out[:top]
    out += [c for c in cands if c not in out and c.kind in PER_PHASE][: top - len(out)]
    return out


def _replan_gains(
    scenario: Scenario,
    plan: Plan,
    relaxed: list[tuple[Relaxation, Scenario]],
    replan: Replanner,
    deadline: Deadline,
    progress: ProgressFn | None,
) -> None:
    """Each relaxation re-planned in its share of the time left (none started with less than the
    longest one took, or :data:`MIN_REPLAN_S`); its gain over the base plan, never below 0 (the base
    plan is a plan of the relaxed scenario), only where the re-plan found a verified plan."""
    base = plan.objective_value or 0.0
    sign = 1.0 if Objective(scenario.objective).maximise else -1.0
    need = MIN_REPLAN_S
    for k, (c, s2) in enumerate(relaxed):
        left = deadline.left()
        if left < need:
            c.why = f"not re-planned: {max(0.0, left):.0f} s left of the time limit"
            continue
        if progress:
            progress(Progress(f"re-planning with {c.step}", deadline.elapsed()))
        got = replan.relaxed(scenario, s2, plan, Deadline(left / (len(relaxed) - k)))
        need = max(need, got.seconds)
        if got.plan is None or not got.plan.status.has_plan or got.plan.objective_value is None:
            c.why = f"no gain found: {got.why}"
            continue
        c.gain = max(0.0, sign * (got.plan.objective_value - base))
        c.found_by = f"found re-planning {_names_of(got.buildings)}"
    _upper_ends(plan, [x for x in relaxed if x[0].gain is not None], replan, deadline, progress)


def _upper_ends(
    plan: Plan,
    relaxed: list[tuple[Relaxation, Scenario]],
    replan: Replanner,
    deadline: Deadline,
    progress: ProgressFn | None,
) -> None:
    """In the time left, the upper end of each re-planned gain, the largest first: the relaxed
    scenario's LP bound less the base plan's objective (building the LP and solving it get half the
    time left each; none started with less than the last one took, or :data:`MIN_BOUND_S`)."""
    base = plan.objective_value or 0.0
    sign = 1.0 if Objective(plan.objective).maximise else -1.0
    need = MIN_BOUND_S
    for c, s2 in sorted(relaxed, key=lambda x: -(x[0].gain or 0.0)):
        if deadline.left() < need:
            return
        if progress:
            progress(Progress(f"bounding the gain of {c.step}", deadline.elapsed()))
        t0 = time.perf_counter()
        b = replan.bound(s2, 0.45 * deadline.left())
        need = max(need, 1.2 * (time.perf_counter() - t0))
        if b is not None:
            c.gain_upper = max(c.gain or 0.0, sign * (b - base))
            c.upper_by = "LP relaxation of the relaxed scenario"


def _names_of(buildings: list[str], most: int = 4) -> str:
    head = ", ".join(buildings[:most]) + (
        f" and {len(buildings) - most} more" if len(buildings) > most else ""
    )
    return ("building " if len(buildings) == 1 else "buildings ") + head


def _candidates(scenario: Scenario, plan: Plan, screen: dict) -> list[Relaxation]:
    """Every relaxable limit worth a look, most valuable first (LP screen, then use): used to the
    full or close, or gaining in the screen, or without room for one more rack; one side of a 2N
    pair stands for both (its peers)."""
    room = _smallest_steps(scenario)
    usage = [
        u for u in (plan.utilisation or []) if u.limit > 0 and u.kind in RELAXABLE and u.kind not in PER_PHASE
    ]
    usage += [u for u in per_phase_usage(scenario, plan) if u.limit > 0 or u.kind in BY_PHASE]
    usage += [u for u in spread_usage(scenario, plan) if u.limit > 0]
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


def _relaxation_findings(cands: list[Relaxation], unit: str, screened: bool = True) -> list[Finding]:
    """One line per candidate: its use, and the gain of its step where re-solved (at most
    :data:`MAX_UNSOLVED_LINES` of those not re-solved, the rest counted)."""
    findings: list[Finding] = []
    unsolved = 0
    for c in cands:
        when = f" when {c.when} fails" if c.when else ""
        text = f"{c.label}: {_fmt(c.used)} of {_fmt(c.limit)} {c.unit} used ({c.use_share:.1%}){when}"
        if c.gain is not None:
            figure, _, aside = _gain_text(c.gain, c.gain_upper, c.upper_by).partition(" (")
            text += f"; {c.step} → {figure} {unit}" + (f" ({aside}" if aside else "")
            if c.found_by:
                text += f", {c.found_by}"
            if c.cost_usd is not None:
                text += f" (≈ ${c.cost_usd:,.0f})"
        elif c.why:
            text += f"; {c.step}: {c.why}"
        else:
            unsolved += 1
            if unsolved > MAX_UNSOLVED_LINES:
                continue
            why = (
                "not re-planned (one limit of each kind is)"
                if not screened
                else "not re-solved (the LP screen ranks it below the top ones)"
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
    """What relaxing the re-solved limits together by one step buys (one step per kind over all its
    named elements: two spread limits of one cluster raise its share once)."""
    s2 = scenario
    by_kind: dict[str, set[str]] = {}
    for c in joint:
        by_kind.setdefault(c.kind, set()).update({c.ident, *c.peers})
    for kind, idents in by_kind.items():
        r = _relaxed(s2, kind, idents)
        if r is not None:
            s2 = r[0]
    if progress:
        progress(Progress(f"re-solving with {len(joint)} limits relaxed together", 0.0))
    g, up = _resolve_gain(scenario, s2, plan, limit_s)
    names = "; ".join(c.label for c in joint)
    return Finding(
        "note", "joint", f"relaxing {names} together by one step → {_gain_text(g, up)} {unit}", g, unit
    )


def _demand_findings(
    scenario: Scenario, plan: Plan, cands: list[Relaxation], chosen: list[Relaxation]
) -> list[Finding]:
    """What demand says: "no limit binds" only when every cluster got all it asked in every phase
    and no relaxation gains; a cluster short of its ask with nothing found to relax is said so,
    with the limits used to the full."""
    short = _short_clusters(scenario, plan)
    gains = any((c.gain or 0.0) > 1e-9 for c in chosen)
    if not short:
        if gains:
            return []
        capped = _clusters_at_cap(scenario, plan)
        what = "no limit binds: every cluster got all it asked; demand, not capacity, decides this plan"
        if capped:
            its = "its" if len(capped) == 1 else "their"
            what = f"{_names(capped)} at {its} GPU cap; " + what
        return [Finding("note", "demand", what)]
    if gains or cands:
        return []
    full = sorted(
        f"{LimitKind(u.kind).words} {u.id}"
        for u in plan.utilisation or []
        if u.limit > 0 and u.worst_share >= BINDING_SHARE
    )
    told = "; ".join(_short_text(*x) for x in short[:4]) + (
        f"; … {len(short) - 4} more" if len(short) > 4 else ""
    )
    what = f"demand is not met ({told}), yet no limit relaxed by one step was found to buy more" + (
        f"; used to the full: {', '.join(full[:8])}" if full else ""
    )
    return [Finding("note", "demand", what)]


def _short_text(cluster: str, phase: str | None, got: int, want: int | None) -> str:
    at = f" in {phase}" if phase else ""
    return f"{cluster} {got:,} GPUs{at}, " + ("as many as fit asked" if want is None else f"{want:,} asked")


def _short_clusters(scenario: Scenario, plan: Plan) -> list[tuple[str, str | None, int, int | None]]:
    """(cluster, phase, GPUs standing, GPUs asked; None: as many as fit) wherever a cluster got less
    than it asked: a max cluster without a figure always asks for more."""
    types = scenario.catalog.by_id()
    tl = timeline(scenario)
    out = []
    for i, ph in enumerate(tl.phases):
        standing = scenario.standing(plan.racks, i) if ph else plan.racks
        got: dict[str, int] = {}
        for r in standing:
            if not r.spare and r.rack_type in types:
                got[r.cluster] = got.get(r.cluster, 0) + types[r.rack_type].gpus
        for c in scenario.clusters:
            want = tl.demand(c, i)
            if want is None or got.get(c.id, 0) < want:
                out.append((c.id, ph, got.get(c.id, 0), want))
    return out


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


def _gain_text(gain: float, upper: float | None, upper_by: str = "") -> str:
    if upper is None or upper <= gain + 1e-9:
        return f"+{_fmt(gain)}" + (f" (proven: {upper_by})" if upper is not None and upper_by else "")
    if math.isinf(upper):
        return f"at least +{_fmt(gain)} (re-solve stopped at its limit, no bound)"
    if upper_by:
        return f"+{_fmt(gain)} to +{_fmt(upper)} (upper end: {upper_by})"
    return f"+{_fmt(gain)} to +{_fmt(upper)} (re-solve stopped at its limit)"
