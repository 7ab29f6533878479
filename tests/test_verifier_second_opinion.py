"""The verifier's own fabric sizing and reliability asks (planner/verifier/fabric_recount.py, asks_recount.py) are
written apart from the optimiser's (planner/rules/fabric_sizing.py, planner/input/asks.py); on random designs, rack mixes and
clusters the two must agree figure for figure, or one of them is wrong."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.input import asks
from planner.input.loader import scenario_from_data
from planner.rules import fabric_sizing as opt
from planner.schema import PlacedRack
from planner.verifier import asks_recount as ver_asks
from planner.verifier import fabric_recount as ver
from tests.conftest import small_hall_data

RACKS = ["grand-teton-h100", "dgx-h100-4", "gb200-nvl72"]


@st.composite
def designs(draw):
    tiers = draw(st.sampled_from([2, 3]))
    kind = draw(st.sampled_from(["infiniband", "roce"]))
    pool = ["qm9700"] if kind == "infiniband" else ["sn5600", "minipack2", "arista-7800"]
    leaf_in_rack = kind == "roce" and draw(st.booleans())
    switches = [draw(st.sampled_from(pool)) for _ in range(tiers)]
    if leaf_in_rack:
        switches[0] = "minipack2"
    over = [draw(st.sampled_from([0.5, 1.0, 3.0, 7.0])) for _ in range(tiers - 1)]
    return {"id": "d", "kind": kind, "tiers": tiers, "switches": switches, "oversubscription": over, "leaf_in_rack": leaf_in_rack,
            "rail_optimized": not leaf_in_rack and draw(st.booleans()), "nics_per_gpu": draw(st.sampled_from([1, 2])),
            "rack_units": draw(st.sampled_from([21, 42])), "spines_for": draw(st.sampled_from(["cluster", "largest_build"]))}


@settings(max_examples=150, deadline=None)
@given(designs(), st.lists(st.tuples(st.sampled_from(RACKS), st.sampled_from(["dac", "aec", "mmf", "smf", None]),
                               st.sampled_from(["R01", "R03", "R05", "R08"])), min_size=0, max_size=60))
def test_fabric_sizing_agrees(design: dict, mix: list[tuple[str, str | None, str]]) -> None:
    """planner.rules.fabric_sizing and the verifier's own sizing agree on every figure, racks spread over two pods."""
    data = small_hall_data()
    data["fabrics"] = [design]
    s = scenario_from_data(data)
    racks = [PlacedRack(building="B1", hall="H1", row=row, position=i, x_m=0, y_m=0, rack_type=t, cluster="c", link_class=lc,
                        cable_length_m=1.0) for i, (t, lc, row) in enumerate(mix)]
    row_pod = {r.id: r.pod for b in s.site.buildings for h in b.halls for r in h.rows}
    a, b = opt.size(s, s.fabrics[0], racks), ver.figures(s, s.fabrics[0], racks, row_pod)
    assert (a.endpoints, a.switches, a.leaves_per_pod, a.links, a.optics, a.network_racks, a.max_endpoints, a.max_hops) == (
        b.endpoints, b.switches, b.leaves_per_pod, b.links, b.optics, b.network_racks, b.max_endpoints, b.max_hops)
    assert a.kw == pytest.approx(b.kw, rel=1e-9, abs=1e-9)
    assert a.capex_usd == pytest.approx(b.capex_usd, rel=1e-9, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40_000), st.sampled_from(RACKS), st.floats(0.5, 0.999), st.floats(1, 200), st.floats(0.5, 0.95),
       st.floats(0.01, 4), st.one_of(st.none(), st.floats(0.1, 50)), st.one_of(st.none(), st.floats(1, 5000)),
       st.one_of(st.none(), st.floats(0.5, 20)))
def test_storage_and_spares_agree(gpus, rack, availability, repair_h, target, ckpt, pb, gbps, node_rate) -> None:
    data = small_hall_data()
    c = {"id": "c", "gpus": gpus, "demand": "max", "rack_types": [rack], "spare_availability": availability, "repair_hours": repair_h,
         "checkpoint_gb_per_gpu": ckpt, "restart_min": 5.0}
    if pb is not None:
        c["storage_pb"] = pb
    if gbps is not None:
        c["storage_write_gb_per_s"] = gbps
    data["clusters"] = [c]
    if node_rate is not None:
        data["reliability"] = {"node_failures_per_1000_node_days": node_rate}
    s = scenario_from_data(data)
    cl = s.clusters[0]
    assert ver_asks.spares_wanted(s, cl) == asks.spares_needed(s, cl)
    assert ver_asks.storage_wanted(s, cl) == asks.storage_racks(s, cl)
    with_target = scenario_from_data({**data, "clusters": [{**c, "goodput_target": target}]}) if asks.goodput_reachable(
        s, cl.model_copy(update={"goodput_target": target})) is None else None
    if with_target is not None:
        ct = with_target.clusters[0]
        assert ver_asks.storage_wanted(with_target, ct) == asks.storage_racks(with_target, ct)
