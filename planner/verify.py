"""Verify stage: re-check every constraint from the plan alone, without the solver.

This module shares no constraint code with the model builder; it reads the
schema, the site geometry and the plan, and recomputes every load. Checks:

- placement: the row exists in the stated building and hall, the position is
  in range, not reserved, not a pod's network rack, and holds one rack;
  coordinates and cable length match the site geometry;
- rack fit: planning power ≤ row max_rack_power_kw; weight ≤ max_rack_weight_kg;
  liquid_fraction > 0 only in rows with a liquid loop; the link class is
  accepted by the rack type and reaches the cable length (and max_cable_m);
- power, normal: every node's load ≤ derate × capacity, where a row's load
  splits evenly over its feeds and a node carries its whole subtree;
- power, N-1: for every node with can_fail, its subtree is dead; a row with
  live feeds splits its load evenly over them, a row without drops (never
  allowed for a ``redundant`` row carrying load); every surviving node stays
  within derate × capacity;
- cooling: Σ power × (1 − liquid_fraction) per air zone and
  Σ power × liquid_fraction per liquid loop ≤ (units − redundant) × unit capacity;
- pods: GPUs ≤ max_gpus, racks ≤ max_racks;
- clusters: allowed rack types, GPU demand (exact / at least / at most), and
  the ``max_hops`` scope (one rack, one pod, one building, anywhere);
- budgets: capex and IT power.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from planner.enums import Status
from planner.kpis import compute_kpis
from planner.plan import Plan, Usage
from planner.schema import Demand, Scenario
from planner.site_index import SiteIndex, index_site

TOL = 1e-6
"""Absolute tolerance for comparing loads (kW) and lengths (m)."""


@dataclass(frozen=True)
class Violation:
    """One broken constraint: which element, which check, the value and the limit."""

    element: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.element}: {self.message}"


@dataclass
class VerifyReport:
    """Outcome of :func:`verify`: violations (empty when the plan is valid) and usage of every limit."""

    violations: list[Violation] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no constraint is violated."""
        return not self.violations

    def add(self, element: str, check: str, message: str) -> None:
        """Record a violation."""
        self.violations.append(Violation(element, check, message))


def _fmt(x: float) -> str:
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def _rack_checks(plan: Plan, scenario: Scenario, ix: SiteIndex, rep: VerifyReport) -> None:
    types = scenario.catalog.by_id()
    clusters = {c.id: c for c in scenario.clusters}
    pod_spots = ix.pod_locations()
    taken: dict[tuple[str, int], int] = {}
    for i, r in enumerate(plan.racks):
        name = f"racks[{i}] ({r.row}/{r.position})"
        ref = ix.rows.get(r.row)
        if ref is None:
            rep.add(name, "placement", f"unknown row '{r.row}'")
            continue
        if (ref.building, ref.hall) != (r.building, r.hall):
            rep.add(name, "placement", f"row '{r.row}' is in {ref.building}/{ref.hall}, not {r.building}/{r.hall}")
        row = ref.row
        if r.position >= row.positions:
            rep.add(name, "placement", f"position {r.position} is outside 0..{row.positions - 1}")
            continue
        if r.position in row.reserved:
            rep.add(name, "placement", f"position {r.position} is reserved")
        if (r.row, r.position) in pod_spots:
            rep.add(name, "placement", f"position {r.position} holds pod {row.pod}'s network rack")
        if (r.row, r.position) in taken:
            rep.add(name, "placement", f"position already holds racks[{taken[r.row, r.position]}]")
        taken.setdefault((r.row, r.position), i)
        x, y = ix.position_xy(r.row, r.position)
        if abs(x - r.x_m) > TOL or abs(y - r.y_m) > TOL:
            rep.add(name, "geometry", f"coordinates ({r.x_m}, {r.y_m}) differ from the site's ({x}, {y})")
        length = ix.cable_length_m(r.row, r.position)
        if abs(length - r.cable_length_m) > TOL:
            rep.add(name, "geometry", f"cable length {r.cable_length_m} m differs from the site's {length} m")
        t = types.get(r.rack_type)
        if t is None:
            rep.add(name, "rack type", f"unknown rack type '{r.rack_type}'")
            continue
        c = clusters.get(r.cluster)
        if c is None:
            rep.add(name, "cluster", f"unknown cluster '{r.cluster}'")
        elif r.rack_type not in c.rack_types:
            rep.add(name, "cluster", f"rack type '{r.rack_type}' is not allowed for cluster '{c.id}' (allowed: {', '.join(c.rack_types)})")
        kw = scenario.rack_power_kw(t)
        if kw > row.max_rack_power_kw + TOL:
            rep.add(name, "rack power", f"{r.rack_type} draws {_fmt(kw)} kW, row limit {_fmt(row.max_rack_power_kw)} kW")
        if t.weight_kg > row.max_rack_weight_kg + TOL:
            rep.add(name, "rack weight", f"{r.rack_type} weighs {_fmt(t.weight_kg)} kg, row limit {_fmt(row.max_rack_weight_kg)} kg")
        if t.liquid_fraction > 0 and row.liquid_loop is None:
            rep.add(name, "cooling medium", f"{r.rack_type} needs a liquid loop; row '{r.row}' has none")
        if t.links > 0:
            _link_check(name, r.link_class, t, length, ix, rep)


