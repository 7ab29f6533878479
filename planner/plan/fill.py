"""From counts to positions and back: a solve's counts dealt out to the clusters of each group
(:func:`deal`) and stood at concrete positions (:func:`fill`), and a placement turned into the
model's variables for a start (:func:`start_from_racks`)."""

from __future__ import annotations

from collections import defaultdict

from planner.enums import Demand, Scope
from planner.input.asks import storage_racks
from planner.input.site_index import place
from planner.model import ClassKey, CountKey, Model, ScopeKey
from planner.model.core import runs
from planner.plan import PlacedRack


def deal(
    m: Model, counts: dict[CountKey, int], values: dict[str, float]
) -> dict[tuple[ClassKey, str, str, str | None, str], int]:
    """Racks of each cluster group dealt out to its members, phase by phase: a scope with z members
    homed gives each member what its demand grows by in that phase (racks of one GPU size dividing
    it, so shares are exact), any rest to the member holding fewest (at least: every later phase's
    figure then stays reachable) or the first (uncapped as many as fit), and each
    member its storage racks (clusters with hot spares are never grouped). Keys: (class, rack type,
    cluster, phase, role)."""
    out: dict[tuple[ClassKey, str, str, str | None, str], int] = defaultdict(int)
    by_group: dict[str, list[tuple[CountKey, int]]] = defaultdict(list)
    for key, n in counts.items():
        by_group[key.group].append((key, n))
    for gid, items in by_group.items():
        g = m.groups[gid]
        if g.k == 1:
            for key, n in items:
                out[key.cls, key.rack_type, g.head.id, key.phase, key.role] += n
            continue
        scoped = g.scope in (Scope.pod, Scope.building)
        homes = (
            sorted((sk.scope, round(values.get(z.name, 0.0))) for sk, z in m.z.items() if sk.group == gid)
            if scoped
            else [("", g.k)]
        )
        members = iter(g.members)
        in_scope: dict[str, list[tuple[CountKey, int]]] = defaultdict(list)
        for x in sorted(items, key=lambda x: (m.tl.at(x[0].phase), x[0].cls, x[0].rack_type)):  # sorted once
            in_scope[_scope_key(m, x[0].cls.row, g.scope) if scoped else ""].append(x)
        for sid, z in homes:
            if z > 0:
                team = [next(members) for _ in range(z)]
                _deal_scope(m, g, team, in_scope.get(sid if scoped else "", []), out)
    return dict(out)


def _deal_scope(m: Model, g, team: list, here: list[tuple[CountKey, int]], out: dict) -> None:
    """One scope's racks to the members homed there, phase by phase: GPU racks up to each member's
    demand (the rest to the member holding fewest for at least, else to the first), then each
    member's storage racks."""
    types = m.scenario.catalog.by_id()
    had = [0] * len(team)  # racks each member holds so far
    stored = [0] * len(team)
    for p, ph in enumerate(m.tl.phases):
        gpu = [key for key, n in here if key.phase == ph and types[key.rack_type].gpus for _ in range(n)]
        store = [
            key for key, n in here if key.phase == ph and not types[key.rack_type].gpus for _ in range(n)
        ]
        size = types[gpu[0].rack_type].gpus if gpu else 1
        d = m.tl.demand(g.head, p)
        per = None if d is None else d // size
        pos = 0
        for j, member in enumerate(team):
            take = (len(gpu) if j == 0 else 0) if per is None else max(0, per - had[j])
            take = min(take, len(gpu) - pos)
            for key in gpu[pos : pos + take]:
                out[key.cls, key.rack_type, member.id, key.phase, ""] += 1
            pos += take
            had[j] += take
        # the rest (at least, uncapped as many as fit) to the first member; at least, one by one to
        # the member holding fewest: members stay within a rack of each other, so whatever a later
        # phase's figure asks of each, the racks standing then give it (all to the first could
        # leave another short when the figure grows and the group's total already meets it)
        for key in gpu[pos:]:
            j = min(range(len(team)), key=lambda i: had[i]) if g.head.demand == Demand.at_least else 0
            out[key.cls, key.rack_type, team[j].id, key.phase, ""] += 1
            had[j] += 1
        sp = 0
        for j, member in enumerate(team):
            take = min(storage_racks(m.scenario, g.head) - stored[j], len(store) - sp)
            for key in store[sp : sp + take]:
                out[key.cls, key.rack_type, member.id, key.phase, ""] += 1
            sp += take
            stored[j] += take


def _scope_key(m: Model, row_id: str, scope: Scope) -> str:
    ref = m.ix.rows[row_id]
    return ref.row.pod if scope == Scope.pod else ref.building


