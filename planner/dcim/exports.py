"""Exports for the tools planners already use (SPEC §18): a placement table, one row per rack, as
CSV or XLSX (one sheet per hall plus the KPIs), and a NetBox device bulk-import CSV.

Every export is of a plan the verifier accepts against its scenario (the scenario gives each
rack's power and feeds); files are written atomically.

Placement columns (:data:`PLACEMENT_COLUMNS`): building, hall, row, position, width (positions a
multi-rack unit takes from there), x_m, y_m, rack_type,
kind (gpu, storage, network), cluster, phase, kw (the rack's power as the scenario counts it; a
network rack's switches and optics), feeds (the row's feeds, ``+``-joined), link_class, existing.

NetBox (``netbox``): a folder (or a ``.zip``) of the CSV files NetBox's bulk import forms take, one
per object kind in import order, beside ``overlay.yaml`` (what NetBox cannot hold, for ``planner
import netbox``) and ``netbox-api.json``; ``netbox-api`` writes only the REST API payload. The
objects, names and conventions: :mod:`planner.dcim.bundle`. :data:`NETBOX_COLUMNS` are the first
columns of the devices file (a subset of NetBox's device import fields).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from planner.cells import safe_rows
from planner.errors import InputError
from planner.fileio import atomic_write, atomic_write_folder, atomic_write_with
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
FORMATS = ("csv", "xlsx", "netbox", "netbox-api")


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
    """The NetBox bundle's devices (one per position taken; :mod:`planner.dcim.bundle`)."""
    from planner.dcim.bundle import bundle

    return bundle(plan, scenario).objects["devices"]


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


def netbox_files(
    plan: Plan, scenario: Scenario, prefix: str = "", level: str = "campus", whips: bool = True
) -> dict[str, str]:
    """File name → text of the NetBox bundle (module docstring)."""
    from planner.dcim.bundle import api_json, bundle, csv_files
    from planner.dcim.site import overlay_of
    from planner.yamlio import dump

    b = bundle(plan, scenario, prefix, level, whips)
    head = "# What NetBox cannot hold of this site: planner import netbox --overlay overlay.yaml\n"
    return {
        **csv_files(b),
        "overlay.yaml": head + dump(overlay_of(scenario.site)),
        "netbox-api.json": api_json(b),
    }


def _write_folder(path: str | Path, files: dict[str, str]) -> None:
    """All files into folder ``path`` (made if new; an existing one must be a real folder whose
    files of these names are regular files), or all of them into one ``.zip`` file. Every check
    comes before the first byte; the files are written whole into a temporary folder beside the
    target and only then moved in (a rename each, which needs no space), so a failure while
    writing (a full disk) leaves the target as it was."""
    p = Path(path)
    if p.suffix == ".zip":
        import zipfile

        def write(tmp: str) -> None:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
                for name, text in files.items():
                    z.writestr(name, text)

        atomic_write_with(p, write)
        return
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise InputError(f"-o {p}: not a folder (a NetBox bundle is a folder or a .zip)")
    atomic_write_folder(p, files)


def export_plan(
    plan: Plan,
    scenario: Scenario,
    fmt: str,
    path: str | Path,
    prefix: str = "",
    level: str = "campus",
    whips: bool = True,
) -> int:
    """Write ``plan`` as ``fmt`` (csv, xlsx, netbox, netbox-api) to ``path``; the racks written. A
    plan the verifier rejects against the scenario is refused (InputError naming the first
    violation). ``prefix`` and ``level`` name NetBox objects, ``whips`` False leaves out the racks'
    whips, power ports and cables (:mod:`planner.dcim.bundle`)."""
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
        _write_folder(path, netbox_files(plan, scenario, prefix, level, whips))
    elif fmt == "netbox-api":
        from planner.dcim.bundle import api_json, bundle

        atomic_write(path, api_json(bundle(plan, scenario, prefix, level, whips)))
    else:
        atomic_write_with(path, lambda tmp: _xlsx(plan, scenario, rows, tmp))
    return len(rows)


def to_bytes(plan: Plan, scenario: Scenario, fmt: str) -> bytes:
    """The export as bytes (for a download button), verified like :func:`export_plan`."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        ext = {"xlsx": "xlsx", "netbox": "zip", "netbox-api": "json"}.get(fmt, "csv")
        out = Path(folder) / f"plan.{ext}"
        export_plan(plan, scenario, fmt, out)
        return out.read_bytes()
