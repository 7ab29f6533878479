"""Greedy baseline: first-fit decreasing, as a DCIM "find space" search does it.

Clusters in scenario order; each cluster's allowed rack types largest first
(GPUs, then power); positions in site order (building, hall, row, index). A
rack goes to the first free position where it fits every limit given what is
already placed: rack power, weight and cooling medium of the row, cable reach,
every power node in normal operation and under every single failure, cooling
zones, pod ports and racks, budgets, the cluster's demand, and its hop scope
(the first pod or building it lands in becomes its only one). Nothing is ever
moved. The result is checked by the same verifier as the MILP's plans.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict

from planner.clock import Deadline, TimeUp
from planner.enums import Scope, Status
from planner.errors import SolverFailure
from planner.input.asks import spares_needed, storage_racks
from planner.input.power_model import PowerModel, power_model
from planner.input.site_index import fits, index_site, network_racks, place
from planner.input.timeline import timeline
from planner.plan import PlacedRack, Plan
from planner.plan.kpis import objective_value
from planner.plan.numbers import plan_figures
from planner.rules.costs import facility_usd, rack_cost
from planner.schema import Cluster, Demand, RackType, Scenario
from planner.schema.hashing import scenario_hash
from planner.verifier import spread_violations
from planner.version import __version__

TOL = 1e-9


class PowerState:
    """Node loads under normal operation and every kept contingency, updated rack by rack
    (coefficients from :mod:`planner.input.power_model`)."""

    def __init__(self, pm: PowerModel, fixed_row_kw: dict[str, float]) -> None:
        self.pm = pm
        fixed = pm.fixed_by_group(fixed_row_kw)
        self.load = {v: pm.fixed_normal(v, fixed) for v in pm.normal}
        self.extra = [pm.fixed_delta(c, fixed) for c in pm.contingencies]
        self.normal_of_group: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for v, coef in pm.normal.items():
            for g, a in coef.items():
                self.normal_of_group[g].append((v, a))
        self.cont_of_node: dict[str, list[int]] = defaultdict(list)
        self.delta_of_group: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, c in enumerate(pm.contingencies):
            self.cont_of_node[c.node].append(i)
            for g, d in c.delta.items():
                self.delta_of_group[g].append((i, d))
        self.worst_extra = {
            v: max((self.extra[i] for i in idx), default=0.0) for v, idx in self.cont_of_node.items()
        }
        self.dmax: dict[tuple[str, str], float] = defaultdict(float)
        for c in pm.contingencies:
            for g, d in c.delta.items():
                self.dmax[g, c.node] = max(self.dmax[g, c.node], d)

    def fits(self, group: str, kw: float) -> bool:
        """Whether ``kw`` more on ``group`` keeps every node within its usable capacity in every state."""
        usable = self.pm.usable_kw
        for v, a in self.normal_of_group[group]:
            base = self.load[v] + a * kw
            if base > usable[v] + TOL:
                return False
            if v not in self.cont_of_node:
                continue
            if base + self.worst_extra[v] + max(0.0, self.dmax[group, v]) * kw <= usable[v] + TOL:
                continue
            for i in self.cont_of_node[v]:
                if (
                    base + self.extra[i] + self.pm.contingencies[i].delta.get(group, 0.0) * kw
                    > usable[v] + TOL
                ):
                    return False
        return True

    def add(self, group: str, kw: float) -> None:
        for v, a in self.normal_of_group[group]:
            self.load[v] += a * kw
        for i, d in self.delta_of_group[group]:
            self.extra[i] += d * kw
            v = self.pm.contingencies[i].node
            if self.extra[i] > self.worst_extra[v]:
                self.worst_extra[v] = self.extra[i]


def cluster_order(scenario: Scenario, largest_first: bool = False) -> list:
    """Clusters in scenario order, or (the repair order) clusters with a demand to meet first,
    largest demand first, as first-fit decreasing packs bins; then the rest in scenario order."""
    if not largest_first:
        return list(scenario.clusters)
    must = [c for c in scenario.clusters if c.demand != Demand.max and c.gpus]
    rest = [c for c in scenario.clusters if c not in must]
    return sorted(must, key=lambda c: -(c.gpus or 0)) + rest


class _FirstFit:
    """State of a first-fit run (:func:`greedy_racks`): what stands where and the loads it makes,
    across phases; :meth:`begin_phase` sets up what is online in one phase."""

    def __init__(self, scenario: Scenario, retry: bool = False) -> None:
        s = self.s = scenario
        self.retry = retry  # a cluster its first home cannot hold whole is tried at the next
        self.ix = ix = index_site(s.site)
        self.tl = tl = timeline(s)
        self.types = types = s.catalog.by_id()
        self.pm0 = power_model(ix)
        self.classes = {c.id: c for c in s.site.fabric.link_classes}
        self.fabric = s.site.fabric.cost_usd_per_gpu
        self.designed = s.designed  # no back-end allowance on these
        self.fixed_items: list[tuple[str, RackType, int]] = [
            (row_id, t, tl.row_on.get(row_id, 0)) for _, row_id, t in network_racks(s)
        ]
        network_kw = sum(s.rack_power_kw(t) for _, _, t in network_racks(s))
        self.pod_gpus: dict[str, int] = defaultdict(int)
        self.pod_racks: dict[str, int] = defaultdict(int)
        self.placed_gpus: dict[str, int] = defaultdict(int)
        self.in_pod: dict[tuple[str, str], int] = defaultdict(int)
        """GPUs of a cluster in a pod (for its spread limit)."""
        self.racks_of: dict[str, int] = defaultdict(int)
        self.homes: dict[tuple[str, Scope], str] = {}
        self.capex = facility_usd(network_kw, s.costs)
        self.costs_of = {b.id: s.costs_in(b.id) for b in s.site.buildings}  # a structure's own rate
        self.it_kw = 0.0
        self.taken: set[tuple[str, int]] = set()
        self.racks: list[PlacedRack] = []
        for r in s.existing:
            t = types[r.rack_type]
            self.taken.update((r.row, r.position + k) for k in range(t.width))
            self.fixed_items.append((r.row, t, 0))
            pod = ix.rows[r.row].row.pod
            self.pod_gpus[pod] += t.gpus
            self.pod_racks[pod] += 1
            self.placed_gpus[r.cluster] += t.gpus
            self.in_pod[r.cluster, pod] += t.gpus
            self.racks_of[r.cluster] += 1
            self.it_kw += s.rack_power_kw(t)
            self.homes[r.cluster, Scope.pod] = pod
            self.homes[r.cluster, Scope.building] = ix.rows[r.row].building
        self.installed_in_pod = dict(self.pod_racks)
        spots = ix.pod_locations()
        dead = {r for g in self.pm0.forced_empty for r in self.pm0.groups[g].rows}
        self.free_all = [
            (rid, i)
            for rid, ref in ix.rows.items()
            for i in range(ref.row.positions)
            if i not in ref.row.reserved and (rid, i) not in spots and rid not in dead
        ]
        self.static: dict[tuple[str, str], bool] = {}
        self.cables: dict[tuple[str, int], float] = {}
        self.pods_in: dict[str, list[str]] = defaultdict(list)
        for pid, hid in ix.pod_hall.items():
            self.pods_in[ix.halls[hid][0]].append(pid)

    def where_of(self, rid: str, scope: Scope) -> str | None:
        ref = self.ix.rows[rid]
        return ref.row.pod if scope == Scope.pod else ref.building if scope == Scope.building else None

    def ports_left(self, scope: Scope, home: str) -> int:
        """GPU ports still free in a pod or a building (a home must hold the whole demand)."""
        pods = [home] if scope == Scope.pod else self.pods_in.get(home, [])
        return sum(self.ix.pods[p].max_gpus - self.pod_gpus[p] for p in pods)

    def begin_phase(self, p: int) -> None:
        """Power model, loads, heat and free positions of phase index p, from what stands then."""
        s, ix, tl = self.s, self.ix, self.tl
        self.ph = tl.phases[p]
        offline = tl.offline_nodes(p)
        self.pm = self.pm0 if not offline else power_model(ix, offline)
        self.zones_off = tl.offline_zones(p)
        fixed_row: dict[str, float] = defaultdict(float)
        self.heat: dict[str, float] = defaultdict(float)
        standing = [(row_id, t) for row_id, t, on in self.fixed_items if on <= p] + [
            (r.row, self.types[r.rack_type]) for r in self.racks
        ]
        for row_id, t in standing:
            kw = s.rack_power_kw(t)
            fixed_row[row_id] += kw
            row = ix.rows[row_id].row
            air, liquid = t.heat_kw(kw)
            self.heat[row.air_zone] += air
            if liquid and row.liquid_loop:
                self.heat[row.liquid_loop] += liquid
        self.power = PowerState(self.pm, fixed_row)
        # the region's power arrived by this phase less the facility load standing (IT × its building's
        # design-day PUE), facility kW
        self.arrival_left = (
            s.power_available_kw(p)
            - sum(kw * s.arrival_pue_in(ix.rows[r].building) for r, kw in fixed_row.items())
            - sum(  # and the back-end network of every GPU rack standing
                s.allowance_kw(self.types[r.rack_type]) * s.arrival_pue_in(r.building)
                for r in (*s.existing, *self.racks)
                if r.cluster not in self.designed
            )
            if s.power_arrival
            else math.inf
        )
        dark_rows = {r for g in self.pm.dark for r in self.pm.groups[g].rows}
        self.home_order: dict[Scope, list[str]] = {}
        self.by_home: dict[Scope, dict[str, list[tuple[str, int]]]] = {}
        self.free = [
            (rid, i) for rid, i in self.free_all if tl.row_on.get(rid, 0) <= p and rid not in dark_rows
        ]
        self.free_set = set(self.free)
        self.short: dict[tuple[str, tuple[str, ...]], int] = {}  # GPUs of a type set a home held (retry)

    def try_place(self, rid: str, i: int, t: RackType, cluster: str, spare: bool = False) -> bool:
        """Place one rack if it fits everything (cheap checks first)."""
        s, ix = self.s, self.ix
        ref = ix.rows[rid]
        pod = ix.pods[ref.row.pod]
        if self.pod_full(pod, t.gpus) or not self.static_fit(rid, t):
            return False
        span = [(rid, j) for j in range(i, i + t.width)]  # a multi-rack unit takes adjacent positions
        if t.width > 1 and any(x not in self.free_set or x in self.taken for x in span):
            return False
        length = self.cables.get((rid, i))
        if length is None:
            length = self.cables[rid, i] = ix.cable_length_m(rid, i)
        lc = ix.link_class_for(t, length) if t.links else None
        if t.links and lc is None:
            return False
        kw = s.rack_power_kw(t)
        group = self.pm.group_of_row[rid]
        air, liquid = t.heat_kw(kw)
        if not self.power.fits(group, kw) or not self.cools(ref.row, air, liquid):
            return False
        link = self.classes[lc.id] if lc else None
        it = kw + (0.0 if cluster in self.designed else s.allowance_kw(t))  # with its back-end network
        cost = rack_cost(t, it, link, self.fabric, self.costs_of[ref.building], s.pue).capex_usd
        if s.budgets.capex_usd is not None and self.capex + cost > s.budgets.capex_usd + 1e-6:
            return False
        if s.budgets.it_power_kw is not None and self.it_kw + kw > s.budgets.it_power_kw + TOL:
            return False
        drawn = it * s.arrival_pue_in(ref.building)  # facility kW
        if drawn > self.arrival_left + TOL:
            return False
        self.arrival_left -= drawn
        self.power.add(group, kw)
        self.heat[ref.row.air_zone] += air
        if liquid:
            self.heat[ref.row.liquid_loop] += liquid
        self.pod_gpus[pod.id] += t.gpus
        self.pod_racks[pod.id] += 1
        self.capex += cost
        self.it_kw += kw
        self.taken.update(span)
        self.racks.append(place(ix, rid, i, t, cluster, self.ph, spare))
        return True

    def mark(self) -> tuple:
        """What :meth:`undo` restores: the racks placed so far and every load they make."""
        pw = self.power
        return (
            len(self.racks),
            self.arrival_left,
            self.capex,
            self.it_kw,
            dict(pw.load),
            list(pw.extra),
            dict(pw.worst_extra),
            dict(self.heat),
        )

    def undo(self, mark: tuple, cluster: str, scope: Scope) -> None:
        """Take away the racks of ``cluster`` placed since ``mark`` (one try at a home) and unhome
        it: the loads as they were then, its GPUs out of their pods."""
        n, self.arrival_left, self.capex, self.it_kw, load, extra, worst, heat = mark
        self.power.load, self.power.extra, self.power.worst_extra = load, extra, worst
        self.heat = defaultdict(float, heat)
        for r in self.racks[n:]:
            t = self.types[r.rack_type]
            pod = self.ix.rows[r.row].row.pod
            self.pod_gpus[pod] -= t.gpus
            self.pod_racks[pod] -= 1
            self.in_pod[cluster, pod] -= t.gpus
            self.placed_gpus[cluster] -= t.gpus
            self.racks_of[cluster] -= 1
            self.taken.difference_update((r.row, r.position + k) for k in range(t.width))
        del self.racks[n:]
        self.homes.pop((cluster, scope), None)

    def pod_full(self, pod, gpus: int) -> bool:
        """Whether the pod has no ports for ``gpus`` more GPUs or no room for one more rack."""
        if self.pod_gpus[pod.id] + gpus > pod.max_gpus:
            return True
        return pod.max_racks is not None and self.pod_racks[pod.id] + 1 > pod.max_racks

    def static_fit(self, rid: str, t: RackType) -> bool:
        """The row takes the rack type as built (first-fit buys no retrofit, builds no structure)."""
        ok = self.static.get((rid, t.id))
        if ok is None:
            building = self.ix.rows[rid].building
            unbuilt = any(
                r.effect.kind == "build_structure" and r.effect.building == building for r in self.s.retrofits
            )
            ok = self.static[rid, t.id] = fits(self.s, self.ix, rid, t) and not unbuilt
        return ok

    def cools(self, row, air: float, liquid: float) -> bool:
        """The row's air zone (and liquid loop) online and with room for the rack's heat."""
        zone, loop, heat, ix = row.air_zone, row.liquid_loop, self.heat, self.ix
        if air and (zone in self.zones_off or heat[zone] + air > ix.zones[zone].capacity_kw + TOL):
            return False
        return not liquid or not (
            loop is None or loop in self.zones_off or heat[loop] + liquid > ix.zones[loop].capacity_kw + TOL
        )

    def place_extra(self, c: Cluster, scope: Scope, t: RackType, n: int, spare: bool = False) -> None:
        """Place n racks of type t for cluster c (storage or hot spares) in the scope it is
        homed in (homing it there if it is not yet)."""
        home = self.homes.get((c.id, scope))
        for rid, i in self.free:
            if n <= 0:
                break
            if (rid, i) in self.taken or (home is not None and self.where_of(rid, scope) != home):
                continue
            if self.try_place(rid, i, t, c.id, spare=spare):
                n -= 1
                if home is None and scope in (Scope.pod, Scope.building):
                    home = self.homes[c.id, scope] = self.where_of(rid, scope)

    def place_cluster(self, c: Cluster, p: int) -> None:
        """Add what cluster c's demand grows by in phase index p (its hot spares and storage racks
        with its first racks)."""
        s, types = self.s, self.types
        want = self.tl.demand(c, p)
        target = float("inf") if want is None else want
        if self.placed_gpus[c.id] >= target:
            return
        ranked = sorted(
            (types[t] for t in s.gpu_types_for(c)), key=lambda t: (-t.gpus, -s.rack_power_kw(t), t.id)
        )
        scope = s.scope_of(c)
        smallest = min((t.gpus for t in ranked), default=0)
        if scope in (Scope.pod, Scope.building) and scope not in self.by_home:
            self.by_home[scope] = defaultdict(list)
            for rid, i in self.free:
                self.by_home[scope][self.where_of(rid, scope)].append((rid, i))
        most = max((t.gpus for t in ranked), default=0)
        homed = (c.id, scope) in self.homes
        kinds = tuple(t.id for t in ranked)
        before = self.placed_gpus[c.id]
        for h in self.candidates(c, scope, want, smallest, most):
            mark = None
            if self.retry and not homed and h is not None and c.demand != Demand.max:
                if before + self.short.get((h, kinds), math.inf) < target:
                    continue  # a home that held fewer of these racks than this demand needs
                mark = self.mark()
            self.fill_home(c, scope, h, ranked, target, smallest)
            if mark is not None and self.placed_gpus[c.id] < target:
                # its demand does not fit there whole: taken out, the next home; the home holds at
                # most what it took of these rack types for the rest of the phase (it only fills)
                self.short[h, kinds] = self.placed_gpus[c.id] - before
                self.undo(mark, c.id, scope)
                continue
            if (c.id, scope) in self.homes or h is None:
                break
        if p == self.tl.first_wanted(c):
            self.place_asks(c, scope)

    def candidates(
        self, c: Cluster, scope: Scope, want: int | None, smallest: int, most: int
    ) -> list[str | None]:
        """Where cluster c may go: its home once it has one; pods or buildings with ports for what it
        still needs, in site order; the whole site (None) otherwise."""
        if scope not in (Scope.pod, Scope.building):
            return [None]
        home = self.homes.get((c.id, scope))
        if home is not None:
            return [home]
        need = (want or 0) - self.placed_gpus[c.id] if c.demand != Demand.max else 0
        if scope not in self.home_order:
            self.home_order[scope] = list(dict.fromkeys(self.where_of(rid, scope) for rid, _ in self.free))
        ported = [h for h in self.home_order[scope] if self.ports_left(scope, h) >= max(need, smallest)]
        if scope != Scope.pod or need <= 0:
            return ported
        # a one-pod cluster first tries the pods with free positions for all of it (its largest type)
        roomy = [h for h in ported if self.free_positions(h) * most >= need]
        return roomy + [h for h in ported if h not in roomy]

    def free_positions(self, pod: str) -> int:
        """Free positions left in a pod, about: its free positions less the racks placed there
        since (a multi-rack unit counted as one)."""
        placed = self.pod_racks[pod] - self.installed_in_pod.get(pod, 0)
        return len(self.by_home[Scope.pod][pod]) - placed

    def fill_home(
        self, c: Cluster, scope: Scope, h: str | None, ranked: list[RackType], target: float, smallest: int
    ) -> None:
        """Racks of c at free positions of home h (the site when None), largest type that fits first,
        until its target is met (one rack for a rack-scoped cluster); homes c at h once it places one."""
        ix = self.ix
        # a spread limit per pod: at most that share of the cluster's figure in any one pod
        per_pod = c.max_share_per_pod * target if c.max_share_per_pod and math.isfinite(target) else math.inf
        spots = self.by_home[scope][h] if h is not None else self.free
        # trying homes in turn: stop where the positions left cannot hold the rest of its demand
        hopeless = self.retry and h is not None and c.demand != Demand.max and math.isfinite(target)
        most = max((t.gpus for t in ranked), default=0)
        for k, (rid, i) in enumerate(spots):
            if self.placed_gpus[c.id] >= target or (scope == Scope.rack and self.racks_of[c.id] > 0):
                break
            if hopeless and self.placed_gpus[c.id] + (len(spots) - k) * most < target:
                break
            pod = ix.rows[rid].row.pod
            if (rid, i) in self.taken or self.pod_full(ix.pods[pod], smallest):
                continue
            for t in ranked:
                if c.demand != Demand.at_least and self.placed_gpus[c.id] + t.gpus > target:
                    continue
                if self.in_pod[c.id, pod] + t.gpus > per_pod + 1e-9:
                    continue
                if self.try_place(rid, i, t, c.id):
                    self.in_pod[c.id, pod] += t.gpus
                    self.placed_gpus[c.id] += t.gpus
                    self.racks_of[c.id] += 1
                    if h is not None:
                        self.homes[c.id, scope] = h
                    break

    def place_asks(self, c: Cluster, scope: Scope) -> None:
        """Cluster c's hot spares (of its first GPU rack type) and storage racks, where it is homed."""
        s, types = self.s, self.types
        kinds = [types[t] for t in s.gpu_types_for(c) if types[t].gpus]
        if kinds:
            self.place_extra(c, scope, kinds[0], spares_needed(s, c), spare=True)
        if storage_racks(s, c) and c.storage_rack_type in types:
            st = types[c.storage_rack_type]
            have = sum(1 for r in [*s.existing, *self.racks] if r.cluster == c.id and r.rack_type == st.id)
            self.place_extra(c, scope, st, storage_racks(s, c) - have)


