"""The verifier's own fabric sizing and reliability asks (planner/verifier/fabric_recount.py, asks_recount.py)
are
written apart from the optimiser's (planner/rules/fabric_sizing.py, planner/input/asks.py); on random designs,
rack mixes and
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
    return {
        "id": "d",
        "kind": kind,
        "tiers": tiers,
        "switches": switches,
        "oversubscription": over,
        "leaf_in_rack": leaf_in_rack,
        "rail_optimized": not leaf_in_rack and draw(st.booleans()),
        "nics_per_gpu": draw(st.sampled_from([1, 2])),
        "rack_units": draw(st.sampled_from([21, 42])),
        "spines_for": draw(st.sampled_from(["cluster", "largest_build"])),
    }


@settings(max_examples=150, deadline=None)
@given(
    designs(),
    st.lists(
        st.tuples(
            st.sampled_from(RACKS),
            st.sampled_from(["dac", "aec", "mmf", "smf", None]),
            st.sampled_from(["R01", "R03", "R05", "R08"]),
        ),
        min_size=0,
        max_size=60,
    ),
)
def test_fabric_sizing_agrees(design: dict, mix: list[tuple[str, str | None, str]]) -> None:
    """planner.rules.fabric_sizing and the verifier's own sizing agree on every figure, racks spread over two
    pods."""
    data = small_hall_data()
    data["fabrics"] = [design]
    s = scenario_from_data(data)
    racks = [
        PlacedRack(
            building="B1",
            hall="H1",
            row=row,
            position=i,
            x_m=0,
            y_m=0,
            rack_type=t,
            cluster="c",
            link_class=lc,
            cable_length_m=1.0,
        )
        for i, (t, lc, row) in enumerate(mix)
    ]
    row_pod = {r.id: r.pod for b in s.site.buildings for h in b.halls for r in h.rows}
    a, b = opt.size(s, s.fabrics[0], racks), ver.figures(s, s.fabrics[0], racks, row_pod)
    assert (
        a.endpoints,
        a.switches,
        a.leaves_per_pod,
        a.links,
        a.optics,
        a.network_racks,
        a.max_endpoints,
        a.max_hops,
    ) == (
        b.endpoints,
        b.switches,
        b.leaves_per_pod,
        b.links,
        b.optics,
        b.network_racks,
        b.max_endpoints,
        b.max_hops,
    )
    assert a.kw == pytest.approx(b.kw, rel=1e-9, abs=1e-9)
    assert a.capex_usd == pytest.approx(b.capex_usd, rel=1e-9, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 40_000),
    st.sampled_from(RACKS),
    st.floats(0.5, 0.999),
    st.floats(1, 200),
    st.floats(0.5, 0.95),
    st.floats(0.01, 4),
    st.one_of(st.none(), st.floats(0.1, 50)),
    st.one_of(st.none(), st.floats(1, 5000)),
    st.one_of(st.none(), st.floats(0.5, 20)),
)
def test_storage_and_spares_agree(
    gpus, rack, availability, repair_h, target, ckpt, pb, gbps, node_rate
) -> None:
    data = small_hall_data()
    c = {
        "id": "c",
        "gpus": gpus,
        "demand": "max",
        "rack_types": [rack],
        "spare_availability": availability,
        "repair_hours": repair_h,
        "checkpoint_gb_per_gpu": ckpt,
        "restart_min": 5.0,
    }
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
    with_target = (
        scenario_from_data({**data, "clusters": [{**c, "goodput_target": target}]})
        if asks.goodput_reachable(s, cl.model_copy(update={"goodput_target": target})) is None
        else None
    )
    if with_target is not None:
        ct = with_target.clusters[0]
        assert ver_asks.storage_wanted(with_target, ct) == asks.storage_racks(with_target, ct)


# ---------------------------------------------------------------- figures: KPIs, costs, rules

from functools import cache  # noqa: E402

from planner.input.loader import load_scenario  # noqa: E402
from planner.plan import kpis as opt_kpis  # noqa: E402
from planner.plan.orders import order_book  # noqa: E402
from planner.plan.pipeline import plan_scenario  # noqa: E402
from planner.rules import costs as opt_costs  # noqa: E402
from planner.verifier import kpis_recount, rules_recount  # noqa: E402

FIGURE_SCENARIOS = ["small-hall", "hall-refresh", "fleet-expansion", "dr-hall-flex"]
"""Shipped scenarios whose plans carry every kind of figure: a hall, service lives and refresh,
phases with retrofits and lead times, a failover policy."""


@cache
def _solved(name: str):
    s = load_scenario(f"datasets/{name}.yaml")
    return s, plan_scenario(s)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FIGURE_SCENARIOS), st.data())
def test_the_verifiers_kpis_agree_with_the_optimisers_on_any_part_of_a_plan(name: str, data) -> None:
    """Any subset of a shipped plan's racks and retrofits: every KPI, the objective, the phase
    summaries and the order book counted both ways agree."""
    s, plan = _solved(name)
    racks = (
        data.draw(
            st.lists(
                st.sampled_from(plan.racks), unique_by=lambda r: (r.row, r.position), max_size=len(plan.racks)
            )
        )
        if plan.racks
        else []
    )
    bought = [(b.id, b.phase) for b in plan.retrofits if data.draw(st.booleans())]
    sub = plan.model_copy(
        update={"racks": racks, "retrofits": [b for b in plan.retrofits if (b.id, b.phase) in bought]}
    )
    want = opt_kpis.compute_kpis(s, racks, bought, {}, plan.network_racks).model_dump()
    got = kpis_recount.recount_kpis(
        s, racks, bought, {}, len(plan.network_racks), opt_kpis.cluster_goodput(s, racks)
    ).model_dump()
    for key, w in want.items():
        assert got[key] == pytest.approx(w, rel=1e-9, abs=0.006), key  # the optimiser rounds USD to cents
    assert kpis_recount.recount_objective(s, racks, bought, {}) == pytest.approx(
        opt_kpis.objective_value(s, racks, bought, {}), rel=1e-9
    )
    assert kpis_recount.recount_phases(s, sub, {}) == opt_kpis.phase_summaries(s, racks, bought, {})
    assert kpis_recount.recount_orders(s, sub) == order_book(s, racks, sub.retrofits)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(FIGURE_SCENARIOS),
    st.one_of(st.none(), st.floats(300, 1200)),
    st.one_of(st.none(), st.floats(0.5, 1.0)),
)
def test_planning_power_agrees(name: str, cap, ratio) -> None:
    s = _solved(name)[0].model_copy(update={"gpu_power_cap_w": cap, "power_budget_ratio": ratio})
    for t in s.catalog.rack_types:
        assert rules_recount.planning_kw(s, t) == pytest.approx(s.rack_power_kw(t), rel=1e-12)
        assert rules_recount.nameplate_kw(s, t) == pytest.approx(t.nameplate_power_kw(cap), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(30, 800), min_size=1, max_size=8), st.floats(0.2, 6.0), st.data())
def test_retirement_arrival_and_standing_agree(gaps: list[int], life: float, data) -> None:
    """Phases ``gaps`` days apart, a service life of ``life`` years, power arriving in random phases."""
    from datetime import date, timedelta

    s, _ = _solved("small-hall")
    starts = [date(2027, 1, 1) + timedelta(days=sum(gaps[:i])) for i in range(len(gaps))]
    phases = [{"id": f"p{i}", "start": d.isoformat()} for i, d in enumerate(starts)]
    t = s.catalog.rack_types[0].id
    steps = [
        {
            "phase": data.draw(st.sampled_from([None, *[p["id"] for p in phases]])),
            "interconnect_mw": data.draw(st.floats(0, 50)),
        }
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    raw = s.model_dump(mode="json")
    raw.update(phases=phases, service_life={t: {"years": life}}, power_arrival=steps)
    s2 = scenario_from_data({k: v for k, v in raw.items() if v is not None})
    for p in phases:
        assert rules_recount.retired_at(s2, t, p["id"]) == s2.retire_index(t, p["id"])
    for i in range(len(phases)):
        assert rules_recount.arrived_kw(s2, i) == pytest.approx(s2.power_available_kw(i), rel=1e-12)
        racks = [
            r.model_copy(
                update={"rack_type": t, "phase": data.draw(st.sampled_from([p["id"] for p in phases]))}
            )
            for r in _solved("small-hall")[1].racks[:6]
        ]
        assert rules_recount.standing_racks(s2, racks, i) == s2.standing(racks, i)
    assert rules_recount.held(s2, s2.existing) == s2.positions_held(s2.existing)


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 30), st.floats(0, 30), st.sampled_from([0.0, 0.03, 0.08, 0.2]))
def test_money_over_time_agrees(t: float, end: float, rate: float) -> None:
    """flow(t, end) = annuity(t, H) − annuity(end, H) for end ≤ H; worth = discount."""
    h = max(t, end) + 1.0
    assert rules_recount.worth(t, rate) == pytest.approx(opt_costs.discount(t, rate), rel=1e-12)
    assert rules_recount.flow(t, end, rate) == pytest.approx(
        max(0.0, opt_costs.annuity(t, h, rate) - opt_costs.annuity(end, h, rate)), rel=1e-9, abs=1e-12
    )


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FIGURE_SCENARIOS), st.data())
def test_the_verifiers_stranded_power_agrees_with_the_optimisers(name: str, data) -> None:
    """Any subset of a shipped plan's racks: the stranded kW per root node and its reason agree
    (both read the use the verifier's capacity checks found)."""
    from planner.verifier import verify
    from planner.verifier.site import site_view
    from planner.verifier.stranded_recount import recount_stranded

    s, plan = _solved(name)
    racks = (
        data.draw(st.lists(st.sampled_from(plan.racks), unique_by=lambda r: (r.row, r.position)))
        if plan.racks
        else []
    )
    usage = verify(plan.model_copy(update={"racks": racks, "kpis": None, "utilisation": None}), s).usage
    assert recount_stranded(s, site_view(s), racks, usage) == opt_kpis.stranded_power(s, racks, usage)


def _backed():
    from tests.test_backup import backed

    return backed()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["small-hall", "dr-hall-flex", "hall-refresh", "backed"]), st.data())
def test_the_verifiers_reliability_report_agrees_with_the_optimisers(name: str, data) -> None:
    """Any subset of a plan's racks (a shedding inference fleet, retired racks, backup power as a
    choice): per-cluster figures, blast radius and backup choice agree, and goodput per cluster."""
    from planner.rules.reliability import cluster_goodput, reliability_report
    from planner.verifier.reliability_recount import recount_goodput, recount_reliability
    from planner.verifier.site import site_view

    if name == "backed":
        s = _backed()
        plan = plan_scenario(s)
    else:
        s, plan = _solved(name)
    racks = (
        data.draw(st.lists(st.sampled_from(plan.racks), unique_by=lambda r: (r.row, r.position)))
        if plan.racks
        else []
    )
    tco = plan.kpis.tco_usd
    want = reliability_report(s, racks, network=plan.network_racks, tco_usd=tco)
    assert recount_reliability(s, site_view(s), racks, plan.network_racks, tco) == want
    assert recount_goodput(s, racks) == pytest.approx(cluster_goodput(s, racks), rel=1e-12)
