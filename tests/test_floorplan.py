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
    assert Counter(r["label"] for r in recs) == {"empty": 99, "grand-teton-h100": 54, "gb200-nvl72": 3, "network rack": 2, "reserved": 2}
    by_xy = {(r["x"], r["y"]): r for r in recs}
    for rack in plan.racks:
        assert by_xy[rack.x_m, rack.y_m]["label"] == rack.rack_type
    clusters = Counter(r["label"] for r in floor_positions(s, plan, "H1", "cluster"))
    assert (clusters["train-gt"], clusters["nvl-infer"]) == (54, 3)
    assert len(floor_figure(s, plan, "H1").data) == 5


def test_feed_buckets() -> None:
    assert [_bucket(x) for x in (0.2, 0.5, 0.7, 0.9, 1.0, 1.2)] == [
        "feeds ≤ 50% (worst N-1)", "feeds ≤ 50% (worst N-1)", "feeds 50–80%", "feeds 80–95%", "feeds 95–100%", "feeds over limit"]
