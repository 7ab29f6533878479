"""Executors (§14): a list of self-contained jobs run serially, in local processes or on Dask, each
result handed back in the calling thread as it finishes. Used by batch runs (:mod:`planner.batch.sweep`)
and the decomposition by building (:mod:`planner.scale.decompose`)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from planner.errors import InputError


def _serial(jobs: list[tuple], on_done: Callable[[dict], None], *, fn: Callable[..., dict], **_: Any) -> None:
    for job in jobs:
        on_done(fn(*job))


def _process(
    jobs: list[tuple], on_done: Callable[[dict], None], *, fn: Callable[..., dict], workers: int = 2, **_: Any
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # loaded once here, inherited by forked workers (not re-imported per worker)
    import planner.plan.pipeline  # noqa: F401

    ctx = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        for f in as_completed(futures):
            on_done(f.result())


CONNECT_TIMEOUT_S = 10.0
"""How long to wait for a Dask scheduler to answer (``--connect-timeout``)."""


def check_scheduler(
    address: str, timeout_s: float = CONNECT_TIMEOUT_S, flag: str = "--scheduler"
) -> tuple[str, int]:
    """A scheduler address is ``tcp://HOST:PORT`` (PORT 1-65535) that accepts a connection within
    ``timeout_s``; otherwise one line naming the address, before anything runs (exit 2)."""
    import socket

    m = re.fullmatch(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})", address.strip())
    shown = address[:80]
    if not m or not (1 <= int(m.group(2)) <= 65535):
        raise InputError(
            f"{flag} {shown!r}: expected tcp://HOST:PORT with PORT in 1-65535 (a running Dask scheduler)"
        )
    host, port = m.group(1).strip("[]"), int(m.group(2))
    t0 = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            head = _first_bytes(sock, 16, t0 + timeout_s)
    except (OSError, ValueError) as e:
        reason = "timed out" if isinstance(e, TimeoutError) else (getattr(e, "strerror", None) or str(e))[:80]
        raise InputError(
            f"{flag} {shown}: cannot connect within {timeout_s:g} s ({reason}); start the scheduler or "
            "check the address"
        ) from None
    if not _dask_frames(head):
        what = "sent nothing" if not head else f"sent {head[:8]!r}"
        raise InputError(
            f"{flag} {shown}: something listens there but is not a Dask scheduler (it {what} where a "
            f"scheduler greets within {timeout_s:g} s); check the address"
        )
    return host, port


def _first_bytes(sock, n: int, until: float) -> bytes:
    """Up to ``n`` bytes the peer sends before the monotonic time ``until`` (fewer when it sends
    fewer or closes)."""
    got = b""
    while len(got) < n:
        left = until - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(got))
        except TimeoutError:
            break
        if not chunk:
            break
        got += chunk
    return got


def _dask_frames(head: bytes) -> bool:
    """Whether the first bytes are a Dask TCP message's header, as a scheduler sends on accepting a
    connection: a little-endian 8-byte total length (under 64 MiB), then a frame count of 1-64."""
    if len(head) < 16:
        return False
    total, frames = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:16], "little")
    return 0 < total < 1 << 26 and 1 <= frames <= 64


def _dask(
    jobs: list[tuple],
    on_done: Callable[[dict], None],
    *,
    fn: Callable[..., dict],
    workers: int = 2,
    scheduler: str | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    **_: Any,
) -> None:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        check_scheduler(scheduler, connect_timeout_s)
        try:
            client = Client(scheduler, timeout=f"{connect_timeout_s}s")
        except (TimeoutError, OSError) as e:
            raise InputError(
                f"--scheduler {scheduler[:80]}: no Dask scheduler answered within {connect_timeout_s:g} s "
                f"({type(e).__name__}); start the scheduler or check the address"
            ) from None
        except Exception as e:  # noqa: BLE001 - something listens there, but does not speak Dask's protocol
            raise InputError(
                f"--scheduler {scheduler[:80]}: something answers there, but not a Dask scheduler "
                f"({type(e).__name__})"
            ) from None
        try:
            client.wait_for_workers(1, timeout=connect_timeout_s)
        except TimeoutError:
            client.close()
            raise InputError(
                f"--scheduler {scheduler[:80]}: the scheduler has no workers (none joined within "
                f"{connect_timeout_s:g} s); start some with `dask worker {scheduler[:80]}` where `planner` "
                "imports"
            ) from None
    else:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            preload=["planner.plan.pipeline"],
        )  # workers import the engine once, at start
        client = Client(cluster)
    try:
        futures = [
            client.submit(fn, *job, pure=False, key=f"{fn.__name__}-{job[0]}-{time.time_ns()}")
            for job in jobs
        ]
        for f in as_completed(futures):
            on_done(f.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_jobs(
    fn: Callable[..., dict],
    jobs: list[tuple],
    on_done: Callable[[dict], None],
    executor: str = "serial",
    workers: int = 2,
    scheduler: str | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
) -> None:
    """Run ``fn(*job)`` for every job on an executor (``fn`` importable by workers, every parameter
    in the job); ``on_done(result)`` in the calling thread as each finishes."""
    if jobs:
        EXECUTORS[executor](
            jobs, on_done, workers=workers, scheduler=scheduler, fn=fn, connect_timeout_s=connect_timeout_s
        )


def counting(on_done: Callable[[dict], None], total: int, say: Callable[[str], None], what: str):
    """``on_done`` that also says after each result "``what``: k of ``total`` done (part)" (the
    dashboard shows the count beside the stage)."""
    finished: list[str] = []

    def done(result: dict) -> None:
        on_done(result)
        finished.append(str(result.get("part", "")))
        say(f"{what}: {len(finished)} of {total} done ({finished[-1]})")

    return done


EXECUTORS = {"serial": _serial, "process": _process, "dask": _dask}