def greedy_racks(
    scenario: Scenario,
    largest_first: bool = False,
    deadline: Deadline | None = None,
    until: float | None = None,
    partial: bool = False,
    cut: list[bool] | None = None,
    last_phase: int | None = None,
    retry: bool = False,
) -> list[PlacedRack]:
    """First-fit decreasing placement (module docstring), unverified: the racks only, phase by
    phase (each phase adds what every cluster's demand grows by, with what is online then, around
    the racks installed before). Used as the solver's starting point, which the solver checks
    itself. ``largest_first`` places the clusters with a demand first, largest first (see
    :func:`cluster_order`). First-fit never buys retrofits. With a ``deadline`` it stops (raising
    :class:`~planner.clock.TimeUp`) once that, or ``until``, has passed, checking after each cluster;
    ``partial``: returns the racks placed by then instead (each placed rack stands where it may, so
    they are a plan wherever no demand is missed), and appends True to ``cut`` when it stopped.
    ``last_phase``: no phase after the one with this index is placed. ``retry``: a cluster with a
    demand to meet that its first home (pod or building) cannot hold whole is taken out and tried
    at the next one, as a planner moving a job to the next pod would (none of it stands when no
    home holds it)."""
    ff = _FirstFit(scenario, retry)
    upto = len(ff.tl.phases) if last_phase is None else min(len(ff.tl.phases), last_phase + 1)
    try:
        for p in range(upto):
            ff.begin_phase(p)
            for c in cluster_order(scenario, largest_first):
                if deadline is not None:
                    deadline.check("placing racks first-fit", until)
                ff.place_cluster(c, p)
    except TimeUp:
        if not partial:
            raise
        if cut is not None:
            cut.append(True)
    ff.racks.sort(key=lambda r: (r.building, r.hall, r.row, r.position))
    return ff.racks