def _link_check(name, link_class, t, length, ix: SiteIndex, rep: VerifyReport) -> None:
    if link_class is None:
        rep.add(name, "cable reach", f"{t.id} has {t.links} fabric links but no link class")
        return
    lc = ix.link_classes.get(link_class)
    if lc is None or link_class not in t.link_classes:
        rep.add(name, "cable reach", f"link class '{link_class}' is not accepted by {t.id} (accepted: {', '.join(t.link_classes)})")
        return
    if length > lc.max_length_m + TOL:
        rep.add(name, "cable reach", f"cable {_fmt(length)} m exceeds {link_class} reach {_fmt(lc.max_length_m)} m")
        return
    if t.max_cable_m is not None and length > t.max_cable_m + TOL:
        rep.add(name, "cable reach", f"cable {_fmt(length)} m exceeds {t.id}'s limit {_fmt(t.max_cable_m)} m")
        return
    reach = [ix.link_classes[c] for c in t.link_classes if c in ix.link_classes and ix.link_classes[c].max_length_m + TOL >= length]
    best = min(reach, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id))
    if best.id != link_class:
        rep.add(name, "link class", f"link class '{link_class}' is not the shortest-reach class that covers {_fmt(length)} m ('{best.id}')")


def _row_loads(plan: Plan, scenario: Scenario, ix: SiteIndex) -> dict[str, float]:
    types = scenario.catalog.by_id()
    loads: dict[str, float] = defaultdict(float)
    for r in plan.racks:
        if r.row in ix.rows and r.rack_type in types:
            loads[r.row] += scenario.rack_power_kw(types[r.rack_type])
    return loads


def _node_loads(row_loads: dict[str, float], ix: SiteIndex, dead: set[str]) -> tuple[dict[str, float], list[str]]:
    """Load on every node when the nodes in ``dead`` have failed; also the rows that drop."""
    leaf: dict[str, float] = defaultdict(float)
    dropped = []
    for row_id, kw in row_loads.items():
        feeds = ix.rows[row_id].row.feeds
        live = [f for f in feeds if f not in dead]
        if not live:
            dropped.append(row_id)
            continue
        for f in live:
            leaf[f] += kw / len(live)
    total: dict[str, float] = defaultdict(float)
    for f, kw in leaf.items():
        for a in ix.ancestors(f):
            total[a] += kw
    return total, dropped


