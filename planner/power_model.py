"""Power coefficients for the optimiser and the greedy baseline (§4).

For a scenario state s (normal operation, or one node f failed) the load on
node v is linear in the row loads P_r:

    load_s(v) = Σ_r a_s(v, r) · P_r,
    a_s(v, r) = |live feeds of r under v| / |live feeds of r|,

where the live feeds of r are its feeds outside subtree(f) (all of them in
normal operation) and "under v" means in subtree(v). A row with no live feed
drops (its load vanishes); a ``redundant`` row must then carry no load.

Only states that change some coefficient upward are kept for a node: a
contingency row whose coefficients are all ≤ the normal ones is implied by the
normal-operation limit. The verifier does not use this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.site_index import SiteIndex


@dataclass(frozen=True)
class PowerLimit:
    """One linear power limit: Σ_r coef[r] · P_r ≤ limit_kw on ``node`` when ``failed`` has failed."""

    node: str
    failed: str | None
    coef: dict[str, float]
    limit_kw: float


@dataclass(frozen=True)
class PowerModel:
    """All power limits of a site, plus rows that must stay empty (redundant rows that can drop)."""

    limits: list[PowerLimit]
    forced_empty: dict[str, str]
    """Redundant row → a failing node that leaves it with no live feed."""


def _under(ix: SiteIndex) -> dict[str, set[str]]:
    """Leaf feed → the set of nodes it is under (itself and its ancestors)."""
    feeds = {f for ref in ix.rows.values() for f in ref.row.feeds}
    return {f: set(ix.ancestors(f)) for f in feeds}


def _coefficients(ix: SiteIndex, rows: list[str], dead: set[str], under: dict[str, set[str]]):
    """a(v, r) for the given rows with ``dead`` nodes failed; also the rows that drop."""
    coef: dict[str, dict[str, float]] = {}
    dropped = []
    for r in rows:
        feeds = ix.rows[r].row.feeds
        live = [f for f in feeds if f not in dead]
        if not live:
            dropped.append(r)
            continue
        share = 1.0 / len(live)
        for f in live:
            for v in under[f]:
                coef.setdefault(v, {})
                coef[v][r] = coef[v].get(r, 0.0) + share
    return coef, dropped


def power_model(ix: SiteIndex) -> PowerModel:
    """Normal limits for every loaded-able node and N-1 limits where a failure raises a share."""
    under = _under(ix)
    rows = list(ix.rows)
    normal, _ = _coefficients(ix, rows, set(), under)
    limits = [PowerLimit(v, None, c, ix.power_nodes[v].usable_kw) for v, c in normal.items()]
    forced: dict[str, str] = {}
    rows_of_feed: dict[str, list[str]] = {}
    for r in rows:
        for f in ix.rows[r].row.feeds:
            rows_of_feed.setdefault(f, []).append(r)
    for fid, fnode in ix.power_nodes.items():
        if not fnode.can_fail:
            continue
        dead = ix.subtree(fid)
        hit = sorted({r for f in dead for r in rows_of_feed.get(f, [])})
        if not hit:
            continue
        new, dropped = _coefficients(ix, hit, dead, under)
        for r in dropped:
            if ix.rows[r].row.redundant:
                forced.setdefault(r, fid)
        for v, c_hit in new.items():
            if v in dead:
                continue
            base = normal.get(v, {})
            if not any(c_hit[r] > base.get(r, 0.0) + 1e-12 for r in c_hit):
                continue
            coef = dict(base)
            for r in hit:
                if r in coef:
                    del coef[r]
            coef.update(c_hit)
            limits.append(PowerLimit(v, fid, coef, ix.power_nodes[v].usable_kw))
    return PowerModel(limits, forced)
