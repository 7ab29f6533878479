"""The region tier (§13): buildings' fabrics joined by an aggregation tier, fibre by distance,
propagation delay within a cluster's latency budget; hand-counted on two small buildings 3 km apart."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import scenario_from_data
from planner.rules.fabric_sizing import size
from planner.schema import PlacedRack, Scenario

GT = "grand-teton-h100"
IB2 = {
    "id": "ib2",
    "kind": "infiniband",
    "tiers": 2,
    "switches": ["qm9700", "qm9700"],
    "oversubscription": [1.0],
}


def two_buildings(max_latency_us: float | None = None, region: bool = True) -> Scenario:
    """Two buildings 3 km apart, each one pod of 2 rows × 4 positions (64 GPU ports), a 4-position
    pod network row and a 4-position building network row (100 kW each, 40 kW racks); the region
    tier (432 × 800G chassis, 4.5:1) stands in B1."""
    site = generate_site(
        SiteSpec(
            id="two",
            building_spacing_km=3,
            buildings=[
                BuildingSpec(
                    count=2,
                    rows_per_pod=2,
                    positions_per_row=4,
                    pod_max_gpus=64,
                    network_rows_per_pod=1,
                    network_row_positions=4,
                    network_row_kw=100,
                    network_rack_max_kw=40,
                    building_network_rows=1,
                )
            ],
        )
    )
    cluster = {
        "id": "job",
        "demand": "max",
        "gpus": 128,
        "rack_types": [GT],
        "max_hops": 7,
        "fabrics": ["ib2"],
    }
    if max_latency_us is not None:
        cluster["max_latency_us"] = max_latency_us
    data = {
        "name": "two",
        "site": site.model_dump(mode="json", exclude_none=True),
        "fabrics": [IB2],
        "clusters": [cluster],
    }
    if region:
        data["region_tier"] = {"switch": "bag-chassis", "building": "B1"}
    return scenario_from_data(data)


def racks_in(building: str, n: int) -> list[PlacedRack]:
    return [
        PlacedRack(
            building=building,
            hall=f"{building}-H1",
            row=f"{building}-H1-P1-R01",
            position=i,
            x_m=0,
            y_m=0,
            rack_type=GT,
            cluster="job",
            link_class="dac",
            cable_length_m=1.0,
        )
        for i in range(n)
    ]


def test_region_tier_switches_fibre_and_latency_for_two_buildings() -> None:
    """64 endpoints per building (4 racks). Each building's tree: ⌈64/32⌉ = 2 leaves, 2·32/64 = 1
    spine. Up to the tier: ⌈64 · 400G / (4.5 · 800G)⌉ = ⌈7.1⌉ = 8 links per building, on
    ⌈8/64⌉ = 1 more spine each; ⌈16/432⌉ = 1 tier chassis. Fibre: B1's 8 links run 0 km (the tier is
    in B1), B2's 8 run 3 km = 24 km; delay B1-B2 3 km × 5 µs = 15 µs; hops 3 + 2 = 5."""
    s = two_buildings()
    z = size(s, s.fabrics[0], racks_in("B1", 4) + racks_in("B2", 4))
    assert (z.switches, z.region_links, z.region_switches) == ([4, 4], 16, 1)
    assert z.per_building == {"B1": [2, 2], "B2": [2, 2]}
    assert (z.fibre_km, z.latency_us, z.max_hops) == (24.0, 15.0, 5)
    assert z.endpoints_by_building == {"B1": 64, "B2": 64}
    one = size(s, s.fabrics[0], racks_in("B2", 4))
    assert (one.switches, one.region_links, one.latency_us) == ([2, 1], 0, 0.0)


