"""Designed fabrics (§13) in the optimiser: a design choice per cluster, switches per tier as
integers, every fabric link priced and powered by its class, and the switches in network racks
placed at network rows, their power on those rows' feeds and their heat in those rows' zones
(sizing rules: :mod:`planner.rules.fabric_sizing`)."""

from __future__ import annotations

import math
from collections import defaultdict

import pulp

from planner.enums import LimitKind, Scope
from planner.model.core import Model
from planner.model.fabric_racks import place_network_racks, serving
from planner.model.keys import LimitKey, lp_name
from planner.model.network import add_cluster_constraints
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare
from planner.model.space import relax_positions
from planner.rules.fabric_sizing import (
    building_km,
    km_between,
    latency_us,
    leaf_down_of,
    max_endpoints,
    ports,
    rail_width,
)


def relax_region_bandwidth(
    data: dict, scenario, idents: set[str], step: float
) -> tuple[list[str], float | None]:
    """Each named building's bandwidth to the region tier × (1 + step). No price: more fibre and
    tier ports are a network build the planner does not cost here."""
    tbps = (data.get("region_tier") or {}).get("building_tbps", {})
    steps = []
    for b in sorted(idents & set(tbps)):
        add = tbps[b] * step
        tbps[b] += add
        steps.append(f"{b} +{add:,.1f} Tb/s to the region tier")
    return steps, None


def _position_links(
    m: Model,
    keys: list,
    per_rack: dict[str, int],
    attr: str,
    y: pulp.LpVariable | None,
    name: str,
    positions: int,
) -> pulp.LpAffineExpression:
    """Links whose class depends on where the rack stands (cabled GPU links, rack uplinks):
    Σ count · links per rack · the class's cost (USD) or power (kW) at the count's position class.
    For one design among several (``y``): a variable ≥ that sum when y = 1, ≥ 0 otherwise."""
    lcs = m.scenario.site.fabric.link_classes
    by_id = {lk.id: lk for lk in lcs}
    longest = max(lcs, key=lambda lk: lk.max_length_m)
    scale = 1.0 if attr == "cost_usd_per_link" else 0.001
    terms = [
        (
            var,
            per_rack[key.rack_type]
            * scale
            * getattr(by_id.get(m.classes[key.cls].link.get(key.rack_type) or longest.id, longest), attr),
        )
        for key, var in keys
    ]
    if y is None:
        return pulp.LpAffineExpression(terms)
    v = m.var(name)
    m.add(
        v - pulp.LpAffineExpression(terms) + positions * max((co for _, co in terms), default=0.0) * (1 - y)
        >= 0,
        name,
    )
    return pulp.LpAffineExpression(v)


