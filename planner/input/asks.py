"""What a cluster asks of the site for its reliability (§11): interruption rates of its units,
checkpoint figures and goodput, the storage racks its asks imply, and its hot spares.

Used wherever storage racks and spares are placed or counted (model, first-fit, plan figures);
it depends on the schema only. The verifier re-derives the same figures on its own
(:mod:`planner.verifier.asks_recount`).

**Interruptions.** Each cause has a rate per unit (GPU, server, link, rack), its count over the
reference window divided by (hours × units of the reference cluster); a cluster's rate is
Σ causes rate × its units, and MTBF = 1 / rate (h); a server counts its type's
``server_fault_share`` of the reference's server (a 2-GPU tray carries a fraction of an 8-GPU
host's parts). Default: Llama 3 Table 5 (419 unexpected
interruptions in 54 days on 16,384 GPUs), so a 16,384-GPU Grand Teton cluster reproduces the
paper's 54 · 24 / 419 = 3.09 h.

**Checkpoints and goodput** (first order, Young 1974 / Daly 2006): checkpoint write time
C = size / write bandwidth of the cluster's storage racks; interval τ = √(2 · MTBF · C);
goodput = 1 − C/τ − (τ/2 + R)/MTBF = 1 − √(2C/MTBF) − R/MTBF (R: restart time). A goodput
target G therefore needs C ≤ MTBF/2 · (1 − R/MTBF − G)², hence a write bandwidth, hence storage
racks.

**NVLink domains** (§19): where a rack type states its domain (catalog ``nvlink_domain_gpus``),
the domain is the failure and repair unit. Each fault that needs repair takes one server of its
domain out for the cluster's repair time T (a rack-scale fault: the whole domain); a domain with
s hot-spare trays (cluster ``domain_spare_servers``) stays in the job while at most s trays are
out, so a domain is out of service with probability
q = 1 − P(Poisson(λ_s · T) ≤ s) · e^(−λ_w · T) (λ_s: its per-server faults per hour, server-scale
causes weighted by ``server_fault_share``; λ_w: its share of its rack's rack-scale faults; units
under repair are Poisson, M/G/∞). Spare racks stand in for domains out: with N domains in the job
and k on spare racks, the domains short are X ~ Poisson(Σ q) over all N + k, and E[(X − k)⁺] of
them are missing. The share of the job's GPUs in service is (G − idle − (D − s·g) · E[(X − k)⁺]) / G
(G: the job's GPUs; idle: the spare trays' GPUs; D − s·g: a domain's working GPUs), and it
multiplies the cluster's goodput. Rack types without a domain leave it at 1.

**Spares** (Poisson): racks fail independently at the per-rack rate λ and are repaired in T
hours, so racks down at once ~ Poisson(N · λ · T); the spares are the least s with
P(down ≤ s) ≥ the availability target.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from planner.enums import Scale
from planner.schema import Cluster, PlacedRack, RackType, Reliability, Scenario

# ------------------------------------------------------------------ interruption rates


def unit_rates(rel: Reliability) -> list[tuple[str, Scale, frozenset[str] | None, float]]:
    """(cause, scale, link classes or None, rate per unit-hour) of every cause."""
    ref = rel.reference
    if rel.node_failures_per_1000_node_days is not None:
        return [("node-failure", Scale.server, None, rel.node_failures_per_1000_node_days / 1000 / 24)]
    hours = ref.days * 24
    units = {
        Scale.gpu: ref.gpus,
        Scale.server: ref.gpus / ref.gpus_per_server,
        Scale.rack: ref.gpus / ref.gpus_per_rack,
        Scale.link: ref.gpus * ref.links_per_gpu,
    }
    return [
        (
            c.id,
            c.scale,
            frozenset(c.link_classes) if c.link_classes else None,
            c.count / (hours * units[c.scale]),
        )
        for c in rel.causes
    ]


@dataclass
class Units:
    """What can fail in a set of GPU racks."""

    gpus: int = 0
    servers: float = 0
    """Servers, each weighted by its type's ``server_fault_share`` (server-scale causes count these)."""
    racks: int = 0
    links: dict[str | None, int] | None = None

    def add(self, t: RackType, link_class: str | None, n: int = 1) -> None:
        self.gpus += t.gpus * n
        self.servers += t.servers_per_rack * t.server_fault_share * n
        self.racks += n
        links = (t.links_per_server * t.servers_per_rack + t.links_per_rack) * n
        if self.links is None:
            self.links = {}
        self.links[link_class] = self.links.get(link_class, 0) + links


