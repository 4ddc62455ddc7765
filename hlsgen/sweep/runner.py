"""Tasks on dask.distributed: a LocalCluster sized to the machine by default, or the cluster behind
`--scheduler tcp://HOST:PORT`. Each finished task's report files and row are written as it arrives (files
first: a row on disk means its build is complete), so an interrupted sweep loses only its running tasks.
A worker that dies mid-task is replaced (its nanny restarts it) and the scheduler runs its tasks again;
one that keeps killing workers becomes a failed row (`Lost`), like any failing configuration."""
from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import ToolError
from .cache import cached_row, persist
from .task import Inputs, Outcome, Task, base_row, run_task

CONNECT_TIMEOUT_S = 30
POLL_S = 0.5  # how often the progress line learns how many tasks are running


@dataclass(frozen=True)
class Progress:
    total: int
    done: int  # finished, failed ones and cached ones included
    failed: int
    cached: int
    running: int


@dataclass(frozen=True)
class Cluster:
    scheduler: str | None = None  # tcp://HOST:PORT of a running scheduler; None: a LocalCluster
    workers: int | None = None  # the LocalCluster's worker processes [default: one per core]


def run_tasks(jobs: list[tuple[Task, Inputs]], sweep: Path, cluster: Cluster,
              progress: Callable[[Progress], None] = lambda p: None) -> list[dict]:
    """Every job's row, in the order of `jobs`: from SWEEP/rows/ where cached, else computed on the cluster."""
    rows_dir = sweep / "rows"
    rows = {task.key: cached_row(rows_dir, task.key) for task, _ in jobs}
    todo = list({task.key: (task, inputs) for task, inputs in jobs if rows[task.key] is None}.values())
    cached = len(jobs) - len(todo)
    progress(Progress(len(jobs), cached, _failed(rows), cached, 0))
    if todo:
        with _client(cluster) as client:
            for row in _compute(client, todo, sweep):
                if row is not None:
                    rows[row["key"]] = row
                progress(Progress(len(jobs), sum(r is not None for r in rows.values()), _failed(rows), cached,
                                  _running(client)))
    return [rows[task.key] for task, _ in jobs]


def _compute(client, todo: list[tuple[Task, Inputs]], sweep: Path):
    """Each finished task's row as it arrives, and None every POLL_S while none does (a progress tick)."""
    from distributed import as_completed

    held = {}
    for _, inputs in todo:  # each model's bytes cross the network once, not once per task; as a task (not
        # scattered data) the scheduler can compute them again when the worker holding them dies
        if id(inputs) not in held:
            held[id(inputs)] = client.submit(_hold, inputs, pure=False)
    futures = {client.submit(run_task, task, held[id(inputs)], key=f"hlsgen-sweep-{task.key}", pure=False): task
               for task, inputs in todo}
    finished = as_completed(futures)
    while not finished.is_empty():
        batch = finished.next_batch(block=False)
        if not batch:
            time.sleep(POLL_S)
            yield None
        for future in batch:
            yield _record(sweep, futures[future], future)


def _hold(inputs: Inputs) -> Inputs:
    return inputs


def _record(sweep: Path, task: Task, future) -> dict:
    try:
        outcome: Outcome = future.result()
    except Exception as exc:  # the task's workers died under it (KilledWorker) or the cluster went away
        row = base_row(task)
        row.update(status="failed", exit_code=ToolError.exit_code, category="Lost", worker="",
                   error=f"the task's workers were lost ({type(exc).__name__}: {exc})")
        outcome = Outcome(row, {})
    row = dict(outcome.row)
    if outcome.files:
        folder = sweep / "builds" / task.key
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in outcome.files.items():
            (folder / name).write_bytes(data)
        row["report"] = f"builds/{task.key}/report.html"
    persist(sweep / "rows", row)
    return row


def _failed(rows: dict) -> int:
    return sum(r is not None and r["status"] != "ok" for r in rows.values())


def _running(client) -> int:
    try:
        return sum(len(keys) for keys in client.processing().values())
    except Exception:  # the scheduler is busy or gone: the count is only for the progress line
        return 0


@contextlib.contextmanager
def _client(cluster: Cluster):
    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if cluster.scheduler is not None:
        try:
            client = Client(cluster.scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise ToolError(f"cannot reach the dask scheduler at {cluster.scheduler} ({exc}); start one with "
                            "`dask scheduler` or drop --scheduler to run on this machine") from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=cluster.workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                      dashboard_address=":0",  # any free port: 8787 may be another cluster's
                      silence_logs=logging.ERROR) as local, Client(local) as client:
        yield client