@declare(
    "fabric",
    needs=(add_count_variables, add_cluster_constraints),  # a scoped cluster's homes (z) say where it stands
    limits={
        "fabric_size": LimitRows(LimitKind.fabric),
        "space": LimitRows(LimitKind.row_positions, relax_positions),
        "region_bw": LimitRows(LimitKind.region_bandwidth, relax_region_bandwidth),
    },
)
def add_fabric_constraints(m: Model) -> None:
    """Designed fabrics (§13, :mod:`planner.rules.fabric_sizing`), per cluster c on designs D_c (a choice
    y[c,d]
    ∈ {0,1}, Σ_d y = 1, when there are several). x[d,t,p]: c's GPU racks of type t in pod p on
    design d (its racks there when D_c is one design; else Σ_d x[d,t,p] = its racks of t in p,
    x[d,t,p] ≤ positions_p · y[c,d]); endpoints E_{d,b} = Σ_{p in b} x·gpus_t·nics ≤ the design's
    largest build, per building b (one tree per building).

    Per building b: leaves one per GPU rack when in the racks; else per pod p integer groups
    q[d,p] with w·q ≥ E_{d,p} / d₁ (w the rail width). Spines S_{d,b} ≥ U_b / k₂ (2 tiers) or
    U_b / d₂ (3 tiers), U_b the leaves' uplinks, or for the largest build U_b = 2^j·u₁ with binaries
    choosing the power of two 2^j ≥ leaves; cores C_{d,b} ≥ S·u₂ / k₃. Links by class: GPU to leaf
    (in-rack copper, or cabled at each rack's position class), leaf to spine (at the rack's class
    when leaves are in the racks, else the shortest), spine to core (the longest). Capex and kW:
    switches not in GPU racks and every link.

    Buildings: u[c,b] ∈ {0,1} marks the buildings c stands in (u ≤ racks in b ≤ positions_b · u) when
    its hop budget lets it leave one; without a region tier Σ_b u ≤ 1. With one, σ_c ∈ {0,1} ≥
    (Σ_b u − 1)/(B − 1), ≤ Σ_b u / 2, marks spanning; then per building ℓ_{d,b} ≥ E_{d,b}·g_e/(r·g_R) − M(1 −
    σ)
    region links (fibre of b's distance to the tier's building, optics of the longest class),
    border switches β_{d,b} ≥ ℓ/k_top in b's top tier, tier switches R_d ≥ Σ_b ℓ / k_R in the tier's
    building; buildings whose fibre delay through the tier exceeds max_latency_us never pair:
    u[b₁] + u[b₂] ≤ 1.

    Network racks: integer s[d,k,t] tier-t switches in network row k and racks r[d,k,t] ≥ s / cap,
    cap(k,t) = min(⌊units ÷ height_t⌋, ⌊row rack kW ÷ switch kW_t⌋); leaves of pod p in rows
    serving p (a row serving several pods splits its leaves between them, a[p,k] ≥ 0,
    Σ_p a[p,k] ≤ s[k]), spines and cores of building b in b's rows serving c's pods, tier switches
    in the tier building's network rows: Σ over those rows of s ≥ the need. The links' transceiver kW
    τ[c,k] ≥ 0 with Σ_k τ ≥ the fabric's optics kW; per row Σ_t s·kW_t + τ ≤ row rack kW · Σ r;
    Σ r ≤ positions of row k. Switch kW and τ load row k's feeds and air zone. Bandwidth to the
    tier: Σ_{c,d} ℓ_{c,d,b} · g_R / 1000 ≤ the tier's Tb/s for building b, named
    ``region_bw(b)``. Named ``fabric_leaves(c,d,pod)``, ``net_racks(c,d,t,row)``, ``space(row@net)``,
    ``region_links(c,d,b)``.

    Phases: all of the above once per phase p this model decides (names end in the phase), over
    the racks placed by p (retired ones keep their switches); the design choice y and the buildings
    u, σ are one for every phase, from the horizon's racks (a job spanning by then is joined by the
    tier from its first racks); network switches, racks and each row's optics share stay once stood
    (s_p ≥ s_{p−1}, r_p ≥ r_{p−1}, τ_p ≥ τ_{p−1}: a row's load only grows); each phase's switch
    and transceiver kW load that phase's feeds, zones and power arrival; the largest build, latency
    and switch supply are stated at the horizon, where the fabric is largest; capex and kW in the
    objective are the horizon's. A building's share of a job spanning the region (``region_share_km``) has
    σ = 1, that fibre, and no tier switches here."""
    if not m.scenario.fabrics:
        return
    picks: dict[str, dict[str, pulp.LpVariable]] = {}  # cluster → its design choice, one for all phases
    spans: dict[str, tuple] = {}  # cluster → (σ, building → u) at the horizon, one for all phases
    tier = m.scenario.region_tier
    f = None
    for p in range(m.from_phase, m.horizon + 1):
        f = _Fabrics(m, p, picks, spans)
        for g in m.groups.values():
            if g.head.fabrics:
                f.cluster(g)
        for rid, vs in f.in_row.items():
            m.add_limit(
                LimitKey("space", f"{rid}@net", phase=m.ph(p)),
                pulp.lpSum(vs),
                len(m.network_rows[rid]),
                "positions",
            )
        for b, links in sorted(f.links_from.items()):
            if tier is not None and b in tier.building_tbps:
                tbps = pulp.lpSum(links) * (f.sw[tier.switch].port_gbps / 1000)
                m.add_limit(LimitKey("region_bw", b, phase=m.ph(p)), tbps, tier.building_tbps[b], "Tb/s")
        m.fabric_rows[p] = dict(f.rows)
    assert f is not None
    for model, needs in f.switch_need.items():  # by the horizon: the most that ever stands
        m.switch_need[model].extend(needs)
    m.fabric_capex = pulp.lpSum(f.capex)
    m.fabric_kw = pulp.lpSum(f.power)


