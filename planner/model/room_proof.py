"""Infeasibility proved by room, before any model is built: a demand larger than the most its
scope can hold of its rack types (:mod:`planner.model.room`, an upper bound on every plan).

For a cluster c with a firm figure d_c (exact, or at least d_c), rack types T_c, failover
factor φ_c and scope s (rack, pod, building, site):

    room(c) = max over the scopes u of kind s of
              min( R_u(T_c, φ_c),  Σ_{pods p in u} ports_p,  Σ_{pods p in u} racks_p · max_t G_t )

with R_u the room of :meth:`planner.model.room.SiteRoom.gpus` over the position classes of u that
fit a type of T_c (space, power of each feed group, heat of each zone: each an upper bound), ports_p
the pod's GPU ports and racks_p its rack limit (none: no term). A rack-scope cluster stands in one
pod, so the pod's room bounds it. d_c > room(c) proves the scenario infeasible: no plan can give c
its figure even with nothing else placed. For the clusters together, with S a cluster's type set,
the clusters whose types lie in S need Σ d_c ≤ min(R_site(S, min φ), Σ_p ports_p): the lowest φ
gives the largest room, so the bound holds for each of them.

Only for scenarios without phases or installed racks (a phased figure or an installed cluster's own
racks are counted differently); a retrofit counts as bought (a looser, still valid room)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from planner.enums import Demand, FailoverPolicy, Scope
from planner.input.site_index import fits, index_site
from planner.model.classes import position_classes
from planner.model.room import site_room
from planner.schema import Scenario


@dataclass(frozen=True)
class Short:
    """A firm demand its scope cannot hold: who (one cluster, or the clusters on a type set), the
    scope, GPUs needed and the most any such scope holds (an upper bound), and where that most is."""

    who: str
    scope: str
    need: int
    most: int
    where: str

    def __str__(self) -> str:
        one = {"rack": "one pod", "pod": "one pod", "building": "one building", "site": "the site"}[
            self.scope
        ]
        at = f" (in {self.where})" if self.where else ""
        verb = "needs" if self.who.startswith("cluster ") else "need"
        return (
            f"{self.who} {verb} {self.need:,} GPUs within {one}; the most {one} can hold of its rack "
            f"types is {self.most:,}{at}, {self.need - self.most:,} short (space, power and heat room, an "
            "upper bound on every plan)"
        )


def room_shortfalls(scenario: Scenario) -> list[Short]:
    """Firm demands larger than their scope's room (module docstring); empty when none is found
    or the scenario has phases or installed racks."""
    if scenario.phases or scenario.existing:
        return []
    firm = [c for c in scenario.clusters if c.gpus and c.demand in (Demand.exact, Demand.at_least)]
    if not firm:
        return []
    rooms = ScopeRooms(scenario)
    short: list[Short] = []
    for c in firm:
        kind = scenario.scope_of(c)
        kind = Scope.pod if kind == Scope.rack else kind
        f = FailoverPolicy(c.on_power_failure).factor(c.cap_ratio)
        held = [v for (k, _), v in rooms.of(tuple(scenario.gpu_types_for(c)), f).items() if k == kind.value]
        most, where = max(held, default=(0, ""))
        if c.gpus > most:
            short.append(Short(f"cluster {c.id}", kind.value, c.gpus, most, where))
    if short:
        return short
    for s in sorted({tuple(scenario.gpu_types_for(c)) for c in firm}):
        on = [c for c in firm if set(scenario.gpu_types_for(c)) <= set(s)]
        need = sum(c.gpus for c in on)
        f = min(FailoverPolicy(c.on_power_failure).factor(c.cap_ratio) for c in on)
        most = rooms.of(s, f).get(("site", ""), (0, ""))[0]
        if len(on) > 1 and need > most:
            short.append(Short(f"the {len(on)} clusters on {', '.join(s)}", "site", need, most, ""))
    return short


class ScopeRooms:
    """The room of every pod, building and the site for a type set and failover factor, memoised
    (:meth:`of`); ``building_of`` maps each pod holding GPU positions to its building."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.ix = index_site(scenario.site)
        self.room = site_room(scenario, self.ix)
        self.types = scenario.catalog.by_id()
        self.classes = list(position_classes(scenario, self.ix).values())
        self.building_of = {self.ix.rows[c.row].row.pod: self.ix.rows[c.row].building for c in self.classes}
        self._fit: dict[tuple[str, str], bool] = {}
        self._memo: dict[tuple, dict[tuple[str, str], tuple[int, str]]] = {}

    def of(self, type_ids: tuple[str, ...], factor: float) -> dict[tuple[str, str], tuple[int, str]]:
        """(scope kind, unit ID; "" for the site) → (GPUs it can hold of the types, where)."""
        key = (type_ids, round(factor, 9))
        if key not in self._memo:
            self._memo[key] = self._count(type_ids, factor)
        return self._memo[key]

    def _fits(self, row: str, t) -> bool:
        if (row, t.id) not in self._fit:
            self._fit[row, t.id] = fits(self.scenario, self.ix, row, t)
        return self._fit[row, t.id]

    def _count(self, type_ids: tuple[str, ...], factor: float) -> dict[tuple[str, str], tuple[int, str]]:
        mine = [self.types[t] for t in type_ids if self.types[t].gpus > 0]
        cells: dict[tuple[str, str], list] = defaultdict(list)
        pods_of: dict[str, set[str]] = defaultdict(set)
        for cls in self.classes:
            ref = self.ix.rows[cls.row]
            for t in (t for t in mine if self._fits(cls.row, t)):
                for unit in (("pod", ref.row.pod), ("building", ref.building), ("site", "")):
                    cells[unit].append((cls, t))
                pods_of[ref.building].add(ref.row.pod)
        g = max((t.gpus for t in mine), default=0)
        out: dict[tuple[str, str], tuple[int, str]] = {}
        for (kind, unit), cs in cells.items():
            pods = {unit} if kind == "pod" else pods_of[unit] if kind == "building" else set(self.ix.pods)
            ports = sum(self._ports(p, g) for p in pods)
            out[kind, unit] = (int(min(self.room.gpus(cs, factor), ports)), f"{kind} {unit}" if unit else "")
        return out

    def _ports(self, pod_id: str, g: int) -> float:
        """A pod's GPU ports, within its rack limit × the largest rack's GPUs where it has one."""
        pod = self.ix.pods[pod_id]
        return min(pod.max_gpus, pod.max_racks * g) if pod.max_racks else pod.max_gpus
