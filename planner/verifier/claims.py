"""Claim checks: every figure a plan states is recomputed from its racks and the scenario (KPIs,
costs, objective, phases and order book by the verifier's own count, :mod:`planner.verifier.kpis_recount`;
stranded power by :mod:`planner.verifier.stranded_recount`, goodput and the reliability report by
:mod:`planner.verifier.reliability_recount`), utilisation from the constraint checks, phases, fabric
figures from the verifier's own sizing, reliability, objective, bound, gap, status, scenario
hash), and money budgets against the plan's capex and IT power."""

from __future__ import annotations

from dataclasses import dataclass

from planner.enums import LimitKind, Objective, Status
from planner.schema import ClusterFabric, Plan, Scenario, Usage
from planner.schema.hashing import run_hash, scenario_hash
from planner.verifier.bounds_recount import recount_capacity, recount_demands
from planner.verifier.fabric_recount import all_figures, chosen
from planner.verifier.grid_recount import grid_costs
from planner.verifier.kpis_recount import recount_kpis, recount_objective, recount_orders, recount_phases
from planner.verifier.reliability_recount import recount_goodput, recount_reliability
from planner.verifier.report import TOL, VerifyReport, close, fmt
from planner.verifier.site import site_view
from planner.verifier.stranded_recount import recount_stranded
from planner.verifier.witness import strict, witness_checks, witness_racks


def _same(a, b) -> bool:
    """Equal, with floats within the claim tolerance (in mappings and lists too)."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and close(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _parts(d: dict) -> str:
    """A mapping of figures as a claim message shows it."""
    return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in d.items()) + "}"


def _bought(plan: Plan) -> list[tuple[str, str | None]]:
    return [(b.id, b.phase) for b in plan.retrofits]


def budget_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    b = scenario.budgets
    if b.capex_usd is None and b.it_power_kw is None:
        return
    k = recount_kpis(scenario, plan.racks, _bought(plan), chosen(plan), grid=grid_costs(scenario, plan.grid))
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


GAP_TOL = 1e-6
"""Slack on the relative gap ``optimal`` must be within: ``rel_gap: 0`` is proven to the solver's
precision (the verifier's own figure; the optimiser's is its own)."""

OBJECTIVE_KPI = {
    Objective.max_gpus: "gpus",
    Objective.max_pflops: "pflops_bf16",
    Objective.min_capex: "capex_usd",
    Objective.min_tco: "tco_usd",
}
"""Objective → the KPI it optimises (the objective value a plan claims is that KPI)."""


def _differences(got, want, same=lambda a, b: a == b) -> str:
    """ "field: plan says X, the racks give Y" for every field of a record that differs."""
    return ", ".join(
        f"{k}: plan says {getattr(got, k)}, the racks give {getattr(want, k)}"
        for k in type(want).model_fields
        if not same(getattr(got, k), getattr(want, k))
    )


def claim_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """A plan is a claim: stranded power, KPIs, utilisation, phases, orders, fabric figures,
    reliability, failover gain, objective, bound, gap and status are recomputed from the racks and
    the scenario and must match what the plan states (one function per group below)."""
    stranded = _stranded_claims(plan, scenario, rep)
    want_r = _kpi_claims(plan, scenario, rep, stranded)
    _utilisation_claims(plan, rep)
    _phase_claims(plan, scenario, rep, want_r)
    _order_claims(plan, scenario, rep)
    _fabric_claims(plan, scenario, rep)
    if plan.reliability is not None and want_r is not None:
        _reliability_claims(plan, want_r, rep)
    if plan.failover is not None:
        failover_claims(plan, scenario, rep)
    _status_claims(plan, scenario, rep)


def _stranded_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> float:
    """Stranded power per element as the racks leave it; the total, kW."""
    if plan.kpis is None and not plan.stranded:
        return 0.0
    total, where = recount_stranded(scenario, site_view(scenario), plan.racks, rep.usage)
    got_s = {s.node: s for s in plan.stranded}
    want_s = {n: (kw, why) for n, kw, why in where}
    for node in sorted(set(got_s) | set(want_s)):
        g, w = got_s.get(node), want_s.get(node)
        if g is None or w is None:
            what = "missing from the plan" if g is None else "the racks strand nothing there"
            rep.add(f"stranded {node}", "claim", what)
        elif not close(g.kw, w[0]) or g.reason != w[1]:
            what = f"plan says {fmt(g.kw)} kW ({g.reason}), the racks give {fmt(w[0])} kW ({w[1]})"
            rep.add(f"stranded {node}", "claim", what)
    return total


def _kpi_claims(plan: Plan, scenario: Scenario, rep: VerifyReport, stranded_kw: float):
    """Every KPI counted from the racks (the backup power chosen enters them); the reliability
    report the racks give, when the plan states one or its KPIs depend on it."""
    chosen_backup = bool(scenario.backup_power and plan.racks and (plan.kpis is not None or plan.phases))
    needs_base = (
        plan.kpis is not None
        or chosen_backup
        or (plan.reliability is not None and bool(scenario.backup_power))
    )
    args = (scenario, plan.racks, _bought(plan), chosen(plan), len(plan.network_racks))
    good = recount_goodput(scenario, plan.racks) if needs_base else {}
    base = recount_kpis(*args, good) if needs_base else None
    want_r = None
    if plan.reliability is not None or chosen_backup:  # the KPIs and the phases' capex hold its choice
        tco = base.tco_usd if base is not None and scenario.backup_power else None
        want_r = recount_reliability(scenario, site_view(scenario), plan.racks, plan.network_racks, tco)
    if plan.kpis is not None:
        grid = grid_costs(scenario, plan.grid)
        kpis = recount_kpis(*args, good, want_r.backup if want_r else [], stranded_kw, grid)
        for key, want in kpis.model_dump().items():
            got = getattr(plan.kpis, key)
            if isinstance(want, dict):
                if not _same(got, want):
                    rep.add(f"kpis.{key}", "claim", f"plan says {_parts(got)}, the racks give {_parts(want)}")
            elif not close(float(got), float(want)):
                rep.add(f"kpis.{key}", "claim", f"plan says {fmt(got)}, the racks give {fmt(want)}")
    return want_r


def _utilisation_claims(plan: Plan, rep: VerifyReport) -> None:
    """Every limit's use as the constraint checks found it (normal, worst failure)."""
    if plan.utilisation is None:
        return
    mine = {(u.kind, u.id): u for u in rep.usage}
    theirs = {(u.kind, u.id): u for u in plan.utilisation}
    for key in sorted(set(mine) | set(theirs)):
        a, b = theirs.get(key), mine.get(key)
        where = f"utilisation {key[0]} {key[1]}"
        if a is None or b is None:
            what = (
                "listed in the plan but not a limit of the scenario" if b is None else "missing from the plan"
            )
            rep.add(where, "claim", what)
            continue
        for f in ("value", "limit", "worst_value"):
            if not close(getattr(a, f), getattr(b, f)):
                rep.add(where, "claim", f"{f}: plan says {getattr(a, f)}, the racks give {getattr(b, f)}")
        if a.worst_failure != b.worst_failure and not close(a.worst_value, b.worst_value):
            what = f"worst failure: plan says {a.worst_failure}, the racks give {b.worst_failure}"
            rep.add(where, "claim", what)


