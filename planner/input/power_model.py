"""Power coefficients for the optimiser and the first-fit baseline (§4). The verifier does not use
this module.

Rows that hang from the same feeds (and share the ``redundant`` flag) behave alike, so they form
one *feed group* g, named by its feeds (``BW-A1+BW-B1``; ``!redundant`` added for the redundant
rows when other rows hang from the same feeds without the flag), with load P_g (kW, the racks placed in its
rows) plus a fixed load F_g
(network racks, racks already installed). For a state s (normal operation, or one node f failed)
the load on node v is

    load_s(v) = Σ_g a_s(v, g) · (P_g + F_g),
    a_s(v, g) = |live feeds of g under v| / |live feeds of g|,

where the live feeds of g are its feeds outside subtree(f) (all of them in normal operation)
and "under v" means in subtree(v). A group with no live feed drops (its load vanishes).
A contingency is written as a change from normal operation over the groups the failure hits:

    load_f(v) = load_0(v) + Σ_{g hit by f} (a_f(v, g) − a_0(v, g)) · (P_g + F_g),

so its row touches only those groups, and load_0(v) is stated once (the optimiser makes it a
variable L_v). A contingency is kept only where it raises some coefficient above normal
operation (otherwise the normal limit implies it), and once per distinct row (in 2N a UPS and
each busway under it give the same change on the partner side).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from planner.input.site_index import SiteIndex


@dataclass(frozen=True)
class FeedGroup:
    """Rows with the same feeds and the same ``redundant`` flag."""

    key: str
    feeds: tuple[str, ...]
    rows: tuple[str, ...]
    redundant: bool


@dataclass(frozen=True)
class Contingency:
    """load_0(node) + Σ_g delta[g] · (P_g + F_g) ≤ usable(node) when ``failed`` has failed."""

    node: str
    failed: str
    delta: dict[str, float]


@dataclass
class PowerModel:
    """Feed groups, normal coefficients, contingencies, and groups that must stay empty."""

    groups: dict[str, FeedGroup]
    group_of_row: dict[str, str]
    normal: dict[str, dict[str, float]]
    """Node → group → a_0(node, group), for every node that carries some group."""
    usable_kw: dict[str, float]
    contingencies: list[Contingency]
    forced_empty: dict[str, str] = field(default_factory=dict)
    """Redundant group → a failing node that leaves it with no live feed."""
    dark: set[str] = field(default_factory=set)
    """Groups with no feed online at all (phases before their power comes online): they must stay empty."""
    maintenance: list[Contingency] = field(default_factory=list)
    """Concurrent maintainability (§21): a node of a maintained class out (``failed`` is
    ``maintained+failed``) while another fails; rows left with no feed drop (they are what a failure
    during maintenance takes down), never forced empty."""

    def fixed_by_group(self, fixed_row_kw: dict[str, float]) -> dict[str, float]:
        """F_g from fixed loads per row, kW."""
        out: dict[str, float] = defaultdict(float)
        for row, kw in fixed_row_kw.items():
            if row in self.group_of_row:
                out[self.group_of_row[row]] += kw
        return dict(out)

    def fixed_normal(self, node: str, fixed: dict[str, float]) -> float:
        """Σ_g a_0(node, g) · F_g, kW."""
        return sum(a * fixed.get(g, 0.0) for g, a in self.normal.get(node, {}).items())

    def fixed_delta(self, c: Contingency, fixed: dict[str, float]) -> float:
        """Σ_g delta_c[g] · F_g, kW."""
        return sum(d * fixed.get(g, 0.0) for g, d in c.delta.items())


def _shares(feeds: tuple[str, ...], dead: set[str], under: dict[str, list[str]]) -> dict[str, float] | None:
    """a(v, g) for every node v above a group's live feeds; none if no feed is live."""
    live = [f for f in feeds if f not in dead]
    if not live:
        return None
    share = 1.0 / len(live)
    out: dict[str, float] = defaultdict(float)
    for f in live:
        for v in under[f]:
            out[v] += share
    return out


def power_model(
    ix: SiteIndex, offline: set[str] | frozenset[str] = frozenset(), maintained: frozenset[str] = frozenset()
) -> PowerModel:
    """Feed groups, normal coefficients and the contingencies that matter (module docstring).
    ``offline``: nodes that do not exist yet (a phase before theirs): they and their subtrees carry
    nothing in any state, as if failed for good, and do not fail again. ``maintained``: nodes that
    may be out for maintenance while any other node fails (N-2 on their class, §21)."""
    groups, group_of_row = _feed_groups(ix)
    under = {f: ix.ancestors(f) for g in groups.values() for f in g.feeds}
    gone: set[str] = set()
    for v in offline:
        gone |= ix.subtree(v)
    normal: dict[str, dict[str, float]] = defaultdict(dict)
    base: dict[str, dict[str, float]] = {}
    dark: set[str] = set()
    for g in groups.values():
        a = _shares(g.feeds, gone, under)
        if a is None:
            dark.add(g.key)
            a = {}
        base[g.key] = a
        for v, x in a.items():
            normal[v][g.key] = x
    forced: dict[str, str] = {}
    contingencies = _contingencies(ix, groups, base, gone, under, dark, forced)
    usable = {v: ix.power_nodes[v].usable_kw for v in ix.power_nodes}
    pm = PowerModel(groups, group_of_row, dict(normal), usable, contingencies, forced, dark)
    if maintained:
        pm.maintenance = _maintenance(ix, groups, base, gone, under, dark, maintained)
    return pm


