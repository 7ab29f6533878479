"""A pushed plan as NetBox shows it, and a plan that replaces a plan, in the running NetBox (SPEC
§20): NetBox's own rack power utilisation reads the plan's load (whips assigned to racks, power
ports with their draw, cables between them) and its rack pages render; a re-plan of small-hall
pushed over its predecessor with the same prefix leaves NetBox holding the new plan only — what
it dropped retired (decommissioning, or deleted), no rack `available` with a device in it — and
says how many."""

from __future__ import annotations

import csv
import io
import math

import pytest

from planner.dcim.bundle import api_payload, bundle, slug
from planner.dcim.push import push
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario
from tests.test_netbox_live import DATASETS, _env, _login, fresh, nb  # noqa: F401  (nb: the fixture)

pytestmark = pytest.mark.netbox


@pytest.fixture(scope="module")
def plans():
    """small-hall's plan and a re-plan that wants fewer training GPUs (512 of them)."""
    s = load_scenario(DATASETS / "small-hall.yaml")
    fewer = [c.model_copy(update={"gpus": 512}) if c.id == "train-gt" else c for c in s.clusters]
    s2 = s.model_copy(update={"clusters": fewer})
    return (s, plan_scenario(s)), (s2, plan_scenario(s2))


def _devices(nb, site: str) -> dict[str, tuple[str, str]]:  # noqa: F811
    return {
        o["name"]: (o["status"]["value"], o["rack"]["name"]) for o in nb.all("/api/dcim/devices/", site=site)
    }


def _racks(nb, site: str) -> dict[str, str]:  # noqa: F811
    return {o["name"]: o["status"]["value"] for o in nb.all("/api/dcim/racks/", site=site)}


def test_a_re_plan_pushed_over_its_predecessor_leaves_only_the_new_plan(nb, plans) -> None:  # noqa: F811
    (s, plan), (s2, plan2) = plans
    prefix = fresh()
    first, second = (api_payload(bundle(p, sc, prefix=prefix)) for sc, p in ((s, plan), (s2, plan2)))
    site = slug(f"{prefix}{s.site.id}")
    push(first, nb)
    before = _devices(nb, site)
    wanted = {o["name"] for o in second["objects"]["devices"]}
    dropped = set(before) - wanted
    assert len(wanted) < len(before)
    assert dropped  # the re-plan drops devices of the first plan

    done = push(second, nb)
    after = _devices(nb, site)
    assert done["devices"] == {
        "created": len(wanted - set(before)),
        "updated": len(wanted & set(before)),
        "retired": len(dropped),
    }
    assert {n for n, (st, _) in after.items() if st != "decommissioning"} == wanted
    assert {n for n, (st, _) in after.items() if st == "decommissioning"} == dropped
    racks = _racks(nb, site)
    assert not [r for _, (_, r) in after.items() if racks[r] == "available"]  # never available with a device

    push(first, nb)  # the first plan again: its devices come back as planned
    assert set(_devices(nb, site)) == set(before)
    done = push(second, nb, on_dropped="delete")
    assert done["devices"]["retired"] == len(dropped)
    assert set(_devices(nb, site)) == wanted


def test_a_push_that_stopped_halfway_is_finished_by_pushing_again(nb, plans) -> None:  # noqa: F811
    (s, plan), _ = plans
    prefix = fresh()
    whole = api_payload(bundle(plan, s, prefix=prefix, whips=False))
    objects = {**whole["objects"], "devices": whole["objects"]["devices"][:20]}
    push({**whole, "objects": objects}, nb)  # as if the push had stopped after 20 devices
    done = push(whole, nb)
    n = len(whole["objects"]["devices"])
    assert done["devices"] == {"created": n - 20, "updated": 20, "retired": 0}
    assert len(_devices(nb, slug(f"{prefix}{s.site.id}"))) == n


def test_netboxs_rack_power_utilisation_reads_the_plans_load(nb, plans) -> None:  # noqa: F811
    """By hand: a Grand Teton H100 rack plans 2 × (4.6 + 8 × 0.7) + 1.0 = 21.4 kW, drawn half
    through each of its two power ports (10,700 W allocated each); row R02 allows 25 kW a rack, so
    each whip is 415 V three-phase at ⌈25,000 / (415 × √3)⌉ = 35 A, which NetBox counts as
    round(415 × 35 × 1.732) = 25,157 VA: 21,400 / 50,314 = 42.5 %."""
    (s, plan), _ = plans
    prefix = fresh()
    push(api_payload(bundle(plan, s, prefix=prefix)), nb)
    amps = math.ceil(25_000 / (415 * math.sqrt(3)))
    by_hand = round(2 * 10_700 / (2 * round(415 * amps * 1.732)) * 100, 1)
    assert (amps, by_hand) == (35, 42.5)
    url, _ = _env()
    web = _login(url)
    site = slug(f"{prefix}{s.site.id}")
    got = web.get(f"{url}/dcim/racks/?site={site}&export", timeout=120)
    power = {r["Name"]: r["Power"] for r in csv.DictReader(io.StringIO(got.content.decode("utf-8-sig")))}
    gt = next((r for r in plan.racks if r.rack_type == "grand-teton-h100" and r.row == "R02"), None)
    assert gt is not None, sorted({(r.row, r.rack_type) for r in plan.racks})
    assert len(power) == 160, list(power.items())[:5]
    assert power[f"{prefix}R02-{gt.position:02d}"] == f"{by_hand}%"
    assert {p for name, p in power.items() if name.startswith(f"{prefix}R04-")} <= {"0.0%", "0%", "0", ""}, [
        p for name, p in power.items() if name.startswith(f"{prefix}R04-")
    ]  # R04 holds no device: it draws nothing
    rack = next(nb.all("/api/dcim/racks/", site=site, name=f"{prefix}R02-{gt.position:02d}"))
    for page in (
        f"/dcim/racks/{rack['id']}/",
        f"/api/dcim/racks/{rack['id']}/elevation/?face=front&render=svg",
    ):
        assert web.get(f"{url}{page}", timeout=60).status_code == 200, page
