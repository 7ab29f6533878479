"""Phases of a fleet expansion (§8): when each element exists, what each cluster wants, and
when bought retrofits take effect. Used by the optimiser, first-fit and the plan stage; the
verifier reads the same schema fields with its own code.

A scenario without phases has one implicit phase, ``None``. Elements name the phase from which
they exist (``online_phase``); a row exists from the later of its own and its hall's, a power
node or cooling zone in a hall likewise. A cluster wants ``gpus_by_phase[p]`` from phase p on
(the figure of the latest named phase at or before p; nothing before its first), else ``gpus``
from the first phase. A retrofit bought in phase q with lead time L is in effect from phase
q + L.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.schema import Cluster, Scenario


@dataclass
class Timeline:
    """Phase order and online phases of a scenario's elements."""

    phases: list[str | None]
    index: dict[str | None, int]
    row_on: dict[str, int] = field(default_factory=dict)
    node_on: dict[str, int] = field(default_factory=dict)
    zone_on: dict[str, int] = field(default_factory=dict)

    @property
    def last(self) -> str | None:
        return self.phases[-1]

    @property
    def phased(self) -> bool:
        return self.phases != [None]

    def at(self, phase: str | None) -> int:
        return self.index[phase]

    def offline_nodes(self, p: int) -> set[str]:
        """Power nodes that do not exist yet in phase index p."""
        return {n for n, on in self.node_on.items() if on > p}

    def offline_zones(self, p: int) -> set[str]:
        return {z for z, on in self.zone_on.items() if on > p}

    def change_points(self) -> list[int]:
        """Phase indices after which the online sets change (plus the last): a limit holding in
        the last phase of a run of equal capacity holds in the whole run, since racks only add."""
        ons = sorted({*self.row_on.values(), *self.node_on.values(), *self.zone_on.values()} - {0})
        points = {on - 1 for on in ons if on - 1 >= 0}
        points.add(len(self.phases) - 1)
        return sorted(points)

    def demand(self, c: Cluster, p: int) -> int | None:
        """GPUs cluster ``c`` wants in phase index p (module docstring); None: uncapped."""
        if c.gpus_by_phase is None:
            return c.gpus
        got = 0
        for i, gpus in sorted((self.index[ph], g) for ph, g in c.gpus_by_phase.items() if ph in self.index):
            if i <= p:
                got = gpus
        return got

    def first_wanted(self, c: Cluster) -> int:
        """First phase index in which the cluster wants any GPUs (0 without gpus_by_phase)."""
        if c.gpus_by_phase is None:
            return 0
        named = [self.index[p] for p, g in c.gpus_by_phase.items() if p in self.index and g > 0]
        return min(named, default=len(self.phases) - 1)


def timeline(scenario: Scenario) -> Timeline:
    """The phases of a scenario and when its rows, power nodes and cooling zones come online."""
    phases: list[str | None] = [p.id for p in scenario.phases] or [None]
    index = {p: i for i, p in enumerate(phases)}
    tl = Timeline(phases, index)

    def on(*ids: str | None) -> int:
        return max((index.get(i, 0) for i in ids if i is not None), default=0)

    for b in scenario.site.buildings:
        for n in b.power_nodes:
            tl.node_on[n.id] = on(n.online_phase)
        for h in b.halls:
            for n in h.power_nodes:
                tl.node_on[n.id] = on(h.online_phase, n.online_phase)
            for z in h.cooling_zones:
                tl.zone_on[z.id] = on(h.online_phase, z.online_phase)
            for r in h.rows:
                tl.row_on[r.id] = on(h.online_phase, r.online_phase)
    return tl
