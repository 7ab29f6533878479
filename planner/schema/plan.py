"""Plan schema (§9): the answer as data: placed racks, status, KPIs, utilisation, phases,
reliability and fabric figures. Reading and writing plan files is :mod:`planner.plan`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.enums import LimitKind, Status
from planner.schema.base import Bool, Coordinate, Float, Id, Int, StrictModel, Text
from planner.schema.grid import GridReport
from planner.schema.solver import SolverSettings


class PlacedRack(StrictModel):
    """One rack of a plan (or of the racks already installed) and where it stands."""

    building: Id
    """Building ID."""
    hall: Id
    """Hall ID."""
    row: Id
    """Row ID."""
    position: Int = Field(ge=0, le=100_000)
    """Position index in the row, from 0."""
    x_m: Coordinate
    """x coordinate of the position, m."""
    y_m: Coordinate
    """y coordinate of the position, m."""
    rack_type: Id
    """Rack type ID from the catalog."""
    cluster: Id
    """Cluster the rack serves."""
    link_class: Id | None = None
    """Link class of its fabric cables; none for racks without fabric links."""
    cable_length_m: Float = Field(ge=0, le=1e6)
    """Cable length to the pod's network rack, m."""
    phase: Id | None = None
    """Phase in which the rack is placed (phased plans); it stays in every later phase."""
    existing: Bool = False
    """Installed before this plan (brownfield): fixed, never moved."""
    spare: Bool = False
    """A hot spare of its cluster (§11): powered, cooled and paid for, not counted in its GPUs."""
    retired: Id | None = None
    """Phase from which it no longer stands: its service life has ended (§17); none: it stands to the end."""


class SwitchCount(StrictModel):
    """Switches of one model and tier in a network rack."""

    tier: Int = Field(ge=1, le=4)
    """1 leaf, 2 spine, 3 core, 4 region (aggregation) tier."""
    model: Id
    """Switch model (catalog)."""
    count: Int = Field(ge=1, le=1000)
    phase: Id | None = None
    """Phase in which these switches are bought and stood (phased plans); they stay to the horizon."""


class NetworkRack(StrictModel):
    """A network rack of a designed fabric placed at a network row's position (§13)."""

    building: Id
    hall: Id
    row: Id
    position: Int = Field(ge=0, le=100_000)
    x_m: Coordinate
    y_m: Coordinate
    cluster: Id
    """Cluster whose fabric it holds (``region`` for the region tier)."""
    design: Id
    """Fabric design (or ``region`` for the region tier)."""
    switches: list[SwitchCount] = Field(default_factory=list, max_length=100)
    """Switches it holds."""
    kw: Float = Field(ge=0, le=10_000)
    """Power it draws, kW: its switches and its share of the fabric's transceivers (at the horizon
    in phased plans)."""
    phase: Id | None = None
    """Phase from which it stands (phased plans): the first its cluster's fabric needs it; it stays."""
    kw_by_phase: dict[Id, Float] = Field(default_factory=dict, max_length=100)
    """Phased plans: phase → what it draws then, kW, from its first phase (its switches bought by
    then and its share of the transceivers of the links standing then)."""


class Usage(StrictModel):
    """Use of one limit: a power node, cooling zone, pod or hall."""

    kind: LimitKind
    """What is limited."""
    id: Text
    """Element ID."""
    value: Float
    """Amount used in normal operation (kW, GPUs, racks, positions or USD)."""
    limit: Float
    """Usable amount (for power: derate × capacity)."""
    unit: Text
    """Unit of value and limit."""
    worst_value: Float | None = None
    """Largest amount used under any single power-node failure (power nodes only)."""
    worst_failure: Text | None = None
    """The failed node that gives ``worst_value``."""

    @property
    def share(self) -> float:
        """value / limit (0 when the limit is 0)."""
        return self.value / self.limit if self.limit else 0.0

    @property
    def worst_share(self) -> float:
        """max(value, worst_value) / limit."""
        worst = max(self.value, self.worst_value or 0.0)
        return worst / self.limit if self.limit else 0.0


