"""The decomposition's one time budget (planner/scale/budget.py) on a virtual clock: the stages' shares
and reserves by hand, and whole decompositions whose building solves are simulated — each returns
its real plan but takes scripted virtual seconds (quick, slow, never answering, on a busy machine)
— asserting the schedule the budget gives, that no job starts or is given time past the deadline,
and that a plan comes back whenever any stage found one. Change a share, a least or the reserve and
these fail."""

from __future__ import annotations

import pytest

from planner.clock import Deadline
from planner.enums import Status
from planner.plan import Plan
from planner.scale import joined, rounds
from planner.scale.budget import STAGES, TAIL_PASSES, Budget
from planner.scale.decompose import plan_decomposed
from planner.scale.pairs import Pairs
from planner.verifier import verify
from tests.test_decompose import POD_JOBS, scenario


class VirtualClock:
    """A clock that moves only when told (a simulated solve takes its seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_stages_take_their_declared_parts_by_hand() -> None:
    """100 s left, 2 lanes: 5 building solves run in 3 waves, 0.6 × 100 ÷ 3 = 20 s each; the master
    0.1 × 100 = 10 s (60 s at most: 1,000 s left give 60); a second solve of 3 late buildings 0.9 ×
    100 ÷ 2 = 45 s, and of 3 with 20 s left 0.9 × 20 ÷ 2 = 9 s, under its least of 10, so it does not
    start; a pair 0.9 × 100 = 90 → 60 s at most; the tail 20 passes of 0.5 s = 10 s, so the
    solves' deadline has 90 s left; a round starts with 25 s of a 100 s limit left, not 24."""
    clock = VirtualClock()
    b = Budget(Deadline(100.0, 0.0, clock), "process", 2, pass_s=0.5)
    assert b.waves(5) == 3
    assert b.seconds("buildings", 5) == pytest.approx(20.0)
    assert b.seconds("master") == pytest.approx(10.0)
    assert Budget(Deadline(1000.0, 0.0, clock)).seconds("master") == 60.0
    assert b.seconds("again", 3) == pytest.approx(45.0)
    assert b.seconds("pair") == 60.0
    assert b.tail_s() == pytest.approx(TAIL_PASSES * 0.5) == pytest.approx(10.0)
    assert b.solves().left() == pytest.approx(90.0)
    clock.now = 80.0
    assert not b.starts("again", 3)  # 0.9 × 20 ÷ 2 = 9 s < 10 s
    assert b.share("again", 3) == pytest.approx(9.0)
    assert b.seconds("again", 3) == STAGES["again"].least_s == 10.0  # a job given it gets its floor
    clock.now = 75.0
    assert b.round_may_start()
    clock.now = 76.0
    assert not b.round_may_start()
    assert b.bounds_may_start()  # 24 s > 3 s
    serial = Budget(Deadline(100.0, 0.0, clock), "serial", 8)
    assert serial.lanes == 1
    assert serial.waves(5) == 5


def _simulated(monkeypatch, clock: VirtualClock, need: dict[str, float], answers: dict[str, bool]):
    """Building solves that return their real plan (the share solved for real) but take ``need``
    virtual seconds each: past the limit they give up at the limit (a plan without racks, status
    time_limit), and a building whose ``answers`` is false never answers in time. Every job is
    recorded as (building, limit s, virtual start)."""
    real = joined.solve_part
    seen: list[tuple[str, float, float]] = []

    def solve(part, text, limit, until=None, waves=1, tie_breaks=True):
        seen.append((part, round(limit, 6), clock.now))
        took = need.get(part, 0.0)
        if took > limit or not answers.get(part, True):
            clock.now += limit
            return {
                "part": part,
                "plan": Plan(scenario_name="late", status=Status.time_limit).model_dump(mode="json"),
            }
        clock.now += took
        return real(part, text, 60.0, None, 1, tie_breaks)

    monkeypatch.setattr(rounds, "solve_part", solve)
    monkeypatch.setattr(joined, "solve_part", solve)
    return seen


def _run(monkeypatch, need, answers=None, limit_s=100.0):
    clock = VirtualClock()
    seen = _simulated(monkeypatch, clock, need, answers or {})
    s = scenario(POD_JOBS)
    d = plan_decomposed(s, deadline=Deadline(limit_s, 0.0, clock))
    return s, d, seen


def _within(seen, limit_s: float) -> None:
    """No job started after the deadline, and none was given time past it."""
    for part, limit, start in seen:
        assert start < limit_s, (part, start)
        assert start + limit <= limit_s + 1e-6, (part, start, limit)


