"""Load stage: YAML text → validated domain objects, or one :class:`InputError`.

YAML is read with a safe loader only: no Python tags, no aliases (they make
"billion laughs" bombs), no duplicate keys, no files over :data:`MAX_BYTES`,
UTF-8 text only. Schema errors from pydantic and cross-reference problems from
:mod:`planner.input.checks` are turned into :class:`~planner.errors.Problem`
lines that name the YAML path, the bad value and what is allowed.
"""

from __future__ import annotations

import os
import stat
import typing
from pathlib import Path, PurePosixPath, PureWindowsPath
from types import UnionType
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from planner.errors import MAX_PROBLEMS, InputError, Problem, join_path
from planner.input.checks import check_scenario, check_site
from planner.schema import Catalog, Scenario, Site

MAX_BYTES = 32 * 1024 * 1024
"""Largest YAML file accepted, bytes."""

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
"""Shipped sites, catalog and scenarios."""

BUILTIN_CATALOG = DATASETS / "catalog.yaml"
"""The built-in rack catalog."""


from planner.schema.hashing import run_hash, scenario_hash  # noqa: E402,F401 - re-exported
from planner.yamlio import MAX_DEPTH, MAX_KEYS, YamlError  # noqa: E402,F401 - limits re-exported
from planner.yamlio import load as _load_yaml  # noqa: E402


def parse_yaml(text: str | bytes, source: str = "<text>") -> Any:
    """Parse YAML text safely; raise :class:`InputError` with the line of the fault."""
    if isinstance(text, bytes):
        text = _decoded(text, source)
    if len(text) > MAX_BYTES:
        raise InputError(f"text is {len(text):,} characters; the limit is {MAX_BYTES:,}", source)
    if not text.strip():
        raise InputError("file is empty; expected a YAML mapping", source)
    try:
        data = _load_yaml(text)
    except YamlError as e:
        raise InputError(str(e), source) from None
    except yaml.MarkedYAMLError as e:
        raise InputError(_marked(e), source) from None
    except yaml.reader.ReaderError as e:
        raise InputError(_bad_character(e, text), source) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML: {_show(str(e))}", source) from None
    except RecursionError:
        raise InputError("YAML nesting is too deep", source) from None
    if data is None:
        raise InputError("file is empty; expected a YAML mapping", source)
    return data


def _decoded(text: bytes, source: str) -> str:
    """UTF-8 text of at most :data:`MAX_BYTES` bytes, no NUL bytes."""
    if len(text) > MAX_BYTES:
        raise InputError(f"file is {len(text):,} bytes; the limit is {MAX_BYTES:,} bytes", source)
    if b"\x00" in text:
        raise InputError("file is binary (contains NUL bytes); expected YAML text", source)
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as e:
        what = f"file is not UTF-8 text (bad byte at offset {e.start}); expected YAML text"
        raise InputError(what, source) from None


def _marked(e: yaml.MarkedYAMLError) -> str:
    """A YAML error with its line and column."""
    mark = e.problem_mark or e.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = e.problem or str(e)
    if "could not determine a constructor" in what:
        what = f"{what.strip()}; only plain YAML (mappings, lists, strings, numbers, booleans) is accepted"
    return f"{where}{what}"


def _bad_character(e, text: str) -> str:
    """A character YAML does not allow, with its line and column."""
    pos = max(0, min(int(e.position), len(text)))
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    ch = chr(e.character) if isinstance(e.character, int) else e.character
    return f"line {line}, column {col}: character {ch!r} is not allowed in YAML ({e.reason})"