def _phase_claims(plan: Plan, scenario: Scenario, rep: VerifyReport, want_r) -> None:
    """Per-phase summaries (a plan that states none claims none), the backup power the verifier
    chose (``want_r``, its reliability recount) spent in the first."""
    if not plan.phases:
        return
    backup_usd = sum(c.capex_usd for c in want_r.backup) if want_r is not None else 0.0
    want = recount_phases(scenario, plan, rep.phase_usage, backup_usd)
    if [p.model_dump() for p in plan.phases] == [p.model_dump() for p in want]:
        return
    got = {p.phase: p for p in plan.phases}
    for w in want:
        g = got.get(w.phase)
        if g is None or g.model_dump() != w.model_dump():
            rep.add(f"phases {w.phase}", "claim", "missing" if g is None else _differences(g, w))


def _fabric_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Each designed fabric's figures as the verifier sizes it, with the network racks placed."""
    if plan.fabric is None:
        return
    want_f = all_figures(scenario, plan.racks, chosen(plan))
    row_pod = {r.id: r.pod for b in scenario.site.buildings for h in b.halls for r in h.rows}
    got_f = {f.cluster: f for f in plan.fabric}
    for cid in sorted(set(want_f) | set(got_f)):
        g, z = got_f.get(cid), want_f.get(cid)
        if g is None or z is None:
            what = "missing from the plan" if g is None else "the cluster has no fabric design"
            rep.add(f"fabric {cid}", "claim", what)
            continue
        diff = _differences(g, _fabric_record(cid, z, plan, row_pod), _same)
        if diff:
            rep.add(f"fabric {cid}", "claim", diff)


