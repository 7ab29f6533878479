"""Commands that read a plan: ``planner verify``, ``export``, ``blast-radius``, ``compare`` and ``diff``
(:mod:`planner.cli` registers them)."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
"""Exit codes of the ``planner`` command (the rest: :mod:`planner.cli`)."""


def scenario_of(args: argparse.Namespace):
    """The scenario a command names (``args.scenario``, within ``--data-root`` if given)."""
    from planner.input.loader import load_scenario

    return load_scenario(args.scenario, getattr(args, "data_root", None))


def print_table(rows: list[tuple[str, ...]], out=None) -> None:
    """Rows as aligned columns (the first row a header)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out or sys.stdout)


def different_questions(names: list[str], plans: list) -> str | None:
    """One line when plans answer different scenarios (name or hash differ), else none: said before
    any difference is listed, since their racks and KPIs then differ for that reason first."""
    keys = {(p.scenario_name, p.scenario_hash) for p in plans}
    if len(keys) <= 1:
        return None
    return "note: these plans answer different scenarios: " + "; ".join(
        f"{n}: '{p.scenario_name}' (hash {p.scenario_hash or 'none'})"
        for n, p in zip(names, plans, strict=True)
    )


def cmd_compare(args: argparse.Namespace) -> int:
    """Plans side by side: KPIs, costs, tightest limits (with two plans, a B − A column)."""
    from planner.plan import load_plan
    from planner.plan.kpis import CAPEX_PARTS

    plans = [load_plan(p) for p in args.plans]
    names = [Path(p).name for p in args.plans]
    if (line := different_questions(names, plans)) is not None:
        print(line)
    two = len(plans) == 2
    rows = [
        ("", *names, *(["B - A"] if two else [])),
        ("scenario", *(p.scenario_name for p in plans), *([""] if two else [])),
        ("status", *(p.status.value for p in plans), *([""] if two else [])),
    ]
    fields = [
        "gpus",
        "racks",
        "it_kw",
        "pflops_bf16",
        "gpus_per_mw",
        "capex_usd",
        *(f for _, f in CAPEX_PARTS),
        "opex_usd_per_year",
        "tco_usd",
        "usd_per_gpu_hour",
        "usd_per_useful_gpu_hour",
        "stranded_kw",
    ]
    for f in fields:
        fmt = "{:,.3f}" if f.startswith("usd_per") else "{:,.0f}"
        cells = ["-" if p.kpis is None else fmt.format(getattr(p.kpis, f)) for p in plans]
        if two:
            a, b = plans
            cells.append(
                "-"
                if a.kpis is None or b.kpis is None
                else ("+" if getattr(b.kpis, f) - getattr(a.kpis, f) >= 0 else "")
                + fmt.format(getattr(b.kpis, f) - getattr(a.kpis, f))
            )
        rows.append((f, *cells))
    for i in range(3):
        cells = []
        for p in plans:
            tight = sorted((u for u in p.utilisation or [] if u.limit > 0), key=lambda u: -u.worst_share)
            cells.append(f"{tight[i].id} {tight[i].worst_share:.0%}" if len(tight) > i else "-")
        rows.append((f"tightest {i + 1}", *cells, *([""] if two else [])))
    print_table(rows)
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    """Racks added, removed and moved between two plans, and their KPI and cost deltas."""
    from planner.plan import load_plan

    a, b = load_plan(args.plan_a), load_plan(args.plan_b)
    if (line := different_questions([args.plan_a, args.plan_b], [a, b])) is not None:
        print(line)

    same, new, gone, moved = rack_changes(a.racks, b.racks)
    print(
        f"{args.plan_a} -> {args.plan_b}: {len(same)} racks in place, {len(new)} added, {len(gone)} "
        f"removed, {len(moved)} moved"
    )
    for r in new[: args.limit]:
        print(f"  + {r.row}/{r.position} {r.rack_type} ({r.cluster}){' in ' + r.phase if r.phase else ''}")
    for r in gone[: args.limit]:
        print(f"  - {r.row}/{r.position} {r.rack_type} ({r.cluster})")
    for old, r in moved[: args.limit]:
        print(f"  > {old.row}/{old.position} -> {r.row}/{r.position} {r.rack_type} ({r.cluster})")
    if a.kpis is not None and b.kpis is not None:
        rows = [("KPI", "A", "B", "B - A")]
        for f in (
            "gpus",
            "racks",
            "it_kw",
            "pflops_bf16",
            "capex_usd",
            "opex_usd_per_year",
            "tco_usd",
            "usd_per_gpu_hour",
        ):
            x, y = getattr(a.kpis, f), getattr(b.kpis, f)
            fmt = "{:,.3f}" if f == "usd_per_gpu_hour" else "{:,.0f}"
            rows.append((f, fmt.format(x), fmt.format(y), ("+" if y - x >= 0 else "") + fmt.format(y - x)))
        print_table(rows)
    return EXIT_OK


