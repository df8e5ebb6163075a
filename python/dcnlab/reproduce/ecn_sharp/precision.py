"""How precise a plotted FCT statistic is: the percentile-bootstrap 95 % interval of a run's (or a few
runs') flows, as a half-width relative to the estimate. This is what sizes `scales.toml` (README,
"Scales": every plotted short-flow p99 within ±5 %).

The statistics are those the figures plot (`common.METRICS`): the mean or the 99th percentile of the FCT
of finished flows in a size bucket (bytes, (lo, hi]), with the linear-interpolation quantile that
`results.summary` uses, over flows starting after the run's warm-up. Flows of several runs (seeds of one
point) are resampled within their own run (a stratified bootstrap) and pooled. Flows of one run are not
independent (they share queues), so `block` resamples runs of consecutive flows in start order instead of
single flows (a moving-block bootstrap); `block = 1` is the plain bootstrap. At 90 % load on the testbed a
20000-flow run's short-flow p99 has a plain interval of ±4–5 % but ±14–19 % with blocks of 1000 flows,
which is what the spread of its ten 2000-flow batches says (batch means: ±16–20 %); `measure` therefore
uses blocks of 1000. numpy only; a fixed `seed` gives the same interval on every machine."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

# Name → (lo, hi] bytes, statistic: the four panels of Figs. 9–11, 13–14, 21–22.
STATS = {
    "overall avg": (0.0, np.inf, "mean"),
    "short avg": (0.0, 100e3, "mean"),
    "short p99": (0.0, 100e3, "p99"),
    "large avg": (10e6, np.inf, "mean"),
}


def fct_values(flows: pd.DataFrame, lo: float = 0.0, hi: float = np.inf, warmup_us: float = 0.0) -> np.ndarray:
    """FCTs (µs) of the finished flows of size in (lo, hi] starting at or after `warmup_us`, in start
    order."""
    f = flows[(flows["start_us"] >= warmup_us) & flows["finished"] & (flows["size"] > lo) & (flows["size"] <= hi)]
    return f.sort_values("start_us", kind="stable")["fct_us"].to_numpy(dtype=float)


def _stat(x: np.ndarray, stat: str, axis=None):
    if stat == "mean":
        return x.mean(axis=axis)
    if stat.startswith("p"):
        return np.quantile(x, float(stat[1:]) / 100, axis=axis)
    raise ValueError(f"unknown statistic `{stat}`: `mean` or `pNN`")


def _resample_idx(rng: np.random.Generator, n: int, reps: int, block: int) -> np.ndarray:
    """`reps` × n indices into 0..n-1: single draws (block 1) or moving blocks of `block` consecutive
    indices, cut to n; a block is at most n / 10 long, so that a resample has at least ten."""
    block = min(block, n // 10)
    if block <= 1:
        return rng.integers(0, n, size=(reps, n))
    k = -(-n // block)
    starts = rng.integers(0, n - block + 1, size=(reps, k))
    return (starts[:, :, None] + np.arange(block)).reshape(reps, -1)[:, :n]


def bootstrap(samples: np.ndarray | Sequence[np.ndarray], stat: str = "p99", reps: int = 1000, level: float = 0.95,
              seed: int = 0, block: int = 1, chunk: int = 200) -> dict:
    """Percentile-bootstrap interval of `stat` ("mean", "p99", …) of one sample or of several pooled
    (each resampled within itself). Returns estimate, lo, hi and `rel` = max(hi − est, est − lo) / est,
    the half-width relative to the estimate (the larger side: the p99's interval is skewed), and `n`."""
    one = isinstance(samples, np.ndarray) or not len(samples) or np.isscalar(samples[0])
    parts = [np.asarray(samples, dtype=float)] if one else [np.asarray(s, dtype=float) for s in samples]
    parts = [p for p in parts if len(p)]
    n = sum(len(p) for p in parts)
    if n == 0:
        return {"estimate": np.nan, "lo": np.nan, "hi": np.nan, "rel": np.nan, "n": 0}
    pooled = np.concatenate(parts)
    est = float(_stat(pooled, stat))
    rng = np.random.default_rng(seed)
    boots = []
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        draw = np.concatenate([p[_resample_idx(rng, len(p), r, block)] for p in parts], axis=1)
        boots.append(_stat(draw, stat, axis=1))
    b = np.concatenate(boots)
    a = (1 - level) / 2
    lo, hi = (float(v) for v in np.quantile(b, [a, 1 - a]))
    rel = max(hi - est, est - lo) / est if est else np.nan
    return {"estimate": est, "lo": lo, "hi": hi, "rel": rel, "n": n}


def ratio_bootstrap(pairs: Sequence[tuple[pd.DataFrame, pd.DataFrame]], lo: float, hi: float, stat: str, reps: int = 1000,
                    level: float = 0.95, seed: int = 0, block: int = 1, chunk: int = 200) -> dict:
    """Percentile-bootstrap interval of a normalised statistic — `stat` of scheme A's flows over `stat`
    of the reference's on the same flows (the figures' y axis) — averaged over seeds as `normalise`
    does. `pairs` holds (A's flows, reference's flows) per seed; the flows of one seed are matched by
    `flow_id` (both finished, size in (lo, hi]) and resampled together, so the flows' own spread cancels."""
    xs = []
    for a, b in pairs:
        m = a.merge(b, on="flow_id", suffixes=("_a", "_b"))
        m = m[m["finished_a"] & m["finished_b"] & (m["size_a"] > lo) & (m["size_a"] <= hi)].sort_values("start_us_a", kind="stable")
        xs.append((m["fct_us_a"].to_numpy(dtype=float), m["fct_us_b"].to_numpy(dtype=float)))
    xs = [x for x in xs if len(x[0])]
    if not xs:
        return {"estimate": np.nan, "lo": np.nan, "hi": np.nan, "rel": np.nan, "n": 0}
    est = float(np.mean([_stat(a, stat) / _stat(b, stat) for a, b in xs]))
    rng = np.random.default_rng(seed)
    boots = []
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        per = []
        for a, b in xs:
            i = _resample_idx(rng, len(a), r, block)
            per.append(_stat(a[i], stat, axis=1) / _stat(b[i], stat, axis=1))
        boots.append(np.mean(per, axis=0))
    bt = np.concatenate(boots)
    q = (1 - level) / 2
    lo_, hi_ = (float(v) for v in np.quantile(bt, [q, 1 - q]))
    return {"estimate": est, "lo": lo_, "hi": hi_, "rel": max(hi_ - est, est - lo_) / est, "n": sum(len(a) for a, _ in xs)}


def run_precision(flow_tables: Sequence[pd.DataFrame], warmup_us: float = 0.0, stats=STATS, **kw) -> dict[str, dict]:
    """`bootstrap` of every statistic of `stats` over the flows of one point (one table per seed)."""
    out = {}
    for name, (lo, hi, stat) in stats.items():
        out[name] = bootstrap([fct_values(f, lo, hi, warmup_us) for f in flow_tables], stat, **kw)
    return out


def flows_needed(rel: float, n: int, target: float = 0.05) -> int:
    """Flows for a relative half-width `target`, from one measured at `n` flows: the half-width shrinks
    as 1/√n, so n · (rel / target)²."""
    return int(np.ceil(n * (rel / target) ** 2))


class _CacheTagging:
    """A runner that adds each run's cache folder (`cache`) to its row, so that the `<experiment>_runs.csv`
    a module writes names the records behind every row."""

    def __init__(self, inner):
        self.inner = inner
        self.progress = getattr(inner, "progress", None)

    def map(self, fn, items):
        return [dict(r) | {"cache": it[2]} for r, it in zip(self.inner.map(fn, items), items)]

    def close(self) -> None:
        self.inner.close()


# Experiments whose figures plot FCT statistics of a flows table (the others plot queues and goodputs).
_KEYS = ("figure", "workload", "variation", "load", "scheme")


def measure(scale: str, out, only=None, runner=None, reps: int = 1000, block: int = 1000) -> pd.DataFrame:
    """The bootstrap of every plotted statistic of every point of `scale`'s FCT experiments (runs are made,
    or found in `out/runs`, as `reproduce` makes them), seeds pooled. One row per (experiment, workload,
    variation, load, scheme, statistic): estimate, lo, hi, rel, n (flows in the statistic); norm and
    norm_rel, the normalised value the figure plots and its interval (`ratio_bootstrap`); flows (per run),
    seeds."""
    import json
    from pathlib import Path

    from ...sweep import ProcessRunner
    from .. import preset
    from .dcqcn import DCQCN_SCHEMES
    from .large_scale import LARGE_SCHEMES, normalised_run
    from .motivation import run as motivation_run
    from .pias import run as pias_run
    from .sensitivity import REF, SENSITIVITY
    from .testbed import run as testbed_run

    out = Path(out)
    tag = _CacheTagging(runner or ProcessRunner())
    fns = {
        "motivation": lambda p: motivation_run(p, out, tag),
        "testbed": lambda p: testbed_run(p, out, tag),
        "large_scale": lambda p: normalised_run("large_scale", LARGE_SCHEMES, "DCTCP-RED-Tail", p, out, tag),
        "sensitivity": lambda p: normalised_run("sensitivity", SENSITIVITY, REF, p, out, tag),
        "pias": lambda p: pias_run(p, out, tag),
        "dcqcn": lambda p: normalised_run("dcqcn", DCQCN_SCHEMES, "DCQCN", p, out, tag),
    }
    rows = []
    for exp, fn in fns.items():
        if only and exp not in only:
            continue
        p = preset("ecn_sharp", exp, scale)
        fn(p)
        raw = pd.read_csv(out / f"{exp}_runs.csv")
        if "avg_kb" in raw:  # motivation: Fig. 3's rows carry the derived thresholds, Fig. 2's do not
            raw["figure"] = ["Fig. 3" if v == v else "Fig. 2" for v in raw["avg_kb"]]
        keys = [k for k in _KEYS if k in raw]
        point = [k for k in keys if k != "scheme"]

        def flows(c):  # the flows table and the warm-up, read from the cache folder as saved
            f = pd.read_parquet(Path(c) / "flows.parquet")
            return f[f["start_us"] >= float(json.loads((Path(c) / "meta.json").read_text()).get("warmup_us", 0.0))]

        for pkey, pg in raw.groupby(point, sort=False):
            ref = _REF[exp](pg)
            ref_tables = {s: flows(c) for s, c in zip(pg.loc[pg["scheme"] == ref, "seed"], pg.loc[pg["scheme"] == ref, "cache"])}
            for scheme, g in pg.groupby("scheme", sort=False):
                tables = {s: flows(c) for s, c in zip(g["seed"], g["cache"])}
                for stat, b in run_precision(list(tables.values()), reps=reps, block=block).items():
                    lo, hi, st = STATS[stat]
                    nr = (ratio_bootstrap([(tables[s], ref_tables[s]) for s in tables], lo, hi, st, reps=reps, block=block)
                          if scheme != ref else {"estimate": 1.0, "rel": 0.0})
                    rows.append({"experiment": exp} | dict(zip(point, pkey)) | {"scheme": scheme, "statistic": stat} | b
                                | {"norm": nr["estimate"], "norm_rel": nr["rel"], "flows": int(len(next(iter(tables.values())))),
                                   "seeds": len(tables)})
    return pd.DataFrame(rows)


# The reference scheme each experiment normalises to, from one point's rows.
_REF = {
    "motivation": lambda g: "AVG" if g["figure"].iloc[0] == "Fig. 3" else g["scheme"].iloc[0],
    "testbed": lambda g: "DCTCP-RED-Tail",
    "large_scale": lambda g: "DCTCP-RED-Tail",
    "sensitivity": lambda g: g["scheme"].iloc[0],
    "pias": lambda g: "PIAS",
    "dcqcn": lambda g: "DCQCN",
}


if __name__ == "__main__":  # python -m dcnlab.reproduce.ecn_sharp.precision SCALE OUT [EXPERIMENT,…] [JOBS] [BLOCK]
    import sys

    from ...sweep import ProcessRunner

    scale, out = sys.argv[1], sys.argv[2]
    only = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] else None
    jobs = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    block = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
    df = measure(scale, out, only, ProcessRunner(jobs), block=block)
    df.to_csv(f"{out}/precision.csv", index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(df.drop(columns=["lo", "hi"]).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
