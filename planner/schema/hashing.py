"""Hashes of a scenario: which question a plan answers (:func:`scenario_hash`) and which run of it
(:func:`run_hash`). Part of the file formats, so the optimiser and the verifier read the same one."""

from __future__ import annotations

import hashlib
import json

from planner.schema.scenario import Scenario


def scenario_hash(scenario: Scenario) -> str:
    """First 16 hex digits of the SHA-256 of the canonical JSON of the planning question: the
    scenario without its solver settings (site, catalog, clusters, objective, budgets, phases,
    costs, …). A plan records the solver settings it was made with beside this hash, so a plan
    made with ``--solver cbc``, ``--time-limit`` or ``--gap`` still answers its scenario."""
    data = scenario.model_dump(mode="json")
    data.pop("solver", None)
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def run_hash(scenario: Scenario) -> str:
    """Like :func:`scenario_hash`, with the solver settings: one run of one question (sweep points
    that differ only in time limit or gap are different runs)."""
    canon = json.dumps(scenario.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]
