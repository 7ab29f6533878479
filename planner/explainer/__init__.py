"""Explain: why a scenario is infeasible, or which limits bind and what relaxing them buys.

Infeasible: an *elastic* copy of the model gives every capacity limit
(space, power normal and N-1, cooling, pods, demand caps, budgets) a slack
s ≥ 0 (lhs − s ≤ limit) and minimises Σ s / max(limit, 1) while every
cluster's demand stays hard. Each positive slack is a conflict, stated in the
limit's own units with the clusters that load it. Clusters whose rack types
fit no position at all are reported before any solve.

Modules: :mod:`~planner.explainer.report` (findings), :mod:`~planner.explainer.infeasible`,
:mod:`~planner.explainer.feasible`; :func:`explain` picks one after a solve.

Feasible: a limit is binding when it is used to ≥ 99 % (normal or worst N-1)
or what is left of it is less than one more rack of the smallest allowed
type would take (power, heat, GPU ports, one rack, one position). Every used
limit is first screened with the row duals of the LP relaxation (first-order
gain of one step, :func:`dual_screen`); the most promising are then re-solved
one by one with that limit relaxed by one step, from the base plan with the
same settings: a power node +10 % capacity (together with the binding nodes
that feed the same rows, since one side of a 2N pair alone buys nothing), a
cooling zone +10 % of its capacity (each unit's kW, not one more unit), a pod
+10 % of its GPU ports or racks, a budget +10 %. A final re-solve relaxes them
all together. The reported gains come from the re-solves (duals of a MILP say
little about integer steps; they only choose what to re-solve); a re-solve
that stops at its limit gives a range.
"""

from __future__ import annotations

from planner.clock import Deadline
from planner.enums import Status
from planner.explainer.feasible import (
    PER_PHASE,
    RELAXABLE,
    RELAXERS,
    STEP,
    TOP,
    Relaxation,
    Replanner,
    dual_screen,
    explain_feasible,
    per_phase_usage,
)
from planner.explainer.infeasible import explain_infeasible, unplaceable
from planner.explainer.report import BINDING_SHARE, NEAR_SHARE, Explanation, Finding
from planner.plan import Plan
from planner.plan.pipeline import plan_scenario
from planner.schema import Scenario
from planner.solving.core import ProgressFn

BASE_SHARE = 0.5
"""Share of the time limit the base plan gets at region scale (the re-plans get the rest)."""

__all__ = [
    "BINDING_SHARE",
    "NEAR_SHARE",
    "PER_PHASE",
    "RELAXABLE",
    "RELAXERS",
    "STEP",
    "TOP",
    "Explanation",
    "Finding",
    "Relaxation",
    "Replanner",
    "dual_screen",
    "explain",
    "explain_feasible",
    "explain_infeasible",
    "per_phase_usage",
    "unplaceable",
]


def explain(
    scenario: Scenario,
    time_limit_s: float | None = None,
    progress: ProgressFn | None = None,
    replan: Replanner | None = None,
    deadline: Deadline | None = None,
) -> tuple[Explanation, Plan | None]:
    """Solve; explain the conflict if infeasible, else the binding limits. ``replan`` (region
    scale; the CLI passes :class:`planner.scale.relaxed.RegionReplanner` for ``--decompose
    building``): no model of the whole for the gains: the base plan gets :data:`BASE_SHARE` of the
    time limit (``deadline``, default from this call), the re-plans what is left."""
    limit = time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s
    if replan is not None:
        deadline = deadline or Deadline(limit)
        plan = replan.base(scenario, Deadline(BASE_SHARE * deadline.limit_s, deadline.t0))
        if plan.status.has_plan:
            return explain_feasible(scenario, plan, progress=progress, replan=replan, deadline=deadline), plan
    plan = plan_scenario(scenario, progress, time_limit_s, deadline=deadline)
    if plan.status == Status.infeasible:
        return explain_infeasible(scenario, time_limit_s, progress), plan
    if not plan.status.has_plan:
        return Explanation(
            scenario.name,
            None,
            f"No plan found within {limit} s; feasibility is unknown. Raise the time limit.",
        ), plan
    return explain_feasible(scenario, plan, time_limit_s, progress=progress), plan
