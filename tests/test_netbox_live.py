"""The DCIM round trip against a running NetBox (SPEC §20): `scripts/netbox up` starts NetBox 4.7.3
(PyPI, its own Python 3.12 virtualenv), PostgreSQL and Redis on 127.0.0.1 and writes .netbox/env;
scripts/test runs it first. Without a NetBox these tests fail and say so: there is no silent skip.

Each test names its objects with a fresh prefix, so runs never meet in one NetBox."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

from planner.dcim.bundle import KINDS, api_payload, bundle, slug
from planner.dcim.push import NetBox, push
from planner.dcim.site import overlay_of, rows_from_api, site_from_rows
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario
from planner.schema.site import Site
from tests.test_netbox_bundle import canon
from tests.test_optimize import solved
from tests.test_units import unit_site

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT / "datasets"
pytestmark = pytest.mark.netbox


def _env() -> tuple[str, str]:
    url, token = os.environ.get("NETBOX_URL", ""), os.environ.get("NETBOX_TOKEN", "")
    env = ROOT / ".netbox" / "env"
    if not url and env.is_file():
        kv = dict(line.split("=", 1) for line in env.read_text().split() if "=" in line)
        url, token = kv.get("NETBOX_URL", ""), kv.get("NETBOX_TOKEN", "")
    if not url or not token:
        pytest.fail(
            "no running NetBox: `scripts/netbox up` starts one and writes .netbox/env (scripts/test runs it)"
        )
    return url, token


@pytest.fixture(scope="module")
def nb() -> NetBox:
    url, token = _env()
    client = NetBox(url, token)
    client.call("GET", "/api/status/")  # reachable, or InputError says why
    return client


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


SITE_KINDS = ("sites", "locations", "racks", "power-panels", "power-feeds", "devices")
"""Kinds named under the prefix (the rest are shared by every plan in a NetBox)."""


def fresh() -> str:
    return f"t{uuid.uuid4().hex[:8]}-"


def count(nb: NetBox, endpoint: str, **query: str) -> int:
    page = nb.call("GET", f"/api/{endpoint}/?limit=1&" + "&".join(f"{k}={v}" for k, v in query.items()))
    assert isinstance(page, dict)
    return page["count"]


def read_back(nb: NetBox, prefix: str, site_id: str) -> dict[str, int]:
    """Objects NetBox holds under the bundle's campus site, counted through the API."""
    site = slug(f"{prefix}{site_id}")
    return {
        "locations": count(nb, "dcim/locations", site=site),
        "racks": count(nb, "dcim/racks", site=site),
        "power-panels": count(nb, "dcim/power-panels", site=site),
        "power-feeds": count(nb, "dcim/power-feeds", site=site),
        "devices": count(nb, "dcim/devices", site=site),
    }


def test_small_hall_bundle_imports_whole_and_a_second_push_updates(nb: NetBox, small) -> None:
    """Every object of the small hall's bundle is in NetBox after one push (160 racks, 59 devices,
    11 panels, 8 feeds: counted by hand in tests/test_netbox_bundle.py); a second push creates
    nothing and updates every object."""
    s, plan = small
    prefix = fresh()
    b = bundle(plan, s, prefix=prefix)
    first = push(api_payload(b), nb)
    for kind in KINDS:
        if kind in SITE_KINDS or kind in ("power-ports", "cables"):
            assert first[kind] == {"created": len(b.objects[kind]), "updated": 0, "retired": 0}, kind
        else:  # NetBox-wide (custom fields, manufacturers, device types, roles): made once, then kept
            assert sum(first[kind].values()) == len(b.objects[kind]), kind
    expected = {"locations": 2, "racks": 160, "power-panels": 11, "power-feeds": 8 + 118, "devices": 59}
    assert read_back(nb, prefix, s.site.id) == expected
    again = push(api_payload(b), nb)  # a cable already made is kept (counted as updated)
    assert again == {k: {"created": 0, "updated": len(b.objects[k]), "retired": 0} for k in KINDS}
    assert read_back(nb, prefix, s.site.id) == expected
    dev = nb.call("GET", f"/api/dcim/devices/?name={prefix}R02-01")["results"][0]
    assert (dev["rack"]["name"], dev["position"], dev["custom_fields"]["planner_cluster"]) == (
        f"{prefix}R02-01",
        1.0,
        "train-gt",
    )
    feed = nb.call("GET", f"/api/dcim/power-feeds/?name={prefix}BW-B1")["results"][0]
    assert (feed["voltage"], feed["amperage"], feed["type"]["value"]) == (415, 696, "redundant")


def test_a_site_from_netbox_is_the_yaml_it_came_from_and_plans_the_same_gpus(nb: NetBox, small) -> None:
    s, plan = small
    prefix = fresh()
    push(api_payload(bundle(plan, s, prefix=prefix)), nb)
    rows = rows_from_api(nb, slug(f"{prefix}{s.site.id}"))  # its site's objects, not the whole NetBox
    got = site_from_rows(rows, overlay_of(s.site), prefix=prefix)
    assert got.unmapped == []
    site = Site.model_validate(got.site)
    assert canon(site) == canon(s.site)
    assert plan_scenario(s.model_copy(update={"site": site})).kpis.gpus == plan.kpis.gpus == 1080


