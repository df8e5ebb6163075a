"""Fig. 21: concurrent stride (`workloads.md` §9.2) on one switch of `hosts` (17) servers
(`star.toml` resized). Host i sends a `bg_size` flow (512 MB in the paper) to (i + 1 … i + 4) mod N one
after the other, and a 16 KB message to (i + 8) mod N every `mice_period` (100 ms). FCT CDFs of both.

Two variants of the background: "lockstep" is the engine's sequential `stride` as §9.2 states it, every
host starting at t = 0; then every host sends to, and receives from, exactly one other at a time at line
rate and no switch port is ever shared (README). "staggered" sends the same flows back to back from each
host (a `flows` entry per host with `max_in_flight = 1`) but starts host i at a uniform random offset in
[0, one flow's time at line rate) drawn from the seed: hosts that do not start or finish in lockstep, as
real servers do not, so receivers see two or more flows at once."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, run_jobs, table
from .common import EXP, PAPER, _rate, fct_cdf_plot, mice_bg_stats, mice_entry, out_path, pooled_fcts, scheme_scenario

STRIDES = [1, 2, 3, 4]
# Against CUBIC, the 16 KB messages (§5.2).
PAPER_STRIDE = {"mice_p50_cut": {"DCTCP": 0.77, "AC/DC": 0.76}, "mice_p999_cut": {"DCTCP": 0.91, "AC/DC": 0.93}}


def background(p: dict, variant: str, seed: int) -> list[dict]:
    n, size = p["hosts"], p["bg_size"]
    if variant == "lockstep":
        return [{"kind": "stride", "strides": STRIDES, "size": size, "sequential": True, "tag": "bg"}]
    # One flow's time at line rate (10 Gbps), the offsets' range.
    t_us = _bytes(size) * 8 / _rate("10Gbps") * 1e6
    offs = np.random.default_rng(seed).uniform(0, t_us, n)
    return [{"kind": "flows", "max_in_flight": 1,
             "list": [{"src": i, "dst": (i + k) % n, "size": size, "start": f"{offs[i]:.3f}us", "tag": "bg"} for k in STRIDES]}
            for i in range(n)]


def _bytes(s: str) -> float:
    for unit, m in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1.0)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * m
    raise ValueError(s)


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for variant in p["variants"]:
        for s in range(1 if variant == "lockstep" else p["seeds"]):
            for name in p["schemes"]:
                traffic = background(p, variant, 1 + s) + [mice_entry(p)]
                sc = scheme_scenario("star", name, traffic, {"all_flows_done": True, "max_time": f"{p['max_time_s']}s"}, p,
                                     hosts=p["hosts"])
                sc["seed"] = 1 + s
                out.append((sc, {"variant": variant, "seed": 1 + s, "scheme": name}))
    return out


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per variant × scheme with every run's flows pooled) for preset `p`
    (hosts, bg_size, variants, seeds, schemes, non_ect, mice_period, mice_repeat, max_time_s)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=mice_bg_stats)
    raw.drop(columns=["cache"]).to_csv(out / "stride_runs.csv", index=False)
    pooled = pooled_fcts(raw, ["variant", "scheme"])
    pooled.to_csv(out / "stride_pooled.csv", index=False)
    return raw, pooled


def stride(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys; the pooled table (runs: `stride_runs.csv`)."""
    return run(preset(PAPER, "stride", scale, **overrides), out, runner)[1]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, pooled = run(p, out, runner)
    cols = ["variant", "scheme", "runs", "mice_n", "mice_p50_us", "mice_p99_us", "mice_p999_us", "bg_p50_us", "bg_mean_us",
            "drops_run", "drop_rate_pct", "timeouts", "mice_timeouts"] + [c for c in pooled.columns if c.endswith("_cut")]
    title = (f"concurrent stride (Fig. 21), {p['hosts']} hosts, {p['bg_size']} to i+1…i+4 in sequence, 16 KB to i+8 every "
             f"{p['mice_period']}; paper: mice p50 −77 % / −76 %, p99.9 −91 % / −93 % (DCTCP / AC/DC vs CUBIC)")
    return [f"<h2>Concurrent stride (Fig. 21)</h2><p>{title}. FCTs pooled over the runs; mice counted while background "
            "flows run. Variants: lockstep (the engine's sequential stride, all hosts from t = 0) and staggered (host i "
            "starts at a random offset; README).</p>", table(pooled[cols])] + imgs(fct_cdf_plot(raw, out, "stride", title, by="variant"))
