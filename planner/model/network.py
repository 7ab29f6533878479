"""Network pods and clusters (§6, §8): pod port and rack limits, and each cluster group's demand
inside its hop scope (one rack, one pod, one building, or the site)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import Demand, LimitKind, Scope
from planner.input.asks import storage_racks
from planner.model.core import ClusterGroup, Model
from planner.model.keys import CountKey, LimitKey, ScopeKey, lp_name
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare
from planner.model.room import room_at
from planner.model.space import add_fixed_loads


def _pods(data: dict):
    return (p for bld in data["site"]["buildings"] for h in bld["halls"] for p in h["pods"])


def relax_pod_ports(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named pod's GPU ports × (1 + step), rounded up, priced at the fabric cost per GPU."""
    steps, cost = [], 0.0
    for p in _pods(data):
        if p["id"] in idents:
            add = math.ceil(p["max_gpus"] * step)
            p["max_gpus"] += add
            cost += add * scenario.site.fabric.cost_usd_per_gpu
            steps.append(f"pod {p['id']} +{add} GPU ports")
    return steps, cost


def relax_pod_racks(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """Each named pod's rack limit × (1 + step), rounded up (no price: a pod's rack count is a design
    choice)."""
    steps = []
    for p in _pods(data):
        if p["id"] in idents and p.get("max_racks"):
            add = math.ceil(p["max_racks"] * step)
            p["max_racks"] += add
            steps.append(f"pod {p['id']} +{add} racks")
    return steps, None


@declare(
    "pods",
    needs=(add_count_variables, add_fixed_loads),
    limits={
        "pod_gpus": LimitRows(LimitKind.pod_gpus, relax_pod_ports),
        "pod_racks": LimitRows(LimitKind.pod_racks, relax_pod_racks),
    },
)
def add_pod_constraints(m: Model) -> None:
    """Pods: Σ n · gpus_t over the pod's rows ≤ max_gpus − installed GPUs; Σ n ≤ max_racks − installed
    racks (all phases together: racks only add). Named ``pod_gpus(POD~A)``, ``pod_racks(POD~A)``."""
    types = m.scenario.catalog.by_id()
    if m.scenario.service_life:  # racks retire and free their pod's ports: a limit per phase
        for p in m.points:
            gpus_p: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
            racks_p: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
            for key, var in m.upto(p):
                pod = m.ix.rows[key.cls.row].row.pod
                if types[key.rack_type].gpus:
                    gpus_p[pod].append((var, types[key.rack_type].gpus))
                racks_p[pod].append((var, 1.0))
            fg, fr = m.existing_pod_at(p)
            _pod_limits(m, gpus_p, racks_p, fg, fr, m.ph(p))
        return
    gpus: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    racks: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        pod = m.ix.rows[key.cls.row].row.pod
        if types[key.rack_type].gpus:
            gpus[pod].append((var, types[key.rack_type].gpus))
        racks[pod].append((var, 1.0))
    _pod_limits(m, gpus, racks, m.existing_pod_gpus, m.existing_pod_racks, "")


def _pod_limits(m: Model, gpus: dict, racks: dict, fixed_gpus: dict, fixed_racks: dict, phase: str) -> None:
    """GPUs ≤ max_gpus and racks ≤ max_racks per pod, less what installed racks take."""
    for pod, items in gpus.items():
        f = fixed_gpus.get(pod, 0)
        m.add_limit(
            LimitKey("pod_gpus", pod, "", phase),
            pulp.LpAffineExpression(items),
            m.ix.pods[pod].max_gpus - f,
            "GPUs",
            f,
        )
    for pod, items in racks.items():
        cap = m.ix.pods[pod].max_racks
        if cap is not None:
            f = fixed_racks.get(pod, 0)
            m.add_limit(
                LimitKey("pod_racks", pod, "", phase), pulp.LpAffineExpression(items), cap - f, "racks", f
            )


def group_counts(
    m: Model, g: ClusterGroup
) -> tuple[list[tuple[CountKey, pulp.LpVariable]], list[tuple[CountKey, pulp.LpVariable]]]:
    """A group's (racks, hot spares) counts."""
    every = m.counts_of(g.id)
    return [(k, v) for k, v in every if k.role != "spare"], [(k, v) for k, v in every if k.role == "spare"]


def fixed_homes(m: Model, g: ClusterGroup) -> set[str]:
    """Scopes where a group of one has racks installed (it is homed there)."""
    if g.k != 1 or g.scope not in (Scope.pod, Scope.building):
        return set()
    return {h for h in m.existing_home.get(g.head.id, set()) if (h in m.ix.pods) == (g.scope == Scope.pod)}


def installed_storage(m: Model, g: ClusterGroup) -> int:
    """Storage racks of a group of one already installed."""
    return (
        sum(1 for r in m.scenario.existing if r.cluster == g.head.id and r.rack_type == g.storage_type)
        if g.k == 1
        else 0
    )


@declare(
    "clusters",
    needs=(add_count_variables, add_fixed_loads),
    limits={"demand_cap": LimitRows(LimitKind.demand_cap)},
)
def add_cluster_constraints(m: Model) -> None:
    """Clusters, per group G of k members with demand d_p each in phase p (installed GPUs E count
    toward it):

    site scope:   exact Σ GPUs_p = k·d_p − E; at_least ≥; max ≤ (if d given);
    pod/building: z[G,s] ∈ {0…k} members homed in scope s (a member with installed racks is homed
                  where they stand), Σ_s z = k (exact, at_least) or ≤ k (max);
                  GPUs in s in p = d_p·z (exact), ≥ d_p·z and ≤ ports_s·z (at_least),
                  ≤ min(d_p, ports_s)·z (max); racks in s ≤ R·z, R the most racks one member
                  takes there;
    rack scope:   one rack per cluster (k = 1).

    Named ``demand(job~a)``, ``scope_gpus(job~a,POD~1)``, ``homes(job~a)``. Gives ``m.z`` and ``m.homes``."""
    racks_cap: dict[Scope, dict[str, int]] = {sc: defaultdict(int) for sc in (Scope.pod, Scope.building)}
    for cls in m.classes.values():
        for sc in racks_cap:
            racks_cap[sc][m.scope_of_row(cls.row, sc)] += cls.size
    ports: dict[Scope, dict[str, int]] = {sc: defaultdict(int) for sc in (Scope.pod, Scope.building)}
    for pid, pod in m.ix.pods.items():
        ports[Scope.pod][pid] += pod.max_gpus
        ports[Scope.building][m.ix.halls[m.ix.pod_hall[pid]][0]] += pod.max_gpus
    for g in m.groups.values():
        if g.scope in (Scope.site, Scope.rack):
            _site_demand(m, g)
        else:
            _scoped_demand(m, g, racks_cap[g.scope], ports[g.scope])


def _gpus_standing(m: Model, items, p: int) -> pulp.LpAffineExpression:
    """Σ GPUs of the counts standing in phase index p."""
    types = m.scenario.catalog.by_id()
    return pulp.LpAffineExpression(
        [
            (var, types[key.rack_type].gpus)
            for key, var in items
            if types[key.rack_type].gpus and m.stands(key, p)
        ]
    )


def _site_demand(m: Model, g: ClusterGroup) -> None:
    """Site (and rack) scope: the group's GPUs standing in each phase meet k · d_p less installed ones."""
    head, k = g.head, g.k
    base = m.existing_gpus.get(head.id, 0) if k == 1 else 0
    mine, _ = group_counts(m, g)
    for p in range(m.from_phase, m.horizon + 1):  # earlier phases are settled (rolling)
        d = m.tl.demand(head, p)
        if m.scenario.service_life and k == 1:
            base = m.existing_gpus_at(head.id, p)
        gpus = _gpus_standing(m, mine, p)
        if head.demand == Demand.exact:
            m.add(gpus == k * d - base, lp_name("demand", g.id, *m.sfx(p)))
        elif head.demand == Demand.at_least:
            m.add(gpus >= k * d - base, lp_name("demand", g.id, *m.sfx(p)))
        elif d is not None:
            m.add_limit(LimitKey("demand_cap", g.id, "", m.ph(p)), gpus, k * d - base, "GPUs", base)
    if g.scope == Scope.rack:
        store = [var for key, var in mine if g.storage_type and key.rack_type == g.storage_type]
        m.add(pulp.lpSum(var for _, var in mine if var not in store) <= 1, lp_name("one_rack", g.id))


def _scoped_demand(m: Model, g: ClusterGroup, racks_cap: dict[str, int], ports: dict[str, int]) -> None:
    """Pod or building scope: members homed per scope (z), racks and GPUs there bound by z."""
    mine, spare = group_counts(m, g)
    by_scope: dict[str, list[tuple[CountKey, pulp.LpVariable]]] = defaultdict(list)
    for key, var in mine:
        by_scope[m.scope_of_row(key.cls.row, g.scope)].append((key, var))
    for key, _ in spare:
        by_scope.setdefault(m.scope_of_row(key.cls.row, g.scope), [])
    homes = m.homes[g.id] = fixed_homes(m, g)
    for sid in homes:
        by_scope.setdefault(sid, [])
    zs = [
        _home(m, g, sid, items, sid in homes, racks_cap[sid], ports[sid])
        for sid, items in sorted(by_scope.items())
    ]
    total = pulp.lpSum(zs)
    if g.head.demand in (Demand.exact, Demand.at_least):
        m.add(total == g.k, lp_name("homes", g.id))
    else:
        m.add(total <= g.k, lp_name("homes", g.id))


def _largest_demand(m: Model, head) -> int | None:
    """The most GPUs the cluster wants in any phase (None when it states no figure)."""
    if head.gpus is None and not head.gpus_by_phase:
        return None
    return max((m.tl.demand(head, p) or 0 for p in range(m.horizon + 1)), default=0)


def _big_gpus(m: Model, head, d: int | None, cap: int, p: int, room: tuple, here: int) -> float:
    """The most GPUs one member may have in a scope in phase index p: its figure (none for at
    least) and the scope's GPU ports ``cap``, and no more than the scope's power, heat and
    positions hold of its types (``room``: the group's (class, rack type) cells there and its
    failover factor) plus its installed GPUs there; an elastic model adds the ports to its figure
    (its limits may be exceeded by their slack)."""
    big = cap if d is None or head.demand == Demand.at_least else min(cap, d)
    if m.elastic:
        return max(big, d or 0) + cap
    cells, factor = room
    if cells:
        big = min(big, room_at(m, p).gpus(cells, factor) + here)
    return big


def _home(
    m: Model, g: ClusterGroup, sid: str, items, fixed_home: bool, racks_cap: int, cap: int
) -> pulp.LpVariable:
    """z[G,s]: members homed in scope s (at least 1 where installed racks stand); racks in s ≤ R·z
    and GPUs in s per phase as the demand says (:func:`add_cluster_constraints`), the GPU bound
    at most the scope's room for the group's rack types then (:mod:`planner.model.room`: the LP
    relaxation cannot spread a cluster thinly over scopes whose power or cooling would not hold it
    whole)."""
    s, head = m.scenario, g.head
    types = s.catalog.by_id()
    n_ph = m.horizon + 1
    z = m.var(lp_name("z", g.id, sid), 1 if fixed_home else 0, g.k, integer=True)
    m.z[ScopeKey(g.id, sid)] = z
    d_max = _largest_demand(m, head)
    gpu_sizes = [types[t].gpus for t in g.gpu_types if types[t].gpus]
    big = racks_cap
    if g.scope == Scope.pod and m.ix.pods[sid].max_racks is not None:
        big = min(big, m.ix.pods[sid].max_racks + storage_racks(s, head))
    if d_max is not None and head.demand != Demand.at_least and gpu_sizes:
        big = min(big, math.ceil(d_max / min(gpu_sizes)) + storage_racks(s, head))
    if s.service_life:  # retired racks may be replaced: at most once per phase
        big *= n_ph
    if m.elastic:  # space and ports may be exceeded by their slack: bound by the demand instead
        big += (d_max or 0) + storage_racks(s, head)
    m.add(pulp.lpSum(var for _, var in items) - big * z <= 0, lp_name("scope_racks", g.id, sid))
    base = m.existing_gpus.get(head.id, 0) if g.k == 1 else 0
    here = base if fixed_home else 0
    cells = [(m.classes[key.cls], types[key.rack_type]) for key, _ in items]
    factor = head.on_power_failure.factor(head.cap_ratio)
    for p in range(m.from_phase, n_ph):  # earlier phases are settled (rolling)
        d = m.tl.demand(head, p)
        if s.service_life and fixed_home:
            here = m.existing_gpus_at(head.id, p)
        g_s = _gpus_standing(m, items, p)
        big_gpus = _big_gpus(m, head, d, cap, p, (cells, factor), here)
        if head.demand == Demand.exact:
            m.add(g_s - d * z == -here, lp_name("scope_gpus", g.id, sid, *m.sfx(p)))
        else:
            m.add(g_s - big_gpus * z <= -here, lp_name("scope_gpus", g.id, sid, *m.sfx(p)))
            if head.demand == Demand.at_least:
                m.add(g_s - d * z >= -here, lp_name("scope_demand", g.id, sid, *m.sfx(p)))
    return z
