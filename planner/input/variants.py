"""Scenario variants: the edits a planner makes between two solves (§1 question 5).

Every edit goes through the schema again, so a variant is as validated as a
file. Used by the dashboard's form and compare page.
"""

from __future__ import annotations

import copy
from typing import Any

from planner.errors import InputError
from planner.input.loader import dump_yaml, scenario_from_data
from planner.schema import Scenario


def scenario_data(scenario: Scenario) -> dict[str, Any]:
    """A self-contained mapping of a scenario (site and merged catalog inline)."""
    return scenario.model_dump(mode="json", exclude_defaults=True)


def apply_changes(scenario: Scenario, changes: dict[str, Any]) -> Scenario:
    """A new validated scenario with ``changes`` applied.

    Keys: ``name``, ``objective``, ``gpu_power_cap_w``, ``power_budget_ratio``,
    ``budgets`` (mapping), ``solver`` (mapping), ``rack_types`` (list: every
    cluster's allowed types), ``clusters`` (cluster ID → mapping of
    ``gpus``, ``demand``, ``max_hops``, ``rack_types``) and ``site`` (``power_nodes``,
    ``cooling_zones`` or ``rows``: ID → fields to set, e.g. a node's ``capacity_kw``, a zone's
    ``units``, a row's ``reserved``) and ``add_retrofits`` (retrofits the plan may buy, appended).
    A value of None removes an optional setting.
    """
    _check_shape(changes)
    data = copy.deepcopy(scenario_data(scenario))
    for key in ("name", "objective", "gpu_power_cap_w", "power_budget_ratio", "description"):
        if key in changes:
            if changes[key] is None:
                data.pop(key, None)
            else:
                data[key] = changes[key]
    for key in ("budgets", "solver"):
        if key in changes:
            merged = {**data.get(key, {}), **changes[key]}
            data[key] = {k: v for k, v in merged.items() if v is not None}
    _cluster_changes(data["clusters"], changes)
    if "site" in changes:
        _site_changes(data["site"], changes["site"])
    if changes.get("add_retrofits"):
        data["retrofits"] = [*data.get("retrofits", []), *changes["add_retrofits"]]
    return scenario_from_data(data)


def _mapping(v: Any, path: str, of: str) -> dict:
    if not isinstance(v, dict):
        raise InputError(f"{path}: expected a mapping of {of}, got {type(v).__name__}")
    return v


def _check_shape(changes: Any) -> None:
    """A change set's shape (:func:`apply_changes`): mappings where mappings go, a list of rack
    types, a list of retrofits; an InputError names the first path that is not."""
    _mapping(changes, "changes", "what to change")
    for key in ("budgets", "solver"):
        if key in changes:
            _mapping(changes[key], key, "fields")
    if "rack_types" in changes and not isinstance(changes["rack_types"], list):
        raise InputError(
            f"rack_types: expected a list of rack type IDs, got {type(changes['rack_types']).__name__}"
        )
    for cid, fields in _mapping(changes.get("clusters", {}), "clusters", "cluster IDs to fields").items():
        _mapping(fields, f"clusters.{cid}", "fields")
    for kind, items in _mapping(
        changes.get("site", {}), "site", "power_nodes, cooling_zones or rows"
    ).items():
        if kind not in ("power_nodes", "cooling_zones", "rows"):
            raise InputError(f"site.{kind}: not one of power_nodes, cooling_zones, rows")
        for item_id, fields in _mapping(items, f"site.{kind}", "IDs to fields").items():
            _mapping(fields, f"site.{kind}.{item_id}", "fields")
    if changes.get("add_retrofits") is not None and not isinstance(changes["add_retrofits"], list):
        raise InputError(
            f"add_retrofits: expected a list of retrofits, got {type(changes['add_retrofits']).__name__}"
        )


def _cluster_changes(clusters: list[dict], changes: dict[str, Any]) -> None:
    for c in clusters:
        if "rack_types" in changes:
            c["rack_types"] = list(changes["rack_types"])
        for k, v in changes.get("clusters", {}).get(c["id"], {}).items():
            if v is None:
                c.pop(k, None)
            else:
                c[k] = v


def _site_changes(site: dict, changes: dict[str, dict[str, dict]]) -> None:
    """Set fields of named power nodes, cooling zones and rows of a site mapping; an unknown ID is
    an InputError naming it."""
    found: dict[str, dict] = {}
    for b in site.get("buildings", []):
        found |= {("power_nodes", n["id"]): n for n in b.get("power_nodes", [])}
        for h in b.get("halls", []):
            for kind in ("power_nodes", "cooling_zones", "rows"):
                found |= {(kind, x["id"]): x for x in h.get(kind, [])}
    for kind, items in changes.items():
        for item_id, fields in items.items():
            target = found.get((kind, item_id))
            if target is None:
                raise InputError(f"site.{kind}: no '{item_id}' in the site")
            for k, v in fields.items():
                if v is None:
                    target.pop(k, None)
                else:
                    target[k] = v


def scenario_yaml(scenario: Scenario) -> str:
    """Self-contained scenario YAML (re-loads to an equal scenario)."""
    return dump_yaml(scenario_data(scenario))
