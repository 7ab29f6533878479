"""Why a scenario is infeasible: the elastic relaxation of its capacity limits (package docstring)."""

from __future__ import annotations

from dataclasses import replace

from planner.enums import LimitKind
from planner.explainer.report import Explanation, Finding, _demand_text, _fmt
from planner.input.asks import storage_racks
from planner.model import Limit, Model, build
from planner.rules.fabric_sizing import leaf_down_of, limit_text
from planner.schema import Demand, Scenario
from planner.solving.core import ProgressFn, solve


def _reachable(total: int, sizes: list[int]) -> bool:
    """Whether ``total`` is a sum of the given rack sizes (unbounded counts)."""
    ok = [True] + [False] * total
    for v in range(1, total + 1):
        ok[v] = any(v >= s and ok[v - s] for s in sizes)
    return ok[total]


def unplaceable(m: Model) -> list[Finding]:
    """Clusters whose demand no placement can meet, found before any solve: an exact GPU count
    that no mix of its rack sizes adds up to, or rack types that fit no position."""
    out = []
    with_vars = {key.group for key in m.n}
    types = m.scenario.catalog.by_id()
    for c in m.scenario.clusters:
        usable = m.scenario.gpu_types_for(c)
        sizes = sorted({types[t].gpus for t in usable if types[t].gpus})
        if c.demand == Demand.exact and c.gpus and not _reachable(c.gpus, sizes):
            out.append(
                Finding(
                    "unplaceable",
                    c.id,
                    f"cluster {c.id}: exactly {c.gpus:,} GPUs is no sum of its racks' GPU counts "
                    f"({', '.join(map(str, sizes)) or 'none'})",
                )
            )
            continue
        needs = c.demand in (Demand.exact, Demand.at_least) and (c.gpus or 0) > 0
        if needs and c.id not in with_vars:
            hbm = f" with at least {c.min_hbm_gb_per_gpu:g} GB HBM per GPU" if c.min_hbm_gb_per_gpu else ""
            out.append(
                Finding(
                    "unplaceable",
                    c.id,
                    f"cluster {c.id}: none of its rack types ({', '.join(c.rack_types)}){hbm} fits any "
                    "position "
                    f"(row power, weight or floor limit, liquid loop, or cable reach)",
                )
            )
    return out


COUNTED = ("positions", "racks", "GPUs")
"""Units of counted things: one of them is said in the singular."""


def _amount(x: float, unit: str) -> str:
    """``x`` with its unit: "1 position", "12 positions", "1 kW"."""
    text = _fmt(x)
    return f"{text} {unit[:-1] if text == '1' and unit in COUNTED else unit}"


def _clusters_in(m: Model, lim: Limit, counts: dict) -> list[str]:
    """Clusters with racks counted in a limit's left-hand side in the elastic solution: count
    variables directly, feed-group and node loads through the rows they cover (mapped by keys)."""
    key_of = {v.name: k for k, v in m.n.items()}
    # Per-phase map keys read "name|phase" in phased models: the group or node is the name.
    group_of = {v.name: g.rsplit("|", 1)[0] if m.tl.phased else g for g, v in m.group_kw.items()}
    node_of = {v.name: n.rsplit("|", 1)[0] if m.tl.phased else n for n, v in m.node_kw.items()}
    rows, found = set(), set()
    for var in lim.lhs.keys():
        if var.name in key_of:
            if counts.get(key_of[var.name]):
                found.add(key_of[var.name].group)
        elif var.name in group_of:
            rows |= set(m.pm.groups[group_of[var.name]].rows)
        elif var.name in node_of:
            for g in m.pm.normal.get(node_of[var.name], {}):
                rows |= set(m.pm.groups[g].rows)
    for key, n in counts.items():
        if n and key.cls.row in rows:
            found.add(key.group)
    members = {g.id: [c.id for c in g.members] for g in m.groups.values()}
    found_ids = {c for g in found for c in members.get(g, [g])}
    order = [c.id for c in m.scenario.clusters]
    return sorted(found_ids, key=order.index)


