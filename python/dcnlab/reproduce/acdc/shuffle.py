"""Fig. 22: shuffle (`workloads.md` §9.3) on one switch of `hosts` (17) servers (`star.toml` resized):
every host sends `bg_size` (512 MB in the paper) to every other in its own random order, at most two at
once, the next when one finishes (the engine's `shuffle`; the orders come from the seed), and a 16 KB
message to (i + 8) mod N every `mice_period` (100 ms). `seeds` runs (the paper: 30); FCT CDFs pooled."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, run_jobs, table
from .common import EXP, PAPER, fct_cdf_plot, mice_bg_stats, mice_entry, out_path, pooled_fcts, scheme_scenario

# Against CUBIC (§5.2).
PAPER_SHUFFLE = {"mice_p50_cut": {"DCTCP": 0.72, "AC/DC": 0.71}, "mice_p999_cut": {"DCTCP": 0.55, "AC/DC": 0.73}}


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for s in range(p["seeds"]):
        for name in p["schemes"]:
            traffic = [{"kind": "shuffle", "size": p["bg_size"], "parallel": p.get("parallel", 2), "tag": "bg"}, mice_entry(p)]
            sc = scheme_scenario("star", name, traffic, {"all_flows_done": True, "max_time": f"{p['max_time_s']}s"}, p,
                                 hosts=p["hosts"])
            sc["seed"] = 1 + s
            out.append((sc, {"seed": 1 + s, "scheme": name}))
    return out


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per scheme with every run's flows pooled) for preset `p` (hosts,
    bg_size, parallel, seeds, schemes, non_ect, mice_period, mice_repeat, max_time_s)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=mice_bg_stats)
    raw.drop(columns=["cache"]).to_csv(out / "shuffle_runs.csv", index=False)
    pooled = pooled_fcts(raw, ["scheme"])
    pooled.to_csv(out / "shuffle_pooled.csv", index=False)
    return raw, pooled


def shuffle(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys; the pooled table (runs: `shuffle_runs.csv`)."""
    return run(preset(PAPER, "shuffle", scale, **overrides), out, runner)[1]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, pooled = run(p, out, runner)
    cols = ["scheme", "runs", "mice_n", "mice_p50_us", "mice_p99_us", "mice_p999_us", "bg_p50_us", "bg_mean_us",
            "drops_run", "drop_rate_pct", "timeouts", "mice_timeouts"] + [c for c in pooled.columns if c.endswith("_cut")]
    title = (f"shuffle (Fig. 22), {p['hosts']} hosts, {p['bg_size']} to every other, ≤ {p.get('parallel', 2)} at once, "
             f"{p['seeds']} runs, 16 KB to i+8 every {p['mice_period']}; paper: mice p50 −72 % / −71 %, p99.9 −55 % / −73 %")
    return [f"<h2>Shuffle (Fig. 22)</h2><p>{title}. FCTs pooled over the runs; mice counted while background flows run.</p>",
            table(pooled[cols])] + imgs(fct_cdf_plot(raw, out, "shuffle", title))
