"""Scenario variants: the edits a planner makes between two solves (§1 question 5).

Every edit goes through the schema again, so a variant is as validated as a
file. Used by the dashboard's form and compare page.
"""

from __future__ import annotations

import copy
from typing import Any

from planner.input.loader import dump_yaml, scenario_from_data
from planner.schema import Scenario


def scenario_data(scenario: Scenario) -> dict[str, Any]:
    """A self-contained mapping of a scenario (site and merged catalog inline)."""
    return scenario.model_dump(mode="json", exclude_defaults=True)


def apply_changes(scenario: Scenario, changes: dict[str, Any]) -> Scenario:
    """A new validated scenario with ``changes`` applied.

    Keys: ``name``, ``objective``, ``gpu_power_cap_w``, ``power_budget_ratio``,
    ``budgets`` (mapping), ``solver`` (mapping), ``rack_types`` (list: every
    cluster's allowed types), and ``clusters`` (cluster ID → mapping of
    ``gpus``, ``demand``, ``max_hops``, ``rack_types``). A value of None
    removes an optional setting.
    """
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
    for c in data["clusters"]:
        if "rack_types" in changes:
            c["rack_types"] = list(changes["rack_types"])
        for k, v in changes.get("clusters", {}).get(c["id"], {}).items():
            if v is None:
                c.pop(k, None)
            else:
                c[k] = v
    return scenario_from_data(data)


def scenario_yaml(scenario: Scenario) -> str:
    """Self-contained scenario YAML (re-loads to an equal scenario)."""
    return dump_yaml(scenario_data(scenario))
