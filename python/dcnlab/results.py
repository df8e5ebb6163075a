"""Running scenarios and holding their records as pandas DataFrames."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from . import _core
from .scenario import FileScenario, ScenarioError, read_text
from .tables import TABLES, empty, frame, schema

__all__ = ["DamagedResult", "Interrupted", "Result", "SimulationFailed", "TABLES", "estimate", "load", "run", "schema", "summary", "validate"]

Scenario = str | Path | Mapping[str, Any] | FileScenario


def _source(scenario: Scenario, base_dir: str | Path | None = None) -> tuple[Any, str | None, list]:
    """What the core reads (TOML text or a mapping), the folder relative paths in it refer to, and the
    overrides to write into the text."""
    base = str(base_dir) if base_dir is not None else None
    if isinstance(scenario, FileScenario):
        return scenario.text, base or scenario.base_dir, list(scenario.overrides)
    if isinstance(scenario, Mapping):
        return dict(scenario), base, []
    one_line = isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario
    if isinstance(scenario, Path) or (one_line and (scenario.endswith(".toml") or Path(scenario).is_file())):
        p = Path(scenario)
        return read_text(p), base or str(p.resolve().parent), []
    return str(scenario), base, []


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during `run`: `.result` holds the records until then (`meta["interrupted"]` is true)."""

    def __init__(self, result: "Result"):
        super().__init__("run interrupted")
        self.result = result


class SimulationFailed(RuntimeError):
    """The run stopped because its results would be wrong: a packet of a lossless priority was dropped, or
    PFC deadlocked with `on_deadlock = "fail"`. The message says where; `.result` holds the records until
    then (`meta["stop_reason"]` is `"failed"`, `meta["failure"]` the message)."""

    def __init__(self, result: "Result"):
        super().__init__(result.meta.get("failure") or "the run failed")
        self.result = result

    def __reduce__(self):  # a sweep's worker process sends it back whole
        return (SimulationFailed, (self.result,))


@dataclass
class Result:
    """Records of one run: one DataFrame per table of `TABLES` (columns in `docs/records.md`), times in µs.

    `meta` stays the fifth field and `controller_steps` comes after it, so that code building a Result
    by position keeps working."""

    flows: pd.DataFrame
    queues: pd.DataFrame
    links: pd.DataFrame
    flow_trace: pd.DataFrame
    meta: dict = field(default_factory=dict)
    controller_steps: pd.DataFrame = field(default_factory=lambda: empty("controller_steps"))
    rtt_samples: pd.DataFrame = field(default_factory=lambda: empty("rtt_samples"))
    pauses: pd.DataFrame = field(default_factory=lambda: empty("pauses"))
    ports: pd.DataFrame = field(default_factory=lambda: empty("ports"))
    port_states: pd.DataFrame = field(default_factory=lambda: empty("port_states"))
    jobs: pd.DataFrame = field(default_factory=lambda: empty("jobs"))

    def save(self, directory: str | Path) -> Path:
        """Write every table (Parquet) and `meta.json` atomically: into a temporary folder beside
        `directory`, renamed into place when complete, so that a folder is either whole or absent."""
        d = Path(directory)
        d.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.", suffix=".partial", dir=d.parent))
        try:
            for name in TABLES:
                getattr(self, name).to_parquet(tmp / f"{name}.parquet", index=False)
            (tmp / "meta.json").write_text(json.dumps(self.meta, indent=2))
            if d.exists():
                old = d.with_name(f".{d.name}.old-{os.getpid()}")
                d.rename(old)
                tmp.rename(d)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(d)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return d


class DamagedResult(ScenarioError):
    """A results folder that is incomplete or unreadable (a run written by something else, or cut off)."""


def load(directory: str | Path) -> Result:
    """Records saved by `Result.save`. A table the folder lacks (saved before the table existed) is
    empty, with its declared columns. A folder without `meta.json`, or with a file that cannot be read,
    raises `DamagedResult` naming the folder and the file."""
    d = Path(directory)
    if not (d / "meta.json").is_file():
        raise DamagedResult("", f"`{d}` holds no results (no meta.json); write some with `dcnlab run SCENARIO -o {d}`")
    try:
        meta = json.loads((d / "meta.json").read_text())
        if not isinstance(meta, dict):
            raise ValueError("meta.json is not an object")
    except (OSError, ValueError) as e:
        raise DamagedResult("", f"`{d}/meta.json` is damaged ({e}); run the scenario again") from None
    frames = {}
    for n in TABLES:
        f = d / f"{n}.parquet"
        try:
            frames[n] = pd.read_parquet(f) if f.exists() else empty(n)
        except Exception as e:  # pyarrow raises several kinds for a truncated or foreign file
            raise DamagedResult("", f"`{f}` is damaged ({type(e).__name__}); run the scenario again") from None
    return Result(**frames, meta=meta)


