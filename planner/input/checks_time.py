"""Cross-reference checks of time (§8, §17): phases in order, and everything named per phase or
across phases (online phases, demand per phase, power arrival, lead times, rack and switch supply,
service lives, demand futures). Each check returns problems like :mod:`planner.input.checks`'s."""

from __future__ import annotations

from planner.errors import Problem, known
from planner.schema import Scenario


def check_phases(scenario: Scenario) -> list[Problem]:
    """Phase IDs unique and in date order; every online_phase, gpus_by_phase key, power_arrival and
    supply phase names a phase (and a scenario without phases gives them no phase); supply names
    catalog rack types."""
    out = []
    ids = [p.id for p in scenario.phases]
    out += duplicate_ids("phases", "phase", ids)
    seen = set(ids)
    for i, p in enumerate(scenario.phases):
        if i and p.start < scenario.phases[i - 1].start:
            out.append(
                Problem(
                    f"phases[{i}].start",
                    f"{p.start.isoformat()} is before phase '{scenario.phases[i - 1].id}' "
                    f"({scenario.phases[i - 1].start.isoformat()}); list phases in time order",
                )
            )

    def bad(path: str, value) -> None:
        if value is not None and value not in seen:
            out.append(Problem(path, f"unknown phase '{value}' {known(ids)}"))

    for bi, b in enumerate(scenario.site.buildings):
        for ni, n in enumerate(b.power_nodes):
            bad(f"site.buildings[{bi}].power_nodes[{ni}].online_phase", n.online_phase)
        for hi, h in enumerate(b.halls):
            hp = f"site.buildings[{bi}].halls[{hi}]"
            bad(f"{hp}.online_phase", h.online_phase)
            for ni, n in enumerate(h.power_nodes):
                bad(f"{hp}.power_nodes[{ni}].online_phase", n.online_phase)
            for zi, z in enumerate(h.cooling_zones):
                bad(f"{hp}.cooling_zones[{zi}].online_phase", z.online_phase)
            for ri, r in enumerate(h.rows):
                bad(f"{hp}.rows[{ri}].online_phase", r.online_phase)
    for si, step in enumerate(scenario.power_arrival):
        if step.phase is not None:
            if not scenario.phases:
                out.append(
                    Problem(
                        f"power_arrival[{si}].phase",
                        "the scenario has no phases; leave phase out (power available from the start)",
                    )
                )
            else:
                bad(f"power_arrival[{si}].phase", step.phase)
    types = scenario.catalog.by_id()
    for t, lead in scenario.lead_phases.items():
        if t not in types:
            out.append(Problem(f"lead_phases.{t}", f"unknown rack type '{t}' {known(types)}"))
        elif not scenario.phases:
            out.append(
                Problem(
                    f"lead_phases.{t}", "the scenario has no phases; a lead time needs phases to order in"
                )
            )
        elif lead < 0 or lead >= len(scenario.phases):
            out.append(
                Problem(
                    f"lead_phases.{t}",
                    f"{lead} is outside 0..{len(scenario.phases) - 1} (the phases after the first)",
                )
            )
    switches = scenario.catalog.switch_by_id()
    for si, x in enumerate(scenario.switch_supply):
        if x.switch not in switches:
            out.append(
                Problem(f"switch_supply[{si}].switch", f"unknown switch model '{x.switch}' {known(switches)}")
            )
    for t in scenario.service_life:
        if t not in types:
            out.append(Problem(f"service_life.{t}", f"unknown rack type '{t}' {known(types)}"))
        elif not scenario.phases:
            out.append(
                Problem(
                    f"service_life.{t}",
                    "the scenario has no phases; a service life needs phases to retire racks in",
                )
            )
    for t in scenario.service_life:
        if t in types and not types[t].gpus:
            out.append(
                Problem(
                    f"service_life.{t}", "service lives are planned for GPU rack types (storage racks stay)"
                )
            )
    for ci, c in enumerate(scenario.clusters):
        lived = [t for t in c.rack_types if t in scenario.service_life]
        if lived and (
            c.spare_availability is not None
            or (c.max_share_per_power_node, c.max_share_per_cooling_zone, c.max_share_per_pod)
            != (None, None, None)
        ):
            out.append(
                Problem(
                    f"clusters[{ci}]",
                    "hot spares and failure-domain spread are not planned yet for rack types with a "
                    f"service life ({', '.join(lived)})",
                )
            )
    wide = sorted({t for c in scenario.clusters for t in c.rack_types if t in types and types[t].width > 1})
    if scenario.service_life and wide:
        out.append(
            Problem(
                "service_life",
                "service lives are planned for one-position rack types only; the clusters use multi-rack "
                f"units ({', '.join(wide)})",
            )
        )
    for si, x in enumerate(scenario.supply):
        if x.rack_type not in types:
            out.append(
                Problem(f"supply[{si}].rack_type", f"unknown rack type '{x.rack_type}' {known(types)}")
            )
        if x.phase is not None:
            if not scenario.phases:
                out.append(
                    Problem(
                        f"supply[{si}].phase",
                        "the scenario has no phases; leave phase out (delivered from the start)",
                    )
                )
            else:
                bad(f"supply[{si}].phase", x.phase)
    for ci, c in enumerate(scenario.clusters):
        for k in c.gpus_by_phase or {}:
            bad(f"clusters[{ci}].gpus_by_phase.{k}", k)
        if c.gpus_by_phase is not None and not scenario.phases:
            out.append(
                Problem(f"clusters[{ci}].gpus_by_phase", "the scenario has no phases; give gpus instead")
            )
    return out