def test_a_slow_building_is_solved_again_in_the_time_the_quick_one_left(monkeypatch) -> None:
    """Two buildings on one lane, 100 s: each first solve gets 0.6 × 100 ÷ 2 = 30 s. B1 answers in
    5 s; B2 needs 50 s, so it stops at its 30 s (t = 35) with no plan; first-fit places its share,
    so it stands on that plan and the again stage gives it 0.9 × (100 − 35) = 58.5 s to beat it, in
    which it answers (t = 85). The joined plan holds the three 512-GPU jobs and verifies."""
    s, d, seen = _run(monkeypatch, {"B1": 5.0, "B2": 50.0})
    assert seen == [("B1", 30.0, 0.0), ("B2", 30.0, 5.0), ("B2", 58.5, 35.0)]
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    _within(seen, 100.0)


def test_a_building_that_never_answers_stands_on_first_fit(monkeypatch) -> None:
    """B2 never answers: its first solve ends at 30 s (t = 35); first-fit places its share, and its
    second solve (58.5 s, to t = 93.5) finds nothing better, so first-fit's plan of the share
    stands: one round, no hand-over, a verified plan of all three jobs; nothing started after or
    was given time beyond the deadline."""
    s, d, seen = _run(monkeypatch, {"B1": 5.0, "B2": 5.0}, {"B2": False})
    assert seen == [("B1", 30.0, 0.0), ("B2", 30.0, 5.0), ("B2", 58.5, 35.0)]
    assert (d.rounds, d.fell_back) == (1, None)
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    _within(seen, 100.0)


def test_on_a_busy_machine_the_second_solve_gets_what_is_left(monkeypatch) -> None:
    """Every solve three times slower (B1 15 s, B2 150 s): B1 at 0 (30 s, done at 15), B2 at 15 (30 s,
    out at 45), B2 again at 45 with 0.9 × 55 = 49.5 s (out at 94.5); first-fit's plan of its share
    stands. The schedule follows the time left, not the limit."""
    s, d, seen = _run(monkeypatch, {"B1": 15.0, "B2": 150.0})
    assert seen == [("B1", 30.0, 0.0), ("B2", 30.0, 15.0), ("B2", 49.5, 45.0)]
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    _within(seen, 100.0)


def test_with_little_time_no_second_solve_starts_and_a_plan_still_comes_back(monkeypatch) -> None:
    """10 s in all, both buildings needing 50 s: each first solve gets 0.6 × 10 ÷ 2 = 3 s (B1 out at
    3, B2 at 6); a second solve would get 0.9 × 4 ÷ 2 = 1.8 s each, under its 10 s least, so none
    starts; first-fit places both shares and that plan comes back, verified."""
    s, d, seen = _run(monkeypatch, {"B1": 50.0, "B2": 50.0}, limit_s=10.0)
    assert seen == [("B1", 3.0, 0.0), ("B2", 3.0, 3.0)]
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    _within(seen, 10.0)


def test_a_whole_model_too_big_for_memory_is_never_built(monkeypatch) -> None:
    """With every count variable weighing a GB, the whole model of the two-building site (its counts
    counted with the proposals) cannot fit: a master without solution hands over to first-fit's
    plan of the whole, not the whole model, which meets the three jobs and verifies; the note says
    how big the model would be."""
    from planner.scale import budget

    monkeypatch.setattr(budget, "WHOLE_GB_PER_COUNT", 1.0)
    monkeypatch.setattr(rounds, "_master", lambda *a, **k: None)
    said: list[str] = []
    s = scenario(POD_JOBS)
    d = plan_decomposed(s, progress=said.append)
    assert d.fell_back.startswith("the master has no solution in round 1")
    assert not any(m.startswith("whole model:") for m in said)
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    assert d.plan.solver == "greedy"
    assert "GB: first-fit's plan of the whole" in d.plan.notes[0]


def test_the_whole_model_is_counted_as_the_model_builds_it() -> None:
    """The count variables the proposals count for the whole model are the model's own: position
    class × rack type × cluster group where the type fits."""
    from planner.input.variants import scenario_data
    from planner.model import build
    from planner.scale.proposals import groups_of, proposals

    s = scenario(
        [*POD_JOBS, {"id": "big", "demand": "max", "rack_types": ["grand-teton-h100"], "max_hops": 5}]
    )
    size: dict = {}
    proposals(s, groups_of(s, scenario_data(s)), [b.id for b in s.site.buildings], size)
    assert size["counts"] == len(build(s).n)


def test_when_nothing_else_answers_first_fit_of_the_whole_stands(monkeypatch) -> None:
    """Neither building ever answers, first-fit cannot place a share around kept plans (there are
    none), and the whole model finds nothing in the time left: the run returns first-fit's plan
    of the whole, made and verified before the first round, never no plan. It holds the three
    512-GPU jobs, says why it stands, and no job started after the deadline."""
    monkeypatch.setattr(rounds, "first_fit_repair", lambda *a, **k: None)
    monkeypatch.setattr(rounds, "greedy_racks", lambda *a, **k: [])  # no share placed by first-fit
    monkeypatch.setattr(
        joined, "plan_scenario", lambda s, *a, **k: Plan(scenario_name=s.name, status=Status.time_limit)
    )
    s, d, seen = _run(monkeypatch, {"B1": 5.0, "B2": 5.0}, {"B1": False, "B2": False})
    assert d.plan.status.has_plan
    assert d.plan.solver == "greedy"
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    assert "first-fit's plan of the whole stands" in d.plan.notes[0]
    assert d.stages["first_fit_s"] > 0
    _within(seen, 100.0)


