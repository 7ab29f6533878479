"""Claim checks: every figure a plan states is recomputed from its racks and the scenario (KPIs,
costs, objective, phases and order book by the verifier's own count, :mod:`planner.verifier.kpis_recount`;
stranded power, goodput and the reliability report still by the optimiser's, listed in
``tests/test_imports.py``), utilisation from the constraint checks, phases, fabric
figures from the verifier's own sizing, reliability, objective, bound, gap, status, scenario
hash), and money budgets against the plan's capex and IT power."""

from __future__ import annotations

from planner.enums import LimitKind, Objective, Status
from planner.input.loader import scenario_hash
from planner.plan.kpis import stranded_power
from planner.rules.reliability import cluster_goodput, reliability_report
from planner.schema import ClusterFabric, Plan, Scenario, Usage
from planner.verifier.fabric_recount import all_figures, chosen
from planner.verifier.kpis_recount import recount_kpis, recount_objective, recount_orders, recount_phases
from planner.verifier.report import TOL, VerifyReport, close, fmt
from planner.verifier.site import site_view
from planner.verifier.witness import strict, witness_checks, witness_racks


def _same(a, b) -> bool:
    """Equal, with floats within the claim tolerance."""
    if isinstance(a, float) or isinstance(b, float):
        return close(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _bought(plan: Plan) -> list[tuple[str, str | None]]:
    return [(b.id, b.phase) for b in plan.retrofits]


def budget_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    b = scenario.budgets
    if b.capex_usd is None and b.it_power_kw is None:
        return
    k = recount_kpis(scenario, plan.racks, _bought(plan), chosen(plan))
    if b.capex_usd is not None:
        if k.capex_usd > b.capex_usd + 0.01:
            rep.add(
                "budgets.capex_usd",
                "budget",
                f"capex ${fmt(k.capex_usd)} exceeds the budget ${fmt(b.capex_usd)}",
            )
        rep.usage.append(
            Usage(kind=LimitKind.budget, id="capex_usd", value=k.capex_usd, limit=b.capex_usd, unit="USD")
        )
    if b.it_power_kw is not None:
        if k.racks_kw > b.it_power_kw + TOL:
            rep.add(
                "budgets.it_power_kw",
                "budget",
                f"IT power of the placed racks {fmt(k.racks_kw)} kW exceeds the budget "
                f"{fmt(b.it_power_kw)} kW",
            )
        rep.usage.append(
            Usage(kind=LimitKind.budget, id="it_power_kw", value=k.racks_kw, limit=b.it_power_kw, unit="kW")
        )


OBJECTIVE_KPI = {
    Objective.max_gpus: "gpus",
    Objective.max_pflops: "pflops_bf16",
    Objective.min_capex: "capex_usd",
    Objective.min_tco: "tco_usd",
}
"""Objective → the KPI it optimises (the objective value a plan claims is that KPI)."""


def claim_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """A plan is a claim: KPIs, utilisation, objective, bound, gap and status are recomputed
    from the racks and the scenario and must match what the plan states."""
    total_stranded, where = (
        stranded_power(scenario, plan.racks, rep.usage)
        if plan.kpis is not None or plan.stranded
        else (0.0, [])
    )
    if plan.kpis is not None or plan.stranded:
        got_s = {s.node: s for s in plan.stranded}
        want_s = {n: (kw, why) for n, kw, why in where}
        for node in sorted(set(got_s) | set(want_s)):
            g, w = got_s.get(node), want_s.get(node)
            if g is None or w is None:
                rep.add(
                    f"stranded {node}",
                    "claim",
                    "missing from the plan" if g is None else "the racks strand nothing there",
                )
            elif not close(g.kw, w[0]) or g.reason != w[1]:
                rep.add(
                    f"stranded {node}",
                    "claim",
                    f"plan says {fmt(g.kw)} kW ({g.reason}), the racks give {fmt(w[0])} kW ({w[1]})",
                )
    # the KPIs before backup power (computed once), and the reliability report the racks give with
    # them: the backup choice it makes enters the KPIs
    base = (
        recount_kpis(
            scenario,
            plan.racks,
            _bought(plan),
            chosen(plan),
            len(plan.network_racks),
            cluster_goodput(scenario, plan.racks),
        )
        if plan.kpis is not None or (plan.reliability is not None and scenario.backup_power)
        else None
    )
    want_r = None
    if plan.reliability is not None or (plan.kpis is not None and scenario.backup_power and plan.racks):
        want_r = reliability_report(
            scenario,
            plan.racks,
            network=plan.network_racks,
            tco_usd=base.tco_usd if base is not None and scenario.backup_power else None,
        )
    if plan.kpis is not None:
        kpis = recount_kpis(
            scenario,
            plan.racks,
            _bought(plan),
            chosen(plan),
            len(plan.network_racks),
            cluster_goodput(scenario, plan.racks),
            want_r.backup if want_r else [],
            total_stranded,
        )
        for key, want in kpis.model_dump().items():
            got = getattr(plan.kpis, key)
            if not close(float(got), float(want)):
                rep.add(f"kpis.{key}", "claim", f"plan says {fmt(got)}, the racks give {fmt(want)}")
    if plan.utilisation is not None:
        mine = {(u.kind, u.id): u for u in rep.usage}
        theirs = {(u.kind, u.id): u for u in plan.utilisation}
        for key in sorted(set(mine) | set(theirs)):
            a, b = theirs.get(key), mine.get(key)
            if a is None or b is None:
                rep.add(
                    f"utilisation {key[0]} {key[1]}",
                    "claim",
                    "listed in the plan but not a limit of the scenario"
                    if b is None
                    else "missing from the plan",
                )
                continue
            for f in ("value", "limit", "worst_value"):
                if not close(getattr(a, f), getattr(b, f)):
                    rep.add(
                        f"utilisation {key[0]} {key[1]}",
                        "claim",
                        f"{f}: plan says {getattr(a, f)}, the racks give {getattr(b, f)}",
                    )
            if a.worst_failure != b.worst_failure and not close(a.worst_value, b.worst_value):
                rep.add(
                    f"utilisation {key[0]} {key[1]}",
                    "claim",
                    f"worst failure: plan says {a.worst_failure}, the racks give {b.worst_failure}",
                )
    if plan.phases:  # a plan that states no summary claims none
        want = recount_phases(scenario, plan, rep.phase_usage)
        if [p.model_dump() for p in plan.phases] != [p.model_dump() for p in want]:
            got = {p.phase: p for p in plan.phases}
            for w in want:
                g = got.get(w.phase)
                if g is None or g.model_dump() != w.model_dump():
                    diff = (
                        "missing"
                        if g is None
                        else ", ".join(
                            f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                            for k in type(w).model_fields
                            if getattr(g, k) != getattr(w, k)
                        )
                    )
                    rep.add(f"phases {w.phase}", "claim", diff)
    if plan.orders:  # a plan that states no order book claims none
        want_o = [o.model_dump() for o in recount_orders(scenario, plan)]
        if [o.model_dump() for o in plan.orders] != want_o:
            rep.add("orders", "claim", "the order book differs from the one the racks and retrofits give")
    if plan.fabric is not None:
        want_f = all_figures(scenario, plan.racks, chosen(plan))
        row_pod = {r.id: r.pod for b in scenario.site.buildings for h in b.halls for r in h.rows}
        got_f = {f.cluster: f for f in plan.fabric}
        for cid in sorted(set(want_f) | set(got_f)):
            g, z = got_f.get(cid), want_f.get(cid)
            if g is None or z is None:
                rep.add(
                    f"fabric {cid}",
                    "claim",
                    "missing from the plan" if g is None else "the cluster has no fabric design",
                )
                continue
            mine = [nr for nr in plan.network_racks if nr.cluster == cid]
            positions: dict[str, int] = {}
            kw: dict[str, float] = {}
            for nr in mine:
                pod = row_pod.get(nr.row, "")
                positions[pod] = positions.get(pod, 0) + 1
                kw[pod] = kw.get(pod, 0.0) + nr.kw
            w = ClusterFabric(
                cluster=cid,
                design=z.design,
                endpoints=z.endpoints,
                switches=z.switches,
                leaves_per_pod=z.leaves_per_pod,
                links=z.links,
                kw=z.kw,
                capex_usd=z.capex_usd,
                optics=z.optics,
                network_racks=z.network_racks,
                racks_placed=len(mine),
                positions_by_pod=dict(sorted(positions.items())),
                kw_by_pod=dict(sorted(kw.items())),
                max_endpoints=z.max_endpoints,
                max_hops=z.max_hops,
                endpoints_by_building=z.endpoints_by_building,
                region_links=z.region_links,
                region_switches=z.region_switches,
                fibre_km=z.fibre_km,
                latency_us=z.latency_us,
            )
            diff = ", ".join(
                f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                for k in type(w).model_fields
                if not _same(getattr(g, k), getattr(w, k))
            )
            if diff:
                rep.add(f"fabric {cid}", "claim", diff)
    if plan.reliability is not None and want_r is not None:
        got_k = [b.model_dump() for b in plan.reliability.backup]
        if got_k != [b.model_dump() for b in want_r.backup]:
            rep.add(
                "reliability backup",
                "claim",
                "the backup-power choice differs from the one the racks and costs give",
            )
        got_c = {c.cluster: c for c in plan.reliability.clusters}
        for w in want_r.clusters:
            g = got_c.get(w.cluster)
            if g is None or g.model_dump() != w.model_dump():
                diff = (
                    "missing"
                    if g is None
                    else ", ".join(
                        f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                        for k in type(w).model_fields
                        if getattr(g, k) != getattr(w, k)
                    )
                )
                rep.add(f"reliability cluster {w.cluster}", "claim", diff)
        got_b = {(b.kind, b.id): b for b in plan.reliability.blast_radius}
        want_b = {(b.kind, b.id): b for b in want_r.blast_radius}
        for key in sorted(set(got_b) | set(want_b)):
            g, w = got_b.get(key), want_b.get(key)
            if g is None or w is None or g.model_dump() != w.model_dump():
                what = (
                    "takes down nothing"
                    if w is None
                    else "missing from the plan"
                    if g is None
                    else ", ".join(
                        f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                        for k in type(w).model_fields
                        if getattr(g, k) != getattr(w, k)
                    )
                )
                rep.add(f"blast radius {key[0]} {key[1]}", "claim", what)
    if plan.failover is not None:
        failover_claims(plan, scenario, rep)
    status = plan.status
    if not status.has_plan and plan.racks:
        rep.add(
            "status",
            "claim",
            f"status {status.value} says there is no plan, but the plan lists {len(plan.racks)} racks",
        )
    if status in (Status.optimal, Status.feasible) or (
        status == Status.not_solved and plan.objective_value is not None
    ):
        objective = Objective(scenario.objective)
        obj = recount_objective(scenario, plan.racks, _bought(plan), chosen(plan))
        if plan.objective and plan.objective != objective.value:
            rep.add(
                "objective",
                "claim",
                f"plan optimised {plan.objective}, the scenario asks for {objective.value}",
            )
        if plan.objective_value is None or not close(plan.objective_value, obj, rel=1e-6, abs_=1e-4):
            rep.add(
                "objective_value", "claim", f"plan says {plan.objective_value}, the racks give {fmt(obj)}"
            )
        slack = 1e-6 * max(1.0, abs(obj))
        if plan.bound is not None and (
            (objective.maximise and plan.bound < obj - slack)
            or (not objective.maximise and plan.bound > obj + slack)
        ):
            rep.add(
                "bound", "claim", f"bound {fmt(plan.bound)} is on the wrong side of the objective {fmt(obj)}"
            )
        gap = abs(plan.bound - obj) / max(abs(obj), 1.0) if plan.bound is not None else None
        if (plan.gap is None) != (gap is None) or (
            gap is not None and not close(plan.gap, gap, rel=1e-4, abs_=1e-6)
        ):
            rep.add(
                "gap",
                "claim",
                f"plan says {plan.gap}, its bound and racks give {gap if gap is None else round(gap, 9)}",
            )
        rel_gap = (plan.solver_settings or scenario.solver).rel_gap
        claim = status == Status.optimal and plan.optimality == "solver_claim"
        if claim and plan.bound is not None:
            rep.add(
                "optimality",
                "claim",
                "optimal on the solver's word is claimed only when it stated no bound; this plan has one",
            )
        if status == Status.optimal and not claim and (gap is None or gap > rel_gap + 1e-9):
            rep.add(
                "status",
                "claim",
                f"optimal needs a gap within {rel_gap:g}; the gap is "
                f"{'unknown' if gap is None else f'{gap:.6g}'}",
            )
    if status != Status.optimal and plan.optimality is not None:
        rep.add("optimality", "claim", f"status {status.value} cannot be '{plan.optimality}' optimal")


def scenario_mismatch(plan: Plan, scenario: Scenario) -> str | None:
    """One line when a plan was made for another scenario (name and hash both differ), else none."""
    want = scenario_hash(scenario)
    if plan.scenario_hash and plan.scenario_hash != want and plan.scenario_name != scenario.name:
        return (
            f"plan was made for '{plan.scenario_name}' (hash {plan.scenario_hash}), not '{scenario.name}' "
            f"(hash {want})"
        )
    return None


def hash_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """The plan's scenario hash and name are the scenario's."""
    if plan.scenario_hash:
        want = scenario_hash(scenario)
        if plan.scenario_hash != want:
            rep.add(
                "scenario_hash",
                "claim",
                f"plan says {plan.scenario_hash}, scenario '{scenario.name}' hashes to {want} (it changed "
                "since the plan was made)",
            )
    if plan.scenario_name != scenario.name:
        rep.add(
            "scenario_name", "claim", f"plan says '{plan.scenario_name}', the scenario is '{scenario.name}'"
        )


def failover_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """The failover gain is a claim backed by its witness: the strict N-1 racks must make a valid
    plan under strict N-1 with the GPUs and objective stated, and the gains are the differences."""
    g = plan.failover
    assert g is not None
    if g.strict_gpus is None:
        if g.gain_gpus is not None or g.strict_racks:
            rep.add("failover", "claim", "a gain without the strict N-1 GPUs it is measured against")
        return
    got = witness_checks(plan, scenario, rep)
    if got is not None and got != g.strict_gpus:
        rep.add(
            "failover.strict_gpus", "claim", f"plan says {g.strict_gpus:,}, its strict N-1 racks give {got:,}"
        )
    types = scenario.catalog.by_id()
    gpus = sum(types[r.rack_type].gpus for r in plan.racks if r.rack_type in types and not r.spare)
    if g.gain_gpus != gpus - g.strict_gpus:
        rep.add(
            "failover.gain_gpus",
            "claim",
            f"plan says {g.gain_gpus}, its {gpus:,} GPUs less {g.strict_gpus:,} under strict N-1 give "
            f"{gpus - g.strict_gpus:+,}",
        )
    if got is not None and g.strict_objective is not None:
        hard = strict(scenario)
        witness = [r for r in witness_racks(g, hard, site_view(hard), VerifyReport())]
        want = recount_objective(
            hard, [*hard.existing, *witness], [(b.id, b.phase) for b in g.strict_retrofits], chosen(plan)
        )
        if not close(g.strict_objective, want, rel=1e-6, abs_=1e-4):
            rep.add(
                "failover.strict_objective",
                "claim",
                f"plan says {g.strict_objective}, its strict N-1 racks give {fmt(want)}",
            )
        if plan.objective_value is not None and (
            g.gain_objective is None
            or not close(g.gain_objective, plan.objective_value - g.strict_objective, rel=1e-6, abs_=1e-4)
        ):
            rep.add(
                "failover.gain_objective",
                "claim",
                f"plan says {g.gain_objective}, {fmt(plan.objective_value)} less "
                f"{fmt(g.strict_objective)} gives {fmt(plan.objective_value - g.strict_objective)}",
            )
