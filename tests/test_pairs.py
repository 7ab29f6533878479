"""Pairs of buildings solved again together (planner.scale.pairs), on a site small enough to derive
by hand: two buildings of one pod, each with 4 positions for a 16-GPU Grand Teton rack (a row of 5,
the pod's network rack at the third)."""

from __future__ import annotations

import pytest

from planner.clock import Deadline
from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import scenario_from_data
from planner.input.site_index import index_site, place
from planner.input.variants import scenario_data
from planner.plan import Plan
from planner.scale.building_most import building_most
from planner.scale.joined import _join
from planner.scale.pairs import Pairs, pairs_apply
from planner.scale.proposals import groups_of, proposals
from planner.verifier import verify

GT = "grand-teton-h100"
SITE = generate_site(
    SiteSpec(
        id="pair",
        buildings=[BuildingSpec(count=2, halls=1, pods_per_hall=1, rows_per_pod=1, positions_per_row=5)],
    )
)
CLUSTERS = [
    {"id": "small", "demand": "exact", "gpus": 32, "rack_types": [GT], "max_hops": 3},
    {"id": "big1", "demand": "max", "gpus": 64, "rack_types": [GT], "max_hops": 5},
    {"id": "big2", "demand": "max", "gpus": 32, "rack_types": [GT], "max_hops": 5},
]
SERIAL = {"executor": "serial", "workers": 1, "scheduler": None}


def scenario(**extra):
    return scenario_from_data(
        {
            "name": "pair",
            "site": SITE.model_dump(mode="json"),
            "clusters": CLUSTERS,
            "solver": {"time_limit_s": 60, "rel_gap": 0},
            **extra,
        }
    )


def poor(s) -> dict[str, Plan]:
    """The split a master misjudging room could give: B1 holds small (2 racks) and big1 (2 of the 4
    racks it wants), B2 holds big2 (2 racks) and keeps 2 positions free: 6 racks, 96 GPUs."""
    ix = index_site(s.site)
    t = s.catalog.by_id()[GT]
    at = {"B1": [0, 1, 3, 4], "B2": [0, 1]}
    who = {"B1": ["small", "small", "big1", "big1"], "B2": ["big2", "big2"]}
    return {
        b: Plan(
            scenario_name=s.name,
            status="feasible",
            racks=[
                place(ix, f"{b}-H1-P1-R01", i, t, c, None, False) for i, c in zip(at[b], who[b], strict=True)
            ],
        )
        for b in at
    }


def test_a_pair_solved_as_one_moves_the_exact_job_to_the_building_with_room() -> None:
    """By hand: every cluster asks 32 + 64 + 32 = 128 GPUs = 8 racks = every position. big1 needs a
    building of its own for all 4 racks (scope building), so small and big2 share the other: 128 GPUs,
    +32 on the poor split (B1 short 32 for big1, B2 room 2 × 16 = 32); the joined plan verifies and
    meets its merged bound (128), so it is optimal."""
    s = scenario()
    assert pairs_apply(s)
    data = scenario_data(s)
    groups = groups_of(s, data)
    pairs = Pairs(s, data, groups, proposals(s, groups, ["B1", "B2"]))
    final = poor(s)
    assert pairs.shortfalls(final) == {"B1": {"big1": 32}}
    assert pairs.rooms(final)["B2"]["big1"] == 32
    assert pairs.pick(final, 1) == [("B1", "B2")]
    said: list[str] = []
    d = _join(
        s,
        final,
        1,
        Deadline(60),
        {},
        said.append,
        False,
        lambda f, ok, _most: pairs.improve(f, Deadline(60), SERIAL, said.append, ok),
    )
    assert verify(d.plan, s).ok
    got = {c["id"]: sum(16 for r in d.plan.racks if r.cluster == c["id"]) for c in CLUSTERS}
    assert got == {"small": 32, "big1": 64, "big2": 32}
    assert {r.building for r in d.plan.racks if r.cluster == "big1"} != {
        r.building for r in d.plan.racks if r.cluster == "small"
    }
    assert (d.plan.kpis.gpus, d.plan.bound, d.plan.status) == (128, 128, "optimal")
    assert said[0] == "joined 2 building plans (96): bound from the merged relaxation"
    assert [m for m in said if m.startswith("pairs:")] == [
        "pairs: wave 1: 1 pair(s) of buildings solved as one, 54 s each",
        "pairs: wave 1: +32 on the objective",
    ]
    assert (
        pairs.pick(
            d_final := {
                b: Plan(scenario_name=s.name, racks=[r for r in d.plan.racks if r.building == b])
                for b in ("B1", "B2")
            },
            1,
        )
        == []
    )
    assert pairs.shortfalls(d_final) == {}