def test_the_first_fit_stage_takes_its_part_of_the_time_left() -> None:
    """100 s left: first-fit of the whole gets 0.25 × 100 = 25 s; with 8 s left, 2 s."""
    clock = VirtualClock()
    b = Budget(Deadline(100.0, 0.0, clock), "process", 2)
    assert b.seconds("first_fit") == pytest.approx(25.0)
    clock.now = 92.0
    assert b.seconds("first_fit") == pytest.approx(2.0)


def test_the_pairs_leave_the_polish_and_the_packing_bound_their_parts() -> None:
    """100 s limit, a pass 0.5 s (tail 10 s), pairs starting at t = 20: the solves end 70 s away;
    the pairs leave the packing bound 0.3 × 80 = 24 s (theirs end 46 s away), and when the polish
    follows 0.5 × 80 = 40 s instead (30 s away); waves that gained go on into the polish's part,
    up to the packing bound's (46 s away)."""
    clock = VirtualClock()
    b = Budget(Deadline(100.0, 0.0, clock), "process", 2, pass_s=0.5)
    clock.now = 20.0
    assert b.solves().left() == pytest.approx(70.0)
    assert b.pairs_end().left() == pytest.approx(46.0)
    b.polish_follows = True
    assert b.pairs_end().left() == pytest.approx(30.0)
    assert b.pairs_beyond().left() == pytest.approx(46.0)


def test_pair_waves_that_gained_go_on_into_the_polishs_part() -> None:
    """Pairs working to t = 36 (soft), allowed to t = 60 once a wave has gained; each wave two pairs
    on one lane (a pair gets 0.9 × left ÷ 2) taking 8 virtual s. The first wave gains, no other:
    they start at 20 (soft: 0.9 × 16 ÷ 2 = 7.2 s), 28 (soft 3.6 s is under a pair's least of 5 s;
    the late end gives 0.9 × 32 ÷ 2 = 14.4 s), 36 (10.8 s) and 44 (7.2 s), not at 52 (3.6 s).
    Where no wave gains the late end is never used: one wave, at 20."""
    assert _pair_waves([16.0]) == [20.0, 28.0, 36.0, 44.0]
    assert _pair_waves([]) == [20.0]


def _pair_waves(gains: list[float]) -> list[float]:
    """Where pair waves start: from t = 20, soft end 36, late end 60, 8 s each, the waves' gains."""
    clock = VirtualClock()
    clock.now = 20.0
    starts: list[float] = []

    class Stub(Pairs):
        def __init__(self) -> None:
            self.bdata = {}

        def pick(self, final, lanes):
            return [("B1", "B2"), ("B3", "B4")]

        def wave(self, final, picked, each, run):
            starts.append(clock.now)
            clock.now += 8.0
            return gains[len(starts) - 1] if len(starts) <= len(gains) else 0.0

    Stub().improve(
        {},
        Deadline(36.0, 0.0, clock),
        {"executor": "process", "workers": 1},
        lambda _m: None,
        beyond=Deadline(60.0, 0.0, clock),
    )
    return starts


@pytest.mark.parametrize("polish", [True, False])
def test_with_the_polish_no_lp_of_the_whole_is_solved_beside_it(monkeypatch, polish) -> None:
    """No bound ever proves the joined plan's gap (the gap test made to fail): with the polish, the
    whole model from the joined plan runs and states its own bound, and the LP relaxation of the
    whole (which the polish solves again at its root) is never solved; without it, the LP is
    solved once. Either way the three 512-GPU jobs come back, verified."""
    lps: list[float] = []

    def lp(s, limit_s):  # the merged relaxation's LP is solved too: only the whole's is counted
        if not s.clusters[0].id.startswith("merged-"):
            lps.append(limit_s)
        return None

    monkeypatch.setattr(joined, "within_gap", lambda gap, rel: False)
    monkeypatch.setattr(joined, "lp_bound", lp)
    s = scenario(POD_JOBS)
    d = plan_decomposed(s, polish=polish)
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    assert ("polish_s" in d.stages, len(lps)) == ((True, 0) if polish else (False, 1))


