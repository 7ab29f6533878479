"""A plan is a claim: verify recomputes every figure in it from the racks and the scenario,
and a plan checked against another scenario says so in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.enums import Status
from planner.errors import InputError
from planner.loader import load_scenario
from planner.pipeline import plan_scenario
from planner.plan import Plan, plan_from_text, plan_to_yaml
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
    ("kpis.pflops_bf16", 0.0, "kpis.pflops_bf16: plan says 0, the racks give "),
    ("kpis.gpus_per_m2", 99.0, "kpis.gpus_per_m2: plan says 99, the racks give "),
    ("objective_value", 2000.0, "objective_value: plan says 2000.0, the racks give 1,080"),
    ("bound", 1000.0, "bound: bound 1,000 is on the wrong side of the objective 1,080"),
    ("gap", 0.5, "gap: plan says 0.5, its bound and racks give 0.0"),
    ("gap", None, "gap: plan says None, its bound and racks give 0.0"),
    ("scenario_hash", "0123456789abcdef", "scenario_hash: plan says 0123456789abcdef, scenario 'small-hall' hashes to "),
    ("status", "infeasible", "status: status infeasible says there is no plan, but the plan lists 57 racks"),
    ("objective", "min_capex", "objective: plan optimised min_capex, the scenario asks for max_gpus"),
    ("utilisation[0].value", 1.0, "utilisation power_node "),
    ("racks[0].x_m", 99.0, "racks[0] (R02/1): coordinates (99.0, "),
    ("racks[0].cable_length_m", 0.5, "racks[0] (R02/1): cable length 0.5 m differs from the site's"),
    ("racks[0].link_class", "smf", "racks[0] (R02/1): link class 'smf' is not the shortest-reach class that covers"),
    ("racks[0].rack_type", "dgx-h100-4", "racks[0] (R02/1): rack type 'dgx-h100-4' is not allowed for cluster 'train-gt'"),
    ("racks[0].position", 0, "racks[0] (R02/0): coordinates"),
    ("racks[0].cluster", "nvl-infer", "racks[0] (R02/1): rack type 'grand-teton-h100' is not allowed for cluster 'nvl-infer'"),
    ("racks[0].row", "R08", "racks[0] (R08/1): coordinates"),
    ("racks[0].hall", "H9", "racks[0] (R02/1): row 'R02' is in B1/H1, not B1/H9"),
]


@pytest.mark.parametrize(("path", "value", "expected"), CORRUPTIONS, ids=[f"{p}={v}" for p, v, _ in CORRUPTIONS])
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


@pytest.mark.parametrize(("field", "text"), [("x_m", ".nan"), ("gap", ".nan"), ("cable_length_m", ".inf"), ("position", "true")])
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
    from planner.loader import scenario_hash

    assert str(rep.violations[0]) == (
        f"scenario: plan was made for 'small-hall' (hash {plan.scenario_hash}), not 'dr-hall' (hash {scenario_hash(other)})"
    )


def test_the_untouched_plan_passes_and_round_trips(solved) -> None:
    s, plan = solved
    again = plan_from_text(plan_to_yaml(plan))
    assert again == plan
    assert verify(again, s).ok
