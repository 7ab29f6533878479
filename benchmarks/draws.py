"""Sites and fleets drawn at random for every benchmark run: inputs nobody here tuned to.

A draw is a seed and a size (GPU positions wanted, e.g. 250,000). From the seed alone it draws

- **the site's shape**: two to four building kinds, each an air hall for Grand Teton racks
  (25 kW rows), an air hall for DGX racks (45 kW rows, where Grand Teton fits too) or a liquid hall
  (GB200 NVL72, 135 kW rows with a loop); per kind its halls, pods per hall, rows per pod,
  positions per row, power design (2N or distributed redundant), the IT kW its power and cooling
  are sized for per position (0.75-1.05 of its largest rack: some halls run out of power before
  positions), the pod's GPU ports and rack limit (some pods run out of ports first), the liquid
  share; the number of buildings of each kind from a random split of the size;
- **the fleet**: per air pod, with some probability, several exact one-pod jobs of 512-2,560 GPUs
  (sizes that rarely divide a pod), each over one air rack type or a mixed set (Grand Teton with
  DGX, DGX H100 with H200) — the packing that first-fit cannot always do; per liquid pod at-least
  jobs up to 2,160 GPUs; as-many-as-fit building jobs of 1,024-16,384 GPUs, some with a per-pod
  spread limit, some with no figure; and a few huge as-many-as-fit jobs spanning buildings
  (max_hops 7). The demand slack (what the jobs want against the GPU positions) is drawn from
  tight to loose.

The same seed and size give the same draw (``python benchmarks/draws.py SEED SIZE OUT_DIR`` writes
it); the benchmark (:mod:`benchmarks.fleets_drawn`) draws fresh seeds every run and prints them.
Rack figures (GPUs per rack, rated kW) are the shipped catalog's (datasets/catalog.yaml).
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

GT = ("grand-teton-h100", 16, 21.4)
"""(rack type, GPUs per rack, rated kW): catalog figures."""
DGX100 = ("dgx-h100-4", 32, 40.8)
DGX200 = ("dgx-h200-4", 32, 40.8)
NVL72 = ("gb200-nvl72", 72, 132.0)

KINDS = {
    "air-gt": {"max_rack_kw": 25.0, "types": [GT], "liquid": False},
    "air-dgx": {"max_rack_kw": 45.0, "types": [GT, DGX100, DGX200], "liquid": False},
    "liquid": {"max_rack_kw": 135.0, "types": [NVL72], "liquid": True},
}
"""Building kinds a draw picks from: their row rack limit and the rack types that fit."""
TYPE_SETS = {
    "air-gt": [[GT]],
    "air-dgx": [[DGX100], [DGX200], [GT, DGX100], [DGX100, DGX200], [GT, DGX200], [GT]],
    "liquid": [[NVL72]],
}
"""Rack-type sets a job in a building kind may ask for (mixed sets for air)."""


@dataclass
class Kind:
    """One drawn building kind: its generator parameters and its room."""

    name: str
    spec: dict
    count: int = 1
    pods: int = 0
    pod_racks: int = 0
    """Racks one pod holds (positions less its network rack, within its rack limit)."""
    pod_ports: int = 0

    def room(self, types: list[tuple]) -> int:
        """GPUs one pod holds of a job on ``types`` (its largest rack): its racks within the pod's
        rack limit, the share of positions the pod's power is sized for, its GPU ports."""
        gpus = max(t[1] for t in types)
        rated = max(t[2] for t in types if t[1] == gpus)
        powered = min(1.0, self.spec["design_kw_per_position"] / rated)
        return min(self.pod_ports, int(self.pod_racks * powered) * gpus)


