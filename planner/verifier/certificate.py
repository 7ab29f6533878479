"""A bound with its evidence: an LP written in CPLEX LP format and a dual solution, checked by the
verifier's own reading of the file (it imports nothing of the optimiser's).

For ``max c·x + k`` subject to rows ``a_i·x (≤ | ≥ | =) b_i`` and ``l ≤ x ≤ u``, any duals y with
y_i ≥ 0 on ≤ rows, y_i ≤ 0 on ≥ rows (free on = rows) give the weak-duality bound

    c·x + k ≤ k + Σ_i y_i b_i + Σ_j max(d_j l_j, d_j u_j),   d_j = c_j − Σ_i y_i a_ij

for every x of the LP, hence of the MILP whose relaxation it is (a minimised objective is the same
with c, k and y negated). A reduced cost d_j pointing at an infinite bound makes the bound
infinite, except within :data:`REDUCED_TOL` (floating-point round-off of the duals), counted 0.
The check: every dual has its sign, every dual names a row of the file, and the bound recomputed
from the file and the duals is the bound the certificate states (to 1e-6 relative). What the
certificate does not show is that the LP is the scenario's model: the plan names the file and
its hash, and the file is the model as built (``planner plan --write-lp`` writes the same text).
"""

from __future__ import annotations

import hashlib
import math
import re

REDUCED_TOL = 1e-7
"""Largest reduced cost toward an infinite bound counted as 0 (round-off), objective units."""
_NUM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?inf(inity)?$", re.IGNORECASE)


def _num(tok: str) -> float:
    return float(tok.replace("infinity", "inf").replace("Infinity", "inf"))


def _terms(tokens: list[str]) -> dict[str, float]:
    """'+ 3 x - y + 2.5 z' → {x: 3, y: -1, z: 2.5}."""
    out: dict[str, float] = {}
    sign, coef = 1.0, None
    for tok in tokens:
        if tok in ("+", "-"):
            sign = 1.0 if tok == "+" else -1.0
        elif _NUM.match(tok) and coef is None:
            coef = _num(tok)
        else:
            out[tok] = out.get(tok, 0.0) + sign * (1.0 if coef is None else coef)
            sign, coef = 1.0, None
    return out


class LP:
    """An LP read from CPLEX LP text: sense, objective, rows and bounds."""

    def __init__(self, text: str) -> None:
        self.maximise = False
        self.objective: dict[str, float] = {}
        self.rows: dict[str, tuple[dict[str, float], str, float]] = {}
        self.lower: dict[str, float] = {}
        self.upper: dict[str, float] = {}
        self._read(text)

    def _read(self, text: str) -> None:
        section, pending = "", []
        for raw in text.splitlines():
            line = raw.split("\\", 1)[0].strip() if not raw.lstrip().startswith("\\*") else ""
            low = line.lower()
            if low in ("maximize", "maximise", "minimize", "minimise"):
                self.maximise, section = low.startswith("max"), "objective"
                continue
            if low in ("subject to", "such that", "st", "bounds", "generals", "binaries", "general", "end"):
                self._flush(section, pending)
                pending, section = [], low
                continue
            if not line:
                continue
            if section in ("objective", "subject to") and ":" in line.split()[0] and pending:
                self._flush(section, pending)
                pending = []
            if section in ("objective", "subject to"):
                pending.append(line)
            elif section == "bounds":
                self._bound(line)
            elif section == "binaries":
                for name in line.split():
                    self.lower[name], self.upper[name] = 0.0, 1.0
        self._flush(section, pending)

    def _flush(self, section: str, lines: list[str]) -> None:
        if not lines:
            return
        text = " ".join(lines)
        name, _, body = text.partition(":")
        tokens = body.split()
        if section == "objective":
            self.objective = _terms(tokens)
            return
        at = next(i for i, t in enumerate(tokens) if t in ("<=", ">=", "=", "=<", "=>"))
        sense = {"=<": "<=", "=>": ">="}.get(tokens[at], tokens[at])
        self.rows[name.strip()] = (_terms(tokens[:at]), sense, _num(tokens[at + 1]))

    def _bound(self, line: str) -> None:
        t = line.split()
        if len(t) == 2 and t[1].lower() == "free":
            self.lower[t[0]], self.upper[t[0]] = -math.inf, math.inf
        elif len(t) == 5:  # l <= x <= u
            self.lower[t[2]], self.upper[t[2]] = _num(t[0]), _num(t[4])
        elif len(t) == 3 and t[1] in ("<=", ">=", "="):
            if _NUM.match(t[0]):  # 5 <= x
                name, value, op = t[2], _num(t[0]), {"<=": ">=", ">=": "<=", "=": "="}[t[1]]
            else:
                name, value, op = t[0], _num(t[2]), t[1]
            if op in ("<=", "="):
                self.upper[name] = value
            if op in (">=", "="):
                self.lower[name] = value

    def box(self, name: str) -> tuple[float, float]:
        return self.lower.get(name, 0.0), self.upper.get(name, math.inf)