def fill(m: Model, counts: dict[CountKey, int], values: dict[str, float] | None = None) -> list[PlacedRack]:
    """Concrete positions for aggregate counts: in each class, earlier phases first (racks never
    move), then clusters in scenario order and rack types in catalog order, positions nearest the
    pod's network rack first; installed racks are carried over unchanged. Linear in the racks."""
    types = m.scenario.catalog.by_id()
    dealt = deal(m, counts, values or {})
    c_order = {c.id: i for i, c in enumerate(m.scenario.clusters)}
    t_order = {t.id: j for j, t in enumerate(m.scenario.catalog.rack_types)}
    by_class: dict[ClassKey, list[tuple[str | None, str, str, str, int]]] = defaultdict(list)
    for (k, t, c, ph, role), n in dealt.items():
        by_class[k].append((ph, c, t, role, n))
    racks: list[PlacedRack] = list(m.scenario.existing)
    for k in sorted(by_class):
        items = sorted(by_class[k], key=lambda x: (m.tl.at(x[0]), c_order[x[1]], t_order[x[2]], x[3]))
        units = [x for x in items if types[x[2]].width > 1]
        taken: set[int] = set()
        if units:  # multi-rack units first, whole slots of the runs (one width per class), for every phase
            width = types[units[0][2]].width
            slots = iter(
                [
                    run[j * width]
                    for run in runs(pos for _, pos in m.classes[k].positions)
                    for j in range(len(run) // width)
                ]
            )
            for ph, c, t, role, n in units:
                for _ in range(n):
                    first = next(slots)
                    taken.update(range(first, first + width))
                    racks.append(place(m.ix, k.row, first, types[t], c, ph, role == "spare"))
        if m.scenario.service_life:  # racks retire: a position is free again from its rack's retirement (§17)
            racks += _fill_over_time(m, k, [x for x in items if types[x[2]].width == 1], taken)
            continue
        free = iter(pos for _, pos in m.classes[k].positions if pos not in taken)
        for ph, c, t, role, n in items:
            if types[t].width > 1:
                continue
            for _ in range(n):
                racks.append(place(m.ix, k.row, next(free), types[t], c, ph, role == "spare"))
    racks.sort(key=lambda r: (r.building, r.hall, r.row, r.position))
    return racks


def _fill_over_time(m: Model, k: ClassKey, items: list, taken: set[int]) -> list[PlacedRack]:
    """Positions for one class's racks when racks retire: in phase order, each rack at the nearest
    position free from its phase on (its last rack retired by then); a rack holds it until it
    retires. Greedy by start phase is exact for intervals (the model keeps every phase's standing
    racks within the class's size). Each rack states the phase it retires in."""
    types = m.scenario.catalog.by_id()
    free_from = {pos: 0 for _, pos in m.classes[k].positions if pos not in taken}
    for r in m.scenario.existing:  # installed racks that retire hold their positions until then
        if r.row == k.row and r.position in free_from:
            free_from[r.position] = m.until(r.rack_type, r.phase)
    out = []
    for ph, c, t, role, n in items:
        q = m.tl.at(ph)
        until = m.until(t, ph)
        for _ in range(n):
            pos = next(p for p, f in free_from.items() if f <= q)
            free_from[pos] = until
            rack = place(m.ix, k.row, pos, types[t], c, ph, role == "spare")
            out.append(
                rack.model_copy(update={"retired": m.tl.phases[until]}) if until < len(m.tl.phases) else rack
            )
    return out


def start_from_racks(m: Model, racks: list[PlacedRack]) -> dict:
    """The model's variables set to describe a placement (the inverse of :func:`fill`);
    empty if some rack has no matching variable. Used to hand the first-fit plan to the solver."""
    group_of = {c.id: g.id for g in m.groups.values() for c in g.members}
    got = _start_counts(m, racks, group_of)
    if got is None:
        return {}
    counts, group_kw, home = got
    for r in racks:  # installed racks home their clusters too
        g = m.groups.get(group_of.get(r.cluster, ""))
        if r.existing and g is not None and g.scope in (Scope.pod, Scope.building):
            home.setdefault(r.cluster, _scope_key(m, r.row, g.scope))
    start: dict = {var: counts.get(key, 0) for key, var in m.n.items()}
    if not m.tl.phased:  # phased models: the solver completes the loads itself
        start.update({p: group_kw.get(g, 0.0) for g, p in m.group_kw.items()})
        for v, lv in m.node_kw.items():
            start[lv] = sum(a * group_kw.get(g, 0.0) for g, a in m.pm.normal.get(v, {}).items())
    homed: dict[ScopeKey, int] = defaultdict(int)
    for c, sid in home.items():
        homed[ScopeKey(group_of[c], sid)] += 1
    start.update({z: homed.get(key, 0) for key, z in m.z.items()})
    return start


def representable(m: Model, racks: list[PlacedRack]) -> list[PlacedRack]:
    """The racks the model has a variable for (installed ones always): first-fit may place a
    multi-rack unit across two of a row's classes, which the model keeps whole within one."""
    group_of = {c.id: g.id for g in m.groups.values() for c in g.members}
    where = {(cls.row, pos): k for k, cls in m.classes.items() for _, pos in cls.positions}
    out = []
    for r in racks:
        k, gid = where.get((r.row, r.position)), group_of.get(r.cluster)
        phase = r.phase if m.tl.phased else None
        role = "spare" if r.spare else ""
        if r.existing or (
            k is not None and gid is not None and CountKey(k, r.rack_type, gid, phase, role) in m.n
        ):
            out.append(r)
    return out


def _start_counts(m: Model, racks: list[PlacedRack], group_of: dict[str, str]):
    """(counts per key, kW per feed group, each scoped cluster's home) of the placed racks; None
    when a rack has no matching variable or a scoped cluster stands in two scopes."""
    where = {(cls.row, pos): k for k, cls in m.classes.items() for _, pos in cls.positions}
    types = m.scenario.catalog.by_id()
    counts: dict[CountKey, int] = defaultdict(int)
    group_kw: dict[str, float] = defaultdict(float)
    home: dict[str, str] = {}
    for r in racks:
        if r.existing:
            continue
        k = where.get((r.row, r.position))
        gid = group_of.get(r.cluster)
        if k is None or gid is None:
            return None
        key = CountKey(k, r.rack_type, gid, r.phase if m.tl.phased else None, "spare" if r.spare else "")
        if key not in m.n:
            return None
        counts[key] += 1
        group_kw[m.pm.group_of_row[r.row]] += m.scenario.rack_power_kw(types[r.rack_type])
        g = m.groups[gid]
        if g.scope in (Scope.pod, Scope.building):
            sid = _scope_key(m, r.row, g.scope)
            if home.setdefault(r.cluster, sid) != sid:
                return None
    return counts, group_kw, home
