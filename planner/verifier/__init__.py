"""Verify stage: re-check every constraint from the plan alone, without the solver.

The independent second opinion: the constraint checks (:mod:`~planner.verifier.placement`,
:mod:`~planner.verifier.capacity`, :mod:`~planner.verifier.clusters`, with their own site
look-ups, geometry, power flows, fabric sizing and reliability asks in
:mod:`~planner.verifier.site`, :mod:`~planner.verifier.fabric_recount`, :mod:`~planner.verifier.asks_recount`)
import only the schema and the enums, never the optimiser's modules (a test walks the imports).
The claim checks (:mod:`~planner.verifier.claims`) recompute every figure the plan states with the
verifier's own counts: planning power, retirement, power arrived and money over time
(:mod:`~planner.verifier.rules_recount`), KPIs, costs, the objective, phase summaries and the order
book (:mod:`~planner.verifier.kpis_recount`), stranded power (:mod:`~planner.verifier.stranded_recount`),
goodput, the blast radius and the backup choice (:mod:`~planner.verifier.reliability_recount`) and
the two-stage figures (:mod:`~planner.verifier.futures`).

What both sides still share: the schema (the file formats and their validation), the enums and the
scenario hash (:mod:`planner.schema.hashing`); no optimiser module (``tests/test_imports.py``).
``tests/test_verifier_second_opinion.py`` holds each recount to the optimiser's figures on random
inputs; ``tests/test_mutants.py`` plants engine bugs the verifier alone must catch.

Checks:

- placement: the row exists in the stated building and hall, the position is
  in range, not reserved, not a pod's network rack, and holds one rack;
  coordinates and cable length (Manhattan distance to the pod's network rack
  plus the tray allowance) match the site geometry;
- rack fit: limit power (nameplate, or planning power if the scenario says so)
  ≤ row max_rack_power_kw; weight ≤ max_rack_weight_kg; floor load
  (weight ÷ (pitch × depth)) ≤ the hall's rating; liquid_fraction > 0 only in
  rows with a liquid loop; the link class is accepted by the rack type,
  reaches the cable length (and max_cable_m) and is the shortest that does;
- power, normal: every node's load ≤ derate × capacity, where a row's load
  (its racks plus any pod network rack standing in it) splits evenly over its
  feeds and a node carries its whole subtree;
- power, N-1: for every node with can_fail, its subtree is dead; a row with
  live feeds splits its load evenly over them, a row without drops (never
  allowed for a ``redundant`` row carrying load); every surviving node stays
  within derate × capacity. Normal loads are computed once and each failure
  is applied as a change over the rows it touches (linear in the plan);
- supply (§17): racks of a supplied type placed by each phase ≤ racks delivered by then; the
  designed fabrics' switches of a supplied model ≤ the switches delivered;
- cooling: Σ power × (1 − liquid_fraction) per air zone and
  Σ power × liquid_fraction per liquid loop, network racks included,
  ≤ (units − redundant) × unit capacity;
- pods: GPUs ≤ max_gpus, racks ≤ max_racks;
- clusters: allowed rack types (and HBM need), GPU demand (exact / at least /
  at most), storage racks, and the hop budget: the hops between its two
  farthest racks (same rack, pod, building, or across buildings) ≤ max_hops;
- budgets: capex and IT power of the placed racks;
- power the grid accepts (§21, :mod:`~planner.verifier.grid_recount`): per phase and cluster the
  swing left after the plan's storage and floors within what the sources arrived accept, storage
  and floors only where allowed, storage never falling; the dispatch adding up to the racks'
  energy and within each source; emissions and design-day water within their limits; N-1 while a
  node of a maintained class is out (and a cooling zone one unit short); the grid report's figures,
  totals and costs;
- claims: every figure the plan states (see :func:`_claim_checks`);
- two-stage plans (§17): every future's plan, the shared first phase and the expected figures
  (:mod:`~planner.verifier.futures`).
"""

