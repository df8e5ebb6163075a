"""Fig. 20: every port congested (`star.toml`). Group A = hosts 0–45, each sending one long-lived flow to
each of the next four in A (mod 46) and one to B1 (host 46): a 46 → 1 incast at B1 on top of 47 congested
ports. B2 (host 47) measures the RTT to B1, i.e. through B1's switch port: base RTT + that port's queueing
delay (B2's own port and the ACK path are idle). Throughput of the flows into B1, drops, B1's queue."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...results import load as load_result
from ...scenario import load as load_scenario
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, with_non_ect, PAPER, SCHEMES, flow_stats, goodput_bps, jain, link_params, out_path, rtt_stats, scenario, stop_us

A, B1, B2 = 46, 46, 47
PAPER_ALL_PORTS = {"avg_mbps": {"CUBIC": 214, "DCTCP": 214, "AC/DC": 201}, "jain_min": 0.98,
                   "drop_pct": {"CUBIC": 0.34, "DCTCP": 0.0, "AC/DC": 0.0}, "cubic_hottest_drop_pct": 4.0}


def flows(cc: str) -> list[dict]:
    out = [{"src": i, "dst": (i + k) % A, "cc": cc, "start": f"{3 * i + k}us", "tag": "a2a"} for i in range(A) for k in range(1, 5)]
    out += [{"src": i, "dst": B1, "cc": cc, "start": f"{3 * i}us", "tag": "b1"} for i in range(A)]
    return out


def _stats(job, warm_us: float) -> dict:
    sc, r = job[0], cached_result(job)
    rate, base = link_params(sc)
    b1 = r.flows[r.flows["tag"] == "b1"]["flow_id"].tolist()
    row = flow_stats(job, warm_us, flows=b1)
    g = goodput_bps(r.flow_trace, warm_us, stop_us(sc))
    a2a = g[~g.index.isin(b1)]
    mtu = sc["switch"]["mtu"]
    drops_all = int(sum(r.meta["drops"].values()))
    pkts_all = r.flow_trace.groupby("flow_id")["delivered_bytes"].max().sum() / (mtu - 40) + drops_all
    row.pop("goodput_gbps")
    return row | rtt_stats(r, warm_us, base, rate) | {
        "b1_avg_mbps": row["avg_gbps"] * 1e3, "b1_jain": row["jain"],
        "a2a_avg_mbps": a2a.mean() / 1e6, "a2a_jain": jain(a2a),
        "drop_rate_all_pct": 100.0 * drops_all / pkts_all if pkts_all else float("nan"),
        "drop_rate_b1_pct": row["drop_rate_pct"],
        "retransmits_all": int(r.flows["retransmits"].sum()), "timeouts_all": int(r.flows["timeouts"].sum()),
    }


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per scheme for preset `p` (duration_s, warmup_s, trace_interval, queue_interval, schemes)."""
    out = out_path(out)
    jobs = []
    for name in p["schemes"]:
        cc, vs, aqm = SCHEMES[name]
        aqm = with_non_ect(aqm, p)
        sc = scenario("star", flows(cc), aqm, vs, p["duration_s"], queue={"node": "sw0", "port": B1},
                      trace_interval=p["trace_interval"], queue_interval=p["queue_interval"])
        jobs.append((sc, {"scheme": name}))
    raw = run_jobs(jobs, out, EXP, runner, fn=partial(_stats, warm_us=p["warmup_s"] * 1e6))
    raw.drop(columns=["cache"]).to_csv(out / "all_ports_runs.csv", index=False)
    return raw


def all_ports(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "all_ports", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out: str | Path, warm_us: float = 0.0) -> list[Path]:
    """Fig. 20: the percentiles of the B2 → B1 RTT (base + B1's queueing delay) per scheme."""
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(6, 3.4))
    qs = [0.5, 0.95, 0.99, 0.999]
    rate, base = link_params(load_scenario(EXP / "star.toml"))
    for _, r in raw.iterrows():
        res = load_result(r["cache"])
        q = res.queues[res.queues["time_us"] >= warm_us]
        rtt = base + q["bytes"] * 8 / rate * 1e6
        ax.plot(range(len(qs)), [np.quantile(rtt, x) / 1e3 for x in qs], marker="o", label=r["scheme"])
    ax.set_xticks(range(len(qs)), ["50th", "95th", "99th", "99.9th"])
    ax.set_yscale("log")
    ax.set_ylabel("B2 → B1 RTT (ms)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("all ports congested (Fig. 20); paper: 214 / 214 / 201 Mbps, CUBIC drops 0.34 %", fontsize=9)
    return [savefig(fig, out, "all_ports")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["scheme", "b1_avg_mbps", "b1_jain", "a2a_avg_mbps", "a2a_jain", "drop_rate_all_pct", "drop_rate_b1_pct",
            "timeouts_all", "queue_mean_kb", "rtt_p50_us", "rtt_p999_us"]
    return ["<h2>All ports congested (Fig. 20)</h2><p>46 hosts each send to the next four and to B1; RTT B2 → B1 = "
            "base + B1's queueing delay. Paper: 214 / 214 / 201 Mbps into B1 (CUBIC / DCTCP / AC/DC), Jain &gt; "
            "0.98, CUBIC drops 0.34 % (4 % at the hottest port), DCTCP and AC/DC none.</p>",
            table(raw[cols])] + imgs(plot(raw, out, p["warmup_s"] * 1e6))
