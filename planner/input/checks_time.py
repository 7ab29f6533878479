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
    ids = [p.id for p in scenario.phases]
    out = duplicate_ids("phases", "phase", ids) + _phase_order(scenario)

    def bad(path: str, value) -> None:
        if value is not None and value not in set(ids):
            out.append(Problem(path, f"unknown phase '{value}' {known(ids)}"))

    _online_phases(scenario, bad)
    for si, step in enumerate(scenario.power_arrival):
        _phase_or_none(
            scenario, f"power_arrival[{si}].phase", step.phase, "power available from the start", bad, out
        )
        if step.lead_phases and not ids:
            what = f"{step.lead_phases} given, but the scenario has no phases to order in; leave it out"
            out.append(Problem(f"power_arrival[{si}].lead_phases", what))
    out += _lead_times(scenario)
    switches = scenario.catalog.switch_by_id()
    for si, x in enumerate(scenario.switch_supply):
        if x.switch not in switches:
            what = f"unknown switch model '{x.switch}' {known(switches)}"
            out.append(Problem(f"switch_supply[{si}].switch", what))
    out += _service_lives(scenario)
    _supply_and_demand_phases(scenario, bad, out)
    if scenario.design_day_pue is not None and scenario.design_day_pue < scenario.pue:
        what = (
            f"{scenario.design_day_pue:g} is below the annual pue {scenario.pue:g}: the design day is the "
            "hottest of the year, its PUE at least the annual"
        )
        out.append(Problem("design_day_pue", what))
    out += _structure_pues(scenario)
    return out


def _structure_pues(scenario: Scenario) -> list[Problem]:
    """A structure's design-day PUE is at least its annual one (its own, else the scenario's)."""
    out = []
    for i, r in enumerate(scenario.retrofits):
        e = r.effect
        if e.kind != "build_structure" or e.design_day_pue is None:
            continue
        annual, whose = (
            (e.pue, "its annual pue") if e.pue is not None else (scenario.pue, "the scenario's pue")
        )
        if e.design_day_pue < annual:
            what = (
                f"{e.design_day_pue:g} is below {whose} {annual:g}: the design day is the hottest of the "
                "year, its PUE at least the annual"
            )
            out.append(Problem(f"retrofits[{i}].effect.design_day_pue", what))
    return out


def _phase_order(scenario: Scenario) -> list[Problem]:
    """Phases listed in time order."""
    out = []
    for i, p in enumerate(scenario.phases):
        if i and p.start < scenario.phases[i - 1].start:
            before = scenario.phases[i - 1]
            what = (
                f"{p.start.isoformat()} is before phase '{before.id}' ({before.start.isoformat()}); list "
                "phases in time order"
            )
            out.append(Problem(f"phases[{i}].start", what))
    return out


def _supply_and_demand_phases(scenario: Scenario, bad, out: list[Problem]) -> None:
    """Supply names catalog rack types and phases; gpus_by_phase names phases of a phased scenario."""
    types = scenario.catalog.by_id()
    for si, x in enumerate(scenario.supply):
        if x.rack_type not in types:
            out.append(
                Problem(f"supply[{si}].rack_type", f"unknown rack type '{x.rack_type}' {known(types)}")
            )
        _phase_or_none(scenario, f"supply[{si}].phase", x.phase, "delivered from the start", bad, out)
    for ci, c in enumerate(scenario.clusters):
        for k in c.gpus_by_phase or {}:
            bad(f"clusters[{ci}].gpus_by_phase.{k}", k)
        if c.gpus_by_phase is not None and not scenario.phases:
            out.append(
                Problem(f"clusters[{ci}].gpus_by_phase", "the scenario has no phases; give gpus instead")
            )


def _phase_or_none(scenario: Scenario, path: str, phase, meaning: str, bad, out: list[Problem]) -> None:
    """A phase field names a phase; without phases it must be left out (``meaning`` says what that gives)."""
    if phase is None:
        return
    if not scenario.phases:
        out.append(Problem(path, f"the scenario has no phases; leave phase out ({meaning})"))
    else:
        bad(path, phase)


