"""The plan library (SPEC §20): scenarios and verified plans in a real database, so shared links,
long solves and their timings survive reloads, new browsers and server restarts.

- A database URL (SQLAlchemy): ``sqlite:///PATH`` by default, ``postgresql://…`` when given
  (``--library`` or ``PLANNER_LIBRARY``); the default file is
  ``~/.local/share/gpu-fleet-planner/library.sqlite``.
- ``scenarios``: key (the SHA-256 of the text, 32 hex), name, the self-contained YAML text.
- ``plans``: an unguessable ID (the ``?plan=`` of a link), the scenario key, the settings that
  made it (``mode``: joint, rolling …), status, GPUs, gap, wall and CPU seconds, when, and the
  result entry (the plan as JSON and what came with it). A plan is stored only after the verifier
  accepts it against its scenario; :meth:`Library.best` returns, per scenario and settings, the
  proven optimum if there is one, else the smallest stated gap, else the most GPUs, so a better
  result replaces a worse one for reuse while every stored ID keeps opening its own plan.

A row read back is a claim again (anyone with the database can edit it): :meth:`Library.check`
verifies its plan against its stored scenario and its columns against the plan, every time a row is
listed, opened or reused (the answer is memoised in this process by the SHA-256 of the row's
texts, so an unchanged row is checked once). A row that fails is listed as failing and never
opened or reused. Database faults (a bad URL, a folder, a corrupt or locked file, a server that
does not answer, a read-only or full disk) are :class:`InputError` naming the library (password
masked) and what to do; SQLite writers wait up to :data:`BUSY_S` for each other, and the first
ones into a new file never fail on each other's ``CREATE TABLE``.

May import: every stage up to :mod:`planner.plan` (it re-checks what it reads with the verifier).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import time
from pathlib import Path

import sqlalchemy as sa

from planner.errors import InputError
from planner.plan import Plan

BUSY_S = 30.0
"""Seconds a SQLite reader or writer waits for another's lock before the library says it is busy."""

ADVICE = [
    (
        "unable to open database file",
        "cannot open the database file: is the path a folder, or its folder missing or read-only?",
    ),
    (
        "file is not a database",
        "the file is not an SQLite database (damaged?): move it aside and a new library starts",
    ),
    ("database is locked", f"another writer held the database for {BUSY_S:.0f} s: try again"),
    ("readonly database", "the database is read-only: give a writable --library or $PLANNER_LIBRARY"),
    ("disk is full", "the disk is full: free space and try again"),
    ("disk i/o error", "the disk failed to read or write: check the file and its disk"),
    ("connection refused", "the database server does not answer: is it running?"),
    ("could not translate host name", "the database host is unknown: check the URL"),
    ("password authentication failed", "the database refused the user or password"),
    ("does not exist", "the database or user does not exist on the server"),
]
"""(words in the driver's message, what to tell the user)."""

DEFAULT = Path.home() / ".local" / "share" / "gpu-fleet-planner" / "library.sqlite"
ENV = "PLANNER_LIBRARY"