class _Design:
    """One cluster on one design, as it is built up: the design, its choice variable, ports, links
    per rack, and the cost, switch-kW and transceiver-kW terms and switch needs it adds."""

    def __init__(self, d, y, p, leaf_down, per_rack):
        self.d, self.y, self.p, self.leaf_down, self.per_rack = d, y, p, leaf_down, per_rack
        self.cost: list = []
        self.watts: list = []  # switches (not in GPU racks), kW
        self.optics: list = []  # the links' transceivers, kW
        self.region_lk: list = []


class _Fabrics:
    """The designed-fabric rows of a model (:func:`add_fabric_constraints`), cluster by cluster,
    design by design, building by building, in that order (the rows' order is the model's)."""

    def __init__(self, m: Model, p: int, picks: dict, spans: dict):
        s = m.scenario
        self.m, self.s, self.p, self.picks, self.spans = m, s, p, picks, spans
        self.sfx = m.sfx(p)
        self.last = p == m.horizon
        self.switch_need: dict[str, list] = defaultdict(list)
        self.types = s.catalog.by_id()
        self.sw = s.catalog.switch_by_id()
        self.by_id = {d.id: d for d in s.fabrics}
        lcs = sorted(s.site.fabric.link_classes, key=lambda c: c.max_length_m)
        self.shortest, self.longest = lcs[0], lcs[-1]
        self.lcs_by = {lk.id: lk for lk in s.site.fabric.link_classes}
        self.region = s.region_tier
        self.at = building_km(s)
        self.pod_size: dict[str, int] = defaultdict(int)
        for k, cls in m.classes.items():
            self.pod_size[m.ix.rows[k.row].row.pod] += cls.size
        self.building_of_pod = {pid: m.ix.halls[hid][0] for pid, hid in m.ix.pod_hall.items()}
        self.total_positions = sum(self.pod_size.values())
        self.rows_for = serving(m)
        self.rows: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        self.in_row: dict[str, list[pulp.LpVariable]] = defaultdict(list)
        self.capex: list = []
        self.power: list = []
        self.links_from: dict[str, list[pulp.LpVariable]] = defaultdict(list)  # building → its region links

    def name(self, *parts) -> str:
        """A row or variable name with this phase's suffix."""
        return lp_name(*parts, *self.sfx)

    def cluster(self, g) -> None:
        """One cluster group's fabric: its design choice, each design's tiers, its network racks."""
        m, c = self.m, g.head
        designs = [self.by_id[d] for d in c.fabrics]
        self.keys = [
            (key, var)
            for key, var in m.counts_of(g.id)
            if self.types[key.rack_type].gpus and not key.role and m.tl.at(key.phase) <= self.p
        ]  # racks placed by this phase (retired ones keep their switches: they stay to the horizon)
        self.installed = self._installed(c)
        if not self.keys and not self.installed:
            return
        self.kinds = sorted({key.rack_type for key, _ in self.keys} | {t for t, _ in self.installed})
        here: dict[tuple[str, str], list] = defaultdict(list)  # (type, pod) → counts (installed: numbers)
        for key, var in self.keys:
            here[key.rack_type, m.ix.rows[key.cls.row].row.pod].append(var)
        for (t, pod), n in self.installed.items():
            here[t, pod].append(n)
        self.here = here
        self.size = dict(self.pod_size)  # racks a pod may hold: free positions and installed racks
        for (_, pod), n in self.installed.items():
            self.size[pod] = self.size.get(pod, 0) + n
        self.pods = sorted({pod for _, pod in here})
        self.bldgs = sorted({self.building_of_pod[p] for p in self.pods})
        spanning, present = self._where(g)
        self.spanning = spanning
        ys, self.x = self._choice(c, designs)
        self.needs: list[
            tuple[str, int, list[str], pulp.LpAffineExpression, str]
        ] = []  # (design, tier, rows, need, what: a pod for leaves, else a building or the region)
        optics_c: list = []
        for d in designs:
            one = self._design(c, d, ys.get(d.id))
            self.capex += one.cost
            self.power += one.watts + one.optics
            optics_c += one.optics
        place_network_racks(
            m,
            c.id,
            designs,
            self.needs,
            pulp.lpSum(optics_c),
            self.rows,
            self.in_row,
            present,
            spanning,
            self.p,
        )

    def _installed(self, c) -> dict[tuple[str, str], int]:
        """(type, pod) → the cluster's GPU racks installed there (a rolling plan's earlier phases, or
        a brownfield plan's): its fabric is sized for them too."""
        out: dict[tuple[str, str], int] = defaultdict(int)
        for r in self.s.existing:
            if r.cluster == c.id and not r.spare and self.types[r.rack_type].gpus and r.row in self.m.ix.rows:
                out[r.rack_type, self.m.ix.rows[r.row].row.pod] += 1
        return out

    def _installed_links(self, c, per_rack: dict[str, int], attr: str) -> float:
        """Cost (USD) or power (kW) of the installed racks' cabled links, each at its rack's class."""
        scale = 1.0 if attr == "cost_usd_per_link" else 0.001
        total = 0.0
        for r in self.s.existing:
            if r.cluster == c.id and not r.spare and r.rack_type in per_rack:
                lk = self.lcs_by.get(r.link_class or "", self.longest)
                total += per_rack[r.rack_type] * getattr(lk, attr)
        return total * scale

    def _where(self, g) -> tuple:
        """(σ, building → u) of the cluster at the horizon, made once for every phase: a job that
        spans buildings by the horizon sends region links up from its first racks. One building's
        share of a spanning job (``region_share_km``) spans: σ = 1."""
        c = g.head
        if c.id in self.spans:
            return self.spans[c.id]
        if c.region_share_km is not None and self.region is not None:
            self.spans[c.id] = (1, {})
            return self.spans[c.id]
        m = self.m
        here: dict[tuple[str, str], list] = defaultdict(list)
        for key, var in m.counts_of(g.id):
            if self.types[key.rack_type].gpus and not key.role:
                here[key.rack_type, m.ix.rows[key.cls.row].row.pod].append(var)
        for (t, pod), n in self.installed.items():
            here[t, pod].append(n)
        bldgs = sorted({self.building_of_pod[pod] for _, pod in here})
        spanning, present = _buildings(m, c.id, g.scope, bldgs, here, self.building_of_pod, self.size)
        if not present and len(bldgs) > 1 and g.scope in (Scope.pod, Scope.building):
            present = self._homed(g, bldgs)  # homed by the scope binaries
        self._stay_home(c, present)
        self.spans[c.id] = (spanning, present)
        return spanning, present

    def _stay_home(self, c, present: dict) -> None:
        """A cluster whose network stands already (a rolling plan's earlier phases) in one building
        stays there: spanning later would need region links from its first racks, which stand."""
        if not any(nr.cluster == c.id for nr in self.m.installed_network):
            return
        home = {self.building_of_pod[pod] for _, pod in self.installed}
        if len(home) != 1:
            return
        for b, u in present.items():
            if b not in home and isinstance(u, pulp.LpVariable):
                self.m.add(u <= 0, lp_name("stays_home", c.id, b))

    def _homed(self, g, bldgs: list[str]) -> dict:
        """Building → the members of a pod- or building-scoped group homed there."""
        return {
            b: pulp.lpSum(
                z
                for key, z in self.m.z.items()
                if key.group == g.id
                and (
                    key.scope == b if g.scope == Scope.building else self.building_of_pod.get(key.scope) == b
                )
            )
            for b in bldgs
        }

    def _choice(self, c, designs) -> tuple[dict, dict]:
        """x[d,t,p]: the cluster's racks of type t in pod p on design d; with several designs, the
        choice y[c,d] (Σ_d y = 1) and x[d,t,p] ≤ positions_p · y[c,d], Σ_d x = the racks there."""
        m = self.m
        ys: dict[str, pulp.LpVariable] = {}
        x: dict[tuple[str, str, str], pulp.LpAffineExpression] = {}
        if len(designs) == 1:
            for (t, pod), vs in self.here.items():
                x[designs[0].id, t, pod] = pulp.lpSum(vs)
            return ys, x
        ys = self.picks.get(c.id) or {}
        if not ys:  # one choice for every phase
            ys = {d.id: m.var(lp_name("fabric_pick", c.id, d.id), 0, 1, integer=True) for d in designs}
            m.fabric_pick.update({(c.id, d): y for d, y in ys.items()})
            m.add(pulp.lpSum(ys.values()) == 1, lp_name("fabric_one", c.id))
            for nr in m.installed_network:  # a design already standing is the one built on
                if nr.cluster == c.id and nr.design in ys:
                    m.add(ys[nr.design] >= 1, lp_name("fabric_standing", c.id, nr.design))
                    break
            self.picks[c.id] = ys
        for (t, pod), vs in self.here.items():
            parts = []
            room = self.size.get(pod, 0)
            for d in designs:
                v = m.var(self.name("fabric_racks", c.id, d.id, t, pod))
                m.add(v - room * ys[d.id] <= 0, self.name("fabric_racks_on", c.id, d.id, t, pod))
                x[d.id, t, pod] = pulp.LpAffineExpression(v)
                parts.append(v)
            m.add(pulp.lpSum(parts) - pulp.lpSum(vs) == 0, self.name("fabric_racks_sum", c.id, t, pod))
        return ys, x

    def _design(self, c, d, y) -> _Design:
        """One design of the cluster: its position-dependent links, in-rack links, each building's
        tree and the region tier's switches."""
        types, kinds = self.types, self.kinds
        leaf_down = max((leaf_down_of(d, types[t]) for t in kinds), default=None)
        per_rack = {
            t: math.ceil(types[t].gpus * d.nics_per_gpu / d.oversubscription[0])
            if d.leaf_in_rack
            else types[t].links
            for t in kinds
        }
        one = _Design(d, y, ports(d, self.sw, leaf_down), leaf_down, per_rack)
        for attr, name, into in (
            ("cost_usd_per_link", "fabric_links_usd", one.cost),
            ("power_w_per_link", "fabric_links_kw", one.optics),
        ):
            into.append(
                _position_links(
                    self.m, self.keys, per_rack, attr, y, self.name(name, c.id, d.id), self.total_positions
                )
                + self._installed_links(c, per_rack, attr)
            )
        if d.leaf_in_rack:
            inrack = self.lcs_by[d.in_rack_link]
            links0 = pulp.lpSum(self.x[d.id, t, pod] * types[t].links for (t, pod) in self.here)
            one.cost.append(links0 * inrack.cost_usd_per_link)
            one.optics.append(links0 * (inrack.power_w_per_link / 1000))
        rail = rail_width(d, (types[t] for t in kinds))
        for b in self.bldgs:
            self._building(c, one, b, rail)
        if one.region_lk and c.region_share_km is None:  # a share's tier switches come with the region
            self._region_switches(c, one)
        return one

    def _building(self, c, one: _Design, b: str, rail: int) -> None:
        """One building's tree: its largest build, leaves, spines, cores and region links."""
        m, d, types = self.m, one.d, self.types
        mine = [(t, pod) for (t, pod) in self.here if self.building_of_pod[pod] == b]
        ends = pulp.lpSum(self.x[d.id, t, pod] * (types[t].gpus * d.nics_per_gpu) for t, pod in mine)
        label = f"{c.id}@{d.id}" if len(self.bldgs) == 1 else f"{c.id}@{d.id}@{b}"
        if self.last:  # racks only add up to the horizon's
            most = float(max_endpoints(d, self.sw, one.leaf_down))
            m.add_limit(LimitKey("fabric_size", label), ends, most, "endpoints")
        b_rows = sorted(
            {r for pod in self.pods if self.building_of_pod[pod] == b for r in self.rows_for.get(pod, [])}
        )
        if d.leaf_in_rack:
            leaves, up1, per_leaf_up, n_leaf_max = self._leaves_in_racks(one, mine)
        else:
            leaves, up1, per_leaf_up, n_leaf_max = self._leaf_groups(c, one, mine, rail)
        sp = self._spines(c, one, b, leaves, up1, per_leaf_up, n_leaf_max)
        tops: pulp.LpAffineExpression = pulp.LpAffineExpression(sp)
        if d.tiers == 3:
            tops = self._cores(c, one, b, sp, b_rows)
        if self.spanning is not None:  # region links from b's top tier, on border switches there
            tops += self._region_links(c, one, b, mine, ends)
        self.needs.append((d.id, d.tiers, b_rows, tops, b))

    def _leaves_in_racks(self, one: _Design, mine):
        """Leaves in the GPU racks: one per rack; uplinks ⌈endpoints ÷ first oversubscription⌉."""
        d = one.d
        leaves = pulp.lpSum(self.x[d.id, t, pod] for t, pod in mine)
        self.switch_need[d.switches[0]].append(leaves)
        up1 = pulp.lpSum(self.x[d.id, t, pod] * one.per_rack[t] for t, pod in mine)
        per_leaf_up = max(one.per_rack.values(), default=0)
        return leaves, up1, per_leaf_up, sum(self.size.get(pod, 0) for pod in {pod for _, pod in mine})

    def _leaf_groups(self, c, one: _Design, mine, rail: int):
        """Leaves in network racks: per pod integer groups q of the rail width with w·q ≥ E_p / d₁."""
        m, d, p, types = self.m, one.d, one.p, self.types
        groups = []
        for pod in sorted({pod for _, pod in mine}):
            e_p = pulp.lpSum(
                self.x[d.id, t, pod] * (types[t].gpus * d.nics_per_gpu)
                for t in self.kinds
                if (d.id, t, pod) in self.x
            )
            q = m.var(self.name("fabric_leaves", c.id, d.id, pod), 0, None, integer=True)
            m.add(e_p - p.down[0] * rail * q <= 0, self.name("fabric_leaves", c.id, d.id, pod))
            self.needs.append((d.id, 1, self.rows_for.get(pod, []), q * rail, pod))
            groups.append(q * rail)
        leaves = pulp.lpSum(groups)
        self.switch_need[d.switches[0]].append(leaves)
        leaf = self.sw[d.switches[0]]
        one.cost.append(leaves * (leaf.price_usd + p.up[0] * self.shortest.cost_usd_per_link))
        one.watts.append(leaves * (leaf.power_w / 1000))
        one.optics.append(leaves * (p.up[0] * self.shortest.power_w_per_link / 1000))
        n_leaf_max = sum(self.size.get(pod, 0) for pod in {pod for _, pod in mine}) + len(groups) * rail
        return leaves, leaves * p.up[0], p.up[0], n_leaf_max

    def _spines(self, c, one: _Design, b: str, leaves, up1, per_leaf_up, n_leaf_max) -> pulp.LpVariable:
        """Spines S ≥ U / facing ports; for the largest build U = 2^j · u₁, binaries choosing j."""
        m, d, p = self.m, one.d, one.p
        facing = p.radix[1] if d.tiers == 2 else p.down[1]
        sp = m.var(self.name("fabric_spines", c.id, d.id, b), 0, None, integer=True)
        m.add(up1 - facing * sp <= 0, self.name("fabric_spines", c.id, d.id, b))
        if d.spines_for == "largest_build":  # leaves rounded up to a power of two 2^j: binaries pick j
            powers = [1 << j for j in range(max(1, math.ceil(math.log2(max(2, n_leaf_max)))) + 1)]
            bs = [m.var(self.name("fabric_build", c.id, d.id, b, pw), 0, 1, integer=True) for pw in powers]
            m.add(pulp.lpSum(bs) <= 1, self.name("fabric_build_one", c.id, d.id, b))
            m.add(
                leaves - pulp.lpSum(pw * bv for pw, bv in zip(powers, bs, strict=True)) <= 0,
                self.name("fabric_build", c.id, d.id, b),
            )
            spines = pulp.lpSum(
                math.ceil(pw * per_leaf_up - 1e-9) * bv for pw, bv in zip(powers, bs, strict=True)
            )
            m.add(facing * sp - spines >= 0, self.name("fabric_build_spines", c.id, d.id, b))
        spine = self.sw[d.switches[1]]
        self.switch_need[d.switches[1]].append(pulp.LpAffineExpression(sp))
        one.cost.append(sp * spine.price_usd)
        one.watts.append(sp * (spine.power_w / 1000))
        return sp

    def _cores(self, c, one: _Design, b: str, sp, b_rows) -> pulp.LpAffineExpression:
        """Cores C ≥ S · u₂ / k₃, spine-to-core links on the longest class."""
        m, d, p = self.m, one.d, one.p
        co = m.var(self.name("fabric_cores", c.id, d.id, b), 0, None, integer=True)
        m.add(sp * p.up[1] - p.radix[2] * co <= 0, self.name("fabric_cores", c.id, d.id, b))
        core = self.sw[d.switches[2]]
        self.switch_need[d.switches[2]].append(pulp.LpAffineExpression(co))
        one.cost.append(co * core.price_usd + sp * (p.up[1] * self.longest.cost_usd_per_link))
        one.watts.append(co * (core.power_w / 1000))
        one.optics.append(sp * (p.up[1] * self.longest.power_w_per_link / 1000))
        self.needs.append((d.id, 2, b_rows, pulp.LpAffineExpression(sp), b))
        return pulp.LpAffineExpression(co)

    def _region_links(self, c, one: _Design, b: str, mine, ends) -> pulp.LpVariable:
        """Region links ℓ ≥ E·g_e/(r·g_R) − M(1 − σ) from b's top tier, on border switches there."""
        m, d, region, types = self.m, one.d, self.region, self.types
        assert region is not None
        assert self.spanning is not None
        rate = self.sw[d.switches[0]].port_gbps / (region.oversubscription * self.sw[region.switch].port_gbps)
        km = (
            c.region_share_km
            if c.region_share_km is not None
            else km_between(self.at[b], self.at[region.building])
        )
        lk = m.var(self.name("region_links", c.id, d.id, b), 0, None, integer=True)
        most = (
            sum(self.size.get(pod, 0) for pod in {pod for _, pod in mine})
            * max(types[t].gpus for t in self.kinds)
            * d.nics_per_gpu
        )
        big = math.ceil(most * rate) + 1  # ℓ's largest need in b
        m.add(lk - rate * ends + big * (1 - self.spanning) >= 0, self.name("region_links", c.id, d.id, b))
        top = self.sw[d.switches[-1]]
        border = m.var(self.name("region_border", c.id, d.id, b), 0, None, integer=True)
        m.add(top.ports * border - lk >= 0, self.name("region_border", c.id, d.id, b))
        self.switch_need[d.switches[-1]].append(pulp.LpAffineExpression(border))
        one.cost.append(
            border * top.price_usd + lk * (self.longest.cost_usd_per_link + region.fibre_usd_per_km * km)
        )
        one.watts.append(border * (top.power_w / 1000))
        one.optics.append(lk * (self.longest.power_w_per_link / 1000))
        one.region_lk.append(lk)
        self.links_from[b].append(lk)
        return border

    def _region_switches(self, c, one: _Design) -> None:
        """The region tier's switches R ≥ Σ_b ℓ / k_R, in the tier building's network rows."""
        m, d, region = self.m, one.d, self.region
        assert region is not None
        agg = self.sw[region.switch]
        rv = m.var(self.name("region_switches", c.id, d.id), 0, None, integer=True)
        m.add(agg.ports * rv - pulp.lpSum(one.region_lk) >= 0, self.name("region_switches", c.id, d.id))
        self.switch_need[region.switch].append(pulp.LpAffineExpression(rv))
        one.cost.append(rv * agg.price_usd)
        one.watts.append(rv * (agg.power_w / 1000))
        rows = sorted(r for r in m.network_rows if m.ix.rows[r].building == region.building)
        self.needs.append((d.id, 4, rows, pulp.LpAffineExpression(rv), "region"))


