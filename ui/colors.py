"""Fixed colours: one per rack type (by its place in the catalog) and one per cluster (by its
place in the scenario), the same on every chart and page."""

from __future__ import annotations

from planner.schema import Scenario

PALETTE = [
    "#1f5fa8",
    "#e07b00",
    "#2a9d4b",
    "#c23b3b",
    "#7d4fb0",
    "#8c6d31",
    "#d45fa8",
    "#4d9fb8",
    "#b5b82c",
    "#5a5a5a",
    "#0f8b8d",
    "#a4508b",
    "#6a994e",
    "#bc4749",
    "#3d5a80",
    "#ee964b",
]
"""Distinct colours, cycled."""


def rack_type_colors(scenario: Scenario) -> dict[str, str]:
    """Rack type ID → colour, by the type's index in the merged catalog."""
    return {t.id: PALETTE[i % len(PALETTE)] for i, t in enumerate(scenario.catalog.rack_types)}


def cluster_colors(scenario: Scenario) -> dict[str, str]:
    """Cluster ID → colour, by the cluster's index in the scenario."""
    return {c.id: PALETTE[i % len(PALETTE)] for i, c in enumerate(scenario.clusters)}
