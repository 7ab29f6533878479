"""Build stage: scenario → MILP (PuLP), one ``add_<family>_constraints`` per constraint family.

Modules: :mod:`~planner.model.keys` (keys and names), :mod:`~planner.model.core` (the model
object), :mod:`~planner.model.classes` (position classes and cluster groups), one module per
family (:mod:`~planner.model.space`, :mod:`~planner.model.power`, :mod:`~planner.model.cooling`,
:mod:`~planner.model.network`, :mod:`~planner.model.fabric`, :mod:`~planner.model.spread`,
:mod:`~planner.model.phases`, :mod:`~planner.model.storage`) and
:mod:`~planner.model.objective`; :func:`build` below is the recipe.

**Keys.** Every variable and limit is keyed by a typed key and named from it
(:mod:`~planner.model.keys`: ``n(R01@2,grand~teton~h100,train~gt)``,
``power_n1(BW~B1,UPS~A)``, ``load(BW~A1&BW~B1)``): names read back to site elements.

**Aggregation.** Positions of one row within one cable-length band are
interchangeable (same feeds, zones, pod, limits, link class), so the model has
an integer count per (position class, rack type, cluster group)

    n[k, t, G] ∈ {0, …, size_k},

created only where t is allowed for G and fits k (power, weight, floor load,
cooling medium, cable reach). With ``aggregate=False`` every position is its
own class and n is binary (the per-position formulation, kept for comparison).
Concrete positions are filled afterwards, nearest the pod's network rack first.

**Cluster groups.** Clusters that are identical for the model (same demand and
GPU count, rack types, hop scope, storage and HBM need, and one GPU count per
rack that divides the demand) form one group G of k members: the model decides
how many members z[G, s] ∈ {0, …, k} are homed in each pod or building s and
how many racks G has where; the fill step deals racks out to the members (each
member's share of a scope is exact, since every rack holds the same number of
GPUs and that number divides the demand). A group of one is a plain cluster
(z is then the binary choice of its scope). This keeps the pod-scoped model of
many identical clusters at classes × rack types instead of classes × clusters,
with the same optimum (property-tested against ``group_clusters=False``).

**Fixed load.** Every pod's network rack (a catalog rack type) stands at its
position in every plan: its power counts on its row's feeds and its heat in
its row's zones, as constants on the right-hand sides.

Nothing from PuLP leaves the build/solve stages: :class:`Model` holds the
problem for :mod:`planner.solving.core`, which returns plain values.
"""

from __future__ import annotations

from pathlib import Path

import pulp

from planner.clock import Deadline
from planner.enums import Objective
from planner.fileio import atomic_write_with
from planner.input.power_model import power_model
from planner.input.site_index import index_site
from planner.input.timeline import timeline
from planner.model.classes import cluster_groups, network_positions, position_classes
from planner.model.core import ClusterGroup, FixedItem, Limit, Model, Needs, PositionClass, build_until
from planner.model.families import FAMILIES, limit_rows
from planner.model.keys import BuyKey, ClassKey, CountKey, LimitKey, ScopeKey, class_label, lp_name
from planner.model.objective import OBJECTIVES, objective_expr
from planner.model.phases import retrofit_needs
from planner.model.registry import Family, LimitRows, OrderError
from planner.model.spread import spread_domains
from planner.schema import Scenario

__all__ = [
    "FAMILIES",
    "OBJECTIVES",
    "BuyKey",
    "ClassKey",
    "ClusterGroup",
    "CountKey",
    "Family",
    "FixedItem",
    "Limit",
    "LimitKey",
    "LimitRows",
    "Model",
    "Needs",
    "OrderError",
    "PositionClass",
    "ScopeKey",
    "build",
    "class_label",
    "cluster_groups",
    "limit_rows",
    "lp_name",
    "lp_text",
    "new_model",
    "objective_expr",
    "position_classes",
    "retrofit_needs",
    "spread_domains",
    "write_lp",
]


def new_model(
    scenario: Scenario,
    aggregate: bool = True,
    elastic: bool = False,
    group_clusters: bool = True,
    from_phase: int = 0,
    fixed_buys: tuple = (),
    to_phase: int = -1,
    deadline: Deadline | None = None,
    installed_network: tuple = (),
) -> Model:
    """An empty model of a validated scenario: its position classes, cluster groups and power
    models, no families yet (arguments as for :func:`build`)."""
    ix = index_site(scenario.site)
    tl = timeline(scenario)
    objective = Objective(scenario.objective)
    sense = pulp.LpMaximize if objective.maximise and not elastic else pulp.LpMinimize
    installed = {c.id for c in scenario.clusters if any(r.cluster == c.id for r in scenario.existing)}
    if deadline is not None:
        deadline.check("building the model", build_until(deadline))
    m = Model(
        scenario,
        ix,
        pulp.LpProblem("plan", sense),
        position_classes(scenario, ix, aggregate),
        cluster_groups(scenario, group_clusters and not elastic, installed),
        power_model(ix, maintained=maintained_nodes(scenario, ix)),
        tl,
        aggregate=aggregate,
        elastic=elastic,
        objective_name="least relative slack" if elastic else objective.value,
        from_phase=from_phase,
        fixed_buys=tuple(fixed_buys),
        to_phase=to_phase,
        installed_network=tuple(installed_network),
    )
    m.deadline = deadline
    if deadline is not None:
        deadline.check(
            "building the model", build_until(deadline)
        )  # the classes and power models took their time
    kept = maintained_nodes(scenario, ix)
    m.pms = {
        p: (m.pm if not tl.offline_nodes(p) else power_model(ix, tl.offline_nodes(p), kept)) for p in m.points
    }
    m.network_rows = network_positions(scenario, ix)
    return m


