"""Pairs of buildings solved again together: the improvement step of the decomposition by building
(:mod:`planner.scale.decompose`, step 4) when the joined plan is short of its bound.

The master shares clusters out by estimated room; a building whose estimate was high leaves an
"as many as fit" cluster short while another building of the same kind keeps room it was not
given a use for (one-pod clusters in pods already holding an exact job leave room only clusters
homed in that building can use). Solving two such buildings as one scenario — the clusters either
of them hosts, each free to move between them — is exact on that neighbourhood:

    short[a]   = Σ_{c max, homed in a} (gpus_c − placed_c)                 GPUs a's clusters miss
    room[g,b]  = min(Σ_{pods p of b} min(ports_p, racks_p · G_g, positions_p · G_g),
                     Σ_{feed groups f of b} max(0, K_f − load_f) · max_t G_t ÷ kW_t)
                 (free GPU ports, rack slots and positions of the pod, G_g the largest rack of g;
                 the power its feed groups may still draw, K_f from planner.model.room)
    estimate(a, b) = min(short[a], max_g room[g, b]) + min(short[b], max_g room[g, a])

Where the most every building holds is known (:mod:`planner.scale.building_most`: free_x = most_x
less what x holds), the estimate is :meth:`Pairs.one_way` both ways instead: each building's plan
is already the best for its own clusters, so a pair gains only when clusters change building —
another cluster of a moves to b and a's growing clusters take free_a, or a growing cluster moves
whole to b; pairs estimated at nothing are not solved.

Pairs are taken greedily by estimate, disjoint within a wave (so a wave's solves run in parallel),
each solved by the whole pipeline (first-fit, model, verifier) in its share of the stage's time; a
pair's plan replaces its two buildings' plans only when its objective beats theirs. Waves repeat
with the updated plans until the time is spent or no pair is estimated to gain a rack.

Used only where two buildings' plans are independent of the others: a maximising objective, no
site budgets, no phases, retrofits, installed racks or rack supply. A cluster spanning buildings
keeps its GPUs elsewhere: in a pair its share is the GPUs it has in the two (free to move between
them); with region links or designed fabrics (whose spanning shares are planned with links up to
the region tier) buildings holding such a share are left out."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable

from planner.batch.executors import run_jobs
from planner.clock import Deadline
from planner.enums import Demand, Objective, RackKind, Status
from planner.input.power_model import power_model
from planner.input.site_index import SiteIndex, index_site
from planner.model.room import site_room
from planner.plan import Plan
from planner.plan.kpis import objective_value
from planner.scale.budget import Budget
from planner.scale.building_most import Most, type_sets
from planner.scale.joined import solve_part
from planner.scale.proposals import Group, Proposal, building_data
from planner.schema import Scenario


def pairs_apply(scenario: Scenario) -> bool:
    """Whether pairs of buildings can be solved again on their own (module docstring)."""
    s = scenario
    return (
        Objective(s.objective).maximise
        and s.budgets.it_power_kw is None
        and s.budgets.capex_usd is None
        and not (s.phases or s.retrofits or s.existing or s.supply or s.power_arrival)
    )


class Pairs:
    """The improvement step (module docstring) over the building plans of one decomposition."""

    def __init__(
        self,
        scenario: Scenario,
        data: dict,
        groups: list[Group],
        props: dict[tuple[str, str], Proposal],
        most: Most | None = None,
    ):
        self.s, self.data, self.groups, self.props = scenario, data, groups, props
        self.most = most or {}
        self.every = type_sets(scenario)[0] if scenario.clusters else ()
        self.figure = {c.id: c for c in scenario.clusters}
        self.pinned = scenario.region_tier is not None or any(c.fabrics for c in scenario.clusters)
        """Whether spanning shares stay out of pairs (region links or designed fabrics)."""
        self.ix: SiteIndex = index_site(scenario.site)
        self.types = scenario.catalog.by_id()
        self.bdata = {b["id"]: b for b in data["site"]["buildings"]}
        self.cdata = {c["id"]: c for c in data["clusters"]}
        self.group_of = {c["id"]: g for g in groups for c in g.members}
        self.by_id = {g.id: g for g in groups}
        self.tried: set[tuple[str, str, int, int]] = set()
        self.pm = power_model(self.ix)
        self._room: dict[str, float] = {}
        self.version: dict[str, int] = defaultdict(int)
        """Building → how many times its plan was replaced (a pair is tried again once either changes)."""

    def improve(
        self,
        final: dict[str, Plan],
        until: Deadline,
        run: dict,
        say: Callable[[str], None],
        enough: Callable[[dict[str, Plan]], bool] = lambda _f: False,
        beyond: Deadline | None = None,
    ) -> dict[str, Plan]:
        """The building plans with improving pairs' plans in their place, in waves until ``until``
        (once a wave has gained, up to ``beyond`` when later) or until ``enough`` holds for them
        (module docstring)."""
        given, final = set(final), dict(final)
        for b in self.bdata:  # a building given no clusters may still lend its room
            final.setdefault(b, Plan(scenario_name=self.s.name, status=Status.feasible, racks=[]))
        wave, gained = 0, 0.0
        soft = Budget(until, run["executor"], run["workers"])
        late = Budget(beyond or until, run["executor"], run["workers"])

        def usable(jobs: int) -> Budget | None:  # the soft end, else the late one once a wave gained
            return next((b for b in (soft, late if gained else None) if b and b.starts("pair", jobs)), None)

        while (budget := usable(1)) is not None:
            picked = self.pick(final, budget.lanes)
            if not picked or (budget := usable(len(picked))) is None:
                break
            each = budget.seconds("pair", len(picked))
            wave += 1
            say(f"pairs: wave {wave}: {len(picked)} pair(s) of buildings solved as one, {each:.0f} s each")
            won = self.wave(final, picked, each, run)
            gained += won
            say(f"pairs: wave {wave}: {won:+,.6g} on the objective")
            if won and enough(final):
                break
        return {b: p for b, p in final.items() if b in given or p.racks}

    def wave(self, final: dict[str, Plan], picked: list[tuple[str, str]], each: float, run: dict) -> float:
        """One wave of pair solves (in parallel on the executor), improving plans put in place; what the
        objective gained."""
        jobs, subs = [], {}
        for a, b in picked:
            self.tried.add((a, b, self.version[a], self.version[b]))
            sub = self.pair_data(final, a, b)
            subs[f"{a}+{b}"] = (a, b)
            jobs.append((f"{a}+{b}", json.dumps(sub), each))
        got: dict[str, Plan] = {}

        def done(r: dict) -> None:
            if "plan" in r:
                got[r["part"]] = Plan.model_validate(r["plan"])

        run_jobs(solve_part, jobs, done, **run)
        return sum(self.accept(final, *subs[k], p) for k, p in sorted(got.items()))

    def accept(self, final: dict[str, Plan], a: str, b: str, p: Plan) -> float:
        """Put the pair's plan (verified against the pair by its solve) in place of its buildings'
        plans when it beats them; what the objective gained (0 when kept as it was). A maximising
        objective counts rack by rack, so the whole scenario's count is the pair's."""
        if not p.status.has_plan or p.status == Status.time_limit or p.objective_value is None:
            return 0.0
        before = objective_value(self.s, [*final[a].racks, *final[b].racks])
        after = objective_value(self.s, p.racks)
        if after <= before + 1e-6 * max(1.0, abs(before)):
            return 0.0
        for x in (a, b):
            final[x] = Plan(
                scenario_name=self.s.name,
                status=Status.feasible,
                racks=[r for r in p.racks if r.building == x],
            )
            self.version[x] += 1
        return after - before

    def pair_data(self, final: dict[str, Plan], a: str, b: str) -> dict:
        """Scenario data of buildings a and b with every cluster either hosts, at its own figure; a
        cluster spanning buildings at the GPUs it has in the two (its share elsewhere stands)."""
        placed: dict[str, int] = defaultdict(int)
        for (_, cid), n in self.here(final, (a, b)).items():
            placed[cid] += n
        ids = sorted({r.cluster for x in (a, b) for r in final[x].racks if r.cluster})
        clusters = [
            {**self.cdata[c], "gpus": placed[c]} if self.group_of[c].spanning else self.cdata[c] for c in ids
        ]
        sub = building_data(self.data, self.bdata[a], clusters, f"{self.s.name}-{a}-{b}")
        sub["site"] = {**sub["site"], "buildings": [self.bdata[a], self.bdata[b]]}
        if "backup_power" in sub:
            fixed = self.data["backup_power"].get("fixed", {})
            sub["backup_power"]["fixed"] = {k: v for k, v in fixed.items() if k in (a, b)}
        return sub

    # ------------------------------------------------------------------ which pairs

    def pick(self, final: dict[str, Plan], lanes: int) -> list[tuple[str, str]]:
        """Disjoint pairs for one wave, the best estimates first (at most two per lane), each not
        tried since either building last changed; only pairs estimated to gain a rack."""
        free = [b for b in final if not (self.pinned and self.spans(final[b]))]
        known = all((b, self.every) in self.most for b in free)
        held, grow, move = self.wants(final) if known else ({}, {}, {})
        short, rooms = ({}, {}) if known else (self.shortfalls(final), self.rooms(final))
        est = []
        for i, a in enumerate(free):
            for b in free[i + 1 :]:
                if (a, b, self.version[a], self.version[b]) in self.tried:
                    continue
                if known:
                    e = self.most_gain(held, grow, move, a, b)
                else:
                    e = self.gain(short, rooms, a, b) + self.gain(short, rooms, b, a)
                if e > 0:
                    est.append((e, a, b))
        picked: list[tuple[str, str]] = []
        used: set[str] = set()
        for _e, a, b in sorted(est, key=lambda t: (-t[0], t[1], t[2])):
            if a in used or b in used:
                continue
            picked.append((a, b))
            used.update((a, b))
            if len(picked) >= 2 * lanes:
                break
        return picked

    def here(self, final: dict[str, Plan], only: tuple[str, ...] | None = None) -> dict[tuple[str, str], int]:
        """(building, cluster) → the GPUs of the cluster's racks (spares left out) in each building
        (of ``only``, when given)."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for b, p in final.items():
            if only is None or b in only:
                for r in p.racks:
                    if r.cluster and not r.spare:
                        out[b, r.cluster] += self.types[r.rack_type].gpus
        return out

    def spans(self, plan: Plan) -> bool:
        """Whether a building plan holds racks of a cluster spanning buildings."""
        return any(r.cluster in self.group_of and self.group_of[r.cluster].spanning for r in plan.racks)

    def wants(self, final: dict[str, Plan]) -> tuple[dict[str, int], dict[str, list], dict[str, list]]:
        """Building → GPUs it holds; building → (group, sorted types, GPUs, figure) of each cluster
        there that could take more ("as many as fit" up to its figure, none: unbounded; at least:
        unbounded); building → (sorted types, GPUs there) of each other cluster there (exact, at
        its figure, or a spanning share, held at what it has): those that may move to make room."""
        here = self.here(final)
        held: dict[str, int] = defaultdict(int)
        placed: dict[str, int] = defaultdict(int)
        for (b, cid), n in here.items():
            held[b] += n
            placed[cid] += n
        grow: dict[str, list] = defaultdict(list)
        move: dict[str, list] = defaultdict(list)
        for (b, cid), n in sorted(here.items()):
            g, c = self.group_of.get(cid), self.figure[cid]
            if g is None:
                continue
            top = math.inf if c.demand == Demand.at_least or c.gpus is None else c.gpus
            if g.spanning or c.demand == Demand.exact or placed[cid] >= top:
                move[b].append((tuple(sorted(g.types)), n))
            else:
                grow[b].append((g.id, tuple(sorted(g.types)), placed[cid], top))
        return held, grow, move

    def most_gain(self, held: dict[str, int], grow: dict, move: dict, a: str, b: str) -> float:
        """About what solving a and b as one gains: both ways of :meth:`one_way`."""
        return self.one_way(held, grow, move, a, b) + self.one_way(held, grow, move, b, a)

    def one_way(self, held: dict[str, int], grow: dict, move: dict, a: str, b: str) -> float:
        """What a's growing clusters might gain with b. Each building's plan is already the best for
        its own clusters, so a gain needs clusters to change building (free_x: the most x holds less
        what it holds). Either one of a's other clusters moves to b (its types fit there, b has a
        rack's room free) and a's growing clusters take free_a, up to their figures; or one growing
        cluster moves whole to b, to the most b holds of its types within b's room: free_b and the
        GPUs of b's other clusters whose types a holds, as many as free_a and the room it leaves
        take. 0 below one rack's worth."""
        mine = grow.get(a, [])
        if not mine:
            return 0.0

        def most(x: str, types: tuple[str, ...]) -> int:
            return self.most.get((x, types), self.most[x, self.every])

        free_a, free_b = (max(0, self.most[x, self.every] - held.get(x, 0)) for x in (a, b))
        unit = min(self.by_id[g].unit or 1 for g, *_ in mine)
        leaves = free_b >= unit and any(most(b, types) > 0 for types, _ in move.get(a, []))
        stay = min(free_a, sum(top - has for _, _, has, top in mine)) if leaves else 0.0
        swap = sum(n for types, n in move.get(b, []) if most(a, types) > 0)
        whole = max(
            min(top, most(b, types), free_b + min(swap, free_a + has)) - has for _, types, has, top in mine
        )
        best = max(stay, whole)
        return best if best >= unit else 0.0

    def gain(self, short: dict[str, dict[str, int]], rooms: dict[str, dict[str, int]], a: str, b: str) -> int:
        """GPUs a's short clusters might gain with b's room, about: at least one rack's worth, else 0."""
        want = short.get(a, {})
        if not want:
            return 0
        room = max((rooms[b].get(g, 0) for g in want), default=0)
        est = min(sum(want.values()), room)
        unit = min(self.by_id[g].unit or 1 for g in want)
        return est if est >= unit else 0

    def shortfalls(self, final: dict[str, Plan]) -> dict[str, dict[str, int]]:
        """Building → group → GPUs its "as many as fit" clusters homed there miss."""
        placed: dict[str, int] = defaultdict(int)
        home: dict[str, str] = {}
        for (b, cid), n in self.here(final).items():
            placed[cid] += n
            home[cid] = b
        out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for c in self.s.clusters:
            g = self.group_of.get(c.id)
            if c.demand != Demand.max or g is None or g.spanning or c.gpus is None or c.id not in home:
                continue
            if placed[c.id] < c.gpus:
                out[home[c.id]][g.id] += c.gpus - placed[c.id]
        return out

    def rooms(self, final: dict[str, Plan]) -> dict[str, dict[str, int]]:
        """Building → group → free GPU room for it (module docstring), where the group may stand."""
        ix = self.ix
        ports: dict[str, int] = {p: pod.max_gpus for p, pod in ix.pods.items()}
        slots: dict[str, float] = {p: (pod.max_racks or float("inf")) for p, pod in ix.pods.items()}
        spots = ix.pod_locations()
        positions: dict[str, int] = defaultdict(int)
        for rid, ref in ix.rows.items():
            positions[ref.row.pod] += sum(
                1 for i in range(ref.row.positions) if i not in ref.row.reserved and (rid, i) not in spots
            )
        for p in final.values():
            for r in p.racks:
                t = self.types[r.rack_type]
                pod = ix.rows[r.row].row.pod
                ports[pod] -= t.gpus
                positions[pod] -= t.width
                if t.kind != RackKind.network:
                    slots[pod] -= 1
        pods_of: dict[str, list[str]] = defaultdict(list)
        for pid, hid in ix.pod_hall.items():
            pods_of[ix.halls[hid][0]].append(pid)
        power = self.free_kw(final)
        out: dict[str, dict[str, int]] = {b: {} for b in final}
        for g in self.groups:
            big = max((self.types[t].gpus for t in g.types), default=0)
            per_kw = max(
                (
                    self.types[t].gpus / self.s.rack_power_kw(self.types[t])
                    for t in g.types
                    if self.types[t].gpus
                ),
                default=0.0,
            )
            for b in final:
                if (g.id, b) not in self.props or self.props[g.id, b].cap <= 0:
                    continue
                space = sum(max(0, min(ports[p], slots[p] * big, positions[p] * big)) for p in pods_of[b])
                out[b][g.id] = int(min(space, power.get(b, 0.0) * per_kw))
        return out

    def free_kw(self, final: dict[str, Plan]) -> dict[str, float]:
        """Building → planning kW its feed groups may still draw: Σ_g max(0, K_g − load_g), K_g the
        group's power room (:mod:`planner.model.room`) and load_g its racks' planning kW."""
        if not self._room:
            self._room.update(
                site_room(self.s, self.ix).group_kw(
                    min((c.on_power_failure.factor(c.cap_ratio) for c in self.s.clusters), default=1.0)
                )
            )
        group_of_row = self.pm.group_of_row
        load: dict[str, float] = defaultdict(float)
        for p in final.values():
            for r in p.racks:
                load[group_of_row[r.row]] += self.s.rack_power_kw(self.types[r.rack_type])
        out: dict[str, float] = defaultdict(float)
        seen: set[str] = set()
        for rid, ref in self.ix.rows.items():
            g = group_of_row[rid]
            if ref.row.network is None and g not in seen:
                seen.add(g)
                out[ref.building] += max(0.0, self._room.get(g, float("inf")) - load[g])
        return out