def rack_changes(racks_a: list, racks_b: list) -> tuple[set, list, list, list]:
    """(positions whose rack is the same type and cluster in both, racks only in B, racks only in
    A, (A rack, B rack) pairs of the same type and cluster that moved)."""

    def key(r):
        return (r.rack_type, r.cluster)

    pos_a = {(r.row, r.position): r for r in racks_a}
    pos_b = {(r.row, r.position): r for r in racks_b}
    same = {p for p in pos_a if p in pos_b and key(pos_a[p]) == key(pos_b[p])}
    gone = [pos_a[p] for p in pos_a if p not in same]
    new = [pos_b[p] for p in pos_b if p not in same]
    moved = []
    pool: dict[tuple, list] = defaultdict(list)
    for r in gone:
        pool[key(r)].append(r)
    for r in list(new):
        if pool.get(key(r)):
            old = pool[key(r)].pop(0)
            moved.append((old, r))
            new.remove(r)
            gone.remove(old)
    return same, new, gone, moved


def cmd_export(args: argparse.Namespace) -> int:
    """Write a verified plan's placement as CSV, XLSX or a NetBox bundle."""
    from planner.dcim.exports import export_plan
    from planner.fileio import check_writable
    from planner.plan import load_plan

    if args.format != "netbox":
        check_writable(args.output)
    scenario = scenario_of(args)
    plan = load_plan(args.plan)
    n = export_plan(plan, scenario, args.format, args.output, args.prefix, args.site_level, not args.no_whips)
    print(f"wrote {args.output}: {n:,} racks ({args.format})")
    return EXIT_OK


