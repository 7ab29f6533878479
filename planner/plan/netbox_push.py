"""Load a NetBox bundle (:mod:`planner.plan.netbox`) into a running NetBox through its REST API:
kind by kind in import order, each object created, or updated where one with its natural key
(:data:`KEYS`) exists, so a second load of the same plan updates and a plan under another prefix
stands beside it. Plain HTTP (urllib): the planner needs no NetBox client library.

Tokens: a NetBox ≥ 4.5 token (``nbt_<key>.<secret>``) is sent as ``Bearer``, an older one as
``Token``.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator

from planner.errors import InputError

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


class NetBox:
    """A NetBox REST API at ``url`` (``http://127.0.0.1:8000``) with ``token``."""

    def __init__(self, url: str, token: str, timeout_s: float = 120.0) -> None:
        self.url = url.rstrip("/")
        scheme = "Bearer" if token.startswith("nbt_") else "Token"
        self.headers = {
            "Authorization": f"{scheme} {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.timeout_s = timeout_s

    def call(self, method: str, path: str, body: object = None) -> object:
        """One request; the decoded JSON answer. A refusal raises InputError with NetBox's words."""
        full = path if path.startswith("http") else f"{self.url}{path}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(full, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")[:600]
            raise InputError(f"NetBox refused {method} {path} (HTTP {e.code}): {text}") from None
        except urllib.error.URLError as e:
            raise InputError(f"NetBox at {self.url} cannot be reached: {e.reason}") from None
        return json.loads(raw) if raw else None

    def all(self, endpoint: str, **query: str) -> Iterator[dict]:
        """Every object of ``endpoint`` (``/api/dcim/racks/``), page by page."""
        q = urllib.parse.urlencode({"limit": 1000, **query})
        nxt: str | None = f"{endpoint}?{q}"
        while nxt:
            page = self.call("GET", nxt)
            assert isinstance(page, dict)
            yield from page["results"]
            nxt = page.get("next")
            if nxt and nxt.startswith(self.url):
                nxt = nxt[len(self.url) :]


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