META = sa.MetaData()
SCENARIOS = sa.Table(
    "scenarios",
    META,
    sa.Column("key", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
PLANS = sa.Table(
    "plans",
    META,
    sa.Column("id", sa.String(24), primary_key=True),
    sa.Column("scenario_key", sa.String(32), sa.ForeignKey("scenarios.key"), nullable=False, index=True),
    sa.Column("settings", sa.String(200), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("gpus", sa.Integer, nullable=False),
    sa.Column("gap", sa.Float),
    sa.Column("wall_s", sa.Float),
    sa.Column("cpu_s", sa.Float),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("entry", sa.Text, nullable=False),
)


def library_url() -> str:
    """The library's database URL: ``PLANNER_LIBRARY``, else SQLite at :data:`DEFAULT`."""
    return os.environ.get(ENV) or f"sqlite:///{DEFAULT}"


def masked(url: str) -> str:
    """A database URL with its password hidden."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL at all: shown as typed, cut short
        return url[:120]


def fault(url: str, e: BaseException) -> InputError:
    """A database fault as the user's error: the library, what went wrong, what to do."""
    said = str(getattr(e, "orig", None) or e).strip().splitlines()[0][:200] if str(e) else type(e).__name__
    low = said.lower()
    if isinstance(e, sa.exc.ArgumentError | sa.exc.NoSuchModuleError):
        what = "is no database URL the planner knows (sqlite:///PATH or postgresql://USER@HOST/DB)"
    else:
        what = next((a for k, a in ADVICE if k in low), "the database failed")
    return InputError(f"plan library {masked(url)}: {what} ({said})")


def _guarded(method):
    """Database faults of a :class:`Library` method raised as :func:`fault`."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sa.exc.SQLAlchemyError, OSError) as e:
            raise fault(self.url, e) from None

    return run


def text_key(text: str) -> str:
    """A scenario text's key: the first 32 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def rank(status: str, gap: float | None, gpus: int) -> tuple:
    """Sort key of a stored plan, best first: proven optimal, then the smallest gap, then GPUs."""
    return (status != "optimal", gap if gap is not None else float("inf"), -gpus)


class Library:
    """Scenarios and verified plans in the database at ``url`` (module docstring)."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or library_url()
        self._checked: dict[str, tuple[bool, str]] = {}
        try:
            self._open()
        except (sa.exc.SQLAlchemyError, OSError, ValueError) as e:
            raise fault(self.url, e) from None

    def _open(self) -> None:
        """The engine, and the tables made if missing: a second writer racing to make them sees
        them made (its CREATE TABLE fails) and goes on."""
        args = {}
        if self.url.startswith("sqlite:///"):
            path = Path(self.url[len("sqlite:///") :])
            if path.is_dir():
                raise OSError(f"unable to open database file: {path} is a folder")
            path.parent.mkdir(parents=True, exist_ok=True)
            args = {"connect_args": {"timeout": BUSY_S}}
        self.engine = sa.create_engine(self.url, future=True, **args)
        for attempt in range(5):
            try:
                META.create_all(self.engine)
                return
            except sa.exc.OperationalError as e:
                if "already exists" not in str(e) or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    @_guarded
    def put_scenario(self, text: str, name: str) -> str:
        """Store a scenario text (once; a writer that lost the race to store it finds it stored);
        its key."""
        key = text_key(text)
        try:
            with self.engine.begin() as c:
                if c.execute(sa.select(SCENARIOS.c.key).where(SCENARIOS.c.key == key)).first() is None:
                    c.execute(
                        SCENARIOS.insert().values(key=key, name=name[:200], text=text, created_at=time.time())
                    )
        except sa.exc.IntegrityError:
            pass  # stored by another writer meanwhile: the same text under the same key
        return key

    def check(self, row: dict, scenario_text: str) -> tuple[bool, str]:
        """Whether a stored row holds: its plan verifies against its scenario and its columns
        (status, GPUs, gap) are the plan's. (ok, why not). Memoised by the texts' SHA-256."""
        memo = hashlib.sha256(
            json.dumps([row["entry"], scenario_text, row["status"], row["gpus"], row["gap"]]).encode()
        ).hexdigest()
        if memo not in self._checked:
            self._checked[memo] = _check(row, scenario_text)
        return self._checked[memo]

    @_guarded
    def scenario(self, key: str) -> str | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(SCENARIOS.c.text).where(SCENARIOS.c.key == key)).first()
        return None if row is None else row[0]

    @_guarded
    def store(self, scenario_text: str, name: str, settings: str, entry: dict, scenario=None) -> str | None:
        """Keep ``entry`` (a result with ``plan``) if its plan verifies against the scenario (parsed
        from ``scenario_text`` unless given); its new ID, or None when it does not verify."""
        from planner.verifier import verify

        if "plan" not in entry:
            return None
        plan = Plan.model_validate(entry["plan"])
        if not plan.status.has_plan:
            return None
        if scenario is None:
            from planner.input.loader import scenario_from_data
            from planner.yamlio import load

            scenario = scenario_from_data(load(scenario_text))
        if not verify(plan, scenario).ok:
            return None
        key = self.put_scenario(scenario_text, name)
        pid = secrets.token_hex(8)
        kpis = plan.kpis
        with self.engine.begin() as c:
            c.execute(
                PLANS.insert().values(
                    id=pid,
                    scenario_key=key,
                    settings=settings[:200],
                    status=plan.status.value,
                    gpus=kpis.gpus if kpis is not None else 0,
                    gap=plan.gap,
                    wall_s=entry.get("wall_s"),
                    cpu_s=entry.get("cpu_s"),
                    created_at=time.time(),
                    entry=json.dumps(entry, default=str),
                )
            )
        return pid

    @_guarded
    def best(self, scenario_key: str, settings: str, proven: bool = False) -> tuple[str, dict] | None:
        """The best stored plan of a scenario under these settings that still checks: (ID,
        entry), or None; with ``proven`` only a proven optimum."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(PLANS.c.id, PLANS.c.status, PLANS.c.gap, PLANS.c.gpus).where(
                    PLANS.c.scenario_key == scenario_key, PLANS.c.settings == settings
                )
            ).all()
        for r in sorted(rows, key=lambda r: rank(r.status, r.gap, r.gpus)):
            if proven and r.status != "optimal":
                return None
            got = self.get(r.id)
            if got is not None and got["valid"]:
                return r.id, got["entry"]
        return None

    @_guarded
    def get(self, plan_id: str) -> dict | None:
        """A stored plan: its row with ``entry`` decoded, the scenario text, and whether it still
        checks (``valid``, ``why``); None when no row has the ID."""
        with self.engine.connect() as c:
            row = c.execute(sa.select(PLANS).where(PLANS.c.id == str(plan_id)[:24])).mappings().first()
            if row is None:
                return None
            text = c.execute(
                sa.select(SCENARIOS.c.text, SCENARIOS.c.name).where(SCENARIOS.c.key == row["scenario_key"])
            ).first()
        out = dict(row)
        out["scenario_text"], out["scenario_name"] = (text[0], text[1]) if text else ("", "")
        out["valid"], out["why"] = self.check(out, out["scenario_text"])
        try:
            out["entry"] = json.loads(out["entry"])
        except ValueError:
            out["entry"] = {}
        return out

    @_guarded
    def list(self, limit: int = 50) -> list[dict]:
        """The newest stored plans, newest first, each checked (``valid``, ``why``; no entries)."""
        cols = [
            PLANS.c[k]
            for k in (
                "id",
                "scenario_key",
                "settings",
                "status",
                "gpus",
                "gap",
                "wall_s",
                "created_at",
                "entry",
            )
        ]
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(*cols, SCENARIOS.c.name, SCENARIOS.c.text)
                .join(SCENARIOS, SCENARIOS.c.key == PLANS.c.scenario_key)
                .order_by(PLANS.c.created_at.desc())
                .limit(limit)
            ).mappings()
            out = [dict(r) for r in rows]
        for r in out:
            r["valid"], r["why"] = self.check(r, r.pop("text"))
            del r["entry"]
        return out


def _check(row: dict, scenario_text: str) -> tuple[bool, str]:
    """(ok, why not) of one stored row (:meth:`Library.check`)."""
    from planner.input.loader import scenario_from_data
    from planner.verifier import verify
    from planner.yamlio import load

    try:
        entry = json.loads(row["entry"])
        plan = Plan.model_validate(entry["plan"])
        scenario = scenario_from_data(load(scenario_text))
    except (ValueError, KeyError, TypeError, InputError) as e:
        return False, f"its plan or scenario no longer reads ({str(e).splitlines()[0][:120]})"
    report = verify(plan, scenario)
    if not report.ok:
        return False, f"its plan does not verify against its scenario ({str(report.violations[0])[:160]})"
    gpus = plan.kpis.gpus if plan.kpis is not None else 0
    if (
        (row["status"], row["gpus"]) != (plan.status.value, gpus)
        or (row["gap"] is None) != (plan.gap is None)
        or (row["gap"] is not None and abs(row["gap"] - plan.gap) > 1e-12)
    ):
        return False, (
            f"its listed figures ({row['status']}, {row['gpus']:,} GPUs) are not its plan's "
            f"({plan.status.value}, {gpus:,} GPUs)"
        )
    return True, ""
