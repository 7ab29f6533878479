"""Load stage: YAML text → validated domain objects, or one :class:`InputError`.

YAML is read with a safe loader only: no Python tags, no aliases (they make
"billion laughs" bombs), no duplicate keys, no files over :data:`MAX_BYTES`,
UTF-8 text only. Schema errors from pydantic and cross-reference problems from
:mod:`planner.consistency` are turned into :class:`~planner.errors.Problem`
lines that name the YAML path, the bad value and what is allowed.
"""

from __future__ import annotations

import hashlib
import json
import typing
from pathlib import Path
from types import UnionType
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from planner.consistency import check_scenario, check_site
from planner.errors import InputError, Problem, join_path
from planner.schema import Catalog, Scenario, Site

MAX_BYTES = 32 * 1024 * 1024
"""Largest YAML file accepted, bytes."""

DATASETS = Path(__file__).resolve().parent.parent / "datasets"
"""Shipped sites, catalog and scenarios."""

BUILTIN_CATALOG = DATASETS / "catalog.yaml"
"""The built-in rack catalog."""


_SAFE_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (4x faster), else the pure-Python one."""


class _SafeStrictLoader(_SAFE_BASE):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader, refusing duplicate keys (aliases are refused by :func:`_reject_aliases`)."""

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        keys = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                dup = key in keys
            except TypeError:
                raise yaml.MarkedYAMLError(
                    problem="mapping keys must be plain scalars", problem_mark=key_node.start_mark
                ) from None
            if dup:
                raise yaml.MarkedYAMLError(
                    problem=f"duplicate key '{key}'", problem_mark=key_node.start_mark
                )
            keys.add(key)
        return super().construct_mapping(node, deep=deep)


MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted."""


def _reject_aliases(text: str) -> None:
    """Scan the event stream (no construction): refuse aliases ("billion laughs" bombs) and
    nesting deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for event in yaml.parse(text, Loader=_SAFE_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise yaml.MarkedYAMLError(problem=f"YAML nesting is deeper than {MAX_DEPTH} levels", problem_mark=event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            raise yaml.MarkedYAMLError(
                problem=f"YAML aliases (*{event.anchor}) are not accepted; write the value out", problem_mark=event.start_mark
            )


def parse_yaml(text: str | bytes, source: str = "<text>") -> Any:
    """Parse YAML text safely; raise :class:`InputError` with the line of the fault."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise InputError(f"file is {len(text):,} bytes; the limit is {MAX_BYTES:,} bytes", source)
        if b"\x00" in text:
            raise InputError("file is binary (contains NUL bytes); expected YAML text", source)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"file is not UTF-8 text (bad byte at offset {e.start}); expected YAML text", source) from None
    if len(text) > MAX_BYTES:
        raise InputError(f"text is {len(text):,} characters; the limit is {MAX_BYTES:,}", source)
    if not text.strip():
        raise InputError("file is empty; expected a YAML mapping", source)
    try:
        _reject_aliases(text)
        data = yaml.load(text, Loader=_SafeStrictLoader)  # noqa: S506 - the loader is a SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = e.problem or str(e)
        if "could not determine a constructor" in what:
            what = f"{what.strip()}; only plain YAML (mappings, lists, strings, numbers, booleans) is accepted"
        raise InputError(f"{where}{what}", source) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML: {e}", source) from None
    except RecursionError:
        raise InputError("YAML nesting is too deep", source) from None
    if data is None:
        raise InputError("file is empty; expected a YAML mapping", source)
    return data


def read_yaml_file(path: str | Path) -> Any:
    """Read and parse a YAML file (size checked before reading it whole)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", str(path)) from None
    if p.is_dir():
        raise InputError("is a directory; expected a YAML file", str(path))
    if size > MAX_BYTES:
        raise InputError(f"file is {size:,} bytes; the limit is {MAX_BYTES:,} bytes", str(path))
    return parse_yaml(p.read_bytes(), str(path))


# ------------------------------------------------------------ error messages


def _unwrap(tp: Any) -> list[Any]:
    """Candidate inner types of an annotation (Optional, list, dict, Annotated)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, UnionType):
        return [u for a in typing.get_args(tp) for u in _unwrap(a)]
    return [tp]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class found by following ``loc`` from ``model``; none if it leaves models."""
    current: Any = model
    for part in loc:
        options = _unwrap(current)
        if isinstance(part, str):
            m = next((u for u in options if isinstance(u, type) and issubclass(u, BaseModel)), None)
            if m is None or part not in m.model_fields:
                return None
            current = m.model_fields[part].annotation
        else:
            lst = next((u for u in options if typing.get_origin(u) is list), None)
            if lst is None:
                return None
            current = typing.get_args(lst)[0]
    return next((u for u in _unwrap(current) if isinstance(u, type) and issubclass(u, BaseModel)), None)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def problems_from_validation(err: ValidationError, model: type[BaseModel], prefix: str) -> list[Problem]:
    """Turn pydantic errors into problems with YAML paths and plain sentences."""
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = join_path(prefix, *loc)
        kind = e["type"]
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            allowed = f" (allowed: {', '.join(parent.model_fields)})" if parent else ""
            msg = f"unknown key '{loc[-1]}'{allowed}"
        elif kind == "missing":
            msg = "required key is missing"
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            msg = f"expected a mapping, got {_show(e.get('input'))}"
        elif kind == "value_error":
            msg = str(e["ctx"]["error"]) if "ctx" in e else e["msg"]
        else:
            msg = f"{e['msg'][0].lower()}{e['msg'][1:]}, got {_show(e.get('input'))}"
        out.append(Problem(path, msg))
    return out


def validate_model(model: type[BaseModel], data: Any, prefix: str, source: str = "") -> Any:
    """Validate ``data`` as ``model``; raise :class:`InputError` listing every problem."""
    if not isinstance(data, dict):
        raise InputError(Problem(prefix, f"expected a mapping of {model.__name__} keys, got {_show(data)}"), source)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise InputError(problems_from_validation(e, model, prefix), source) from None


# ------------------------------------------------------------- entry points


def builtin_catalog_data() -> dict[str, Any]:
    """The built-in catalog as parsed YAML."""
    data = read_yaml_file(BUILTIN_CATALOG)
    if not isinstance(data, dict) or not isinstance(data.get("rack_types"), list):
        raise InputError("built-in catalog must be a mapping with a rack_types list", str(BUILTIN_CATALOG))
    return data


def merge_catalog(user: dict[str, Any] | None) -> dict[str, Any]:
    """User rack types first (keeping their indices for error paths), then built-ins not overridden."""
    base = builtin_catalog_data()
    if user is None:
        return base
    if not isinstance(user, dict):
        return user  # validation reports the shape problem
    mine = user.get("rack_types", [])
    if not isinstance(mine, list):
        return user
    ids = {r.get("id") for r in mine if isinstance(r, dict)}
    merged = [*mine, *(r for r in base["rack_types"] if r.get("id") not in ids)]
    return {**user, "rack_types": merged}


def _resolve_ref(value: Any, base_dir: Path | None, key: str) -> Any:
    """A string value is a path (relative to the scenario file) to a YAML file holding the mapping."""
    if not isinstance(value, str):
        return value
    if base_dir is None:
        raise InputError(Problem(key, f"'{value}' is a file reference, but the scenario was given as text; inline the {key} mapping"))
    return read_yaml_file(base_dir / value)


def scenario_from_data(data: Any, base_dir: Path | None = None, source: str = "") -> Scenario:
    """Validate a parsed scenario mapping (site and catalog inline or by path)."""
    if not isinstance(data, dict):
        raise InputError(f"expected a scenario mapping, got {_show(data)}", source)
    data = dict(data)
    if "site" in data:
        data["site"] = _resolve_ref(data["site"], base_dir, "site")
    data["catalog"] = merge_catalog(_resolve_ref(data.get("catalog"), base_dir, "catalog"))
    scenario = validate_model(Scenario, data, "", source)
    problems = check_scenario(scenario)
    if problems:
        raise InputError(problems, source)
    return scenario


def load_scenario(path: str | Path) -> Scenario:
    """Load stage: read a scenario YAML file, resolve site/catalog paths, validate everything."""
    p = Path(path)
    return scenario_from_data(read_yaml_file(p), p.resolve().parent, str(path))


def load_scenario_text(text: str | bytes, base_dir: Path | None = None, source: str = "<scenario>") -> Scenario:
    """Load a scenario from YAML text (dashboard uploads)."""
    return scenario_from_data(parse_yaml(text, source), base_dir, source)


def load_site(path: str | Path) -> Site:
    """Read and validate a site YAML file on its own."""
    site = validate_model(Site, read_yaml_file(path), "site", str(path))
    problems = check_site(site)
    if problems:
        raise InputError(problems, str(path))
    return site


def load_catalog(path: str | Path | None = None) -> Catalog:
    """The built-in catalog, with a user catalog file merged over it if given."""
    user = read_yaml_file(path) if path else None
    return validate_model(Catalog, merge_catalog(user), "catalog", str(path or BUILTIN_CATALOG))


def scenario_hash(scenario: Scenario) -> str:
    """First 16 hex digits of the SHA-256 of the scenario's canonical JSON."""
    canon = json.dumps(scenario.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def dump_yaml(data: Any) -> str:
    """Plain YAML text (block style, keys in model order)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=False, width=120)
