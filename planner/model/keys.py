"""Keys and names of the model's variables and rows.

Every variable and limit is keyed by a typed key (:class:`ClassKey`, :class:`CountKey`,
:class:`ScopeKey`, :class:`LimitKey`) and named from it with :func:`lp_name`: IDs are escaped
one-to-one ('~' for '-', '!' for ':', '&' for the '+' joining a feed group's feeds; characters no
ID may hold), so names read back to site elements and never collide. Examples:

    n(R01@2,grand~teton~h100,train~gt)       racks of a type for a cluster in row R01, cable band 2
    power_n1(BW~B1,UPS~A)                     busway BW-B1 when UPS-A has failed
    load(BW~A1&BW~B1)                         the racks' load on the rows fed by BW-A1 and BW-B1
    cooling(CZ~AIR,q2)                        air zone CZ-AIR in phase q2
"""

from __future__ import annotations

from typing import NamedTuple


class ClassKey(NamedTuple):
    """A position class: a row and a cable-length band (the position index when not aggregated)."""

    row: str
    band: int


class CountKey(NamedTuple):
    """A count variable: racks of one type for one cluster group in one position class, added in
    one phase (None in a scenario without phases); ``role`` "spare" for its hot-spare racks."""

    cls: ClassKey
    rack_type: str
    group: str
    phase: str | None = None
    role: str = ""


class BuyKey(NamedTuple):
    """A retrofit bought in a phase."""

    retrofit: str
    phase: str | None


class ScopeKey(NamedTuple):
    """Members of a cluster group homed in one pod or building."""

    group: str
    scope: str


class LimitKey(NamedTuple):
    """A capacity limit: its row-name prefix (``space``, ``power_n1``: declared with its kind by the
    family that states it, :mod:`planner.model.registry`), the element it limits, for N-1 limits the
    failed node, and in phased scenarios the phase it holds in."""

    family: str
    ident: str
    failed: str = ""
    phase: str = ""


def _esc(text: str) -> str:
    return str(text).replace("-", "~").replace(":", "!").replace("+", "&")


def lp_name(family: str, *parts: object) -> str:
    """``family(part,part,…)`` with IDs escaped one-to-one (module docstring)."""
    return f"{family}({','.join(_esc(str(p)) for p in parts)})"


def class_label(k: ClassKey) -> str:
    """``row@band`` (used in names and messages)."""
    return f"{k.row}@{k.band}"