def cmd_blast_radius(args: argparse.Namespace) -> int:
    """What each element's failure takes down, per cluster; and each cluster's MTBF and goodput."""
    from planner.plan import load_plan
    from planner.rules.reliability import blast_radius, cluster_gpus, reliability_report
    from planner.verifier import verify

    scenario = scenario_of(args)
    plan = load_plan(args.plan)
    rep = verify(plan.model_copy(update={"reliability": None}), scenario)
    if not rep.ok:
        print(
            f"{args.plan}: not a valid plan for scenario '{scenario.name}' ({len(rep.violations)} "
            "violations; run planner verify)"
        )
        return EXIT_FAILED
    totals = cluster_gpus(scenario, plan.racks)
    blasts = blast_radius(scenario, plan.racks, network=plan.network_racks)
    rows = [b for b in blasts if args.kind in (None, b.kind)]
    shown = (
        rows
        if args.all
        else [b for b in rows if b.lost or b.capped or b.shed or b.n1_holds is False][: args.top]
    )
    print(
        f"{'element':34s} {'GPUs lost':>10s}  {'N-1':5s}  per cluster (lost / capped / shed, share of the "
        "cluster)"
    )
    for b in shown:
        parts = []
        for c in sorted(set(b.lost) | set(b.capped) | set(b.shed)):
            figs = "/".join(f"{d.get(c, 0):,}" for d in (b.lost, b.capped, b.shed))
            share = (b.lost.get(c, 0) + b.shed.get(c, 0)) / totals[c] if totals.get(c) else 0.0
            parts.append(f"{c} {figs} ({share:.1%})")
        n1 = "-" if b.n1_holds is None else "holds" if b.n1_holds else "FAILS"
        print(f"{b.kind + ' ' + b.id:34s} {b.gpus_lost:>10,}  {n1:5s}  {'; '.join(parts) or '-'}")
    hidden = len(rows) - len(shown)
    if hidden:
        print(f"({hidden:,} more elements; --all lists every one)")
    print()
    print(
        f"{'cluster':20s} {'GPUs':>9s} {'MTBF h':>8s} {'int./day':>9s} {'storage':>8s} {'GB/s':>8s} "
        f"{'ckpt s':>8s} {'interval h':>10s} {'goodput':>8s}"
    )
    tco = (
        plan.kpis.tco_usd - plan.kpis.capex_backup_usd if plan.kpis else None
    )  # the backup choice is priced on the TCO before it
    for c in reliability_report(
        scenario, plan.racks, blasts=blasts, network=plan.network_racks, tco_usd=tco
    ).clusters:

        def f(x, fmt):
            return "-" if x is None else fmt.format(x)

        print(
            f"{c.cluster:20s} {c.gpus:>9,} {f(c.mtbf_h, '{:.2f}'):>8s} {c.interruptions_per_day:>9.2f} "
            f"{c.storage_racks:>8d} {c.write_gb_per_s:>8,.0f} "
            f"{f(c.checkpoint_s, '{:.1f}'):>8s} {f(c.interval_h, '{:.2f}'):>10s} {f(c.goodput, '{:.4f}'):>8s}"
        )
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a plan against a scenario, independently of the solver."""
    from planner.plan import load_plan
    from planner.plan.numbers import plan_figures
    from planner.verifier import verify

    scenario = scenario_of(args)
    plan = load_plan(args.plan)
    rep = verify(plan, scenario)
    certified = certificate_checks(plan, Path(args.plan), rep)
    if not plan.status.has_plan and not plan.racks:  # a file that states no plan: its claims only
        rep.violations = [v for v in rep.violations if v.check != "demand"]
        if rep.ok:
            print(
                f"{args.plan}: states no plan ({plan.status.value}) for scenario '{scenario.name}': nothing "
                "placed to check; its other figures hold"
            )
            return EXIT_OK
    if rep.ok:
        print(
            f"{args.plan}: plan is valid for scenario '{scenario.name}' ({len(plan.racks)} racks, every "
            "constraint holds)"
        )
        st = plan.stochastic
        shown = scenario.in_future(st.shown_future) if st is not None else scenario
        k = plan_figures(plan.model_copy(update={"stochastic": None}), shown)[0].kpis
        if st is not None:
            print(
                f"  two-stage: {len(st.futures)} futures' plans verified, first phase {st.first_phase} "
                f"shared; shown: future {st.shown_future}; "
                f"recomputed expected objective {st.expected_objective:,.1f}, EVPI "
                f"{'-' if st.evpi is None else format(st.evpi, ',.1f')}, "
                f"VSS {'-' if st.vss is None else format(st.vss, ',.1f')}"
            )
        print(
            f"  recomputed: {k.gpus:,} GPUs, {k.it_kw / 1000:,.3f} IT MW, capex ${k.capex_usd:,.0f}, "
            f"stranded {k.stranded_kw:,.1f} kW"
        )
        if certified:
            print(f"  {certified}")
        for u in sorted((u for u in rep.usage if u.limit > 0), key=lambda u: -u.worst_share)[:3]:
            when = (
                f" when {u.worst_failure} fails" if u.worst_failure and (u.worst_value or 0) > u.value else ""
            )
            print(f"  tightest: {u.kind} {u.id} at {u.worst_share:.1%} of {u.limit:,.1f} {u.unit}{when}")
        return EXIT_OK
    if rep.violations[0].check == "scenario":
        print(f"{args.plan}: {rep.violations[0].message}")
        return EXIT_FAILED
    print(f"{args.plan}: {len(rep.violations)} violation(s) of scenario '{scenario.name}':")
    for v in rep.violations:
        print(f"  - [{v.check}] {v}")
    return EXIT_FAILED


def stochastic_rows(st) -> list[tuple[str, str]]:
    """The two-stage figures: expected objective and TCO, EVPI, VSS, and per future its GPUs, TCO
    and regret."""

    def num(x, fmt=",.1f"):
        return "-" if x is None else format(x, fmt)

    claim = " (the solver's claim: it stated no bound)" if st.optimality == "solver_claim" else ""
    rows = [
        (
            "two-stage plan",
            f"{st.status.value}{claim}, gap {'-' if st.gap is None else format(st.gap, '.3%')}; first "
            f"phase {st.first_phase} shared",
        ),
        ("expected objective", num(st.expected_objective)),
        ("expected TCO USD", num(st.expected_tco_usd, ",.0f")),
        ("perfect information (expected)", num(st.perfect_expected)),
        ("EVPI", num(st.evpi)),
        (
            "mean-demand plan (expected)",
            num(st.mean_expected) if st.mean_expected is not None else "fails a future",
        ),
        ("VSS", num(st.vss)),
    ]
    for o in st.futures:
        rows.append(
            (
                f"future {o.id} (p={o.probability:g})",
                f"{o.gpus:,} GPUs, objective {num(o.objective_value)}, TCO {num(o.tco_usd, ',.0f')}, "
                f"regret {num(o.regret)}, "
                f"stranded {o.stranded_kw:,.0f} kW (mean-demand plan: {num(o.mean_objective)}, stranded "
                f"{num(o.mean_stranded_kw, ',.0f')} kW)",
            )
        )
    return rows


def stage_shares(stages: dict[str, float]) -> str:
    """Stage times with their share of the whole: ``build 8.0 s (7%) · solve 95.1 s (85%)``."""
    total = sum(v for k, v in stages.items() if not k.startswith("whole_")) or 1.0
    return " · ".join(
        f"{k.replace('_', ' ')} {v:,.1f} s ({v / total:.0%})"
        for k, v in stages.items()
        if not k.startswith("whole_")
    )


def plan_summary(plan, out=None) -> None:
    """The summary table `planner plan` prints: headline KPIs, capex by part, status, phases,
    retrofits, orders placed ahead, the tightest limits, and a two-stage plan's figures."""
    from planner.plan.kpis import capex_parts

    k = plan.kpis
    tight = (
        sorted((u for u in plan.utilisation if u.limit > 0), key=lambda u: -u.worst_share)[:4]
        if plan.racks
        else []
    )
    rows = [
        ("GPUs", f"{k.gpus:,}"),
        ("racks", f"{k.racks:,}"),
        ("IT MW", f"{k.it_kw / 1000:,.3f}"),
        ("PFLOPS (BF16 dense)", f"{k.pflops_bf16:,.1f}"),
        ("capex USD", f"{k.capex_usd:,.0f}"),
        *((f"  capex {name} USD", f"{usd:,.0f}") for name, usd in capex_parts(k).items()),
        ("opex USD/year", f"{k.opex_usd_per_year:,.0f}"),
        ("TCO USD", f"{k.tco_usd:,.0f}"),
        ("USD per GPU-hour (levelized)", f"{k.usd_per_gpu_hour:,.3f}"),
        ("USD per useful GPU-hour", f"{k.usd_per_useful_gpu_hour:,.3f}"),
        *(
            (
                ("retired racks (service life ended)", f"{k.retired_racks:,}"),
                ("removal USD", f"{k.removal_usd:,.0f}"),
                ("residual value at the horizon USD", f"{k.residual_value_usd:,.0f}"),
                ("depreciation USD/year (standing at the end)", f"{k.depreciation_usd_per_year:,.0f}"),
            )
            if k.retired_racks or k.residual_value_usd
            else ()
        ),
        (
            "status",
            plan.status.value
            + (" (the solver's claim: it stated no bound)" if plan.optimality == "solver_claim" else ""),
        ),
        ("gap", "-" if plan.gap is None else f"{plan.gap:.3%}"),
        ("bound", bound_text(plan)),
        ("build / solve s", f"{plan.build_time_s:.2f} / {plan.solve_time_s:.2f}"),
    ]
    if plan.stage_times_s:
        rows.append(("time by stage", stage_shares(plan.stage_times_s)))
    if plan.phases:
        rows.insert(0, ("mode", plan.mode))
        rows += [
            (
                f"phase {p.phase} ({p.start})",
                f"{p.gpus:,} GPUs, +{p.new_racks} racks, {p.it_kw / 1000:,.3f} MW, capex {p.capex_usd:,.0f}",
            )
            for p in plan.phases
        ]
    rows += _grid_rows(plan)
    rows += [(f"retrofit {b.id}", f"bought in {b.phase}") for b in plan.retrofits]
    rows += [
        (f"order in {o.ordered}", f"{o.count:,} {o.id} racks to stand in {o.stands}")
        for o in plan.orders
        if o.item == "rack" and o.ordered != o.stands
    ]  # racks with a lead time (the rest are ordered as placed)
    rows += [
        (
            f"tightest: {u.kind} {u.id}",
            f"{u.worst_share:.1%}"
            + (
                f" (when {u.worst_failure} fails)"
                if u.worst_failure and (u.worst_value or 0) > u.value
                else ""
            ),
        )
        for u in tight
    ]
    print_table(rows, out or sys.stdout)
    if plan.stochastic is not None:
        print_table(stochastic_rows(plan.stochastic), out or sys.stdout)


