"""Input schema base: one strict model class and the field types every file shares.

One strict base model: unknown keys are errors, models are frozen, and every field states its
unit in its name and its docstring. Rules that involve one model live in the model's file as
validators; rules that cross the tree (feeds exist, IDs unique, no power cycles) live in
:mod:`planner.input.checks` so that all of them are reported together.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict

Id = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")]
Float = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite number: no NaN or infinity, no booleans, no strings (an int is accepted)."""
Int = Annotated[int, Strict()]
"""A whole number: no booleans, floats or strings."""
Bool = Annotated[bool, Strict()]
"""true or false, nothing else."""
PositiveFloat = Annotated[float, Strict(), Field(gt=0, le=1e12, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Strict(), Field(ge=0, le=1e12, allow_inf_nan=False)]
Coordinate = Annotated[float, Strict(), Field(ge=-1e6, le=1e6, allow_inf_nan=False)]
"""A coordinate within ±1,000 km, m."""
Text = Annotated[str, Strict(), Field(max_length=10_000)]
"""Free text (descriptions, sources), at most 10,000 characters."""
MAX_ITEMS = 100_000
"""Longest list of any kind in a site or scenario."""


class StrictModel(BaseModel):
    """Base of every input model: unknown keys rejected, values frozen."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, validate_default=True, allow_inf_nan=False
    )


def _iso_date(value):
    """A date, or an ISO date string (what a plan or scenario dumped as JSON holds)."""
    if isinstance(value, date):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"expected a date like 2026-01-01, got {str(value)[:40]!r}")


Day = Annotated[date, BeforeValidator(_iso_date)]
"""A calendar date (YAML date or ISO string)."""
