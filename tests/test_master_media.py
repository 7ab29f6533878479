"""The decomposition's master (planner/scale/building_master.py) where a building holds racks of
both cooling media: each group's room counts its own medium alone, so one pro-rata capacity row
for all let a liquid job's room crowd out the air racks its positions leave; one row per medium
and the rows of what they share (positions, ports, racks, power, heat) hand both out."""

from __future__ import annotations

import math

import pytest

from planner.enums import Demand, Scope
from planner.scale import building_master
from planner.scale.building_master import _master
from planner.scale.proposals import Group, Proposal, _use
from tests.test_room import SMALL_GT, _scenario

LIQUID = ["gb200-nvl72"]
AIR = ["grand-teton-h100"]


def _groups_and_props(s):
    types = s.catalog.by_id()
    liquid = Group("l", [{"id": "l"}], Demand.at_least, 288, False, 72, LIQUID, Scope.pod)
    air = Group("g", [{"id": "g"}], Demand.max, None, False, 16, AIR, Scope.building)
    props = {
        ("l", "L"): Proposal(2016, 1, most=2016, pods={"P": 2016}, use=_use(s, types["gb200-nvl72"])),
        ("g", "L"): Proposal(512, 1, most=512, use=_use(s, types["grand-teton-h100"])),
    }
    return [liquid, air], props


@pytest.mark.parametrize("split", [True, False])
def test_air_racks_take_the_positions_a_liquid_job_leaves(monkeypatch, split) -> None:
    """One building L of 31 GPU positions and 2,048 GPU ports (power and heat left unbounded):
    an at-least job of 288 on GB200 NVL72 (72 GPUs a rack) whose room there is 2,016 (28 racks),
    and as many Grand Teton GPUs (16 a rack) as fit, whose room alone is 512. One pro-rata row
    (2,016 ÷ 2,016 + g ÷ 512 ≤ 1) gives the liquid job its whole room and the air job nothing:
    2,016. A row per medium and the shared positions (28 + g ÷ 16 ≤ 31: 48) and ports (2,016 + g
    ≤ 2,048: 32) give the air job what the liquid racks leave of both, 32 GPUs: 2,048."""
    s = _scenario(SMALL_GT, [{"id": "x", "demand": "max", "rack_types": AIR, "max_hops": 5}])
    groups, props = _groups_and_props(s)
    if not split:
        monkeypatch.setattr(building_master, "_media_parts", lambda media, gs, shared: [gs])
    room = {"L": {"kw": math.inf, "air": math.inf, "liquid": math.inf, "positions": 31.0, "ports": 2048.0}}
    gpus, _, _ = _master(s, groups, ["L"], props, 10.0, resources=room)
    assert gpus["l", "L"] == pytest.approx(2016)
    assert gpus["g", "L"] == pytest.approx(32 if split else 0)


def test_without_the_shared_rows_one_row_holds_every_medium() -> None:
    """A building without the rows of what the media share (a phased region) keeps one pro-rata
    row for all its groups: the media split alone would let each take its whole room."""
    s = _scenario(SMALL_GT, [{"id": "x", "demand": "max", "rack_types": AIR, "max_hops": 5}])
    groups, _ = _groups_and_props(s)
    media = building_master._media(s, groups)
    assert media == {"l": frozenset({"liquid"}), "g": frozenset({"air"})}
    assert building_master._media_parts(media, groups, False) == [groups]
    assert [[g.id for g in part] for part in building_master._media_parts(media, groups, True)] == [
        ["g"],
        ["l"],
    ]
