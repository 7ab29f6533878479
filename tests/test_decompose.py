"""Decomposition by building against the monolithic optimum on a small two-building site."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.decompose import plan_decomposed
from planner.errors import InputError
from planner.generate import BuildingSpec, SiteSpec, generate_site
from planner.loader import scenario_from_data
from planner.pipeline import plan_scenario
from planner.verifier import verify

ROOT = Path(__file__).resolve().parent.parent
SITE = generate_site(SiteSpec(id="two", buildings=[BuildingSpec(count=2, halls=1, pods_per_hall=2, rows_per_pod=4, positions_per_row=10)]))
GT = "grand-teton-h100"


def scenario(clusters: list[dict], **extra):
    return scenario_from_data({"name": "two", "site": SITE.model_dump(mode="json"), "clusters": clusters,
                               "solver": {"time_limit_s": 60, "rel_gap": 0}, **extra})


POD_JOBS = [{"id": f"pod{i}", "demand": "exact", "gpus": 512, "rack_types": [GT], "max_hops": 3} for i in (1, 2, 3)]
SPANNING = {"id": "big", "demand": "max", "rack_types": [GT, "gb200-nvl72"], "max_hops": 7}


def both(s):
    mono = plan_scenario(s)
    d = plan_decomposed(s)
    assert verify(d.plan, s).ok
    return mono, d.plan


def test_without_coupling_decomposition_equals_the_monolithic_optimum() -> None:
    """One building-bound job per building, no site budget: nothing couples the buildings, so the
    buildings' own optima add up to the whole optimum, and the LP bound is met (gap 0)."""
    s = scenario([{"id": f"b{i}", "demand": "max", "rack_types": [GT], "max_hops": 5} for i in (1, 2)])
    mono, dec = both(s)
    assert mono.status == "optimal"
    assert dec.status == "optimal"
    assert dec.kpis.gpus == mono.kpis.gpus == 2496
    assert dec.gap == 0.0
    assert dec.bound == 2496


@pytest.mark.parametrize("budget", [{"it_power_kw": 2500}, {"capex_usd": 100_000_000}])
def test_with_a_binding_site_budget_it_is_within_its_reported_gap(budget: dict) -> None:
    """Three exact one-pod jobs and one site-spanning job under a site budget the buildings share:
    the monolithic optimum lies between the decomposed plan and the LP bound it reports."""
    s = scenario([*POD_JOBS, SPANNING], budgets=budget)
    mono, dec = both(s)
    assert mono.status == "optimal"
    assert dec.status.has_plan
    assert dec.kpis.gpus <= mono.kpis.gpus <= dec.bound + 1e-6
    assert (mono.kpis.gpus - dec.kpis.gpus) / dec.kpis.gpus <= dec.gap + 1e-9
    assert dec.gap == pytest.approx((dec.bound - dec.kpis.gpus) / dec.kpis.gpus)
    assert {r.cluster for r in dec.racks} >= {"pod1", "pod2", "pod3"}
    for pod in ("pod1", "pod2", "pod3"):  # exact jobs placed whole, each in one pod
        racks = [r for r in dec.racks if r.cluster == pod]
        assert len(racks) == 32
        assert len({(r.building, r.hall) for r in racks}) == 1


def test_min_capex_splits_a_spanning_job_across_buildings_within_its_gap() -> None:
    """A 1,024-GPU job allowed anywhere plus one at-least pod job, at least capex."""
    s = scenario([{"id": "span", "demand": "exact", "gpus": 1024, "rack_types": [GT], "max_hops": 7},
                  {"id": "pod1", "demand": "at_least", "gpus": 512, "rack_types": [GT], "max_hops": 3}], objective="min_capex")
    mono, dec = both(s)
    # gap = (plan − bound) / plan and bound ≤ optimum ≤ plan, so plan − optimum ≤ gap × plan
    assert mono.objective_value <= dec.objective_value
    assert dec.objective_value - mono.objective_value <= dec.gap * dec.objective_value + 1e-6
    assert sum(1 for r in dec.racks if r.cluster == "span") * 16 == 1024


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kw=st.integers(min_value=600, max_value=3200))
def test_any_it_power_budget_gives_a_verified_plan_within_its_gap(kw: int) -> None:
    s = scenario([*POD_JOBS[:1], SPANNING], budgets={"it_power_kw": kw})
    mono = plan_scenario(s)
    dec = plan_decomposed(s).plan
    if not mono.status.has_plan:
        assert not dec.status.has_plan
        return
    assert verify(dec, s).ok
    assert dec.kpis.racks_kw <= kw + 1e-6
    assert dec.kpis.gpus <= mono.kpis.gpus <= dec.kpis.gpus * (1 + dec.gap) + 1e-6


