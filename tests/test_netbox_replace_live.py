"""A plan replaces a plan in the running NetBox (SPEC §20): a re-plan of small-hall pushed over its
predecessor with the same prefix leaves NetBox holding the new plan only — what it dropped retired
(decommissioning, or deleted), no rack `available` with a device in it — and says how many."""

from __future__ import annotations

import pytest

from planner.dcim.bundle import api_payload, bundle, slug
from planner.dcim.push import push
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario
from tests.test_netbox_live import DATASETS, fresh, nb  # noqa: F401  (nb: the fixture)

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
    whole = api_payload(bundle(plan, s, prefix=prefix))
    half = {**whole, "objects": {**whole["objects"], "devices": whole["objects"]["devices"][:20]}}
    push(half, nb)  # as if the push had stopped after 20 devices
    done = push(whole, nb)
    n = len(whole["objects"]["devices"])
    assert done["devices"] == {"created": n - 20, "updated": 20, "retired": 0}
    assert len(_devices(nb, slug(f"{prefix}{s.site.id}"))) == n
