"""§5.4 / Fig. 12: SECN1, SECN2 and ACC on the 288-host leaf-spine (`spec/acc.md` §8) with web-search and
data-mining Poisson traffic at each load. Per run, over the flows that start in the measured window
[warmup, warmup + measure): overall average FCT, mice (0, 100 KB] average and p99, elephants [10 MB, ∞)
average, unfinished flows, PFC pause time, the data queue's samples on switch ports, and for ACC its agents
and the settings they chose. Per workload × load: the metrics per scheme (mean over seeds) and ACC's change
against SECN1 and SECN2 in %, beside the paper's (web search, 90 %)."""

from __future__ import annotations

import html
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import (DATA_QUEUE, EXP, METRICS, PAPER, PAPER_CHANGE, PAPER_POINT, fct_metrics, flow_count,
                     hosts, scenario, settings, window)


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(scenario(s, wl, ld, 1 + k, p), {"workload": wl, "load": ld, "seed": 1 + k, "scheme": s})
            for wl in p["workloads"] for ld in p["loads"] for k in range(p["seeds"]) for s in p["schemes"]]


def queue_stats(q: pd.DataFrame) -> dict:
    """The data queue on switch ports over the window's samples: mean and p99 (KB)."""
    b = q.loc[q["queue"] == DATA_QUEUE, "bytes"].to_numpy(dtype=float)
    if not len(b):
        return {"queue_mean_kb": float("nan"), "queue_p99_kb": float("nan")}
    return {"queue_mean_kb": b.mean() / 1e3, "queue_p99_kb": float(np.percentile(b, 99)) / 1e3}


def acc_stats(r, p: dict) -> dict:
    """ACC's figures from `meta.controller`, and, when the decisions were recorded, how many distinct RED
    settings they used and the mean Kmin/Kmax/Pmax on host-facing and fabric ports."""
    c = r.meta.get("controller") or {}
    row = {k: c[k] for k in ("acc_agents", "acc_transitions_stored", "acc_transitions_shared", "controller_tick_s")
           if k in c}
    st = r.controller_steps
    if len(st):
        s = settings(st)
        row["acc_decisions"] = len(st)
        row["acc_settings_used"] = int(s.drop_duplicates().shape[0])
        host = st["node"].str.startswith("leaf") & (st["port"] < p["hosts_per_leaf"])
        for name, m in (("host", host), ("fabric", ~host)):
            if m.any():
                row |= {f"acc_{name}_kmin_kb": s.loc[m, "kmin"].mean() / 1e3,
                        f"acc_{name}_kmax_kb": s.loc[m, "kmax"].mean() / 1e3, f"acc_{name}_pmax": s.loc[m, "pmax"].mean()}
    return row


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    row = fct_metrics(window(r.flows, p))
    row["paused_ms"] = float(r.ports["paused_us"].sum()) / 1e3
    row |= queue_stats(r.queues)
    row |= {"sim_ms": r.meta.get("sim_time_us", 0) / 1e3, "cpu_s": r.meta.get("cpu_s"), "wall_s": r.meta.get("wall_s"),
            "peak_rss_mb": r.meta.get("peak_rss_bytes", float("nan")) / 1e6}
    if job[0].get("switch", {}).get("controller", {}).get("kind") == "acc":
        row |= acc_stats(r, p)
    return row | {"cache": job[2]}


