"""Exports for the tools planners already use (SPEC §18): a placement table, one row per rack, as
CSV or XLSX (one sheet per hall plus the KPIs), and a NetBox device bulk-import CSV.

Every export is of a plan the verifier accepts against its scenario (the scenario gives each
rack's power and feeds); files are written atomically.

Placement columns (:data:`PLACEMENT_COLUMNS`): building, hall, row, position, width (positions a
multi-rack unit takes from there), x_m, y_m, rack_type,
kind (gpu, storage, network), cluster, phase, kw (the rack's power as the scenario counts it; a
network rack's switches and optics), feeds (the row's feeds, ``+``-joined), link_class, existing.

NetBox (:data:`NETBOX_COLUMNS`, a subset of the fields NetBox's device import form accepts): one
device per rack, named ``<row>-<position>``, in a NetBox rack of the same name, at U1 on the front
face, status ``planned``; site = building, location = hall, role = the rack's kind, device type =
the rack type's ID (or the network design), manufacturer = the catalog's (``generic`` when it names
none); the description names the cluster and phase. Device types, roles, sites, locations and
racks must exist in NetBox before the import (NetBox looks them up by name).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from planner.cells import safe_rows
from planner.errors import InputError
from planner.fileio import atomic_write, atomic_write_with
from planner.plan import Plan
from planner.schema import Scenario
from planner.verifier import verify

PLACEMENT_COLUMNS = [
    "building",
    "hall",
    "row",
    "position",
    "width",
    "x_m",
    "y_m",
    "rack_type",
    "kind",
    "cluster",
    "phase",
    "kw",
    "feeds",
    "link_class",
    "existing",
]
NETBOX_COLUMNS = [
    "name",
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
    "location",
    "rack",
    "position",
    "face",
    "description",
]
FORMATS = ("csv", "xlsx", "netbox")


def placement_rows(plan: Plan, scenario: Scenario) -> list[dict]:
    """One row per rack of the plan (GPU and storage racks, then network racks), in site order; a
    multi-rack unit is one row at its first position with its width in positions."""
    types = scenario.catalog.by_id()
    rows = {r.id: r for b in scenario.site.buildings for h in b.halls for r in h.rows}
    out = []
    for r in plan.racks:
        t = types[r.rack_type]
        out.append(
            {
                "building": r.building,
                "hall": r.hall,
                "row": r.row,
                "position": r.position,
                "width": t.width,
                "x_m": round(r.x_m, 3),
                "y_m": round(r.y_m, 3),
                "rack_type": r.rack_type,
                "kind": "gpu" if t.gpus else str(t.kind),
                "cluster": r.cluster,
                "phase": r.phase or "",
                "kw": round(scenario.rack_power_kw(t), 3),
                "feeds": "+".join(rows[r.row].feeds),
                "link_class": r.link_class or "",
                "existing": r.existing,
            }
        )
    for n in plan.network_racks:
        out.append(
            {
                "building": n.building,
                "hall": n.hall,
                "row": n.row,
                "position": n.position,
                "width": 1,
                "x_m": round(n.x_m, 3),
                "y_m": round(n.y_m, 3),
                "rack_type": n.design,
                "kind": "network",
                "cluster": n.cluster,
                "phase": "",
                "kw": round(n.kw, 3),
                "feeds": "+".join(rows[n.row].feeds),
                "link_class": "",
                "existing": False,
            }
        )
    return sorted(out, key=lambda x: (x["building"], x["hall"], x["row"], x["position"]))


def netbox_rows(plan: Plan, scenario: Scenario) -> list[dict]:
    """The placement as NetBox device import rows (module docstring)."""
    types = scenario.catalog.by_id()
    out = []
    for p in placement_rows(plan, scenario):
        t = types.get(p["rack_type"])
        name = f"{p['row']}-{p['position']:02d}"
        what = (
            f"cluster {p['cluster']}"
            + (f", phase {p['phase']}" if p["phase"] else "")
            + (", installed" if p["existing"] else "")
        )
        out.append(
            {
                "name": name,
                "role": p["kind"],
                "manufacturer": (t.manufacturer if t is not None else "") or "generic",
                "device_type": p["rack_type"],
                "status": "active" if p["existing"] else "planned",
                "site": p["building"],
                "location": p["hall"],
                "rack": name,
                "position": 1,
                "face": "front",
                "description": what,
            }
        )
    return out


def _csv(rows: list[dict], columns: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(safe_rows(rows))
    return buf.getvalue()


def _sheet_name(name: str, taken: set[str]) -> str:
    """An Excel sheet name (≤ 31 characters, none of []:*?/\\), unique among ``taken``."""
    base = "".join("_" if ch in "[]:*?/\\" else ch for ch in name)[:31] or "sheet"
    out, n = base, 1
    while out in taken:
        n += 1
        out = f"{base[:28]}~{n}"
    taken.add(out)
    return out


def _flat(figures: dict) -> dict:
    """Figures with a mapping of parts (``capex_facility_parts_usd``) as one figure per part."""
    out: dict = {}
    for k, v in figures.items():
        if isinstance(v, dict):
            out.update({f"{k}.{part}": x for part, x in v.items()})
        else:
            out[k] = v
    return out


def _xlsx(plan: Plan, scenario: Scenario, rows: list[dict], path: str) -> None:
    import pandas as pd

    taken: set[str] = set()
    with (
        open(path, "wb") as fh,
        pd.ExcelWriter(fh, engine="openpyxl") as xl,
    ):  # a handle: the temporary name has no .xlsx
        kpis = plan.kpis.model_dump(mode="json") if plan.kpis is not None else {}
        head = {
            "scenario": plan.scenario_name,
            "status": str(plan.status),
            "objective": plan.objective,
            "gap": plan.gap,
        }
        pd.DataFrame(
            safe_rows(
                [
                    {"figure": k, "value": v}
                    for k, v in {**head, **_flat(kpis)}.items()
                    if not isinstance(v, (dict, list))
                ]
            )
        ).to_excel(xl, sheet_name=_sheet_name("KPIs", taken), index=False)
        by_hall: dict[str, list[dict]] = {}
        for r in rows:
            by_hall.setdefault(r["hall"], []).append(r)
        for hall, items in by_hall.items():
            pd.DataFrame(safe_rows(items), columns=PLACEMENT_COLUMNS).to_excel(
                xl, sheet_name=_sheet_name(hall, taken), index=False
            )


def export_plan(plan: Plan, scenario: Scenario, fmt: str, path: str | Path) -> int:
    """Write ``plan`` as ``fmt`` (csv, xlsx, netbox) to ``path``; the rows written. A plan the
    verifier rejects against the scenario is refused (InputError naming the first violation)."""
    if fmt not in FORMATS:
        raise InputError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    if not plan.status.has_plan:
        raise InputError(f"the plan has no racks to export (status {plan.status.value})")
    rep = verify(plan, scenario)
    if not rep.ok:
        raise InputError(
            f"the plan does not verify against scenario '{scenario.name}' ({len(rep.violations)} "
            "violation(s), "
            f"first: {rep.violations[0]}): export only a plan made for it"
        )
    rows = placement_rows(plan, scenario)
    if fmt == "csv":
        atomic_write(path, _csv(rows, PLACEMENT_COLUMNS))
    elif fmt == "netbox":
        atomic_write(path, _csv(netbox_rows(plan, scenario), NETBOX_COLUMNS))
    else:
        atomic_write_with(path, lambda tmp: _xlsx(plan, scenario, rows, tmp))
    return len(rows)


def to_bytes(plan: Plan, scenario: Scenario, fmt: str) -> bytes:
    """The export as bytes (for a download button), verified like :func:`export_plan`."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"plan.{'xlsx' if fmt == 'xlsx' else 'csv'}"
        export_plan(plan, scenario, fmt, out)
        return out.read_bytes()
