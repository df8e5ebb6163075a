"""Parameter sweeps: every combination of a grid × seeds, run on all cores or a Ray cluster, cached by
scenario hash.

The runner is swappable: anything with `map(fn, jobs)` returning `fn(job)` for every job, in order. A job
is `(scenario, base_dir, cache_dir)` and `fn` finds or makes the run's records in `cache_dir` through
`cached_result`; runners call `progress(done, total)` as jobs finish."""

from __future__ import annotations

import itertools
import json
import math
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol

import pandas as pd

from .results import DamagedResult, load, run, summary, validate
from .scenario import FileScenario, ScenarioError, override, parse_value, scenario_hash

STATS = ("fct_mean", "fct_p99", "sd_mean", "sd_p50", "sd_p99")
BACKENDS = ("local", "ray")

Progress = Callable[[int, int], None]


class Runner(Protocol):
    def map(self, fn: Callable[[Any], Any], items: list[Any]) -> Iterable[Any]: ...

    def close(self) -> None: ...


class SerialRunner:
    """One job after the other in this process."""

    def __init__(self, progress: Progress | None = None):
        self.progress = progress

    def map(self, fn, items):
        out = []
        for i, it in enumerate(items):
            out.append(fn(it))
            if self.progress:
                self.progress(i + 1, len(items))
        return out

    def close(self) -> None:
        pass


class ProcessRunner:
    """A local process pool (one simulation per core)."""

    def __init__(self, jobs: int | None = None, progress: Progress | None = None):
        self.jobs = jobs or os.cpu_count() or 1
        self.progress = progress

    def map(self, fn, items):
        if self.jobs <= 1 or len(items) <= 1:
            return SerialRunner(self.progress).map(fn, items)
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(items))) as ex:
            futures = {ex.submit(fn, it): i for i, it in enumerate(items)}
            out: list[Any] = [None] * len(items)
            for done, f in enumerate(as_completed(futures), 1):
                out[futures[f]] = f.result()
                if self.progress:
                    self.progress(done, len(items))
            return out

    def close(self) -> None:
        pass


def make_runner(backend: str = "local", jobs: int | None = None, address: str | None = None,
                progress: Progress | None = None, log: Callable[[str], None] | None = None) -> Runner:
    """The runner a command line asks for: `local` (a process pool of `jobs`, default all cores) or
    `ray` (a Ray cluster at `address`, default a new local one of `jobs` CPUs; `dcnlab[ray]`)."""
    if backend == "local":
        if address is not None:
            raise ScenarioError("--address", "is for `--backend ray`; the local backend runs on this machine")
        return ProcessRunner(jobs, progress)
    if backend == "ray":
        from .ray_runner import RayRunner

        return RayRunner(address=address, jobs=jobs, progress=progress, log=log)
    raise ScenarioError("--backend", f"unknown backend `{backend}`; use one of: {', '.join(BACKENDS)}")


def _split_top(s: str) -> list[str]:
    """Split on commas outside brackets, braces and quotes."""
    out, depth, quote, cur = [], 0, "", ""
    for ch in s:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_grid(spec: str) -> tuple[str, list[Any]]:
    """`key=[v1,v2,…]` → (key, values); values in TOML syntax or bare strings (`50KB`)."""
    if "=" not in spec:
        raise ScenarioError("--grid", f"`{spec}` is not `key=[v1,v2,…]`")
    key, vals = spec.split("=", 1)
    vals = vals.strip()
    if not (vals.startswith("[") and vals.endswith("]")):
        raise ScenarioError("--grid", f"the values of `{key}` must be a list in brackets, e.g. {key}=[1,2]")
    values = [parse_value(v) for v in _split_top(vals[1:-1])]
    if not values:
        raise ScenarioError("--grid", f"`{key}` has no values")
    return key.strip(), values


def reusable(meta: Mapping[str, Any]) -> bool:
    """Whether a cached run's `meta` may stand for a run of this build: finished (not interrupted) and
    recorded at this build's records version (`RECORDS_VERSION` in the core: it changes with every fix
    that alters some scenario's records, so results from before a fix are computed again)."""
    from . import _core

    return not meta.get("interrupted") and meta.get("records_version") == _core.RECORDS_VERSION


