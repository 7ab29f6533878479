"""The master and the buildings in rounds (:mod:`planner.scale.decompose`, steps 2-3)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace

from planner.batch.executors import counting, run_jobs
from planner.enums import Status
from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.plan import Plan
from planner.plan.first_fit import greedy_racks, missed_demands
from planner.plan.kpis import objective_value
from planner.scale.budget import Budget
from planner.scale.building_master import _master
from planner.scale.building_most import Most
from planner.scale.joined import (
    Decomposition,
    _join,
    _whole,
    first_fit_repair,
    solve_again,
    solve_part,
)
from planner.scale.pairs import Pairs, pairs_apply
from planner.scale.proposals import (
    as_exact,
    building_data,
    building_resources,
    building_shares,
    offer_left,
    recalibrate,
)
from planner.schema import Demand

ROUNDS = 10
"""Most master ↔ building rounds before giving up."""
CUT = 0.9
"""Factor on a building's capacity estimate for a group it could not host."""


_RETRY = object()
"""A round's answer when the master is recalibrated and the round starts again."""


class _Rounds:
    """The master and the buildings in rounds (module docstring, steps 2-3): the master shares out
    the clusters; with site budgets each building's fixed demands are costed first (wave 1), then
    every building solves its share (wave 2); buildings that cannot host theirs give up room in the
    proposals and the master shares again, up to :data:`ROUNDS` rounds."""

    def __init__(self, scenario, data, groups, props, home, budget: Budget, stages, run, say, budgeted):
        self.scenario, self.data, self.groups, self.props, self.home = scenario, data, groups, props, home
        self.budget, self.deadline = budget, budget.deadline
        self.stages, self.run_args, self.say, self.budgeted = (
            stages,
            run,
            say,
            budgeted,
        )
        self.bdata = {b["id"]: b for b in data["site"]["buildings"]}
        self.buildings = list(self.bdata)
        self.resources = building_resources(scenario, self.buildings)
        self.solved: dict[
            str, tuple[str, Plan | None, str]
        ] = {}  # building → (sub-scenario JSON, plan, error)
        self.committed: dict[
            str, tuple[str, dict[str, float] | None]
        ] = {}  # building → (JSON, use of its fixed demands)
        self.texts: dict[str, str] = {}  # building → the sub-scenario JSON of its job in this round
        self.rounds = 0
        self.keep: dict[tuple[str, str], int] = {}  # whole clusters hosted where the building's share solved
        self.whole_last: dict[tuple[str, str], int] = {}
        self.diagnosed: dict[str, set[str]] = {}  # a share's JSON → the clusters first-fit cannot place
        stages["master_s"] = stages["fixed_s"] = stages["buildings_s"] = 0.0

    def whole(self, why: str) -> Decomposition:
        kept = {b: p for b, (_, p, _) in self.solved.items() if p is not None and p.status.has_plan}
        repaired = first_fit_repair(
            self.scenario, kept, self.rounds, self.deadline, self.stages, self.say, why, self.budget
        )
        if repaired is not None:
            return repaired
        return _whole(self.scenario, self.deadline, self.stages, self.rounds, why, self.say, self.budget)

    def run(self, polish: bool) -> Decomposition:
        while True:
            self.rounds += 1
            if not self.budget.round_may_start():
                return self.whole(f"round {self.rounds} would start with {self.deadline.left():.0f} s left")
            shared = self.master()
            if isinstance(shared, Decomposition):
                return shared
            alloc, whole, use, subs, fixed = shared
            bad: list[str] = []
            floor: dict[str, dict[str, float]] = {b: {"kw": 0.0, "capex": 0.0} for b in self.buildings}
            if self.budgeted:
                got = self.fixed_wave(alloc, fixed, floor)
                if got is _RETRY:
                    continue
                if isinstance(got, Decomposition):
                    return got
                bad = got
            left_bad = (
                self.repair(bad, alloc, False)
                if bad
                else self.repair(self.building_wave(subs, use, floor), alloc, True)
            )
            if isinstance(left_bad, Decomposition):
                return left_bad
            if not left_bad:
                final = {b: p for b, (_, p, _) in self.solved.items() if p is not None}
                improve = self.pairs if pairs_apply(self.scenario) else None
                return _join(
                    self.scenario,
                    final,
                    self.rounds,
                    self.deadline,
                    self.stages,
                    self.say,
                    polish,
                    improve,
                    budget=self.budget,
                )

    def repair(self, bad: list[str], alloc, diagnose: bool) -> list[str] | Decomposition:
        """Buildings without a plan: with ``diagnose`` (their building solves ran), those whose
        share first-fit places stand on its plan and the others' misfits move (:meth:`shrink`);
        the buildings still without a plan for the next round, or the whole model's answer when
        the rounds are spent."""
        misfits = self.misfits(bad) if diagnose else {b: set() for b in bad}
        bad = [b for b in bad if b in misfits]  # the others now stand on first-fit's plan
        if bad and self.rounds >= ROUNDS:
            return self.whole(
                f"after {self.rounds} rounds buildings {', '.join(bad[:10])} still cannot meet their share"
            )
        self.keep = {
            (g, b): n
            for (g, b), n in self.whole_last.items()
            if n > 0 and b not in bad and b in self.solved and self.solved[b][1] is not None
        }
        if bad:
            moved = sum(len(m) for m in misfits.values())
            self.say(
                f"round {self.rounds}: buildings {', '.join(bad[:10])} cannot host their share: moving "
                + (f"{moved} cluster(s) first-fit could not place there" if moved else "clusters")
            )
            self.shrink(bad, alloc, misfits)
        return bad

    def master(self):
        """The master's shares this round: (GPUs, whole clusters and estimated use per building, each
        building's clusters, the fixed demands), or the whole model's answer when it has none."""
        tm = time.perf_counter()
        limit = self.budget.seconds("master")
        self.say(
            f"round {self.rounds}: master sharing {len(self.groups)} cluster groups out to "
            f"{len(self.buildings)} buildings, {limit:.0f} s at most"
        )
        master = _master(
            self.scenario, self.groups, self.buildings, self.props, limit, self.keep, self.resources
        )
        if master is None and self.keep:  # what solved cannot all stay: the master shares afresh
            master = _master(
                self.scenario, self.groups, self.buildings, self.props, limit, resources=self.resources
            )
        self.stages["master_s"] += time.perf_counter() - tm
        if master is None:
            return self.whole(
                f"the master has no solution in round {self.rounds} (the buildings' "
                "estimated room cannot meet the demands within the site budgets)"
            )
        alloc, whole, use = master
        self.whole_last = whole
        subs, fixed = building_shares(self.groups, self.buildings, alloc, whole)
        offered = offer_left(self.groups, self.buildings, self.props, alloc, subs)
        given = {c["id"] for cs in subs.values() for c in cs}
        for (
            g
        ) in self.groups:  # a cluster with racks installed always stands in its building (its racks name it)
            for c in g.members:
                if c["id"] in self.home and c["id"] not in given:
                    subs[self.home[c["id"]]].append(c)
        self.say(
            f"round {self.rounds}: master placed {sum(alloc.values()):,.0f} GPUs; {offered} cluster(s) "
            "it left out offered to the buildings with room"
        )
        return alloc, whole, use, subs, fixed

    def fixed_wave(self, alloc, fixed, floor):
        """Wave 1: each building's fixed demands at least cost, no budget: what they must spend
        (into ``floor``). The buildings that cannot meet theirs; :data:`_RETRY` when the fixed
        demands overrun the budgets and the master is recalibrated; the whole model's answer when
        that changes nothing or the rounds are spent."""
        s = self.scenario
        obj = "min_capex" if s.budgets.capex_usd is not None else "min_tco"
        pending = []
        for b in self.buildings:
            exact = [as_exact(c) for c in fixed[b]]
            text = json.dumps(
                building_data(self.data, self.bdata[b], exact, f"{s.name}-{b}-fixed", objective=obj)
            )
            if fixed[b] and self.committed.get(b, ("", None))[0] != text:
                pending.append((b, text))
            elif not fixed[b]:
                self.committed.pop(b, None)
        each = self.budget.seconds("fixed", len(pending))
        jobs = [(b, text, each) for b, text in pending]
        self.texts.clear()
        self.texts.update({j[0]: j[1] for j in jobs})

        def spent(r: dict) -> None:
            p = Plan.model_validate(r["plan"]) if "plan" in r else None
            ok = p is not None and p.status.has_plan and p.kpis is not None
            use = {"kw": p.kpis.racks_kw, "capex": p.kpis.capex_usd} if ok else None  # type: ignore[union-attr]
            self.committed[r["part"]] = (self.texts[r["part"]], use)

        tf = time.perf_counter()
        run_jobs(solve_part, jobs, spent, **self.run_args)
        self.stages["fixed_s"] += time.perf_counter() - tf
        bad = [b for b in self.buildings if fixed[b] and self.committed[b][1] is None]
        for b in self.buildings:
            if fixed[b] and self.committed[b][1] is not None:
                floor[b] = self.committed[b][1]
        caps = (("kw", s.budgets.it_power_kw), ("capex", s.budgets.capex_usd))
        over = {w: sum(f[w] for f in floor.values()) - cap for w, cap in caps if cap is not None}
        if bad or not any(v > 1e-6 for v in over.values()):
            return bad
        # the master under-estimated what fixed demands cost: charge them what they do cost
        changed = recalibrate(self.groups, self.props, alloc, fixed, floor)
        if not changed or self.rounds >= ROUNDS:
            by = ", ".join(f"{w} by {v:,.1f}" for w, v in over.items() if v > 0)
            return self.whole(f"the fixed demands as split exceed the site budgets ({by})")
        return _RETRY

    def building_wave(self, subs, use, floor) -> list[str]:
        """Wave 2: every building with a share solves it (within its part of the budgets); the
        buildings without a plan."""
        s = self.scenario
        pending = []
        flex = {b: {w: max(0.0, use[b][w] - floor[b][w]) for w in ("kw", "capex")} for b in self.buildings}
        for b in self.buildings:
            if not subs[b]:
                self.solved.pop(b, None)
                continue
            budgets = {}
            for w, key in (("kw", "it_power_kw"), ("capex", "capex_usd")):
                cap = getattr(s.budgets, key)
                if cap is not None:
                    rest = max(0.0, cap - sum(f[w] for f in floor.values()))
                    total_flex = sum(f[w] for f in flex.values())
                    share = flex[b][w] / total_flex if total_flex > 0 else 1 / len(self.buildings)
                    budgets[key] = floor[b][w] + rest * share
            text = json.dumps(
                building_data(self.data, self.bdata[b], subs[b], f"{s.name}-{b}", budgets or None)
            )
            if b not in self.solved or self.solved[b][0] != text:
                pending.append((b, text))
        executor = self.run_args["executor"]
        each = self.budget.seconds("buildings", len(pending))
        jobs = [(b, text, each) for b, text in pending]
        self.say(
            f"round {self.rounds}: {len(jobs)} building solve(s) on {executor}, {each:.0f} s each at most"
        )
        self.texts.clear()
        self.texts.update({j[0]: j[1] for j in jobs})

        def done(r: dict) -> None:
            p = Plan.model_validate(r["plan"]) if "plan" in r else None
            self.solved[r["part"]] = (self.texts[r["part"]], p, r.get("error", ""))

        tb = time.perf_counter()
        counted = counting(done, len(jobs), self.say, f"round {self.rounds}: building solves")
        run_jobs(solve_part, jobs, counted, **self.run_args)
        # no plan in its share of the time: a share first-fit places stands on that plan; one it
        # cannot place gives way now (the next round moves its misfits), not after a second solve as
        # long as the rest of the run
        unanswered = [
            b for b in self.texts if self.solved[b][1] is None or not self.solved[b][1].status.has_plan
        ]
        bad = list(self.misfits(unanswered)) if unanswered else []
        if not bad:  # every share has a plan: the ones short of a proof solved once more, the better kept
            answers = {b: self.solved[b][1] for b in self.texts}
            again = solve_again(
                self.scenario, dict(self.texts), answers, self.budget, self.deadline, self.run_args, self.say
            )
            for b in again:
                self.solved[b] = (self.texts[b], answers[b], "" if answers[b] is not None else "no answer")
        self.stages["buildings_s"] += time.perf_counter() - tb
        self.say(f"round {self.rounds}: building solves done in {time.perf_counter() - tb:.1f} s")
        return [b for b, (_, p, _) in self.solved.items() if p is None or not p.status.has_plan]

    def pairs(
        self, final: dict[str, Plan], enough: Callable[[dict[str, Plan]], bool], most: Most
    ) -> dict[str, Plan]:
        """The joined plan short of its bound: pairs of buildings solved again together
        (:mod:`planner.scale.pairs`) until what joining and verifying the plan needs is left
        (the budget's tail: :data:`~planner.scale.budget.TAIL_PASSES` passes over the site, and the
        polish's part where it follows: :meth:`~planner.scale.budget.Budget.pairs_end`; waves that
        gain go on into the polish's part, leaving the packing bound its: :meth:`~planner.scale.
        budget.Budget.pairs_beyond`), or until ``enough`` says the plans prove the gap."""
        until, beyond = self.budget.pairs_end(), self.budget.pairs_beyond()
        tp = time.perf_counter()
        out = Pairs(self.scenario, self.data, self.groups, self.props, most).improve(
            final, until, self.run_args, self.say, enough, beyond
        )
        self.stages["pairs_s"] = time.perf_counter() - tp
        return out

    def misfits(self, bad: list[str]) -> dict[str, set[str]]:
        """Which clusters of each building without a plan first-fit (largest demands first) cannot
        place in its share; a building whose share first-fit does place gets that plan instead
        (and is left out). An empty set: first-fit names none, every group there gives way."""
        out = {}
        for b in bad:
            text = self.solved[b][0]
            if text in self.diagnosed:  # this share was diagnosed before: first-fit could not place it
                out[b] = self.diagnosed[text]
                continue
            try:
                sub = scenario_from_data(json.loads(text))
            except InputError:  # a share the building cannot take as given (its solve said why)
                out[b] = set()
                continue
            racks = greedy_racks(sub, largest_first=True, retry=True)
            missed = missed_demands(sub, racks)
            if missed:
                out[b] = self.diagnosed[text] = missed
            else:
                value = objective_value(sub, racks)  # a later solve of the share must beat it
                plan = Plan(
                    scenario_name=sub.name, status=Status.feasible, objective_value=value, racks=racks
                )
                self.solved[b] = (text, plan, "")
        return out

    def shrink(self, bad: list[str], alloc, misfits: dict[str, set[str]] | None = None) -> None:
        """Buildings that could not host their share offer less, for the groups of the clusters
        first-fit could not place there (``misfits``; every group there when none is named): a
        spanning or as-many-as-fit group a share of its room; a named exact or at-least group one
        whole cluster fewer (it moves); unnamed, a one-pod group its room in each pod cut by
        :data:`CUT` (a cluster that then no longer fits a pod moves), others one cluster fewer."""
        for b in bad:
            named = (misfits or {}).get(b) or set()
            for g in self.groups:
                if named and not any(c["id"] in named for c in g.members):
                    continue
                if (g.id, b) not in self.props or alloc.get((g.id, b), 0) <= 0:
                    continue
                p = self.props[g.id, b]
                flexible = g.spanning or g.demand == Demand.max
                if p.pods and not flexible and not named:
                    self.props[g.id, b] = replace(
                        p, cap=p.cap * CUT, pods={k: v * CUT for k, v in p.pods.items()}
                    )
                    continue
                cut = p.cap * CUT if flexible else p.cap
                whole = max(0, p.whole - (0 if g.spanning else 1))
                self.props[g.id, b] = replace(p, cap=cut, whole=whole)
