"""Load a NetBox bundle (:mod:`planner.plan.netbox`) into a running NetBox through its REST API:
kind by kind in import order, each object created, or updated where one with its natural key
(:data:`KEYS`) exists, so a second load of the same plan updates and a plan under another prefix
stands beside it. Calls go through :class:`planner.input.netbox_client.NetBox` (a client that
trusts no server); the planner needs no NetBox client library.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planner.input.netbox_client import NetBox

__all__ = ["KEYS", "NetBox", "key_of", "push"]

KEYS: dict[str, tuple[str, ...]] = {
    "custom-fields": ("name",),
    "sites": ("slug",),
    "locations": ("site.name", "name"),
    "manufacturers": ("slug",),
    "device-types": ("manufacturer.name", "model"),
    "device-roles": ("slug",),
    "racks": ("site.name", "name"),
    "power-panels": ("site.name", "name"),
    "power-feeds": ("power_panel.name", "name"),
    "devices": ("site.name", "name"),
}
"""Natural key of each kind: the fields that name one object (dotted: a nested reference's); the
slug where NetBox holds it unique whatever the name's case."""

BATCH = 250
"""Objects per bulk request."""

SITE_SCOPED = ("locations", "racks", "power-panels", "power-feeds", "devices")
"""Kinds that belong to a site: only the payload's sites are read to find what exists."""


def key_of(kind: str, obj: dict) -> tuple:
    """The natural key of ``obj`` (a payload object or an API response)."""
    out = []
    for path in KEYS[kind]:
        v: object = obj
        for part in path.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        out.append(v)
    return tuple(out)


def push(payload: dict, nb: NetBox, say: Callable[[str], None] = lambda s: None) -> dict[str, dict[str, int]]:
    """Load ``payload`` (:func:`planner.plan.netbox.api_payload`) into ``nb``; per kind the objects
    ``created`` and ``updated``."""
    out = {}
    sites = [o["slug"] for o in payload["objects"].get("sites", [])]
    for kind in payload["order"]:
        t0 = time.monotonic()
        endpoint = payload["endpoints"][kind]
        if kind in SITE_SCOPED and sites:
            have = {key_of(kind, o): o["id"] for site in sites for o in nb.all(endpoint, site=site)}
        else:
            have = {key_of(kind, o): o["id"] for o in nb.all(endpoint)}
        new, old = [], []
        for obj in payload["objects"][kind]:
            oid = have.get(key_of(kind, obj))
            (new if oid is None else old).append(obj if oid is None else {**obj, "id": oid})
        for i in range(0, len(new), BATCH):
            nb.call("POST", endpoint, new[i : i + BATCH])
        for i in range(0, len(old), BATCH):
            nb.call("PATCH", endpoint, old[i : i + BATCH])
        out[kind] = {"created": len(new), "updated": len(old)}
        say(f"{kind}: {len(new)} created, {len(old)} updated ({time.monotonic() - t0:.1f} s)")
    return out