class Kpis(StrictModel):
    """Headline figures of a plan (§10); formulas in :mod:`planner.plan.kpis`."""

    gpus: Int = 0
    """GPUs placed (hot spares not counted)."""
    racks: Int = 0
    """Racks placed (all kinds)."""
    spare_racks: Int = 0
    """Hot-spare racks placed (§11)."""
    pflops_bf16: Float = 0
    """Dense BF16 PFLOPS of all placed GPUs."""
    it_kw: Float = 0
    """Everything in the white space, kW: the placed racks, every pod's network rack, the back-end
    network allowance and the designed fabrics' switches and transceivers (racks_kw + network_kw +
    allowance_kw + fabric_kw)."""
    racks_kw: Float = 0
    """Planning power of the placed racks, kW."""
    network_kw: Float = 0
    """Planning power of the pods' network racks, kW."""
    allowance_kw: Float = 0
    """Back-end network of the placed racks outside designed fabrics, kW (scenario
    ``network_allowance``: GPUs × the rack type's ``network_w_per_gpu``)."""
    facility_kw: Float = 0
    """IT kW × PUE, kW."""
    gpus_per_mw: Float = 0
    """GPUs per MW of IT power."""
    pflops_per_mw: Float = 0
    """PFLOPS per MW of IT power."""
    avg_kw_per_rack: Float = 0
    """Mean planning power per rack, kW."""
    max_kw_per_rack: Float = 0
    """Largest planning power of one rack, kW."""
    gpus_per_m2: Float = 0
    """GPUs per m² of floor of the halls used."""
    hbm_tb: Float = 0
    """HBM of all placed GPUs, TB."""
    hbm_gb_per_gpu: Float = 0
    """Mean HBM per placed GPU, GB."""
    storage_pb: Float = 0
    """Capacity of the placed storage racks, PB."""
    storage_write_gb_per_s: Float = 0
    """Write bandwidth of the placed storage racks, GB/s."""
    capex_racks_usd: Float = 0
    """Σ rack capex, USD."""
    switches: Int = 0
    """Switches of the designed fabrics (§13; leaves in GPU racks included)."""
    optics: Int = 0
    """Optical transceivers: two per optical link (racks' links and designed fabrics' links)."""
    fabric_kw: Float = 0
    """Switches (not in GPU racks) and transceivers of the designed fabrics, kW."""
    fabric_racks: Int = 0
    """Network racks of the designed fabrics standing at network positions (positions they take)."""
    fabric_capex_usd: Float = 0
    """Fabric capex: designed fabrics' switches and links above the racks, plus the per-GPU fabric
    cost of clusters without a design, USD."""
    fabric_usd_per_gpu: Float = 0
    """fabric_capex_usd ÷ GPUs."""
    capex_fabric_usd: Float = 0
    """GPUs × fabric cost per GPU, USD."""
    capex_links_usd: Float = 0
    """Σ links × cost per link of their class, USD."""
    capex_facility_usd: Float = 0
    """Facility build for the IT kW (placed racks, network racks, designed fabrics), USD (0 when leased)."""
    capex_facility_parts_usd: dict[Id, Float] = Field(default_factory=dict, max_length=8)
    """The facility build split by ``costs.facility_split``: shell, electrical, mechanical and backup
    of the build at the facility rate, and ``structures`` (builds at a structure's own rate, whole);
    they add up to capex_facility_usd. Empty without a split."""
    capex_retrofits_usd: Float = 0
    """Retrofits bought, USD."""
    capex_backup_usd: Float = 0
    """Backup power chosen per building (scenario ``backup_power``), USD, at the start."""
    capex_storage_usd: Float = 0
    """Energy storage bought to absorb training swings (§21), USD."""
    capex_usd: Float = 0
    """Racks + fabric + links + facility + retrofits + backup power + energy storage, USD."""
    opex_usd_per_year: Float = 0
    """Energy, colocation and maintenance at full build-out, USD per year."""
    tco_usd: Float = 0
    """Net present value of capex and opex over the horizon, USD (with service lives: removal costs
    added, residual value taken off)."""
    removal_usd: Float = 0
    """Removal cost of the racks retired within the horizon, USD (undiscounted; §17)."""
    residual_value_usd: Float = 0
    """Book value at the horizon of the racks with a service life still standing then (straight-line
    depreciation of their equipment), USD (undiscounted; credited in TCO, §17)."""
    depreciation_usd_per_year: Float = 0
    """Straight-line depreciation of the racks with a service life standing in the last phase:
    Σ equipment capex ÷ life, USD per year (§17)."""
    retired_racks: Int = 0
    """Racks retired by the last phase (their service life ended; not counted in GPUs, racks or IT kW)."""
    gpu_hours: Float = 0
    """GPU-hours available over the horizon (each placed GPU from its phase's start; spares not counted)."""
    gpu_hours_npv: Float = 0
    """The same GPU-hours discounted like dollars (from the phase each comes online)."""
    usd_per_gpu_hour: Float = 0
    """Levelized: tco_usd ÷ gpu_hours_npv (NPV of every cost ÷ NPV of the GPU-hours)."""
    usd_per_useful_gpu_hour: Float = 0
    """tco_usd ÷ (gpu_hours_npv × each cluster's goodput; 1 where a cluster states no checkpoint)."""
    stranded_kw: Float = 0
    """Usable kW at the top of the power tree that no allowed rack can use
    (planner.plan.kpis.stranded_power)."""
    cable_m: Float = 0
    """Σ links × cable length, m."""