def _read_regular(path: Path, shown: str) -> bytes:
    """The bytes of a regular file, at most :data:`MAX_BYTES`: directories, devices, FIFOs and
    sockets are refused before anything is read, and a FIFO never blocks (non-blocking open)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError("cannot read file: No such file or directory", shown) from None
    except IsADirectoryError:
        raise InputError("is a directory; expected a YAML file", shown) from None
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", shown) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a directory; expected a YAML file", shown)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("is not a regular file (a device, FIFO or socket); expected a YAML file", shown)
        if st.st_size > MAX_BYTES:
            raise InputError(f"file is {st.st_size:,} bytes; the limit is {MAX_BYTES:,} bytes", shown)
        chunks = []
        left = MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_BYTES:
            raise InputError(f"file grew beyond the limit of {MAX_BYTES:,} bytes while being read", shown)
        return data
    finally:
        os.close(fd)


def read_yaml_file(path: str | Path) -> Any:
    """Read and parse a YAML file named by the user (a regular file, size checked before reading)."""
    text = str(path)
    if "\x00" in text:
        raise InputError("path contains a NUL byte", _show(text))
    return parse_yaml(_read_regular(Path(path), text), text)


MAX_REF_CHARS = 1024
"""Longest file reference (``site:``, ``catalog:``) accepted, characters."""


class DataRoot:
    """Where the files a scenario names (``site:``, ``catalog:``) may come from."""

    def read(self, ref: str, key: str) -> tuple[Any, str]:
        """Parsed YAML of the file ``ref`` named at YAML path ``key``, and its display name."""
        raise NotImplementedError


def _check_ref(ref: str, key: str) -> None:
    if "\x00" in ref:
        raise InputError(Problem(key, f"{_show(ref)} contains a NUL byte; expected a file name"))
    if len(ref) > MAX_REF_CHARS:
        raise InputError(Problem(key, f"path is {len(ref):,} characters; the limit is {MAX_REF_CHARS:,}"))
    if not ref.strip():
        raise InputError(Problem(key, "empty path; expected a file name or an inline mapping"))


class FolderRoot(DataRoot):
    """Files inside one folder (the scenario's, or an explicit data root): absolute paths,
    ``..`` escapes and symlinks that resolve outside it are refused, as are non-regular files."""

    def __init__(self, folder: str | Path, what: str = "the scenario's folder") -> None:
        self.folder = Path(folder).resolve()
        self.what = what

    def locate(self, ref: str, key: str) -> Path:
        """The confined path of ``ref`` (see the class docstring)."""
        _check_ref(ref, key)
        pure = PurePosixPath(ref)
        if pure.is_absolute() or ref.startswith("~") or PureWindowsPath(ref).drive:
            raise InputError(
                Problem(key, f"{_show(ref)} is an absolute path; give a path relative to {self.what}")
            )
        if ".." in pure.parts:
            raise InputError(Problem(key, f"{_show(ref)} leaves {self.what} ('..' is not accepted)"))
        full = (self.folder / ref).resolve()
        if not full.is_relative_to(self.folder):
            raise InputError(Problem(key, f"{_show(ref)} resolves outside {self.what} (a symbolic link?)"))
        return full

    def read(self, ref: str, key: str) -> tuple[Any, str]:
        full = self.locate(ref, key)
        try:
            return parse_yaml(_read_regular(full, ref), ref), ref
        except InputError as e:
            raise InputError([Problem(key, f"{_show(ref)}: {p}") for p in e.problems]) from None


class UploadRoot(DataRoot):
    """Uploaded files by name, then a fallback folder (the dashboard: uploads, then shipped datasets)."""

    def __init__(self, files: dict[str, bytes], fallback: FolderRoot | None) -> None:
        self.files = dict(files)
        self.fallback = fallback

    def read(self, ref: str, key: str) -> tuple[Any, str]:
        _check_ref(ref, key)
        if ref in self.files:
            try:
                return parse_yaml(self.files[ref], ref), ref
            except InputError as e:
                raise InputError([Problem(key, f"{_show(ref)}: {p}") for p in e.problems]) from None
        if self.fallback is None:
            raise InputError(
                Problem(
                    key,
                    f"{_show(ref)} is neither an uploaded file nor inline; upload it or inline the mapping",
                )
            )
        try:
            return self.fallback.read(ref, key)
        except InputError as e:
            if any("No such file" in p.message for p in e.problems):
                known = ", ".join(sorted(self.files)) or "none"
                raise InputError(
                    Problem(
                        key,
                        f"{_show(ref)} is neither an uploaded file (uploaded: {_show(known)}) nor a "
                        "shipped dataset",
                    )
                ) from None
            raise


def as_root(base: str | Path | DataRoot | None) -> DataRoot | None:
    """A data root from a folder path, a root, or none."""
    if base is None or isinstance(base, DataRoot):
        return base
    return FolderRoot(base)


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


SHOW_CHARS = 60
"""Longest echo of a bad value in a message (a prefix, never a file's contents)."""


def _show(value: Any) -> str:
    """A short, safe echo of a bad value: its repr cut to :data:`SHOW_CHARS` characters."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return f"a {len(str(abs(value)))}-digit integer"
    if isinstance(value, (dict, list)):
        text = repr(value) if len(value) <= 20 else f"a {type(value).__name__} of {len(value)} items"
    else:
        text = repr(value)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 3] + "..."


def _short_key(part: Any) -> Any:
    """A path part as shown: long keys cut like values."""
    if isinstance(part, str) and len(part) > SHOW_CHARS:
        return part[: SHOW_CHARS - 3] + "..."
    return part


def _kind(value: Any) -> str:
    """A value's YAML kind, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


_TYPE_WANTED = {
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "enum": None,
}


def problems_from_validation(err: ValidationError, model: type[BaseModel], prefix: str) -> list[Problem]:
    """Turn pydantic errors into problems with YAML paths and plain sentences."""
    out = []
    for e in err.errors(include_url=False)[: MAX_PROBLEMS + 1]:
        loc = tuple(_short_key(p) for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = join_path(prefix, *loc)
        kind = e["type"]
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            allowed = f" (allowed: {', '.join(parent.model_fields)})" if parent else ""
            msg = f"unknown key {_show(loc[-1])}{allowed}"
        elif kind == "missing":
            msg = "required key is missing"
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            msg = f"expected a mapping, got {_show(e.get('input'))}"
        elif kind == "value_error":
            msg = str(e["ctx"]["error"]) if "ctx" in e else e["msg"]
        elif kind == "finite_number":
            msg = f"expected a finite number, got {_show(e.get('input'))}"
        elif kind in _TYPE_WANTED and _TYPE_WANTED[kind]:
            value = e.get("input")
            msg = f"expected {_TYPE_WANTED[kind]}, got {_show(value)} ({_kind(value)})"
        else:
            msg = f"{e['msg'][0].lower()}{e['msg'][1:]}, got {_show(e.get('input'))}"
        out.append(Problem(path, msg))
    return out


def validate_model(model: type[BaseModel], data: Any, prefix: str, source: str = "") -> Any:
    """Validate ``data`` as ``model``; raise :class:`InputError` listing every problem."""
    if not isinstance(data, dict):
        raise InputError(
            Problem(prefix, f"expected a mapping of {model.__name__} keys, got {_show(data)}"), source
        )
    try:
        return model.model_validate(data)
    except ValidationError as e:
        found = problems_from_validation(e, model, prefix)
        raise InputError(
            found[:MAX_PROBLEMS], source, more=e.error_count() - len(found[:MAX_PROBLEMS])
        ) from None


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
    ids = {
        r.get("id") for r in mine if isinstance(r, dict) and isinstance(r.get("id"), str)
    }  # other IDs: validation names them
    merged = [*mine, *(r for r in base["rack_types"] if r.get("id") not in ids)]
    sw = user.get("switches", [])
    if not isinstance(sw, list):
        return {**user, "rack_types": merged}
    sids = {w.get("id") for w in sw if isinstance(w, dict) and isinstance(w.get("id"), str)}
    return {
        **user,
        "rack_types": merged,
        "switches": [*sw, *(w for w in base.get("switches", []) if w.get("id") not in sids)],
    }


def _resolve_ref(value: Any, root: DataRoot | None, key: str) -> Any:
    """A string value is a file (inside the data root) holding the mapping."""
    if not isinstance(value, str):
        return value
    if root is None:
        raise InputError(
            Problem(
                key,
                f"{_show(value)} is a file reference, but the scenario was given as text; inline the {key} "
                "mapping",
            )
        )
    return root.read(value, key)[0]


def _with_types(catalog: Any, types: Any) -> Any:
    """A catalog with the rack types an installed-racks file brings (``planner import netbox
    --existing``: each installed rack's load), those the catalog names itself kept."""
    if not isinstance(types, list) or not types:
        return catalog
    cat = dict(catalog) if isinstance(catalog, dict) else {} if catalog is None else None
    if cat is None or not isinstance(cat.get("rack_types", []), list):
        return catalog  # validation reports the shape problem
    mine = {r.get("id") for r in cat.get("rack_types", []) if isinstance(r, dict)}
    cat["rack_types"] = [
        *cat.get("rack_types", []),
        *(t for t in types if isinstance(t, dict) and t.get("id") not in mine),
    ]
    return cat


def scenario_from_data(
    data: Any, base_dir: str | Path | DataRoot | None = None, source: str = ""
) -> Scenario:
    """Validate a parsed scenario mapping (site and catalog inline, or files inside ``base_dir``:
    a folder, or a :class:`DataRoot`)."""
    if not isinstance(data, dict):
        raise InputError(f"expected a scenario mapping, got {_show(data)}", source)
    root = as_root(base_dir)
    data = dict(data)
    problems: list[Problem] = []
    for key in ("site", "catalog", "existing"):
        if key in data:
            try:
                data[key] = _resolve_ref(data[key], root, key)
            except InputError as e:
                problems += e.problems
    if isinstance(data.get("existing"), dict):  # a plan, or an import's installed racks: all installed now
        got = data["existing"]
        data["existing"] = got["racks"] if isinstance(got.get("racks"), list) else got
        data["catalog"] = _with_types(data.get("catalog"), got.get("rack_types"))
    if isinstance(data.get("existing"), list):
        data["existing"] = [{**r, "existing": True} if isinstance(r, dict) else r for r in data["existing"]]
    if problems:
        raise InputError(problems, source)
    data["catalog"] = merge_catalog(data.get("catalog"))
    scenario = validate_model(Scenario, data, "", source)
    problems = check_scenario(scenario)
    if problems:
        raise InputError(problems, source)
    return scenario


def load_scenario(path: str | Path, data_root: str | Path | None = None) -> Scenario:
    """Load stage: read a scenario YAML file, resolve site/catalog files (inside the scenario's
    folder, or inside ``data_root`` when given), validate everything."""
    p = Path(path)
    data = read_yaml_file(p)
    root = FolderRoot(data_root, "the data root") if data_root is not None else FolderRoot(p.resolve().parent)
    return scenario_from_data(data, root, str(path))


def load_scenario_text(
    text: str | bytes, base_dir: str | Path | DataRoot | None = None, source: str = "<scenario>"
) -> Scenario:
    """Load a scenario from YAML text (dashboard uploads); files it names come from ``base_dir``."""
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


def dump_yaml(data: Any) -> str:
    """Plain YAML text (block style, keys in model order)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=False, width=120
    )
