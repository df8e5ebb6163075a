"""Fig. 18(b): A0–A14's concurrent bursts of 16–256 KB each (the victim scenario, `bursts` in the preset):
the victims' mean FCT and the fraction of undetermined victims (saw UE, never CE — `flows.ce_marks`,
`ue_marks`) per burst size and scheme. Paper: "as the burst size increases, more flows are victimized and
marked with UE"."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, LARGE, P2, PAPER, SMALL, mark_classes, out_path, victim_scenario


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for b in p["bursts"]:
        for s in p["schemes"]:
            out.append((victim_scenario(s, copy.deepcopy(p) | {"burst": b}), {"burst": b, "scheme": s}))
    return out


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    f = r.flows
    v = f[(f["tag"] == "victim") & (f["start_us"] >= p["burst_from_us"]) & (f["start_us"] < p["burst_to_us"])]
    cls = mark_classes(v).value_counts()
    small, large = v[v["size"] < SMALL], v[v["size"] > LARGE]
    return {"victims": len(v), "undetermined_frac": cls.get("undetermined", 0) / len(v) if len(v) else float("nan"),
            "congested_frac": cls.get("congested", 0) / len(v) if len(v) else float("nan"),
            "fct_us": v.loc[v["finished"], "fct_us"].mean(), "small_fct_us": small.loc[small["finished"], "fct_us"].mean(),
            "large_fct_us": large.loc[large["finished"], "fct_us"].mean(), "unfinished": int((~v["finished"]).sum()),
            "p2_paused_us": float(r.ports.set_index(["node", "port"]).loc[P2, "paused_us"])}


def _kb(b: str) -> float:
    return float(b.removesuffix("KB"))


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per burst size × scheme for preset `p` (the victim scenario's keys, `bursts`, `schemes`)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw["burst_kb"] = [_kb(b) for b in raw["burst"]]
    raw.to_csv(out / "burst_runs.csv", index=False)
    return raw


def burst(scale: str = "small", out: str | Path = "results/tcd", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    return run(preset(PAPER, "burst", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out) -> list[Path]:
    pyplot = plt()
    fig, axes = pyplot.subplots(1, 3, figsize=(14, 3.2))
    for scheme, g in raw.groupby("scheme", sort=False):
        for ax, col in zip(axes, ("small_fct_us", "large_fct_us", "undetermined_frac")):
            ax.plot(g["burst_kb"], g[col], marker="o", label=scheme)
    for ax, t in zip(axes, ("victims < 10 KB: mean FCT (µs)", "victims > 1 MB: mean FCT (µs)", "fraction of undetermined victims")):
        ax.set_title(t, fontsize=9)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("burst per sender (KB)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("burst size (Fig. 18b); paper: more victims, more of them marked UE, as the bursts grow", fontsize=9)
    return [savefig(fig, out, "burst")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["burst", "scheme", "victims", "undetermined_frac", "congested_frac", "small_fct_us", "large_fct_us",
            "unfinished", "p2_paused_us"]
    return ["<h2>Burst size (Fig. 18b)</h2><p>A0–A14 send concurrent bursts of each size every "
            f"{p['burst_period_us']} µs from {p['burst_from_us']} to {p['burst_to_us']} µs; victims as in the victim "
            "experiment. Undetermined: saw UE, never CE. Paper: the fraction grows with the burst size.</p>",
            table(raw[cols])] + imgs(plot(raw, out))