def _what(m: Model, lim: Limit) -> tuple[str, str]:
    """(family words, element) of a limit, for a sentence."""
    kind = lim.kind
    if kind == LimitKind.row_positions:
        return kind.words, f"row {lim.ident.rsplit('@', 1)[0]}"
    if kind == LimitKind.row_redundant:
        rows = ", ".join(m.pm.groups[lim.ident].rows)
        return kind.words, f"rows {rows} (redundant)"
    if kind == LimitKind.cooling_zone:
        return kind.words, f"{lim.ident} ({m.ix.zones[lim.ident].medium.value})"
    if kind == LimitKind.power_arrival:
        return (
            kind.words,
            f"(interconnect + generation) in {lim.key.phase}"
            if lim.key.phase
            else "(interconnect + generation)",
        )
    if kind == LimitKind.supply:
        if lim.ident.startswith("switch:"):
            return kind.words, f"of {lim.ident.removeprefix('switch:')} switches"
        return kind.words, f"of {lim.ident} racks" + (f" by {lim.key.phase}" if lim.key.phase else "")
    return ("pod GPUs" if kind == LimitKind.pod_gpus else kind.words), lim.ident


def _storage_alternative(
    scenario: Scenario, found: list[Finding], time_limit_s: float | None
) -> list[Finding]:
    """When clusters need storage racks: whether everything fits with only their storage short
    (every capacity kept), and by how much write bandwidth, where."""
    if not any(storage_racks(scenario, c) for c in scenario.clusters) or any(
        f.text.startswith("storage") for f in found
    ):
        return []
    m = build(scenario, elastic=True)
    for key, var in m.slack.items():
        if m.limits[key].kind != LimitKind.storage:
            var.upBound = 0
    result = solve(m, None, time_limit_s, tie_breaks=False)
    if result.objective is None:
        return []
    out = []
    for key, var in m.slack.items():
        short = result.values.get(var.name, 0.0)
        if m.limits[key].kind == LimitKind.storage and short > 1e-6:
            gid, sid = key.ident.split("@", 1)
            head = m.groups[gid].head
            st = scenario.catalog.by_id().get(head.storage_rack_type)
            where = (f"pod {sid}" if sid in m.ix.pods else f"building {sid}") if sid else "the site"
            racks = round(short)
            what = (
                f"storage write short by {_fmt(racks * st.storage_write_gb_per_s)} GB/s"
                if st and st.storage_write_gb_per_s
                else "storage short"
            )
            out.append(
                Finding(
                    "conflict",
                    sid or "site",
                    f"or, keeping every capacity: {what} for {head.id} in {where} ({racks} of its "
                    f"{storage_racks(scenario, head)} storage racks do not fit)",
                    short,
                    "racks",
                )
            )
    return out


def explain_infeasible(
    scenario: Scenario, time_limit_s: float | None = None, progress: ProgressFn | None = None
) -> Explanation:
    """Elastic relaxation of the capacity limits (module docstring)."""
    m = build(scenario, elastic=True)
    found = unplaceable(m)
    if found:
        return Explanation(
            scenario.name, False, f"Cannot place {_demand_text(scenario)}:", found, "checked before solving"
        )
    result = solve(m, progress, time_limit_s, tie_breaks=False)
    if result.objective is None:
        text = (
            "no assignment meets the demands even with every capacity relaxed: check hop budgets "
            "(max_hops) against pod and building sizes"
        )
        return Explanation(
            scenario.name,
            False,
            f"Cannot place {_demand_text(scenario)}:",
            [Finding("conflict", "scope", text)],
            "elastic relaxation",
        )
    worst: dict[tuple[str, str], tuple[float, str, Limit]] = {}
    findings: list[Finding] = []
    for key, lim in m.limits.items():
        s = m.slack.get(key)
        short = result.values.get(s.name) if s is not None else None
        if short is None or short <= 1e-6:
            continue
        special = _SPECIAL.get(lim.kind)
        if special is not None:
            findings.append(special(m, lim, short))
            continue
        family, element = _what(m, lim)
        k = (family, element)
        if lim.kind == LimitKind.row_positions and k in worst:  # a row's cable-length bands add up
            prev = worst[k]
            merged = replace(lim, limit=prev[2].limit + lim.limit, lhs=prev[2].lhs + lim.lhs)
            worst[k] = (prev[0] + short, "", merged)
        elif k not in worst or short > worst[k][0]:
            worst[k] = (short, lim.failed, lim)
    for (family, element), (short, when, lim) in sorted(
        worst.items(), key=lambda kv: -kv[1][0] / max(kv[1][2].limit, 1.0)
    ):
        findings.append(_capacity_finding(m, family, element, short, when, lim, result.counts))
    findings += _storage_alternative(scenario, findings, time_limit_s)
    return Explanation(
        scenario.name,
        False,
        f"Cannot place {_demand_text(scenario)}; the smallest relaxation (relative) that makes it fit:",
        findings,
        "elastic relaxation: every capacity limit given a slack, demands kept, Σ slack / limit minimised",
    )


