"""A plan's figures, answered once: every page and command that shows a plan calls
:func:`plan_figures` instead of recomputing on its own (a page that did drifted from the plan).

From a plan's racks, the retrofits it bought and the fabric designs it picked, under a scenario:
the designed fabrics sized, the independent verifier's report (violations and utilisation), KPIs
and costs, stranded power per element, phase summaries and the reliability section. The plan's own
stated figures are ignored and replaced. Loads no solver (the dashboard calls it).
"""

from __future__ import annotations

from planner.plan import Plan, StrandedPower, chosen_fabrics
from planner.plan.kpis import (
    compute_kpis,
    phase_summaries,
    storage_by_phase,
    stranded_power,
    with_backup,
    with_grid,
)
from planner.plan.orders import order_book
from planner.rules.fabric_sizing import fabric_entry, fabric_sizes
from planner.rules.reliability import reliability_report
from planner.schema import Scenario
from planner.verifier import VerifyReport, verify


def plan_figures(plan: Plan, scenario: Scenario) -> tuple[Plan, VerifyReport]:
    """The plan with every figure recomputed (module docstring), and the verifier's report on its
    racks (claims of the input plan are not checked: they are replaced)."""
    chosen = chosen_fabrics(plan)
    fabric = plan.fabric
    if scenario.fabrics and (plan.racks or plan.fabric is not None):
        pod_of_row = scenario.site.row_pods()
        fabric = [
            fabric_entry(cid, z, plan.network_racks, pod_of_row)
            for cid, z in fabric_sizes(scenario, plan.racks, chosen).items()
        ]
    bare = plan.model_copy(
        update={
            "fabric": fabric,
            "kpis": None,
            "utilisation": None,
            "reliability": None,
            "phases": [],
            "stranded": [],
            "orders": order_book(scenario, plan.racks, plan.retrofits),
        }
    )
    rep = verify(bare, scenario)
    bought = [(b.id, b.phase) for b in plan.retrofits]
    total, where = stranded_power(scenario, plan.racks, rep.usage)
    kpis = compute_kpis(scenario, plan.racks, bought, chosen, plan.network_racks).model_copy(
        update={"stranded_kw": total}
    )
    reliability = (
        reliability_report(scenario, plan.racks, network=plan.network_racks, tco_usd=kpis.tco_usd)
        if plan.racks
        else None
    )
    kpis = with_grid(with_backup(kpis, reliability.backup if reliability else []), plan.grid)
    return bare.model_copy(
        update={
            "kpis": kpis,
            "utilisation": rep.usage,
            "reliability": reliability,
            "phases": phase_summaries(
                scenario,
                plan.racks,
                bought,
                rep.phase_usage,
                kpis.capex_backup_usd,
                chosen,
                storage_by_phase(scenario, plan.grid),
            ),
            "stranded": [StrandedPower(node=n, kw=kw, reason=why) for n, kw, why in where],
        }
    ), rep