@dataclass
class Draw:
    """A drawn site spec and fleet."""

    seed: int
    size: int
    kinds: list[Kind] = field(default_factory=list)
    clusters: list[dict] = field(default_factory=list)
    slack: float = 1.0
    positions_gpus: int = 0
    """GPUs the site's positions hold (each position at its kind's largest rack)."""

    def describe(self) -> str:
        ks = ", ".join(
            f"{k.count}× {k.name} ({k.spec['halls']}h·{k.spec['pods_per_hall']}p·"
            f"{k.spec['rows_per_pod']}r·{k.spec['positions_per_row']}, {k.spec['power_design']})"
            for k in self.kinds
        )
        by = {}
        for c in self.clusters:
            by[c["demand"]] = by.get(c["demand"], 0) + 1
        return (
            f"seed {self.seed}: {sum(k.count for k in self.kinds)} buildings [{ks}], "
            f"{self.positions_gpus:,} GPU positions; {len(self.clusters)} jobs "
            f"({', '.join(f'{n} {d}' for d, n in sorted(by.items()))}), slack {self.slack:.2f}"
        )


def _kind(rng: random.Random, name: str) -> Kind:
    """A building kind's shape, power and ports, drawn."""
    k = KINDS[name]
    largest = max(t[1] for t in k["types"])
    rated = max(t[2] for t in k["types"])
    liquid = k["liquid"]
    positions = rng.randint(6, 12) if liquid else rng.randint(8, 24)
    rows = rng.randint(4, 10) if liquid else rng.randint(4, 14)
    racks = rows * positions - 1  # less the pod's network rack
    max_racks = None if rng.random() < 0.5 else max(4, int(racks * rng.uniform(0.7, 1.0)))
    room = min(racks, max_racks or racks)
    ports = int(room * largest * rng.uniform(0.6, 1.1)) // 8 * 8
    spec = {
        "count": 1,
        "halls": rng.randint(1, 3),
        "pods_per_hall": rng.randint(2, 6),
        "rows_per_pod": rows,
        "positions_per_row": positions,
        "power_design": rng.choice(["2n", "dr"]),
        "design_kw_per_position": round(rated * rng.uniform(0.75, 1.05), 1),
        "max_rack_power_kw": k["max_rack_kw"],
        "pod_max_gpus": max(largest, ports),
        "pod_max_racks": max_racks,
    }
    if liquid:
        spec.update({"liquid": True, "liquid_share": round(rng.uniform(0.7, 0.9), 2)})
    return Kind(name, spec, pod_racks=room, pod_ports=max(largest, ports))


def draw(seed: int, size: int) -> Draw:
    """The site and fleet of ``seed`` at about ``size`` GPU positions (module docstring)."""
    rng = random.Random(seed)
    names = rng.sample(list(KINDS), k=rng.randint(2, 3))
    if rng.random() < 0.3:
        names.append(rng.choice(names))  # a second shape of one kind
    kinds = [_kind(rng, n) for n in names]
    split = [rng.uniform(0.5, 1.5) for _ in kinds]
    for k, w in zip(kinds, split, strict=True):
        per_building = k.spec["halls"] * k.spec["pods_per_hall"] * k.room(KINDS[k.name]["types"])
        k.count = max(1, min(64, round(size * w / sum(split) / per_building)))
        k.spec["count"] = k.count
        k.pods = k.count * k.spec["halls"] * k.spec["pods_per_hall"]
    d = Draw(seed, size, kinds, slack=round(rng.uniform(0.75, 1.15), 2))
    d.positions_gpus = sum(k.pods * k.room(KINDS[k.name]["types"]) for k in kinds)
    d.clusters = _fleet(rng, d)
    return d