def rate_per_hour(rel: Reliability, u: Units) -> float:
    """Σ causes rate × units: interruptions per hour."""
    total = 0.0
    for _, scale, classes, r in unit_rates(rel):
        if scale == Scale.gpu:
            total += r * u.gpus
        elif scale == Scale.server:
            total += r * u.servers
        elif scale == Scale.rack:
            total += r * u.racks
        else:
            total += r * sum(n for c, n in (u.links or {}).items() if classes is None or c in classes)
    return total


def units_of(scenario: Scenario, racks: Iterable[PlacedRack]) -> Units:
    """Units of the GPU racks among ``racks``."""
    types = scenario.catalog.by_id()
    u = Units(links={})
    for r in racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus:
            u.add(t, r.link_class)
    return u


def cluster_jobs(scenario: Scenario, racks: Iterable[PlacedRack]):
    """Per cluster: (cluster, its racks, units of its job's GPU racks, interruptions per hour, its
    storage rack types, their write GB/s, checkpoint size GB or None). Hot spares stand idle: they
    add no interruptions."""
    types = scenario.catalog.by_id()
    by_cluster: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        by_cluster[r.cluster].append(r)
    for c in scenario.clusters:
        mine = by_cluster.get(c.id, [])
        u = units_of(scenario, [r for r in mine if not r.spare])
        store = [
            types[r.rack_type]
            for r in mine
            if r.rack_type in types
            and not types[r.rack_type].gpus
            and types[r.rack_type].storage_write_gb_per_s > 0
        ]
        size = c.checkpoint_gb_per_gpu * u.gpus if c.checkpoint_gb_per_gpu is not None and u.gpus else None
        yield (
            c,
            mine,
            u,
            rate_per_hour(scenario.reliability, u),
            store,
            sum(t.storage_write_gb_per_s for t in store),
            size,
        )


def planned_units(scenario: Scenario, cluster: Cluster, gpus: int | None = None) -> Units | None:
    """Units of a cluster before placement: its GPUs in racks of its first GPU rack type."""
    types = scenario.catalog.by_id()
    kinds = [types[t] for t in scenario.gpu_types_for(cluster) if types[t].gpus]
    want = gpus if gpus is not None else cluster.gpus
    if not kinds or not want:
        return None
    t = kinds[0]
    u = Units(links={})
    u.add(t, None, math.ceil(want / t.gpus))
    return u


# ------------------------------------------------------------------ checkpoints, goodput, storage, spares


@dataclass
class Goodput:
    """First-order checkpoint figures of a cluster (module docstring); times in hours."""

    mtbf_h: float
    checkpoint_h: float | None
    interval_h: float | None
    goodput: float | None
    in_service: float | None = None
    """Share of the job's GPUs in service (NVLink domains, module docstring); None: not counted."""

    def with_domains(self, share: float | None) -> Goodput:
        """These figures with the domains' share in service multiplied into the goodput."""
        if share is None or self.goodput is None:
            return self
        return Goodput(self.mtbf_h, self.checkpoint_h, self.interval_h, self.goodput * share, share)


