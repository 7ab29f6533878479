"""Golden rows per registered constraint family: a change to one family shows in one diff.

Each family of :data:`planner.model.FAMILIES` has ``tests/golden/<family>.lp.txt``: the variables
it makes and the rows of its labelled block, on the tiny scenario named at the top of the file
(:data:`SOURCES`; the hall below unless a family needs more: phases and a retrofit, supply, power
arrival, a spread limit, a shedding cluster, a designed fabric). The hall: one 2N hall (UPS-A/B → BW-A/B), two
rows on both busways (R2 with a liquid loop), an air
zone and a liquid loop, one pod with a 12 kW network rack (on BW-B) and port and rack limits; a
one-pod GPU cluster with a storage rack and a GPU cap, an anywhere NVL72 cluster with an at-least
demand, and capex and IT-power budgets. ``UPDATE_GOLDEN=1 pytest tests/test_golden_lp.py`` rewrites
the files after a deliberate change; review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.enums import LimitKind
from planner.model import FAMILIES, Family, LimitRows, OrderError, build, new_model
from planner.model.keys import LimitKey, lp_name
from planner.model.phases import add_count_variables
from planner.model.power import add_power_constraints
from planner.model.space import add_space_constraints
from tests.conftest import tiny_scenario

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_scenario():
    pods = [
        {
            "id": "P-A",
            "network_rack": {"row": "NET", "position": 0},
            "max_gpus": 64,
            "max_racks": 3,
            "network_rack_type": "network-rack",
        }
    ]
    rows = [
        {
            "id": "R1",
            "positions": 3,
            "feeds": ["BW-A", "BW-B"],
            "redundant": True,
            "pod": "P-A",
            "max_rack_power_kw": 45,
        },
        {
            "id": "R2",
            "positions": 2,
            "origin_y_m": 2.4,
            "feeds": ["BW-A", "BW-B"],
            "redundant": True,
            "pod": "P-A",
            "max_rack_power_kw": 140,
            "liquid_loop": "LQ",
        },
    ]
    nodes = [
        {"id": "UPS-A", "kind": "ups", "capacity_kw": 400},
        {"id": "UPS-B", "kind": "ups", "capacity_kw": 400},
        {"id": "BW-A", "kind": "busway", "capacity_kw": 300, "parent": "UPS-A"},
        {"id": "BW-B", "kind": "busway", "capacity_kw": 300, "parent": "UPS-B"},
    ]
    zones = [
        {"id": "AIR", "medium": "air", "units": 3, "unit_capacity_kw": 100, "redundant_units": 1},
        {"id": "LQ", "medium": "liquid", "units": 2, "unit_capacity_kw": 150, "redundant_units": 1},
    ]
    clusters = [
        {
            "id": "train-1",
            "demand": "max",
            "gpus": 48,
            "rack_types": ["grand-teton-h100"],
            "max_hops": 3,
            "storage_racks": 1,
        },
        {"id": "nvl", "demand": "at_least", "gpus": 72, "rack_types": ["gb200-nvl72"], "max_hops": 7},
    ]
    return tiny_scenario(
        rows,
        nodes,
        clusters,
        zones=zones,
        pods=pods,
        budgets={"capex_usd": 2e7, "it_power_kw": 500},
        gpu_power_cap_w=650,
    )


def sources():
    """Golden scenario name → a builder (tiny hand-checkable scenarios of the tests that solve them)."""
    from tests.test_fabric import IB2, TWO_PODS, net_site
    from tests.test_grid import energy_golden, swing_site
    from tests.test_phases import retrofit_site
    from tests.test_region_power import arrival_site
    from tests.test_reliability import dr_site, two_domain_site
    from tests.test_supply import GT, supplied

    return {
        "hall": golden_scenario,
        "retrofit": lambda: retrofit_site(1),
        "supply": lambda: supplied(
            [{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}]
        ),
        "arrival": lambda: arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}]),
        "spread": lambda: two_domain_site("max_share_per_pod"),
        "shed": lambda: dr_site("shed"),
        "swing": lambda: swing_site(True, True),
        "energy": energy_golden,
        "fabric": lambda: net_site(
            TWO_PODS, [IB2], {"demand": "max", "gpus": 128, "max_hops": 5, "fabrics": ["ib2"]}
        ),
    }


SOURCES = {
    "retrofits": "retrofit",
    "retrofit_gates": "retrofit",
    "supply": "supply",
    "power_arrival": "arrival",
    "spread": "spread",
    "failover": "shed",
    "fabric": "fabric",
    "swing": "swing",
    "energy": "energy",
}
"""Family → the golden scenario its file shows (``hall`` when not named)."""


def family_text(m, family: str) -> str:
    """What a family added to a built model: its variables (bounds, integer or not) and its rows."""
    lines = [
        f"{v.name} in [{v.lowBound}, {v.upBound}]{' integer' if v.cat == 'Integer' else ''}"
        for v in m.columns.get(family, [])
    ]
    lines += [f"{name}: {c}".replace("= -0.0", "= 0.0") for name, c in m.blocks.get(family, {}).items()]
    if family == "fixed_loads":  # constants on right-hand sides
        lines += [
            f"fixed {it.rack_type.id} in {it.row}: {it.kw} kW from phase {it.online}" for it in m.fixed_items
        ]
    if family == "expressions":  # named expressions the objective, budgets and KPIs use
        lines += [f"{name} = {e}" for name, e in m.exprs.items()]
    if family == "failover":  # feed-group loads under a contingency, used by the power family's N-1 rows
        lines += [f"eff({g}) = {e}" for g, e in m.group_eff.items()]
    return "\n".join(lines or ["(adds no rows or variables here)"]) + "\n"


def golden_texts() -> dict[str, str]:
    built = {name: build(make()) for name, make in sources().items()}
    out = {
        f.name: f"# scenario: {SOURCES.get(f.name, 'hall')}\n"
        + family_text(built[SOURCES.get(f.name, "hall")], f.name)
        for f in FAMILIES
    }
    out["objective"] = f"# scenario: hall\nmaximise {built['hall'].prob.objective}\n"
    return out


def test_every_registered_family_has_a_golden_file_and_rows_in_it() -> None:
    names = sorted([f.name for f in FAMILIES] + ["objective"])
    assert sorted(p.name.removesuffix(".lp.txt") for p in GOLDEN.glob("*.lp.txt")) == names
    texts = golden_texts()
    empty = [f for f, text in texts.items() if "(adds no rows or variables here)" in text]
    assert empty == [], f"families whose golden scenario shows nothing of them: {empty}"


@pytest.mark.parametrize("family", [f.name for f in FAMILIES] + ["objective"])
def test_family_rows_match_golden(family: str) -> None:
    got = golden_texts()[family]
    path = GOLDEN / f"{family}.lp.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got)
    assert got == path.read_text(), (
        f"rows of {family} changed; if deliberate, run UPDATE_GOLDEN=1 and review the diff"
    )


def test_every_row_of_the_problem_is_in_a_block_in_the_problems_order() -> None:
    for make in sources().values():
        m = build(make())
        assert [name for _, name, _ in m.rows()] == [c.name for c in m.prob.constraints()]


def test_a_family_called_before_what_it_needs_says_what_to_add() -> None:

    m = new_model(golden_scenario())
    with pytest.raises(
        OrderError,
        match="the power family needs loads, failover, fixed_loads, retrofits first: "
        "add add_group_load_definitions before add_power_constraints",
    ):
        add_power_constraints(m)
    built = build(golden_scenario())
    with pytest.raises(OrderError, match="the space family was added twice; build a new model instead"):
        add_space_constraints(built)


def test_the_families_add_each_once_in_an_order_that_satisfies_each() -> None:
    m = new_model(golden_scenario())
    for family in FAMILIES:
        family(m)  # raises OrderError on a wrong order
    assert m.steps == [f.name for f in FAMILIES]


def _toy(m) -> None:
    """A toy family: at most 2 racks of the one-pod cluster in row R1, stated as a pod-racks limit."""
    racks = [v for k, v in m.n.items() if k.cls.row == "R1"]
    m.add_limit(LimitKey("toy_cap", "R1"), sum(racks), 2, "racks")
    m.add(sum(racks) >= 0, lp_name("toy_def", "R1"))


TOY = Family("toy", _toy, (add_count_variables,), {"toy_cap": LimitRows(LimitKind.pod_racks)})


def test_a_toy_family_declared_in_one_place_is_built_recorded_written_and_relaxed(tmp_path) -> None:
    """One declaration (here, in this file) and the family is in the build, its labelled block, the
    LP file, the limits the explainer and the plan read, and the elastic model's slacks."""
    from planner.model import write_lp

    m = build(golden_scenario(), families=(*FAMILIES, TOY))
    assert list(m.blocks["toy"]) == ["toy_cap(R1)", "toy_def(R1)"]
    assert m.limits[LimitKey("toy_cap", "R1")].kind == LimitKind.pod_racks
    lp = tmp_path / "m.lp"
    write_lp(m, lp)
    assert "\\ family toy: 2 rows\ntoy_cap(R1):" in lp.read_text()
    elastic = build(golden_scenario(), elastic=True, families=(*FAMILIES, TOY))
    assert LimitKey("toy_cap", "R1") in elastic.slack


def test_a_limit_its_family_does_not_declare_is_refused() -> None:
    bad = Family("bad", _toy, (add_count_variables,), {})
    with pytest.raises(OrderError, match="the bad family states toy_cap limits it does not declare"):
        build(golden_scenario(), families=(*FAMILIES, bad))