def greedy_meets_demands(scenario: Scenario, racks: list[PlacedRack]) -> bool:
    """Whether first-fit racks (with the installed ones) meet every cluster's exact or at-least
    demand in every phase, and its storage racks (first-fit obeys every other limit by
    construction; the verifier re-checks it wherever it is used)."""
    return not missed_demands(scenario, racks)


def missed_demands(scenario: Scenario, racks: list[PlacedRack]) -> set[str]:
    """Clusters whose exact or at-least demand (in any phase), spares or storage racks first-fit
    racks (with the installed ones) miss, and those whose spread limits they break."""
    types = scenario.catalog.by_id()
    tl = timeline(scenario)
    by_cluster: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in [*scenario.existing, *racks]:
        by_cluster[r.cluster].append(r)
    missed = set()
    for c in scenario.clusters:
        mine = by_cluster.get(c.id, [])
        if sum(1 for r in mine if r.spare) != spares_needed(scenario, c):
            missed.add(c.id)
        for p in range(len(tl.phases)):
            got = sum(
                types[r.rack_type].gpus for r in mine if not r.spare and (r.existing or tl.at(r.phase) <= p)
            )
            want = tl.demand(c, p)
            if c.demand == Demand.exact and got != want or c.demand == Demand.at_least and got < (want or 0):
                missed.add(c.id)
        if sum(1 for r in mine if not types[r.rack_type].gpus) != storage_racks(scenario, c):
            missed.add(c.id)
    return missed | spread_broken(scenario, [*scenario.existing, *racks])