def _fabric_record(cid: str, z, plan: Plan, row_pod: dict[str, str]) -> ClusterFabric:
    """What a plan should state of one cluster's fabric: the sizing and its network racks per pod."""
    mine = [nr for nr in plan.network_racks if nr.cluster == cid]
    positions: dict[str, int] = {}
    kw: dict[str, float] = {}
    for nr in mine:
        pod = row_pod.get(nr.row, "")
        positions[pod] = positions.get(pod, 0) + 1
        kw[pod] = kw.get(pod, 0.0) + nr.kw
    same = ("design", "endpoints", "switches", "leaves_per_pod", "links", "kw", "capex_usd", "optics")
    more = ("network_racks", "max_endpoints", "max_hops", "endpoints_by_building", "region_links")
    last = ("region_switches", "fibre_km", "latency_us")
    return ClusterFabric(
        cluster=cid,
        racks_placed=len(mine),
        positions_by_pod=dict(sorted(positions.items())),
        kw_by_pod=dict(sorted(kw.items())),
        **{k: getattr(z, k) for k in (*same, *more, *last)},
    )


def _reliability_claims(plan: Plan, want_r, rep: VerifyReport) -> None:
    """The backup choice, each cluster's reliability figures and each element's blast radius."""
    assert plan.reliability is not None
    if not _same([b.model_dump() for b in plan.reliability.backup], [b.model_dump() for b in want_r.backup]):
        what = "the backup-power choice differs from the one the racks and costs give"
        rep.add("reliability backup", "claim", what)
    got_c = {c.cluster: c for c in plan.reliability.clusters}
    for w in want_r.clusters:
        g = got_c.get(w.cluster)
        if g is None or not _same(g.model_dump(), w.model_dump()):
            what = "missing" if g is None else _differences(g, w, _same)
            rep.add(f"reliability cluster {w.cluster}", "claim", what)
    got_b = {(b.kind, b.id): b for b in plan.reliability.blast_radius}
    want_b = {(b.kind, b.id): b for b in want_r.blast_radius}
    for key in sorted(set(got_b) | set(want_b)):
        g, w = got_b.get(key), want_b.get(key)
        if g is not None and w is not None and _same(g.model_dump(), w.model_dump()):
            continue
        what = (
            "takes down nothing"
            if w is None
            else "missing from the plan"
            if g is None
            else _differences(g, w)
        )
        rep.add(f"blast radius {key[0]} {key[1]}", "claim", what)


def _status_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Status, objective value, bound, gap and the kind of optimality claimed."""
    status = plan.status
    if not status.has_plan and plan.racks:
        what = f"status {status.value} says there is no plan, but the plan lists {len(plan.racks)} racks"
        rep.add("status", "claim", what)
    solved = status in (Status.optimal, Status.feasible)
    if solved or (status == Status.not_solved and plan.objective_value is not None):
        _objective_claims(plan, scenario, rep)
    if status != Status.optimal and plan.optimality is not None:
        rep.add("optimality", "claim", f"status {status.value} cannot be '{plan.optimality}' optimal")


def _objective_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """The objective value from the racks; the bound on its right side; the gap from both; optimal
    only within the requested gap, or on the solver's word when it stated no bound."""
    objective = Objective(scenario.objective)
    obj = recount_objective(
        scenario, plan.racks, _bought(plan), chosen(plan), grid_costs(scenario, plan.grid)
    )
    if plan.objective and plan.objective != objective.value:
        what = f"plan optimised {plan.objective}, the scenario asks for {objective.value}"
        rep.add("objective", "claim", what)
    if plan.objective_value is None or not close(plan.objective_value, obj, rel=1e-6, abs_=1e-4):
        rep.add("objective_value", "claim", f"plan says {plan.objective_value}, the racks give {fmt(obj)}")
    _bound_evidence(plan, scenario, rep)
    rel_gap = _judged_gap(plan, scenario, rep)
    claimed = Claimed(plan.status, plan.optimality, plan.bound, plan.gap)
    gap_claims(claimed, obj, objective.maximise, rel_gap, rep)


@dataclass(frozen=True)
class Claimed:
    """What a plan (or a two-stage report) states about its optimality."""

    status: Status
    optimality: str | None
    bound: float | None
    gap: float | None