def test_the_region_tier_is_priced_and_powered() -> None:
    """Joined minus the two separate trees: 2 border QM9700 ($43,000, 1.1 kW), 1 chassis
    ($2.6M, 24 kW), 16 links of the longest class (single-mode: $2,400, 24 W each) and 24 km of
    fibre at $1,500 per km."""
    s = two_buildings()
    both = size(s, s.fabrics[0], racks_in("B1", 4) + racks_in("B2", 4))
    parts = [size(s, s.fabrics[0], racks_in(b, 4)) for b in ("B1", "B2")]
    assert both.capex_usd - sum(p.capex_usd for p in parts) == pytest.approx(
        2 * 43_000 + 2_600_000 + 16 * 2_400 + 24 * 1_500
    )
    assert both.kw - sum(p.kw for p in parts) == pytest.approx(2 * 1.1 + 24 + 16 * 0.024)


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_a_latency_budget_decides_whether_the_job_spans(solver: str) -> None:
    """128 GPUs wanted, 64 per building (the pods' ports): within 20 µs the job spans both
    buildings through the tier (15 µs, the chassis in a network row of B1); within 10 µs it stays in
    one building: 64 GPUs, no region tier."""
    from tests.test_optimize import solved

    wide = solved(two_buildings(20), solver)
    f = wide.fabric[0]
    assert (wide.kpis.gpus, f.region_switches, f.latency_us, f.fibre_km) == (128, 1, 15.0, 24.0)
    hub = [nr for nr in wide.network_racks if any(c.tier == 4 for c in nr.switches)]
    assert [(nr.building, nr.switches[0].count) for nr in hub] == [
        ("B1", 1)
    ]  # any network row of the tier's building
    near = solved(two_buildings(10), solver)
    assert (near.kpis.gpus, near.fabric[0].region_switches, near.fabric[0].latency_us) == (64, 0, 0.0)
    assert len({r.building for r in near.racks}) == 1


def test_without_a_region_tier_a_designed_cluster_stays_in_one_building() -> None:
    from planner.plan.pipeline import plan_scenario

    plan = plan_scenario(two_buildings(region=False))
    assert plan.kpis.gpus == 64
    assert len({r.building for r in plan.racks}) == 1


def test_region_tier_errors_name_the_field() -> None:
    from planner.errors import InputError

    s = two_buildings()
    data = s.model_dump(mode="json", exclude_none=True)
    data["region_tier"] = {"switch": "nope", "building": "B9"}
    with pytest.raises(InputError) as err:
        scenario_from_data(data)
    assert err.value.lines() == [
        "region_tier.switch: unknown switch 'nope' (known: arista-7800, bag-chassis, minipack2, minipack3, "
        "qm9700, sn5600)",
        "region_tier.building: unknown building 'B9' (known: B1, B2)",
    ]
    data.pop("region_tier")
    data["clusters"][0]["max_latency_us"] = 5
    with pytest.raises(InputError) as err:
        scenario_from_data(data)
    assert err.value.lines() == [
        "clusters[0].max_latency_us: a latency budget needs a region tier (region_tier:): without one a "
        "cluster on a "
        "designed fabric stays in one building"
    ]


def test_verifier_rejects_a_job_over_its_latency_budget() -> None:
    from planner.plan.pipeline import plan_scenario
    from planner.verifier import verify

    plan = plan_scenario(two_buildings(20))
    tight = two_buildings(12)
    got = [str(v) for v in verify(plan, tight).violations]
    assert "cluster job: 15.0 µs of fibre between its farthest buildings, max_latency_us 12.0" in got


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["B1", "B2"]),
            st.sampled_from([GT, "dgx-h100-4"]),
            st.sampled_from(["dac", "aec", "mmf"]),
        ),
        min_size=0,
        max_size=16,
    ),
    st.sampled_from([1.0, 2.0, 4.5, 9.0]),
    st.sampled_from(["B1", "B2"]),
    st.booleans(),
)
def test_region_sizing_agrees_with_the_verifier(mix, ratio: float, hub: str, largest: bool) -> None:
    """planner.rules.fabric_sizing and the verifier's own sizing agree on every figure of joined trees."""
    from planner.rules import fabric_sizing as opt
    from planner.verifier import fabric_recount as ver

    base = two_buildings()
    s = base.model_copy(
        update={
            "region_tier": base.region_tier.model_copy(update={"oversubscription": ratio, "building": hub}),
            "fabrics": [
                base.fabrics[0].model_copy(update={"spines_for": "largest_build" if largest else "cluster"})
            ],
        }
    )
    racks = [
        PlacedRack(
            building=b,
            hall=f"{b}-H1",
            row=f"{b}-H1-P1-R0{1 + i % 2}",
            position=i,
            x_m=0,
            y_m=0,
            rack_type=t,
            cluster="job",
            link_class=lc,
            cable_length_m=1.0,
        )
        for i, (b, t, lc) in enumerate(mix)
    ]
    row_pod = {r.id: r.pod for b in s.site.buildings for h in b.halls for r in h.rows}
    a, w = opt.size(s, s.fabrics[0], racks), ver.figures(s, s.fabrics[0], racks, row_pod)
    assert (
        a.endpoints,
        a.switches,
        a.leaves_per_pod,
        a.links,
        a.optics,
        a.network_racks,
        a.max_endpoints,
        a.max_hops,
        a.endpoints_by_building,
        a.region_links,
        a.region_switches,
    ) == (
        w.endpoints,
        w.switches,
        w.leaves_per_pod,
        w.links,
        w.optics,
        w.network_racks,
        w.max_endpoints,
        w.max_hops,
        w.endpoints_by_building,
        w.region_links,
        w.region_switches,
    )
    assert (a.kw, a.capex_usd, a.fibre_km, a.latency_us) == pytest.approx(
        (w.kw, w.capex_usd, w.fibre_km, w.latency_us), rel=1e-9, abs=1e-9
    )
    if len(a.endpoints_by_building) > 1:
        assert a.per_building == w.per_building


