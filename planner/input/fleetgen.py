"""Distinct fleets for scale tests (§14): a generated site and, from one seed, clusters that all
differ — sizes, rack types, demands, hop budgets and spread limits.

Clusters are drawn one by one until their GPUs reach ``fill`` × the GPU positions the site offers:
- size log-uniform in [min_gpus, max_gpus], rounded to whole racks of its rack type;
- a building kind by its share of the positions, and its rack types from those that kind's rows
  carry (one, or two of a family: DGX H100 / H200);
- hop budget: one pod (``pod_share``, sizes up to what the least pod of its kind holds of its
  rack type: free positions, rack limit, GPU ports) or one building;
- demand: ``exact`` / ``at_least`` / ``max`` in the stated mix (exact and at-least clusters are
  kept to ``fixed_share`` of the site's GPU positions, so the fleet stays feasible);
- a failure-domain spread limit (``max_share_per_pod``) on ``spread_share`` of building-scoped
  clusters;
- no two clusters alike: a draw that repeats an earlier cluster's size, rack types, demand, hop
  budget and spread limit is drawn again.

The same spec and seed always give the same fleet.
"""

from __future__ import annotations

import math
import random
from typing import Literal

from pydantic import Field

from planner.schema import Float, Id, Int, Site, StrictModel

RACKS_BY_ROW_KW = [  # (the least row rack limit a rack type needs, kW; rack type; GPUs per rack; liquid?)
    (21.4, "grand-teton-h100", 16, False),
    (40.8, "dgx-h100-4", 32, False),
    (40.8, "dgx-h200-4", 32, False),
    (132.0, "gb200-nvl72", 72, True),
]
"""Rack types a generated fleet uses (catalog figures: rated power of each)."""


class FleetSpec(StrictModel):
    """How to draw a fleet of distinct clusters for a generated site."""

    seed: Int = Field(1, ge=0, le=2**31)
    """Random seed: the same spec and seed give the same fleet."""
    fill: Float = Field(0.9, gt=0, le=2)
    """Clusters are drawn until their GPUs reach this share of the site's GPU positions."""
    min_gpus: Int = Field(256, ge=1, le=10_000_000)
    """Smallest cluster, GPUs."""
    max_gpus: Int = Field(16_384, ge=1, le=10_000_000)
    """Largest cluster, GPUs (pod-scoped ones at most a pod's GPU ports)."""
    pod_share: Float = Field(0.5, ge=0, le=1)
    """Share of clusters kept in one pod (max_hops 3); the rest in one building (max_hops 5)."""
    demand_mix: dict[Literal["exact", "at_least", "max"], Float] = Field(
        default_factory=lambda: {"exact": 0.3, "at_least": 0.2, "max": 0.5}
    )
    """Relative weights of the demand kinds."""
    fixed_share: Float = Field(0.5, ge=0, le=1)
    """Exact and at-least clusters stop at this share of the site's GPU positions (later ones become max)."""
    spread_share: Float = Field(0.15, ge=0, le=1)
    """Share of building-scoped clusters with a spread limit (max_share_per_pod 0.5)."""
    objective: Literal["max_gpus", "max_pflops"] = "max_gpus"
    """Objective of the generated scenario."""
    time_limit_s: Float = Field(600, gt=0, le=86_400)
    """Solver time limit of the generated scenario, s."""
    rel_gap: Float = Field(0.01, ge=0, le=1)
    """Relative gap of the generated scenario."""
    shape: Literal["mixed", "pod_exact", "small_and_huge"] = "mixed"
    """How the fleet is drawn: ``mixed`` (the rules of the module docstring); ``pod_exact`` (first
    an exact one-pod job for ``pod_exact_share`` of the pods, each of its own size — 50-95 % of
    the least pod of its kind — and rack-type set, then at-least and as-many-as-fit jobs);
    ``small_and_huge`` (first ``huge_count`` building-scoped jobs of ``huge_min_gpus``..max_gpus,
    then jobs of min_gpus..``small_max_gpus``)."""
    pod_exact_share: Float = Field(0.8, ge=0, le=1)
    """pod_exact: share of the pods given an exact one-pod job."""
    huge_count: Int = Field(4, ge=0, le=1000)
    """small_and_huge: how many huge jobs."""
    huge_min_gpus: Int = Field(8192, ge=1, le=10_000_000)
    """small_and_huge: smallest huge job, GPUs."""
    small_max_gpus: Int = Field(1024, ge=1, le=10_000_000)
    """small_and_huge: largest small job, GPUs."""