def goodput(
    mtbf_h: float,
    size_gb: float | None,
    write_gb_per_s: float,
    restart_h: float,
    stall_h: float | None = None,
) -> Goodput:
    """C = size / bandwidth (or ``stall_h``, an in-memory or peer checkpoint's stall, without write
    bandwidth), τ = √(2 · MTBF · C), goodput = 1 − C/τ − (τ/2 + R)/MTBF (≥ 0); R the mean restart
    over the interruptions."""
    c = size_gb / write_gb_per_s / 3600 if size_gb is not None and write_gb_per_s > 0 else stall_h
    if c is None or not math.isfinite(mtbf_h):
        stated = size_gb is not None or stall_h is not None  # no failures: a checkpointing job loses nothing
        return Goodput(mtbf_h, None, None, None if math.isfinite(mtbf_h) or not stated else 1.0)
    tau = math.sqrt(2 * mtbf_h * c)
    g = 1 - c / tau - (tau / 2 + restart_h) / mtbf_h if tau > 0 else 1 - restart_h / mtbf_h
    return Goodput(mtbf_h, c, tau, max(0.0, g))


def write_needed_gb_per_s(mtbf_h: float, size_gb: float, restart_h: float, target: float) -> float | None:
    """Write bandwidth for a goodput target: C = MTBF/2 · (1 − R/MTBF − G)², bandwidth = size / C;
    None when the restart time alone already costs more than 1 − G."""
    slack = 1 - restart_h / mtbf_h - target
    if slack <= 0:
        return None
    c_h = mtbf_h / 2 * slack * slack
    return size_gb / (c_h * 3600)


def storage_needs(scenario: Scenario, cluster: Cluster) -> tuple[int, list[str]]:
    """Storage racks a cluster needs (its ``storage_racks`` or more, for its asks) and why."""
    types = scenario.catalog.by_id()
    st = types.get(cluster.storage_rack_type)
    need = cluster.storage_racks
    why: list[str] = []
    if st is None:
        return need, why
    if cluster.storage_pb is not None and st.storage_capacity_pb > 0:
        n = math.ceil(cluster.storage_pb / st.storage_capacity_pb - 1e-9)
        why.append(f"{cluster.storage_pb:g} PB: {n} racks of {st.storage_capacity_pb:g} PB")
        need = max(need, n)
    gbps = cluster.storage_write_gb_per_s
    if cluster.goodput_target is not None:
        u = planned_units(scenario, cluster)
        rate = rate_per_hour(scenario.reliability, u) if u else 0.0
        if rate > 0:
            bw = write_needed_gb_per_s(
                1 / rate,
                cluster.checkpoint_gb_per_gpu * cluster.gpus,
                cluster.restart_min / 60,
                cluster.goodput_target,
            )
            if bw is not None:
                why.append(f"goodput {cluster.goodput_target:g} at MTBF {1 / rate:.2f} h: {bw:,.1f} GB/s")
                gbps = max(gbps or 0.0, bw)
    if gbps and st.storage_write_gb_per_s > 0:
        n = math.ceil(gbps / st.storage_write_gb_per_s - 1e-9)
        why.append(f"{gbps:,.1f} GB/s: {n} racks of {st.storage_write_gb_per_s:g} GB/s")
        need = max(need, n)
    return need, why


def goodput_reachable(scenario: Scenario, cluster: Cluster) -> str | None:
    """Why a cluster's goodput target cannot be met by any storage (restart time alone too long), or None."""
    if cluster.goodput_target is None:
        return None
    u = planned_units(scenario, cluster)
    rate = rate_per_hour(scenario.reliability, u) if u else 0.0
    if rate <= 0:
        return None
    mtbf = 1 / rate
    if (
        write_needed_gb_per_s(
            mtbf,
            cluster.checkpoint_gb_per_gpu * cluster.gpus,
            cluster.restart_min / 60,
            cluster.goodput_target,
        )
        is None
    ):
        best = 1 - cluster.restart_min / 60 / mtbf
        return (
            f"goodput {cluster.goodput_target:g} is out of reach: with MTBF {mtbf:.2f} h a restart of "
            f"{cluster.restart_min:g} min "
            f"alone leaves at most {best:.4f}"
        )
    return None


def poisson_cdf(mean: float, s: int) -> float:
    """P(Poisson(mean) ≤ s)."""
    term = math.exp(-mean)
    total = term
    for x in range(1, s + 1):
        term *= mean / x
        total += term
    return min(1.0, total)


