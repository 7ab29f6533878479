"""The start a model with designed fabrics is solved from (:func:`fabric_relaxed_start`): its racks
solved first with the fabric's switch, rack and link counts continuous."""

from __future__ import annotations

import time

from planner.clock import MIN_SOLVE_S, Deadline
from planner.model import Model
from planner.solving.core import Progress, can_relax, relaxed_start

FABRIC_COUNTS = ("net_switches", "net_racks", "fabric_leaves", "fabric_spines", "fabric_cores", "region_")
"""Variables counting a designed fabric's switches, racks and links (its choices stay integer)."""
RELAXED_SHARE = 0.6
"""Share of the solve's time the fabric-relaxed start may take."""


def fabric_relaxed_start(m: Model, start: dict | None, deadline: Deadline, keep: float, say) -> dict | None:
    """A start for a model with designed fabrics (first-fit stands no network racks): the racks of
    the model solved with the fabric's switch, rack and link counts continuous, which the solver
    settles several times sooner (a 41k-GPU building of the 5 GW region: 6.6 s, against 18.5 s
    for the whole model's first good incumbent); handed over as a partial start, the solver
    completes the fabric from them. Within :data:`RELAXED_SHARE` of the time left to solve. A start
    already given (or a model without designed fabrics) is left as it is."""
    if start is not None or not m.network_switches or not can_relax(m):
        return start
    names = frozenset(v.name for v in m.prob.variables() if v.name.startswith(FABRIC_COUNTS))
    share = RELAXED_SHARE * (deadline.left() - keep)
    if not names or share < MIN_SOLVE_S:
        return None
    say(Progress("start: the racks with the fabric's counts relaxed", deadline.elapsed()))
    start = relaxed_start(m, names, share, time.perf_counter())
    say(
        Progress(
            f"start (fabric relaxed): {'handed to the solver' if start else 'none in time'}",
            deadline.elapsed(),
        )
    )
    return start
