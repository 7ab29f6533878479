"""A plan is a claim: verify recomputes every figure in it from the racks and the scenario,
and a plan checked against another scenario says so in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.enums import Status
from planner.errors import InputError
from planner.input.loader import load_scenario
from planner.plan import Plan, plan_from_text, plan_to_yaml
from planner.plan.pipeline import plan_scenario, rack_counts
from planner.verifier import verify

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def solved() -> tuple[Any, Plan]:
    s = load_scenario(DATASETS / "small-hall.yaml")
    plan = plan_scenario(s)
    assert plan.status == Status.optimal
    assert verify(plan, s).ok
    return s, plan


def _edit(plan: Plan, path: str, value: Any) -> Plan:
    data = plan.model_dump(mode="json")
    cur: Any = data
    parts = path.replace("]", "").replace("[", ".").split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if p.isdigit() else cur[p]
    last = parts[-1]
    cur[int(last) if last.isdigit() else last] = value
    return Plan.model_validate(data)


def _first_index(plan: Plan, row: str) -> int:
    return next(i for i, r in enumerate(plan.racks) if r.row == row)


CORRUPTIONS = [
    ("kpis.gpus", 999_999, "kpis.gpus: plan says 999,999, the racks give 1,080"),
    ("kpis.capex_usd", 1.0, "kpis.capex_usd: plan says 1, the racks give "),
    ("kpis.it_kw", 10.0, "kpis.it_kw: plan says 10, the racks give "),
    ("kpis.allowance_kw", 0.0, "kpis.allowance_kw: plan says 0, the racks give "),
    ("kpis.facility_kw", 1.0, "kpis.facility_kw: plan says 1, the racks give "),
    ("kpis.pflops_bf16", 0.0, "kpis.pflops_bf16: plan says 0, the racks give "),
    ("kpis.gpus_per_m2", 99.0, "kpis.gpus_per_m2: plan says 99, the racks give "),
    ("objective_value", 2000.0, "objective_value: plan says 2000.0, the racks give 1,080"),
    ("bound", 1000.0, "bound: bound 1,000 is on the wrong side of the objective 1,080"),
    ("gap", 0.5, "gap: plan says 0.5, its bound and racks give 0.0"),
    ("gap", None, "gap: plan says None, its bound and racks give 0.0"),
    (
        "scenario_hash",
        "0123456789abcdef",
        "scenario_hash: plan says 0123456789abcdef, scenario 'small-hall' hashes to ",
    ),
    ("status", "infeasible", "status: status infeasible says there is no plan, but the plan lists 57 racks"),
    ("objective", "min_capex", "objective: plan optimised min_capex, the scenario asks for max_gpus"),
    ("utilisation[0].value", 1.0, "utilisation power_node "),
    ("racks[0].x_m", 99.0, "racks[0] (R02/1): coordinates (99.0, "),
    ("racks[0].cable_length_m", 0.5, "racks[0] (R02/1): cable length 0.5 m differs from the site's"),
    (
        "racks[0].link_class",
        "smf",
        "racks[0] (R02/1): link class 'smf' is not the shortest-reach class that covers",
    ),
    (
        "racks[0].rack_type",
        "dgx-h100-4",
        "racks[0] (R02/1): rack type 'dgx-h100-4' is not allowed for cluster 'train-gt'",
    ),
    ("racks[0].position", 0, "racks[0] (R02/0): coordinates"),
    (
        "racks[0].cluster",
        "nvl-infer",
        "racks[0] (R02/1): rack type 'grand-teton-h100' is not allowed for cluster 'nvl-infer'",
    ),
    ("racks[0].row", "R08", "racks[0] (R08/1): coordinates"),
    ("racks[0].hall", "H9", "racks[0] (R02/1): row 'R02' is in B1/H1, not B1/H9"),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), CORRUPTIONS, ids=[f"{p}={v}" for p, v, _ in CORRUPTIONS]
)
def test_a_corrupted_figure_fails_verification(solved, path: str, value: Any, expected: str) -> None:
    s, plan = solved
    bad = _edit(plan, path, value)
    messages = [str(v) for v in verify(bad, s).violations]
    assert any(m.startswith(expected) for m in messages), messages


def test_optimal_with_a_gap_beyond_the_request_is_refused(solved) -> None:
    s, plan = solved
    bad = plan.model_copy(update={"bound": 1200.0, "gap": round(120 / 1080, 6)})
    messages = [str(v) for v in verify(bad, s).violations]
    assert "status: optimal needs a gap within 0; the gap is 0.111111" in messages


def test_rel_gap_zero_means_proven_to_solver_precision(solved) -> None:
    """small-hall asks rel_gap 0: a bound a relative 1.1e-8 above the objective (round-off) is
    optimal; 1e-5 above is not (the tolerance is 1e-6 on the relative gap)."""
    s, plan = solved
    assert s.solver.rel_gap == 0
    near = plan.model_copy(update={"bound": 1080 * (1 + 1.1e-8), "gap": 1.1e-8})
    assert verify(near, s).ok, verify(near, s).violations
    far = plan.model_copy(update={"bound": 1080 * (1 + 1e-5), "gap": 1e-5})
    messages = [str(v) for v in verify(far, s).violations]
    assert "status: optimal needs a gap within 0; the gap is 1e-05" in messages


def test_a_looser_gap_in_the_plan_counts_only_when_the_run_hash_covers_it(solved) -> None:
    """A plan made with --gap 0.2 is optimal at gap 0.111 when its run hash is the scenario's with
    those settings; the same settings typed into the plan afterwards are judged by the scenario's 0."""
    from planner.schema.hashing import run_hash

    s, plan = solved
    loose = s.solver.model_copy(update={"rel_gap": 0.2})
    honest = run_hash(s.model_copy(update={"solver": loose}))
    made = plan.model_copy(
        update={"bound": 1200.0, "gap": round(120 / 1080, 6), "solver_settings": loose, "run_hash": honest}
    )
    assert verify(made, s).ok, verify(made, s).violations
    typed = made.model_copy(update={"run_hash": plan.run_hash})
    messages = [str(v) for v in verify(typed, s).violations]
    assert any(
        m.startswith(f"run_hash: plan says {plan.run_hash}, the scenario with the plan") for m in messages
    )
    assert "status: optimal needs a gap within 0; the gap is 0.111111" in messages