def dual_bound(lp: LP, duals: dict[str, float], constant: float = 0.0) -> tuple[float | None, list[str]]:
    """The weak-duality bound (module docstring) of ``duals`` on ``lp``, and what is wrong with them
    (a dual of the wrong sign, a row the file does not have); None when they prove nothing."""
    wrong = [
        f"duals name row '{r}', which the LP does not have" for r in sorted(set(duals) - set(lp.rows))[:5]
    ]
    flip = 1.0 if lp.maximise else -1.0  # a minimisation is checked as max of −objective
    d = {v: flip * c for v, c in lp.objective.items()}
    total = flip * constant
    for name, (coeffs, sense, rhs) in lp.rows.items():
        y = flip * duals.get(name, 0.0)
        if (sense == "<=" and y < 0) or (sense == ">=" and y > 0):
            wrong.append(f"dual of row '{name}' is {duals[name]:g}: the wrong sign for a '{sense}' row")
            continue
        if y == 0:
            continue
        total += y * rhs
        for v, a in coeffs.items():
            d[v] = d.get(v, 0.0) - y * a
    if wrong:
        return None, wrong
    box_total, why = _over_the_box(lp, d)
    if why:
        return None, [why]
    return flip * (total + box_total), []


def _over_the_box(lp: LP, d: dict[str, float]) -> tuple[float, str]:
    """Σ_j max(d_j l_j, d_j u_j), or a reason when a reduced cost points at an infinite bound."""
    total = 0.0
    for v, dj in d.items():
        if dj == 0:
            continue
        lo, hi = lp.box(v)
        end = hi if dj > 0 else lo
        if math.isinf(end):
            if abs(dj) > REDUCED_TOL:
                side = "upper" if dj > 0 else "lower"
                return 0.0, f"reduced cost {dj:g} of '{v}' points at its infinite {side} bound"
            continue
        total += dj * end
    return total, ""


def check_certificate(cert: dict) -> tuple[float | None, list[str]]:
    """(the bound the certificate proves, problems): the LP text's hash, the duals' signs and rows,
    and the stated bound against the one recomputed here."""
    text = cert.get("lp", "")
    problems = []
    if hashlib.sha256(text.encode()).hexdigest()[:16] != cert.get("lp_hash"):
        problems.append("the LP text does not hash to the certificate's lp_hash")
    lp = LP(text)
    bound, wrong = dual_bound(
        lp, {k: float(v) for k, v in cert.get("duals", {}).items()}, cert.get("constant", 0.0)
    )
    problems += wrong
    stated = cert.get("bound")
    if bound is not None and (stated is None or abs(stated - bound) > 1e-6 * max(1.0, abs(bound))):
        problems.append(f"the certificate states bound {stated}, its duals prove {bound:,.6f}")
    return (bound if not problems else None), problems
