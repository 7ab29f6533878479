"""Allowed values, each list defined once: statuses, objectives, solvers, media, scopes.

Every module (schema, solver, plan, CLI, dashboard) names these members instead
of writing string literals; the YAML spelling is the member's value.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Outcome of a solve, as a plan states it."""

    optimal = "optimal"
    """A plan whose recomputed gap to the solver's proven bound is within the requested gap."""
    feasible = "feasible"
    """A verified plan with a larger or unknown gap (time limit, or a start the solver could not improve)."""
    infeasible = "infeasible"
    """The solver proved that no plan meets every demand."""
    time_limit = "time_limit"
    """No plan was found before the time limit (feasibility unknown)."""
    no_solution = "no_solution"
    """The solver stopped without a plan for another reason (interrupted, numerical trouble)."""
    not_solved = "not_solved"
    """Written by hand or by a heuristic: no solver, no bound."""

    @property
    def has_plan(self) -> bool:
        """Whether a plan with this status may hold racks."""
        return self in (Status.optimal, Status.feasible, Status.not_solved)


class Objective(StrEnum):
    """What the optimiser maximises or minimises."""

    max_gpus = "max_gpus"
    max_pflops = "max_pflops"
    min_capex = "min_capex"
    min_tco = "min_tco"

    @property
    def maximise(self) -> bool:
        """True for max_* objectives."""
        return self.value.startswith("max_")

    @property
    def unit(self) -> str:
        """Unit of the objective value."""
        return {"max_gpus": "GPUs", "max_pflops": "PFLOPS", "min_capex": "USD", "min_tco": "USD"}[self.value]

    def unit_for(self, phased: bool) -> str:
        """Unit of the objective value of a scenario: with phases a max objective sums what stands
        in every phase (GPU-phases, PFLOPS-phases); money stays USD."""
        if phased and self.maximise:
            return {"max_gpus": "GPU-phases", "max_pflops": "PFLOPS-phases"}[self.value]
        return self.unit


class SolverName(StrEnum):
    """MILP solvers the planner can run (see :mod:`planner.solving.backends`)."""

    highs = "highs"
    cbc = "cbc"


class Medium(StrEnum):
    """Heat-removal medium of a cooling zone."""

    air = "air"
    liquid = "liquid"


class Scope(StrEnum):
    """How far a cluster may spread, from its hop budget (§6)."""

    rack = "rack"
    pod = "pod"
    building = "building"
    site = "site"


class FailoverPolicy(StrEnum):
    """What a cluster's racks do when a power failure hits their rows (SPEC §4, after Flex, ISCA 2021)."""

    keep = "keep"
    """Stay at full planning power (strict N-1)."""
    cap = "cap"
    """Draw at most ``cap_ratio`` of planning power."""
    shed = "shed"
    """May lose power."""

    def factor(self, cap_ratio: float) -> float:
        """Share of planning power a rack keeps in a contingency that hits its row."""
        return 1.0 if self == FailoverPolicy.keep else cap_ratio if self == FailoverPolicy.cap else 0.0


class Scale(StrEnum):
    """What an interruption cause scales with (§11)."""

    gpu = "gpu"
    server = "server"
    link = "link"
    rack = "rack"


class NodeKind(StrEnum):
    """Kind of a power node; it sets the default derate (SPEC §4)."""

    utility = "utility"
    substation = "substation"
    transformer = "transformer"
    ups = "ups"
    pdu = "pdu"
    busway = "busway"
    breaker = "breaker"
    other = "other"

    @property
    def default_derate(self) -> float:
        """Usable share of the rating when the site states none: 0.8 for breakers, busways, PDUs
        (and unknown kinds), the NEC/NEMA continuous-load rule; 1.0 for UPS, transformers,
        substations and utility feeds, rated in kW for continuous load."""
        return (
            1.0
            if self in (NodeKind.utility, NodeKind.substation, NodeKind.transformer, NodeKind.ups)
            else 0.8
        )


class RackLimitBasis(StrEnum):
    """Which power a row's per-rack limit is checked against."""

    nameplate = "nameplate"
    """The rack's rated power (with any GPU cap applied: the cap is enforced by the GPUs)."""
    planning = "planning"
    """The planning power (rated × power_budget_ratio): when the site plans on measured peak."""


class FabricKind(StrEnum):
    """GPU network fabric technology."""

    infiniband = "infiniband"
    roce = "roce"


class Direction(StrEnum):
    """Direction a row's positions advance in from its origin."""

    plus_x = "+x"
    minus_x = "-x"
    plus_y = "+y"
    minus_y = "-y"


class RackKind(StrEnum):
    """What a rack type holds."""

    gpu = "gpu"
    network = "network"
    storage = "storage"


class PlanMode(StrEnum):
    """How a phased scenario is solved."""

    joint = "joint"
    """All phases in one model (perfect foresight)."""
    rolling = "rolling"
    """Phase by phase, each fixing the last (what a planner without foresight gets)."""