def _kinds(site: Site) -> list[tuple[float, list[tuple[str, int, bool]], int, int]]:
    """Building kinds: (row rack limit, usable rack types, GPU positions, pod room in racks and GPU
    ports) by the largest rack type each kind's rows carry. Pod room is the least pod's: free
    positions (less reserved ones and the pod's network rack), its rack limit and its GPU ports."""
    out: dict[tuple[float, bool], list] = {}
    kind_of_pod: dict[str, tuple[float, bool]] = {}
    free: dict[str, int] = {}
    spots = {
        (p.network_rack.row, p.network_rack.position) for b in site.buildings for h in b.halls for p in h.pods
    }
    for b in site.buildings:
        for h in b.halls:
            for r in h.rows:
                if r.network is not None:
                    continue
                key = (r.max_rack_power_kw, r.liquid_loop is not None)
                fits = [
                    (t, g, liq)
                    for need, t, g, liq in RACKS_BY_ROW_KW
                    if need <= r.max_rack_power_kw + 1e-9 and liq == key[1]
                ]
                if not fits:
                    continue
                slot = out.setdefault(key, [key[0], fits, 0, (10**9, 10**9)])
                slot[2] += r.positions * max(g for _, g, _ in fits)
                kind_of_pod[r.pod] = key
                free[r.pod] = (
                    free.get(r.pod, 0)
                    + r.positions
                    - len(set(r.reserved))
                    - sum(1 for (row, _) in spots if row == r.id)
                )
            for p in h.pods:
                if p.id in kind_of_pod:
                    slot = out[kind_of_pod[p.id]]
                    racks = min(free[p.id], p.max_racks or 10**9)
                    slot[3] = (min(slot[3][0], racks), min(slot[3][1], p.max_gpus))
    return [tuple(v) for v in out.values()]  # type: ignore[misc]


