"""Two-stage plans (§17): every future's plan is a plan of the scenario in that future, the futures
share the first phase, the top-level plan is the shown future's, and the expected figures (expected
objective and TCO, regret, EVPI, VSS) follow from the futures' figures. The objectives of the
perfect-information and mean-demand plans come from other solves the report does not carry: the
verifier checks the arithmetic built on them, not the solves themselves."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from planner.enums import Objective, Status
from planner.schema import Plan, Scenario
from planner.schema.plan import StochasticReport
from planner.verifier.claims import GAP_TOL, Claimed, gap_claims
from planner.verifier.report import VerifyReport, Violation, close, fmt


def loss(scenario: Scenario, best: float | None, got: float | None) -> float | None:
    """What ``got`` loses against ``best`` in objective units (positive: worse; a minimised
    objective counts the other way round); none when either is missing."""
    if best is None or got is None:
        return None
    return round(best - got if Objective(scenario.objective).maximise else got - best, 6)


def _expect(pairs: list[tuple[float, float | None]], digits: int) -> float | None:
    """Σ probability × value, none when any value is missing."""
    if any(v is None for _, v in pairs):
        return None
    return round(sum(p * v for p, v in pairs if v is not None), digits)


def expected_figures(scenario: Scenario, report: StochasticReport) -> StochasticReport:
    """The report with its expected figures recomputed from its futures:
    E = Σ p × objective, E[TCO], WS = Σ p × perfect, EVPI = loss(WS, E), EEV = Σ p × mean-demand
    plan's objective, VSS = loss(E, EEV)."""
    fs = report.futures
    expected = _expect([(o.probability, o.objective_value) for o in fs], 6)
    perfect = _expect([(o.probability, o.perfect_objective) for o in fs], 6)
    mean = _expect([(o.probability, o.mean_objective) for o in fs], 6)
    return report.model_copy(
        update={
            "expected_objective": expected,
            "expected_tco_usd": _expect([(o.probability, o.tco_usd) for o in fs], 2),
            "perfect_expected": perfect,
            "evpi": loss(scenario, perfect, expected),
            "mean_expected": mean,
            "vss": loss(scenario, expected, mean),
        }
    )


def _first(plan: Plan, first: str) -> tuple[Counter, Counter, Counter]:
    """What the first phase places: GPU racks, retrofits bought, and network switches bought then."""
    racks = Counter(
        (r.row, r.position, r.rack_type, r.cluster, r.spare)
        for r in plan.racks
        if not r.existing and r.phase == first
    )
    buys = Counter(b.id for b in plan.retrofits if b.phase == first)
    switches = Counter(
        (nr.row, nr.position, nr.cluster, sc.tier, sc.model)
        for nr in plan.network_racks
        for sc in nr.switches
        for _ in range(sc.count)
        if sc.phase == first
    )
    return racks, buys, switches


def future_checks(
    plan: Plan, scenario: Scenario, verify: Callable[[Plan, Scenario], VerifyReport]
) -> VerifyReport:
    """Verify a two-stage plan (module docstring); ``verify`` checks one plan against one scenario."""
    rep = VerifyReport()
    st = plan.stochastic
    assert st is not None
    shown = _shown_future(plan, scenario, rep)
    if shown is None:
        return rep
    base = _first(shown.plan, st.first_phase)
    for o in st.futures:
        sub = verify(o.plan, scenario.in_future(o.id))
        rep.violations += [
            Violation(f"future {o.id}: {v.element}", v.check, v.message) for v in sub.violations
        ]
        if o is shown:  # the plan's own usage: the shown future's, verified once
            rep.usage, rep.phase_usage = sub.usage, sub.phase_usage
        if _first(o.plan, st.first_phase) != base:
            rep.add(
                f"future {o.id}",
                "first phase",
                f"its first phase ('{st.first_phase}') differs from future '{shown.id}''s: "
                "a two-stage plan decides the first phase once for every future",
            )
        _outcome_checks(o, scenario, rep)
    again = expected_figures(scenario, st)
    _two_stage_claims(plan, again, scenario, rep)
    for name in (
        "expected_objective",
        "expected_tco_usd",
        "perfect_expected",
        "evpi",
        "mean_expected",
        "vss",
    ):
        a, b = getattr(st, name), getattr(again, name)
        if not close(a, b, rel=1e-6, abs_=1e-3):
            what = f"claims {a if a is None else fmt(a)}, the futures give {b if b is None else fmt(b)}"
            rep.add(f"stochastic.{name}", name, what)
    return rep


