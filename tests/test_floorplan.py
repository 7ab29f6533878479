"""Floor plan records: every position at its site coordinates, labelled as the plan says."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from planner import load_scenario, plan_scenario
from ui.floorplan import _bucket, floor_figure, floor_positions

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


def test_small_hall_floor_records() -> None:
    s = load_scenario(DATASETS / "small-hall.yaml")
    plan = plan_scenario(s)
    recs = floor_positions(s, plan, "H1")
    assert len(recs) == 160
    assert Counter(r["label"] for r in recs) == {
        "empty": 99,
        "grand-teton-h100": 54,
        "gb200-nvl72": 3,
        "network rack": 2,
        "reserved": 2,
    }
    by_xy = {(r["x"], r["y"]): r for r in recs}
    for rack in plan.racks:
        assert by_xy[rack.x_m, rack.y_m]["label"] == rack.rack_type
    clusters = Counter(r["label"] for r in floor_positions(s, plan, "H1", "cluster"))
    assert (clusters["train-gt"], clusters["nvl-infer"]) == (54, 3)
    assert len(floor_figure(s, plan, "H1").data) == 5


def test_feed_buckets() -> None:
    assert [_bucket(x) for x in (0.2, 0.5, 0.7, 0.9, 1.0, 1.2)] == [
        "feeds ≤ 50% (worst N-1)",
        "feeds ≤ 50% (worst N-1)",
        "feeds 50–80%",
        "feeds 80–95%",
        "feeds 95–100%",
        "feeds over limit",
    ]


def test_rows_are_named_on_the_axis_they_stack_on() -> None:
    from ui.floorplan import row_ticks

    s = load_scenario(DATASETS / "small-hall.yaml")
    # small-hall by hand: R01..R08 run along x, 2.4 m apart from y = 1.2 m
    assert row_ticks(s, "H1") == (
        "y",
        [1.2, 3.6, 6.0, 8.4, 10.8, 13.2, 15.6, 18.0],
        [f"R0{i}" for i in range(1, 9)],
    )
    axis, vals, texts = row_ticks(load_scenario(DATASETS / "region-100k.yaml"), "B1-H1")
    assert (axis, len(vals), texts[0]) == ("y", 12, "R01 ×4")  # 48 rows: 12 lines of 4 pods side by side


def test_a_hall_of_800_positions_keeps_its_squares_apart() -> None:
    from ui.floorplan import MIN_PITCH_PX, hall_scale

    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    assert sum(r.positions for r in s.site.buildings[0].halls[0].rows) == 880
    scale = hall_scale(s, "B1-H1")
    # 50 m wide at <= 1,200 px and 0.6 m pitch: 20 px per m, so 12 px between squares, squares 9.6 px
    assert scale["marker"] >= MIN_PITCH_PX * 0.8
    assert scale["marker"] == 9.6


def test_the_site_map_puts_buildings_side_by_side_with_their_halls() -> None:
    from ui.sitemap import tile_layout

    where = tile_layout(load_scenario(DATASETS / "region-100k.yaml"))
    # four buildings of two halls: a 2-column grid each, one empty column between buildings
    assert where == {
        "B1-H1": (0, 0),
        "B1-H2": (1, 0),
        "B2-H1": (3, 0),
        "B2-H2": (4, 0),
        "B3-H1": (6, 0),
        "B3-H2": (7, 0),
        "B4-H1": (9, 0),
        "B4-H2": (10, 0),
    }