def _draw(
    rng: random.Random,
    spec: FleetSpec,
    kinds: list,
    weights: list[int],
    mix: list[tuple[str, float]],
    fixed: int,
    capacity: int,
    n: int,
) -> dict:
    """One cluster drawn by the rules of the module docstring."""
    _, fits, _, (pod_racks, pod_ports) = rng.choices(kinds, weights=weights)[0]
    t, per_rack, _ = rng.choice(fits)
    pod_ports = min(pod_ports, pod_racks * per_rack)  # what the least pod can hold of this type
    types = [t]
    if (
        t.startswith("dgx-")
        and any(f[0].startswith("dgx-") and f[0] != t for f in fits)
        and rng.random() < 0.5
    ):
        types = sorted(f[0] for f in fits if f[0].startswith("dgx-"))
    pod = rng.random() < spec.pod_share
    top = min(spec.max_gpus, pod_ports) if pod else spec.max_gpus
    lo = math.log(spec.min_gpus)
    size = max(
        per_rack,
        int(round(math.exp(rng.uniform(lo, math.log(max(spec.min_gpus, top)))) / per_rack)) * per_rack,
    )
    size = min(size, top // per_rack * per_rack)
    demand = rng.choices([d for d, _ in mix], weights=[w for _, w in mix])[0]
    if demand != "max" and fixed + size > spec.fixed_share * capacity:
        demand = "max"
    c: dict = {
        "id": f"job-{n:04d}",
        "gpus": size,
        "demand": demand,
        "rack_types": types,
        "max_hops": 3 if pod else 5,
    }
    if not pod and rng.random() < spec.spread_share and size >= 2 * per_rack:
        c["max_share_per_pod"] = 0.5  # half of a one-rack cluster would not hold in any pod
    return c


def _signature(c: dict) -> tuple:
    """What makes two clusters alike: size, rack types, demand, hop budget and spread limit."""
    return (c["gpus"], tuple(c["rack_types"]), c["demand"], c["max_hops"], c.get("max_share_per_pod"))


def _pods_by_kind(site: Site, kinds: list) -> list[int]:
    """How many pods each building kind has (pods whose rows that kind's rack types fit)."""
    out = [0] * len(kinds)
    for b in site.buildings:
        for h in b.halls:
            for p in h.pods:
                rows = [r for r in h.rows if r.pod == p.id and r.network is None]
                if not rows:
                    continue
                key = (rows[0].max_rack_power_kw, rows[0].liquid_loop is not None)
                for i, k in enumerate(kinds):
                    if abs(k[0] - key[0]) < 1e-9 and any(f[2] == key[1] for f in k[1]):
                        out[i] += 1
                        break
    return out


def _pod_exact_jobs(rng: random.Random, spec: FleetSpec, site: Site, kinds: list) -> list[dict]:
    """An exact one-pod job for ``pod_exact_share`` of each kind's pods: its own rack type (or the
    DGX pair) and size, 50-95 % of what the least pod of its kind holds of that type."""
    jobs: list[dict] = []
    seen: set[tuple] = set()
    for (_, fits, _, (pod_racks, pod_ports)), pods in zip(kinds, _pods_by_kind(site, kinds), strict=True):
        for _ in range(round(spec.pod_exact_share * pods)):
            for _ in range(REDRAWS):
                t, per_rack, _ = rng.choice(fits)
                types = [t]
                dgx = sorted(f[0] for f in fits if f[0].startswith("dgx-"))
                if t.startswith("dgx-") and len(dgx) > 1 and rng.random() < 0.5:
                    types = dgx
                room = min(pod_ports, pod_racks * per_rack) // per_rack
                racks = max(1, int(room * rng.uniform(0.5, 0.95)))
                c = {
                    "id": "",
                    "gpus": racks * per_rack,
                    "demand": "exact",
                    "rack_types": types,
                    "max_hops": 3,
                }
                if _signature(c) not in seen:
                    break
            seen.add(_signature(c))
            c["id"] = f"job-{len(jobs) + 1:04d}"
            jobs.append(c)
    return jobs


def _huge_jobs(rng: random.Random, spec: FleetSpec, kinds: list) -> list[dict]:
    """``huge_count`` as-many-as-fit jobs of one building, huge_min_gpus..max_gpus GPUs, each of a
    kind picked by its share of the positions."""
    jobs = []
    for n in range(spec.huge_count):
        _, fits, _, _ = rng.choices(kinds, weights=[k[2] for k in kinds])[0]
        t, per_rack, _ = rng.choice(fits)
        lo = math.log(min(spec.huge_min_gpus, spec.max_gpus))
        size = int(math.exp(rng.uniform(lo, math.log(spec.max_gpus))) // per_rack) * per_rack
        jobs.append(
            {
                "id": f"job-{n + 1:04d}",
                "gpus": max(per_rack, size),
                "demand": "max",
                "rack_types": [t],
                "max_hops": 5,
            }
        )
    return jobs


MAX_CLUSTERS = 100_000
"""Most clusters one fleet draws."""
REDRAWS = 50
"""Draws in a row that may repeat an earlier cluster before the spec is refused."""


def _check_room(spec: FleetSpec, kinds: list, capacity: int) -> None:
    """Refuse, before drawing, a spec whose distinct clusters cannot reach the fill: at most
    Σ over rack-type sets of (whole-rack sizes in min_gpus..max_gpus) × 3 demands × 2 hop budgets
    × 2 spread limits differ, each of at most max_gpus GPUs."""
    sizes = 0
    for _, fits, _, _ in kinds:
        for _, per_rack, _ in fits:
            lo = max(1, math.ceil(spec.min_gpus / per_rack))
            hi = max(lo, spec.max_gpus // per_rack)
            sizes += 2 * (hi - lo + 1)  # one type, or the DGX pair: two sets at most per type
    most = sizes * 3 * 2 * 2
    need = math.ceil(spec.fill * capacity / max(1, spec.max_gpus))
    if most < need:
        raise ValueError(
            f"at most {most:,} distinct clusters exist between min_gpus {spec.min_gpus:,} and max_gpus "
            f"{spec.max_gpus:,} on these rack types, and filling {spec.fill:g} × {capacity:,} GPU positions "
            f"takes at least {need:,} of up to {spec.max_gpus:,} GPUs: widen min_gpus..max_gpus or lower fill"
        )


def generate_fleet(site: Site, spec: FleetSpec, site_file: str, name: Id) -> dict:
    """Scenario data (module docstring) for ``site``, which the scenario names as ``site_file``."""
    rng = random.Random(spec.seed)
    kinds = _kinds(site)
    if not kinds:
        raise ValueError("the site has no rows any fleet rack type fits")
    capacity = sum(k[2] for k in kinds)
    weights = [k[2] for k in kinds]
    mix = [(d, w) for d, w in spec.demand_mix.items() if w > 0] or [("max", 1.0)]
    clusters: list[dict] = []
    seen: set[tuple] = set()
    if spec.shape == "pod_exact":
        clusters = _pod_exact_jobs(rng, spec, site, kinds)
        mix = [(d, w) for d, w in mix if d != "exact"] or [("max", 1.0)]
    elif spec.shape == "small_and_huge":
        clusters = _huge_jobs(rng, spec, kinds)
        spec = spec.model_copy(update={"max_gpus": min(spec.max_gpus, spec.small_max_gpus)})
    seen = {_signature(c) for c in clusters}
    total = sum(c["gpus"] for c in clusters)
    fixed = sum(c["gpus"] for c in clusters if c["demand"] != "max")
    if spec.shape == "mixed":
        _check_room(spec, kinds, capacity)
    while total < spec.fill * capacity and len(clusters) < MAX_CLUSTERS:
        for _ in range(REDRAWS):
            c = _draw(rng, spec, kinds, weights, mix, fixed, capacity, len(clusters) + 1)
            sig = _signature(c)
            if sig not in seen:
                break
        else:
            raise ValueError(
                f"after {len(clusters):,} distinct clusters ({total:,} of the "
                f"{spec.fill * capacity:,.0f} GPUs to fill) {REDRAWS} draws in a row repeated one: the spec "
                "leaves too few ways to differ; "
                "widen min_gpus..max_gpus, mix more demands or lower fill"
            )
        seen.add(sig)
        size, demand = c["gpus"], c["demand"]
        clusters.append(c)
        total += size
        if demand != "max":
            fixed += size
    return {
        "name": name,
        "description": f"{len(clusters)} distinct clusters, {total:,} GPUs wanted on "
        f"{capacity:,} GPU positions (seed {spec.seed})",
        "site": site_file,
        "clusters": clusters,
        "objective": spec.objective,
        "solver": {"name": "highs", "time_limit_s": spec.time_limit_s, "rel_gap": spec.rel_gap},
    }