def test_a_hand_overs_first_fit_stops_placing_in_time_to_be_finished_by_the_deadline() -> None:
    """Finishing a first-fit plan takes FIRST_FIT_FINISH (0.5) of its placing time: at t = 40 s of a
    100 s limit, placing stops at 40 + 60 / 1.5 = 80 s, leaving 20 s = 0.5 × 40 s to finish; past
    the deadline it stops at once."""
    clock = VirtualClock()
    b = Budget(Deadline(100.0, 0.0, clock), "process", 2, pass_s=0.5)
    clock.now = 40.0
    assert b.first_fit_until() == pytest.approx(80.0)
    clock.now = 130.0
    assert b.first_fit_until() == pytest.approx(130.0)


def _packing_asked(monkeypatch, clock: VirtualClock, took: float) -> dict[str, list[tuple[float, float]]]:
    """The packing bound made to be asked (no other bound proves the gap) and to take ``took``
    virtual seconds, the most each building holds 0.1 s before it; each ask recorded as (limit s,
    virtual start) under "packing" and "most"."""
    asked: dict[str, list[tuple[float, float]]] = {"most": [], "packing": []}

    def most(s, deadline):
        asked["most"].append((round(deadline.limit_s, 6), clock.now))
        clock.now += min(0.1, deadline.limit_s)
        return {}

    def packing(s, limit_s, most=None):
        asked["packing"].append((round(limit_s, 6), clock.now))
        clock.now += min(took, limit_s)
        return None

    monkeypatch.setattr(joined, "within_gap", lambda gap, rel: False)
    monkeypatch.setattr(joined, "building_most", most)
    monkeypatch.setattr(joined, "packing_bound", packing)
    return asked


@pytest.mark.parametrize(
    ("limit_s", "answers", "most", "expect"),
    [
        (100.0, {}, (9.0, 10.0), (26.97, 10.1)),  # both answer in 5 s: 0.1 × 90, then 0.3 × 89.9
        (1000.0, {}, (30.0, 10.0), (60.0, 10.1)),  # 0.1 × 990 = 99 s, its most 30; 0.3 × 989.9: 60
        (100.0, {"B2": False}, (1.0, 93.5), (1.92, 93.6)),  # B2 out at 93.5: 0.65 s, its least 1 s
    ],
)
def test_the_packing_bound_takes_its_part_of_the_time_left(
    monkeypatch, limit_s, answers, most, expect
) -> None:
    """Where no bound stated proves the joined plan's gap, the most each building holds gets 0.10
    of the time left, within [1, 30] s, and the packing MILP 0.30 of what is left after it (and
    after the pairs, which have nothing to gain here), within [1, 60] s: two buildings that answer
    in 5 s each leave 90 s of a 100 s limit (9 s, then 26.97 s; of 1,000 s, 30 s and 60 s); with
    B2 never answering (its solves end at 35 s and 93.5 s) 6.5 s are left (1 s, then 1.92 s). Each
    is asked once; the plan of the three jobs comes back verified."""
    clock = VirtualClock()
    asked = _packing_asked(monkeypatch, clock, 1.0)
    seen = _simulated(monkeypatch, clock, {"B1": 5.0, "B2": 5.0}, answers)
    s = scenario(POD_JOBS)
    d = plan_decomposed(s, deadline=Deadline(limit_s, 0.0, clock), polish=False)
    assert asked == {"most": [pytest.approx(most)], "packing": [pytest.approx(expect)]}
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 3 * 512
    _within(seen, limit_s)


def test_with_three_seconds_left_the_packing_bound_does_not_start(monkeypatch) -> None:
    """B1 answers in 5 s, B2 never. Of 60 s: first solves of 0.6 × 60 ÷ 2 = 18 s (B2 out at 23), B2
    again with 0.9 × 37 = 33.3 s (out at 56.3): 3.7 s are left; the most each building holds gets
    its least, 1 s, and takes 0.1 s, and the packing bound starts with 0.3 × 3.6 = 1.08 s. Of 40 s:
    12 s each (B2 out at 17), again 0.9 × 23 = 20.7 s (out at 37.7): 2.3 s are left, under the 3 s
    a bound needs to start; neither is asked, and the joined plan stands on the bounds it has."""
    for limit_s, most, expect in (
        (60.0, [pytest.approx((1.0, 56.3))], [pytest.approx((1.08, 56.4))]),
        (40.0, [], []),
    ):
        clock = VirtualClock()
        asked = _packing_asked(monkeypatch, clock, 1.0)
        seen = _simulated(monkeypatch, clock, {"B1": 5.0, "B2": 5.0}, {"B2": False})
        s = scenario(POD_JOBS)
        d = plan_decomposed(s, deadline=Deadline(limit_s, 0.0, clock), polish=False)
        assert asked == {"most": most, "packing": expect}, (limit_s, asked, seen)
        assert verify(d.plan, s).ok
        assert d.plan.kpis.gpus == 3 * 512
        _within(seen, limit_s)
