"""One drawn fleet's whole model solved by plain HiGHS to a proven bound: is a decomposed plan's
stated gap the plan's or the bound's? (benchmarks/DRAWS-WORST-PROVEN.md)

    .venv/bin/python benchmarks/prove_draw.py --seed 517768048 --size 250000 --limit 2700 --log LOG

The draw is replayed by benchmarks/draws.py, its whole model written as an LP file
(planner.model.write_lp, not timed) and solved by highspy on ``--threads`` threads to a 0.1 % gap;
prints HiGHS's status, incumbent, dual bound and seconds; HiGHS's log goes to ``--log``."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from draws import draw, write  # noqa: E402


def main() -> None:
    import highspy

    from planner.input.loader import load_scenario
    from planner.model import build, write_lp

    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--size", type=int, default=250_000, help="GPU positions of the draw")
    ap.add_argument("--limit", type=float, default=2700.0, help="HiGHS's time limit, s")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--log", default="highs.log")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    scen = write(draw(args.seed, args.size), folder, 120.0)
    lp = folder / "model.lp"
    write_lp(build(load_scenario(str(scen))), str(lp))
    h = highspy.Highs()
    h.setOptionValue("log_file", args.log)
    h.setOptionValue("log_to_console", False)
    h.readModel(str(lp))
    h.setOptionValue("time_limit", args.limit)
    h.setOptionValue("threads", args.threads)
    h.setOptionValue("mip_rel_gap", 0.001)
    t0 = time.time()
    h.run()
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    print(status, info.objective_function_value, info.mip_dual_bound, round(time.time() - t0, 1))


if __name__ == "__main__":
    main()
