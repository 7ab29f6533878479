"""What the failover policies buy (§11), the parts that need no solve: the scenario under strict
N-1 (every cluster keeping power in a contingency), a plan's rack counts (the witness the verifier
re-checks) and the plan's note. The solve itself is :func:`planner.plan.pipeline.failover_gain`."""

from __future__ import annotations

from collections import defaultdict

from planner.enums import FailoverPolicy, Objective, Status
from planner.plan import PlacedRack
from planner.schema import FailoverGain, RackCount, Scenario


def strict_n1(scenario: Scenario) -> Scenario:
    """The scenario with every cluster keeping power in a contingency (strict N-1)."""
    clusters = [c.model_copy(update={"on_power_failure": FailoverPolicy.keep}) for c in scenario.clusters]
    return scenario.model_copy(update={"clusters": clusters})


def rack_counts(racks: list[PlacedRack]) -> list[RackCount]:
    """Racks per (row, type, cluster, spare), in row order: a plan's witness."""
    n: dict[tuple[str, str, str, bool], int] = defaultdict(int)
    for r in racks:
        if not r.existing:
            n[r.row, r.rack_type, r.cluster, r.spare] += 1
    return [
        RackCount(row=row, rack_type=t, cluster=c, count=k, spare=sp)
        for (row, t, c, sp), k in sorted(n.items())
    ]


def failover_text(scenario: Scenario, g: FailoverGain) -> str:
    """The plan's note on the failover gain."""
    unit = Objective(scenario.objective).unit_for(bool(scenario.phases))
    if g.strict_gpus is None:
        if g.strict_status == Status.infeasible:
            return (
                "failover policies: strict N-1 (infeasible) cannot meet the demands; the policies make "
                "this plan possible"
            )
        return f"failover policies: gain against strict N-1 {g.note}"
    return (
        f"failover policies: {g.gain_objective:+,.6g} {unit} against strict N-1 ({g.strict_objective:,.6g} "
        f"{unit}, "
        f"{g.strict_status.value}); {g.gain_gpus:+,} GPUs ({g.strict_gpus:,} under strict N-1)"
    )