def test_a_pair_plan_no_better_than_what_stands_is_not_taken() -> None:
    """The optimal split already stands: the pair is estimated to gain nothing, no wave runs and the
    plans come back as they were."""
    s = scenario()
    data = scenario_data(s)
    groups = groups_of(s, data)
    pairs = Pairs(s, data, groups, proposals(s, groups, ["B1", "B2"]))
    ix, t = index_site(s.site), s.catalog.by_id()[GT]
    row = {"B1": "B1-H1-P1-R01", "B2": "B2-H1-P1-R01"}
    best = {
        "B1": Plan(
            scenario_name=s.name,
            racks=[place(ix, row["B1"], i, t, "big1", None, False) for i in (0, 1, 3, 4)],
        ),
        "B2": Plan(
            scenario_name=s.name,
            racks=[
                place(ix, row["B2"], i, t, c, None, False)
                for i, c in zip((0, 1, 3, 4), ("small",) * 2 + ("big2",) * 2, strict=True)
            ],
        ),
    }
    said: list[str] = []
    assert pairs.improve(best, Deadline(60), SERIAL, said.append) == best
    assert said == []
    # and a pair plan with fewer GPUs than the two plans it would replace is refused
    worse = Plan(
        scenario_name="x",
        status="feasible",
        objective_value=96,
        racks=poor(s)["B1"].racks + poor(s)["B2"].racks,
    )
    kept = dict(best)
    assert pairs.accept(kept, "B1", "B2", worse) == 0.0
    assert kept == best


def test_pair_plans_the_whole_rejects_leave_the_plans_as_they_were() -> None:
    """An improvement whose joined plan fails verification (here: a rack put on B2's network rack
    position) is dropped: the joined plan is the one the buildings' own plans make, and it verifies."""
    s = scenario()
    final = poor(s)
    ix, t = index_site(s.site), s.catalog.by_id()[GT]
    broken = {
        **final,
        "B2": Plan(
            scenario_name=s.name,
            racks=[*final["B2"].racks, place(ix, "B2-H1-P1-R01", 2, t, "big2", None, False)],
        ),
    }
    d = _join(s, final, 1, Deadline(60), {}, lambda _m: None, False, lambda f, ok, _most: broken)
    assert verify(d.plan, s).ok
    assert d.plan.kpis.gpus == 96


@pytest.mark.parametrize(
    "extra",
    [
        {"objective": "min_capex"},
        {"budgets": {"it_power_kw": 500}},
        {"budgets": {"capex_usd": 1e9}},
    ],
)
def test_pairs_are_left_out_where_buildings_are_coupled_or_nothing_is_short(extra: dict) -> None:
    """A minimising objective has no "as many as fit" shortfall to recover; a site budget couples
    every building, so two buildings' plans are not theirs alone to change."""
    assert not pairs_apply(scenario(**extra))


def test_the_decomposition_solves_a_pair_again_when_the_master_misjudges_room(monkeypatch) -> None:
    """End to end through ``plan_decomposed``: a master that gives B1 small and big1 and B2 big2
    (the poor split above: 96 GPUs joined, merged bound 128) is followed by the pair B1+B2 solved as
    one, which reaches the bound: 128 GPUs, optimal, verified, the pair stage timed and said."""
    from planner.scale import rounds
    from planner.scale.decompose import plan_decomposed

    whole = {("small", "B1"): 1, ("big1", "B1"): 1, ("big2", "B2"): 1}
    alloc = {("small", "B1"): 32.0, ("big1", "B1"): 64.0, ("big2", "B2"): 32.0}
    use = {b: {"kw": 0.0, "capex": 0.0} for b in ("B1", "B2")}
    monkeypatch.setattr(rounds, "_master", lambda *a, **k: (alloc, whole, use))
    s = scenario()
    said: list[str] = []
    d = plan_decomposed(s, time_limit_s=60, progress=said.append)
    assert verify(d.plan, s).ok
    assert (d.plan.kpis.gpus, d.plan.bound, d.plan.status, d.fell_back) == (128, 128, "optimal", None)
    assert "joined 2 building plans (96): bound from the merged relaxation" in said
    assert "pairs: wave 1: +32 on the objective" in said
    assert d.stages["pairs_s"] > 0


