"""Deliberate engine bugs (mutants), each a patch of one optimiser rule, and the scenario that
shows it. ``tests/test_mutants.py`` plans each scenario with the bug in place and asserts the
verifier (which imports none of the patched code) rejects the plan; ``benchmarks/mutants.py``
writes the table of what caught each one.

A mutant patches the function in every loaded module that holds it (a name imported with
``from x import f`` is a second reference), so the whole optimiser sees the bug.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from planner.input import asks
from planner.input import power_model as pm_mod
from planner.plan import kpis, orders
from planner.plan import stochastic as sto
from planner.rules import backup, costs, reliability
from planner.schema import PowerSource, RackType, Scenario
from planner.schema.grid import GridQuestions


@dataclass(frozen=True)
class Mutant:
    name: str
    """What the bug is, in words."""
    target: tuple[object, str]
    """(owner, attribute) patched: a module function or a class's method."""
    make: Callable[[Callable], Callable]
    """Original → the buggy version."""
    scenario: str
    """Shipped scenario (``datasets/<name>.yaml``) or ``tests:<builder>`` that shows it."""
    mode: str = "joint"
    """How the scenario is planned: ``joint`` (plan_scenario) or ``stochastic`` (two-stage)."""
    expect: str = "caught"
    """What the run gives: ``caught`` by the verifier, or ``no plan`` where the bug makes the engine
    claim infeasibility (a claim the verifier cannot check: it checks plans)."""


@contextlib.contextmanager
def applied(m: Mutant) -> Iterator[None]:
    """The mutant in place in every loaded module and class that refers to the original."""
    owner, attr = m.target
    original = getattr(owner, attr)
    bad = m.make(original)
    undo = []
    holders = (
        [owner] if isinstance(owner, type) else [mod for mod in list(sys.modules.values()) if mod is not None]
    )
    for holder in holders:
        with contextlib.suppress(Exception):
            if holder.__dict__.get(attr) is original:
                setattr(holder, attr, bad)
                undo.append(holder)
    try:
        yield
    finally:
        for holder in undo:
            setattr(holder, attr, original)


def _residual_sign(f):
    def bad(*a, **k):
        c = f(*a, **k)
        return c.__class__(
            c.capex_usd,
            c.opex_usd_per_year,
            c.tco_usd + 2 * c.residual_usd * costs.discount(a[4].horizon_years, a[4].discount_rate),
            c.gpu_hours,
            c.gpu_hours_npv,
            c.removal_usd,
            c.residual_usd,
        )

    return bad


def _retire_late(f):
    def bad(self, rack_type, placed):
        r = f(self, rack_type, placed)
        return None if r is None or r + 1 >= len(self.phases) else r + 1

    return bad


def _shed_as_lost(b):
    lost = dict(b.lost)
    for c, g in b.shed.items():
        lost[c] = lost.get(c, 0) + g
    return reliability.Blast(b.kind, b.id, lost, b.capped, {}, b.n1_holds)


def _retire_early(f):
    def bad(self, rack_type, placed):
        r = f(self, rack_type, placed)
        at = {p.id: i for i, p in enumerate(self.phases)}.get(placed, 0)
        return r - 1 if r is not None and r - 1 > at else r

    return bad


def _lifecycle(**change):
    def make(f):
        def bad(*a):
            life = f(*a)
            return {**life, **{k: v(life[k]) for k, v in change.items()}} if life else life

        return bad

    return make


def _arrival_early(f):
    def bad(self, index):
        return f(self, min(index + 1, max(len(self.phases) - 1, 0)))

    return bad


