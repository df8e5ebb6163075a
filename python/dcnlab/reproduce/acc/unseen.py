"""§6 "Stability with unseen traffic patterns", Fig. 16: ACC from scratch (`training = "from_scratch"`, the
paper's "aggressive version without offline training") against SECN1 and SECN2 while the traffic changes
under it: web search (P1), data mining (P2) from 4.5 s, P1 again from 8.5 s, P2 from 9.5 s; statistics
every 500 ms. The run's end is not in the excerpt: 10.5 s [DEFAULT], one second of the last period. The
topology is the 96-host leaf-spine (spec/acc.md §8 [DEFAULT]).

Each period is its own Poisson entry active only inside it (`active = { start, stop }`, as heterogeneous.py),
the same flows for every scheme. A preset scales every time by `time_scale` (1.0 is the paper's; the
windows scale with it, and so should the agents' exploration and sharing periods in `acc`). Per window of
`window_ms × time_scale`: the average FCT of the flows that start in it (finished ones; the unfinished
counted). Times in the tables are the paper's (the window's start ÷ time_scale)."""

from __future__ import annotations

import copy
import math
from functools import partial
from pathlib import Path

import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, decisions, flow_count, hosts, sampled_reward, scenario, settings

SCHEMES = ("SECN1", "SECN2", "ACC")
# (workload, start s, stop s) at paper time.
PERIODS = (("web_search", 0.0, 4.5), ("data_mining", 4.5, 8.5), ("web_search", 8.5, 9.5), ("data_mining", 9.5, 10.5))
SWITCH_S = 4.5
PAPER_CHANGE = {"SECN1": -31.1, "SECN2": -56.2}  # ACC's average FCT against each static setting (%)


def periods(p: dict) -> list[tuple[str, float, float]]:
    """(workload, start ms, stop ms) of each period, scaled."""
    k = 1e3 * p["time_scale"]
    return [(wl, a * k, b * k) for wl, a, b in PERIODS]


def unseen_scenario(scheme: str, seed: int, p: dict) -> dict:
    """The large-scale scenario at preset `p` with one Poisson entry per period."""
    per = periods(p)
    end = per[-1][2]
    q = p | {"arrivals_ms": end, "warmup_ms": 0, "measure_ms": end, "max_time_ms": end + p["drain_ms"]}
    sc = scenario(scheme, per[0][0], p["load"], seed, q)
    first = sc["traffic"][0]
    entries = []
    for wl, a, b in per:
        e = copy.deepcopy(first)
        e |= {"sizes": wl, "flows": flow_count(q | {"arrivals_ms": b - a}, wl, p["load"]),
              "active": {"start": f"{a:g}ms", "stop": f"{b:g}ms"}}
        entries.append(e)
    sc["traffic"] = entries
    return sc


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(unseen_scenario(s, 1 + k, p), {"seed": 1 + k, "scheme": s}) for k in range(p["seeds"]) for s in p["schemes"]]


def workload_at(t_s: float) -> str:
    return next(wl for wl, a, b in PERIODS if a <= t_s < b)


def stats(job, p: dict) -> list[dict]:
    """One row per window: its paper-time start, workload, flows, unfinished and average FCT."""
    r = cached_result(job)
    f = r.flows
    w_us = p["window_ms"] * p["time_scale"] * 1e3
    end_us = periods(p)[-1][2] * 1e3
    rows = []
    for k in range(int(round(end_us / w_us))):
        g = f[(f["start_us"] >= k * w_us) & (f["start_us"] < (k + 1) * w_us)]
        done = g[g["finished"]]
        t = k * p["window_ms"] / 1e3
        rows.append({"t_s": t, "workload": workload_at(t), "flows": len(g), "unfinished": int((~g["finished"]).sum()),
                     "avg_fct_us": float(done["fct_us"].mean()) if len(done) else float("nan")})
    # The reward the run's switch ports earn by acc.md §4 (sampled, to the end of the arrivals): what the
    # agents are paid, for the static settings too.
    rw = sampled_reward(r.queues, r.links)
    rw = rw[rw["time_us"] < end_us]
    whole = {"t_s": float("nan"), "workload": "all", "flows": len(f), "unfinished": int((~f["finished"]).sum()),
             "avg_fct_us": float(f.loc[f["finished"], "fct_us"].mean()),
             "reward": float(rw["reward"].mean()), "T": float(rw["T"].mean()), "D": float(rw["D"].mean())}
    steps = r.controller_steps
    agent = steps[steps["epsilon"].notna()]  # the agents' decisions, not a schedule's
    if len(agent):
        whole |= decisions(agent) | {"acc_reward": float(agent["reward"].mean()),
                                     "acc_kmax_1mb_share": float((settings(agent)["kmax"] >= 1e6).mean())}
    return [row | {"cpu_s": r.meta.get("cpu_s")} for row in rows] + [whole]