def start_racks(
    scenario: Scenario, deadline: Deadline | None = None, until: float | None = None, moved_only: bool = False
) -> tuple[list[PlacedRack], str]:
    """The first-fit plan to start the solver from, and how it was made: first-fit in scenario
    order, or, when that misses an exact or at-least demand, first-fit with the largest demands
    first (the repair), if that meets them, else that with a job its first pod cannot hold whole
    moved to the next (``retry``); ``moved_only``: only the last, in one pass. As-many-as-fit
    clusters whose spread limits first-fit breaks are left to the solver. Past ``until`` (or the
    deadline): no start."""
    try:
        return _start_racks(scenario, deadline, until, moved_only)
    except TimeUp:
        return [], "none: first-fit stopped at its share of the time limit"


MOVED = "first-fit, largest demands first, a job its first pod cannot hold whole moved to the next"


def _start_racks(
    scenario: Scenario, deadline: Deadline | None, until: float | None, moved_only: bool = False
) -> tuple[list[PlacedRack], str]:
    if deadline is not None:
        deadline.check("placing racks first-fit", until)
    racks = greedy_racks(scenario, moved_only, deadline, until, partial=True, retry=moved_only)
    stopped = deadline is not None and deadline.clock() > min(deadline.at, until or deadline.at)
    if stopped:
        return racks, "first-fit (stopped at its share of the time limit)"
    tries = [
        (lambda: racks, MOVED if moved_only else "first-fit"),
        (lambda: greedy_racks(scenario, True, deadline, until), "first-fit, largest demands first"),
        (lambda: greedy_racks(scenario, True, deadline, until, retry=True), MOVED),
    ][: 1 if moved_only else 3]
    loose = {c.id for c in scenario.clusters if c.demand == Demand.max}
    fallback = None
    for make, how in tries:
        got = make()
        missed = missed_demands(scenario, got)
        if not missed:
            return got, how
        # first-fit knows no spread limits but a pod's: clusters of as many as fit it spreads wrongly
        # may stand on no rack of its plan, left to the solver
        if fallback is None and missed <= loose and missed <= spread_broken(scenario, got):
            fallback = (
                [r for r in got if r.cluster not in missed],
                f"{how} (spread-limited clusters left to the solver)",
            )
    if fallback is not None:
        return fallback
    spread = spread_broken(scenario, racks)
    if spread:  # first-fit knows no spread limits: leave those clusters to the solver
        return [
            r for r in racks if r.cluster not in spread
        ], "first-fit (spread-limited clusters left to the solver)"
    return racks, "first-fit (misses a demand)"