def test_process_executor_gives_the_same_plan_as_serial() -> None:
    s = scenario([*POD_JOBS, SPANNING], budgets={"it_power_kw": 2500})
    a = plan_decomposed(s, "serial").plan
    b = plan_decomposed(s, "process", workers=2).plan
    assert a.racks == b.racks
    assert a.gap == b.gap


def test_one_building_is_refused_and_phases_go_to_the_whole_model() -> None:
    one = scenario_from_data({"name": "one", "site": SITE.model_copy(update={"buildings": SITE.buildings[:1]}).model_dump(mode="json"),
                              "clusters": POD_JOBS[:1]})
    with pytest.raises(InputError) as err:
        plan_decomposed(one)
    assert err.value.lines() == ["--decompose building needs at least two buildings (plan a one-building site whole)"]


PHASES = [{"id": "q1", "start": "2027-01-01"}, {"id": "q2", "start": "2027-04-01"}, {"id": "q3", "start": "2027-07-01"}]


def test_a_two_building_three_phase_case_matches_the_single_model() -> None:
    """Phases couple the buildings over time: the whole model plans it, the note says so, and the
    answer is the single model's: 512 GPUs from q1, 1,024 from q2 and 1,536 from q3 of a job
    allowed anywhere (exact figures), 96 racks in all, objective 512·3 + 512·2 + 512·1 = 3,072."""
    s = scenario([{"id": "grow", "demand": "exact", "rack_types": [GT], "max_hops": 7,
                   "gpus_by_phase": {"q1": 512, "q2": 1024, "q3": 1536}}], phases=PHASES)
    mono = plan_scenario(s)
    d = plan_decomposed(s)
    assert verify(d.plan, s).ok
    assert d.fell_back == "phases, retrofits and installed racks couple the buildings over time"
    assert d.plan.notes[0] == "decomposition handed over to the whole model: " + d.fell_back
    assert d.plan.objective_value == mono.objective_value == 3072
    assert len(d.plan.racks) == 96


def test_cli_decompose_writes_a_plan_verify_accepts(tmp_path: Path) -> None:
    (tmp_path / "two.site.yaml").write_text(SITE.model_dump_json())
    (tmp_path / "s.yaml").write_text("name: two\nsite: two.site.yaml\nbudgets: {it_power_kw: 2500}\nclusters:\n"
                                     "  - {id: pod1, demand: exact, gpus: 512, rack_types: [grand-teton-h100], max_hops: 3}\n"
                                     "  - {id: big, demand: max, rack_types: [grand-teton-h100], max_hops: 7}\n")
    cli = [sys.executable, "-m", "planner.cli"]
    r = subprocess.run([*cli, "plan", str(tmp_path / "s.yaml"), "--decompose", "building", "--executor", "serial", "-o", str(tmp_path / "p.yaml")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "decomposition: proposals_s" in r.stderr
    r = subprocess.run([*cli, "verify", str(tmp_path / "p.yaml"), str(tmp_path / "s.yaml")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0
    assert "every constraint holds" in r.stdout
    r = subprocess.run([*cli, "plan", str(tmp_path / "s.yaml"), "--decompose", "building", "--mode", "rolling"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert "--decompose: plans joint and aggregated (drop --mode rolling and --per-position)" in r.stderr


def test_no_lp_bound_unless_the_lp_is_solved_to_optimality(monkeypatch) -> None:
    """A relaxation stopped at its time limit returns a point, not a bound: the plan then has no
    bound and is feasible, whatever its objective."""
    from planner import decompose
    from planner.solvers import BackendResult

    class Stopped:
        def solve(self, req):
            return BackendResult({v.name: 0.0 for v in req.prob.variables()}, 0.0, None, False, time_limited=True)

    monkeypatch.setattr(decompose, "from_name", lambda name: Stopped())
    assert decompose.lp_bound(scenario(POD_JOBS), 1.0) is None
