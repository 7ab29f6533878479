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
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from pathlib import Path

import sqlalchemy as sa

from planner.plan import Plan

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


def text_key(text: str) -> str:
    """A scenario text's key: the first 32 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def rank(status: str, gap: float | None, gpus: int) -> tuple:
    """Sort key of a stored plan, best first: proven optimal, then the smallest gap, then GPUs."""
    return (status != "optimal", gap if gap is not None else float("inf"), -gpus)


class Library:
    """Scenarios and verified plans in the database at ``url`` (module docstring)."""

    def __init__(self, url: str | None = None) -> None:
        url = url or library_url()
        if url.startswith("sqlite:///"):
            Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
        self.url = url
        self.engine = sa.create_engine(url, future=True)
        META.create_all(self.engine)

    def put_scenario(self, text: str, name: str) -> str:
        """Store a scenario text (once); its key."""
        key = text_key(text)
        with self.engine.begin() as c:
            if c.execute(sa.select(SCENARIOS.c.key).where(SCENARIOS.c.key == key)).first() is None:
                c.execute(
                    SCENARIOS.insert().values(key=key, name=name[:200], text=text, created_at=time.time())
                )
        return key

    def scenario(self, key: str) -> str | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(SCENARIOS.c.text).where(SCENARIOS.c.key == key)).first()
        return None if row is None else row[0]

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

    def best(self, scenario_key: str, settings: str) -> tuple[str, dict] | None:
        """The best stored plan of a scenario under these settings: (ID, entry), or None."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(PLANS.c.id, PLANS.c.status, PLANS.c.gap, PLANS.c.gpus).where(
                    PLANS.c.scenario_key == scenario_key, PLANS.c.settings == settings
                )
            ).all()
        if not rows:
            return None
        pid = min(rows, key=lambda r: rank(r.status, r.gap, r.gpus)).id
        got = self.get(pid)
        return None if got is None else (pid, got["entry"])

    def get(self, plan_id: str) -> dict | None:
        """A stored plan: its row with ``entry`` decoded and the scenario text, or None."""
        with self.engine.connect() as c:
            row = c.execute(sa.select(PLANS).where(PLANS.c.id == str(plan_id)[:24])).mappings().first()
            if row is None:
                return None
            text = c.execute(
                sa.select(SCENARIOS.c.text, SCENARIOS.c.name).where(SCENARIOS.c.key == row["scenario_key"])
            ).first()
        out = dict(row)
        out["entry"] = json.loads(out["entry"])
        out["scenario_text"], out["scenario_name"] = (text[0], text[1]) if text else ("", "")
        return out

    def list(self, limit: int = 50) -> list[dict]:
        """The newest stored plans (no entries), newest first."""
        cols = [
            PLANS.c[k]
            for k in ("id", "scenario_key", "settings", "status", "gpus", "gap", "wall_s", "created_at")
        ]
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(*cols, SCENARIOS.c.name)
                .join(SCENARIOS, SCENARIOS.c.key == PLANS.c.scenario_key)
                .order_by(PLANS.c.created_at.desc())
                .limit(limit)
            ).mappings()
            return [dict(r) for r in rows]
