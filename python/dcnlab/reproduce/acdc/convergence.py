"""Fig. 14: convergence (after Judd, NSDI 2015). `flows` long-lived flows on the dumbbell
(`dumbbell.toml`), left host k → the right host, added one every `period_s` and then removed in reverse
order, the last added first (flow k runs from k·T to (2n − 1 − k)·T; the paper: every 30 s). A flow is
removed by its `stop` (the application stops writing). Per-flow throughput over time, Jain's index over
the flows active in each phase (after `settle_s`), the drop rate over the run (paper: CUBIC 0.17 %,
DCTCP and AC/DC 0 %)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd

from ...results import load as load_result
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, delivered, drop_rate, jain, out_path, rate_series, scheme_scenario

PAPER_CONVERGENCE = {"drop_pct": {"CUBIC": 0.17, "DCTCP": 0.0, "AC/DC": 0.0}}


def windows(n: int, period_s: float) -> list[tuple[float, float]]:
    """Each flow's (start, stop) in seconds: added every period, removed last-in first-out."""
    return [(k * period_s, (2 * n - 1 - k) * period_s) for k in range(n)]


def scenario(name: str, p: dict) -> dict:
    n, T = p["flows"], p["period_s"]
    lst = [{"src": k, "dst": n, "size": "inf", "start": f"{a}s", "stop": f"{b}s", "tag": "long"}
           for k, (a, b) in enumerate(windows(n, T))]
    rec = {"trace_tags": ["long"], "trace_interval": p["trace_interval"], "queue_sample_interval": p["queue_interval"],
           "queues": [{"node": "left", "port": n}]}
    sc = scheme_scenario("dumbbell", name, [{"kind": "flows", "list": lst}], {"time": f"{(2 * n - 1) * T}s"}, p, record=rec)
    sc["topology"]["left"] = n
    sc["switch"]["mtu"] = p.get("mtu", 9000)
    return sc


def phases(n: int, T: float) -> list[tuple[float, float, list[int]]]:
    """(start s, end s, active flow indices) of the 2n − 1 phases."""
    w = windows(n, T)
    return [(j * T, (j + 1) * T, [k for k, (a, b) in enumerate(w) if a <= j * T and b >= (j + 1) * T]) for j in range(2 * n - 1)]


def _stats(job, p: dict) -> dict:
    sc, r = job[0], cached_result(job)
    n, T, settle = p["flows"], p["period_s"], p["settle_s"]
    d = delivered(r.flow_trace)
    fid = r.flows.sort_values("start_us")["flow_id"].tolist()  # flow k = the k-th to start
    at = lambda t: d[d.index <= t * 1e6].iloc[-1]  # noqa: E731
    ph = []
    for a, b, act in phases(n, T):
        g = (at(b) - at(a + settle))[[fid[k] for k in act]] * 8 / (b - a - settle) / 1e9
        ph.append({"n": len(act), "jain": jain(g), "total_gbps": g.sum(), "min_gbps": g.min(), "max_gbps": g.max()})
    shared = [x for x in ph if x["n"] >= 2]
    q = r.queues
    return {
        "jain_min_shared": min(x["jain"] for x in shared),
        "jain_mean_shared": sum(x["jain"] for x in shared) / len(shared),
        "total_gbps_min": min(x["total_gbps"] for x in ph),
        "phase_jain": " / ".join(f"{x['jain']:.3f}" for x in ph),
        "phase_total_gbps": " / ".join(f"{x['total_gbps']:.2f}" for x in ph),
        "drops": int(q["drops"].sum()),
        "drops_run": int(sum(r.meta["drops"].values())),
        "drop_rate_pct": drop_rate(r, sc["switch"]["mtu"]),
        "retransmits": int(r.flows["retransmits"].sum()),
        "timeouts": int(r.flows["timeouts"].sum()),
        "queue_mean_kb": q["bytes"].mean() / 1e3,
        "queue_p999_kb": q["bytes"].quantile(0.999) / 1e3,
        "cache": job[2],
    }


def run(p: dict, out: str | Path, runner: Runner | None = None) -> pd.DataFrame:
    """One row per scheme for preset `p` (flows, period_s, settle_s, schemes, non_ect, trace_interval,
    queue_interval)."""
    out = out_path(out)
    jobs = [(scenario(name, p), {"scheme": name}) for name in p["schemes"]]
    raw = run_jobs(jobs, out, EXP, runner, fn=partial(_stats, p=p))
    raw.drop(columns=["cache"]).to_csv(out / "convergence_runs.csv", index=False)
    return raw


def convergence(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "convergence", scale, **overrides), out, runner)


def plot(raw: pd.DataFrame, out: str | Path) -> list[Path]:
    """Fig. 14: each flow's throughput over time, one panel per scheme."""
    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(raw), figsize=(4.6 * len(raw), 3.2), sharey=True, squeeze=False)
    for ax, (_, row) in zip(axes[0], raw.iterrows()):
        res = load_result(row["cache"])
        rs = rate_series(res.flow_trace)
        for i, fid in enumerate(res.flows.sort_values("start_us")["flow_id"]):
            ax.plot(rs.index, rs[fid], lw=0.8, label=f"flow {i + 1}")
        ax.set_title(f"{row['scheme']}: drops {row['drop_rate_pct']:.3f} %, min Jain {row['jain_min_shared']:.3f}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("throughput (Gbps)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("convergence (Fig. 14): flows added then removed; paper: drop rate CUBIC 0.17 %, DCTCP and AC/DC 0 %")
    return [savefig(fig, out, "convergence")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw = run(p, out, runner)
    cols = ["scheme", "jain_min_shared", "jain_mean_shared", "phase_jain", "phase_total_gbps", "drops", "drop_rate_pct",
            "retransmits", "timeouts", "queue_mean_kb"]
    return [f"<h2>Convergence (Fig. 14)</h2><p>{p['flows']} long-lived flows on the dumbbell, one added every "
            f"{p['period_s']} s, then removed last-in first-out (paper: every 30 s). Jain's index per phase over the "
            f"active flows after {p['settle_s']} s. Paper: CUBIC converges poorly and drops 0.17 %; DCTCP and AC/DC "
            "converge and drop nothing.</p>", table(raw[cols])] + imgs(plot(raw, out))
