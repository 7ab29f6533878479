"""The NVLink domain as the failure and repair unit (§19): goodput and $ per useful GPU-hour of a
cluster whose racks are 72-GPU domains, derived by hand.

Every case: racks of type ``d72`` (18 trays × 4 GPUs, one 72-GPU NVLink domain), one rate per tray
of 6.5 failures per 1,000 node-days (Kokolis et al., HPCA 2025), ρ = 6.5 / 24,000 per tray-hour,
repair 24 h, restart 6 min (R = 0.1 h), an in-memory checkpoint stalling 36 s (C = 0.01 h).

Job of 2 racks (36 trays): λ = 36ρ = 0.00975 /h, MTBF = 102.5641 h, τ = √(2 · 102.5641 · 0.01) =
1.432230 h, checkpoint goodput = 1 − 0.01/τ − (τ/2 + 0.1)/MTBF = 0.985061.
Trays of one domain under repair: a = 18 · ρ · 24 = 0.117.
"""

from __future__ import annotations

import math

import pytest

from planner.errors import InputError
from planner.plan.pipeline import plan_scenario
from planner.rules.reliability import reliability_report
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS
from tests.test_verify import make_plan

D72 = {
    "id": "d72",
    "servers_per_rack": 18,
    "gpus_per_server": 4,
    "gpu_power_w": 1000,
    "weight_kg": 1360,
    "capex_usd": 3_000_000,
    "nvlink_domain_gpus": 72,
}
RHO = 6.5 / 24_000
A = 18 * RHO * 24  # 0.117 trays of a domain under repair
MTBF = 1 / (36 * RHO)
TAU = math.sqrt(2 * MTBF * 0.01)
CKPT = 1 - 0.01 / TAU - (TAU / 2 + 0.1) / MTBF


def scenario(spare_trays: int = 0, reliability: dict | None = None, solver: str = "highs", **cluster):
    return tiny_scenario(
        [{"id": "R1", "positions": 4, "feeds": ["F"], "max_rack_power_kw": 200}],
        [{"id": "F", "capacity_kw": 2000}],
        [
            {
                "id": "c",
                "demand": "exact",
                "gpus": 144,
                "rack_types": ["d72"],
                "checkpoint_s": 36,
                "restart_min": 6,
                "repair_hours": 24,
                "domain_spare_servers": spare_trays,
                **cluster,
            }
        ],
        rack_types=[D72],
        solver={"name": solver},
        reliability={"node_failures_per_1000_node_days": 6.5} if reliability is None else reliability,
    )