@pytest.mark.parametrize(
    ("field", "text"), [("x_m", ".nan"), ("gap", ".nan"), ("cable_length_m", ".inf"), ("position", "true")]
)
def test_non_finite_or_mistyped_figures_do_not_load(solved, field: str, text: str) -> None:
    import re

    _, plan = solved
    yaml_text = plan_to_yaml(plan)
    if field == "gap":
        bad = re.sub(r"(?m)^gap: .*$", f"gap: {text}", yaml_text)
    else:
        first = next(line for line in yaml_text.splitlines() if line.startswith("- {building"))
        bad = yaml_text.replace(first, re.sub(rf"({field}: )[^,}}]+", rf"\g<1>{text}", first), 1)
    assert bad != yaml_text
    with pytest.raises(InputError):
        plan_from_text(bad)


def test_a_plan_for_another_scenario_says_so_in_one_line(solved) -> None:
    _, plan = solved
    other = load_scenario(DATASETS / "dr-hall.yaml")
    rep = verify(plan, other)
    assert len(rep.violations) == 1
    from planner.input.loader import scenario_hash

    assert str(rep.violations[0]) == (
        f"scenario: plan was made for 'small-hall' (hash {plan.scenario_hash}), not 'dr-hall' (hash "
        f"{scenario_hash(other)})"
    )


def test_the_untouched_plan_passes_and_round_trips(solved) -> None:
    s, plan = solved
    again = plan_from_text(plan_to_yaml(plan))
    assert again == plan
    assert verify(again, s).ok


def test_stranded_power_per_element_is_a_checked_claim(solved: tuple[Any, Plan]) -> None:
    """small-hall strands 424.4 kW at UTIL by cooling (tests/test_costs.py); each edit of the list is
    caught."""
    s, plan = solved
    assert [(x.node, x.kw, x.reason) for x in plan.stranded] == [("UTIL", 424.4, "cooling")]
    more = plan.model_copy(update={"stranded": [plan.stranded[0].model_copy(update={"kw": 400.0})]})
    assert [str(v) for v in verify(more, s).violations] == [
        "stranded UTIL: plan says 400 kW (cooling), the racks give 424.4 kW (cooling)"
    ]
    why = plan.model_copy(update={"stranded": [plan.stranded[0].model_copy(update={"reason": "space"})]})
    assert [str(v) for v in verify(why, s).violations] == [
        "stranded UTIL: plan says 424.4 kW (space), the racks give 424.4 kW (cooling)"
    ]
    gone = plan.model_copy(update={"stranded": []})
    assert [str(v) for v in verify(gone, s).violations] == ["stranded UTIL: missing from the plan"]


