"""One engine function answers "what are this plan's figures": every shipped plan kind (plain,
phased with retrofits, designed fabrics, failover policies, storage and spares) opened from its
YAML with its figures stripped gets back exactly the figures it was made with."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.input.loader import load_scenario
from planner.plan import plan_from_text, plan_to_yaml
from planner.plan.numbers import plan_figures
from planner.plan.rolling import plan_mode

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("small-hall", "joint"),
        ("fleet-expansion", "joint"),
        ("fleet-expansion", "rolling"),
        ("meta-24k-roce-vs-ib", "joint"),
        ("dr-hall-flex", "joint"),
    ],
)
def test_every_figure_of_a_reopened_plan_is_the_plan_as_made(name: str, mode: str) -> None:
    s = load_scenario(DATASETS / f"{name}.yaml")
    made = plan_mode(s, mode)
    opened = plan_from_text(plan_to_yaml(made)).model_copy(
        update={"kpis": None, "utilisation": None, "reliability": None, "phases": [], "stranded": []}
    )
    got, rep = plan_figures(opened, s)
    assert rep.ok
    assert got.kpis.model_dump() == made.kpis.model_dump()
    assert [u.model_dump() for u in got.utilisation] == [u.model_dump() for u in made.utilisation]
    assert got.stranded == made.stranded
    assert got.phases == made.phases
    assert got.fabric == made.fabric
    assert got.reliability == made.reliability


def test_the_figures_count_retrofits_and_fabric_designs() -> None:
    """The figures the dashboard showed before (racks only) lost the retrofits and the designs."""
    s = load_scenario(DATASETS / "fleet-expansion.yaml")
    got, _ = plan_figures(plan_mode(s), s)
    assert (
        got.kpis.capex_retrofits_usd
        == sum(r.cost_usd for r in s.retrofits if r.id in {b.id for b in got.retrofits})
        > 0
    )
    s = load_scenario(DATASETS / "meta-24k-roce-vs-ib.yaml")
    got, _ = plan_figures(plan_mode(s), s)
    assert got.kpis.switches == sum(sum(f.switches) for f in got.fabric) > 0
