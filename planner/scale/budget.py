"""One declared time budget for the decomposition by building (§14, §15 Anytime): every stage of
:mod:`planner.scale` asks a :class:`Budget` how long it may take, and no other time constant remains
in the package.

The run's limit counts from process start (its :class:`~planner.clock.Deadline`). A stage gets a
part of the time *left when it starts* — spread over the waves its jobs run in, ⌈jobs ÷ lanes⌉ —
kept between a least (below it the stage does not start, or a job is given that floor) and a most.
So whatever a stage leaves unused flows to the stages after it, and a loaded machine (everything
slower) shortens what is left for everything alike.

    stage         part of the time left    least s   most s   what takes it
    master        0.10                     1         60       one round's master MILP (the region
                                                              master too), split over its parts
    buildings     0.60 over the waves      1         —        each building solve of a wave
    fixed         0.30 over the waves      1         —        budgeted rounds: each building's fixed
                                                              demands at least cost (wave 1)
    again         0.90 over the waves      10        —        a building without a proven answer,
                                                              solved once more (flat rounds and
                                                              phased regions alike)
    merged_bound  0.30                     1         —        the merged relaxation's LP
    building_most 0.10                     1         30       the most each building holds (one
                                                              small MILP per building alike up to its
                                                              names and type set; 0.01-0.06 s each on
                                                              drawn 250k buildings): the pairs'
                                                              estimates, rows of the packing bound
    packing_bound 0.30                     1         60       the packing MILP's bound (where the
                                                              merged one does not prove the gap),
                                                              after the pairs
    lp_bound      0.40                     1         —        the whole model's LP relaxation (only
                                                              where no polish follows)
    pair          0.90 over the waves      5         60       one pair of buildings solved as one
    polish        1.00                     5         —        the whole model set against the
                                                              joined plan, from the joined plan: its
                                                              MIP bound after the root cuts is the
                                                              run's strongest
    replan        0.70                     0.5       —        explain: the buildings a relaxation
                                                              step touches, planned again
    first_fit     0.25                     0         —        first-fit's plan of the whole, verified:
                                                              what stands when nothing better does

Reserve: the building solves and the pairs stop :data:`TAIL_PASSES` passes over the site before
the deadline, each pass as long as counting the proposals took in this run (measured, so a slow or
loaded machine reserves more); what joining, verifying and writing the plan take. Where the polish
follows (the whole model fits), the pairs also leave it :data:`POLISH_KEEP` of the time left when
they start (:meth:`Budget.pairs_end`), until one of their waves gains: then they go on until the
packing bound's part of that time is left (:meth:`Budget.pairs_beyond`), which the pairs always
leave it.

Memory: the whole model (its LP bound, the polish, a hand-over) is built only where its count
variables, counted with the proposals, times :data:`WHOLE_GB_PER_COUNT` stay within
:data:`WHOLE_PART` of :data:`MEMORY_GB`; else the joined plan stands on the merged and capacity
bounds, and a hand-over gets first-fit's plan of the whole.

Thresholds: a master round starts only with :data:`ROUND_START` of the limit left (later rounds
could not re-solve their buildings); an LP bound or polish starts only with :data:`BOUNDS_START_S`
left. With more than :data:`MANY_WAVES` waves of building solves (tens of buildings) the jobs share
one end instead of a fixed limit each: each reads, when it starts, the time left over the waves
left (:func:`planner.scale.joined.solve_part`), so jobs that finish early leave their time to the
larger ones after them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from planner.clock import Deadline


@dataclass(frozen=True)
class Stage:
    """A stage's time: ``part`` of what is left when it starts (over its waves), within
    [``least_s``, ``most_s``]."""

    part: float
    least_s: float = 0.0
    most_s: float = math.inf


STAGES: dict[str, Stage] = {
    "master": Stage(0.10, 1.0, 60.0),
    "buildings": Stage(0.60, 1.0),
    "fixed": Stage(0.30, 1.0),
    "again": Stage(0.90, 10.0),
    "merged_bound": Stage(0.30, 1.0),
    "building_most": Stage(0.10, 1.0, 30.0),
    "packing_bound": Stage(0.30, 1.0, 60.0),
    "lp_bound": Stage(0.40, 1.0),
    "pair": Stage(0.90, 5.0, 60.0),
    "polish": Stage(1.00, 5.0),
    "replan": Stage(0.70, 0.5),
    "first_fit": Stage(0.25, 0.0),
}
"""The stages of the module docstring's table."""
TAIL_PASSES = 20
"""What joining the building plans takes, in passes over every position: first-fit around the kept
plans (~12, when a building has no plan) and the joined plan's figures and verification (~9; both
measured on the gigawatt region, where counting the proposals takes 0.31 s idle)."""
ROUND_START = 0.25
"""Part of the whole limit that must be left for a master round to start."""
POLISH_KEEP = 0.5
"""Part of the time left when the pairs of buildings start that they leave to the polish where it
follows: the whole model from the joined plan, whose MIP bound after its root cuts is the strongest
the run can state (the LP relaxation of the whole is 1.6-4.5 % above the optimum on drawn fleets,
the root bound 0.1-0.3 %). Measured on a drawn 250k fleet (benchmarks/draws.py seed 1596950628,
idle): the whole model reached its root bound in 40 s of a 50 s limit (build 5 s, presolve, LP,
first cut round), and the pairs found every gain in their first two waves, 40 s of the 100 s left."""
FIRST_FIT_FINISH = 0.5
"""Finishing a first-fit plan of the whole (its figures and its verification) takes about this part
of the time placing its racks took: measured on the 5 GW region, idle, 52 s placing 34,752 racks and
24 s of figures and verification; on a loaded machine both slow alike. A hand-over's first-fit that
must also be finished in time stops placing at :meth:`Budget.first_fit_until`."""
BOUNDS_START_S = 3.0
"""Seconds that must be left for an LP bound or the polish to start (below it the capacity bound
and the joined plan stand)."""
MEMORY_GB = 4.0
"""Memory every process of a run may hold together, GB (the issue's target at a million GPUs)."""
WHOLE_GB_PER_COUNT = 13.7e-6
"""Peak GB of a whole-model solve per count variable (measured: a drawn 250k fleet's model, 92,952
counts of 103,100 variables, peaked at 1.27 GB solving; benchmarks/draws.py seed 12)."""
WHOLE_PART = 0.6
"""Part of :data:`MEMORY_GB` the whole model may take beside the decomposition's own processes."""
MANY_WAVES = 16
"""More waves of building solves than this share one end (module docstring), stop at their proven
GPUs (no least-cable tie-breaks: they take half of whatever time a job has left) and skip the whole
model's LP bound and polish (neither finishes at that size in what the buildings leave)."""


