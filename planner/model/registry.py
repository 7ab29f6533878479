"""Constraint families, each declared once: what it adds, what it needs, the limits it states.

A family is a :class:`Family`: its function (adds variables and rows to a :class:`~planner.model.core.Model`),
the families it needs first (by reference), and its limit rows (row-name prefix → :class:`LimitRows`: the
:class:`~planner.enums.LimitKind` they limit and the relaxation step :mod:`planner.explainer` tries on them).
Words, chart titles and whether a kind holds per phase belong to the kind (:mod:`planner.enums`), so the
dashboard reads them without loading the optimiser.

:data:`FAMILIES` is the build order (:func:`planner.model.build` walks it). Every row a family adds is
recorded in the model's labelled block for that family (``m.blocks[family][row name]``): the golden test,
the two-stage extensive form, the LP writer and the explainer read the blocks, never PuLP's internals.

Adding a family (the README shows a worked example): write ``add_<family>`` in a module of
:mod:`planner.model`, decorate it with :func:`declare`, and put it in :data:`FAMILIES` in
:mod:`planner.model.families`; its golden rows go in ``tests/golden/<family>.lp.txt``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.enums import LimitKind
from planner.schema import Scenario

Model = Any
"""A :class:`planner.model.core.Model` (named, not imported: the model object imports this registry)."""

Relax = Callable[[dict[str, Any], Scenario, set[str], float], tuple[list[str], float | None]]
"""One relaxation step on the scenario's data (a JSON dict, changed in place): (data, scenario, the
limited elements, the step as a share) → (the steps in words, their indicative cost in USD or None
when the step has no price)."""


class OrderError(RuntimeError):
    """A constraint family was called before a family it needs, twice, or stated a limit it does not
    declare."""


@dataclass(frozen=True)
class LimitRows:
    """Limit rows of one name prefix: what they limit and how the explainer relaxes them."""

    kind: LimitKind
    relax: Relax | None = None
    """One step of relaxing these limits (None: not relaxed by the explainer)."""


@dataclass(frozen=True, eq=False)
class Family:
    """One constraint family (module docstring). Calling it adds the family to a model."""

    name: str
    add: Callable[[Model], None]
    needs: tuple[Family, ...] = ()
    limits: Mapping[str, LimitRows] = field(default_factory=dict)
    """Row-name prefix → its limit rows (the rows :meth:`Model.add_limit` states; others are definitions)."""

    @property
    def function(self) -> str:
        return self.add.__name__

    @property
    def doc(self) -> str:
        return (self.add.__doc__ or "").strip()

    def __call__(self, m: Model) -> None:
        missing = [f for f in self.needs if f.name not in m.steps]
        if missing:
            raise OrderError(
                f"the {self.name} family needs {', '.join(f.name for f in missing)} first: "
                f"add {missing[0].function} before {self.function}"
            )
        if self.name in m.steps:
            raise OrderError(f"the {self.name} family was added twice; build a new model instead")
        m.steps.append(self.name)
        m.blocks.setdefault(self.name, {})
        outer, m.current = m.current, self
        try:
            self.add(m)
        finally:
            m.current = outer

    def __repr__(self) -> str:
        return f"Family({self.name})"


def amount(x: float) -> str:
    """A figure in a relaxation step: thousands separators, one decimal unless whole."""
    return f"{x:,.1f}".removesuffix(".0")


def declare(
    name: str, needs: tuple[Family, ...] = (), limits: Mapping[str, LimitRows] | None = None
) -> Callable[[Callable], Family]:
    """Decorator: the function becomes the :class:`Family` of that name."""

    def wrap(add: Callable[[Model], None]) -> Family:
        return Family(name, add, tuple(needs), dict(limits or {}))

    return wrap
