"""Plans round-trip through YAML losslessly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.plan import Kpis, PlacedRack, Plan, Usage, plan_from_text, plan_to_yaml

ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}", fullmatch=True)
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
coords = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
pos_floats = st.floats(min_value=0, allow_nan=False, allow_infinity=False)

racks = st.builds(
    PlacedRack,
    building=ids,
    hall=ids,
    row=ids,
    position=st.integers(0, 10_000),
    x_m=coords,
    y_m=coords,
    rack_type=ids,
    cluster=ids,
    link_class=st.none() | ids,
    cable_length_m=st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
usages = st.builds(
    Usage,
    kind=st.sampled_from(["power_node", "cooling_zone", "pod_gpus", "pod_racks", "hall_positions", "budget"]),
    id=ids,
    value=floats,
    limit=floats,
    unit=st.sampled_from(["kW", "GPUs"]),
    worst_value=st.none() | floats,
    worst_failure=st.none() | ids,
)
plans = st.builds(
    Plan,
    planner_version=st.text(max_size=8),
    scenario_name=st.text(max_size=20),
    scenario_hash=st.text("0123456789abcdef", max_size=16),
    solver=st.sampled_from(["highs", "cbc", "greedy", "hand"]),
    status=st.sampled_from(["optimal", "feasible", "infeasible", "time_limit", "not_solved"]),
    objective=st.text(max_size=10),
    objective_value=st.none() | floats,
    bound=st.none() | floats,
    gap=st.none() | pos_floats,
    racks=st.lists(racks, max_size=6),
    kpis=st.builds(Kpis, gpus=st.integers(0, 10**6), it_kw=floats, capex_usd=floats),
    utilisation=st.lists(usages, max_size=4),
    notes=st.lists(st.text(max_size=40), max_size=3),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(plans)
def test_load_dump_is_identity(plan: Plan) -> None:
    assert plan_from_text(plan_to_yaml(plan)) == plan


def test_unknown_plan_key_is_named() -> None:
    from planner.errors import InputError

    text = (
        "scenario_name: s\nracks:\n- {building: B1, hall: H1, row: R1, position: 0, x_m: 0, y_m: 0, "
        "rack_type: t, cluster: c, cable_length_m: 1, colour: red}\n"
    )
    with pytest.raises(InputError) as err:
        plan_from_text(text)
    assert [str(p) for p in err.value.problems] == [
        "racks[0].colour: unknown key 'colour' (allowed: building, hall, row, position, x_m, y_m, "
        "rack_type, cluster, link_class, cable_length_m, phase, existing, spare, retired)"
    ]


def test_failed_write_keeps_the_old_plan(tmp_path, monkeypatch) -> None:
    """A write that fails half-way (full disk at fsync) leaves the old file whole and no temp file."""
    import errno
    import os

    from planner.fileio import WriteError, atomic_write

    target = tmp_path / "plan.yaml"
    target.write_text("old: plan\n")

    def full_disk(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(WriteError) as got:
        atomic_write(target, "new: " + "x" * 100_000)
    assert got.value.render() == f"cannot write {target}: No space left on device"
    assert target.read_text() == "old: plan\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.yaml"]


def test_write_replaces_whole(tmp_path) -> None:
    from planner.fileio import atomic_write

    target = tmp_path / "plan.yaml"
    target.write_text("old: plan\n" * 1000)
    atomic_write(target, "new: plan\n")
    assert target.read_text() == "new: plan\n"


def test_a_note_ending_in_a_line_break_keeps_it() -> None:
    """The note "A\\n" looks like a plain word to a pattern anchored with ``$`` (it matches before a
    final line break); written plain, it would come back as "A"."""
    plan = Plan(scenario_name="", notes=["A\n", "B"])
    text = plan_to_yaml(plan)
    assert '- "A\\n"' in text
    assert plan_from_text(text).notes == ["A\n", "B"]
