"""Summaries of the traffic kinds made of jobs (`storage`, `training`) from a run's `jobs` table (one row
per storage IO or training iteration; columns in `docs/records.md`).

- IOPS = IOs completed in a window / the window's length; an IO completes when its last message is received.
- Training speed = workers × batch / iteration time (images/s); an iteration runs from the start of its
  compute phase to the moment the last worker holds the updated model."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["iops", "io_latency", "iteration_time", "training_speed"]


def _entry(jobs: pd.DataFrame, entry: int | None) -> pd.DataFrame:
    return jobs if entry is None else jobs[jobs["entry"] == entry]


def iops(jobs: pd.DataFrame, start_us: float, stop_us: float, entry: int | None = None, kind: str | None = None) -> float:
    """IOs (of traffic entry `entry`, of kind `read` or `write` if given) that completed in
    [start_us, stop_us), per second."""
    if stop_us <= start_us:
        raise ValueError(f"the window [{start_us}, {stop_us}) µs is empty")
    j = _entry(jobs, entry)
    if kind is not None:
        j = j[j["kind"] == kind]
    done = j["finished"] & (j["finish_us"] >= start_us) & (j["finish_us"] < stop_us)
    return float(done.sum()) / ((stop_us - start_us) * 1e-6)


def io_latency(jobs: pd.DataFrame, start_us: float, stop_us: float, entry: int | None = None) -> pd.Series:
    """Latency (µs) of each IO that completed in [start_us, stop_us)."""
    j = _entry(jobs, entry)
    done = j["finished"] & (j["finish_us"] >= start_us) & (j["finish_us"] < stop_us)
    return j.loc[done, "duration_us"]


def iteration_time(jobs: pd.DataFrame, skip: int = 0, entry: int | None = None) -> float:
    """Mean time (µs) of the finished iterations after the first `skip` of them; NaN when none is left."""
    j = _entry(jobs, entry)
    d = j.loc[j["finished"] & (j["kind"] == "iteration"), "duration_us"].iloc[skip:]
    return float(d.mean()) if len(d) else math.nan


def training_speed(jobs: pd.DataFrame, workers: int = 7, batch: int = 64, skip: int = 0, entry: int | None = None) -> float:
    """Images per second: workers × batch / mean iteration time (ACC §5.3.2: 7 workers, batch 64)."""
    return workers * batch / (iteration_time(jobs, skip, entry) * 1e-6)