BOUND_WORDS = {
    "solver": "the solver's own bound (its claim)",
    "capacity": "power, positions and demands (re-derived by the verifier)",
    "demands": "the sum of the demands (re-derived by the verifier)",
    "merged relaxation": "the merged relaxation (an LP the planner solved)",
    "LP relaxation": "the LP relaxation of the whole (an LP the planner solved)",
    "packing relaxation": "the packing relaxation (a MILP of jobs per building the planner solved)",
}
"""A plan's bound source in words, with who vouches for it."""


def _grid_rows(plan) -> list[tuple[str, str]]:
    """§21 per phase: the largest swing against what is accepted, storage and floors, emissions, water."""
    g = plan.grid
    if g is None:
        return []
    rows = []
    for p in g.phases:
        acc = "unlimited" if p.accepted_mw >= 1e11 else f"{p.accepted_mw:,.1f}"
        rows.append(
            (
                f"grid {p.phase or 'plan'}",
                f"swing {p.swing_mw:,.1f} MW ({p.swing_cluster or '-'}) of {acc} accepted; storage "
                f"{sum(p.storage_mw.values()):,.1f} + floor {sum(p.floor_mw.values()):,.1f} MW; "
                f"{p.t_co2_per_year:,.0f} t CO2/yr; water {p.water_m3_per_year:,.0f} m³/yr, peak "
                f"{p.peak_water_l_per_s:,.1f} L/s",
            )
        )
    rows.append(
        (
            "grid over the horizon",
            f"storage capex {g.storage_capex_usd:,.0f} USD; TCO {g.tco_usd:,.0f} USD; {g.t_co2:,.0f} t CO2; "
            f"{g.water_m3:,.0f} m³ of water",
        )
    )
    return rows


