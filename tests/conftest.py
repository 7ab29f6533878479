"""Shared helpers: the small-hall scenario as data, and tiny inline sites."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from planner.input.loader import read_yaml_file, scenario_from_data
from planner.schema import Scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


def small_hall_data() -> dict[str, Any]:
    """The small-hall scenario as a plain mapping with its site inlined."""
    data = read_yaml_file(DATASETS / "small-hall.yaml")
    data["site"] = read_yaml_file(DATASETS / "small-hall.site.yaml")
    return data


_SMALL = small_hall_data()


@pytest.fixture
def small_data() -> dict[str, Any]:
    """A fresh deep copy of the small-hall scenario mapping."""
    return copy.deepcopy(_SMALL)


@pytest.fixture(scope="session")
def small_hall() -> Scenario:
    """The validated small-hall scenario."""
    return scenario_from_data(copy.deepcopy(_SMALL))


def tiny_scenario(
    rows: list[dict[str, Any]],
    power_nodes: list[dict[str, Any]],
    clusters: list[dict[str, Any]],
    zones: list[dict[str, Any]] | None = None,
    pods: list[dict[str, Any]] | None = None,
    rack_types: list[dict[str, Any]] | None = None,
    net_positions: int = 1,
    **extra: Any,
) -> Scenario:
    """A one-building, one-hall scenario built inline for hand-solvable tests.

    Rows default to air zone ``AIR`` (10,000 kW) and pod ``P`` (no limits), whose
    network rack stands at position 0 of an extra row ``NET``; pods draw no network-rack power
    unless they say so (``network_rack_type``), and placed racks no back-end network allowance unless
    the test asks for it (``network_allowance=True``), so hand derivations count only placed racks.
    """
    defaults = {"air_zone": "AIR", "pod": "P", "max_rack_power_kw": 200, "pitch_m": 0.6}
    rows = [{**defaults, **r} for r in rows]
    net_row = {
        "id": "NET",
        "positions": net_positions,
        "origin_y_m": -2.4,
        "feeds": [power_nodes[-1]["id"]],
        **{k: v for k, v in defaults.items() if k != "pitch_m"},
        "pod": pods[0]["id"] if pods else "P",
    }
    site = {
        "id": "tiny",
        "buildings": [
            {
                "id": "B1",
                "halls": [
                    {
                        "id": "H1",
                        "floor_area_m2": 100,
                        "power_nodes": power_nodes,
                        "cooling_zones": zones
                        or [{"id": "AIR", "medium": "air", "units": 1, "unit_capacity_kw": 10000}],
                        "pods": [
                            {"network_rack_type": None, **p}
                            for p in (
                                pods
                                or [
                                    {
                                        "id": "P",
                                        "network_rack": {"row": "NET", "position": 0},
                                        "max_gpus": 100000,
                                    }
                                ]
                            )
                        ],
                        "rows": [*rows, net_row],
                    }
                ],
            }
        ],
    }
    data: dict[str, Any] = {
        "name": "tiny",
        "site": site,
        "clusters": clusters,
        "network_allowance": False,
        **extra,
    }
    if rack_types is not None:
        data["catalog"] = {"rack_types": rack_types}
    return scenario_from_data(data)


@pytest.fixture(autouse=True)
def _own_plan_library(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets an empty plan library (planner/library/__init__.py): nothing a test or an earlier
    run stored is reused by another."""
    monkeypatch.setenv("PLANNER_LIBRARY", f"sqlite:///{tmp_path_factory.mktemp('library')}/library.sqlite")
