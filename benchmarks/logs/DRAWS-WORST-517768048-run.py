import sys, time
sys.path.insert(0, "benchmarks")
from pathlib import Path
from draws import draw, write
from planner.input.loader import load_scenario
from planner.model import build, write_lp
d = draw(517768048, 250_000)
scen = write(d, Path("/tmp/diag"), 120.0)
print(scen, flush=True)
write_lp(build(load_scenario(str(scen))), "/tmp/diag/model.lp")
import highspy
h = highspy.Highs()
h.setOptionValue("log_file", "/tmp/diag/highs.log")
h.setOptionValue("log_to_console", False)
h.readModel("/tmp/diag/model.lp")
h.setOptionValue("time_limit", 2700.0)
h.setOptionValue("threads", 1)
h.setOptionValue("mip_rel_gap", 0.001)
t = time.time(); h.run()
info = h.getInfo()
print(h.modelStatusToString(h.getModelStatus()), info.objective_function_value, info.mip_dual_bound, time.time()-t, flush=True)