def validate(scenario: Scenario, base_dir: str | Path | None = None) -> None:
    """Parse and check a scenario without running it; raises ConfigError naming the field."""
    src, base, overrides = _source(scenario, base_dir)
    _core.validate(src, base, overrides)


def estimate(scenario: Scenario, base_dir: str | Path | None = None) -> dict:
    """What a scenario will hold, counted by the core before anything is built: counts (`hosts`,
    `ports`, `flows`, `queue_samples`, …), `bytes` in all, `parts` ([(structure, bytes)], largest
    first), `text` for people, and `limit` (None, or (field, message) of what the engine cannot hold
    whatever the memory). Raises ConfigError for a bad scenario."""
    src, base, overrides = _source(scenario, base_dir)
    return _core.estimate(src, base, overrides)


def run(
    scenario: Scenario,
    progress: Callable[[float, int, int, int], None] | None = None,
    progress_every_s: float = 0.5,
    base_dir: str | Path | None = None,
) -> Result:
    """Run a scenario (path, TOML text, dict or `FileScenario`); the simulation runs with the GIL
    released.

    `progress(sim_time_us, flows_finished, flows_started, events)` is called at most every
    `progress_every_s` seconds of wall time and once at the end. `base_dir` resolves relative paths of
    a text or dict scenario (a file's own folder is used for a file). Ctrl-C stops the run within a
    fraction of a second and raises `Interrupted`, whose `.result` holds what was recorded."""
    src, base, overrides = _source(scenario, base_dir)
    try:
        raw = _core.run(src, base, overrides, progress, progress_every_s)
    except _core.Interrupted as e:
        raise Interrupted(_result(e.args[0])) from None
    res = _result(raw)
    if res.meta.get("failure"):
        raise SimulationFailed(res)
    return res


def _result(raw: dict) -> Result:
    meta = json.loads(raw["meta"])
    return Result(**{k: frame(k, raw[k]) for k in TABLES}, meta=meta)


BUCKETS = (0, 100_000, 10_000_000, np.inf)


def summary(flows: "pd.DataFrame | Result", buckets=BUCKETS, warmup_us: float | None = None) -> pd.DataFrame:
    """The field's standard table: count, mean, median, p95, p99 of FCT (µs) and of slowdown, for all
    flows and per size bucket (lo, hi] (bytes; default the papers' (0, 100KB], (100KB, 10MB],
    (10MB, ∞)). Flows starting before `warmup_us` (default: the run's `warmup`) are left out;
    unfinished flows are counted in `unfinished`, never silently dropped."""
    if isinstance(flows, Result):
        if warmup_us is None:
            warmup_us = float(flows.meta.get("warmup_us", 0.0))
        flows = flows.flows
    f = flows[flows["start_us"] >= (warmup_us or 0.0)]
    rows = []
    groups = [("all", f)] + [
        (f"({_fmt(lo)}, {_fmt(hi)}]", f[(f["size"] > lo) & (f["size"] <= hi)]) for lo, hi in zip(buckets[:-1], buckets[1:])
    ]
    for name, g in groups:
        done = g[g["finished"]]
        row = {"bucket": name, "flows": len(g), "unfinished": int((~g["finished"]).sum())}
        for col, short in (("fct_us", "fct"), ("slowdown", "sd")):
            v = done[col]
            row[f"{short}_mean"] = v.mean()
            row[f"{short}_p50"] = v.quantile(0.5) if len(v) else np.nan
            row[f"{short}_p95"] = v.quantile(0.95) if len(v) else np.nan
            row[f"{short}_p99"] = v.quantile(0.99) if len(v) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("bucket")


def _fmt(x: float) -> str:
    if x == np.inf:
        return "inf"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= div:
            return f"{x / div:g}{unit}"
    return f"{x:g}B"