def _storage_finding(m: Model, lim: Limit, short: float) -> Finding:
    """Storage racks short for a cluster in a scope: the write bandwidth it leaves out."""
    gid, sid = lim.ident.split("@", 1)
    head = m.groups[gid].head
    st = m.scenario.catalog.by_id().get(head.storage_rack_type)
    where = (f"pod {sid}" if sid in m.ix.pods else f"building {sid}") if sid else "the site"
    racks = round(short)
    gbps = (
        f"storage write short by {_fmt(racks * st.storage_write_gb_per_s)} GB/s"
        if st and st.storage_write_gb_per_s
        else "storage short"
    )
    what = (
        f"{gbps} for {head.id} in {where} ({racks} of its {storage_racks(m.scenario, head)} storage racks "
        "do not fit)"
    )
    return Finding("conflict", sid or "site", what, short, "racks")


def _fabric_finding(m: Model, lim: Limit, short: float) -> Finding:
    """A cluster larger than its fabric design's largest build."""
    cid, did = lim.ident.split("@", 1)
    design = next(d for d in m.scenario.fabrics if d.id == did)
    cluster = next(c for c in m.scenario.clusters if c.id == cid)
    types = m.scenario.catalog.by_id()
    downs = [leaf_down_of(design, types[t]) for t in m.scenario.gpu_types_for(cluster) if types[t].gpus]
    text = limit_text(
        design, m.scenario.catalog.switch_by_id(), max(downs) if downs and design.leaf_in_rack else None
    )
    return Finding("conflict", did, f"{text}; {cid} needs {_fmt(lim.limit + short)}", short, "endpoints")


def _spread_finding(m: Model, lim: Limit, short: float) -> Finding:
    """A cluster that needs more GPUs behind one failure domain than its spread limit allows."""
    cluster, element = lim.ident.split("@", 1)
    kind = lim.family.removeprefix("spread_")
    what = f"spread {element}: {cluster} needs {_fmt(short)} GPUs more there than max_share_per_{kind} allows"
    return Finding("conflict", element, what, short, "GPUs")


def _swing_finding(m: Model, lim: Limit, short: float) -> Finding:
    """A job's training swing beyond what the power sources accept in a phase (§21), in MW to 3 places."""
    when = f" in {lim.key.phase}" if lim.key.phase else ""
    accepted = lim.limit + lim.fixed
    what = (
        f"training swing of {lim.ident}{when}: {short:,.3f} MW more than the power sources accept "
        f"({accepted:,.3f} MW; it swings {accepted + short:,.3f} MW after storage and floors)"
    )
    return Finding("conflict", lim.ident, what, short, "MW")


_SPECIAL = {
    LimitKind.swing: _swing_finding,
    LimitKind.storage: _storage_finding,
    LimitKind.fabric: _fabric_finding,
    LimitKind.spread: _spread_finding,
}
"""Limit kinds whose shortfall is told in their own words (the rest: :func:`_capacity_finding`)."""


def _capacity_finding(
    m: Model, family: str, element: str, short: float, when: str, lim: Limit, counts
) -> Finding:
    """A capacity limit short by an amount, in its unit, with the failure it is worst in and the
    clusters that load it."""
    who = _clusters_in(m, lim, counts)
    whom = f" for {', '.join(who)}" if who else ""
    case = f" when {when} fails" if when else ""
    shown = lim.limit + lim.fixed
    fixed = f" of which {_amount(lim.fixed, lim.unit)} is taken by network racks" if lim.fixed > 1e-9 else ""
    what = (
        f"{family} {element}: short by {_amount(short, lim.unit)}{case}{whom} "
        f"(limit {_amount(shown, lim.unit)}{fixed}, needs {_amount(shown + short, lim.unit)})"
    )
    return Finding("conflict", element, what, short, lim.unit)