def expected_excess(mean: float, k: int) -> float:
    """E[(X − k)⁺] for X ~ Poisson(mean): mean − k + Σ_{x<k} (k − x) P(X = x) (each P(X = x) in
    logarithms: e^(−mean) underflows beyond a mean of ~745 domains out)."""
    if mean <= 0:
        return 0.0
    below = sum((k - x) * math.exp(x * math.log(mean) - mean - math.lgamma(x + 1)) for x in range(k))
    return max(0.0, mean - k + below)


def _domain_out(rel: Reliability, t: RackType, link_class: str | None, spares: int, repair_h: float) -> float:
    """q: probability one NVLink domain of rack type t is out of its job (module docstring)."""
    d = t.nvlink_domain_gpus
    per_server = d // t.gpus_per_server
    srv = wide = 0.0
    repairs = [c.repair for c in rel.causes] if rel.node_failures_per_1000_node_days is None else [True]
    for (_, scale, classes, rate), repair in zip(unit_rates(rel), repairs, strict=True):
        if not repair:
            continue
        if scale == Scale.gpu:
            srv += rate * d
        elif scale == Scale.server:
            srv += rate * per_server * t.server_fault_share
        elif scale == Scale.link:
            srv += rate * t.links / t.domains if classes is None or link_class in classes else 0.0
        else:
            wide += rate / t.domains
    return 1 - poisson_cdf(srv * repair_h, spares) * math.exp(-wide * repair_h)


def domain_in_service(scenario: Scenario, cluster: Cluster, racks: Iterable[PlacedRack]) -> float | None:
    """Share of a cluster's job GPUs in service with NVLink domains as the failure and repair unit
    (module docstring); None when none of its GPU racks states a domain."""
    types = scenario.catalog.by_id()
    kinds: dict[tuple[str, str | None, bool], int] = defaultdict(int)
    for r in racks:
        if r.rack_type in types and types[r.rack_type].gpus:
            kinds[r.rack_type, r.link_class, r.spare] += 1
    s = cluster.domain_spare_servers
    gpus = idle = job_domains = spare_domains = working = 0
    mean = 0.0
    for (tid, lc, spare), n in kinds.items():
        t = types[tid]
        gpus += 0 if spare else n * t.gpus
        if not t.nvlink_domain_gpus:
            continue
        mean += n * t.domains * _domain_out(scenario.reliability, t, lc, s, cluster.repair_hours)
        if spare:
            spare_domains += n * t.domains
        else:
            job_domains += n * t.domains
            idle += n * t.domains * s * t.gpus_per_server
            working = max(working, t.nvlink_domain_gpus - s * t.gpus_per_server)
    if not job_domains or not gpus:
        return None
    return max(0.0, (gpus - idle - working * expected_excess(mean, spare_domains)) / gpus)


def poisson_quantile(mean: float, p: float) -> int:
    """Least s with P(Poisson(mean) ≤ s) ≥ p."""
    if mean <= 0:
        return 0
    term = math.exp(-mean)
    cdf = term
    s = 0
    while cdf < p - 1e-15 and s < 1_000_000:
        s += 1
        term *= mean / s
        cdf += term
    return s


def spares_needed(scenario: Scenario, cluster: Cluster) -> int:
    """Hot-spare racks for a cluster's availability target (module docstring); 0 without one."""
    if cluster.spare_availability is None:
        return 0
    u = planned_units(scenario, cluster)
    if u is None or u.racks == 0:
        return 0
    per_rack = rate_per_hour(scenario.reliability, u) / u.racks
    return poisson_quantile(u.racks * per_rack * cluster.repair_hours, cluster.spare_availability)


def storage_racks(scenario: Scenario, cluster: Cluster) -> int:
    """Storage racks a cluster gets: its ``storage_racks``, or more for its storage asks (PB, write
    GB/s, goodput target; :func:`storage_needs`)."""
    if (
        cluster.storage_pb is None
        and cluster.storage_write_gb_per_s is None
        and cluster.goodput_target is None
    ):
        return cluster.storage_racks
    return storage_needs(scenario, cluster)[0]