def test_the_failover_gain_is_backed_by_a_witness_the_verifier_checks() -> None:
    """dr-hall-flex: 1,200 GPUs with the inference fleet shed, 864 under strict N-1 (README, benchmarks):
    the gain +336 is the difference, and the strict plan's racks hold under strict N-1."""
    s = load_scenario(DATASETS / "dr-hall-flex.yaml")
    plan = plan_scenario(s)
    g = plan.failover
    assert (g.strict_gpus, g.gain_gpus, plan.kpis.gpus) == (864, 336, 1200)
    assert verify(plan, s).ok
    inflated = plan.model_copy(update={"failover": g.model_copy(update={"gain_gpus": 999})})
    assert [str(v) for v in verify(inflated, s).violations] == [
        "failover.gain_gpus: plan says 999, its 1,200 GPUs less 864 under strict N-1 give +336"
    ]
    lowered = plan.model_copy(
        update={"failover": g.model_copy(update={"strict_gpus": 600, "gain_gpus": 600})}
    )
    assert "failover.strict_gpus: plan says 600, its strict N-1 racks give 864" in [
        str(v) for v in verify(lowered, s).violations
    ]
    # a witness with more racks than strict N-1 allows: the shed plan's own racks break it
    fake = plan.model_copy(
        update={
            "failover": g.model_copy(
                update={"strict_racks": rack_counts(plan.racks), "strict_gpus": 1200, "gain_gpus": 0}
            )
        }
    )
    found = [str(v) for v in verify(fake, s).violations]
    assert found
    for status, gpus in ((Status.time_limit, 864), (Status.feasible, None)):
        lines = [
            str(v)
            for v in verify(
                plan.model_copy(
                    update={"failover": g.model_copy(update={"strict_status": status, "strict_gpus": gpus})}
                ),
                s,
            ).violations
        ]
        said = "has no plan, yet it states strict N-1 GPUs" if gpus else "has a plan, yet no strict N-1 GPUs"
        assert f"failover.strict_status: strict_status {status.value} {said}" in " | ".join(lines), lines
    assert all(f.startswith("failover.strict_racks: under strict N-1: ") for f in found)
    assert any("when" in f and "fails" in f for f in found)


def test_tie_break_notes_state_the_plans_own_figures() -> None:
    """The cable tie-breaks' notes agree with the KPIs they name (the model counts each cable at its
    position class's mean length; the plan's racks stand nearest the pod first)."""
    s = load_scenario(DATASETS / "dr-hall-flex.yaml")
    plan = plan_scenario(s)
    assert f"min cable_m: {plan.kpis.cable_m:,.1f} m (kpis.cable_m)" in plan.notes
    assert f"min cable_usd: {plan.kpis.capex_links_usd:,.1f} USD (kpis.capex_links_usd)" in plan.notes


def test_it_load_counts_the_designed_fabrics_switches() -> None:
    """meta-24k-roce-vs-ib: the top power node carries the racks, the network racks and the designed
    fabric's power charged to the network rows; IT kW (everything in the white space) is at least that."""
    s = load_scenario(DATASETS / "meta-24k-roce-vs-ib.yaml")
    plan = plan_scenario(s)
    top = next(u for u in plan.utilisation if u.id == "B1-UTIL")
    k = plan.kpis
    assert k.it_kw == pytest.approx(k.racks_kw + k.network_kw + k.fabric_kw)
    assert k.it_kw >= top.value
    assert k.capex_facility_usd == pytest.approx(k.it_kw * s.costs.facility_usd_per_mw / 1000, rel=1e-9)


def test_a_failover_gain_without_time_to_compute_it_says_so_and_claims_nothing() -> None:
    from planner.clock import Deadline
    from planner.plan.pipeline import failover_gain

    s = load_scenario(DATASETS / "dr-hall-flex.yaml")
    plan = plan_scenario(s)
    g = failover_gain(s, plan, Deadline(0.2))
    assert (g.strict_status, g.strict_gpus, g.gain_gpus, g.strict_racks) == (
        Status.time_limit,
        None,
        None,
        [],
    )
    assert g.note.startswith("not computed: ")
    assert verify(plan.model_copy(update={"failover": g}), s).ok
