"""Reliability schema (§11): the interruption model of a scenario's ``reliability:`` block
(causes and counts observed on a reference cluster, or one rate per node)."""

from __future__ import annotations

from pydantic import Field

from planner.enums import Scale
from planner.schema.base import Bool, Float, Id, Int, StrictModel, Text


class Cause(StrictModel):
    """An interruption cause and its rate, as observed on a reference cluster (§11)."""

    id: Id
    """Name of the cause."""
    count: Float = Field(ge=0, le=1e9)
    """Interruptions observed in the reference window."""
    scale: Scale = Scale.gpu
    """What its rate scales with: per GPU, per server, per link or per rack."""
    link_classes: list[Id] | None = Field(None, max_length=100)
    """For scale link: the link classes it applies to (none: every class)."""
    repair: Bool = True
    """Whether the fault takes its unit out for repair (a hardware fault: the unit's server, or its
    whole NVLink domain for a rack-scale cause, is out ``repair_hours``) or only restarts the job
    (software)."""
    source: Text = ""
    """Where the figure comes from."""


class ReferenceCluster(StrictModel):
    """The cluster the cause counts were observed on (default: Llama 3 pretraining, §11)."""

    days: Float = Field(54, gt=0, le=1e6)
    """Length of the observation window, days (Llama 3 paper §3.3.4)."""
    gpus: Int = Field(16_384, gt=0, le=100_000_000)
    """GPUs of the reference cluster (Llama 3 paper §3.3.4)."""
    gpus_per_server: Int = Field(8, gt=0, le=1000)
    """GPUs per server (Grand Teton: 8 H100, catalog)."""
    gpus_per_rack: Int = Field(16, gt=0, le=10_000)
    """GPUs per rack (Grand Teton rack: 2 servers, catalog)."""
    links_per_gpu: Float = Field(1.0, gt=0, le=1000)
    """Fabric links per GPU (one 400G NIC per GPU, Llama 3 paper §3.3.1)."""


def _llama3_causes() -> list[Cause]:
    src = "Llama 3 paper, Table 5 (54 days, 16,384 H100)"
    return [
        Cause(id="faulty-gpu", count=148, scale=Scale.gpu, source=src),
        Cause(id="gpu-hbm3", count=72, scale=Scale.gpu, source=src),
        Cause(id="software", count=54, scale=Scale.server, repair=False, source=src),
        Cause(id="network-switch-cable", count=35, scale=Scale.link, source=src),
        Cause(id="host-maintenance", count=32, scale=Scale.server, source=src),
        Cause(id="gpu-sram", count=19, scale=Scale.gpu, source=src),
        Cause(
            id="other",
            count=59,
            scale=Scale.server,
            source=src + ": 419 unexpected less the six causes above",
        ),
    ]


class Reliability(StrictModel):
    """Interruption model (§11): per-cause rates from a reference cluster, or one rate per node."""

    causes: list[Cause] = Field(default_factory=_llama3_causes, max_length=1000)
    """Causes and counts (default: Llama 3 Table 5, 419 unexpected interruptions: the six largest
    causes and the rest as "other")."""
    reference: ReferenceCluster = ReferenceCluster()
    """The cluster the counts were observed on."""
    node_failures_per_1000_node_days: Float | None = Field(None, gt=0, le=1e6)
    """Instead of causes: one rate per server (HPCA 2025, Kokolis et al.: 6.50 and 2.34 failures per
    1,000 node-days in two research clusters)."""
