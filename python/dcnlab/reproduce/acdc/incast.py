"""Figs. 18–19: N = 16, 32, 40, 47 long-lived senders into one receiver on the 48-port switch
(`star.toml`; the testbed's 17 servers × 4 NICs are 48 hosts, one per port). CUBIC (marking off), DCTCP,
AC/DC over CUBIC guests, and AC/DC with DCTCP's floor of two segments: average throughput, Jain's index,
drop rate, the receiver port's queue and the RTT's median and 99.9th percentile."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, with_non_ect, PAPER, SCHEMES, flow_stats, link_params, out_path, rtt_stats, scenario

RECEIVER = 47
# At 47 senders, against CUBIC (§5.2).
PAPER_INCAST = {"median_cut": {"DCTCP": 0.82, "AC/DC": 0.97}, "p999_cut": {"DCTCP": 0.94, "AC/DC": 0.98},
                "jain_min": 0.99, "drop_pct": {"DCTCP": 0.0, "AC/DC": 0.0}}


def _stats(job, warm_us: float) -> dict:
    rate, base = link_params(job[0])
    return flow_stats(job, warm_us) | rtt_stats(cached_result(job), warm_us, base, rate)


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for n in p["senders"]:
        for name in p.get("schemes", SCHEMES):
            cc, vs, aqm = SCHEMES[name]
            aqm = with_non_ect(aqm, p)
            flows = [{"src": i, "dst": RECEIVER, "cc": cc, "start": f"{3 * i}us"} for i in range(n)]
            sc = scenario("star", flows, aqm, vs, p["duration_s"], queue={"node": "sw0", "port": RECEIVER},
                          trace_interval=p["trace_interval"], queue_interval=p["queue_interval"], rtt_samples=p.get("rtt_samples", False))
            out.append((sc, {"senders": n, "scheme": name}))
    return out


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per (N, scheme) for preset `p` (senders, duration_s, warmup_s, trace_interval,
    queue_interval, rtt_samples, optional schemes), with each RTT percentile's cut against CUBIC at the same N."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(_stats, warm_us=p["warmup_s"] * 1e6))
    raw["avg_mbps"] = raw["avg_gbps"] * 1e3
    if "CUBIC" in set(raw["scheme"]):
        ref = raw[raw["scheme"] == "CUBIC"].set_index("senders")
        for q in ("p50", "p999"):
            raw[f"rtt_{q}_cut_vs_cubic"] = [1 - r[f"rtt_{q}_us"] / ref.loc[r["senders"], f"rtt_{q}_us"] for _, r in raw.iterrows()]
    raw.drop(columns=["cache"]).to_csv(out / "incast_runs.csv", index=False)
    return raw


def incast(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "incast", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out: str | Path) -> list[Path]:
    pyplot = plt()
    panels = [("avg_mbps", "average throughput (Mbps), Fig. 18a", False),
              ("jain", "Jain's index, Fig. 18b", False),
              ("rtt_p50_us", "RTT p50 (µs), Fig. 19a", True),
              ("rtt_p999_us", "RTT p99.9 (µs), Fig. 19b", True),
              ("drop_rate_pct", "drop rate (%), Fig. 19c", False)]
    fig, axes = pyplot.subplots(1, len(panels), figsize=(4 * len(panels), 3.2))
    for ax, (col, title, log) in zip(axes, panels):
        for scheme, g in raw.groupby("scheme", sort=False):
            ax.plot(g["senders"], g[col], marker="o", ls="--" if "2mss" in scheme else "-", label=scheme)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("senders")
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    src = raw["rtt_source"].iloc[0] if len(raw) else "queue"
    fig.suptitle(f"many-to-one incast (Figs. 18–19), RTT from {src}; paper at 47 senders: median RTT −82 % (DCTCP), "
                 "−97 % (AC/DC) vs CUBIC; no drops and Jain > 0.99 for both")
    return [savefig(fig, out, "incast")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["senders", "scheme", "avg_mbps", "jain", "drops", "drop_rate_pct", "queue_mean_kb", "rtt_p50_us",
            "rtt_p999_us", "srtt_p50_us", "srtt_p999_us"] + [c for c in raw.columns if c.endswith("_cut_vs_cubic")]
    return ["<h2>Incast (Figs. 18–19)</h2><p>N long-lived senders into one port of the 48-port switch. Paper: "
            "comparable throughput, Jain &gt; 0.99 and 0 % drops for DCTCP and AC/DC; at 47 senders DCTCP cuts "
            "CUBIC's median RTT by 82 % and AC/DC by 97 % (p99.9: 94 % and 98 %). RTT columns: "
            f"{raw['rtt_source'].iloc[0]}-derived (rtt_*), guests' smoothed RTT (srtt_*).</p>",
            table(raw[cols])] + imgs(plot(raw, out))
