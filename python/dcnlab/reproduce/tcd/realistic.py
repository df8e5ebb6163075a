"""§5.2.3 / Fig. 19 and the DCQCN realistic-workload case (`spec/tcd.md` §7.2): a leaf-spine fabric
(`leaves` × `hosts_per_leaf` hosts, `spines` spines, every link `link_rate`, 1 µs) with PFC on the data
priority (dynamic XOFF), Hadoop and WebSearch flow sizes with Poisson arrivals at `load` between all host
pairs (the same flows for every scheme). Reported per workload and scheme: median and 99th-percentile FCT
slowdown per size bin, the flows' mark classes and how long ports were paused. Paper: TIMELY+TCD improves
median and p99 slowdown of small and medium flows; under Hadoop the p99 slowdown of flows < 50 KB falls
from 50.3 to 36.6."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, SCHEMES, mark_classes, out_path

# (workload, scheme, bin, quantile) → the paper's value (Fig. 19, Hadoop, TIMELY vs TIMELY+TCD).
PAPER_REALISTIC = {("hadoop", "TIMELY", "< 50KB", "p99"): 50.3, ("hadoop", "TIMELY+TCD", "< 50KB", "p99"): 36.6}
BINS = [(0, 50_000, "< 50KB"), (50_000, 1_000_000, "50KB-1MB"), (1_000_000, np.inf, "> 1MB")]


def scenario(scheme: str, wl: str, p: dict, seed: int, xoff: str = "dynamic") -> dict:
    transport, aqm = SCHEMES[scheme]
    transport = copy.deepcopy(transport)
    if transport["cc"] == "dcqcn" and p.get("preset"):
        transport["preset"] = p["preset"]
    link = {"rate": p["link_rate"], "delay": "1us"}
    return {
        "name": f"tcd realistic {wl} {scheme}",
        "seed": seed,
        "stop": {"all_flows_done": True, "max_time": p["max_time"]},
        "topology": {"kind": "leaf_spine", "spines": p["spines"], "leaves": p["leaves"],
                     "hosts_per_leaf": p["hosts_per_leaf"], "host_link": link, "fabric_link": link},
        "switch": {"buffer": p.get("buffer", "12MB"), "mtu": p.get("mtu", 1044), "queues": 2,
                   "aqm": [{"kind": "droptail"}, copy.deepcopy(aqm)], "pfc": {"priorities": [1], "xoff": xoff}},
        "host": {"transport": transport},
        "traffic": [{"kind": "poisson", "sizes": wl, "load": p["load"], "flows": p["flows"][wl] if isinstance(p["flows"], dict) else p["flows"],
                     "priority": 1}],
        "record": {"pauses": False},
    }


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(scenario(s, wl, p, 1 + k, x), {"workload": wl, "xoff": x, "seed": 1 + k, "scheme": s})
            for wl in p["workloads"] for x in p["xoffs"] for k in range(p["seeds"]) for s in p["schemes"]]


def binned(f: pd.DataFrame) -> dict:
    """Median and p99 slowdown per size bin, and unfinished flows."""
    row = {}
    for lo, hi, name in BINS:
        g = f[(f["size"] > lo) & (f["size"] <= hi)]
        d = g.loc[g["finished"], "slowdown"]
        row[f"{name} n"] = len(g)
        row[f"{name} p50"] = float(d.quantile(0.5)) if len(d) else float("nan")
        row[f"{name} p99"] = float(d.quantile(0.99)) if len(d) else float("nan")
    d = f.loc[f["finished"], "slowdown"]
    row["all p50"], row["all p99"] = float(d.quantile(0.5)), float(d.quantile(0.99))
    row["unfinished"] = int((~f["finished"]).sum())
    return row


def stats(job) -> dict:
    r = cached_result(job)
    cls = mark_classes(r.flows).value_counts()
    n = len(r.flows)
    return {"congested_frac": cls.get("congested", 0) / n, "undetermined_frac": cls.get("undetermined", 0) / n,
            "paused_ms": float(r.ports["paused_us"].sum()) / 1e3, "wall_s": r.meta.get("wall_s"), "cache": job[2]}


def pooled(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per workload × XOFF × scheme: the slowdown quantiles per bin over every seed's flows pooled."""
    from ...results import load as load_result

    rows = []
    for (wl, x, s), g in raw.groupby(["workload", "xoff", "scheme"], sort=False):
        f = pd.concat([load_result(c).flows for c in g["cache"]])
        rows.append({"workload": wl, "xoff": x, "scheme": s, "runs": len(g)} | binned(f) |
                    {"congested_frac": g["congested_frac"].mean(), "undetermined_frac": g["undetermined_frac"].mean(),
                     "paused_ms": g["paused_ms"].mean()})
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per workload × scheme pooled) for preset `p` (spines, leaves,
    hosts_per_leaf, link_rate, load, flows, workloads, xoffs, schemes, seeds, max_time; optional buffer,
    mtu, preset)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=stats)
    raw.drop(columns=["cache"]).to_csv(out / "realistic_runs.csv", index=False)
    pool = pooled(raw)
    pool.to_csv(out / "realistic_pooled.csv", index=False)
    return raw, pool


def realistic(scale: str = "small", out: str | Path = "results/tcd", runner: Runner | None = None, **overrides):
    return run(preset(PAPER, "realistic", scale, **overrides), out, runner)


def plot(pool: pd.DataFrame, out) -> list[Path]:
    pyplot = plt()
    keys = list(dict.fromkeys(zip(pool["workload"], pool["xoff"])))
    fig, axes = pyplot.subplots(len(keys), 2, figsize=(12, 3.2 * len(keys)), squeeze=False)
    names = [b[2] for b in BINS]
    for i, (wl, x) in enumerate(keys):
        g = pool[(pool["workload"] == wl) & (pool["xoff"] == x)]
        for j, q in enumerate(("p50", "p99")):
            ax = axes[i][j]
            w = 0.8 / max(len(g), 1)
            for k, (_, row) in enumerate(g.iterrows()):
                ax.bar(np.arange(len(names)) + k * w, [row[f"{n} {q}"] for n in names], w, label=row["scheme"])
            for (pwl, ps, pb, pq), val in PAPER_REALISTIC.items():
                if pwl == wl and pq == q and ps in list(g["scheme"]):
                    k = list(g["scheme"]).index(ps)
                    ax.plot(names.index(pb) + k * w, val, "k*", ms=9)
            ax.set_xticks(np.arange(len(names)) + 0.4 - w / 2, names)
            ax.set_title(f"{wl}, XOFF {x}: {q} FCT slowdown (black stars: paper)", fontsize=9)
            ax.grid(alpha=0.3, axis="y")
    axes[0][0].legend(fontsize=7)
    return [savefig(fig, out, "realistic")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, pool = run(p, out, runner)
    hosts = p["leaves"] * p["hosts_per_leaf"]
    return [f"<h2>Realistic workloads (Fig. 19 and the DCQCN case)</h2><p>{hosts} hosts ({p['leaves']} leaves × "
            f"{p['hosts_per_leaf']}, {p['spines']} spines, {p['link_rate']}), load {p['load']}, PFC with XOFF "
            f"{' and '.join(p['xoffs'])} (dynamic: 1/8 of the free shared buffer; with 12 MB it rarely pauses). "
            "FCT slowdown quantiles per size bin, seeds pooled. Paper (Hadoop, TIMELY → TIMELY+TCD): p99 slowdown of "
            "flows &lt; 50 KB 50.3 → 36.6.</p>", table(pool)] + imgs(plot(pool, out))
