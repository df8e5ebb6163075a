"""Running scenarios and holding their records as pandas DataFrames."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from . import _core
from .scenario import ScenarioError, to_toml
from .tables import TABLES, empty, frame, schema

__all__ = ["Result", "TABLES", "estimate", "load", "run", "schema", "summary", "validate"]

Scenario = str | Path | Mapping[str, Any]


def _scenario_text(scenario: Scenario, base_dir: str | Path | None = None) -> tuple[str, str | None]:
    """TOML text and the folder that relative paths in it refer to."""
    base = str(base_dir) if base_dir is not None else None
    if isinstance(scenario, Mapping):
        return to_toml(scenario), base
    one_line = isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario
    if isinstance(scenario, Path) or (one_line and (scenario.endswith(".toml") or Path(scenario).is_file())):
        p = Path(scenario)
        try:
            return p.read_text(), base or str(p.resolve().parent)
        except OSError as e:
            raise ScenarioError("", f"cannot read scenario file `{p}`: {e.strerror}") from None
    return str(scenario), base


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

    def save(self, directory: str | Path) -> Path:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            getattr(self, name).to_parquet(d / f"{name}.parquet", index=False)
        (d / "meta.json").write_text(json.dumps(self.meta, indent=2))
        return d


def load(directory: str | Path) -> Result:
    """Records saved by `Result.save`. A table the folder lacks (saved before the table existed) is
    empty, with its declared columns."""
    d = Path(directory)
    frames = {n: pd.read_parquet(d / f"{n}.parquet") if (d / f"{n}.parquet").exists() else empty(n) for n in TABLES}
    return Result(**frames, meta=json.loads((d / "meta.json").read_text()))


def validate(scenario: Scenario, base_dir: str | Path | None = None) -> None:
    """Parse and check a scenario without running it; raises ConfigError naming the field."""
    text, base = _scenario_text(scenario, base_dir)
    _core.validate(text, base)


def estimate(scenario: Scenario, base_dir: str | Path | None = None) -> dict:
    """What a scenario will hold, counted by the core before anything is built: counts (`hosts`,
    `ports`, `flows`, `queue_samples`, …), `bytes` in all, `parts` ([(structure, bytes)], largest
    first), `text` for people, and `limit` (None, or (field, message) of what the engine cannot hold
    whatever the memory). Raises ConfigError for a bad scenario."""
    text, base = _scenario_text(scenario, base_dir)
    return _core.estimate(text, base)


def run(
    scenario: Scenario,
    progress: Callable[[float, int, int, int], None] | None = None,
    progress_interval_us: float = 1000.0,
    base_dir: str | Path | None = None,
) -> Result:
    """Run a scenario (path, TOML text or dict); the simulation runs with the GIL released.

    `progress(sim_time_us, flows_finished, flows_started, events)` is called every
    `progress_interval_us` of simulated time. `base_dir` resolves relative paths of a text or dict
    scenario (a path's own folder is used for a file)."""
    text, base = _scenario_text(scenario, base_dir)
    raw = _core.run(text, base, progress, progress_interval_us)
    meta = json.loads(raw["meta"])
    frames = {k: frame(k, raw[k]) for k in TABLES}
    return Result(**frames, meta=meta)


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
