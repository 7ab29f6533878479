"""The verifier catches the optimiser's bugs on its own: each deliberate engine bug of
:data:`tests.mutants.MUTANTS` (a cost formula, a retirement or arrival rule, a KPI, the order book,
the two-stage figures, a power, cooling or planning-power rule) is planned with the bug in place,
and ``verify``, which imports none of the patched code, rejects the plan it gives."""

from __future__ import annotations

import pytest

from tests.mutants import MUTANTS, run


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_verifier_alone_catches_the_bug(mutant) -> None:
    verdict, findings = run(mutant)
    assert verdict == mutant.expect, findings
    if verdict == "caught":
        assert findings


def test_a_mutant_is_undone_after_its_run() -> None:
    from planner.rules import costs

    m = next(x for x in MUTANTS if x.target == (costs, "discount"))
    before = costs.discount(2.0, 0.08)
    from tests.mutants import applied

    with applied(m):
        assert costs.discount(2.0, 0.08) != pytest.approx(before)
    assert costs.discount(2.0, 0.08) == pytest.approx(1.08**-2)