def _power_model_more(f):
    def bad(*a, **k):
        pm = f(*a, **k)
        pm.usable_kw = {n: kw * 1.25 for n, kw in pm.usable_kw.items()}
        return pm

    return bad


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "residual value added to TCO instead of credited",
        (costs, "rack_cost"),
        _residual_sign,
        "hall-refresh",
    ),
    Mutant(
        "racks retire a phase late",
        (Scenario, "retire_index"),
        _retire_late,
        "hall-refresh",
        expect="no plan",
    ),
    Mutant("racks retire a phase early", (Scenario, "retire_index"), _retire_early, "tests:refresh"),
    Mutant(
        "removal at retirement costs nothing",
        (costs, "lifecycle"),
        _lifecycle(removal_usd=lambda x: 0.0),
        "hall-refresh",
    ),
    Mutant(
        "equipment depreciates over twice its life",
        (costs, "lifecycle"),
        _lifecycle(life_years=lambda x: 2 * x),
        "hall-refresh",
    ),
    Mutant("power arrives a phase early", (Scenario, "power_available_kw"), _arrival_early, "tests:arrival"),
    Mutant(
        "the grid accepts twice the swing",
        (GridQuestions, "swing_accepted_mw"),
        lambda f: lambda self, i: 2 * f(self, i),
        "tests:swing",
    ),
    Mutant(
        "racks do not swing in training",
        (GridQuestions, "trough_share"),
        lambda f: lambda self, t: 1.0,
        "tests:swing",
    ),
    Mutant(
        "N-1 during maintenance forgotten",
        (pm_mod, "_maintenance"),
        lambda f: lambda *a: [],
        "tests:maintained",
    ),
    Mutant(
        "power sources emit no carbon",
        (PowerSource, "intensity_at"),
        lambda f: lambda self, ids, i: 0.0,
        "tests:emissions",
    ),
    Mutant(
        "EVPI with the wrong sign",
        (sto, "regret"),
        lambda f: lambda s, best, got: None if f(s, best, got) is None else -f(s, best, got),
        "fleet-futures",
        "stochastic",
    ),
    Mutant(
        "discounting compounds forward",
        (costs, "discount"),
        lambda f: lambda t, rate: (1.0 + rate) ** t,
        "small-hall",
    ),
    Mutant(
        "opex annuity ignores the discount rate",
        (costs, "annuity"),
        lambda f: lambda t, h, rate: max(0.0, h - t),
        "small-hall",
    ),
    Mutant(
        "facility build at half price",
        (costs, "facility_usd"),
        lambda f: lambda kw, c: 0.5 * f(kw, c),
        "small-hall",
    ),
    Mutant(
        "energy without PUE",
        (costs, "energy_usd_per_year"),
        lambda f: lambda kw, c, pue: f(kw, c, 1.0),
        "small-hall",
    ),
    Mutant(
        "maintenance left out", (costs, "maintenance_usd_per_year"), lambda f: lambda e, c: 0.0, "small-hall"
    ),
    Mutant(
        "links priced per rack, not per link",
        (costs, "links_usd"),
        lambda f: lambda r, link: f(r, link) / max(r.links, 1),
        "small-hall",
    ),
    Mutant(
        "retrofits cost nothing",
        (kpis, "retrofit_costs"),
        lambda f: lambda s, b: (0.0, 0.0, 0.0),
        "fleet-expansion",
    ),
    Mutant(
        "network racks draw no power in the KPIs",
        (kpis, "network_racks"),
        lambda f: lambda s: [],
        "small-hall",
    ),
    Mutant(
        "GPU cap ignored in planning power",
        (RackType, "planning_power_kw"),
        lambda f: lambda self, cap=None, ratio=None: f(self, None, ratio),
        "tests:capped",
    ),
    Mutant(
        "phase capex leaves out the retrofits",
        (kpis, "phase_summaries"),
        lambda f: (
            lambda s, r, b, u, backup=0.0, chosen=None, storage=None: f(s, r, [], u, backup, chosen, storage)
        ),
        "fleet-expansion",
    ),
    Mutant(
        "retrofit lead times left out of the order book",
        (orders, "order_book"),
        lambda f: (
            lambda s, r, x: f(
                s.model_copy(
                    update={"retrofits": [y.model_copy(update={"lead_phases": 0}) for y in s.retrofits]}
                ),
                r,
                x,
            )
        ),
        "hall-refresh",
    ),
    Mutant(
        "PFLOPS off by 10x",
        (RackType, "pflops_bf16"),
        lambda f: property(lambda self: f.fget(self) * 10),
        "small-hall",
    ),
    Mutant(
        "usable power 25% above the derated rating", (pm_mod, "power_model"), _power_model_more, "small-hall"
    ),
    Mutant(
        "air heat undercounted by a fifth",
        (RackType, "heat_kw"),
        lambda f: lambda self, kw: (0.8 * f(self, kw)[0], f(self, kw)[1]),
        "small-hall",
    ),
    Mutant(
        "stranded power blamed on pod ports where cooling binds",
        (kpis._Stranded, "why_not"),
        lambda f: lambda self, *a: "ports" if f(self, *a) == "cooling" else f(self, *a),
        "small-hall",
    ),
    Mutant(
        "goodput without the restart time",
        (asks, "goodput"),
        lambda f: lambda mtbf, size, bw, restart, stall=None: f(mtbf, size, bw, 0.0, stall),
        "tests:backed",
    ),
    Mutant(
        "shed GPUs reported as lost in the blast radius",
        (reliability._Loads, "node_failure"),
        lambda f: lambda self, fid: _shed_as_lost(f(self, fid)),
        "dr-hall-flex",
    ),
    Mutant(
        "backup choice ignores the hours a building stays dark",
        (backup, "_dark"),
        lambda f: lambda s, design, gpus: 0.0,
        "tests:backed",
    ),
)
"""The mutants, each a figure-level or constraint-level bug of the optimiser."""