def bound_text(plan) -> str:
    """The bound and where it comes from ("-" without one)."""
    if plan.bound is None:
        return "-"
    return f"{plan.bound:,.6g} from " + BOUND_WORDS.get(
        plan.bound_source, plan.bound_source or "an unnamed source"
    )


def certificate_checks(plan, plan_path: Path, rep) -> str:
    """Check the plan's bound certificate (:mod:`planner.verifier.certificate`) when it names one:
    a plain file name beside the plan, its duals proving the certified bound the plan states, on the
    right side of the objective. Violations go into ``rep``; returns a line for a certificate that
    holds ("" without one)."""
    import json

    from planner.verifier import check_certificate

    name = plan.bound_certificate
    if not name:
        if plan.certified_bound is not None:
            rep.add(
                "certified_bound", "evidence", "a certified bound without the certificate it is proven by"
            )
        return ""
    path = plan_path.parent / name
    if Path(name).name != name or not path.is_file() or path.is_symlink():
        rep.add("bound_certificate", "evidence", f"'{name}' is not a regular file beside the plan")
        return ""
    try:
        cert = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        rep.add("bound_certificate", "evidence", f"{name}: not readable JSON ({str(e)[:80]})")
        return ""
    bound, problems = check_certificate(cert) if isinstance(cert, dict) else (None, ["not a certificate"])
    for p in problems[:5]:
        rep.add("bound_certificate", "evidence", f"{name}: {p}")
    if bound is None:
        return ""
    value, stated = plan.objective_value, plan.certified_bound
    if stated is None or abs(stated - bound) > 1e-6 * max(1.0, abs(bound)):
        rep.add("certified_bound", "evidence", f"plan says {stated}, its certificate proves {bound:,.6f}")
        return ""
    maximise = plan.objective.startswith("max_")
    if value is not None and (
        bound < value - 1e-6 * max(1.0, abs(value))
        if maximise
        else bound > value + 1e-6 * max(1.0, abs(value))
    ):
        rep.add(
            "certified_bound",
            "evidence",
            f"certified bound {bound:,.6g} is beyond the plan's objective {value:,.6g}",
        )
        return ""
    gap = abs(bound - value) / max(abs(value), 1.0) if value is not None else None
    shown = "" if gap is None else f", gap {gap:.3%} to it"
    rows = len(cert.get("duals", {}))
    return f"certified bound {bound:,.6g}: proven by the LP duals in {name} ({rows:,} rows){shown}"
