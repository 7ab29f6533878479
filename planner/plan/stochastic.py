"""Two-stage planning over demand futures (§17, ``planner plan --mode stochastic``).

The first phase is decided before the future is known; the later phases adapt to each future.
The model is the extensive form: one copy of the joint phased model per future f (its clusters'
demand replaced by the future's), every variable and row renamed ``f<i>_…``, the objective

    max (or min) Σ_f p_f × objective_f

and non-anticipativity rows tying the first phase together: for every count key k of the first
phase (class, rack type, cluster, role) and every retrofit b bought in it,

    n_f[k] = n_0[k],  buy_f[b] = buy_0[b]  for every future f > 0

(a key one copy lacks counts 0 there); a rack type with a lead time of L phases is ordered in the
first phase for phase L, so the racks of it standing first in phase L are one count in every future
(where they stand is decided once the future is known). Clusters are not grouped (a group is a set of
identical
clusters, which may differ from future to future).

Around it, what a planner compares it with (each a separate solve, each plan verified):
- perfect information: a joint plan per future, as if that future were known; the regret of a
  future is what its stochastic plan loses against it, EVPI = Σ p × (perfect − stochastic);
- the mean-demand plan: a joint plan for Σ p × demand, whose first phase is then kept and the
  later phases re-planned in each future (the rolling machinery: the first phase's racks fixed,
  and its orders of lead-time rack types, which no future may re-decide in hindsight);
  VSS = the stochastic plan's expected objective − that plan's (a future it cannot serve makes
  VSS undefined, and the report says which).
Signs: figures are in objective units and never negative up to solver gaps (for a minimised
objective every difference is taken the other way round).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pulp

from planner.clock import Deadline
from planner.enums import Objective, Status
from planner.errors import InputError, SolverFailure
from planner.input.timeline import timeline
from planner.model import Model, build, lp_name
from planner.plan import BoughtRetrofit, PlacedRack, Plan
from planner.plan.fill import fill
from planner.plan.kpis import objective_value
from planner.plan.pipeline import finish_plan, plan_scenario, to_plan
from planner.plan.rolling import designs_of, grown_network
from planner.schema import NetworkRack, Scenario
from planner.schema.hashing import run_hash, scenario_hash
from planner.schema.plan import FutureOutcome, StochasticReport
from planner.solving.core import Progress, ProgressFn, SolveResult, evaluate, solve
from planner.version import __version__

EXTENSIVE_SHARE = 0.5
"""Share of the time limit the two-stage model gets; the perfect-information and mean-demand
plans share the rest."""


def unsupported(scenario: Scenario) -> list[str]:
    """Why a scenario cannot be planned two-stage (empty: it can)."""
    out = []
    if not scenario.futures:
        out.append("the scenario lists no futures (give futures: with probabilities)")
    return out


def mean_future(scenario: Scenario) -> Scenario:
    """The scenario planned for the mean demand: per cluster named by a future and per phase,
    Σ probability × GPUs wanted, rounded to whole GPUs; no futures left."""
    tl = timeline(scenario)
    per = {f.id: {c.id: c for c in scenario.in_future(f.id).clusters} for f in scenario.futures}
    clusters = []
    for c in scenario.clusters:
        if not any(c.id in f.gpus_by_phase for f in scenario.futures):
            clusters.append(c)
            continue
        mean = {
            ph.id: round(sum(f.probability * (tl.demand(per[f.id][c.id], p) or 0) for f in scenario.futures))
            for p, ph in enumerate(scenario.phases)
        }
        clusters.append(c.model_copy(update={"gpus_by_phase": mean}))
    return scenario.model_copy(update={"clusters": clusters, "futures": []})


@dataclass
class Extensive:
    """The two-stage model: one copy per future, solved as one problem (what
    :func:`planner.solving.core.solve`
    needs of a model: the problem, the scenario's solver settings, counts and tie-break expressions)."""

    scenario: Scenario
    prob: pulp.LpProblem
    copies: list[Model]
    objective_name: str
    n: dict = field(default_factory=dict)
    """(future index, count key) → variable."""
    exprs: dict = field(default_factory=dict)
    """Tie-break expressions: the expected cable cost and length."""


def _rename(m: Model, prefix: str) -> None:
    """Prefix every variable name of a copy (its rows are renamed as they join the joint problem)."""
    for v in m.prob.variables():
        v.name = prefix + v.name


def extensive(scenario: Scenario, deadline: Deadline | None = None) -> Extensive:
    """Build the extensive form (module docstring)."""
    first = scenario.phases[0].id
    copies = []
    for i, f in enumerate(scenario.futures):
        m = build(scenario.in_future(f.id), group_clusters=False, deadline=deadline)
        _rename(m, f"f{i}_")
        copies.append(m)
    sense = copies[0].prob.sense
    prob = pulp.LpProblem("stochastic", sense)
    for i, m in enumerate(copies):
        for _, name, c in m.rows():  # every family's labelled block, in build order
            prob.addConstraint(c, f"f{i}_{name}")
    objective = pulp.lpSum(
        f.probability * m.prob.objective for f, m in zip(scenario.futures, copies, strict=True)
    )
    prob.setObjective(objective)
    _tie_first_phase(prob, copies, first)
    _tie_orders(prob, scenario, copies)
    ex = Extensive(scenario, prob, copies, f"expected {Objective(scenario.objective).value}")
    ex.n = {(i, k): v for i, m in enumerate(copies) for k, v in m.n.items()}
    for name in ("cable_usd", "cable_m"):
        ex.exprs[name] = pulp.lpSum(
            f.probability * m.exprs[name] for f, m in zip(scenario.futures, copies, strict=True)
        )
    return ex


def _tie_first_phase(prob: pulp.LpProblem, copies: list[Model], first: str) -> None:
    """Every copy's racks and retrofits of the first phase equal the first copy's (a key one copy
    lacks counts 0 there); so do the designed fabrics' choices and first-phase network racks:
    switches and racks per row and tier, each row's transceiver share and each pod's share of a
    row serving several pods."""
    ties = 0
    kinds = [(kind, lambda k: k.phase == first) for kind in ("n", "buy")]
    kinds += [
        (kind, lambda k: k[-1] == first) for kind in ("network_switches", "network_racks", "network_kw")
    ]
    kinds += [("network_share", lambda k: k[-1] == first), ("fabric_pick", lambda k: True)]
    for kind, in_first in kinds:
        keys = sorted({k for m in copies for k in getattr(m, kind) if in_first(k)}, key=str)
        for k in keys:
            base = getattr(copies[0], kind).get(k)
            for i, m in enumerate(copies[1:], start=1):
                other = getattr(m, kind).get(k)
                if base is None and other is None:
                    continue
                present = [(v, c) for v, c in ((other, 1), (base, -1)) if v is not None]
                prob.addConstraint(pulp.LpAffineExpression(present) == 0, f"same_first_{kind}_{ties}_f{i}")
                ties += 1


def _tie_orders(prob: pulp.LpProblem, scenario: Scenario, copies: list[Model]) -> None:
    """Racks of a type with a lead time standing first in phase ``lead`` were ordered in the first
    phase: the same number in every copy."""
    for t, lead in sorted(scenario.lead_phases.items()):
        if not 0 < lead < len(scenario.phases):
            continue
        lands = scenario.phases[lead].id
        orders = [
            pulp.lpSum(v for k, v in m.n.items() if k.rack_type == t and k.phase == lands) for m in copies
        ]
        for i in range(1, len(copies)):
            prob.addConstraint(orders[i] - orders[0] == 0, f"same_first_order_{lp_name(t)}_f{i}")


def adapt(
    scenario: Scenario,
    first_racks: list[PlacedRack],
    first_buys: list[tuple[str, str | None]],
    time_limit_s: float,
    label: str,
    first_orders: dict[str, int] | None = None,
    first_network: list[NetworkRack] | None = None,
) -> Plan:
    """A plan of ``scenario`` (no futures) whose first phase is given: those racks and retrofits
    fixed, and the first phase's orders of rack types with a lead time (``first_orders``: racks of
    the type standing first in the phase the lead reaches), the later phases solved jointly.
    Verified; status at best feasible (no bound for the whole); ``infeasible`` when the first phase
    cannot be completed. What the first phase ordered is not re-decided in hindsight, so the
    mean-demand plan scored this way is a plan of the two-stage model and VSS ≥ 0 (up to gaps).
    ``first_network``: the designed fabrics' network racks of the first phase, standing (the later
    phases grow from them)."""
    fixed = [r.model_copy(update={"existing": True}) for r in first_racks]
    leads = {
        t: max(0, lead - 1) for t, lead in scenario.lead_phases.items()
    }  # counted from the second phase, the first this model decides
    s1 = scenario.model_copy(update={"existing": [*scenario.existing, *fixed], "lead_phases": leads})
    t0 = time.perf_counter()
    m = build(s1, from_phase=1, fixed_buys=tuple(first_buys), installed_network=tuple(first_network or ()))
    _fix_orders(m, scenario, first_orders)
    build_s = time.perf_counter() - t0
    r = solve(m, None, time_limit_s, tie_breaks=False)
    if r.objective is None:
        return Plan(
            planner_version=__version__,
            scenario_name=scenario.name,
            scenario_hash=scenario_hash(scenario),
            solver=scenario.solver.name,
            solver_settings=scenario.solver,
            run_hash=run_hash(scenario),
            status=r.status if r.status == Status.infeasible else Status.time_limit,
            objective=scenario.objective,
            notes=[f"{label}: the later phases could not be planned ({r.status.value})"],
        )
    filled = fill(m, r.counts, r.values)
    new = [x for x in filled if not x.existing]
    network = grown_network(m, r.values, filled) if scenario.fabrics else []
    racks = sorted(
        [*scenario.existing, *first_racks, *new], key=lambda x: (x.building, x.hall, x.row, x.position)
    )
    buys = [
        *first_buys,
        *((k.retrofit, k.phase) for k, v in m.buy.items() if r.values.get(v.name, 0.0) > 0.5),
    ]
    plan = Plan(
        planner_version=__version__,
        scenario_name=scenario.name,
        scenario_hash=scenario_hash(scenario),
        solver=scenario.solver.name,
        solver_settings=scenario.solver,
        run_hash=run_hash(scenario),
        status=Status.feasible,
        objective=scenario.objective,
        objective_value=objective_value(scenario, racks, buys),
        build_time_s=round(build_s, 4),
        solve_time_s=round(r.solve_time_s, 4),
        racks=racks,
        network_racks=network,
        fabric=designs_of(scenario, network),
        retrofits=[BoughtRetrofit(id=a, phase=b) for a, b in buys],
        notes=[f"{label}: first phase fixed, later phases {r.status.value} given it"],
    )
    return finish_plan(plan, scenario)


def first_network(plan: Plan, first: str) -> list[NetworkRack]:
    """The designed fabrics' network racks standing in the first phase, with what they hold then."""
    out = []
    for nr in plan.network_racks:
        if nr.phase != first:
            continue
        switches = [sc for sc in nr.switches if sc.phase == first]
        kw = nr.kw_by_phase.get(first, nr.kw)
        out.append(nr.model_copy(update={"switches": switches, "kw": kw, "kw_by_phase": {first: kw}}))
    return out


def _fix_orders(m: Model, scenario: Scenario, first_orders: dict[str, int] | None) -> None:
    """Racks of a type with lead L standing first in phase L were ordered in the first phase: their
    number is the given plan's (0 when it ordered none)."""
    for t, lead in sorted(scenario.lead_phases.items()):
        if not 0 < lead < len(scenario.phases):
            continue
        lands = scenario.phases[lead].id
        placed = [v for k, v in m.n.items() if k.rack_type == t and k.phase == lands]
        want = (first_orders or {}).get(t, 0)
        if placed or want:
            m.prob.addConstraint(pulp.lpSum(placed) == want, f"first_order_{lp_name(t)}")


def first_orders(plan: Plan, scenario: Scenario) -> dict[str, int]:
    """Per rack type with a lead time: the racks a plan ordered in the first phase (those standing
    first in the phase the lead reaches)."""
    out: dict[str, int] = {}
    for t, lead in scenario.lead_phases.items():
        if 0 < lead < len(scenario.phases):
            lands = scenario.phases[lead].id
            out[t] = sum(1 for r in plan.racks if not r.existing and r.rack_type == t and r.phase == lands)
    return out


def first_phase(plan: Plan, first: str) -> tuple[list[PlacedRack], list[tuple[str, str | None]]]:
    """The racks a plan places in the first phase and the retrofits it buys then."""
    racks = [r for r in plan.racks if not r.existing and r.phase == first]
    buys = [(b.id, b.phase) for b in plan.retrofits if b.phase == first]
    return racks, buys


def plan_stochastic(
    scenario: Scenario,
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    deadline: Deadline | None = None,
) -> Plan:
    """The two-stage plan (module docstring): the shown (most probable) future's plan with every
    future's plan and the expected figures in ``plan.stochastic``."""
    why = unsupported(scenario)
    if why:
        raise InputError("--mode stochastic: " + "; ".join(why))
    if deadline is None:
        deadline = Deadline(time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s)
    t0 = deadline.t0

    def say(stage: str) -> None:
        if progress:
            progress(Progress(stage, time.perf_counter() - t0))

    first = scenario.phases[0].id
    futures = scenario.futures
    say(f"building the two-stage model: {len(futures)} futures, first phase '{first}' shared")
    tb = time.perf_counter()
    ex = extensive(scenario, deadline)
    build_s = time.perf_counter() - tb
    res = solve(ex, progress, max(1.0, EXTENSIVE_SHARE * deadline.left()), t0=time.perf_counter())
    if res.objective is None:
        raise SolverFailure(
            f"the two-stage model: {res.status.value} ({'; '.join(res.stages) or 'no solution'})"
        )
    plans = []
    for i, (f, m) in enumerate(zip(futures, ex.copies, strict=True)):
        counts = {k: c for (j, k), c in res.counts.items() if j == i}
        own = SolveResult(
            Status.feasible,
            evaluate(m.prob.objective, res.values),
            None,
            None,
            res.solve_time_s,
            counts=counts,
            values=res.values,
            stages=[f"future {f.id} of the two-stage plan (p = {f.probability:g})"],
        )
        plans.append(to_plan(m, own, build_s, scenario.solver.name))
    rest = max(1.0, deadline.left())
    each = rest / (2 * len(futures) + 1)
    perfect = []
    for f in futures:
        say(f"perfect information: planning future {f.id} as if known")
        p = plan_scenario(scenario.in_future(f.id), time_limit_s=each)
        perfect.append(p)
    say("planning for the mean demand")
    mean_plan = plan_scenario(mean_future(scenario), time_limit_s=each)
    mean_runs: list[Plan | None] = []
    if mean_plan.status.has_plan:
        racks, buys = first_phase(mean_plan, first)
        orders = first_orders(mean_plan, scenario)
        network = first_network(mean_plan, first)
        for f in futures:
            say(f"the mean-demand first phase in future {f.id}")
            label = f"mean-demand plan in future {f.id}"
            mean_runs.append(adapt(scenario.in_future(f.id), racks, buys, each, label, orders, network))
    else:
        mean_runs = [None for _ in futures]
    return _report(scenario, res, plans, perfect, mean_plan, mean_runs)


def regret(scenario: Scenario, best: float | None, got: float | None) -> float | None:
    """Objective ``got`` gives up against ``best`` (≥ 0 when ``best`` is the better one): best − got
    when maximising, got − best when minimising; none when either is missing."""
    if best is None or got is None:
        return None
    sign = 1.0 if Objective(scenario.objective).maximise else -1.0
    return round(sign * (best - got), 6)


def _mean(weights: list[float], values: list[float | None], digits: int) -> float | None:
    """E[value] = Σ p_f × value_f over the futures; none when a future has no value."""
    if None in values:
        return None
    return round(sum(w * float(v) for w, v in zip(weights, values, strict=True)), digits)


def expected(scenario: Scenario, report: StochasticReport) -> StochasticReport:
    """The report's expected figures: E (the two-stage plan), E[TCO], WS (perfect information),
    EVPI = regret(WS, E), EEV (the mean-demand plan's first phase in each future), VSS = regret(E, EEV)."""
    p = [o.probability for o in report.futures]
    e = _mean(p, [o.objective_value for o in report.futures], 6)
    ws = _mean(p, [o.perfect_objective for o in report.futures], 6)
    eev = _mean(p, [o.mean_objective for o in report.futures], 6)
    return report.model_copy(
        update={
            "expected_objective": e,
            "expected_tco_usd": _mean(p, [o.tco_usd for o in report.futures], 2),
            "perfect_expected": ws,
            "evpi": regret(scenario, ws, e),
            "mean_expected": eev,
            "vss": regret(scenario, e, eev),
        }
    )


def _outcome(scenario: Scenario, f, p: Plan, w: Plan, mr: Plan | None) -> FutureOutcome:
    """Future f's figures: its two-stage plan p, the perfect-information plan w (the better of w and
    p: p is a plan of f too, so a w found short in time never makes a negative regret) and the
    mean-demand plan adapted to it, mr."""
    k = p.kpis
    wv = w.objective_value if w.status.has_plan else None
    if (
        wv is not None
        and p.objective_value is not None
        and (regret(scenario, wv, p.objective_value) or 0) < 0
    ):
        wv = p.objective_value
    mv = mr.objective_value if mr is not None and mr.status.has_plan else None
    return FutureOutcome(
        id=f.id,
        probability=f.probability,
        objective_value=p.objective_value,
        tco_usd=k.tco_usd if k else None,
        gpus=k.gpus if k else 0,
        stranded_kw=k.stranded_kw if k else 0.0,
        perfect_objective=wv,
        regret=regret(scenario, wv, p.objective_value),
        mean_objective=mv,
        mean_stranded_kw=mr.kpis.stranded_kw if mv is not None and mr is not None and mr.kpis else None,
        plan=p,
    )


def _report(
    scenario: Scenario,
    res: SolveResult,
    plans: list[Plan],
    perfect: list[Plan],
    mean_plan: Plan,
    mean_runs: list[Plan | None],
) -> Plan:
    """The top-level plan: the most probable future's, with the report of every future."""
    first = scenario.phases[0].id
    outcomes = [
        _outcome(scenario, f, p, w, mr)
        for f, p, w, mr in zip(scenario.futures, plans, perfect, mean_runs, strict=True)
    ]
    beaten = [
        o.id
        for o, w in zip(outcomes, perfect, strict=True)
        if w.status.has_plan and o.perfect_objective != w.objective_value
    ]
    report = expected(
        scenario,
        StochasticReport(
            first_phase=first,
            shown_future=max(scenario.futures, key=lambda f: f.probability).id,
            status=res.status,
            optimality=("solver_claim" if res.claimed else "proven")
            if res.status == Status.optimal
            else None,
            bound=None if res.bound is None else round(res.bound, 6),
            gap=None if res.gap is None else round(res.gap, 6),
            futures=outcomes,
            notes=[
                *res.stages,
                "perfect information: each future planned jointly as if known ("
                + ", ".join(f"{w.status.value}" for w in perfect)
                + ")",
                f"mean demand: planned jointly ({mean_plan.status.value}); its first phase kept and the "
                "later phases re-planned in each future",
                *(
                    [
                        "perfect information of "
                        + ", ".join(beaten)
                        + ": the two-stage plan of that future is better than its own solve found in "
                        "time, and stands for it"
                    ]
                    if beaten
                    else []
                ),
            ],
        ),
    )
    shown = next(o.plan for o in outcomes if o.id == report.shown_future)
    return shown.model_copy(
        update={
            "mode": "stochastic",
            "stochastic": report,
            "notes": [
                f"two-stage plan over {len(outcomes)} futures; shown: future {report.shown_future}",
                *shown.notes,
            ],
        }
    )
