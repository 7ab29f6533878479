"""Plan files (§9): reading and writing the plan, a domain object that round-trips through YAML.

A plan lists every placed rack with where it stands and how it is cabled, and carries the
solve's status, objective, bound, gap and timing, the scenario's name and hash, KPIs (§10) and
utilisation of every limit; its models live in :mod:`planner.schema.plan` and are re-exported
here. ``plan_from_text`` and ``plan_to_yaml`` are exact inverses: ``load(dump(plan)) == plan``.
"""

from __future__ import annotations

from pathlib import Path

from planner.errors import InputError
from planner.fileio import atomic_write
from planner.input.loader import parse_yaml, read_yaml_file, validate_model
from planner.schema.plan import (
    BlastRow,
    BoughtRetrofit,
    ClusterFabric,
    ClusterReliability,
    Kpis,
    PhaseSummary,
    PlacedRack,
    Plan,
    ReliabilityReport,
    StrandedPower,
    Usage,
)
from planner.yamlio import dump as dump_plan

__all__ = [
    "BlastRow",
    "BoughtRetrofit",
    "ClusterFabric",
    "ClusterReliability",
    "Kpis",
    "PhaseSummary",
    "PlacedRack",
    "Plan",
    "ReliabilityReport",
    "StrandedPower",
    "Usage",
    "chosen_fabrics",
    "load_plan",
    "plan_from_text",
    "plan_to_yaml",
    "save_plan",
]


def chosen_fabrics(plan: Plan | None) -> dict[str, str]:
    """Cluster → the fabric design a plan says it is built on."""
    return {f.cluster: f.design for f in (plan.fabric or [])} if plan is not None else {}


def plan_to_yaml(plan: Plan) -> str:
    """The plan as YAML text, one rack per line (planner.yamlio)."""
    return dump_plan(plan.model_dump(mode="json"), ("racks",))


def plan_from_text(text: str | bytes, source: str = "<plan>") -> Plan:
    """Parse and validate plan YAML text."""
    return validate_model(Plan, parse_yaml(text, source), "", source)


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan YAML file."""
    data = read_yaml_file(path)
    if not isinstance(data, dict):
        raise InputError("expected a plan mapping", str(path))
    return validate_model(Plan, data, "", str(path))


def save_plan(plan: Plan, path: str | Path) -> None:
    """Write a plan YAML file atomically (temp file, fsync, rename)."""
    atomic_write(path, plan_to_yaml(plan))