class BoughtRetrofit(StrictModel):
    """A retrofit the plan buys."""

    id: Id
    """Retrofit ID."""
    phase: Id | None = None
    """Phase in which it is bought (it takes effect its lead time later)."""


class StrandedPower(StrictModel):
    """Usable power no allowed rack can use, and the limit that binds it."""

    node: Id
    """Top power node."""
    kw: Float
    """Stranded kW."""
    reason: Text
    """space, ports, cooling, rack limits or N-1."""


class Order(StrictModel):
    """One line of a phased plan's order book (§17): what must be ordered in which phase to stand
    (or take effect) in a later one."""

    item: Literal["rack", "retrofit", "power"]
    """A rack type (racks placed), a retrofit bought (a structure, a liquid loop, more power …) or a
    power-arrival step's long-lead plant."""
    id: Text
    """The rack type or retrofit ID, or ``power_arrival[i]`` and the plant it needs."""
    ordered: Text
    """Phase in which the order must be placed ("before q1 (n phases)" when that precedes the plan)."""
    stands: Text
    """Phase from which it stands or is in effect."""
    count: Int = 1
    """Racks (multi-rack units count one), or 1 for a retrofit."""


class PhaseSummary(StrictModel):
    """What stands at the end of one phase (§8): everything online then."""

    phase: Id
    """Phase ID."""
    start: Text = ""
    """Its start date (ISO)."""
    gpus: Int = 0
    """GPUs standing (installed racks included)."""
    racks: Int = 0
    """Racks standing."""
    new_racks: Int = 0
    """Racks placed in this phase."""
    it_kw: Float = 0
    """IT power of the racks standing (with their back-end network allowance) and the network racks
    online, kW."""
    capex_usd: Float = 0
    """Capex spent in this phase: racks placed, their facility build, retrofits bought (undiscounted)."""
    tightest: list[Text] = Field(default_factory=list, max_length=10)
    """The most used limits then (element, share)."""


class BlastRow(StrictModel):
    """What one element's failure takes down (§11; see :mod:`planner.rules.reliability`)."""

    kind: Text
    """power_node, cooling_zone, pod or row."""
    id: Id
    """The element."""
    gpus_lost: Int = 0
    """GPUs that lose power, cooling or network."""
    lost: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """GPUs lost per cluster."""
    capped: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """GPUs capped per cluster (on_power_failure: cap)."""
    shed: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """GPUs that may be shed per cluster (on_power_failure: shed)."""
    n1_holds: Bool | None = None
    """Power nodes: whether every surviving node stays within its usable kW (policies applied)."""
    during: Id | None = None
    """Kind ``maintenance`` (§21): the node out for maintenance while ``id`` fails (racks in full)."""


class ClusterReliability(StrictModel):
    """Interruptions, checkpoints and goodput of one cluster (§11, first order)."""

    cluster: Id
    gpus: Int = 0
    """GPUs placed."""
    mtbf_h: Float | None = None
    """Mean time between unexpected interruptions, h."""
    interruptions_per_day: Float = 0
    """Expected unexpected interruptions per day."""
    storage_racks: Int = 0
    """Storage racks placed for it."""
    write_gb_per_s: Float = 0
    """Checkpoint write bandwidth of those racks, GB/s."""
    checkpoint_s: Float | None = None
    """Checkpoint write time C, s."""
    interval_h: Float | None = None
    """Young/Daly checkpoint interval √(2 · MTBF · C), h."""
    goodput: Float | None = None
    """(1 − C/τ − (τ/2 + R)/MTBF) × the share of its GPUs in service."""
    in_service: Float | None = None
    """Share of its job's GPUs in service with NVLink domains as the failure and repair unit (hot
    spare trays idle, domains out beyond the spare racks; §19); none: its racks state no domain."""
    gpu_hours_lost_per_day: Float | None = None
    """GPUs × 24 × (1 − goodput)."""
    spare_racks: Int = 0
    """Hot-spare racks placed for it."""
    worst_power_share: Float = 0
    """Largest share of its GPUs one power node failure takes down."""
    worst_zone_share: Float = 0
    """Largest share of its GPUs in one cooling zone or loop."""
    worst_pod_share: Float = 0
    """Largest share of its GPUs in one pod."""


