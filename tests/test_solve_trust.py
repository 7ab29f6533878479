"""A solver's word is a claim: the planner recomputes the objective and the gap, re-solves
without the start when they do not check out, drops vacuous bounds, falls back on first-fit
when the solver finds nothing, and never changes the built model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planner.enums import Status
from planner.input.loader import load_scenario
from planner.model import build
from planner.plan.pipeline import plan_scenario
from planner.solving.backends import (
    REGISTRY,
    Backend,
    BackendResult,
    Capabilities,
    HighsBackend,
    SolveRequest,
    available,
    from_name,
)
from planner.solving.core import solve
from planner.verifier import verify

DATA = Path(__file__).resolve().parent / "data"
DATASETS = Path(__file__).resolve().parent.parent / "datasets"
WARMSTART = DATA / "warmstart-highs" / "warmstart-highs.yaml"


def _with_solver(s, name: str, **settings):
    data = s.model_dump(mode="json")
    data["solver"].update(name=name, **settings)
    return type(s).model_validate(data)


@pytest.fixture
def fake_backend(monkeypatch):
    """Stand a test backend in for HiGHS for the duration of one test."""

    def add(cls):
        monkeypatch.setitem(REGISTRY, "highs", cls)
        return cls

    return add


def test_a_solver_that_says_optimal_and_states_no_bound_gives_no_bound() -> None:
    """Judged by hand: a result claiming optimality with no bound is optimal on the solver's word,
    with no bound and no gap; the same claim with a bound 5 % away is not (HiGHS' time-limit
    "Optimal")."""
    import pulp

    from planner.solving.backends import BackendResult
    from planner.solving.core import judge

    x = pulp.LpProblem("p", pulp.LpMaximize).add_variable("x", lowBound=0, upBound=10, cat=pulp.LpInteger)
    objective = pulp.LpAffineExpression([(x, 1.0)])
    j = judge(BackendResult({"x": 8.0}, 8.0, None, True), objective, True, 0.001)
    assert (j.status, j.objective, j.bound, j.gap, j.claimed, j.doubt) == (
        Status.optimal,
        8.0,
        None,
        None,
        True,
        "",
    )
    j = judge(BackendResult({"x": 8.0}, 8.0, 8.4, True), objective, True, 0.001)
    assert (j.status, j.bound, j.claimed) == (Status.feasible, 8.4, False)
    assert j.doubt == "the solver claims optimality, but the recomputed gap is 5.000% > 0.100%"


def test_an_edited_solver_claim_with_a_bound_is_rejected(small_hall) -> None:
    plan = plan_scenario(small_hall)
    bad = plan.model_copy(update={"optimality": "solver_claim"})
    assert [str(v) for v in verify(bad, small_hall).violations] == [
        "optimality: optimal on the solver's word is claimed only when it stated no bound; this plan has one"
    ]


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_warmstart_repro_reaches_the_true_optimum(solver: str) -> None:
    """The repro site: first-fit places 11 racks (176 GPUs); the optimum is 15 racks (240 GPUs)."""
    if solver not in available():
        pytest.skip(f"{solver} not installed")
    s = load_scenario(WARMSTART)
    s = _with_solver(s, solver)
    plan = plan_scenario(s)
    assert (plan.status, plan.kpis.gpus, plan.objective_value) == (Status.optimal, 240, 240)
    if solver == "highs":  # HiGHS states its dual bound: optimality proven by the recomputed gap
        assert (plan.bound, plan.gap, plan.optimality) == (240, 0, "proven")
    else:  # CBC's log states no bound after a completed search: optimal is its claim, no bound, no gap
        assert (plan.bound, plan.gap, plan.optimality) == (None, None, "solver_claim")
    assert verify(plan, s).ok


class _LiesWithAStart(Backend):
    """Behaves like HiGHS 1.16.0 with a MIP start: returns the start unchanged, says optimal at 320."""

    name = "liar"
    capabilities = Capabilities(mip_start=True, callbacks=False, threads=True)

    @classmethod
    def _probe(cls) -> bool:
        return True

    def solve(self, req: SolveRequest) -> BackendResult:
        if req.start:
            return BackendResult(dict(req.start), 320.0, 320.0, claims_optimal=True, message="Optimal")
        return HighsBackend().solve(req)


def test_a_solver_that_returns_its_start_as_optimal_is_caught_and_resolved(fake_backend) -> None:
    fake_backend(_LiesWithAStart)
    s = _with_solver(load_scenario(WARMSTART), "highs")
    lines: list[str] = []
    plan = plan_scenario(s, progress=lambda p: lines.append(str(p)))
    assert (plan.status, plan.kpis.gpus, plan.gap) == (Status.optimal, 240, 0)
    note = "the solver reports objective 320 but its values give 176; re-solving without the start"
    assert note in plan.notes
    assert any(note in line for line in lines)


class _FindsNothing(Backend):
    """Stops at its time limit with no solution and only the trivial bound."""

    name = "nothing"
    capabilities = Capabilities(mip_start=True, callbacks=False, threads=True)

    @classmethod
    def _probe(cls) -> bool:
        return True

    def solve(self, req: SolveRequest) -> BackendResult:
        return BackendResult(
            None, None, 1e9, claims_optimal=False, time_limited=True, message="Time limit reached"
        )


def test_no_solution_in_time_returns_the_first_fit_plan_when_it_meets_demands(fake_backend) -> None:
    fake_backend(_FindsNothing)
    s = _with_solver(load_scenario(DATASETS / "dr-hall.yaml"), "highs")
    plan = plan_scenario(s)
    assert plan.status == Status.feasible
    assert plan.kpis.gpus == 432  # first-fit on dr-hall (README: "Greedy vs MILP")
    # no bound from the solver: the capacity bound, by hand: 80 positions × 16 GPUs = 1,280 (power
    # allows 2,500 kW × 0.8 ÷ 1.3375 kW per GPU = 1,495)
    assert (plan.bound, plan.bound_source, plan.gap) == (1280, "capacity", round((1280 - 432) / 432, 6))
    assert (
        "the solver found no plan in time; returning the first-fit plan (432), which meets every demand"
        in plan.notes
    )
    assert verify(plan, s).ok


def test_no_solution_and_first_fit_short_of_demand_is_time_limit(fake_backend) -> None:
    fake_backend(_FindsNothing)
    data = load_scenario(DATASETS / "dr-hall.yaml").model_dump(mode="json")
    data["clusters"][0].update(demand="at_least", gpus=864)  # first-fit reaches 432 only
    s = type(load_scenario(WARMSTART)).model_validate(data)
    plan = plan_scenario(s)
    assert (plan.status, plan.racks) == (Status.time_limit, [])


class _TrivialBound(Backend):
    """Returns a real solution but only the bound of every variable at its upper bound."""

    name = "trivial"
    capabilities = Capabilities(mip_start=False, callbacks=False, threads=True)

    @classmethod
    def _probe(cls) -> bool:
        return True

    def solve(self, req: SolveRequest) -> BackendResult:
        res = HighsBackend().solve(req)
        from planner.solving.core import trivial_bound

        return BackendResult(
            res.values,
            res.reported_objective,
            trivial_bound(req.objective, req.maximise),
            False,
            time_limited=True,
        )


def test_a_vacuous_bound_is_reported_as_absent(fake_backend) -> None:
    fake_backend(_TrivialBound)
    s = _with_solver(load_scenario(DATASETS / "dr-hall.yaml"), "highs")
    plan = plan_scenario(s, tie_breaks=False)
    assert (plan.status, plan.kpis.gpus) == (Status.feasible, 864)
    # the vacuous bound is dropped; the capacity bound (1,280: 80 positions × 16 GPUs) stands instead
    assert (plan.bound, plan.bound_source, plan.gap) == (1280, "capacity", round(416 / 864, 6))


def test_progress_gaps_match_their_own_numbers_and_never_show_a_vacuous_bound() -> None:
    s = load_scenario(DATASETS / "small-hall.yaml")
    lines: list[str] = []
    plan = plan_scenario(s, progress=lambda p: lines.append(str(p)))
    assert plan.status == Status.optimal
    shown = 0
    for line in lines:
        m = re.search(r"incumbent ([\d,.]+)\s+bound ([\d,.]+)\s+gap ([\d.]+)%", line)
        if m:
            inc, bnd, gap = (float(x.replace(",", "")) for x in m.groups())
            assert gap == pytest.approx(abs(bnd - inc) / max(inc, 1) * 100, abs=0.01), (
                line
            )  # numbers shown to 0.1
            assert gap < 100, line
            shown += 1
    assert shown >= 1
    assert sum(1 for line in lines if line.split("] ", 1)[1].startswith("max_gpus: optimal")) == 1


def test_solve_never_changes_the_model_and_solves_again_alike() -> None:
    s = load_scenario(DATASETS / "small-hall.yaml")
    m = build(s)
    before = (m.prob.sense, str(m.prob.objective), [(c.name, str(c)) for c in m.prob.constraints()])
    first = solve(m)
    after = (m.prob.sense, str(m.prob.objective), [(c.name, str(c)) for c in m.prob.constraints()])
    assert before == after
    second = solve(m)
    assert (first.status, first.objective, first.counts) == (second.status, second.objective, second.counts)
    assert any(st.startswith("min cable_usd") for st in first.stages)


def test_unknown_solver_lists_what_is_installed() -> None:
    from planner.errors import InputError

    with pytest.raises(InputError) as err:
        from_name("gurobi")
    assert (
        str(err.value.problems[0])
        == f"solver.name: solver 'gurobi' is unknown (available: {', '.join(available())})"
    )


def test_backends_state_their_capabilities() -> None:
    assert from_name("highs").capabilities == Capabilities(
        mip_start=True, callbacks=True, threads=True, continuous=True
    )
    if "cbc" in available():
        assert from_name("cbc").capabilities == Capabilities(mip_start=True, callbacks=False, threads=True)


def test_the_time_limit_bounds_the_whole_run(fake_backend) -> None:
    """A run that started 4 s ago with a 10 s limit gives the solver at most 6 s, and the tie-break
    stages together at most half of what is then left."""
    import time

    seen: list[float] = []

    class Recording(HighsBackend):
        def solve(self, req: SolveRequest) -> BackendResult:
            seen.append(req.time_limit_s)
            return super().solve(req)

    fake_backend(Recording)
    s = load_scenario(DATASETS / "small-hall.yaml")
    m = build(s)
    solve(m, time_limit_s=10, t0=time.perf_counter() - 4)
    assert len(seen) == 3
    assert seen[0] <= 6.0 + 1e-6
    assert all(x <= (6.0 - 0) / 2 + 1e-6 for x in seen[1:])


def test_a_time_limit_spent_before_the_model_is_built_gives_no_plan_and_says_why() -> None:
    """The limit bounds the whole run: a deadline already passed stops the build (status
    time_limit, no racks, a note naming the stage), and the plan still goes through the verifier."""
    from planner.clock import Deadline

    s = load_scenario(DATASETS / "small-hall.yaml")
    plan = plan_scenario(s, deadline=Deadline(0.0))
    assert (plan.status, plan.racks, plan.bound) == (Status.time_limit, [], None)
    assert plan.notes == ["time limit reached while building the model: no plan (raise --time-limit)"]
    assert verify(plan, s).ok is False  # no plan: the demands are not met, and the verifier says so


def test_the_solver_is_not_started_with_less_time_than_it_needs_to_stop(monkeypatch) -> None:
    """With less than MIN_SOLVE_S left no backend is called (HiGHS could overrun a shorter limit on a
    large model): dr-hall then returns its first-fit plan, 432 GPUs, feasible, and says why."""
    from planner.solving import core as solving

    called = []
    monkeypatch.setattr(
        solving,
        "from_name",
        lambda name: type("B", (), {"name": name, "solve": lambda self, req: called.append(req)})(),
    )
    monkeypatch.setattr(solving, "MIN_SOLVE_S", 1e9)  # whatever is left is too little
    s = load_scenario(DATASETS / "dr-hall.yaml")
    plan = plan_scenario(s)
    assert called == []
    assert (plan.status, plan.kpis.gpus) == (Status.feasible, 432)
    assert (
        "the solver found no plan in time; returning the first-fit plan (432), which meets every demand"
        in plan.notes
    )


def test_a_bound_the_verifier_can_re_derive_is_checked_and_one_made_up_is_caught(fake_backend) -> None:
    """First-fit's 432 GPUs with the capacity bound 1,280 verifies; the same plan claiming the bound
    equals its objective (so 'optimal, proven') is caught: the scenario's capacity gives 1,280."""
    fake_backend(_FindsNothing)
    s = _with_solver(load_scenario(DATASETS / "dr-hall.yaml"), "highs")
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    made_up = plan.model_copy(
        update={"bound": 432.0, "gap": 0.0, "status": Status.optimal, "optimality": "proven"}
    )
    lines = [str(v) for v in verify(made_up, s).violations]
    assert lines == ["bound: plan says 432 from capacity; the scenario gives 1,280"]


def test_the_verifier_re_derives_the_capacity_bound_of_every_shipped_scenario() -> None:
    """Two implementations of one formula (planner.rules.bounds, planner.verifier.bounds_recount)
    agree on every shipped scenario."""
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    seen = 0
    for path in sorted(DATASETS.glob("*.yaml")):
        if path.name.endswith((".site.yaml", ".gen.yaml")) or path.name == "catalog.yaml":
            continue
        s = load_scenario(path)
        assert recount_capacity(s) == capacity_bound(s), path.name
        seen += capacity_bound(s) is not None
    assert seen >= 8
