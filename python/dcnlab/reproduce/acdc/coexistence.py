"""Figs. 15–16: a CUBIC guest without ECN and a DCTCP guest on one bottleneck (`dumbbell.toml`), the switch
marking at K and dropping Not-ECT packets above it; with and without AC/DC. Throughput shares, CUBIC's
retransmissions, timeouts, drops and RTT."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...results import load as load_result
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import ACDC, EXP, MARKING, PAPER, flow_stats, out_path, rate_series, scenario

CASES = {"default (no AC/DC)": None, "AC/DC": ACDC}
PAPER_COEX = {"cubic_loss_pct": 0.18}


def _stats(job, warm_us: float) -> dict:
    row = flow_stats(job, warm_us)
    r = cached_result(job)
    g = [float(x) for x in row["goodput_gbps"].split(" / ")]
    f = r.flows.set_index("flow_id")
    tr = r.flow_trace[(r.flow_trace["time_us"] >= warm_us) & (r.flow_trace["flow_id"] == 0)]
    rs = getattr(r, "rtt_samples", None)
    cub = rs[(rs["flow_id"] == 0) & (rs["time_us"] >= warm_us)]["rtt_us"] if rs is not None and len(rs) else tr["srtt_us"]
    return row | {
        "cubic_gbps": g[0], "dctcp_gbps": g[1], "cubic_share": g[0] / sum(g) if sum(g) else float("nan"),
        "cubic_retransmits": int(f.loc[0, "retransmits"]), "cubic_timeouts": int(f.loc[0, "timeouts"]),
        "cubic_rtt_p50_us": float(np.median(cub)) if len(cub) else float("nan"),
        "cubic_rtt_p99_us": float(np.quantile(cub, 0.99)) if len(cub) else float("nan"),
    }


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per case for preset `p` (duration_s, warmup_s, trace_interval, rtt_samples)."""
    out = out_path(out)
    flows = [{"src": 0, "dst": 2, "cc": "cubic", "start": "0ms"}, {"src": 1, "dst": 2, "cc": "dctcp", "start": "1ms"}]
    jobs = []
    for case, vs in CASES.items():
        sc = scenario("dumbbell", flows, MARKING, vs, p["duration_s"], queue={"node": "left", "port": 2},
                      trace_interval=p["trace_interval"], rtt_samples=p.get("rtt_samples", False))
        jobs.append((sc, {"case": case}))
    raw = run_jobs(jobs, out, EXP, runner, fn=partial(_stats, warm_us=p["warmup_s"] * 1e6))
    raw.drop(columns=["cache"]).to_csv(out / "coexistence_runs.csv", index=False)
    return raw


def coexistence(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "coexistence", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out: str | Path) -> list[Path]:
    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(raw) + 1, figsize=(4.5 * (len(raw) + 1), 3.2))
    for ax, (_, r) in zip(axes, raw.iterrows()):
        rs = rate_series(load_result(r["cache"]).flow_trace)
        for fid, name in ((0, "CUBIC (no ECN)"), (1, "DCTCP")):
            if fid in rs:
                ax.plot(rs.index, rs[fid].rolling(5, min_periods=1).mean(), lw=0.9, label=name)
        ax.set_title(f"{r['case']}: CUBIC {r['cubic_gbps']:.2f}, DCTCP {r['dctcp_gbps']:.2f} Gbps", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Gbps")
        ax.set_ylim(0, 10.5)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[-1]
    for _, r in raw.iterrows():
        res = load_result(r["cache"])
        rs = getattr(res, "rtt_samples", None)
        x = rs[rs["flow_id"] == 0]["rtt_us"] if rs is not None and len(rs) else res.flow_trace[res.flow_trace["flow_id"] == 0]["srtt_us"]
        x = np.sort(x.dropna().to_numpy()) / 1e3
        ax.plot(x, np.arange(1, len(x) + 1) / max(len(x), 1), label=f"CUBIC, {r['case']}")
    ax.set_xscale("log")
    ax.set_xlabel("CUBIC RTT (ms)")
    ax.set_ylabel("CDF")
    ax.set_title("CUBIC's RTT (Fig. 16)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle("ECN and non-ECN coexistence (Figs. 15–16); paper: CUBIC starves without AC/DC (loss 0.18 %), fair share with it")
    return [savefig(fig, out, "coexistence")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["case", "cubic_gbps", "dctcp_gbps", "cubic_share", "cubic_retransmits", "cubic_timeouts", "drops",
            "drop_rate_pct", "cubic_rtt_p50_us", "cubic_rtt_p99_us", "queue_mean_kb"]
    return ["<h2>ECN / non-ECN coexistence (Figs. 15–16)</h2><p>one CUBIC guest without ECN and one DCTCP "
            "guest; the switch drops Not-ECT packets above K. Paper: CUBIC gets little throughput and a loss "
            "rate of 0.18 % without AC/DC; through AC/DC both get a fair share and CUBIC's RTT falls.</p>",
            table(raw[cols])] + imgs(plot(raw, out))
