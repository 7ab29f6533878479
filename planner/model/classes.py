"""Position classes and cluster groups: what the model's counts are indexed by (see
:mod:`planner.model` for the aggregation and grouping arguments)."""

from __future__ import annotations

import bisect
from collections import defaultdict

from planner.enums import Scope
from planner.input.asks import spares_needed, storage_racks
from planner.input.site_index import SiteIndex
from planner.model.core import ClusterGroup, PositionClass, runs
from planner.model.keys import ClassKey
from planner.schema import Cluster, Scenario


def _bands(scenario: Scenario) -> list[float]:
    """Cable-length band edges: every link-class reach and every rack's max_cable_m."""
    edges = {c.max_length_m for c in scenario.site.fabric.link_classes}
    edges |= {t.max_cable_m for t in scenario.catalog.rack_types if t.max_cable_m is not None}
    return sorted(edges)


def staying(scenario: Scenario) -> list:
    """Installed racks that stand to the end (their positions are never free); with service lives
    (§17) the others free theirs when they retire (counted per phase in space, planner.model.space)."""
    if not scenario.service_life:
        return scenario.existing
    return [r for r in scenario.existing if scenario.retire_index(r.rack_type, r.phase) is None]


def position_classes(
    scenario: Scenario, ix: SiteIndex, aggregate: bool = True
) -> dict[ClassKey, PositionClass]:
    """Group every free position into classes: one per row and cable-length band (one per position
    when not aggregated)."""
    edges = _bands(scenario)
    types = scenario.catalog.rack_types
    used = {t for c in scenario.clusters for t in c.rack_types}
    wide = max((t.width for t in types if t.id in used), default=1)
    spots = ix.pod_locations() | scenario.positions_held(staying(scenario))
    out: dict[ClassKey, PositionClass] = {}
    for rid, ref in ix.rows.items():
        if ref.row.network is not None:
            continue  # network rows hold network racks only (planner.model.fabric)
        groups: dict[int, list[tuple[float, int]]] = defaultdict(list)
        reserved = set(ref.row.reserved)
        for i in range(ref.row.positions):
            if i in reserved or (rid, i) in spots:
                continue
            length = ix.cable_length_m(rid, i)
            band = bisect.bisect_left(edges, length - 1e-9)
            groups[band if aggregate else i].append((length, i))
        if aggregate and wide:
            _snap_to_units(groups, wide)
        for g, pos in sorted(groups.items()):
            pos.sort()
            key = ClassKey(rid, g)
            link: dict[str, str | None] = {}
            cable: dict[str, float] = {}
            for t in types:
                if t.links == 0:
                    link[t.id] = None
                    cable[t.id] = 0.0
                    continue
                lc = ix.link_class_for(t, pos[-1][0])
                if lc is not None:
                    link[t.id] = lc.id
                    cable[t.id] = sum(p[0] for p in pos) / len(pos)
            out[key] = PositionClass(key, pos, link, cable)
    return out


def _snap_to_units(groups: dict[int, list[tuple[float, int]]], width: int) -> None:
    """Keep band edges from costing units of ``width``: a run of adjacent free positions that the
    bands split so that Σ_b ⌊part_b / w⌋ < ⌊run / w⌋ goes whole to the farthest of its bands. Units
    then count as on the floor; its positions are cabled (their link class chosen) as that band's,
    which only ever reaches further (a restriction for plain racks there, never a wrong plan)."""
    if width <= 1:
        return
    band_of = {i: g for g, pos in groups.items() for _, i in pos}
    length = {i: ln for pos in groups.values() for ln, i in pos}
    for run in runs(sorted(band_of)):
        parts: dict[int, int] = defaultdict(int)
        for i in run:
            parts[band_of[i]] += 1
        if len(parts) < 2 or sum(n // width for n in parts.values()) >= len(run) // width:
            continue
        far = max(parts)
        for i in run:
            if band_of[i] != far:
                groups[band_of[i]].remove((length[i], i))
                groups[far].append((length[i], i))
                band_of[i] = far
    for g in [g for g, pos in groups.items() if not pos]:
        del groups[g]


def network_positions(scenario: Scenario, ix: SiteIndex) -> dict[str, list[int]]:
    """Network row → its free positions (not reserved, not a pod's network rack, not installed)."""
    spots = ix.pod_locations() | scenario.positions_held(scenario.existing)
    return {
        rid: [i for i in range(ref.row.positions) if i not in set(ref.row.reserved) and (rid, i) not in spots]
        for rid, ref in ix.rows.items()
        if ref.row.network is not None
    }


def cluster_groups(
    scenario: Scenario, group: bool = True, installed: set[str] | frozenset[str] = frozenset()
) -> dict[str, ClusterGroup]:
    """Clusters in groups of identical ones; every cluster alone if ``group`` is false, and
    clusters with racks already installed, spread limits, spares or fabric designs always alone."""
    types = scenario.catalog.by_id()
    buckets: dict[tuple, list[Cluster]] = {}
    order: list[tuple] = []
    for c in scenario.clusters:
        scope = scenario.scope_of(c)
        gpu_types = scenario.gpu_types_for(c)
        sizes = {types[t].gpus for t in gpu_types if types[t].gpus}
        figures = [c.gpus, *(c.gpus_by_phase or {}).values()]
        spread = (
            (c.max_share_per_power_node, c.max_share_per_cooling_zone, c.max_share_per_pod)
            != (None, None, None)
            or c.spare_availability is not None
            or bool(c.fabrics)
            or scenario.power_stability is not None  # a job's swing is its own (§21)
        )
        groupable = (
            group
            and c.id not in installed
            and scope != Scope.rack
            and len(sizes) == 1
            and not spread
            and all(f is None or f % next(iter(sizes)) == 0 for f in figures)
        )
        phased = tuple(sorted((c.gpus_by_phase or {}).items()))
        sig = (
            (
                c.demand,
                c.gpus,
                phased,
                tuple(gpu_types),
                scope,
                storage_racks(scenario, c),
                c.storage_rack_type,
                c.on_power_failure,
                c.cap_ratio,
            )
            if groupable
            else ("alone", c.id)
        )
        if sig not in buckets:
            buckets[sig] = []
            order.append(sig)
        buckets[sig].append(c)
    out: dict[str, ClusterGroup] = {}
    for sig in order:
        members = buckets[sig]
        head = members[0]
        gid = head.id if len(members) == 1 else f"{head.id}+{len(members) - 1}"
        storage = head.storage_rack_type if storage_racks(scenario, head) > 0 else None
        out[gid] = ClusterGroup(
            gid,
            members,
            scenario.scope_of(head),
            scenario.gpu_types_for(head),
            storage,
            spares_needed(scenario, head),
        )
    return out
