"""Safe, fast YAML reading and plan writing.

:func:`load` builds Python data straight from libyaml's event stream in one
pass: no Python objects from tags (only the YAML 1.1 core scalars: strings,
integers, floats, booleans, null and dates), no aliases ("billion laughs"),
no duplicate keys, no nesting deeper than :data:`MAX_DEPTH`, no mapping with
more than :data:`MAX_KEYS` keys. Plain scalars are resolved with PyYAML's own
resolver and constructors (so values read exactly as ``yaml.safe_load`` reads
them) and memoised, which makes a 60,000-rack plan load in seconds instead of
the safe loader's tens of seconds.

:func:`dump_plan_yaml` writes a plan's data with one rack per line (a flow
mapping), strings double-quoted only where YAML would read them as something
else, floats always with a decimal point: plain YAML any reader takes back.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted."""
MAX_KEYS = 10_000
"""Most keys in one YAML mapping (no model of the planner has more than a few dozen)."""

_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_REFUSED = {f"tag:yaml.org,2002:{t}" for t in ("binary", "set", "omap", "pairs")}
_CONSTRUCTORS = SafeConstructor.yaml_constructors
_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()
_MEMO_MAX = 200_000


class YamlError(Exception):
    """A YAML problem at a line and column (1-based; 0 when unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}" if self.line else self.message


def _where(event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _short(text: str, n: int = 60) -> str:
    r = repr(text)
    return r if len(r) <= n else r[: n - 3] + "..."


def _scalar(event, memo: dict) -> Any:
    """The Python value of a scalar event (module docstring)."""
    tag = event.tag
    value = event.value
    if tag is None or tag == "!":
        plain = event.implicit[0] and not event.style
        if not plain:
            return value
        hit = memo.get(value, memo)
        if hit is not memo:
            return hit
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
        if tag == _STR:
            out: Any = value
        else:
            out = _construct(tag, value, event)
        if len(memo) < _MEMO_MAX:
            memo[value] = out
        return out
    if tag == _STR:
        return value
    return _construct(tag, value, event)


def _construct(tag: str, value: str, event) -> Any:
    if tag in _REFUSED:
        short = tag.rsplit(":", 1)[-1]
        raise YamlError(
            f"!!{short} values are not accepted; only mappings, lists, strings, numbers, booleans and dates",
            *_where(event),
        )
    ctor = _CONSTRUCTORS.get(tag)
    if ctor is None:
        raise YamlError(
            f"could not determine a constructor for the tag '{tag}'; "
            "only plain YAML (mappings, lists, strings, numbers, booleans) is accepted",
            *_where(event),
        )
    try:
        return ctor(_CONSTRUCTOR, yaml.ScalarNode(tag, value, event.start_mark, event.end_mark))
    except yaml.MarkedYAMLError:
        raise
    # PyYAML's constructors fail in many ways on odd text (!!int with no value: IndexError)
    except Exception as e:  # noqa: BLE001
        reason = (
            f": {e.args[0]}"
            if isinstance(e, (ValueError, OverflowError))
            and e.args
            and isinstance(e.args[0], str)
            and len(e.args[0]) < 120
            else ""
        )
        raise YamlError(
            f"cannot read {_short(value)} as {tag.rsplit(':', 1)[-1]}{reason}", *_where(event)
        ) from None


def load(text: str) -> Any:
    """Parse YAML text into plain data (module docstring); raises :class:`YamlError` or PyYAML's
    own parser errors (``yaml.MarkedYAMLError``, ``yaml.reader.ReaderError``)."""
    memo: dict = {}
    stack: list[list] = []  # [container, pending key (mappings), start event]
    root: list = []
    for event in yaml.parse(text, Loader=_PARSER):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            value = _scalar(event, memo)
            _attach(stack, root, value, event, is_scalar=True)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.tag not in (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
                _construct(event.tag, "", event)  # refuses it with the right message
            container: Any = {} if kind is yaml.MappingStartEvent else []
            _attach(stack, root, container, event, is_scalar=False)
            stack.append([container, _NO_KEY, event])
            if len(stack) > MAX_DEPTH:
                raise YamlError(f"YAML nesting is deeper than {MAX_DEPTH} levels", *_where(event))
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            stack.pop()
        elif kind is yaml.AliasEvent:
            raise YamlError(
                f"YAML aliases (*{event.anchor}) are not accepted; write the value out", *_where(event)
            )
        elif kind is yaml.DocumentStartEvent and root:
            raise YamlError("more than one YAML document; expected one", *_where(event))
    return root[0] if root else None


_NO_KEY = object()


def _attach(stack: list, root: list, value: Any, event, is_scalar: bool) -> None:
    if not stack:
        root.append(value)
        return
    frame = stack[-1]
    parent = frame[0]
    if type(parent) is list:
        parent.append(value)
        return
    if frame[1] is _NO_KEY:
        if not is_scalar:
            raise YamlError("mapping keys must be plain scalars", *_where(event))
        try:
            dup = value in parent
        except TypeError:
            raise YamlError("mapping keys must be plain scalars", *_where(event)) from None
        if dup:
            raise YamlError(f"duplicate key {_short(str(value))}", *_where(event))
        if len(parent) >= MAX_KEYS:
            raise YamlError(f"a mapping has more than {MAX_KEYS:,} keys", *_where(event))
        frame[1] = value
        parent[value] = None
    else:
        parent[frame[1]] = value
        frame[1] = _NO_KEY


# ------------------------------------------------------------------ plan writing

_PLAIN_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def _dq(value: str) -> str:
    """A YAML double-quoted scalar: escapes for quotes, backslashes, line breaks and every
    character YAML does not print."""
    out = []
    for ch in value:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif (
            0x20 <= code <= 0x7E
            or 0xA0 <= code <= 0xD7FF
            or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF
        ):
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _str(value: str, memo: dict) -> str:
    hit = memo.get(value)
    if hit is None:
        plain = (
            bool(_PLAIN_SAFE.fullmatch(value))
            and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR
        )
        hit = value if plain else _dq(value)
        memo[value] = hit
    return hit


def _float(x: float) -> str:
    if not math.isfinite(x):
        raise ValueError(f"cannot write {x!r}: plans hold finite numbers only")
    text = repr(float(x))
    if "e" in text or "E" in text:
        mant, exp = text.lower().split("e")
        if "." not in mant:
            mant += ".0"
        sign = "-" if exp.startswith("-") else "+"
        text = f"{mant}e{sign}{exp.lstrip('+-')}"
    return text


def scalar_text(value: Any, memo: dict) -> str:
    """A scalar as YAML text that reads back to the same value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    return _str(str(value), memo)


