"""The verifier's own count of what a cluster's reliability asks imply (§11): storage racks for its
capacity, write-bandwidth and goodput asks, and hot spares for its availability target. Written
apart from :mod:`planner.input.asks` (which the optimiser and first-fit use).

Interruptions per hour of a cluster before placement: its GPUs in racks of its first GPU rack
type (whole racks), each cause contributing count ÷ (window hours × the reference cluster's units
of the cause's scale) × the cluster's units of that scale (links of a stated class do not count:
an unplaced rack has no link class); or servers × the per-node rate. A goodput target G needs a
checkpoint written within C = MTBF/2 · (1 − R/MTBF − G)² hours.
"""

from __future__ import annotations

import math

from planner.enums import Scale
from planner.schema import Cluster, Scenario


def _planned(scenario: Scenario, c: Cluster) -> tuple[int, float, int, int] | None:
    """(GPUs, servers × their fault share, links, racks) of a cluster in whole racks of its first GPU
    rack type."""
    types = scenario.catalog.by_id()
    need = c.min_hbm_gb_per_gpu
    first = next(
        (
            types[t]
            for t in c.rack_types
            if t in types and types[t].gpus and (need is None or types[t].hbm_gb_per_gpu >= need - 1e-9)
        ),
        None,
    )
    if first is None or not c.gpus:
        return None
    racks = -(-c.gpus // first.gpus)
    return (
        racks * first.gpus,
        racks * first.servers_per_rack * first.server_fault_share,
        racks * first.links,
        racks,
    )


def interruptions_per_hour(scenario: Scenario, c: Cluster) -> float:
    """The cluster's interruption rate before placement (module docstring)."""
    units = _planned(scenario, c)
    if units is None:
        return 0.0
    gpus, servers, links, racks = units
    rel = scenario.reliability
    if rel.node_failures_per_1000_node_days is not None:
        return servers * rel.node_failures_per_1000_node_days / 24_000
    ref = rel.reference
    mine = {Scale.gpu: gpus, Scale.server: servers, Scale.rack: racks, Scale.link: links}
    theirs = {
        Scale.gpu: ref.gpus,
        Scale.server: ref.gpus / ref.gpus_per_server,
        Scale.rack: ref.gpus / ref.gpus_per_rack,
        Scale.link: ref.gpus * ref.links_per_gpu,
    }
    total = 0.0
    for cause in rel.causes:
        if cause.scale == Scale.link and cause.link_classes:
            continue
        total += cause.count * mine[cause.scale] / (ref.days * 24 * theirs[cause.scale])
    return total


def storage_wanted(scenario: Scenario, c: Cluster) -> int:
    """Storage racks the cluster must have: the most of its storage_racks and what each ask needs."""
    st = scenario.catalog.by_id().get(c.storage_rack_type)
    wanted = [c.storage_racks]
    if st is None:
        return c.storage_racks
    if c.storage_pb is not None and st.storage_capacity_pb > 0:
        wanted.append(math.ceil(c.storage_pb / st.storage_capacity_pb - 1e-9))
    bandwidth = [c.storage_write_gb_per_s or 0.0]
    if c.goodput_target is not None and c.gpus and c.checkpoint_gb_per_gpu:
        rate = interruptions_per_hour(scenario, c)
        if rate > 0:
            mtbf = 1 / rate
            room = 1 - (c.restart_min / 60) / mtbf - c.goodput_target
            if room > 0:
                hours = mtbf * room * room / 2
                bandwidth.append(c.checkpoint_gb_per_gpu * c.gpus / (hours * 3600))
    if max(bandwidth) > 0 and st.storage_write_gb_per_s > 0:
        wanted.append(math.ceil(max(bandwidth) / st.storage_write_gb_per_s - 1e-9))
    return max(wanted)


def spares_wanted(scenario: Scenario, c: Cluster) -> int:
    """Hot spares: the least s with P(Poisson(λ·T) ≤ s) ≥ the availability target, λ the cluster's
    interruptions per hour, T its repair time."""
    if c.spare_availability is None or _planned(scenario, c) is None:
        return 0
    mean = interruptions_per_hour(scenario, c) * c.repair_hours
    if mean <= 0:
        return 0
    s, pmf = 0, math.exp(-mean)
    cdf = pmf
    while cdf < c.spare_availability - 1e-15:
        s += 1
        pmf = pmf * mean / s
        cdf += pmf
    return s