class ClusterFabric(StrictModel):
    """One cluster's fabric sized from its design (§13; see :mod:`planner.rules.fabric_sizing`)."""

    cluster: Id
    design: Id
    """The design it is built on (chosen by the optimiser when several are allowed)."""
    endpoints: Int = 0
    """GPUs × NICs per GPU."""
    switches: list[Int] = Field(default_factory=list, max_length=3)
    """Switches per tier, leaf first."""
    leaves_per_pod: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """Leaves standing in each pod's network rows (leaves in network racks)."""
    links: dict[Id, Int] = Field(default_factory=dict, max_length=100)
    """Every fabric link by link class: GPU to leaf (in-rack copper when the leaf is in the rack,
    else cabled by length), leaf to spine, spine to core."""
    kw: Float = 0
    """Switches (not in GPU racks) and transceivers, kW."""
    capex_usd: Float = 0
    """Switches (not in GPU racks) and every fabric link, USD."""
    optics: Int = 0
    """Transceivers: two per link of an optical class (copper has none)."""
    network_racks: Int = 0
    """Network racks its switches fill at least (by rack units)."""
    racks_placed: Int = 0
    """Network racks the plan stands at network positions for it (power also limits what a rack holds)."""
    positions_by_pod: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """Pod of the network row → network positions its racks take there."""
    kw_by_pod: dict[Id, Float] = Field(default_factory=dict, max_length=100_000)
    """Pod of the network row → kW its network racks draw there."""
    max_endpoints: Int = 0
    """Largest fabric the design can build."""
    max_hops: Int = 0
    """Switch hops between its two farthest GPUs."""
    endpoints_by_building: dict[Id, Int] = Field(default_factory=dict, max_length=100_000)
    """Building → its endpoints there."""
    region_links: Int = 0
    """Links from its buildings' top tiers up to the region tier (a cluster spanning buildings;
    counted in ``links`` under the longest class, whose optics they use)."""
    region_switches: Int = 0
    """Switches of the region tier it needs (tier 4 of its network racks)."""
    fibre_km: Float = 0
    """Σ region links × their building's distance to the tier's building, km."""
    latency_us: Float = 0
    """Longest one-way fibre delay between two of its buildings, through the tier's building, µs."""


class BackupChoice(StrictModel):
    """The backup-power design chosen for one building (§16) and what it costs and loses."""

    building: Id
    design: Id
    fixed: Bool = False
    """Decided by the scenario, not chosen."""
    it_kw: Float = 0
    """IT load it backs (racks and network racks in the building), kW."""
    capex_usd: Float = 0
    """(usd_per_mw − in_facility_usd_per_mw) × IT MW, USD (negative: plant the facility rate holds and
    this design leaves out)."""
    ride_through: Bool = False
    outage_interruptions_per_year: Float = 0
    """Interruptions a utility outage adds to each cluster with racks here (0 with ride-through)."""
    gpu_hours_dark_per_year: Float = 0
    """GPU-hours without power per year: outages × hours until power is back × GPUs here."""
    usd_per_useful_gpu_hour: dict[Id, Float] = Field(default_factory=dict, max_length=10)
    """$ per useful GPU-hour of the plan with each design here (the other buildings as chosen)."""


class ReliabilityReport(StrictModel):
    """Blast radius and per-cluster reliability of a plan (§11)."""

    clusters: list[ClusterReliability] = Field(default_factory=list, max_length=100_000)
    backup: list[BackupChoice] = Field(default_factory=list, max_length=10_000)
    """Backup power per building, when the scenario makes it a choice (§16)."""
    blast_radius: list[BlastRow] = Field(default_factory=list, max_length=1_000_000)
    """Every element whose failure takes down, caps or sheds GPUs, most GPUs lost first (elements
    that take down nothing are left out)."""


class RackCount(StrictModel):
    """Racks of one type for one cluster in one row (a witness: where they stand in the row is the
    verifier's to choose, nearest the pod first)."""

    row: Id
    rack_type: Id
    cluster: Id
    count: Int = Field(ge=1, le=100_000)
    spare: Bool = False


