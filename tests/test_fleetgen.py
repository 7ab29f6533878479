"""The fleet generator (planner/input/fleetgen.py): distinct clusters from one seed, by its rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.cli import main
from planner.input.fleetgen import FleetSpec, generate_fleet
from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import load_scenario, read_yaml_file

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


def _sig(c: dict) -> tuple:
    return c["gpus"], tuple(c["rack_types"]), c["demand"], c["max_hops"], c.get("max_share_per_pod")


@pytest.mark.parametrize(
    ("name", "least_clusters", "least_gpus"),
    [("fleet-mixed-250k", 100, 225_000), ("fleet-mixed-1m", 300, 900_000)],
)
def test_shipped_fleet_specs_draw_distinct_fleets(
    tmp_path: Path, name: str, least_clusters: int, least_gpus: int
) -> None:
    """The issue's shape: ≥ 300 clusters at 1M of 256-16,384 GPUs, three or more rack types, all
    three demand kinds, one-pod and one-building hop budgets, some spread limits, no two alike;
    the same command twice writes the same files, and the scenario loads."""
    site, scen = tmp_path / "s.yaml", tmp_path / "f.yaml"
    args = ["generate-site", "--spec", f"datasets/{name}.gen.yaml", "-o", str(site), "--scenario", str(scen)]
    assert main(args) == 0
    first = (site.read_text(), scen.read_text())
    assert main(args) == 0
    assert (site.read_text(), scen.read_text()) == first
    data = read_yaml_file(scen)
    cs = data["clusters"]
    assert data["site"] == "s.yaml"
    assert len(cs) >= least_clusters
    assert sum(c["gpus"] for c in cs) >= least_gpus
    assert len({_sig(c) for c in cs}) == len(cs)
    assert all(256 <= c["gpus"] <= 16_384 for c in cs)
    assert len({t for c in cs for t in c["rack_types"]}) >= 3
    assert {c["demand"] for c in cs} == {"exact", "at_least", "max"}
    assert {c["max_hops"] for c in cs} == {3, 5}
    assert any("max_share_per_pod" in c for c in cs)
    s = load_scenario(scen)
    assert len(s.clusters) == len(cs)


def test_fleet_rules_on_a_small_site() -> None:
    """Sizes are whole racks of the cluster's type, a one-pod job fits its pod's GPU ports, exact
    and at-least jobs stay within fixed_share of the positions, rack types match the rows
    (air 25 kW rows: Grand Teton only; liquid 135 kW rows: NVL72 only)."""
    spec = SiteSpec(
        buildings=[
            BuildingSpec(
                count=2,
                rows_per_pod=4,
                positions_per_row=10,
                design_kw_per_position=21.4,
                max_rack_power_kw=25,
                pod_max_gpus=640,
            ),
            BuildingSpec(
                count=1,
                rows_per_pod=4,
                positions_per_row=6,
                design_kw_per_position=132,
                max_rack_power_kw=135,
                liquid=True,
                power_design="dr",
                pod_max_gpus=1728,
            ),
        ]
    )
    site = generate_site(spec)
    fs = FleetSpec(seed=7, min_gpus=64, max_gpus=4096, fixed_share=0.3)
    data = generate_fleet(site, fs, "site.yaml", "t")
    per = {"grand-teton-h100": 16, "gb200-nvl72": 72}
    positions = 2 * 4 * 10 * 16 + 4 * 6 * 72  # one pod per hall (default), network positions included
    fixed = 0
    for c in data["clusters"]:
        (t,) = c["rack_types"]
        assert c["gpus"] % per[t] == 0
        if c["max_hops"] == 3:
            assert c["gpus"] <= (640 if t == "grand-teton-h100" else 1728)
        if c["demand"] != "max":
            fixed += c["gpus"]
    assert fixed <= 0.3 * positions
    assert data == generate_fleet(site, fs, "site.yaml", "t")
    assert data != generate_fleet(site, fs.model_copy(update={"seed": 8}), "site.yaml", "t")


def test_fleet_without_rows_it_can_use_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "buildings:\n  - {rows_per_pod: 2, positions_per_row: 4, design_kw_per_position: 10, "
        "max_rack_power_kw: 12}\nfleet: {seed: 1}\n"
    )
    assert (
        main(
            [
                "generate-site",
                "--spec",
                str(spec),
                "-o",
                str(tmp_path / "s.yaml"),
                "--scenario",
                str(tmp_path / "f.yaml"),
            ]
        )
        == 2
    )
    assert "fleet: the site has no rows any fleet rack type fits" in capsys.readouterr().err
    assert not (tmp_path / "s.yaml").exists()


def test_scenario_flag_needs_a_fleet_and_a_site_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "generate-site",
                "--positions",
                "4",
                "-o",
                str(tmp_path / "s.yaml"),
                "--scenario",
                str(tmp_path / "f.yaml"),
            ]
        )
        == 2
    )
    assert "--scenario: the spec has no fleet: section to draw clusters from" in capsys.readouterr().err
    assert (
        main(
            [
                "generate-site",
                "--spec",
                "datasets/fleet-mixed-250k.gen.yaml",
                "--scenario",
                str(tmp_path / "f.yaml"),
            ]
        )
        == 2
    )
    err = capsys.readouterr()
    assert "--scenario: needs -o SITE.yaml: the scenario names the site file it stands on" in err.err
    assert err.out == ""
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_build_past_the_time_limit_stops_within_it(tmp_path: Path) -> None:
    """The 250k distinct fleet's model takes about 8 s to build; with 4 s for the whole run the
    build stops by the limit less its 0.4 s reserve (building looks at the clock at every
    step) and the answer is time_limit with no plan, within the 4 s (half a second of slack for
    a loaded machine's clock)."""
    import time

    from planner.clock import Deadline
    from planner.plan.pipeline import plan_scenario

    site, scen = tmp_path / "s.yaml", tmp_path / "f.yaml"
    assert (
        main(
            [
                "generate-site",
                "--spec",
                "datasets/fleet-mixed-250k.gen.yaml",
                "-o",
                str(site),
                "--scenario",
                str(scen),
            ]
        )
        == 0
    )
    s = load_scenario(scen)
    t0 = time.perf_counter()
    plan = plan_scenario(s, deadline=Deadline(4.0))
    took = time.perf_counter() - t0
    assert plan.status == "time_limit"
    assert plan.racks == []
    assert plan.notes == ["time limit reached while building the model: no plan (raise --time-limit)"]
    assert took <= 4.5


def _air_site():
    return generate_site(
        SiteSpec(
            buildings=[
                BuildingSpec(
                    count=2,
                    rows_per_pod=4,
                    positions_per_row=10,
                    design_kw_per_position=21.4,
                    max_rack_power_kw=25,
                    pod_max_gpus=640,
                )
            ]
        )
    )


def test_a_spec_whose_clusters_cannot_differ_is_refused_naming_why() -> None:
    """Grand Teton rows only (16 GPUs a rack), every cluster 64 GPUs: one size, one rack-type set,
    3 demands × (one pod, or one building with or without a spread limit) = 9 distinct clusters,
    where filling 0.9 × 1,280 GPU positions takes 18. The upper bound counted before drawing
    (2 sets × 1 size × 3 × 2 × 2 = 24) lets it through; the draws stop after 50 repeats in a row.
    At fill 2 it takes 40 > 24: refused before any draw."""
    site = _air_site()
    with pytest.raises(ValueError, match="draws in a row repeated one") as err:
        generate_fleet(site, FleetSpec(min_gpus=64, max_gpus=64), "s.yaml", "t")
    assert str(err.value).startswith(
        "after 9 distinct clusters (576 of the 1,152 GPUs to fill) 50 draws in a row"
    )
    with pytest.raises(ValueError, match="distinct clusters exist") as err:
        generate_fleet(site, FleetSpec(min_gpus=64, max_gpus=64, fill=2), "s.yaml", "t")
    assert str(err.value) == (
        "at most 24 distinct clusters exist between min_gpus 64 and max_gpus 64 on these rack types, and "
        "filling 2 × 1,280 GPU positions takes at least 40 of up to 64 GPUs: widen min_gpus..max_gpus or "
        "lower fill"
    )