def summarise(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per workload × load × scheme."""
    cols = [c for c in raw.columns if c not in ("workload", "load", "seed", "scheme") and raw[c].dtype.kind in "fiub"]
    s = raw.groupby(["workload", "load", "scheme"], sort=False)[cols].mean().reset_index()
    return s.assign(runs=raw.groupby(["workload", "load", "scheme"], sort=False).size().to_numpy())


def changes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per workload × load × metric: ACC's change against SECN1 and SECN2 in % (negative: ACC lower), and
    the paper's where it reports one."""
    rows = []
    by = summary.set_index(["workload", "load", "scheme"])
    for wl, ld in dict.fromkeys(zip(summary["workload"], summary["load"])):
        if (wl, ld, "ACC") not in by.index:
            continue
        acc = by.loc[(wl, ld, "ACC")]
        for m, label in METRICS.items():
            row = {"workload": wl, "load": ld, "metric": label}
            for ref in ("SECN1", "SECN2"):
                val = 100 * (acc[m] / by.loc[(wl, ld, ref), m] - 1) if (wl, ld, ref) in by.index else float("nan")
                paper = PAPER_CHANGE.get((m, ref), float("nan")) if (wl, ld) == PAPER_POINT else float("nan")
                row |= {f"ACC vs {ref} %": val, f"paper vs {ref} %": paper}
            rows.append(row)
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, one per workload × load × scheme, ACC's changes in %) for preset `p` (the keys of
    experiments/acc/scales.toml)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.drop(columns=["cache"]).to_csv(out / "large_scale_runs.csv", index=False)
    summary = summarise(raw)
    summary.to_csv(out / "large_scale_summary.csv", index=False)
    ch = changes(summary)
    ch.to_csv(out / "large_scale_change.csv", index=False)
    return raw, summary, ch


def large_scale(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "large_scale", scale, **overrides), out, runner)


def plot(summary: pd.DataFrame, out) -> list[Path]:
    """Per workload: the four FCT metrics against load, one line per scheme."""
    pyplot = plt()
    paths = []
    for wl, g in summary.groupby("workload", sort=False):
        fig, axes = pyplot.subplots(1, 4, figsize=(15, 3.4))
        for ax, (m, label) in zip(axes, METRICS.items()):
            scale, unit = (1.0, "µs") if m.startswith("mice") else (1e3, "ms")
            for scheme, s in g.groupby("scheme", sort=False):
                ax.plot(s["load"], s[m] / scale, marker="o", label=scheme)
            ax.set_title(f"{wl.replace('_', ' ')}: {label}", fontsize=9)
            ax.set_xlabel("load")
            ax.set_ylabel(unit)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        paths.append(savefig(fig, out, f"large_scale_{wl}"))
    return paths


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, summary, ch = run(p, out, runner)
    cols = ["workload", "load", "scheme", "runs", "flows", "unfinished", *METRICS, "mice_n", "elephant_n", "paused_ms",
            "queue_mean_kb", "queue_p99_kb"]
    acc_cols = [c for c in summary.columns if c.startswith("acc_")]
    acc = summary.loc[summary["scheme"] == "ACC", ["workload", "load", *acc_cols]]
    ld = max(p["loads"])
    counts = ", ".join(f"{wl} {flow_count(p, wl, ld)}" for wl in p["workloads"])
    text = (f"<h2>Large scale (§5.4, Fig. 12)</h2><p>{hosts(p)} hosts ({p['leaves']} leaves × {p['hosts_per_leaf']} "
            f"at {p['host_rate']}, {p['spines']} spines at {p['fabric_rate']}), DCQCN over PFC; Poisson arrivals for "
            f"{p['arrivals_ms']} ms (flows at load {ld}: {counts}); FCTs of the flows started in "
            f"[{p['warmup_ms']}, {p['warmup_ms'] + p['measure_ms']}) ms, runs stopped when all flows finished or at "
            f"{p['max_time_ms']} ms. ACC: training = {html.escape(str(p['training']))}, model "
            f"{html.escape(str(p.get('model', '(none)')))}. Paper (web search, 90 % load), ACC against SECN1 / SECN2: "
            "overall avg FCT −5.8 % / −16.6 %, mice avg −5.7 % / −17.3 %, mice p99 −15.8 % / −47.5 %, elephants avg "
            "— / −4.4 %.</p>")
    return [text, "<h3>ACC against the static settings (%)</h3>", table(ch), "<h3>Per scheme</h3>", table(summary[cols]),
            "<h3>ACC's agents</h3>", table(acc)] + imgs(plot(summary, out))