def maintained_nodes(scenario, ix) -> frozenset[str]:
    """Power nodes of a class the scenario's maintenance level names, in the buildings it names (§21)."""
    if not scenario.maintenance:
        return frozenset()
    return frozenset(
        n for n, node in ix.power_nodes.items() if scenario.maintained(node.kind, ix.node_building.get(n))
    )


def lp_text(m: Model) -> str:
    """The model as built in CPLEX LP format, its rows family by family in build order, each block
    headed by a comment naming its family (the names of :mod:`planner.model.keys`). The objective's
    constant (fixed costs) is left out, as LP files do; it shifts the value, not the optimum."""
    prob = m.prob
    objective = prob.objective if prob.objective is not None else pulp.LpAffineExpression()
    zero = "__zero"  # a variable fixed at 0 standing in an empty objective or row (as PuLP's writer does)
    used_zero = not objective.keys()
    out = ["\\* plan *\\", "Minimize" if prob.sense == pulp.LpMinimize else "Maximize"]
    out.append(
        objective.asCplexLpAffineExpression("OBJ", include_constant=False).rstrip("\n")
        if objective.keys()
        else f"OBJ: 0 {zero}"
    )
    out.append("Subject To")
    for family, block in m.blocks.items():
        if block:
            out.append(f"\\ family {family}: {len(block)} rows")
        for name, row in block.items():
            if not row.keys():
                used_zero = True
                sense = {pulp.LpConstraintLE: "<=", pulp.LpConstraintGE: ">=", pulp.LpConstraintEQ: "="}[
                    row.sense
                ]
                out.append(f"{name}: {zero} {sense} {-row.constant:.12g}")
                continue
            out.append(row.asCplexLpConstraint(name).rstrip("\n"))
    variables = prob.variables()
    bounded = [
        v for v in variables if not (v.isPositive() and v.cat == pulp.LpContinuous) and not v.isBinary()
    ]
    if bounded or used_zero:
        out += ["Bounds", *(f" {v.asCplexLpVariable()}" for v in bounded)]
        if used_zero:
            out.append(f" {zero} = 0")
    generals = [v.name for v in variables if v.cat == pulp.LpInteger and not v.isBinary()]
    binaries = [v.name for v in variables if v.isBinary()]
    out += ["Generals", *generals] if generals else []
    out += ["Binaries", *binaries] if binaries else []
    return "\n".join([*out, "End"]) + "\n"


def write_lp(m: Model, path: str | Path) -> None:
    """Write :func:`lp_text` atomically to ``path`` (``-``: standard output)."""
    text = lp_text(m)
    if str(path) == "-":
        import sys

        sys.stdout.write(text)
        return
    atomic_write_with(path, lambda tmp: Path(tmp).write_text(text))


def build(
    scenario: Scenario,
    aggregate: bool = True,
    elastic: bool = False,
    group_clusters: bool = True,
    from_phase: int = 0,
    fixed_buys: tuple = (),
    to_phase: int = -1,
    deadline: Deadline | None = None,
    families: tuple[Family, ...] = FAMILIES,
    installed_network: tuple = (),
) -> Model:
    """Build stage: the MILP of a validated scenario, family by family (:data:`FAMILIES`).

    ``elastic``: every capacity limit gets a slack and the objective becomes
    min Σ slack / max(limit, 1); demands stay hard (used by :mod:`planner.explainer`).
    ``group_clusters``: model identical clusters as one group (module docstring).
    ``from_phase``, ``fixed_buys``: rolling planning (phases before ``from_phase`` are settled: their
    racks are in ``scenario.existing``, their retrofits in ``fixed_buys``).
    ``deadline``: checked before each family; past it the build stops with :class:`~planner.clock.TimeUp`.
    ``families``: the families to add, in order (:data:`FAMILIES`; a test adds a toy one).
    ``installed_network``: network racks standing already (rolling planning with designed fabrics:
    the earlier phases' switches stay and the fabric grows from them).
    """
    m = new_model(
        scenario,
        aggregate,
        elastic,
        group_clusters,
        from_phase,
        fixed_buys,
        to_phase,
        deadline,
        installed_network,
    )
    for family in families:
        if deadline is not None:
            deadline.check("building the model", build_until(deadline))
        family(m)
    if elastic:
        m.prob.setObjective(pulp.lpSum(m.slack[k] * (1.0 / max(m.limits[k].limit, 1.0)) for k in m.slack))
    else:
        m.prob.setObjective(objective_expr(m, Objective(scenario.objective)))
    return m
