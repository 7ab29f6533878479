"""The evidence behind an LP bound: the model written as an LP file and the row duals of its
relaxation, in the form :mod:`planner.verifier.certificate` checks (see there for the maths).

HiGHS reports duals in its own sign convention; the certificate states them in the one the check
uses (y ≥ 0 on ≤ rows of a maximisation), taking whichever of y and −y has those signs and
clearing sign errors below 1e-9 (round-off), so the bound it proves is the relaxation's optimum up
to round-off. A model whose relaxation has no optimum in the time given has no certificate.
"""

from __future__ import annotations

import hashlib
import math

import pulp

from planner.model import Model, lp_text
from planner.solving.backends import SolveRequest, from_name

FORMAT = "planner-lp-dual/1"
"""What a certificate file holds (its ``format`` field)."""


def _senses(m: Model) -> dict[str, str]:
    return {
        name: {pulp.LpConstraintLE: "<=", pulp.LpConstraintGE: ">=", pulp.LpConstraintEQ: "="}[row.sense]
        for block in m.blocks.values()
        for name, row in block.items()
    }


def _signed(duals: dict[str, float], senses: dict[str, str], maximise: bool) -> dict[str, float] | None:
    """The duals in the check's convention (module docstring), or None when neither sign fits."""
    flip = 1.0 if maximise else -1.0
    for s in (1.0, -1.0):
        out, ok = {}, True
        for name, y in duals.items():
            if name not in senses:
                continue
            y = s * y
            bad = (senses[name] == "<=" and flip * y < 0) or (senses[name] == ">=" and flip * y > 0)
            if bad and abs(y) > 1e-9:
                ok = False
                break
            if not bad and y != 0:
                out[name] = y
        if ok:
            return out
    return None


def _dual_bound(m: Model, objective, maximise: bool, duals: dict[str, float]) -> float | None:
    """k + Σ y_i b_i + Σ_j max(d_j l_j, d_j u_j) over the model's own rows (the verifier computes
    the same from the LP file with its own code); None when a reduced cost points at an infinite
    bound beyond round-off."""
    flip = 1.0 if maximise else -1.0
    d = {v.name: flip * c for v, c in objective.items()}
    total = flip * float(objective.constant)
    rows = {name: row for block in m.blocks.values() for name, row in block.items()}
    for name, y in duals.items():
        row = rows[name]
        total += flip * y * -float(row.constant)
        for v, a in row.items():
            d[v.name] = d.get(v.name, 0.0) - flip * y * a
    box = {v.name: v for v in m.prob.variables()}
    for name, dj in d.items():
        v = box.get(name)
        lo = -math.inf if v is None or v.lowBound is None else float(v.lowBound)
        hi = math.inf if v is None or v.upBound is None else float(v.upBound)
        end = hi if dj > 0 else lo
        if dj == 0:
            continue
        if math.isinf(end):
            if abs(dj) > 1e-7:
                return None
            continue
        total += dj * end
    return flip * total


def lp_certificate(m: Model, time_limit_s: float) -> dict | None:
    """The certificate of ``m``'s LP relaxation (module docstring), or None without one in time."""
    prob = m.prob
    objective = prob.objective if prob.objective is not None else pulp.LpAffineExpression()
    maximise = prob.sense == pulp.LpMaximize
    res = from_name("highs").solve(
        SolveRequest(prob, objective, maximise, time_limit_s, 0.0, relax_integrality=True)
    )
    if not res.duals or res.reported_objective is None:
        return None
    duals = _signed(res.duals, _senses(m), maximise)
    if duals is None:
        return None
    bound = _dual_bound(m, objective, maximise, duals)
    if bound is None:
        return None
    text = lp_text(m)
    return {
        "format": FORMAT,
        "lp_hash": hashlib.sha256(text.encode()).hexdigest()[:16],
        "constant": float(objective.constant),
        "bound": round(bound, 9),
        "lp_optimum": res.reported_objective,
        "duals": duals,
        "lp": text,
    }
