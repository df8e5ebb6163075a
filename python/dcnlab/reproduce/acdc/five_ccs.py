"""Fig. 17: five guests with five different controls (CUBIC, Illinois, HighSpeed, NewReno, Vegas) share a
10 Gbps bottleneck through AC/DC; the reference is five DCTCP guests on plain OVS (Fig. 17a). The same
five controls on plain OVS (the switch still marking and dropping Not-ECT above K) show what AC/DC fixes."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd

from ...results import load as load_result
from ...sweep import Runner
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import ACDC, CCS, EXP, MARKING, PAPER, flow_stats, jain, out_path, rate_series, scenario

FIVE = list(CCS.values())  # cubic, illinois, highspeed, reno, vegas
CASES = {
    "all DCTCP (plain OVS)": (["dctcp"] * 5, None),
    "5 CCs through AC/DC": (FIVE, ACDC),
    "5 CCs, plain OVS": (FIVE, None),
}


def _stats(job, warm_us: float) -> dict:
    row = flow_stats(job, warm_us)
    rs = rate_series(load_result(job[2]).flow_trace)
    rs = rs[rs.index * 1e6 > warm_us]
    per = [jain(v) for _, v in rs.iterrows() if v.sum() > 0]
    return row | {"jain_min_interval": min(per) if per else float("nan"),
                  "jain_mean_interval": sum(per) / len(per) if per else float("nan")}


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per case for preset `p` (duration_s, warmup_s, trace_interval)."""
    out = out_path(out)
    jobs = []
    for case, (ccs, vs) in CASES.items():
        flows = [{"src": i, "dst": 5, "cc": cc, "start": f"{i}ms"} for i, cc in enumerate(ccs)]
        sc = scenario("dumbbell", flows, MARKING, vs, p["duration_s"], queue={"node": "left", "port": 5},
                      trace_interval=p["trace_interval"])
        sc["topology"]["left"] = 5
        jobs.append((sc, {"case": case, "controls": " / ".join(ccs)}))
    raw = run_jobs(jobs, out, EXP, runner, fn=partial(_stats, warm_us=p["warmup_s"] * 1e6))
    raw.drop(columns=["cache"]).to_csv(out / "five_ccs_runs.csv", index=False)
    return raw


def five_ccs(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "five_ccs", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out: str | Path) -> list[Path]:
    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(raw), figsize=(4.5 * len(raw), 3.2), sharey=True)
    for ax, (_, r) in zip(axes, raw.iterrows()):
        rs = rate_series(load_result(r["cache"]).flow_trace)
        names = r["controls"].split(" / ")
        for fid in rs.columns:
            ax.plot(rs.index, rs[fid].rolling(5, min_periods=1).mean(), lw=0.9, label=names[int(fid)])
        ax.set_title(f"{r['case']}: Jain {r['jain']:.3f}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylim(0, 10.5)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("Gbps")
    fig.suptitle("five different guest controls (Fig. 17); paper: AC/DC closely tracks all-DCTCP")
    return [savefig(fig, out, "five_ccs")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["case", "goodput_gbps", "total_gbps", "jain", "jain_min_interval", "drops", "retransmits", "queue_mean_kb"]
    return ["<h2>Five different controls (Fig. 17)</h2><p>CUBIC, Illinois, HighSpeed, NewReno and Vegas guests "
            "through AC/DC against five DCTCP guests; paper: AC/DC closely tracks all-DCTCP and both are fairer "
            "than plain CUBIC.</p>", table(raw[cols])] + imgs(plot(raw, out))