def _two_stage_claims(plan: Plan, again: StochasticReport, scenario: Scenario, rep: VerifyReport) -> None:
    """The two-stage status, bound and gap against the expected objective recomputed from the
    futures, and the signs every true figure has: no future beats the plan that knew it (regret
    ≥ 0), EVPI ≥ 0, and no plan of the two-stage model (the mean-demand plan adapted to every future
    is one) beats its bound, nor beats an optimal plan (VSS ≥ 0), each up to the gaps stated."""
    st = plan.stochastic
    assert st is not None
    rel_gap = scenario.solver.rel_gap
    if plan.solver_settings is not None and plan.solver_settings.rel_gap > rel_gap:
        rel_gap = plan.solver_settings.rel_gap  # its run hash is checked with the top-level plan
    e = again.expected_objective
    sign = 1.0 if Objective(scenario.objective).maximise else -1.0
    if e is not None:
        claimed = Claimed(st.status, st.optimality, st.bound, st.gap)
        gap_claims(claimed, e, sign > 0, rel_gap, rep, "stochastic.", "futures")
    if st.status != Status.optimal and st.optimality is not None:
        what = f"status {st.status.value} cannot be '{st.optimality}' optimal"
        rep.add("stochastic.optimality", "claim", what)
    _sign_claims(st, again, e, sign, rel_gap, rep)


def _sign_claims(
    st: StochasticReport, again: StochasticReport, e: float | None, sign: float, rel_gap: float, rep
) -> None:
    """Regret, EVPI and VSS not below 0 beyond the gaps; the mean-demand plan not beyond the bound."""
    for o in st.futures:
        if o.regret is not None and o.regret < -_slack(rel_gap, o.perfect_objective):
            what = (
                f"regret {fmt(o.regret)} is negative: the future's plan beats the plan that knew the "
                f"future ({fmt(o.perfect_objective)}), so that figure is no perfect-information optimum"
            )
            rep.add(f"future {o.id}", "regret", what)
    if again.evpi is not None and again.evpi < -_slack(rel_gap, e):
        rep.add("stochastic.evpi", "sign", f"EVPI {fmt(again.evpi)} is negative: knowing the future lost")
    if again.vss is not None and e is not None:
        gap = max(st.gap or 0.0, rel_gap) if st.bound is not None else rel_gap
        if again.vss < -_slack(gap, e):
            what = (
                f"VSS {fmt(again.vss)} is negative beyond the gap {gap:g}: the mean-demand plan adapted to "
                "each future is a plan of the two-stage model and beats it"
            )
            rep.add("stochastic.vss", "sign", what)
    if st.bound is not None and again.mean_expected is not None:
        if sign * (again.mean_expected - st.bound) > _slack(0.0, st.bound):
            what = (
                f"the mean-demand plan's expected {fmt(again.mean_expected)} is beyond the bound "
                f"{fmt(st.bound)}: a plan of the model cannot beat its bound"
            )
            rep.add("stochastic.bound", "bound", what)


def _slack(rel: float, ref: float | None) -> float:
    return (rel + GAP_TOL) * max(1.0, abs(ref or 0.0))


def _shown_future(plan: Plan, scenario: Scenario, rep: VerifyReport):
    """The future the plan shows, once its futures and first phase are the scenario's (None: not)."""
    st = plan.stochastic
    assert st is not None
    if not scenario.futures:
        rep.add("stochastic", "futures", "the plan is two-stage but the scenario lists no futures")
        return None
    want = {f.id: f.probability for f in scenario.futures}
    got = {o.id: o.probability for o in st.futures}
    if set(want) != set(got) or any(not close(want[k], got[k]) for k in want):
        rep.add("stochastic", "futures", f"the plan's futures {got} are not the scenario's {want}")
        return None
    if not scenario.phases or st.first_phase != scenario.phases[0].id:
        rep.add(
            "stochastic", "first_phase", f"first_phase '{st.first_phase}' is not the scenario's first phase"
        )
        return None
    shown = next((o for o in st.futures if o.id == st.shown_future), None)
    if shown is None:
        rep.add("stochastic", "shown_future", f"shown_future '{st.shown_future}' is not one of the futures")
        return None
    top = plan.model_copy(update={"stochastic": None, "mode": shown.plan.mode, "notes": shown.plan.notes})
    if top != shown.plan:
        what = f"the plan is not future '{shown.id}''s plan (racks, retrofits and figures)"
        rep.add("stochastic", "shown_future", what)
    return shown


def _outcome_checks(o, scenario: Scenario, rep: VerifyReport) -> None:
    """One future's stated figures are its plan's; its regret is perfect information − plan."""
    if not close(o.objective_value, o.plan.objective_value):
        what = f"claims {o.objective_value}, its plan's is {o.plan.objective_value}"
        rep.add(f"future {o.id}", "objective_value", what)
    k = o.plan.kpis
    if k is not None and (
        not close(o.tco_usd, k.tco_usd) or o.gpus != k.gpus or not close(o.stranded_kw, k.stranded_kw)
    ):
        rep.add(
            f"future {o.id}",
            "figures",
            f"tco/gpus/stranded {o.tco_usd}/{o.gpus}/{o.stranded_kw} are not its plan's "
            f"{k.tco_usd}/{k.gpus}/{k.stranded_kw}",
        )
    r = loss(scenario, o.perfect_objective, o.objective_value)
    if not close(o.regret, r):
        rep.add(f"future {o.id}", "regret", f"claims {o.regret}, perfect − plan gives {r}")