def _block(value: Any, indent: int, memo: dict, out: list[str], flow_lists: frozenset) -> None:
    """Block-style lines of a mapping or a list into ``out`` (the lists named in ``flow_lists``:
    one flow-style item a line)."""
    if isinstance(value, dict):
        _block_mapping(value, indent, memo, out, flow_lists)
    elif isinstance(value, list):
        _block_list(value, indent, memo, out, flow_lists)


def _block_mapping(value: dict, indent: int, memo: dict, out: list[str], flow_lists: frozenset) -> None:
    pad = " " * indent
    if not value:
        out[-1] += " {}"
        return
    for k, v in value.items():
        key = _str(str(k), memo)
        if isinstance(v, (dict, list)) and v:
            out.append(f"{pad}{key}:")
            if isinstance(v, list) and k in flow_lists:
                out.extend(f"{pad}- {_flow(item, memo)}" for item in v)
            else:
                _block(v, indent + 2 if isinstance(v, dict) else indent, memo, out, flow_lists)
        elif isinstance(v, (dict, list)):
            out.append(f"{pad}{key}: {'{}' if isinstance(v, dict) else '[]'}")
        else:
            out.append(f"{pad}{key}: {scalar_text(v, memo)}")


def _block_list(value: list, indent: int, memo: dict, out: list[str], flow_lists: frozenset) -> None:
    pad = " " * indent
    for item in value:
        if isinstance(item, (dict, list)) and item:
            out.append(f"{pad}-")
            sub: list[str] = []
            _block(item, indent + 2, memo, sub, flow_lists)
            out[-1] = f"{pad}- {sub[0].lstrip()}" if sub else out[-1]
            out.extend(sub[1:])
        else:
            text = _flow(item, memo) if isinstance(item, (dict, list)) else scalar_text(item, memo)
            out.append(f"{pad}- {text}")


def _flow(value: Any, memo: dict) -> str:
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                text = _flow(v, memo)
            # a plan's racks repeat their rows, types, clusters and coordinates: each scalar is written once
            else:
                key = (v.__class__, v)
                text = memo.get(key)
                if text is None:
                    text = memo[key] = scalar_text(v, memo)
            parts.append(f"{_str(str(k), memo)}: {text}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, memo) for v in value) + "]"
    return scalar_text(value, memo)


def dump(data: dict, flow_lists: tuple[str, ...] = ("racks",)) -> str:
    """Block YAML of a mapping, with the lists named in ``flow_lists`` one flow item per line."""
    out: list[str] = []
    _block(data, 0, {}, out, frozenset(flow_lists))
    return "\n".join(out) + "\n"
