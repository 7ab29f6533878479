"""A NetBox kept the way its users keep it (planner/dcim/native.py, netbox_build.py), read
from the NetBox project's own demo data (datasets/netbox-demo/): site MDF (ncsu-065) has 24 racks
R101–R308 in locations Row 1–3, two feeds per rack (primary from one panel, redundant from
another; 220 V single-phase 20 A at 80 %) and switches and servers installed. Every figure below
is derived by hand from the dump, not from the import's output."""

from __future__ import annotations

import pytest

from planner.dcim.rows import export_key, from_export, weight_kg
from planner.dcim.site import site_from_rows
from planner.errors import InputError, SolverFailure
from planner.input.loader import scenario_from_data
from planner.plan.pipeline import plan_scenario
from planner.verifier import verify
from tests.netbox_demo import rows

FEED_KW = 220 * 20 * 0.8 / 1000
"""By hand: one demo feed, 220 V × 20 A × 80 % = 3.52 kW."""
INSTALLED = {("row-1", k) for k in range(2, 8)} | {("row-2", 0)}
"""By hand: R103, R104 hold the core switches, R105–R108 the ToR switches, R201 the Flex system;
positions count from 0 in name order."""

L4 = {
    "id": "l4-server-rack",
    "servers_per_rack": 1,
    "gpus_per_server": 4,
    "gpu_power_w": 72,
    "non_gpu_power_kw_per_server": 0.6,
    "weight_kg": 300,
    "capex_usd": 60_000,
}
"""A rack the demo's 3.52 kW feeds can carry: one 4 × L4 server, 0.888 kW."""


@pytest.fixture(scope="module")
def mdf():
    return site_from_rows(rows(), site="ncsu-065")


def test_the_demo_site_mdf_is_three_rows_of_eight_on_its_feeds(mdf) -> None:
    check_mdf(mdf)


def check_mdf(mdf) -> None:
    """Site MDF as derived by hand from the demo dump (also read from the running demo NetBox)."""
    s = mdf.site
    assert s["id"] == "MDF"
    (b,) = s["buildings"]
    (h,) = b["halls"]
    assert [(r["id"], r["positions"]) for r in h["rows"]] == [("row-1", 8), ("row-2", 8), ("row-3", 8)]
    for r in h["rows"]:
        assert r["redundant"] is True
        assert r["max_rack_power_kw"] == pytest.approx(FEED_KW)
        assert len(r["feeds"]) == 16
    feeds = {n["id"]: n for n in h["power_nodes"]}
    assert len(feeds) == 48
    assert feeds["P1-1A"]["capacity_kw"] == pytest.approx(4.4)
    assert feeds["P1-1A"]["derate"] == 0.8
    assert (feeds["P1-1A"]["parent"], feeds["P2-1B"]["parent"]) == ("Panel-1", "Panel-2")
    panels = {n["id"]: n["capacity_kw"] for n in b["power_nodes"]}
    assert panels == pytest.approx(
        {"Panel-1": 16 * FEED_KW, "Panel-2": 16 * FEED_KW, "Panel-3": 8 * FEED_KW, "Panel-4": 8 * FEED_KW}
    )


def test_the_demo_sites_installed_devices_are_installed_racks(mdf) -> None:
    check_mdf_installed(mdf)


def check_mdf_installed(mdf) -> None:
    assert {(e["row"], e["position"]) for e in mdf.existing} == INSTALLED
    assert all(e["cluster"] == "installed" for e in mdf.existing)
    types = {t["id"] for t in mdf.rack_types}
    assert types == {f"installed-R{n}" for n in (103, 104, 105, 106, 107, 108, 201)}
    # The demo's power ports state no draw: said, and counted as 0 W.
    assert any(
        d.startswith("14 installed device(s) state no draw") and "ncsu-coreswitch1 in R103" in d
        for d in mdf.defaults
    )


def test_what_the_demo_site_holds_that_cannot_be_mapped_is_listed(mdf) -> None:
    assert "rack 'Plant 2': no power feed assigned to it: its position is reserved" in mdf.unmapped
    assert "row 'MDF': no power feed is assigned to any of its racks (PowerFeed.rack)" in mdf.unmapped
    assert not [d for d in mdf.defaults if "row 'MDF'" in d]  # a row left out takes no default
    assert sum("no weight limit" in d for d in mdf.defaults) == 3  # the demo's racks state none


