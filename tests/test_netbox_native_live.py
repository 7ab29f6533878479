"""A NetBox as its users keep it, against the running NetBox (SPEC §20): a campus built through the
REST API the way a NetBox user builds it — names with spaces, no planner custom field, rows only in
the rack names, 415 V three-phase feeds assigned to racks, a weight limit in pounds, DGX H100
servers installed with their power ports — imported with each figure checked by hand, the same
site from NetBox's own "Export → All data (CSV)" files, and a plan of it that leaves the installed
racks as they are."""

from __future__ import annotations

import math
import os
import re

import pytest

from planner.dcim.client import NetBox
from planner.dcim.site import rows_from_api, rows_from_folder, site_from_rows
from planner.input.loader import scenario_from_data
from planner.plan.pipeline import plan_scenario
from planner.verifier import verify
from tests.test_netbox_live import ROOT, _env, _login, fresh
from tests.test_netbox_native import check_mdf, check_mdf_installed

pytestmark = pytest.mark.netbox

FEED_KW = 415 * 32 * math.sqrt(3) * 0.8 / 1000
"""By hand: a 415 V three-phase 32 A feed at NetBox's 80 % utilisation, 18.401 kW."""
LIMIT_KG = 3000 * 0.45359237
"""By hand: the racks' 3,000 lb weight limit, 1,360.777 kg."""
DGX_KG = 287.6 * 0.45359237
"""By hand: a DGX H100 of 287.6 lb (its device type's weight), 130.453 kg."""


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", s.lower()).strip("-")


def build_campus(nb, p: str) -> str:
    """The DAL1 campus under prefix ``p``; returns the site's name."""

    def post(path: str, body: dict) -> dict:
        return nb.call("POST", f"/api/{path}/", body)

    site = post(
        "dcim/sites", {"name": f"{p}DAL1 Campus", "slug": _slug(f"{p}dal1-campus"), "status": "active"}
    )
    made: dict[str, int] = {}
    for b, halls in (("A", ("A1", "A2")), ("B", ("B1",))):
        loc = post(
            "dcim/locations",
            {"name": f"{p}Building {b}", "slug": _slug(f"{p}building-{b}"), "site": site["id"]},
        )
        made[b] = loc["id"]
        for h in halls:
            made[h] = post(
                "dcim/locations",
                {
                    "name": f"{p}Hall {h}",
                    "slug": _slug(f"{p}hall-{h}"),
                    "site": site["id"],
                    "parent": loc["id"],
                },
            )["id"]
    panels = {
        f"{b}-{k}": post(
            "dcim/power-panels", {"name": f"{p}Panel {b}-{k}", "site": site["id"], "location": made[b]}
        )["id"]
        for b in "AB"
        for k in (1, 2)
    }
    racks: dict[str, int] = {}
    for h, per in (("A1", 8), ("A2", 8), ("B1", 4)):
        for r in (1, 2):
            for k in range(1, per + 1):
                name = f"{p}{h}-R{r:02d}-{k:02d}"
                racks[name] = post(
                    "dcim/racks",
                    {
                        "name": name,
                        "site": site["id"],
                        "location": made[h],
                        "status": "active",
                        "u_height": 48,
                        "max_weight": 3000,
                        "weight_unit": "lb",
                        **({"cooling_capacity": 15} if h == "B1" else {}),  # kW: hall B1's racks shed 15 kW
                    },
                )["id"]
                for side, kind, panel in (("A", "primary", 1), ("B", "redundant", 2)):
                    post(
                        "dcim/power-feeds",
                        {
                            "name": f"{h}-R{r:02d}-{k:02d} {side}",
                            "power_panel": panels[f"{h[0]}-{panel}"],
                            "rack": racks[name],
                            "type": kind,
                            "supply": "ac",
                            "phase": "three-phase",
                            "voltage": 415,
                            "amperage": 32,
                            "max_utilization": 80,
                            "status": "active",
                        },
                    )
    maker = post("dcim/manufacturers", {"name": f"{p}NVIDIA", "slug": _slug(f"{p}nvidia")})["id"]
    dgx = post(
        "dcim/device-types",
        {
            "manufacturer": maker,
            "model": f"{p}DGX H100",
            "slug": _slug(f"{p}dgx-h100"),
            "u_height": 8,
            "weight": 287.6,
            "weight_unit": "lb",
        },
    )["id"]
    for k in range(1, 7):  # six PSUs, 3.3 kW each, 1.7 kW allocated: 10.2 kW a server
        post(
            "dcim/power-port-templates",
            {"device_type": dgx, "name": f"PSU{k}", "maximum_draw": 3300, "allocated_draw": 1700},
        )
    switch = post(
        "dcim/device-types",
        {"manufacturer": maker, "model": f"{p}SN5600", "slug": _slug(f"{p}sn5600"), "u_height": 2},
    )["id"]
    post("dcim/power-port-templates", {"device_type": switch, "name": "PSU1", "maximum_draw": 650})
    post("dcim/device-roles", {"name": f"{p}GPU Server", "slug": _slug(f"{p}gpu-server"), "color": "4caf50"})
    role = {"name": f"{p}GPU Server"}  # NetBox 4.7.3 refuses a device role by ID or slug ('_depth')
    for name, kind, rack, status in (
        ("dgx-01", dgx, "A1-R01-03", "active"),
        ("dgx-02", dgx, "A1-R01-04", "active"),
        ("leaf-01", switch, "A1-R01-05", "active"),
        ("dgx-03", dgx, "A1-R02-01", "planned"),
    ):
        post(
            "dcim/devices",
            {
                "name": f"{p}{name}",
                "device_type": kind,
                "role": role,
                "site": site["id"],
                "location": made["A1"],
                "rack": racks[f"{p}{rack}"],
                "position": 10,
                "face": "front",
                "status": status,
            },
        )
    return site["name"]