def _online_phases(scenario: Scenario, bad) -> None:
    """Every online_phase of the site's power nodes, halls, cooling zones and rows names a phase."""
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


def _lead_times(scenario: Scenario) -> list[Problem]:
    """Lead times name catalog rack types and fit within the phases after the first."""
    out = []
    types = scenario.catalog.by_id()
    for t, lead in scenario.lead_phases.items():
        if t not in types:
            out.append(Problem(f"lead_phases.{t}", f"unknown rack type '{t}' {known(types)}"))
        elif not scenario.phases:
            what = "the scenario has no phases; a lead time needs phases to order in"
            out.append(Problem(f"lead_phases.{t}", what))
        elif lead < 0 or lead >= len(scenario.phases):
            what = f"{lead} is outside 0..{len(scenario.phases) - 1} (the phases after the first)"
            out.append(Problem(f"lead_phases.{t}", what))
    return out


def _service_lives(scenario: Scenario) -> list[Problem]:
    """Service lives name GPU rack types of a phased scenario, and are not combined with what is
    not planned for them yet (hot spares, spread limits, multi-rack units)."""
    out = []
    types = scenario.catalog.by_id()
    for t in scenario.service_life:
        if t not in types:
            out.append(Problem(f"service_life.{t}", f"unknown rack type '{t}' {known(types)}"))
        elif not scenario.phases:
            what = "the scenario has no phases; a service life needs phases to retire racks in"
            out.append(Problem(f"service_life.{t}", what))
    for t in scenario.service_life:
        if t in types and not types[t].gpus:
            what = "service lives are planned for GPU rack types (storage racks stay)"
            out.append(Problem(f"service_life.{t}", what))
    limits = ("max_share_per_power_node", "max_share_per_cooling_zone", "max_share_per_pod")
    for ci, c in enumerate(scenario.clusters):
        lived = [t for t in c.rack_types if t in scenario.service_life]
        if lived and (c.spare_availability is not None or any(getattr(c, x) is not None for x in limits)):
            what = (
                "hot spares and failure-domain spread are not planned yet for rack types with a "
                f"service life ({', '.join(lived)})"
            )
            out.append(Problem(f"clusters[{ci}]", what))
    wide = sorted({t for c in scenario.clusters for t in c.rack_types if t in types and types[t].width > 1})
    if scenario.service_life and wide and scenario.retires:
        what = (
            "service lives that end within the phases are planned for one-position rack types only; the "
            f"clusters use multi-rack units ({', '.join(wide)})"
        )
        out.append(Problem("service_life", what))
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
            path = f"futures[{fi}].gpus_by_phase.{c}"
            if c not in clusters:
                out.append(Problem(path, f"unknown cluster '{c}' {known(clusters)}"))
            out += [
                Problem(f"{path}.{ph}", f"unknown phase '{ph}' {known(phases)}")
                for ph in by_phase
                if ph not in phases
            ]
    if out or not phases:
        return out
    return _first_phase_agrees(scenario, clusters, phases[0])


def _first_phase_agrees(scenario: Scenario, clusters: dict, first_phase: str) -> list[Problem]:
    """Every future wants the same GPUs of each cluster in the first phase."""
    out = []
    for c in clusters.values():
        first = {
            f.id: _first_demand(f.gpus_by_phase.get(c.id, c.gpus_by_phase), c.gpus, first_phase)
            for f in scenario.futures
        }
        if len(set(first.values())) > 1:
            wants = ", ".join(f"{k}: {v}" for k, v in first.items())
            what = (
                f"cluster '{c.id}' wants different GPUs in the first phase '{first_phase}' across futures "
                f"({wants}); "
                "the first phase is decided before the future is known, so futures must agree on it"
            )
            out.append(Problem("futures", what))
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