def test_the_hand_figures() -> None:
    """The constants of the module docstring, to the digits the docstring quotes."""
    assert (round(MTBF, 4), round(TAU, 6), round(CKPT, 6), round(A, 6)) == (
        102.5641,
        1.43223,
        0.985061,
        0.117,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_without_spare_trays_a_failed_tray_takes_its_domain_out(solver: str) -> None:
    """s = 0: a domain is out while any of its trays is: q = 1 − e^(−0.117) = 0.110415; two domains,
    no spare racks: 0.220830 domains short, in service (144 − 72 · 0.220830)/144 = 0.889585; goodput
    0.985061 · 0.889585 = 0.876295; $ per useful GPU-hour = $ per GPU-hour ÷ that."""
    s = scenario(solver=solver)
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    row = plan.reliability.clusters[0]
    q = 1 - math.exp(-A)
    assert row.in_service == pytest.approx(1 - q, abs=1e-6)
    assert row.in_service == pytest.approx(0.889585, abs=1e-6)
    assert row.goodput == pytest.approx(0.876295, abs=1e-6)
    assert row.mtbf_h == pytest.approx(MTBF, abs=1e-6)
    k = plan.kpis
    assert k.usd_per_useful_gpu_hour == pytest.approx(k.tco_usd / (k.gpu_hours_npv * 0.876295), rel=1e-5)
    assert k.usd_per_useful_gpu_hour == pytest.approx(k.usd_per_gpu_hour / 0.876295, rel=1e-5)


@pytest.mark.parametrize("solver", SOLVERS)
def test_one_spare_tray_per_domain_keeps_it_in_the_job(solver: str) -> None:
    """s = 1: 4 GPUs per domain idle (8 of 144), 68 working; a domain is out when 2 or more trays are
    under repair: q = 1 − e^(−0.117)(1 + 0.117) = 0.006333; 0.012666 domains short; in service
    (144 − 8 − 68 · 0.012666)/144 = 0.938463; goodput 0.985061 · 0.938463 = 0.924443."""
    s = scenario(1, solver=solver)
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    q = 1 - math.exp(-A) * (1 + A)
    row = plan.reliability.clusters[0]
    assert row.in_service == pytest.approx((144 - 8 - 68 * 2 * q) / 144, abs=1e-6)
    assert row.in_service == pytest.approx(0.938463, abs=1e-6)
    assert row.goodput == pytest.approx(0.924443, abs=1e-6)


def test_a_spare_rack_stands_in_for_a_domain_out() -> None:
    """s = 0 and one spare rack (a third domain): m = 3 · 0.110415 = 0.331244 domains out of the
    three, short beyond the spare E[(X − 1)⁺] = m − 1 + e^(−m) = 0.049274; in service
    1 − 72 · 0.049274 / 144 = 0.975363; goodput 0.985061 · 0.975363 = 0.960792."""
    s = scenario()
    plan = make_plan(s, [("R1", 1, "d72", "c"), ("R1", 2, "d72", "c"), ("R1", 3, "d72", "c")])
    racks = [*plan.racks[:2], plan.racks[2].model_copy(update={"spare": True})]
    rep = reliability_report(s, racks)
    m = 3 * (1 - math.exp(-A))
    assert rep.clusters[0].in_service == pytest.approx(1 - 72 * (m - 1 + math.exp(-m)) / 144, abs=1e-6)
    assert rep.clusters[0].in_service == pytest.approx(0.975363, abs=1e-6)
    assert rep.clusters[0].goodput == pytest.approx(0.960792, abs=1e-6)


def test_software_faults_restart_the_job_but_repair_nothing() -> None:
    """Llama 3's causes: software (54 of 419, per server) interrupts but needs no repair, so the
    domain's trays under repair leave it out: per tray-hour (419 − 54)/(1,296 · 2,048) of server
    and GPU causes folded per domain (GPU causes × 72 GPUs, server causes × 18 trays, links × 72)."""
    s = scenario(reliability={})
    plan = make_plan(s, [("R1", 1, "d72", "c"), ("R1", 2, "d72", "c")])
    rep = reliability_report(s, plan.racks)
    hours = 54 * 24
    gpu = (148 + 72 + 19) / (hours * 16_384)
    server = (32 + 59) / (hours * 2_048)  # software's 54 repair nothing
    a = 24 * (72 * gpu + 18 * server)  # d72 has no fabric links
    assert rep.clusters[0].in_service == pytest.approx(math.exp(-a), abs=1e-6)


def test_the_verifier_recounts_the_domains() -> None:
    """A plan claiming every GPU in service (the goodput of a plan without domains) is refused."""
    s = scenario()
    plan = plan_scenario(s)
    rel = plan.reliability
    row = rel.clusters[0].model_copy(update={"in_service": None, "goodput": round(CKPT, 6)})
    plan = plan.model_copy(update={"reliability": rel.model_copy(update={"clusters": [row]})})
    got = [str(v) for v in verify(plan, s).violations]
    assert (
        "reliability cluster c: goodput: plan says 0.985061, the racks give 0.876295, in_service: plan says "
        "None, the racks give 0.889585"
    ) in got


def test_more_spare_trays_than_a_domain_holds_is_an_input_error() -> None:
    with pytest.raises(InputError) as e:
        scenario(18)
    assert str(e.value.problems[0]) == (
        "clusters[0].domain_spare_servers: 18 spare trays leave none of the 18 in an NVLink domain of "
        "'d72' for the job; allowed 0..17"
    )


def test_a_domain_that_does_not_divide_the_rack_is_refused() -> None:
    with pytest.raises(InputError) as e:
        tiny_scenario(
            [{"id": "R1", "positions": 1, "feeds": ["F"]}],
            [{"id": "F", "capacity_kw": 2000}],
            [{"id": "c", "demand": "max", "rack_types": ["d72"]}],
            rack_types=[{**D72, "nvlink_domain_gpus": 30}],
        )
    assert "nvlink_domain_gpus: 30 must divide the rack's 72 GPUs" in str(e.value)


def test_a_tray_counts_its_share_of_a_reference_server() -> None:
    """server_fault_share 0.25 (a 2-GPU tray against Llama 3's 8-GPU host): the 36 trays fault as 9
    reference servers, λ = 9ρ, MTBF = 4 × 102.5641 = 410.2564 h; a domain's trays under repair
    a = 18 · 0.25 · ρ · 24 = 0.02925, in service e^(−0.02925) = 0.971174 (s = 0)."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 4, "feeds": ["F"], "max_rack_power_kw": 200}],
        [{"id": "F", "capacity_kw": 2000}],
        [{"id": "c", "demand": "exact", "gpus": 144, "rack_types": ["d72"], "checkpoint_s": 36}],
        rack_types=[{**D72, "server_fault_share": 0.25}],
        reliability={"node_failures_per_1000_node_days": 6.5},
    )
    rep = reliability_report(s, make_plan(s, [("R1", 1, "d72", "c"), ("R1", 2, "d72", "c")]).racks)
    assert rep.clusters[0].mtbf_h == pytest.approx(410.256410, abs=1e-6)
    assert rep.clusters[0].in_service == pytest.approx(math.exp(-0.02925), abs=1e-6)
    assert rep.clusters[0].in_service == pytest.approx(0.971174, abs=1e-6)


def test_the_expected_shortfall_holds_at_a_million_gpus() -> None:
    """E[(X − k)⁺] for Poisson(1,000) with k = 1,000 spare domains: √(1000/(2π)) = 12.6157 to first
    order (the normal approximation, within 0.2 %); e^(−1000) underflows, the logarithms do not."""
    from planner.input.asks import expected_excess

    assert expected_excess(1000.0, 1000) == pytest.approx(math.sqrt(1000 / (2 * math.pi)), rel=2e-3)
    assert expected_excess(1000.0, 0) == pytest.approx(1000.0)
    assert expected_excess(0.0, 3) == 0.0