def _power_checks(plan: Plan, scenario: Scenario, ix: SiteIndex, rep: VerifyReport) -> None:
    row_loads = _row_loads(plan, scenario, ix)
    normal, _ = _node_loads(row_loads, ix, set())
    worst: dict[str, tuple[float, str | None]] = {n: (normal.get(n, 0.0), None) for n in ix.power_nodes}
    for nid, node in ix.power_nodes.items():
        if normal.get(nid, 0.0) > node.usable_kw + TOL:
            rep.add(nid, "power", f"normal load {_fmt(normal[nid])} kW exceeds {_fmt(node.usable_kw)} kW (derate {node.derate} × {_fmt(node.capacity_kw)} kW)")
    for fid, fnode in ix.power_nodes.items():
        if not fnode.can_fail:
            continue
        dead = ix.subtree(fid)
        loads, dropped = _node_loads(row_loads, ix, dead)
        for row_id in dropped:
            if ix.rows[row_id].row.redundant:
                rep.add(row_id, "power N-1", f"redundant row loses every feed when {fid} fails ({_fmt(row_loads[row_id])} kW dropped)")
        for nid, kw in loads.items():
            if nid in dead:
                continue
            if kw > worst[nid][0] + TOL:
                worst[nid] = (kw, fid)
    for nid, node in ix.power_nodes.items():
        w, f = worst[nid]
        if f is not None and w > node.usable_kw + TOL and normal.get(nid, 0.0) <= node.usable_kw + TOL:
            rep.add(nid, "power N-1", f"load {_fmt(w)} kW exceeds {_fmt(node.usable_kw)} kW when {f} fails")
        rep.usage.append(Usage(kind="power_node", id=nid, value=round(normal.get(nid, 0.0), 6), limit=node.usable_kw, unit="kW", worst_value=round(w, 6), worst_failure=f))


def _cooling_checks(plan: Plan, scenario: Scenario, ix: SiteIndex, rep: VerifyReport) -> None:
    types = scenario.catalog.by_id()
    heat: dict[str, float] = defaultdict(float)
    for r in plan.racks:
        if r.row not in ix.rows or r.rack_type not in types:
            continue
        t = types[r.rack_type]
        kw = scenario.rack_power_kw(t)
        row = ix.rows[r.row].row
        heat[row.air_zone] += kw * (1 - t.liquid_fraction)
        if row.liquid_loop is not None:
            heat[row.liquid_loop] += kw * t.liquid_fraction
    for zid, z in ix.zones.items():
        h = heat.get(zid, 0.0)
        if h > z.capacity_kw + TOL:
            rep.add(zid, "cooling", f"{z.medium} heat {_fmt(h)} kW exceeds {_fmt(z.capacity_kw)} kW ({z.units - z.redundant_units} of {z.units} units × {_fmt(z.unit_capacity_kw)} kW)")
        rep.usage.append(Usage(kind="cooling_zone", id=zid, value=round(h, 6), limit=z.capacity_kw, unit="kW"))


def _pod_checks(plan: Plan, scenario: Scenario, ix: SiteIndex, rep: VerifyReport) -> None:
    types = scenario.catalog.by_id()
    gpus: dict[str, int] = defaultdict(int)
    racks: dict[str, int] = defaultdict(int)
    for r in plan.racks:
        if r.row in ix.rows and r.rack_type in types:
            pod = ix.rows[r.row].row.pod
            gpus[pod] += types[r.rack_type].gpus
            racks[pod] += 1
    for pid, p in ix.pods.items():
        if gpus[pid] > p.max_gpus:
            rep.add(pid, "pod GPUs", f"{gpus[pid]} GPUs exceed the pod's {p.max_gpus} GPU ports")
        rep.usage.append(Usage(kind="pod_gpus", id=pid, value=gpus[pid], limit=p.max_gpus, unit="GPUs"))
        if p.max_racks is not None:
            if racks[pid] > p.max_racks:
                rep.add(pid, "pod racks", f"{racks[pid]} racks exceed the pod's limit of {p.max_racks}")
            rep.usage.append(Usage(kind="pod_racks", id=pid, value=racks[pid], limit=p.max_racks, unit="racks"))


def _hall_usage(plan: Plan, ix: SiteIndex, rep: VerifyReport) -> None:
    used: dict[str, int] = defaultdict(int)
    for r in plan.racks:
        if r.row in ix.rows:
            used[ix.rows[r.row].hall] += 1
    spots = ix.pod_locations()
    usable: dict[str, int] = defaultdict(int)
    for rid, ref in ix.rows.items():
        free = set(range(ref.row.positions)) - set(ref.row.reserved) - {p for (row, p) in spots if row == rid}
        usable[ref.hall] += len(free)
    for hid in ix.halls:
        rep.usage.append(Usage(kind="hall_positions", id=hid, value=used[hid], limit=usable[hid], unit="positions"))