class RetrofitKind(StrEnum):
    """What a retrofit changes."""

    add_liquid_loop = "add_liquid_loop"
    raise_capacity = "raise_capacity"
    raise_rack_power = "raise_rack_power"
    build_structure = "build_structure"


class Demand(StrEnum):
    """How a cluster's GPU count is read."""

    exact = "exact"
    """Exactly ``gpus``."""
    at_least = "at_least"
    """``gpus`` or more."""
    max = "max"
    """As many as fit (up to ``gpus`` if set)."""


class LimitKind(StrEnum):
    """What a limit limits: the kinds a plan's utilisation, the optimiser's limits, the explainer
    and the dashboard name (one list, here)."""

    power_node = "power_node"
    """A power node's usable kW (normal operation and under N-1)."""
    cooling_zone = "cooling_zone"
    """An air zone's or liquid loop's heat, kW."""
    pod_gpus = "pod_gpus"
    """A pod's GPU ports."""
    pod_racks = "pod_racks"
    """Racks a pod connects."""
    hall_positions = "hall_positions"
    """Usable positions of a hall."""
    row_positions = "row_positions"
    """Positions of a row (per cable-length band in the optimiser)."""
    row_redundant = "row_redundant"
    """A redundant row that a single failure leaves unfed: nothing may stand in it."""
    row_unpowered = "row_unpowered"
    """A row with no feed online yet: nothing may stand in it."""
    demand_cap = "demand_cap"
    """A max-demand cluster's upper figure."""
    storage = "storage"
    """Storage racks a cluster wants."""
    fabric = "fabric"
    """The largest build of a fabric design."""
    spread = "spread"
    """A cluster's failure-domain spread limit."""
    budget = "budget"
    """Capex or IT-power budget."""
    power_arrival = "power_arrival"
    """Region power arrived by a phase (interconnect + on-site generation), facility kW (IT × PUE)."""
    supply = "supply"
    """Racks of a type delivered by a phase (GPU allocations), racks."""
    region_bandwidth = "region_bandwidth"
    """Bandwidth between a building and the region tier, Tb/s."""
    swing = "swing"
    """A training job's synchronous swing beyond what storage and a power floor absorb, within what the
    power sources arrived accept (§21), MW."""
    source_energy = "source_energy"
    """Energy a power source can deliver in a phase, MWh per year (§21)."""
    emissions = "emissions"
    """Scope 2 emissions in a phase, t CO2 per year (§21)."""
    water = "water"
    """Design-day water draw in a phase, L/s (§21)."""

    @property
    def words(self) -> str:
        """The kind in a sentence ("power", "pod ports")."""
        return _KIND_TEXT[self][0]

    @property
    def title(self) -> str:
        """The kind as a chart title, with its unit."""
        return _KIND_TEXT[self][1]

    @property
    def per_phase(self) -> bool:
        """Whether limits of this kind are stated per phase and relaxed in the phase they bind."""
        return self in (
            LimitKind.power_arrival,
            LimitKind.supply,
            LimitKind.swing,
            LimitKind.source_energy,
            LimitKind.emissions,
            LimitKind.water,
        )


_KIND_TEXT = {
    LimitKind.power_node: ("power", "Power nodes (kW)"),
    LimitKind.cooling_zone: ("cooling", "Cooling zones (kW)"),
    LimitKind.pod_gpus: ("pod ports", "Pod GPU ports"),
    LimitKind.pod_racks: ("pod racks", "Pod racks"),
    LimitKind.hall_positions: ("hall positions", "Hall positions"),
    LimitKind.row_positions: ("space", "Row positions"),
    LimitKind.row_redundant: ("power", "Redundant rows a failure leaves unfed (kW)"),
    LimitKind.row_unpowered: ("power", "Rows with no feed online yet (kW)"),
    LimitKind.demand_cap: ("demand cap", "Demand caps (GPUs)"),
    LimitKind.storage: ("storage", "Storage racks"),
    LimitKind.fabric: ("fabric", "Fabric builds (endpoints)"),
    LimitKind.spread: ("spread", "Failure-domain spread (GPUs)"),
    LimitKind.budget: ("budget", "Budgets"),
    LimitKind.power_arrival: ("power arrival", "Region power arrived (facility kW, IT × PUE)"),
    LimitKind.supply: ("supply", "Rack and switch supply"),
    LimitKind.region_bandwidth: ("region bandwidth", "Bandwidth to the region tier (Tb/s)"),
    LimitKind.swing: ("training swing", "Training swing left for the grid (MW)"),
    LimitKind.source_energy: ("source energy", "Energy per power source (MWh per year)"),
    LimitKind.emissions: ("emissions", "Emissions (t CO2 per year)"),
    LimitKind.water: ("water", "Design-day water (L/s)"),
}
"""(words, chart title) of every limit kind: one table, read by the explainer and the dashboard."""
