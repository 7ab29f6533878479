"""A bound with its evidence: ``planner plan --certify`` writes the model as an LP with the row
duals of its relaxation; ``planner verify`` re-reads the LP with its own parser and re-derives the
bound (weak duality). A by-hand case, the shipped small hall, and each tampering caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli import main
from planner.verifier.certificate import LP, check_certificate, dual_bound

ROOT = Path(__file__).resolve().parent.parent

TINY_LP = """\\* two rack types in one row of 4 positions *\\
Maximize
OBJ: 16 a + 8 b
Subject To
space: a + b <= 4
Bounds
 0 <= a <= 4
 0 <= b <= 4
Generals
a
b
End
"""


def test_weak_duality_by_hand() -> None:
    """max 16a + 8b, a + b ≤ 4: the dual 16 on the row leaves reduced costs 0 (a) and −8 (b, at its
    lower bound 0), so the bound is 16 × 4 = 64 (the LP optimum). Dual 10: 40 + (6 × 4) + 0 = 64 too;
    dual 20: 80 + 0 + 0 (both reduced costs negative, at 0) = 80, weaker; a negative dual on a ≤ row
    proves nothing."""
    lp = LP(TINY_LP)
    assert dual_bound(lp, {"space": 16.0}) == (64.0, [])
    assert dual_bound(lp, {"space": 10.0}) == (64.0, [])
    assert dual_bound(lp, {"space": 20.0}) == (80.0, [])
    assert dual_bound(lp, {"space": -1.0}) == (
        None,
        ["dual of row 'space' is -1: the wrong sign for a '<=' row"],
    )
    assert dual_bound(lp, {"spare": 1.0})[1] == ["duals name row 'spare', which the LP does not have"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "small.plan.yaml"
    assert (
        main(["plan", str(ROOT / "datasets" / "small-hall.yaml"), "-o", str(out), "--certify", "--quiet"])
        == 0
    )
    return out


def _verify(plan: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", str(plan), str(ROOT / "datasets" / "small-hall.yaml")])
    return code, capsys.readouterr().out


def test_a_certificate_is_accepted_and_states_its_gap(certified: Path, capsys) -> None:
    cert = json.loads(certified.with_name(certified.name + ".cert.json").read_text())
    assert check_certificate(cert)[1] == []
    assert cert["bound"] == pytest.approx(cert["lp_optimum"], rel=1e-9)  # the relaxation's optimum
    assert cert["bound"] >= 1080  # the plan's 1,080 GPUs (hand-solved optimum) under the LP bound
    code, out = _verify(certified, capsys)
    assert code == 0
    assert "certified bound 1,084.66: proven by the LP duals in small.plan.yaml.cert.json (7 rows)" in out


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (lambda c: c["duals"].update({k: v * 0.5 for k, v in c["duals"].items()}), "its duals prove"),
        (lambda c: c["duals"].update({"cooling(CZ~AIR)": -0.75}), "the wrong sign for a '<=' row"),
        (lambda c: c.update(lp=c["lp"].replace("<= 1588", "<= 2588")), "does not hash to the certificate"),
        (lambda c: c.update(bound=1080.0), "the certificate states bound 1080.0, its duals prove"),
    ],
    ids=["duals", "sign", "lp", "bound"],
)
def test_a_tampered_certificate_is_rejected(
    certified: Path, tmp_path: Path, capsys, tamper, expected
) -> None:
    plan = tmp_path / certified.name
    plan.write_text(certified.read_text())
    cert = json.loads(certified.with_name(certified.name + ".cert.json").read_text())
    tamper(cert)
    plan.with_name(plan.name + ".cert.json").write_text(json.dumps(cert))
    code, out = _verify(plan, capsys)
    assert code == 1
    assert expected in out, out