@pytest.fixture(scope="module")
def nb() -> NetBox:
    url, token = _env()
    return NetBox(url, token)


@pytest.fixture(scope="module")
def campus(nb):
    p = fresh()
    return p, build_campus(nb, p)


def _by_hand_checks(got, p: str) -> None:
    s = got.site
    assert s["id"] == _slug(f"{p}dal1-campus")
    assert [b["id"] for b in s["buildings"]] == [_slug(f"{p}building-a"), _slug(f"{p}building-b")]
    halls = {h["id"]: h for b in s["buildings"] for h in b["halls"]}
    assert sorted(halls) == sorted(_slug(f"{p}hall-{h}") for h in ("A1", "A2", "B1"))
    rows = {r["id"]: r for h in halls.values() for r in h["rows"]}
    assert sorted(rows) == sorted(f"{p}{h}-R0{r}" for h in ("A1", "A2", "B1") for r in (1, 2))
    assert sum(r["positions"] for r in rows.values()) == 40
    for r in rows.values():
        assert r["redundant"] is True
        kw = (
            15.0 if "B1-" in r["id"] else FEED_KW
        )  # by hand: B1's racks' cooling capacity is below the feed's
        assert r["max_rack_power_kw"] == pytest.approx(kw, abs=1e-6)
        assert r["max_rack_weight_kg"] == pytest.approx(LIMIT_KG, abs=1e-6)
        assert len(r["feeds"]) == 2 * r["positions"]
    feed = next(n for h in halls.values() for n in h["power_nodes"] if n["id"] == "A1-R01-01-A")
    assert feed["capacity_kw"] * feed["derate"] == pytest.approx(FEED_KW, abs=1e-6)
    assert feed["parent"] == f"{p}Panel-A-1"
    installed = {(e["row"], e["position"]): e for e in got.existing}
    assert sorted(installed) == [(f"{p}A1-R01", 2), (f"{p}A1-R01", 3), (f"{p}A1-R01", 4)]
    kinds = {t["id"]: t for t in got.rack_types}
    dgx = kinds[installed[f"{p}A1-R01", 2]["rack_type"]]
    assert (dgx["overhead_power_kw"], dgx["weight_kg"]) == (
        pytest.approx(10.2),
        pytest.approx(DGX_KG, abs=1e-6),
    )
    leaf = kinds[installed[f"{p}A1-R01", 4]["rack_type"]]
    assert leaf["overhead_power_kw"] == pytest.approx(0.65)  # its maximum draw: no allocated draw stated