def spread_broken(scenario: Scenario, racks: list[PlacedRack]) -> set[str]:
    """Clusters whose spread limits the racks break."""
    if all(
        (c.max_share_per_power_node, c.max_share_per_cooling_zone, c.max_share_per_pod) == (None, None, None)
        for c in scenario.clusters
    ):
        return set()
    return {v.element.removeprefix("cluster ") for v in spread_violations(scenario, racks)}


def greedy_plan(scenario: Scenario) -> Plan:
    """First-fit decreasing placement as a verified plan: the baseline the MILP is measured against."""
    s = scenario
    t0 = time.perf_counter()
    racks = greedy_racks(s)
    elapsed = time.perf_counter() - t0
    plan = Plan(
        planner_version=__version__,
        scenario_name=s.name,
        scenario_hash=scenario_hash(s),
        solver="greedy",
        status=Status.not_solved,
        objective=s.objective,
        solve_time_s=round(elapsed, 4),
        racks=racks,
    )
    done, rep = plan_figures(plan, s)
    hard = [v for v in rep.violations if v.check != "demand"]
    if hard:
        raise SolverFailure(f"greedy plan fails verification: {'; '.join(map(str, hard[:5]))}")
    notes = [f"demand not met: {v}" for v in rep.violations]
    return done.model_copy(update={"notes": notes, "objective_value": float(objective_value(s, racks))})