def complete(cache_dir: str | Path) -> bool:
    """A cache entry that `cached_result` would take as it is."""
    d = Path(cache_dir)
    if not (d / "meta.json").exists():
        return False
    try:
        return reusable(load(d).meta)
    except DamagedResult:
        return False


def cached_result(job: tuple[Any, str | None, str]):
    """The records of (scenario, base_dir, cache_dir): run and saved there unless a complete result of
    this records version is already present. A damaged, half-written or older entry is computed again;
    an interrupted run is never saved (Ctrl-C propagates)."""
    scenario, base_dir, cache_dir = job
    d = Path(cache_dir)
    if (d / "meta.json").exists():
        try:
            r = load(d)
            if reusable(r.meta):
                return r
        except DamagedResult:
            pass
    r = run(scenario, base_dir=base_dir)
    r.save(d)
    return r


def _run_one(job: tuple[dict, str | None, str]) -> dict:
    r = cached_result(job)
    s = summary(r)
    row = {f"{b}:{c}": s.loc[b, c] for b in s.index for c in STATS}
    row["unfinished"] = int(s.loc["all", "unfinished"])
    row["wall_s"] = r.meta.get("wall_s")
    return row


def _t95(n: int) -> float:
    """Two-sided 95% Student-t quantile for n samples."""
    table = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}
    return table.get(n, 1.96 + 2.5 / max(n - 1, 1))


def _label(v: Any) -> Any:
    """A grid value as a table cell: numbers, strings and booleans as they are, tables and lists as
    JSON text (so that runs group by them)."""
    return v if isinstance(v, (int, float, str, bool)) else json.dumps(v, sort_keys=True)


def sweep(
    base: Any,
    grid: Mapping[str, list[Any]],
    seeds: int | None = None,
    out: str | Path = "results/sweep",
    runner: Runner | None = None,
    base_dir: str | None = None,
    on_done: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every grid combination with `seeds` seeds (default 1: the base's seed, then the next ones).
    `base` is a dict or a `FileScenario`. A grid over `seed` itself runs exactly those seeds and cannot
    be combined with `seeds`. Every grid point is checked by the core before the first run. Returns
    (one row per run, mean and 95% CI per combination). Runs already in `out/runs/<hash>` are not run
    again."""
    out = Path(out)
    keys = list(grid)
    if "seed" in grid:
        if seeds is not None:
            raise ScenarioError("--grid", "`seed` is a grid key and `--seeds` is given too: use one of them")
        seed_list: list[int | None] = [None]
    else:
        validate(base, base_dir)
        plain = base.as_dict() if isinstance(base, FileScenario) else base
        base_seed = plain.get("seed", 1)
        seed_list = [base_seed + i for i in range(seeds or 1)]
    jobs, rows = [], []
    for combo in itertools.product(*(grid[k] for k in keys)):
        # Every combination is checked by the core before anything runs: a bad key or value fails fast
        # with the field named, not inside a worker.
        point = dict(zip(keys, combo))
        validate(override(base, point), base_dir)
        for seed in seed_list:
            sc = override(base, point if seed is None else point | {"seed": seed})
            h = scenario_hash(sc)
            jobs.append((sc, base_dir, str(out / "runs" / h)))
            seed_label = {} if seed is None else {"seed": seed}
            rows.append({k: _label(v) for k, v in point.items()} | seed_label | {"hash": h})
    todo = sum(not complete(j[2]) for j in jobs)
    results = list((runner or ProcessRunner()).map(_run_one, jobs))
    if on_done:
        on_done(todo, len(jobs))
    table = pd.DataFrame([r | s for r, s in zip(rows, results)])
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "runs.csv", index=False)
    stat_cols = [c for c in table.columns if ":" in c]
    agg = []
    for combo, g in table.groupby(keys, sort=False, dropna=False) if keys else [((), table)]:
        combo = combo if isinstance(combo, tuple) else (combo,)
        row = dict(zip(keys, combo)) | {"runs": len(g)}
        for c in stat_cols:
            v = g[c].dropna()
            row[c] = v.mean()
            row[c + " ±95%"] = _t95(len(v)) * v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else float("nan")
        agg.append(row)
    summary_table = pd.DataFrame(agg)
    summary_table.to_csv(out / "summary.csv", index=False)
    (out / "sweep.json").write_text(json.dumps({"grid": {k: [_label(v) for v in vs] for k, vs in grid.items()}, "seeds": seeds}))
    return table, summary_table