def test_a_campus_built_the_netbox_way_imports_with_its_figures_by_hand(nb, campus) -> None:
    p, site = campus
    got = site_from_rows(rows_from_api(nb, site), site=site)
    _by_hand_checks(got, p)
    assert not [u for u in got.unmapped if p in u]


def test_netboxs_own_csv_export_of_the_site_imports_the_same(nb, campus, tmp_path) -> None:
    p, site = campus
    url, _ = _env()
    web = _login(url)
    slug = _slug(f"{p}dal1-campus")
    for path, query in (
        ("dcim/sites", f"slug={slug}"),
        ("dcim/locations", f"site={slug}"),
        ("dcim/racks", f"site={slug}"),
        ("dcim/power-panels", f"site={slug}"),
        ("dcim/power-feeds", f"site={slug}"),
        ("dcim/devices", f"site={slug}"),
        ("dcim/power-ports", f"site={slug}"),
        ("dcim/device-types", f"q={p}"),
    ):
        got = web.get(f"{url}/{path}/?{query}&export", timeout=120)
        assert got.status_code == 200, (path, got.status_code)
        name = re.search(r'filename="([^"]+)"', got.headers["Content-Disposition"]).group(1)
        (tmp_path / name).write_bytes(got.content)
    from_export = site_from_rows(rows_from_folder(tmp_path), site=site)
    from_api = site_from_rows(rows_from_api(nb, site), site=site)
    # NetBox 4.7's CSV export leaves a rack's Weight and Max Weight empty: the import says so and
    # takes the schema's 1,400 kg; everything else is the API's site.
    rows = [r for b in from_api.site["buildings"] for h in b["halls"] for r in h["rows"]]
    for r in rows:
        assert r.pop("max_rack_weight_kg") == pytest.approx(LIMIT_KG, abs=1e-6)
    assert from_export.site == from_api.site
    assert from_export.existing == from_api.existing
    assert from_export.rack_types == from_api.rack_types
    assert sum("no weight limit" in d for d in from_export.defaults) == len(rows)


def test_a_plan_of_the_campus_leaves_the_installed_racks_as_they_are(nb, campus) -> None:
    p, site = campus
    got = site_from_rows(rows_from_api(nb, site), site=site)
    scenario = scenario_from_data(
        {
            "name": "dal1",
            "site": got.site,
            "existing": {"racks": got.existing, "rack_types": got.rack_types},
            "catalog": {
                "rack_types": [
                    {
                        "id": "one-dgx",
                        "servers_per_rack": 1,
                        "gpus_per_server": 8,
                        "gpu_power_w": 700,
                        "non_gpu_power_kw_per_server": 4.6,
                        "weight_kg": 300,
                        "capex_usd": 400_000,
                    }
                ]
            },
            "clusters": [{"id": "train", "demand": "max", "rack_types": ["one-dgx"]}],
            "objective": "max_gpus",
        }
    )
    plan = plan_scenario(scenario)
    rep = verify(plan, scenario)
    assert rep.ok, rep.violations
    # By hand: 40 positions, 3 installed, one pod's network rack per hall (3): 34 racks of 8 GPUs.
    assert plan.kpis.gpus == 34 * 8
    kept = sorted((r.row, r.position, r.rack_type) for r in plan.racks if r.existing)
    assert kept == sorted((e["row"], e["position"], e["rack_type"]) for e in got.existing)
    new = {(r.row, r.position) for r in plan.racks if not r.existing}
    assert not new & {(e["row"], e["position"]) for e in got.existing}


def test_the_netbox_demo_datas_site_mdf_imports_from_the_running_demo_netbox() -> None:
    """The NetBox project's demo data as `scripts/netbox up` serves it (its 4.2 dump migrated by
    NetBox 4.7): site MDF read through the REST API is what the dump gives by hand."""
    env = dict(line.split("=", 1) for line in (ROOT / ".netbox" / "env").read_text().split() if "=" in line)
    url = os.environ.get("NETBOX_DEMO_URL") or env.get("NETBOX_DEMO_URL")
    if not url:
        pytest.fail("no demo NetBox: `scripts/netbox up` serves the demo data and writes NETBOX_DEMO_URL")
    _, token = _env()
    got = site_from_rows(rows_from_api(NetBox(url, token), "ncsu-065"), site="ncsu-065")
    check_mdf(got)
    check_mdf_installed(got)
