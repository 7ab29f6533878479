"""Field paths of a scenario (``site.buildings[1].halls[0].rows[*].max_rack_power_kw``): parsed, checked
against a base scenario and set (:mod:`planner.batch.sweep`)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from planner.errors import Problem

_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+|\*)\]|\.")


def parse_path(path: str) -> list[str | int]:
    """``a.b[2].c[*]`` → ["a", "b", 2, "c", "*"]; raises ValueError on a malformed path."""
    out: list[str | int] = []
    pos = 0
    expect_name = True
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:
            raise ValueError(f"cannot read {path[pos : pos + 20]!r}")
        name, idx = m.group(1), m.group(2)
        if name is not None:
            if not expect_name:
                raise ValueError(f"missing '.' before {name!r}")
            out.append(name)
            expect_name = False
        elif idx is not None:
            out.append("*" if idx == "*" else int(idx))
        else:
            expect_name = True
        pos = m.end()
    if not out or not isinstance(out[0], str):
        raise ValueError("a path starts with a key")
    return out


def _targets(
    data: Any, parts: list[str | int], here: str = "", create: bool = False
) -> list[tuple[Any, str | int, str]]:
    """(container, key, shown path) of every place a path names; raises KeyError naming the first miss.
    With ``create``, a mapping left out of the data (a schema field at its empty default, such as
    ``lead_phases``) is made on the way when the next part is a key."""
    if not parts:
        return []
    head, rest = parts[0], parts[1:]
    out = []
    for key, value in _items(data, head, rest, here, create):
        shown = f"{here}[{key}]" if isinstance(key, int) else (f"{here}.{key}" if here else str(key))
        if rest:
            out += _targets(data[key] if create and isinstance(data, dict) else value, rest, shown, create)
        else:
            out.append((data, key, shown))
    return out


def _items(data: Any, head: str | int, rest: list, here: str, create: bool) -> list[tuple[Any, Any]]:
    """(key, value) of what one part of a path names in ``data`` (``*``: every item of a list)."""
    if head == "*":
        if not isinstance(data, list):
            raise KeyError(f"{here or 'the scenario'} is not a list")
        return list(enumerate(data))
    if isinstance(head, int):
        if not isinstance(data, list) or head >= len(data):
            n = len(data) if isinstance(data, list) else 0
            raise KeyError(f"{here}[{head}] does not exist ({n} items)")
        return [(head, data[head])]
    if not isinstance(data, dict):
        raise KeyError(f"{here or 'the scenario'} is not a mapping")
    if head not in data and rest:
        if not (create and isinstance(rest[0], str)):
            raise KeyError(f"{(here + '.' if here else '') + head} does not exist")
        data[head] = {}
    return [(head, data.get(head))]


def _model_knows(parts: list[str | int]) -> bool:
    """Whether a path names a field of the scenario schema (a field left at its default is absent
    from the base data but may still be varied)."""
    import types
    import typing

    from pydantic import BaseModel

    from planner.schema import Scenario

    def inner(tp: Any) -> list[Any]:
        """The types a (possibly Optional/Annotated/list/dict) annotation may hold."""
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            return inner(typing.get_args(tp)[0])
        if origin in (typing.Union, types.UnionType):
            return [t for a in typing.get_args(tp) for t in inner(a)]
        return [tp]

    kinds: list[Any] = [Scenario]
    for part in parts:
        nxt: list[Any] = []
        for tp in kinds:
            origin = typing.get_origin(tp)
            if (
                isinstance(part, str)
                and isinstance(tp, type)
                and issubclass(tp, BaseModel)
                and part in tp.model_fields
            ):
                nxt += inner(tp.model_fields[part].annotation)
            elif not isinstance(part, str) and origin in (list, tuple):
                nxt += [t for a in typing.get_args(tp) if a is not Ellipsis for t in inner(a)]
            elif isinstance(part, str) and origin is dict:
                nxt += inner(typing.get_args(tp)[1])
        if not nxt:
            return False
        kinds = nxt
    return True


def path_problems(base: dict, paths: Iterable[str]) -> list[Problem]:
    """Every path that names no field of the base scenario: one that does not parse or reach, or
    whose last key is neither in the base nor a schema field left at its default."""
    problems = []
    for fp in paths:
        try:
            parts = parse_path(fp)
            places = _targets(copy.deepcopy(base), parts, create=_model_knows(parts))
            if not places or (
                any(key not in box for box, key, _ in places if isinstance(box, dict))
                and not _model_knows(parts)
            ):
                problems.append(Problem(fp, "names no field of the base scenario"))
        except (ValueError, KeyError) as e:
            problems.append(Problem(fp, f"not a field of the base scenario: {e.args[0]}"))
    return problems


def set_path(data: Any, path: str, value: Any) -> None:
    """Set every place a path names to a copy of ``value``."""
    parts = parse_path(path)
    for container, key, _ in _targets(data, parts, create=_model_knows(parts)):
        container[key] = copy.deepcopy(value)