def gap_claims(
    c: Claimed,
    value: float,
    maximise: bool,
    rel_gap: float,
    rep: VerifyReport,
    prefix: str = "",
    source: str = "racks",
) -> None:
    """The stated bound on the right side of the recomputed objective ``value``, the stated gap
    |bound − value| / max(|value|, 1), optimal only within ``rel_gap`` (+ :data:`GAP_TOL`) or on the
    solver's word when no bound is stated; elements named ``prefix`` + bound, gap, …; ``source``:
    what ``value`` was recomputed from, in words."""
    slack = 1e-6 * max(1.0, abs(value))
    if c.bound is not None and (c.bound < value - slack if maximise else c.bound > value + slack):
        what = f"bound {fmt(c.bound)} is on the wrong side of the objective {fmt(value)}"
        rep.add(f"{prefix}bound", "claim", what)
    gap = abs(c.bound - value) / max(abs(value), 1.0) if c.bound is not None else None
    if (c.gap is None) != (gap is None) or (gap is not None and not close(c.gap, gap, rel=1e-4, abs_=1e-6)):
        what = f"plan says {c.gap}, its bound and {source} give {gap if gap is None else round(gap, 9)}"
        rep.add(f"{prefix}gap", "claim", what)
    if c.status != Status.optimal:
        return  # an optimality claimed without status optimal: the caller's check (_status_claims)
    if c.optimality == "solver_claim":
        if c.bound is not None:
            what = "optimal on the solver's word is claimed only when it stated no bound; this plan has one"
            rep.add(f"{prefix}optimality", "claim", what)
    elif gap is None or gap > rel_gap + GAP_TOL:
        shown = "unknown" if gap is None else f"{gap:.6g}"
        rep.add(f"{prefix}status", "claim", f"optimal needs a gap within {rel_gap:g}; the gap is {shown}")


RECOUNTED = {"capacity": recount_capacity, "demands": recount_demands}
"""Bound sources the verifier re-derives from the scenario (:mod:`planner.verifier.bounds_recount`)."""


def _bound_evidence(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """A bound from a source the verifier can re-derive must be that figure; another source's bound
    stands as that source's claim (its side of the objective is checked above)."""
    if plan.bound is None or plan.bound_source not in RECOUNTED:
        return
    want = RECOUNTED[plan.bound_source](scenario)
    if want is None or not close(plan.bound, want, rel=1e-6, abs_=1e-4):
        what = f"plan says {fmt(plan.bound)} from {plan.bound_source}; the scenario gives " + (
            "no such bound" if want is None else fmt(want)
        )
        rep.add("bound", "evidence", what)


def _order_claims(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """The order book is the one the racks and retrofits give; a plan may leave it out only where
    nothing is ordered ahead (no rack type with a lead time, no retrofit bought)."""
    want = recount_orders(scenario, plan)
    ahead = (
        any(v > 0 for v in scenario.lead_phases.values())
        or bool(plan.retrofits)
        or any(s.lead_phases > 0 for s in scenario.power_arrival)
    )
    if not plan.orders and want and ahead:
        what = (
            "the plan states no order book, yet lead times apply: the racks and retrofits give "
            f"{len(want)} orders"
        )
        rep.add("orders", "claim", what)
    elif plan.orders and [o.model_dump() for o in plan.orders] != [o.model_dump() for o in want]:
        rep.add("orders", "claim", "the order book differs from the one the racks and retrofits give")


def _judged_gap(plan: Plan, scenario: Scenario, rep: VerifyReport) -> float:
    """The gap ``optimal`` is judged against: the plan's solver settings when the run hash covers
    them (the scenario with those settings hashes to it), else the scenario's own."""
    settings = plan.solver_settings
    if settings is None or settings == scenario.solver:
        return scenario.solver.rel_gap
    want = run_hash(scenario.model_copy(update={"solver": settings}))
    if plan.run_hash != want:
        what = (
            f"plan says {plan.run_hash or 'nothing'}, the scenario with the plan's solver settings hashes to "
            f"{want}: the settings are not the ones the plan was made with; judged by the scenario's gap"
        )
        rep.add("run_hash", "claim", what)
        return scenario.solver.rel_gap
    return settings.rel_gap


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
    if g.strict_status.has_plan != (g.strict_gpus is not None):
        what = f"strict_status {g.strict_status.value} " + (
            "has a plan, yet no strict N-1 GPUs are stated"
            if g.strict_status.has_plan
            else "has no plan, yet it states strict N-1 GPUs"
        )
        rep.add("failover.strict_status", "claim", what)
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