def cluster_scope(scenario: Scenario, max_hops: int) -> str:
    """Widest placement scope a hop budget allows: rack, pod, building or site."""
    h = scenario.site.fabric.hops
    if max_hops >= h.cross_building:
        return "site"
    if max_hops >= h.same_building:
        return "building"
    if max_hops >= h.same_pod:
        return "pod"
    return "rack"


def _cluster_checks(plan: Plan, scenario: Scenario, ix: SiteIndex, rep: VerifyReport) -> None:
    types = scenario.catalog.by_id()
    for c in scenario.clusters:
        mine = [r for r in plan.racks if r.cluster == c.id and r.rack_type in types]
        gpus = sum(types[r.rack_type].gpus for r in mine)
        name = f"cluster {c.id}"
        if c.demand == Demand.exact and gpus != c.gpus:
            rep.add(name, "demand", f"{gpus} GPUs placed, exactly {c.gpus} wanted")
        elif c.demand == Demand.at_least and gpus < (c.gpus or 0):
            rep.add(name, "demand", f"{gpus} GPUs placed, at least {c.gpus} wanted")
        elif c.demand == Demand.max and c.gpus is not None and gpus > c.gpus:
            rep.add(name, "demand", f"{gpus} GPUs placed, at most {c.gpus} wanted")
        scope = cluster_scope(scenario, c.max_hops)
        known = [r for r in mine if r.row in ix.rows]
        if scope == "pod":
            where = {ix.rows[r.row].row.pod for r in known}
        elif scope == "building":
            where = {ix.rows[r.row].building for r in known}
        elif scope == "rack":
            where = {(r.row, r.position) for r in known}
        else:
            where = set()
        if len(where) > 1:
            spread = ", ".join(sorted(map(str, where)))
            rep.add(name, "hops", f"max_hops {c.max_hops} keeps it in one {scope}, but it spans {len(where)}: {spread}")


def _budget_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    k = compute_kpis(scenario, plan.racks)
    b = scenario.budgets
    if b.capex_usd is not None:
        if k.capex_usd > b.capex_usd + 0.01:
            rep.add("budgets.capex_usd", "budget", f"capex ${_fmt(k.capex_usd)} exceeds the budget ${_fmt(b.capex_usd)}")
        rep.usage.append(Usage(kind="budget", id="capex_usd", value=k.capex_usd, limit=b.capex_usd, unit="USD"))
    if b.it_power_kw is not None:
        if k.it_kw > b.it_power_kw + TOL:
            rep.add("budgets.it_power_kw", "budget", f"IT power {_fmt(k.it_kw)} kW exceeds the budget {_fmt(b.it_power_kw)} kW")
        rep.usage.append(Usage(kind="budget", id="it_power_kw", value=k.it_kw, limit=b.it_power_kw, unit="kW"))


def _close(a: float | None, b: float | None, rel: float = 1e-6, abs_: float = 1e-6) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


OBJECTIVE_KPI = {"max_gpus": "gpus", "max_pflops": "pflops_bf16", "min_capex": "capex_usd"}
"""Objective → the KPI it optimises (the objective value a plan claims is that KPI)."""


