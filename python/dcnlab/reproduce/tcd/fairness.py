"""§5.2.4 / Fig. 20: fairness with TCD. The victim scenario without victims; B0–B3 (on L0) each send a
long-lived flow to R0 from the first burst, so after the bursts P2 (L0 → T2) carries F1 and the four
B-flows: five flows on a 40 Gb/s port, a fair share of 8 Gb/s. Reported per scheme: each flow's
throughput during the bursts and in the final window (`final_window_us` before the stop), Jain's index
there, the largest deviation from 8 Gb/s, and when F1 (starved while P3 was congested) first reaches 80 %
of its share; throughput over time from the flow trace (delivered bytes)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, out_path, rate_gbps, victim_scenario

FAIR_GBPS = 8.0  # §5.2.4: "congested flows can achieve fair-share rate allocation (8Gbps) with TCD"
FLOWS = ["f1", "b0", "b1", "b2", "b3"]


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(victim_scenario(s, p, fairness=True), {"scheme": s}) for s in p["schemes"]]


def rates(r) -> pd.DataFrame:
    """Throughput (Gb/s) per trace interval, one column per flow tag."""
    g = rate_gbps(r.flow_trace)
    tags = r.flows.set_index("flow_id")["tag"]
    g.columns = [tags[c] for c in g.columns]
    return g[[c for c in FLOWS if c in g.columns]]


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    g = rates(r)
    during = g[(g.index > p["burst_from_us"]) & (g.index <= p["burst_to_us"])].mean()
    final = g[g.index > p["stop_us"] - p["final_window_us"]].mean()
    f1 = g["f1"]
    reach = f1[(f1.index > p["burst_to_us"]) & (f1 >= 0.8 * FAIR_GBPS)]
    row = {f"{c}_during_gbps": during[c] for c in g.columns} | {f"{c}_final_gbps": final[c] for c in g.columns}
    v = final.to_numpy()
    return row | {"final_jain": float(v.sum() ** 2 / (len(v) * (v**2).sum())), "final_total_gbps": float(v.sum()),
                  "final_max_dev": float(np.max(np.abs(v - FAIR_GBPS)) / FAIR_GBPS),
                  "f1_reaches_80pct_ms": (reach.index[0] - p["burst_to_us"]) / 1e3 if len(reach) else float("nan"),
                  "cache": job[2]}


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per scheme for preset `p` (the victim scenario's keys, `schemes`, `final_window_us`)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.drop(columns=["cache"]).to_csv(out / "fairness_runs.csv", index=False)
    return raw


def fairness(scale: str = "small", out: str | Path = "results/tcd", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    return run(preset(PAPER, "fairness", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, p: dict, out) -> list[Path]:
    from ...results import load as load_result

    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(raw), figsize=(4.2 * len(raw), 3.2), squeeze=False, sharey=True)
    for ax, (_, row) in zip(axes[0], raw.iterrows()):
        g = rates(load_result(row["cache"]))
        for c in g.columns:
            ax.plot(g.index / 1e3, g[c], lw=0.9, label=c.upper())
        ax.axhline(FAIR_GBPS, color="k", ls=":", lw=0.8)
        ax.axvspan(p["burst_from_us"] / 1e3, p["burst_to_us"] / 1e3, color="grey", alpha=0.12)
        ax.set_title(row["scheme"], fontsize=9)
        ax.set_xlabel("time (ms)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("throughput (Gb/s)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("fairness (Fig. 20): F1 and B0–B3 through P2; shaded: bursts; dotted: the 8 Gb/s fair share", fontsize=9)
    return [savefig(fig, out, "fairness")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["scheme"] + [c for c in raw.columns if c.endswith("_gbps") or c.startswith("final_") or c.startswith("f1_reaches")]
    return ["<h2>Fairness (Fig. 20)</h2><p>F1 and B0–B3 share P2 (40 Gb/s) once the bursts end. Paper: with TCD the "
            f"B-flows keep their rate while P2 is undetermined, then converge with F1 to 8 Gb/s. Final window: the last "
            f"{p['final_window_us'] / 1e3:g} ms of {p['stop_us'] / 1e3:g} ms.</p>",
            table(raw[list(dict.fromkeys(cols))])] + imgs(plot(raw, p, out))