def test_a_units_six_positions_are_six_racks_in_netbox(nb: NetBox) -> None:
    s = unit_site()
    plan = solved(s, "highs")
    prefix = fresh()
    push(api_payload(bundle(plan, s, prefix=prefix)), nb)
    devs = nb.call("GET", f"/api/dcim/devices/?site={slug(prefix + 'tiny')}&limit=100")["results"]
    unit = sorted(
        (d["rack"]["name"], d["device_type"]["model"]) for d in devs if d["name"].startswith(prefix + "R-")
    )
    assert unit == [
        (f"{prefix}R-{k:02d}", f"pod6/{i}-{r}")
        for k, i, r in zip(range(5, 11), range(1, 7), ["CDU", "CDU", "GPU", "GPU", "CDU", "CDU"], strict=True)
    ]


def test_a_catalina_unit_beside_gpu_racks_pushes_whole(nb: NetBox) -> None:
    """A plan with a Catalina-style unit (part roles CDU and GPU) beside plain GPU racks (role gpu):
    once two roles with the slug ``gpu`` and a push that stopped at "ID 1 is listed 2 times"; now
    every device, whip, power port and cable is in NetBox."""
    s = unit_site()
    gpu_rack = next(t for t in s.catalog.rack_types if t.gpus and not t.parts)
    plain = s.clusters[0].model_copy(update={"id": "plain", "rack_types": [gpu_rack.id]})
    s = s.model_copy(update={"clusters": [*s.clusters, plain]})
    plan = solved(s, "highs")
    prefix = fresh()
    b = bundle(plan, s, prefix=prefix)
    done = push(api_payload(b), nb)
    site = slug(prefix + "tiny")
    assert {r.rack_type for r in plan.racks} >= {"pod6", gpu_rack.id}
    for kind in ("devices", "power-ports", "cables"):
        assert done[kind]["created"] == len(b.objects[kind]), kind
    assert count(nb, "dcim/devices", site=site) == len(b.objects["devices"])
    assert count(nb, "dcim/cables", site=site) == len(b.objects["cables"])


def test_meta_24k_bundle_imports_whole_with_its_network_racks(nb: NetBox) -> None:
    """The 24,576-GPU building: every position a rack, every placed rack, pod network rack and
    designed-fabric network rack a device."""
    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    plan = plan_scenario(s)
    prefix = fresh()
    b = bundle(plan, s, prefix=prefix, whips=False)  # whips, ports and cables: small-hall's tests
    push(api_payload(b), nb)
    positions = sum(r.positions for bl in s.site.buildings for h in bl.halls for r in h.rows)
    pods = sum(1 for bl in s.site.buildings for h in bl.halls for p in h.pods if p.network_rack_type)
    units = sum(s.catalog.by_id()[r.rack_type].width for r in plan.racks)
    got = read_back(nb, prefix, s.site.id)
    assert got["racks"] == positions
    assert got["devices"] == units + pods + len(plan.network_racks)
    assert got["power-feeds"] == len(
        {f for bl in s.site.buildings for h in bl.halls for r in h.rows for f in r.feeds}
    )  # the nodes rows draw from: no whips in this bundle


def _login(url: str):
    import requests

    web = requests.Session()
    page = web.get(f"{url}/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    web.post(
        f"{url}/login/",
        data={"csrfmiddlewaretoken": token, "username": "planner", "password": "planner-local", "next": "/"},
        headers={"Referer": f"{url}/login/"},
        timeout=30,
    )
    return web


def test_the_plan_library_keeps_plans_in_postgresql(small) -> None:
    """The plan library on a PostgreSQL URL (the server scripts/netbox starts): a fresh database,
    a verified plan stored, read back by a second connection, the best of its scenario."""
    import sqlalchemy as sa

    from planner.input.variants import scenario_yaml
    from planner.library import Library

    env = ROOT / ".netbox" / "env"
    kv = dict(line.split("=", 1) for line in env.read_text().split() if "=" in line) if env.is_file() else {}
    admin = os.environ.get("PLANNER_TEST_PG") or kv.get("PLANNER_TEST_PG")
    if not admin:
        pytest.fail("no PostgreSQL: `scripts/netbox up` starts one and names it in .netbox/env")
    name = f"planner_lib_{uuid.uuid4().hex[:8]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as c:
        c.execute(sa.text(f"CREATE DATABASE {name}"))
    url = admin.rsplit("/", 1)[0] + f"/{name}"
    try:
        s, plan = small
        pid = Library(url).store(
            scenario_yaml(s), "small-hall", "joint", {"plan": plan.model_dump(mode="json")}, s
        )
        again = Library(url)
        got = again.get(pid)
        assert got["entry"]["plan"]["kpis"]["gpus"] == 1080
        assert again.best(got["scenario_key"], "joint")[0] == pid
        assert again.engine.dialect.name == "postgresql"
    finally:
        with engine.connect() as c:
            c.execute(sa.text(f"DROP DATABASE {name} WITH (FORCE)"))