def _claim_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """A plan is a claim: KPIs, utilisation, objective, bound, gap and status are recomputed
    from the racks and the scenario and must match what the plan states."""
    kpis = compute_kpis(scenario, plan.racks)
    if plan.kpis is not None:
        for key, want in kpis.model_dump().items():
            got = getattr(plan.kpis, key)
            if not _close(float(got), float(want)):
                rep.add(f"kpis.{key}", "claim", f"plan says {_fmt(got)}, the racks give {_fmt(want)}")
    if plan.utilisation is not None:
        mine = {(u.kind, u.id): u for u in rep.usage}
        theirs = {(u.kind, u.id): u for u in plan.utilisation}
        for key in sorted(set(mine) | set(theirs)):
            a, b = theirs.get(key), mine.get(key)
            if a is None or b is None:
                rep.add(f"utilisation {key[0]} {key[1]}", "claim", "listed in the plan but not a limit of the scenario" if b is None else "missing from the plan")
                continue
            for f in ("value", "limit", "worst_value"):
                if not _close(getattr(a, f), getattr(b, f)):
                    rep.add(f"utilisation {key[0]} {key[1]}", "claim", f"{f}: plan says {getattr(a, f)}, the racks give {getattr(b, f)}")
            if a.worst_failure != b.worst_failure and not _close(a.worst_value, b.worst_value):
                rep.add(f"utilisation {key[0]} {key[1]}", "claim", f"worst failure: plan says {a.worst_failure}, the racks give {b.worst_failure}")
    status = plan.status
    if not status.has_plan and plan.racks:
        rep.add("status", "claim", f"status {status.value} says there is no plan, but the plan lists {len(plan.racks)} racks")
    if status in (Status.optimal, Status.feasible) or (status == Status.not_solved and plan.objective_value is not None):
        obj = float(getattr(kpis, OBJECTIVE_KPI[str(scenario.objective)]))
        if plan.objective and plan.objective != scenario.objective:
            rep.add("objective", "claim", f"plan optimised {plan.objective}, the scenario asks for {scenario.objective}")
        if plan.objective_value is None or not _close(plan.objective_value, obj, rel=1e-6, abs_=1e-4):
            rep.add("objective_value", "claim", f"plan says {plan.objective_value}, the racks give {_fmt(obj)}")
        maximise = str(scenario.objective).startswith("max_")
        if plan.bound is not None and ((maximise and plan.bound < obj - 1e-6 * max(1.0, abs(obj))) or (not maximise and plan.bound > obj + 1e-6 * max(1.0, abs(obj)))):
            rep.add("bound", "claim", f"bound {_fmt(plan.bound)} is on the wrong side of the objective {_fmt(obj)}")
        gap = abs(plan.bound - obj) / max(abs(obj), 1.0) if plan.bound is not None else None
        if (plan.gap is None) != (gap is None) or (gap is not None and not _close(plan.gap, gap, rel=1e-4, abs_=1e-6)):
            rep.add("gap", "claim", f"plan says {plan.gap}, its bound and racks give {gap if gap is None else round(gap, 9)}")
        if status == Status.optimal and (gap is None or gap > scenario.solver.rel_gap + 1e-9):
            rep.add("status", "claim", f"optimal needs a gap within {scenario.solver.rel_gap:g}; the gap is {'unknown' if gap is None else f'{gap:.6g}'}")


def scenario_mismatch(plan: Plan, scenario: Scenario) -> str | None:
    """One line when a plan was made for another scenario (name and hash both differ), else none."""
    from planner.loader import scenario_hash

    want = scenario_hash(scenario)
    if plan.scenario_hash and plan.scenario_hash != want and plan.scenario_name != scenario.name:
        return f"plan was made for '{plan.scenario_name}' (hash {plan.scenario_hash}), not '{scenario.name}' (hash {want})"
    return None


def verify(plan: Plan, scenario: Scenario) -> VerifyReport:
    """Check every constraint of ``scenario`` on ``plan`` (list in the module docstring) and
    every figure the plan claims (:func:`_claim_checks`)."""
    rep = VerifyReport()
    other = scenario_mismatch(plan, scenario)
    if other:
        rep.add("scenario", "scenario", other)
        return rep
    if plan.scenario_hash:
        from planner.loader import scenario_hash

        want = scenario_hash(scenario)
        if plan.scenario_hash != want:
            rep.add("scenario_hash", "claim", f"plan says {plan.scenario_hash}, scenario '{scenario.name}' hashes to {want} (it changed since the plan was made)")
    if plan.scenario_name != scenario.name:
        rep.add("scenario_name", "claim", f"plan says '{plan.scenario_name}', the scenario is '{scenario.name}'")
    ix = index_site(scenario.site)
    _rack_checks(plan, scenario, ix, rep)
    _power_checks(plan, scenario, ix, rep)
    _cooling_checks(plan, scenario, ix, rep)
    _pod_checks(plan, scenario, ix, rep)
    _hall_usage(plan, ix, rep)
    _cluster_checks(plan, scenario, ix, rep)
    _budget_checks(plan, scenario, rep)
    _claim_checks(plan, scenario, rep)
    return rep