class FailoverGain(StrictModel):
    """What the failover policies buy (§4): this plan against the same scenario under strict N-1
    (every cluster on ``keep``), with the strict plan's rack counts as the witness the verifier
    checks under strict N-1."""

    strict_status: Status
    """Status of the strict N-1 solve (``time_limit``: not computed in the time left)."""
    strict_gpus: Int | None = None
    """GPUs of the strict N-1 plan (none when it has no plan)."""
    gain_gpus: Int | None = None
    """This plan's GPUs less strict_gpus."""
    strict_objective: Float | None = None
    gain_objective: Float | None = None
    """This plan's objective less the strict plan's (objective units)."""
    strict_racks: list[RackCount] = Field(default_factory=list, max_length=10_000_000)
    """The strict plan's racks per row, type and cluster."""
    strict_retrofits: list[BoughtRetrofit] = Field(default_factory=list, max_length=10_000)
    """Retrofits the strict plan buys."""
    note: Text = ""
    """Why no figure, when there is none."""


class Plan(StrictModel):
    """A placement with its provenance, KPIs and utilisation (§9)."""

    planner_version: Text = ""
    """Version of the planner that made the plan."""
    scenario_name: Text
    """Scenario the plan answers."""
    scenario_hash: Text = ""
    """First 16 hex digits of the SHA-256 of the scenario's canonical JSON."""
    solver: Text = ""
    """Solver (highs, cbc, greedy, hand)."""
    solver_settings: SolverSettings | None = None
    """Solver, time limit, gap and threads the plan was made with (the scenario's, or the command
    line's); not part of the scenario hash. The verifier judges ``optimal`` against this gap only
    when :attr:`run_hash` covers it, else against the scenario's own."""
    run_hash: Text = ""
    """First 16 hex digits of the SHA-256 of the scenario with these solver settings
    (:func:`planner.schema.hashing.run_hash`): the settings are part of the claim."""
    status: Status = Status.not_solved
    """Solve outcome (see :class:`planner.enums.Status`)."""
    objective: Text = ""
    """Objective name."""
    objective_value: Float | None = None
    """Objective of the plan."""
    bound: Float | None = None
    """Best bound on the objective (none: none is known)."""
    bound_source: Text = ""
    """Where the bound comes from: ``solver`` (the MILP solver's own bound: its claim, which the
    verifier cannot re-derive), ``capacity`` (power, positions and demands, recomputed by the
    verifier), ``demands`` (the sum of the demands, recomputed), ``merged relaxation`` or
    ``LP relaxation`` (an LP the planner solved: its claim), ``packing relaxation`` (a MILP of jobs
    per building the planner solved, :mod:`planner.scale.packing`: its proven bound, a claim);
    empty for a bound of older plans."""
    certified_bound: Float | None = None
    """A bound with its evidence: the LP relaxation's bound proven by the dual solution in
    :attr:`bound_certificate`, which ``planner verify`` checks (weaker than a MILP bound, but checked)."""
    bound_certificate: Text = ""
    """File name, beside the plan, of the certificate (the model as an LP and its row duals;
    ``planner plan --certify``)."""
    optimality: Literal["proven", "solver_claim"] | None = None
    """For status optimal: ``proven`` when the gap recomputed from the stated bound is within the
    requested gap; ``solver_claim`` when the solver said optimal but stated no bound (then bound and
    gap are none). None for other statuses."""
    gap: Float | None = None
    """Relative gap |bound − objective| / max(|objective|, 1)."""
    build_time_s: Float = 0
    """Model build time, s."""
    solve_time_s: Float = 0
    """Solver wall time, s."""
    stage_times_s: dict[Id, Float] = Field(default_factory=dict, max_length=100)
    """Wall time of each stage of the run that made the plan, s, in order (``build``, ``first_fit``,
    ``solve``, ``fill_verify``, ``failover``; a decomposition's ``proposals``, ``master``,
    ``buildings``, ``bound``, ``verify``, ``polish`` or ``whole``): where the time went."""
    mode: Text = "joint"
    """How a phased scenario was solved: joint (all phases at once) or rolling (phase by phase)."""
    racks: list[PlacedRack] = Field(default_factory=list, max_length=10_000_000)
    """Placed racks (installed ones included, marked existing)."""
    network_racks: list[NetworkRack] = Field(default_factory=list, max_length=1_000_000)
    """Network racks of designed fabrics at network rows' positions, with their switches."""
    retrofits: list[BoughtRetrofit] = Field(default_factory=list, max_length=10_000)
    """Retrofits bought and when."""
    phases: list[PhaseSummary] = Field(default_factory=list, max_length=100)
    """Per phase: what stands at its end (phased scenarios)."""
    orders: list[Order] = Field(default_factory=list, max_length=100_000)
    """The order book (phased scenarios): per rack type and retrofit, what to order in which phase."""
    stranded: list[StrandedPower] = Field(default_factory=list, max_length=100_000)
    """Where usable power is stranded, and why."""
    kpis: Kpis | None = None
    """Headline figures (none in a hand-written plan: then nothing is claimed)."""
    utilisation: list[Usage] | None = None
    """Use of every power node, cooling zone, pod and hall (none: not claimed)."""
    reliability: ReliabilityReport | None = None
    """Blast radius, MTBF, checkpoints and goodput (none: not claimed)."""
    fabric: list[ClusterFabric] | None = None
    """Designed fabrics per cluster (none: clusters on a single allowed design, or none)."""
    grid: GridReport | None = None
    """Swings, storage and floors, energy by source, emissions and water (§21): the plan's choice of
    storage, floors and dispatch, checked by the verifier; none without ``power_stability``,
    ``power_sources`` or ``water``."""
    failover: FailoverGain | None = None
    """The failover policies' gain against strict N-1, with its witness (scenarios with cap or shed
    clusters)."""
    stochastic: StochasticReport | None = None
    """A two-stage plan over demand futures (``--mode stochastic``, §17): this plan is the shown
    future's; the report holds every future's plan and the expected figures."""
    notes: list[Text] = Field(default_factory=list, max_length=10_000)
    """Explanations (infeasibility, binding limits)."""