def recovery(series: pd.DataFrame, after_s: float, until_s: float) -> float:
    """Seconds after `after_s` until ACC's window average falls below both static settings' and stays below
    until `until_s`; NaN if it never does."""
    s = series[(series.index >= after_s) & (series.index < until_s)]
    below = (s["ACC"] < s[["SECN1", "SECN2"]].min(axis=1)).to_numpy()
    for k in range(len(below)):
        if below[k:].all():
            return float(s.index[k] - after_s)
    return float("nan")


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run and window, the per-window mean over seeds by scheme, the summary)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(_rows, p=p))
    raw = raw.explode("rows", ignore_index=True)
    raw = pd.concat([raw.drop(columns="rows"), pd.DataFrame(list(raw["rows"]))], axis=1)
    raw.to_csv(out / "unseen_runs.csv", index=False)
    win = raw[raw["workload"] != "all"]
    series = win.groupby(["t_s", "scheme"])["avg_fct_us"].mean().unstack("scheme")
    series.to_csv(out / "unseen_windows.csv")
    whole = raw[raw["workload"] == "all"].groupby("scheme")["avg_fct_us"].mean()
    per_window = series.mean()
    rows = []
    for ref in ("SECN1", "SECN2"):
        ok = "ACC" in series and ref in series
        rows.append({"against": ref,
                     "ACC avg FCT change % (all flows)": 100 * (whole["ACC"] / whole[ref] - 1) if ok else math.nan,
                     "ACC change % (mean of window averages)": 100 * (per_window["ACC"] / per_window[ref] - 1) if ok else math.nan,
                     "paper %": PAPER_CHANGE[ref]})
    summary = pd.DataFrame(rows)
    if {"ACC", "SECN1", "SECN2"} <= set(series.columns):
        summary["recovery after 4.5 s (s)"] = recovery(series, SWITCH_S, 8.5)
    summary.to_csv(out / "unseen_summary.csv", index=False)
    by_scheme(raw).to_csv(out / "unseen_schemes.csv", index=False)
    return raw, series, summary


def by_scheme(raw: pd.DataFrame) -> pd.DataFrame:
    """Per scheme over all flows (mean over seeds): the average FCT, its change against SECN1 and SECN2,
    and the reward its switch ports earned — a fixed setting the reward prefers scores what an agent that
    had learnt it would."""
    cols = [c for c in ("avg_fct_us", "reward", "T", "D", "acc_reward", "acc_kmin_kb", "acc_kmax_kb", "acc_pmax",
                        "acc_kmax_1mb_share") if c in raw]
    w = raw[raw["workload"] == "all"].groupby("scheme", sort=False)[cols].mean()
    for ref in ("SECN1", "SECN2"):
        if ref in w.index:
            w[f"FCT vs {ref} %"] = 100 * (w["avg_fct_us"] / w.loc[ref, "avg_fct_us"] - 1)
    return w.reset_index()


def _rows(job, p: dict) -> dict:
    return {"rows": stats(job, p)}


def unseen(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "unseen", scale, **overrides), out, runner)


def plot(series: pd.DataFrame, out) -> Path:
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(9, 3.4))
    for scheme in series.columns:
        ax.plot(series.index, series[scheme] / 1e3, marker=".", drawstyle="steps-post", label=scheme)
    for _, a, _ in PERIODS[1:]:
        ax.axvline(a, color="#999", lw=0.8, ls="--")
    ax.set_xlabel("time (paper's s)")
    ax.set_ylabel("avg FCT per window (ms)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, out, "unseen")


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, series, summary = run(p, out, runner)
    text = (f"<h2>Unseen traffic (§6, Fig. 16)</h2><p>{hosts(p)} hosts, load {p['load']}; web search, data mining from "
            f"4.5 s, swapped at 8.5 and 9.5 s (times × {p['time_scale']}); average FCT per {p['window_ms']} ms window "
            f"(× {p['time_scale']}); ACC from scratch. Paper: ACC's average FCT −31.1 % / −56.2 % against SECN1 / SECN2, "
            "a ≈1 s spike after the first switch.</p>")
    return [text, table(summary), table(by_scheme(raw)), table(series.reset_index())] + imgs([plot(series, out)])