def check_futures(scenario: Scenario) -> list[Problem]:
    """Demand futures (§17): unique IDs, probabilities summing to 1, at least two phases, known
    clusters and phases, and one demand in the first phase in every future (it is decided before
    the future is known)."""
    if not scenario.futures:
        return []
    out = []
    if len(scenario.phases) < 2:
        out.append(
            Problem(
                "futures",
                "futures need at least two phases (the first is shared, later ones adapt); the scenario "
                f"has {len(scenario.phases)}",
            )
        )
    total = sum(f.probability for f in scenario.futures)
    if abs(total - 1.0) > 1e-6:
        out.append(Problem("futures", f"the probabilities sum to {total:.6g}; they must sum to 1"))
    clusters = {c.id: c for c in scenario.clusters}
    phases = [p.id for p in scenario.phases]
    out += duplicate_ids("futures", "future", [f.id for f in scenario.futures])
    for fi, f in enumerate(scenario.futures):
        for c, by_phase in f.gpus_by_phase.items():
            if c not in clusters:
                out.append(
                    Problem(f"futures[{fi}].gpus_by_phase.{c}", f"unknown cluster '{c}' {known(clusters)}")
                )
            for ph in by_phase:
                if ph not in phases:
                    out.append(
                        Problem(
                            f"futures[{fi}].gpus_by_phase.{c}.{ph}", f"unknown phase '{ph}' {known(phases)}"
                        )
                    )
    if out or not phases:
        return out
    for c in clusters.values():
        first = {
            f.id: _first_demand(f.gpus_by_phase.get(c.id, c.gpus_by_phase), c.gpus, phases[0])
            for f in scenario.futures
        }
        if len(set(first.values())) > 1:
            out.append(
                Problem(
                    "futures",
                    f"cluster '{c.id}' wants different GPUs in the first phase '{phases[0]}' across futures ("
                    + ", ".join(f"{k}: {v}" for k, v in first.items())
                    + "); the first phase is decided before the future is known, so futures must agree on it",
                )
            )
    return out


def _first_demand(by_phase: dict | None, gpus: int | None, first: str) -> int | None:
    """GPUs wanted in the first phase: the first phase's entry, none before the first named phase."""
    if by_phase is None:
        return gpus
    return by_phase.get(first, 0)


def duplicate_ids(path: str, what: str, ids: list[str]) -> list[Problem]:
    """A problem at ``path[i].id`` for every ID already used by an earlier item."""
    seen: set[str] = set()
    out = []
    for i, x in enumerate(ids):
        if x in seen:
            out.append(Problem(f"{path}[{i}].id", f"duplicate {what} ID '{x}'"))
        seen.add(x)
    return out