@dataclass
class Budget:
    """The time of one decomposition run (module docstring): its deadline, the lanes its jobs run
    in and the measured cost of one pass over the site."""

    deadline: Deadline
    executor: str = "serial"
    workers: int = 1
    pass_s: float = 0.0
    """Seconds one pass over every position took (counting the proposals), measured in this run."""
    fallback: Any = None
    """First-fit's verified plan of the whole (a :class:`~planner.plan.Plan`) and the seconds it took,
    when it meets every demand: what the run returns when nothing better is found in time."""
    whole_counts: int = 0
    """Count variables the whole model would make (position class × rack type × cluster group, per
    phase), counted with the proposals; 0: not counted (the whole model is taken to fit)."""

    polish_follows: bool = False
    """Whether the polish follows the pairs (set by the join): they leave it :data:`POLISH_KEEP`."""

    @property
    def lanes(self) -> int:
        """Jobs that run at once: one when serial, else the workers."""
        return 1 if self.executor == "serial" else max(1, self.workers)

    def left(self) -> float:
        return self.deadline.left()

    def waves(self, jobs: int) -> int:
        """Waves ``jobs`` parallel jobs take on the lanes."""
        return max(1, math.ceil(jobs / self.lanes))

    def share(self, stage: str, jobs: int = 1, within: Deadline | None = None) -> float:
        """part × the time left (of ``within``, default the run's deadline) ÷ the waves, s."""
        left = (within or self.deadline).left()
        return STAGES[stage].part * left / self.waves(jobs)

    def starts(self, stage: str, jobs: int = 1, within: Deadline | None = None) -> bool:
        """Whether each of ``jobs`` jobs of the stage would get at least its least."""
        return self.share(stage, jobs, within) >= STAGES[stage].least_s

    def seconds(self, stage: str, jobs: int = 1, within: Deadline | None = None) -> float:
        """The limit each of ``jobs`` jobs of the stage is given: its share within [least, most]."""
        st = STAGES[stage]
        return min(st.most_s, max(st.least_s, self.share(stage, jobs, within)))

    def tail_s(self) -> float:
        """The reserve for joining, verifying and writing: :data:`TAIL_PASSES` measured passes."""
        return TAIL_PASSES * self.pass_s

    def solves(self) -> Deadline:
        """The deadline the building solves and the pairs work to: the run's, less the tail."""
        return self.deadline.sooner(self.tail_s())

    def pairs_end(self) -> Deadline:
        """The deadline the pairs work to: the solves' (:meth:`solves`), sooner by the part of the
        time left that the stages after them take: :data:`POLISH_KEEP` where the polish follows, else
        the packing bound's part."""
        keep = POLISH_KEEP if self.polish_follows else STAGES["packing_bound"].part
        return self.solves().sooner(keep * self.left())

    def pairs_beyond(self) -> Deadline:
        """How far the pairs may go on once a wave of theirs has gained: the solves' deadline
        (:meth:`solves`), sooner by the packing bound's part of the time left, which follows them."""
        return self.solves().sooner(STAGES["packing_bound"].part * self.left())

    def round_may_start(self) -> bool:
        return self.left() >= ROUND_START * self.deadline.limit_s

    def bounds_may_start(self) -> bool:
        return self.left() > BOUNDS_START_S

    def first_fit_until(self) -> float:
        """When a hand-over's first-fit of the whole stops placing racks, so that finishing what it
        placed (:data:`FIRST_FIT_FINISH` of the placing time) ends by the deadline:
        now + left / (1 + FIRST_FIT_FINISH)."""
        return self.deadline.clock() + max(0.0, self.left()) / (1 + FIRST_FIT_FINISH)

    def whole_gb(self) -> float:
        """Estimated peak GB of the whole model's solve."""
        return self.whole_counts * WHOLE_GB_PER_COUNT

    def whole_fits(self) -> bool:
        """Whether the whole model (its LP bound, the polish, a hand-over) may be built in memory
        beside the decomposition: at most :data:`WHOLE_PART` of :data:`MEMORY_GB`."""
        return self.whole_gb() <= WHOLE_PART * MEMORY_GB

    def many_waves(self, jobs: int) -> bool:
        """Whether ``jobs`` building solves take more than :data:`MANY_WAVES` waves."""
        return self.waves(jobs) > MANY_WAVES

    def until(self, within: Deadline) -> float:
        """The end ``within`` as a wall-clock time (s since the epoch), the form a job on another
        machine or process can read."""
        return time.time() + within.left()
