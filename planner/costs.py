"""Costs (SPEC §10): every cost formula once, used by the optimiser, the first-fit baseline,
the KPIs and the reports alike.

- rack capex = rack price + GPUs × fabric cost per GPU + fabric links × cost per link of the
  link class the rack uses at its position (USD);
- facility build = added kW × :data:`FACILITY_USD_PER_KW` (used to price added power or cooling).
"""

from __future__ import annotations

from planner.schema import LinkClass, RackType

FACILITY_USD_PER_KW = 11_700.0
"""Facility build cost per kW of critical IT, USD: $11.7M per MW, the average of $9.3-15.0M
(Cushman & Wakefield Data Center Development Cost Guide 2025)."""


def links_usd(rack: RackType, link: LinkClass | None) -> float:
    """Fabric links of one rack at a position: links × cost per link of its class (0 without links), USD."""
    return rack.links * link.cost_usd_per_link if link is not None and rack.links else 0.0


def fabric_usd(rack: RackType, fabric_usd_per_gpu: float) -> float:
    """Fabric (switches and cables) of one rack's GPUs: GPUs × cost per GPU, USD."""
    return rack.gpus * fabric_usd_per_gpu


def rack_capex_usd(rack: RackType, link: LinkClass | None, fabric_usd_per_gpu: float) -> float:
    """Capex of one placed rack: price + fabric + links, USD (module docstring)."""
    return rack.capex_usd + fabric_usd(rack, fabric_usd_per_gpu) + links_usd(rack, link)