def builders() -> dict[str, Callable[[], Scenario]]:
    """``tests:<name>`` scenarios: tiny ones of the tests that solve them by hand."""
    from planner.input.loader import load_scenario
    from tests.test_backup import backed
    from tests.test_grid import maintained_site, swing_site, two_sources
    from tests.test_refresh import hall
    from tests.test_region_power import arrival_site

    return {
        "arrival": lambda: arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}]),
        "refresh": hall,
        "swing": lambda: swing_site(False, False),
        "maintained": lambda: maintained_site([{"kind": "ups"}]),
        "emissions": lambda: two_sources(cap=200, demand="max"),
        "backed": backed,
        "capped": lambda: load_scenario("datasets/small-hall.yaml").model_copy(
            update={"gpu_power_cap_w": 600.0}
        ),
    }


def scenario_of(m: Mutant) -> Scenario:
    from planner.input.loader import load_scenario

    if m.scenario.startswith("tests:"):
        return builders()[m.scenario.removeprefix("tests:")]()
    return load_scenario(f"datasets/{m.scenario}.yaml")


def run(m: Mutant) -> tuple[str, list[str]]:
    """Plan the mutant's scenario with the bug in place; ("caught", the verifier's findings) when
    the verifier refuses the plan, ("missed", []) when it accepts it, ("no plan", …) when the bug
    made the engine claim there is none."""
    from planner.errors import SolverFailure
    from planner.plan.pipeline import plan_scenario
    from planner.verifier import verify

    s = scenario_of(m)
    with applied(m):
        try:
            plan = sto.plan_stochastic(s) if m.mode == "stochastic" else plan_scenario(s)
        except SolverFailure as e:
            if "fails independent verification" in str(e):
                return "caught", str(e).split(": ", 1)[1].split("; ")
            raise
    if not plan.status.has_plan:  # a claim of infeasibility: the verifier checks plans, not their absence
        return "no plan", [f"the engine says {plan.status.value}"]
    rep = verify(plan, s)
    return ("caught", [f"{v.element}: {v.message}" for v in rep.violations]) if not rep.ok else ("missed", [])
