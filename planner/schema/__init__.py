"""Input schema, split by the file a user writes: :mod:`~planner.schema.site` (a ``*.site.yaml``),
:mod:`~planner.schema.catalog` (``catalog.yaml``), :mod:`~planner.schema.scenario` (a scenario),
:mod:`~planner.schema.reliability` and :mod:`~planner.schema.costs` (blocks of a scenario), and
:mod:`~planner.schema.plan` (a plan file). Everything is re-exported here, so
``from planner.schema import Scenario`` works; the package imports nothing but pydantic and
:mod:`planner.enums`.
"""

from __future__ import annotations

from planner.enums import Demand
from planner.schema.base import MAX_ITEMS, Bool, Coordinate, Day, Float, Id, Int, NonNegFloat, PositiveFloat, StrictModel, Text
from planner.schema.catalog import Catalog, RackType, SwitchModel, UnitPart
from planner.schema.costs import Costs
from planner.schema.plan import (
    BackupChoice,
    BlastRow,
    BoughtRetrofit,
    ClusterFabric,
    ClusterReliability,
    FailoverGain,
    Kpis,
    NetworkRack,
    Order,
    PhaseSummary,
    PlacedRack,
    Plan,
    RackCount,
    ReliabilityReport,
    StrandedPower,
    SwitchCount,
    Usage,
)
from planner.schema.reliability import Cause, ReferenceCluster, Reliability
from planner.schema.scenario import (
    AddLiquidLoop,
    BackupDesign,
    BackupPower,
    Budgets,
    Cluster,
    FabricDesign,
    Future,
    Outage,
    Phase,
    PowerStep,
    RaiseCapacity,
    RaiseRackPower,
    RegionTier,
    Retrofit,
    Scenario,
    ServiceLife,
    Supply,
    SwitchSupply,
)
from planner.schema.site import (
    Building,
    CoolingZone,
    Fabric,
    Hall,
    Hops,
    LinkClass,
    Location,
    Pod,
    PowerNode,
    Row,
    Site,
    default_link_classes,
)
from planner.schema.solver import SolverSettings

__all__ = [
    "MAX_ITEMS", "AddLiquidLoop", "BackupChoice", "BackupDesign", "BackupPower", "Outage", "BlastRow", "Bool", "BoughtRetrofit", "Budgets", "Building", "Catalog", "Cause", "Cluster",
    "ClusterFabric", "ClusterReliability", "FailoverGain", "NetworkRack", "RackCount", "RegionTier", "SwitchCount", "CoolingZone", "Coordinate", "Costs", "Day", "Demand", "Fabric", "FabricDesign",
    "Float", "Hall", "Hops", "Id", "Int", "Kpis", "LinkClass", "Location", "NonNegFloat", "Order", "Phase", "PhaseSummary", "PlacedRack", "PowerStep", "Future", "ServiceLife", "Supply", "SwitchSupply",
    "Plan", "Pod", "PositiveFloat", "PowerNode", "RackType", "RaiseCapacity", "RaiseRackPower", "ReferenceCluster",
    "Reliability", "ReliabilityReport", "Retrofit", "Row", "Scenario", "Site", "SolverSettings", "StrandedPower",
    "StrictModel", "SwitchModel", "Text", "UnitPart", "Usage", "default_link_classes",
]