from __future__ import annotations

from planner.schema import Plan, Scenario
from planner.verifier.capacity import (
    arrival_checks,
    cooling_checks,
    hall_usage,
    pod_checks,
    power_checks,
    supply_checks,
)
from planner.verifier.certificate import check_certificate
from planner.verifier.claims import budget_checks, claim_checks, hash_checks, scenario_mismatch
from planner.verifier.clusters import (
    cluster_checks,
    fabric_checks,
    region_bandwidth_checks,
    spread_checks,
    switch_supply_checks,
)
from planner.verifier.futures import future_checks
from planner.verifier.grid_recount import energy_checks, maintenance_checks, report_checks, swing_checks
from planner.verifier.placement import existing_checks, network_rack_checks, rack_checks, retrofit_checks
from planner.verifier.report import TOL, VerifyReport, Violation
from planner.verifier.site import phase_states, site_view

__all__ = [
    "TOL",
    "VerifyReport",
    "Violation",
    "check_certificate",
    "scenario_mismatch",
    "spread_violations",
    "verify",
]


def spread_violations(scenario: Scenario, racks: list) -> list[Violation]:
    """Spread-limit violations of a set of racks (for the first-fit start)."""
    rep = VerifyReport()
    spread_checks(Plan(scenario_name=scenario.name, racks=racks), scenario, site_view(scenario), rep)
    return rep.violations


def _grid(plan: Plan, scenario: Scenario, site, rep: VerifyReport, st, usage: bool) -> None:
    """§21 in one phase: swings, energy and water, maintenance (:mod:`~planner.verifier.grid_recount`)."""
    swing_checks(plan, scenario, rep, st, usage)
    energy_checks(plan, scenario, site, rep, st, usage)
    maintenance_checks(scenario, site, rep, st)


def verify(plan: Plan, scenario: Scenario) -> VerifyReport:
    """Check every constraint of ``scenario`` on ``plan`` (list in the module docstring) and
    every figure the plan claims (:func:`planner.verifier.claims.claim_checks`)."""
    if plan.stochastic is not None:
        return future_checks(plan, scenario, verify)
    rep = VerifyReport()
    other = scenario_mismatch(plan, scenario)
    if other:
        rep.add("scenario", "scenario", other)
        return rep
    hash_checks(plan, scenario, rep)
    site = site_view(scenario)
    states = phase_states(plan, scenario, site)
    rack_checks(plan, scenario, site, rep, states)
    network_rack_checks(plan, scenario, site, rep)
    existing_checks(plan, scenario, rep)
    retrofit_checks(plan, scenario, site, rep)
    for st in states:
        last = st is states[-1]
        if st.id is not None:
            before = len(rep.usage)
            power_checks(scenario, site, rep, st, usage=True)
            cooling_checks(scenario, site, rep, st, usage=True)
            arrival_checks(scenario, site, rep, st, usage=True)
            supply_checks(scenario, rep, st, usage=True)
            _grid(plan, scenario, site, rep, st, True)
            rep.phase_usage[st.id] = rep.usage[before:]
            if not last:
                del rep.usage[before:]
        else:
            power_checks(scenario, site, rep, st, usage=last)
            cooling_checks(scenario, site, rep, st, usage=last)
            arrival_checks(scenario, site, rep, st, usage=last)
            supply_checks(scenario, rep, st, usage=last)
            _grid(plan, scenario, site, rep, st, last)
    report_checks(plan, scenario, rep)
    pod_checks(plan, scenario, site, rep)
    hall_usage(plan, scenario, site, rep)
    cluster_checks(plan, scenario, site, rep, states)
    spread_checks(plan, scenario, site, rep)
    fabric_checks(plan, scenario, rep, site)
    switch_supply_checks(plan, scenario, rep)
    region_bandwidth_checks(plan, scenario, rep)
    budget_checks(plan, scenario, rep)
    claim_checks(plan, scenario, rep)
    return rep