def _maintenance(ix: SiteIndex, groups, base, gone, under, dark, maintained) -> list[Contingency]:
    """Every pair (m out for maintenance, f failing; f anywhere but under m) that raises some
    survivor's share beyond normal, once per survivor and distinct change (§21). The change is
    from normal operation over the groups either hits; a group left with no feed drops."""
    groups_of_feed: dict[str, list[str]] = defaultdict(list)
    for g in groups.values():
        for f in g.feeds:
            groups_of_feed[f].append(g.key)

    def hit_by(node: str) -> set[str]:
        return {g for f in ix.subtree(node) for g in groups_of_feed.get(f, [])}

    out_of = {
        mid: ix.subtree(mid) for mid in maintained if mid not in gone
    }  # each maintained node's subtree, once
    pairs = [
        (mid, fid)
        for mid in sorted(out_of)
        for fid, fnode in ix.power_nodes.items()
        if fid != mid and fnode.can_fail and fid not in gone and fid not in out_of[mid]
    ]
    out: list[Contingency] = []
    seen: set[tuple] = set()
    for mid, fid in pairs:
        hit = sorted((hit_by(mid) | hit_by(fid)) - dark)
        delta = _failure_delta(ix, fid, hit, groups, base, gone | out_of[mid], under, {}) if hit else {}
        for v, d in sorted(delta.items()):
            sig = (v, tuple(sorted((g, round(x, 12)) for g, x in d.items())))
            if any(x > 1e-12 for x in d.values()) and sig not in seen:
                seen.add(sig)
                out.append(Contingency(v, f"{mid}+{fid}", dict(d)))
    return out


def _contingencies(ix: SiteIndex, groups, base, gone, under, dark, forced) -> list[Contingency]:
    """Every single failure that raises some survivor's share, one contingency per survivor and
    distinct change (two failures giving the very same row are one)."""
    groups_of_feed: dict[str, list[str]] = defaultdict(list)
    for g in groups.values():
        for f in g.feeds:
            groups_of_feed[f].append(g.key)
    out: list[Contingency] = []
    seen: set[tuple] = set()
    for fid, fnode in ix.power_nodes.items():
        if not fnode.can_fail or fid in gone:
            continue
        hit = sorted({g for f in ix.subtree(fid) for g in groups_of_feed.get(f, [])} - dark)
        if not hit:
            continue
        delta = _failure_delta(ix, fid, hit, groups, base, gone, under, forced)
        for v, d in sorted(delta.items()):
            if any(x > 1e-12 for x in d.values()):
                sig = (v, tuple(sorted((g, round(x, 12)) for g, x in d.items())))
                if sig not in seen:  # another failure already gives this very row (2N: a UPS or its busway)
                    seen.add(sig)
                    out.append(Contingency(v, fid, dict(d)))
    return out


def _feed_groups(ix: SiteIndex) -> tuple[dict[str, FeedGroup], dict[str, str]]:
    """Rows with the same feeds (and redundancy) form one feed group; row → its group."""
    members: dict[tuple[tuple[str, ...], bool], list[str]] = defaultdict(list)
    for rid, ref in ix.rows.items():
        members[tuple(ref.row.feeds), ref.row.redundant].append(rid)
    groups: dict[str, FeedGroup] = {}
    group_of_row: dict[str, str] = {}
    for (feeds, red), rows in members.items():
        key = "+".join(feeds) + ("!redundant" if red and (feeds, False) in members else "")
        groups[key] = FeedGroup(key, feeds, tuple(rows), red)
        for r in rows:
            group_of_row[r] = key
    return groups, group_of_row


def _failure_delta(
    ix: SiteIndex, fid: str, hit, groups, base, gone, under, forced
) -> dict[str, dict[str, float]]:
    """Surviving node → group → the change of the group's share on it when ``fid`` fails; a
    redundant group left with no feed is forced empty (the first failure that does so is named)."""
    dead = ix.subtree(fid) | gone
    delta: dict[str, dict[str, float]] = defaultdict(dict)
    for gk in hit:
        after = _shares(groups[gk].feeds, dead, under)
        if after is None:
            if groups[gk].redundant:
                forced.setdefault(gk, fid)
            after = {}
        for v in sorted(set(after) | set(base[gk])):
            if v in dead:
                continue
            d = after.get(v, 0.0) - base[gk].get(v, 0.0)
            if abs(d) > 1e-12:
                delta[v][gk] = d
    return delta