def _scenario(mdf):
    """Site MDF with its installed racks and as many 4 × L4 racks as fit."""
    return scenario_from_data(
        {
            "name": "mdf",
            "site": mdf.site,
            "existing": {"racks": mdf.existing, "rack_types": mdf.rack_types},
            "catalog": {"rack_types": [L4]},
            "clusters": [{"id": "infer", "demand": "max", "rack_types": ["l4-server-rack"]}],
            "objective": "max_gpus",
        }
    )


def test_a_plan_for_the_demo_site_verifies_and_keeps_what_is_installed(mdf) -> None:
    scenario = _scenario(mdf)
    plan = plan_scenario(scenario)
    rep = verify(plan, scenario)
    assert rep.ok, rep.violations
    # By hand: 24 positions, 7 installed, 1 for the pod's network rack: 16 racks of 4 GPUs.
    assert plan.kpis.gpus == 16 * 4
    assert {(r.row, r.position) for r in plan.racks if r.existing} == INSTALLED
    assert not {(r.row, r.position) for r in plan.racks if not r.existing} & INSTALLED


def test_an_installed_rack_serves_no_cluster_only_when_it_is_installed_and_holds_no_gpus(mdf) -> None:
    """The verifier's one allowance for cluster 'installed': existing racks without GPUs. A new
    rack of that cluster, or an installed one of a GPU type, is still an unknown cluster."""
    scenario = _scenario(mdf)
    plan = plan_scenario(scenario)
    new = next(r for r in plan.racks if not r.existing)
    bad = plan.model_copy(update={"racks": [*plan.racks, new.model_copy(update={"cluster": "installed"})]})
    assert "unknown cluster 'installed'" in " ".join(v.message for v in verify(bad, scenario).violations)
    gpu = {**mdf.existing[0], "rack_type": "l4-server-rack"}  # an installed rack that holds GPUs
    with_gpus = _scenario(mdf).model_dump(mode="json")
    with_gpus["existing"] = [gpu, *(e for e in with_gpus["existing"][1:])]
    with pytest.raises(SolverFailure, match="unknown cluster 'installed'"):  # the verifier refuses the plan
        plan_scenario(scenario_from_data(with_gpus))


def test_several_sites_with_racks_ask_for_site_by_name() -> None:
    with pytest.raises(InputError) as e:
        site_from_rows(rows())
    assert "name the one to import with --site NAME" in str(e.value)
    with pytest.raises(InputError) as e:
        site_from_rows(rows(), site="nowhere")
    assert "--site: NetBox holds no site named or slugged 'nowhere'" in str(e.value)


@pytest.mark.parametrize(
    ("value", "unit", "kg"),
    [
        (3000, "lb", 1360.77711),
        ("3000.00 Pounds", "", 1360.77711),
        (500, "kg", 500.0),
        (16, "oz", 0.453592),
        ("", "kg", None),
    ],
)
def test_weights_in_every_unit_netbox_states(value, unit, kg) -> None:
    got = weight_kg(value, unit, "w")
    assert got == (None if kg is None else pytest.approx(kg, abs=1e-6))


def test_a_weight_unit_netbox_does_not_have_is_refused() -> None:
    with pytest.raises(InputError) as e:
        weight_kg(3, "stone", "rack 'R1' max_weight")
    assert "rack 'R1' max_weight: weight unit 'stone' is none of NetBox's kg, g, lb, oz" in str(e.value)


def test_netboxs_export_columns_and_choice_labels_read_as_its_api_fields() -> None:
    assert export_key("Maximum draw (W)", "power-ports") == "maximum_draw"
    assert export_key("Type", "devices") == "device_type"
    assert export_key("Height", "racks") == "u_height"
    assert export_key("planner_row", "racks") == "cf_planner_row"
    got = from_export(
        {"Name": "F1", "Type": "Redundant", "Phase": "Single phase", "Max Utilization": "80%"}, "power-feeds"
    )
    assert got == {"name": "F1", "type": "redundant", "phase": "single-phase", "max_utilization": "80%"}


def test_pushed_plans_beside_sites_users_keep_ask_which_to_import() -> None:
    """A NetBox holding a plan the planner pushed (racks with its custom fields) beside the demo's
    own sites: without --site or --prefix the import asks which, naming both kinds."""
    got = rows()
    got["racks"] = [*got["racks"], {"name": "x-R01-00", "site": "x-small-hall", "cf_planner_row": "R01"}]
    with pytest.raises(InputError) as e:
        site_from_rows(got)
    assert "NetBox holds plans the planner pushed (in x-small-hall) beside sites its users keep (" in str(
        e.value
    )
    assert "name the one to import with --site NAME, or a pushed plan's --prefix" in str(e.value)
    check_mdf(site_from_rows(got, site="ncsu-065"))  # naming the site reads it the NetBox way