def _capped(tbps: float) -> Scenario:
    """two_buildings(20) with the bandwidth between B2 and the tier (in B1) capped at ``tbps``."""
    s = two_buildings(20)
    return s.model_copy(
        update={"region_tier": s.region_tier.model_copy(update={"building_tbps": {"B2": tbps}})}
    )


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_the_bandwidth_between_two_buildings_holds_a_spanning_job_back(solver: str) -> None:
    """4.8 Tb/s between B2 and the tier: 6 links of 800G, each carrying 4.5 × 800 / 400 = 9 endpoints,
    so B2 sends at most 54 endpoints: 3 Grand Teton racks (48 GPUs, ⌈48/9⌉ = 6 links = 4.8 Tb/s; 4
    racks would need ⌈64/9⌉ = 8 links, 6.4 Tb/s). The job spans with 64 + 48 = 112 GPUs (128
    without the limit); the limit is named ``region_bw(B2)``, used 4.8 of 4.8 Tb/s. Unlimited B1 (the
    tier's own building) keeps its 64."""
    from tests.test_optimize import solved

    plan = solved(_capped(4.8), solver)
    assert plan.kpis.gpus == 112
    by_b = {b: sum(16 for r in plan.racks if r.building == b) for b in ("B1", "B2")}
    assert by_b == {"B1": 64, "B2": 48}
    use = {(u.kind, u.id): u for u in plan.utilisation}
    bw = use["region_bandwidth", "B2"]
    assert (bw.value, bw.limit, bw.unit) == (pytest.approx(4.8), 4.8, "Tb/s")


def test_explain_names_the_bandwidth_to_the_tier() -> None:
    """The 4.8 Tb/s of B2 is full; +10 % (0.5 Tb/s) is short of a seventh 800G link: no gain."""
    from planner.explainer import explain_feasible
    from planner.plan.pipeline import plan_scenario

    s = _capped(4.8)
    lines = explain_feasible(s, plan_scenario(s)).render().splitlines()
    assert (
        "  - region bandwidth B2: 4.8 of 4.8 Tb/s used (100.0%); B2 +0.5 Tb/s to the region tier → +0 GPUs"
        in lines
    )


def test_the_verifier_refuses_links_beyond_the_bandwidth_to_the_tier() -> None:
    """The unlimited plan's 4 racks in B2 (⌈64/9⌉ = 8 links = 6.4 Tb/s) against 4.8 Tb/s."""
    from planner.plan.pipeline import plan_scenario
    from planner.verifier import verify

    plan = plan_scenario(two_buildings(20))
    got = [str(v) for v in verify(plan, _capped(4.8)).violations]
    assert "region bandwidth B2: 6.4 Tb/s of region links from B2, the tier gives it 4.8 Tb/s" in got


def test_an_unknown_building_in_the_tier_bandwidth_is_named() -> None:
    from planner.errors import InputError

    data = _capped(4.8).model_dump(mode="json", exclude_none=True)
    data["region_tier"]["building_tbps"] = {"B9": 1.0}
    with pytest.raises(InputError) as err:
        scenario_from_data(data)
    assert err.value.lines() == ["region_tier.building_tbps.B9: unknown building 'B9' (known: B1, B2)"]
