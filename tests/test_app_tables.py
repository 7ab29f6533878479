"""Numbers for people on every page: every table of every page, on every shipped scenario, shows
text a planner can read (no nan, None, exponent or long decimals), and the formatter holds for
any number."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.test_app import APP
from ui.format import EMPTY, cell, header, number
from ui.state import SHIPPED

BAD = re.compile(r"\bnan\b|\bNone\b|\bNaN\b|\d[eE][+-]?\d|\d\.\d{3,}")
"""What no cell may show: missing values, exponents, more than two decimals."""
SMALL = {"small-hall", "dr-hall", "dr-hall-flex", "fleet-expansion"}
"""Scenarios small enough to explain and compare in a test (the others: plan, phases, reliability)."""
REGIONS = {"prometheus-1gw", "prometheus-1gw-allowance"}
"""Scenarios solved on the Region page only, building by building (the whole model takes minutes)."""


def unreadable(at: AppTest) -> list[str]:
    """Every cell, header and index of every table on the page that a person could not read."""
    out = []
    for df in at.dataframe:
        frame = df.value
        for label in [*map(str, frame.columns), *map(str, frame.index)]:
            if BAD.search(label):
                out.append(f"{df.key}: header {label!r}")
        for col in frame.columns:
            for v in frame[col]:
                if not isinstance(v, str) or v == "" or BAD.search(v):
                    out.append(f"{df.key}[{col}]: {v!r}")
    for m in at.metric:
        if BAD.search(str(m.value)):
            out.append(f"metric {m.label}: {m.value!r}")
    return out


def _walk(at: AppTest, page: str, *buttons: str) -> list[str]:
    at.switch_page(page).run()
    for key in buttons:
        if any(b.key == key and not b.disabled for b in at.button):
            at.button(key=key).click().run()
    assert not at.exception, at.exception
    return [f"{page}: {u}" for u in unreadable(at)]


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_table_on_every_page_is_readable(name: str) -> None:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params["scenario"] = name
    at.run()
    if name in REGIONS:
        bad = _walk(at, "ui/region_page.py", "region_solve")
        assert len(at.dataframe) >= 3, "structures, power and backup tables"
        assert bad == []
        return
    small = name in SHIPPED and name in SMALL
    bad = _walk(at, "ui/plan_page.py", "solve", *(["explain"] if small else []))
    assert {m.label for m in at.metric} >= {"GPUs", "Capex"}, "the plan is shown"
    assert len(at.dataframe) >= (1 if small else 0)
    bad += _walk(at, "ui/phases_page.py", "solve_joint", "solve_rolling")
    bad += _walk(at, "ui/reliability_page.py")
    assert at.dataframe, "the reliability page shows its tables"
    if small:
        bad += _walk(at, "ui/compare_page.py", "FormSubmitter:variants-Solve variants")
        assert at.dataframe, "the compare page shows its KPI table"
    assert bad == []


def test_the_formatter_by_hand() -> None:
    assert [
        number(v) for v in (69_696_100.0, 98.9785, 1080, 0.123456, 12.345, 0.001, 0.0, -3.14159, 2.0)
    ] == ["69,696,100", "99", "1,080", "0.12", "12.3", "<0.01", "0", "-3.14", "2"]
    assert [cell(v) for v in (None, math.nan, [], {"a": 1_000}, "nan", "600.0", True)] == [
        EMPTY,
        EMPTY,
        EMPTY,
        "a 1,000",
        EMPTY,
        "600",
        "yes",
    ]
    assert header("capex_usd") == ("capex $M", 1e-6)
    assert header("it_kw") == ("IT MW", 1e-3)
    assert header("capex_racks_usd") == ("capex racks $M", 1e-6)
    assert header("worst power use %") == ("worst power use %", 1)
    assert cell(69_696_100.0, header("capex_usd")[1]) == "69.7"
    assert cell(-0.001) == "-<0.01"


def test_a_delta_row_is_signed_once() -> None:
    import pandas as pd

    from ui.charts import with_deltas

    t = with_deltas(
        pd.DataFrame(
            {
                "network_kw": [20.0, 19.0],
                "gpus": [2216, 2216],
                "capex_usd": [1e6, 3.5e6],
                "status": ["optimal"] * 2,
            },
            index=["A", "B"],
        )
    )
    # -1 kW is -0.001 MW: shown as "−<0.01"; equal GPUs "0"; +$2.5M; text columns empty
    assert t.loc["B − A"].tolist() == ["−<0.01", "0", "+2.5", None]


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(10**15), max_value=10**15),
        st.none(),
    )
)
def test_no_number_is_shown_with_an_exponent_nan_or_more_than_two_decimals(v) -> None:
    shown = cell(v)
    assert shown
    assert not BAD.search(shown), shown


def test_utilisation_bars_say_the_use_and_the_limit_in_kw() -> None:
    from planner.input.loader import load_scenario
    from planner.plan.pipeline import plan_scenario
    from tests.test_app import ROOT
    from ui.charts import utilisation_figure

    plan = plan_scenario(load_scenario(ROOT / "datasets/small-hall.yaml"))
    fig = utilisation_figure(plan, "power_node")
    labels = dict(zip(fig.data[0].y, fig.data[0].text, strict=True))
    util = next(u for u in plan.utilisation if u.id == "UTIL")
    # the utility's limit by hand: 2,500 kW rated x 0.8 derate = 2,000 kW
    assert labels["UTIL"] == f"{util.value:,.0f} of 2,000 kW"
    worst = dict(zip(fig.data[1].y, fig.data[1].text, strict=True))
    ups = next(u for u in plan.utilisation if u.id == "UPS-A")
    assert worst["UPS-A"] == f"{max(ups.value, ups.worst_value):,.0f} of 1,600 kW"  # 2,000 kW x 0.8
