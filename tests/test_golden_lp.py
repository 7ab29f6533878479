"""Golden rows per constraint family on a tiny site: a change to one family shows in one diff.

The site: one 2N hall (UPS-A/B → BW-A/B), two rows on both busways (R2 with a liquid loop), an air
zone and a liquid loop, one pod with a 12 kW network rack (on BW-B) and port and rack limits; a
one-pod GPU cluster with a storage rack and a GPU cap, an anywhere NVL72 cluster with an at-least
demand, and capex and IT-power budgets. ``UPDATE_GOLDEN=1 pytest tests/test_golden_lp.py`` rewrites
the files after a deliberate change; review the diff.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from planner.model import RECIPE, OrderError, build, new_model
from planner.model.power import add_power_constraints
from planner.model.space import add_space_constraints
from tests.conftest import tiny_scenario

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_scenario():
    pods = [{"id": "P-A", "network_rack": {"row": "NET", "position": 0}, "max_gpus": 64, "max_racks": 3, "network_rack_type": "network-rack"}]
    rows = [
        {"id": "R1", "positions": 3, "feeds": ["BW-A", "BW-B"], "redundant": True, "pod": "P-A", "max_rack_power_kw": 45},
        {"id": "R2", "positions": 2, "origin_y_m": 2.4, "feeds": ["BW-A", "BW-B"], "redundant": True, "pod": "P-A", "max_rack_power_kw": 140, "liquid_loop": "LQ"},
    ]
    nodes = [{"id": "UPS-A", "kind": "ups", "capacity_kw": 400}, {"id": "UPS-B", "kind": "ups", "capacity_kw": 400},
             {"id": "BW-A", "kind": "busway", "capacity_kw": 300, "parent": "UPS-A"}, {"id": "BW-B", "kind": "busway", "capacity_kw": 300, "parent": "UPS-B"}]
    zones = [{"id": "AIR", "medium": "air", "units": 3, "unit_capacity_kw": 100, "redundant_units": 1},
             {"id": "LQ", "medium": "liquid", "units": 2, "unit_capacity_kw": 150, "redundant_units": 1}]
    clusters = [{"id": "train-1", "demand": "max", "gpus": 48, "rack_types": ["grand-teton-h100"], "max_hops": 3, "storage_racks": 1},
                {"id": "nvl", "demand": "at_least", "gpus": 72, "rack_types": ["gb200-nvl72"], "max_hops": 7}]
    return tiny_scenario(rows, nodes, clusters, zones=zones, pods=pods, budgets={"capex_usd": 2e7, "it_power_kw": 500}, gpu_power_cap_w=650)


def rows_by_family() -> dict[str, str]:
    m = build(golden_scenario())
    out: dict[str, list[str]] = defaultdict(list)
    for name, c in m.prob._constraints.items():  # noqa: SLF001 - the rows as built, in order
        out[name.split("(", 1)[0]].append(f"{name}: {c}".replace("= -0.0", "= 0.0"))
    out["objective"] = [f"maximise {m.prob.objective}"]
    return {fam: "\n".join(lines) + "\n" for fam, lines in out.items()}


FAMILIES = ["space", "load_def", "node_load_def", "power", "power_n1", "cooling", "pod_gpus", "pod_racks",
            "scope_racks", "scope_gpus", "scope_storage", "homes", "demand", "budget", "objective"]


def test_every_family_has_a_golden_file() -> None:
    assert sorted(rows_by_family()) == sorted(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_rows_match_golden(family: str) -> None:
    got = rows_by_family()[family]
    path = GOLDEN / f"{family}.lp.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got)
    assert got == path.read_text(), f"rows of {family} changed; if deliberate, run UPDATE_GOLDEN=1 and review the diff"


def test_a_family_called_before_what_it_needs_says_what_to_add() -> None:
    m = new_model(golden_scenario())
    with pytest.raises(OrderError, match="the power family needs loads, failover, fixed_loads, retrofits first"):
        add_power_constraints(m)
    built = build(golden_scenario())
    with pytest.raises(OrderError, match="the space family was added twice; build a new model instead"):
        add_space_constraints(built)


def test_the_recipe_adds_every_family_once_in_an_order_that_satisfies_each() -> None:
    m = new_model(golden_scenario())
    for family in RECIPE:
        family(m)  # raises OrderError on a wrong order
    assert len(m.steps) == len(RECIPE)
