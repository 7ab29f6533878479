"""Load a NetBox bundle (:mod:`planner.dcim.bundle`) into a running NetBox through its REST API:
kind by kind in import order, each object created, or updated where one with its natural key
(:data:`KEYS`) exists, so a second load of the same plan updates and a plan under another prefix
stands beside it. A new plan pushed over an older one of the same sites replaces it: what the
older plan made and the new one dropped is retired (:data:`RETIRED`: given a status, or deleted),
and a rack that still holds a retired device is ``reserved``, never ``available``. Only objects a
planner push made (a ``planner_…`` custom field set) are ever retired. A push stopped halfway is
finished by running it again. Calls go through :class:`planner.dcim.client.NetBox` (a client that
trusts no server); the planner needs no NetBox client library.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planner.dcim.client import NetBox

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
    "power-ports": ("device.name", "name"),
}
"""Natural key of each kind: the fields that name one object (dotted: a nested reference's); the
slug where NetBox holds it unique whatever the name's case."""

BATCH = 250
"""Objects per bulk request."""

SITE_SCOPED = ("locations", "racks", "power-panels", "power-feeds", "devices", "power-ports")
"""Kinds that belong to a site: only the payload's sites are read to find what exists."""


RETIRED = {
    "devices": "decommissioning",
    "power-feeds": "offline",
    "racks": "deprecated",
    "power-panels": None,
    "locations": "decommissioning",
}
"""Kinds a new plan retires, latest in import order first, with the status a dropped object gets
under ``--on-dropped decommissioning`` (a power panel has no status: it is kept and counted)."""
ON_DROPPED = ("decommissioning", "delete")
"""What a push does with what the new plan dropped; the first is the default."""


def key_of(kind: str, obj: dict) -> tuple:
    """The natural key of ``obj`` (a payload object or an API response)."""
    out = []
    for path in KEYS[kind]:
        v: object = obj
        for part in path.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        out.append(v)
    return tuple(out)


def push(
    payload: dict,
    nb: NetBox,
    say: Callable[[str], None] = lambda s: None,
    on_dropped: str = ON_DROPPED[0],
) -> dict[str, dict[str, int]]:
    """Load ``payload`` (:func:`planner.dcim.bundle.api_payload`) into ``nb``; per kind the objects
    ``created``, ``updated`` and ``retired`` (what an older plan of the same sites made and this one
    dropped: ``on_dropped`` decommissioning or delete)."""
    if on_dropped not in ON_DROPPED:
        raise ValueError(f"on_dropped: {on_dropped!r} is none of {', '.join(ON_DROPPED)}")
    out = {}
    sites = [o["slug"] for o in payload["objects"].get("sites", [])]
    found: dict[str, list[dict]] = {}
    for kind in payload["order"]:
        t0 = time.monotonic()
        endpoint = payload["endpoints"][kind]
        if kind == "cables":
            out[kind] = _cables(payload, nb, sites)
            say(f"cables: {out[kind]['created']} created ({time.monotonic() - t0:.1f} s)")
            continue
        if kind in SITE_SCOPED and sites:
            found[kind] = [o for site in sites for o in nb.all(endpoint, site=site)]
        else:
            found[kind] = list(nb.all(endpoint))
        have = {key_of(kind, o): o["id"] for o in found[kind]}
        new, old = [], []
        for obj in payload["objects"][kind]:
            oid = have.get(key_of(kind, obj))
            (new if oid is None else old).append(obj if oid is None else {**obj, "id": oid})
        for i in range(0, len(new), BATCH):
            nb.call("POST", endpoint, new[i : i + BATCH])
        for i in range(0, len(old), BATCH):
            nb.call("PATCH", endpoint, old[i : i + BATCH])
        out[kind] = {"created": len(new), "updated": len(old), "retired": 0}
        say(f"{kind}: {len(new)} created, {len(old)} updated ({time.monotonic() - t0:.1f} s)")
    if sites:
        _retire(payload, nb, found, out, on_dropped, say)
    return out


def _cables(payload: dict, nb: NetBox, sites: list[str]) -> dict[str, int]:
    """Each cable of the payload (a device's power port to its rack's whip, by names) made where
    the port has none: NetBox's cable API takes the two ends by ID, read back per site."""
    ports = {
        (o["device"]["name"], o["name"]): o for s in sites for o in nb.all("/api/dcim/power-ports/", site=s)
    }
    feeds = {
        (o["power_panel"]["name"], o["name"]): o
        for s in sites
        for o in nb.all("/api/dcim/power-feeds/", site=s)
    }
    new, kept = [], 0
    for c in payload["objects"]["cables"]:
        port = ports.get((c["side_a_device"], c["side_a_name"]))
        feed = feeds.get((c["side_b_power_panel"], c["side_b_name"]))
        if port is None or feed is None:
            continue  # its device or whip did not come (a refused object): the next push makes it
        if port.get("cable") or feed.get("cable"):
            kept += 1
            continue
        new.append(
            {
                "a_terminations": [{"object_type": "dcim.powerport", "object_id": port["id"]}],
                "b_terminations": [{"object_type": "dcim.powerfeed", "object_id": feed["id"]}],
                "status": c.get("status", "planned"),
            }
        )
    for i in range(0, len(new), BATCH):
        nb.call("POST", payload["endpoints"]["cables"], new[i : i + BATCH])
    return {"created": len(new), "updated": kept, "retired": 0}


def _made_here(o: dict) -> bool:
    """An object a planner push made: one of its ``planner_…`` custom fields holds a value."""
    return any(
        k.startswith("planner_") and v not in (None, "") for k, v in (o.get("custom_fields") or {}).items()
    )


def _retire(payload: dict, nb: NetBox, found: dict, out: dict, on_dropped: str, say) -> None:
    """Retire what the payload's sites held from an older plan and this payload dropped; then no
    rack that holds a retired device stays ``available``."""
    held: list[dict] = []
    for kind in RETIRED:
        if kind not in payload["order"]:
            continue
        keep = {key_of(kind, o) for o in payload["objects"][kind]}
        gone = [o for o in found[kind] if key_of(kind, o) not in keep and _made_here(o)]
        _retire_kind(nb, payload["endpoints"][kind], gone, on_dropped, RETIRED[kind])
        if kind == "devices" and on_dropped != "delete":
            held = gone
        out.setdefault(kind, {"created": 0, "updated": 0})["retired"] = len(gone)
        if gone:
            say(f"{kind}: {len(gone)} retired ({on_dropped})")
    racks = {o["id"]: key_of("racks", o) for o in found.get("racks", [])}
    holding = {racks.get((o.get("rack") or {}).get("id")) for o in held}
    now = {key_of("racks", o): o.get("status") for o in payload["objects"].get("racks", [])}
    free = [
        {"id": i, "status": "reserved"}
        for i, k in racks.items()
        if k in holding and now.get(k) == "available"
    ]
    for i in range(0, len(free), BATCH):
        nb.call("PATCH", payload["endpoints"]["racks"], free[i : i + BATCH])


def _retire_kind(nb: NetBox, endpoint: str, gone: list[dict], on_dropped: str, status: str | None) -> None:
    """Delete ``gone``, or give each the retired ``status`` (none: keep it as it is)."""
    if on_dropped == "delete":
        for i in range(0, len(gone), BATCH):
            nb.call("DELETE", endpoint, [{"id": o["id"]} for o in gone[i : i + BATCH]])
    elif status is not None:
        todo = [o for o in gone if (o.get("status") or {}).get("value") != status]
        for i in range(0, len(todo), BATCH):
            nb.call("PATCH", endpoint, [{"id": o["id"], "status": status} for o in todo[i : i + BATCH]])