def test_with_the_most_each_building_holds_a_swap_is_estimated_and_taken() -> None:
    """The poor split, with the most each building holds (4 racks: 64 GPUs each) known. B1 is full
    (64 of 64), B2 holds 32: big1 can grow only by changing building. Moving whole to B2 it could
    have the most B2 holds of its types (64) within B2's free 32 and the 32 of big2, which can move
    to the room big1 leaves in B1: 64 − 32 = +32. B2 has no growing cluster (big2 is at its
    figure). So the pair is estimated at +32 and picked; once big1 has its 64 nothing grows."""
    s = scenario()
    data = scenario_data(s)
    groups = groups_of(s, data)
    most = building_most(s, Deadline(60))
    assert most == {("B1", (GT,)): 64, ("B2", (GT,)): 64}
    pairs = Pairs(s, data, groups, proposals(s, groups, ["B1", "B2"]), most)
    final = poor(s)
    held, grow, move = pairs.wants(final)
    assert (held, dict(grow)) == ({"B1": 64, "B2": 32}, {"B1": [("big1", (GT,), 32, 64)]})
    assert pairs.one_way(held, grow, move, "B1", "B2") == 32
    assert pairs.one_way(held, grow, move, "B2", "B1") == 0
    assert pairs.pick(final, 1) == [("B1", "B2")]
    better = pairs.improve(final, Deadline(60), SERIAL, lambda _m: None)
    got = {
        c["id"]: sum(16 for p in better.values() for r in p.racks if r.cluster == c["id"]) for c in CLUSTERS
    }
    assert got == {"small": 32, "big1": 64, "big2": 32}
    assert pairs.pick(better, 1) == []


def test_a_share_of_a_job_spanning_buildings_stays_at_what_it_has_in_a_pair() -> None:
    """A job spanning the site (max_hops 7, as many as fit up to 64) holds 2 racks in B1 beside
    small; B2 holds big1 at 2 of its 4 racks and 2 free positions. The pair is no longer left out
    for the spanning share: solved as one, with the share held at its 32 GPUs, big1 takes B2's free
    positions: +32, 128 GPUs, the spanning job still at 32 and the joined plan verified."""
    span = {"id": "span", "demand": "max", "gpus": 64, "rack_types": [GT], "max_hops": 7}
    s = scenario_from_data(
        {
            "name": "pair",
            "site": SITE.model_dump(mode="json"),
            "clusters": [CLUSTERS[0], CLUSTERS[1], span],
            "solver": {"time_limit_s": 60, "rel_gap": 0},
        }
    )
    ix, t = index_site(s.site), s.catalog.by_id()[GT]
    final = {
        "B1": Plan(
            scenario_name=s.name,
            racks=[
                place(ix, "B1-H1-P1-R01", i, t, c, None, False)
                for i, c in zip((0, 1, 3, 4), ("small",) * 2 + ("span",) * 2, strict=True)
            ],
        ),
        "B2": Plan(
            scenario_name=s.name, racks=[place(ix, "B2-H1-P1-R01", i, t, "big1", None, False) for i in (0, 1)]
        ),
    }
    data = scenario_data(s)
    groups = groups_of(s, data)
    pairs = Pairs(s, data, groups, proposals(s, groups, ["B1", "B2"]), building_most(s, Deadline(60)))
    assert not pairs.pinned
    sub = pairs.pair_data(final, "B1", "B2")
    assert {c["id"]: c.get("gpus") for c in sub["clusters"]} == {"big1": 64, "small": 32, "span": 32}
    d = _join(
        s,
        final,
        1,
        Deadline(60),
        {},
        lambda _m: None,
        False,
        lambda f, ok, most: pairs.improve(f, Deadline(60), SERIAL, lambda _m: None, ok),
    )
    assert verify(d.plan, s).ok
    got = {c: sum(16 for r in d.plan.racks if r.cluster == c) for c in ("small", "big1", "span")}
    assert (got, d.plan.kpis.gpus) == ({"small": 32, "big1": 64, "span": 32}, 128)