def _size(rng: random.Random, lo: int, hi: int, step: int) -> int:
    """A size log-uniform in lo..hi, whole racks of ``step`` GPUs, at least one rack."""
    x = math.exp(rng.uniform(math.log(lo), math.log(max(lo, hi))))
    return max(step, int(x // step) * step)


def _fleet(rng: random.Random, d: Draw) -> list[dict]:
    """Jobs for the draw's site (module docstring), until they want ``slack`` × its GPU positions."""
    jobs: list[dict] = []
    want = d.slack * d.positions_gpus
    multi = rng.uniform(0.4, 0.9)  # share of air pods given several exact jobs
    fixed_cap = rng.uniform(0.55, 0.85) * d.positions_gpus  # exact and at-least GPUs at most

    def add(job: dict) -> None:
        job["id"] = f"j{len(jobs) + 1:04d}"
        jobs.append(job)

    fixed = 0
    for k in d.kinds:
        sets = TYPE_SETS[k.name]
        for _ in range(k.pods):
            if k.name == "liquid":
                if rng.random() < multi:
                    g = _size(rng, 216, min(2160, k.room([NVL72])), 72)
                    if fixed + g <= fixed_cap:
                        add({"gpus": g, "demand": "at_least", "rack_types": ["gb200-nvl72"], "max_hops": 3})
                        fixed += g
                continue
            if rng.random() >= multi:
                continue
            fill = rng.uniform(0.6, 1.0)  # share of the pod its exact jobs take
            used = 0.0
            while True:
                types = rng.choice(sets)
                step = math.gcd(*(t[1] for t in types))
                g = _size(rng, 512, 2560, step)
                share = g / max(1, k.room(types))
                if used + share > fill or fixed + g > fixed_cap:
                    break
                add({"gpus": g, "demand": "exact", "rack_types": [t[0] for t in types], "max_hops": 3})
                used += share
                fixed += g
    total = sum(j["gpus"] for j in jobs)
    spanning = rng.randint(0, 3) if len(d.kinds) > 1 else 0
    for _ in range(spanning):  # a few huge jobs across buildings, on one rack type
        k = rng.choice(d.kinds)
        types = rng.choice(TYPE_SETS[k.name])
        g = _size(rng, 8192, max(8192, d.size // 10), max(t[1] for t in types))
        add({"gpus": g, "demand": "max", "rack_types": [t[0] for t in types], "max_hops": 7})
        total += g
    while total < want:
        k = rng.choice(d.kinds)
        types = rng.choice(TYPE_SETS[k.name])
        step = max(t[1] for t in types)
        g = _size(rng, 1024, 16384, step)
        job = {"gpus": g, "demand": "max", "rack_types": [t[0] for t in types], "max_hops": 5}
        r = rng.random()
        if r < 0.15:
            job["max_share_per_pod"] = 0.5
        elif r < 0.25:
            job.pop("gpus")  # as many as fit, no figure
            g = 16384
        elif r < 0.4:
            job["max_hops"] = 3
            job["gpus"] = g = max(step, min(g, k.room(types) // step * step))
        add(job)
        total += g
    return jobs


def site_spec(d: Draw) -> dict:
    """The site generator's spec of the draw (``planner generate-site --spec``)."""
    return {
        "id": f"drawn-{d.seed}",
        "description": f"drawn site, seed {d.seed}, about {d.size:,} GPU positions (benchmarks/draws.py)",
        "buildings": [{**k.spec, "prefix": f"K{i + 1}B"} for i, k in enumerate(d.kinds)],
    }


def scenario(d: Draw, site_file: str, time_limit_s: float) -> dict:
    """The scenario of the draw, naming its site file."""
    return {
        "name": f"drawn-{d.seed}",
        "description": d.describe(),
        "site": site_file,
        "clusters": d.clusters,
        "objective": "max_gpus",
        "solver": {"name": "highs", "time_limit_s": time_limit_s, "rel_gap": 0.01},
    }


def write(d: Draw, folder: Path, time_limit_s: float = 120.0) -> Path:
    """The draw's generator spec, site and scenario in ``folder``; the scenario's path."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    name = f"drawn-{d.size // 1000}k-{d.seed}"
    spec = folder / f"{name}.gen.yaml"
    spec.write_text(yaml.safe_dump(site_spec(d), sort_keys=False))
    site = folder / f"{name}.site.yaml"
    root = Path(__file__).resolve().parent.parent
    subprocess.run(
        [str(root / ".venv" / "bin" / "planner"), "generate-site", "--spec", str(spec), "-o", str(site)],
        check=True,
        capture_output=True,
    )
    out = folder / f"{name}.yaml"
    out.write_text(yaml.safe_dump(scenario(d, site.name, time_limit_s), sort_keys=False))
    return out


if __name__ == "__main__":
    seed, size, folder = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    got = draw(seed, size)
    print(got.describe())
    print(write(got, folder))