class FutureOutcome(StrictModel):
    """One demand future of a two-stage plan: its plan and how it compares (§17). Regrets are in
    objective units and never negative up to solver gaps: for a maximised objective perfect − this,
    for a minimised one this − perfect."""

    id: Id
    probability: Float
    objective_value: Float | None = None
    """The objective of this future's plan (its racks under this future's demand)."""
    tco_usd: Float | None = None
    """TCO of this future's plan, USD."""
    gpus: Int = 0
    """GPUs standing in the last phase."""
    stranded_kw: Float = 0
    """Power stranded in this future's plan, kW (kpis.stranded_kw)."""
    perfect_objective: Float | None = None
    """The objective of the plan that knew this future in advance (a joint plan of it)."""
    regret: Float | None = None
    """Objective lost against that plan."""
    mean_objective: Float | None = None
    """The mean-demand plan's first phase with the later phases adapted to this future (none: it
    cannot serve this future)."""
    mean_stranded_kw: Float | None = None
    """Power that plan strands, kW."""
    plan: Plan
    """This future's plan: the shared first phase and its own later phases."""


class StochasticReport(StrictModel):
    """A two-stage plan (§17): one first phase for every future, later phases per future."""

    first_phase: Id
    """The phase decided before the future is known."""
    shown_future: Id
    """The future whose plan is the top-level plan (the most probable)."""
    status: Status
    """Outcome of the two-stage model (optimal: within the requested gap of its bound)."""
    optimality: Literal["proven", "solver_claim"] | None = None
    """For status optimal: ``proven`` by the stated bound, or ``solver_claim`` when the solver stated
    none (as :attr:`Plan.optimality`)."""
    expected_objective: Float | None = None
    """Σ probability × objective over the futures."""
    bound: Float | None = None
    """The solver's bound on the expected objective (none: it stated none)."""
    gap: Float | None = None
    expected_tco_usd: Float | None = None
    """Σ probability × TCO over the futures, USD."""
    perfect_expected: Float | None = None
    """Wait-and-see: Σ probability × the objective of the plan that knew each future."""
    evpi: Float | None = None
    """Expected value of perfect information: what knowing the future is worth (objective units)."""
    mean_expected: Float | None = None
    """Σ probability × objective of the mean-demand plan adapted to each future (none: it cannot
    serve some future)."""
    vss: Float | None = None
    """Value of the stochastic solution: the stochastic plan's expected objective against the
    mean-demand plan's (objective units; none when the mean-demand plan fails a future)."""
    futures: list[FutureOutcome] = Field(default_factory=list, max_length=100)
    notes: list[Text] = Field(default_factory=list, max_length=1000)
    """How each figure was obtained."""


Plan.model_rebuild()