def _buildings(
    m: Model,
    cid: str,
    scope: Scope,
    bldgs: list[str],
    here: dict,
    building_of_pod: dict[str, str],
    pod_size: dict[str, int],
) -> tuple[pulp.LpVariable | None, dict]:
    """Which buildings a site-scoped cluster stands in (u[c,b]), held to one without a region tier;
    with one, its spanning indicator σ_c (and its latency budget kept). (None, {}) when it cannot
    leave one building by its hop budget, or the site has one; over every rack the model may place
    (the horizon's: a cluster in one building then was in one before)."""
    if scope != Scope.site or len(bldgs) < 2:
        return None, {}
    s = m.scenario
    us = {}
    for b in bldgs:
        u = m.var(lp_name("in_building", cid, b), 0, 1, integer=True)
        cap = sum(pod_size[p] for p in {pod for _, pod in here if building_of_pod[pod] == b})
        racks_b = pulp.lpSum(v for (_, pod), vs in here.items() if building_of_pod[pod] == b for v in vs)
        m.add(racks_b - cap * u <= 0, lp_name("in_building", cid, b))
        m.add(racks_b - u >= 0, lp_name("in_building_some", cid, b))  # u = 1 only where it has racks
        us[b] = u
    if s.region_tier is None:
        m.add(pulp.lpSum(us.values()) <= 1, lp_name("one_building", cid))
        return None, us
    sigma = m.var(lp_name("spans", cid), 0, 1, integer=True)
    m.add(pulp.lpSum(us.values()) - 1 - (len(bldgs) - 1) * sigma <= 0, lp_name("spans", cid))
    m.add(pulp.lpSum(us.values()) - 2 * sigma >= 0, lp_name("spans_some", cid))  # σ = 1 only when it spans
    limit = next(c.max_latency_us for c in s.clusters if c.id == cid)
    if limit is not None:
        for i, b1 in enumerate(bldgs):
            for b2 in bldgs[i + 1 :]:
                if latency_us(s, [b1, b2]) > limit + 1e-9:
                    m.add(us[b1] + us[b2] <= 1, lp_name("latency", cid, b1, b2))
    return sigma, us
