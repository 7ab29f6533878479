"""Two-stage planning over demand futures (§17): a hand-solved instance (HiGHS and CBC) whose shared
first phase differs from both single-future plans, its EVPI and VSS by hand; the verifier on every
future; lead-time orders as first-stage decisions; bad input; the shipped scenario."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.enums import SolverName
from planner.errors import InputError
from planner.plan import load_plan, save_plan
from planner.plan.pipeline import plan_scenario
from planner.plan.stochastic import mean_future, plan_stochastic
from planner.schema import Scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS
from tests.test_refresh import MONEY
from tests.test_writes import cli

S8 = {
    "id": "s8",
    "servers_per_rack": 1,
    "gpus_per_server": 8,
    "gpu_power_w": 500,
    "weight_kg": 300,
    "capex_usd": 100_000,
}
"""A small rack: 8 GPUs, available now."""
D32 = {
    "id": "d32",
    "servers_per_rack": 4,
    "gpus_per_server": 8,
    "gpu_power_w": 500,
    "weight_kg": 600,
    "capex_usd": 400_000,
}
"""A dense rack: 32 GPUs in one position, delivered from p2 on."""
P3 = [{"id": f"p{i}", "start": date(2026, 4 * i - 3, 1)} for i in (1, 2, 3)]
FAST = {"id": "fast", "probability": 0.25, "gpus_by_phase": {"c": {"p1": 96, "p2": 288, "p3": 384}}}
SLOW = {"id": "slow", "probability": 0.75, "gpus_by_phase": {"c": {"p1": 96, "p2": 192, "p3": 192}}}


def hedge(futures=(FAST, SLOW), solver: str = "highs", **extra) -> Scenario:
    """One row of 12 positions; one cluster (as many GPUs as fit, up to the future's figure) of 8-GPU
    racks now and 32-GPU racks from p2 (none delivered in p1), power and cooling to spare."""
    s = tiny_scenario(
        [{"id": "R", "positions": 12, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c", "demand": "max", "rack_types": ["s8", "d32"], "gpus_by_phase": {"p1": 96}}],
        rack_types=[S8, D32],
        phases=P3,
        supply=[{"rack_type": "d32", "phase": "p2", "racks": 100}],
        futures=list(futures),
        **extra,
    )
    return s.model_copy(
        update={"solver": s.solver.model_copy(update={"name": SolverName(solver), "rel_gap": 0.0})}
    )


def first_small(plan) -> int:
    return sum(1 for r in plan.racks if r.phase == "p1" and r.rack_type == "s8")


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_shared_first_phase_hedges_between_the_futures(solver: str) -> None:
    """By hand, with x small racks placed in p1 (objective: GPU-phases): a later phase t with cap
    c_t gives min(c_t, 8x + 32(12 − x)), so it loses 24 per x past its kink k = (384 − c)/24.
    fast: kinks 4 (p2, 288) and 0 (p3, 384): V = 8x − 24x − 24·max(0, x − 4) + 672, best x = 0 (672);
    slow: kink 8 in p2 and p3 (192): V = 8x + 384 − 48·max(0, x − 8), best x = 8 (448).
    E = ¼ V_fast + ¾ V_slow has slope 8 − 4 = +2 on [0, 4), 8 − 10 = −4 on [4, 8): x = 4,
    E = ¼ × 608 + ¾ × 416 = 464 (regrets 672 − 608 = 64 and 448 − 416 = 32).
    EVPI = ¼ × 672 + ¾ × 448 − 464 = 504 − 464 = 40.
    Mean demand (p2: 216, p3: 240): the best whole-rack plan places x = 6 (48 + 208 + 240 = 496);
    kept in fast: 48 + 240 + 240 = 528; in slow: 48 + 192 + 192 = 432; EEV = 132 + 324 = 456,
    VSS = 464 − 456 = 8."""
    s = hedge(solver=solver)
    from tests.test_optimize import available_solvers

    if solver not in available_solvers():
        pytest.skip(f"{solver} not installed")
    plan = plan_stochastic(s)
    st = plan.stochastic
    assert st is not None
    assert st.status == "optimal"
    assert st.optimality in ("proven", "solver_claim")  # CBC may state no bound: then its claim, said so
    assert [first_small(o.plan) for o in st.futures] == [4, 4]
    assert first_small(plan_scenario(s.in_future("fast"))) == 0
    assert first_small(plan_scenario(s.in_future("slow"))) == 8
    assert first_small(plan_scenario(mean_future(s))) == 6
    assert (st.expected_objective, st.perfect_expected, st.evpi, st.mean_expected, st.vss) == (
        464,
        504,
        40,
        456,
        8,
    )
    assert [
        (o.id, o.objective_value, o.perfect_objective, o.regret, o.mean_objective) for o in st.futures
    ] == [("fast", 608, 672, 64, 528), ("slow", 416, 448, 32, 432)]
    assert st.shown_future == "slow"
    assert plan.racks == st.futures[1].plan.racks
    rep = verify(plan, s)
    assert rep.ok, rep.violations


def test_the_plan_file_round_trips_and_verify_recomputes_it(tmp_path: Path) -> None:
    s = hedge()
    plan = plan_stochastic(s)
    path = tmp_path / "plan.yaml"
    save_plan(plan, path)
    again = load_plan(path)
    assert again == plan
    assert verify(again, s).ok


def test_verify_rejects_futures_that_do_not_share_the_first_phase() -> None:
    s = hedge()
    plan = plan_stochastic(s)
    st = plan.stochastic
    fast = st.futures[0]
    moved = [r for r in fast.plan.racks if not (r.phase == "p1" and r is fast.plan.racks[0])]
    dropped = fast.plan.racks[0]
    assert dropped.phase == "p1"
    bad = st.model_copy(
        update={
            "futures": [
                fast.model_copy(update={"plan": fast.plan.model_copy(update={"racks": moved})}),
                st.futures[1],
            ]
        }
    )
    lines = [str(v) for v in verify(plan.model_copy(update={"stochastic": bad}), s).violations]
    assert any(
        "future fast: its first phase ('p1') differs from future 'slow''s" in line for line in lines
    ), lines


def test_verify_recomputes_the_expected_figures() -> None:
    s = hedge()
    plan = plan_stochastic(s)
    bad = plan.stochastic.model_copy(update={"expected_objective": 465.0, "vss": 9.0})
    lines = [str(v) for v in verify(plan.model_copy(update={"stochastic": bad}), s).violations]
    assert any("stochastic.expected_objective: claims 465, the futures give 464" in line for line in lines), (
        lines
    )
    assert any("stochastic.vss: claims 9, the futures give 8" in line for line in lines), lines


@pytest.fixture(scope="module")
def hedged():
    s = hedge()
    return s, plan_stochastic(s)


def _futures(st, **changes):
    """The report's futures with (id → {field: value}) changes."""
    return [o.model_copy(update=changes.get(o.id, {})) for o in st.futures]


EVIDENCE = [
    (  # E = 464 stated optimal against a bound 7 % above it
        {"bound": 496.48, "gap": 0.07},
        {},
        "stochastic.status: optimal needs a gap within 0; the gap is 0.07",
    ),
    (  # fast's perfect-information figure below what its two-stage plan got
        {"perfect_expected": 486.0, "evpi": 22.0},
        {"fast": {"perfect_objective": 600.0, "regret": -8.0}},
        "future fast: regret -8 is negative: the future's plan beats the plan that knew",
    ),
    (
        {"perfect_expected": 450.0, "evpi": -14.0},
        {
            "fast": {"perfect_objective": 600.0, "regret": -8.0},
            "slow": {"perfect_objective": 400.0, "regret": -16.0},
        },
        "stochastic.evpi: EVPI -14 is negative",
    ),
    (  # the mean-demand plan scored above the two-stage optimum (as hindsight orders made it)
        {"mean_expected": 496.0, "vss": -32.0},
        {"fast": {"mean_objective": 640.0}, "slow": {"mean_objective": 448.0}},
        "stochastic.vss: VSS -32 is negative beyond the gap 0",
    ),
    (
        {"mean_expected": 496.0, "vss": -32.0},
        {"fast": {"mean_objective": 640.0}, "slow": {"mean_objective": 448.0}},
        "stochastic.bound: the mean-demand plan's expected 496 is beyond the bound 464",
    ),
]


@pytest.mark.parametrize(("report", "futures", "expected"), EVIDENCE)
def test_two_stage_evidence_that_cannot_be_true_fails_verification(hedged, report, futures, expected) -> None:
    """Each corruption keeps the arithmetic consistent (E, WS, EEV, EVPI and VSS recomputed from the
    futures agree), so only the check named can catch it."""
    s, plan = hedged
    st = plan.stochastic
    assert (st.expected_objective, st.bound, st.status) == (464, 464, "optimal")
    bad = st.model_copy(update={**report, "futures": _futures(st, **futures)})
    lines = [str(v) for v in verify(plan.model_copy(update={"stochastic": bad}), s).violations]
    assert any(line.startswith(expected) for line in lines), lines
    assert not any(".expected_objective" in line or "claims" in line for line in lines), lines


def test_a_lead_time_order_is_decided_in_the_first_phase() -> None:
    """32-GPU racks with a lead time of one phase (ordered in p1, standing from p2), one row of 10, two
    phases; future A wants 64 GPUs in p2, B 256 (p = ½ each). The racks standing in p2 were ordered in
    p1, before the future is known: one count y for both, y ≤ 2 (A's cap), E = ½ × 64 + ½ × 64 = 64.
    Without the lead time each future places its own: E = ½ × 64 + ½ × 256 = 160."""
    futures = [
        {"id": "a", "probability": 0.5, "gpus_by_phase": {"c": {"p2": 64}}},
        {"id": "b", "probability": 0.5, "gpus_by_phase": {"c": {"p2": 256}}},
    ]
    base = tiny_scenario(
        [{"id": "R", "positions": 10, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c", "demand": "max", "rack_types": ["d32"], "gpus_by_phase": {"p2": 64}}],
        rack_types=[D32],
        phases=P3[:2],
        futures=futures,
    )
    lead = base.model_copy(update={"lead_phases": {"d32": 1}})
    assert plan_stochastic(lead).stochastic.expected_objective == 64
    assert plan_stochastic(base).stochastic.expected_objective == 160


def test_the_mean_demand_plan_keeps_its_lead_time_orders_so_vss_is_not_negative() -> None:
    """Min capex, equipment only (racks + $4,200 fabric per GPU): d32 $534,400 for 32 GPUs with a
    one-phase lead, s8 $183,600 for 8 GPUs now; 20 positions; at least 64 (a) or 256 (b) GPUs in p2.
    y d32 ordered in p1 serve both futures: a costs 534.4k·y (y ≥ 2), b 534.4k·y + 183.6k·(32 − 4y)
    (y ≥ 4 for 20 positions), so E = ½(334.4k·y + 5,875.2k), least at y = 4: 3,606,400.
    Perfect information: a 2 d32 = 1,068,800, b 8 d32 = 4,275,200; WS 2,672,000, EVPI 934,400.
    The mean-demand plan (160 GPUs) orders 5 d32: a 2,672,000, b 5 d32 + 12 s8 = 4,875,200;
    EEV 3,773,600, VSS 167,200 (re-ordering in hindsight would give EEV = WS and VSS −934,400)."""
    s8 = {**S8, "capex_usd": 150_000}
    futures = [
        {"id": "a", "probability": 0.5, "gpus_by_phase": {"c": {"p2": 64}}},
        {"id": "b", "probability": 0.5, "gpus_by_phase": {"c": {"p2": 256}}},
    ]
    s = tiny_scenario(
        [{"id": "R", "positions": 20, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c", "demand": "at_least", "rack_types": ["d32", "s8"], "gpus_by_phase": {"p2": 64}}],
        rack_types=[D32, s8],
        phases=P3[:2],
        futures=futures,
        objective="min_capex",
        costs=MONEY,
        lead_phases={"d32": 1},
    )
    s = s.model_copy(update={"solver": s.solver.model_copy(update={"rel_gap": 0.0})})
    plan = plan_stochastic(s)
    st = plan.stochastic
    assert (st.expected_objective, st.perfect_expected, st.evpi) == (3_606_400, 2_672_000, 934_400)
    assert [o.mean_objective for o in st.futures] == [2_672_000, 4_875_200]
    assert (st.mean_expected, st.vss) == (3_773_600, 167_200)
    assert verify(plan, s).ok


@pytest.mark.parametrize(
    ("futures", "expected"),
    [
        ([{**FAST, "probability": 0.2}, SLOW], "futures: the probabilities sum to 0.95; they must sum to 1"),
        (
            [FAST, {**SLOW, "gpus_by_phase": {"k": {"p2": 8}}}],
            "futures[1].gpus_by_phase.k: unknown cluster 'k'",
        ),
        (
            [FAST, {**SLOW, "gpus_by_phase": {"c": {"p9": 8}}}],
            "futures[1].gpus_by_phase.c.p9: unknown phase 'p9'",
        ),
        ([FAST, {**SLOW, "id": "fast"}], "futures[1].id: duplicate future ID 'fast'"),
        (
            [FAST, {**SLOW, "gpus_by_phase": {"c": {"p1": 88, "p2": 192}}}],
            "futures: cluster 'c' wants different GPUs in the first phase 'p1' across futures (fast: 96, "
            "slow: 88)",
        ),
    ],
)
def test_bad_futures_name_the_field(futures, expected) -> None:
    with pytest.raises(InputError) as e:
        hedge(futures)
    assert any(line.startswith(expected) for line in e.value.lines()), e.value.lines()


def test_futures_need_phases() -> None:
    with pytest.raises(InputError) as e:
        tiny_scenario(
            [{"id": "R", "positions": 4, "feeds": ["F"]}],
            [{"id": "F", "capacity_kw": 10_000}],
            [{"id": "c", "demand": "max", "rack_types": ["s8"]}],
            rack_types=[S8],
            futures=[{"id": "a", "probability": 1.0}],
        )
    assert any(line.startswith("futures: futures need at least two phases") for line in e.value.lines()), (
        e.value.lines()
    )


def test_the_cli_refuses_stochastic_without_futures() -> None:
    r = cli("plan", "datasets/small-hall.yaml", "--mode", "stochastic")
    assert r.returncode == 2, r.stderr
    assert "--mode stochastic: the scenario lists no futures (give futures: with probabilities)" in r.stderr


def test_the_shipped_futures_scenario(tmp_path: Path) -> None:
    """datasets/fleet-futures.yaml through the CLI: optimal (gap 0); the two-stage plan keeps the
    liquid rows free in h1 in every future, and the mean-demand plan, which fills some of them with
    H100 racks, strands more power in the fast future and earns less in expectation (VSS > 0)."""
    out = tmp_path / "plan.yaml"
    r = cli("plan", "datasets/fleet-futures.yaml", "--mode", "stochastic", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "VSS" in r.stdout
    assert "future fast (p=0.2)" in r.stdout
    v = cli("verify", str(out), "datasets/fleet-futures.yaml")
    assert v.returncode == 0, v.stdout
    assert "two-stage: 3 futures' plans verified, first phase h1 shared" in v.stdout
    st = load_plan(out).stochastic
    assert st.status == "optimal"
    assert st.gap == 0
    assert st.vss > 0
    assert st.evpi >= st.vss
    for o in st.futures:
        assert not [x for x in o.plan.racks if x.phase == "h1" and x.row.startswith("B1-L")]
    fast = next(o for o in st.futures if o.id == "fast")
    assert fast.mean_stranded_kw > fast.stranded_kw + 500


def test_the_phases_page_shows_one_row_per_future() -> None:
    """The hand-solved hedge on the dashboard: the expected figures in words, a row per future with
    the figures derived by hand above, and each future's plan on the floor plan."""
    from tests.test_app import solved_on

    at = solved_on("ui/phases_page.py", hedge(), "solve_stochastic")
    assert not at.exception
    assert "Futures (two-stage plan)" in [h.value for h in at.subheader]
    text = " ".join(m.value for m in at.markdown)
    assert "Expected objective **464.0**" in text
    assert "**40.0** (EVPI)" in text
    assert "**8.0** more (VSS)" in text
    table = next(d.value for d in at.dataframe if "regret" in d.value.columns)
    assert table[["future", "GPUs", "objective", "regret"]].values.tolist() == [
        ["fast", "288", "608", "64"],
        ["slow", "192", "416", "32"],
    ]
    future = next(r for r in at.radio if r.key and r.key.startswith("phases_future_"))
    assert future.value == "slow"
    future.set_value("fast").run()
    assert not at.exception
    assert any(
        "Future **fast**: the first phase (p1) is the same in every future" in c.value for c in at.caption
    )


def test_a_sweep_varies_the_probabilities(tmp_path: Path) -> None:
    """The hand-solved hedge with the chance of fast growth at ¼ and ½ (zip: both probabilities
    together). At ¼: E = 464, VSS = 8 (above). At ½ E's slope on [0, 4) is ½(−16) + ½(8) < 0, so x = 0:
    E = ½ × 672 + ½ × 384 = 528, WS = ½ × 672 + ½ × 448 = 560, EVPI = 32; the mean demand (p2: 240,
    p3: 288) kinks at 6 and 4: its best whole-rack plan is x = 4 (32 + 224 + 288 = 544; x = 1, 3 and 5
    give 536, x = 0, 2 and 6 give 528), kept in fast 608, in slow 416:
    EEV = 512, VSS = 16."""
    from planner.batch.sweep import load_sweep, run_batch
    from planner.input.variants import scenario_yaml

    (tmp_path / "s.yaml").write_text(scenario_yaml(hedge()))
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "odds.yaml").write_text(
        "name: odds\nbase: ../s.yaml\nzip:\n  futures[0].probability: [0.25, 0.5]\n"
        "  futures[1].probability: [0.75, 0.5]\n"
    )
    rows = run_batch(load_sweep(tmp_path / "sweeps" / "odds.yaml", tmp_path), tmp_path / "out")
    got = [[r["status"], r["expected_objective"], r["evpi"], r["vss"]] for r in rows]
    assert got == [["optimal", 464.0, 40.0, 8.0], ["optimal", 528.0, 32.0, 16.0]]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    positions=st.integers(6, 12),
    p_fast=st.sampled_from([0.1, 0.25, 0.5, 0.75, 0.9]),
    fast=st.tuples(st.integers(4, 12), st.integers(0, 6)),
    slow=st.tuples(st.integers(0, 6), st.integers(0, 4)),
)
def test_two_stage_figures_keep_their_order_for_any_futures(
    positions: int, p_fast: float, fast: tuple, slow: tuple
) -> None:
    """For any two futures (caps in 32-GPU steps, growing from p1's) the figures keep the order the theory
    gives, whatever the plans: regrets and EVPI ≥ 0 (knowing the future never hurts), VSS ≥ 0 (the
    mean-demand plan's first phase with its later phases re-planned is one of the two-stage plans
    the model chose among), every future's plan verifies and they share the first phase."""
    f2, f3 = 32 * fast[0], 32 * (fast[0] + fast[1])
    s2, s3 = 96 + 32 * slow[0], 96 + 32 * (slow[0] + slow[1])  # never below p1's 96: racks stay
    futures = [
        {"id": "fast", "probability": p_fast, "gpus_by_phase": {"c": {"p1": 96, "p2": f2, "p3": f3}}},
        {
            "id": "slow",
            "probability": round(1 - p_fast, 6),
            "gpus_by_phase": {"c": {"p1": 96, "p2": s2, "p3": s3}},
        },
    ]
    s = hedge(futures)
    s = s.model_copy(
        update={
            "site": s.site.model_copy(
                update={
                    "buildings": [
                        b.model_copy(
                            update={
                                "halls": [
                                    h.model_copy(
                                        update={
                                            "rows": [
                                                r.model_copy(update={"positions": positions})
                                                if r.id == "R"
                                                else r
                                                for r in h.rows
                                            ]
                                        }
                                    )
                                    for h in b.halls
                                ]
                            }
                        )
                        for b in s.site.buildings
                    ]
                }
            )
        }
    )
    plan = plan_stochastic(s)
    st_ = plan.stochastic
    assert st_.status == "optimal"
    tol = 1e-6
    assert all(o.regret >= -tol for o in st_.futures)
    assert st_.evpi >= -tol
    assert st_.vss is not None
    assert st_.vss >= -tol
    assert verify(plan, s).ok


def test_a_mean_demand_plan_that_cannot_serve_a_future_has_no_vss() -> None:
    """p1 wants up to 96 GPUs; fast (p = 0.1) up to 128 from p2, slow up to 0 from p2: racks stay, so
    any p1 rack breaks slow, and the two-stage plan places none in p1: E = 0.1 × (128 + 128) = 25.6.
    The mean demand (p2, p3: 12.8 → 13 GPUs) places one 8-GPU rack in p1, which slow cannot undo:
    that plan fails slow (no objective there, no VSS); in fast it reaches 8 + 128 + 128 = 264."""
    futures = [
        {"id": "fast", "probability": 0.1, "gpus_by_phase": {"c": {"p1": 96, "p2": 128, "p3": 128}}},
        {"id": "slow", "probability": 0.9, "gpus_by_phase": {"c": {"p1": 96, "p2": 0, "p3": 0}}},
    ]
    s = hedge(futures)
    st_ = plan_stochastic(s).stochastic
    assert st_.expected_objective == 25.6
    assert [(o.id, o.mean_objective) for o in st_.futures] == [("fast", 264), ("slow", None)]
    assert (st_.mean_expected, st_.vss) == (None, None)
