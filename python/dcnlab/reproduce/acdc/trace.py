"""Fig. 23: trace-driven messages (`workloads.md` §9.4) on one switch of `hosts` (17) servers (`star.toml`
resized). Every host runs `threads` (5) application threads; each loops: draw a message size from the
workload (web search or data mining), pick another host at random, send the message over the thread's
persistent connection to that host, wait until it is delivered, repeat (the engine's `closed_loop` with
`persistent = true`). The paper's connections were open before it measured: the message that opens each
connection (it pays the handshake) is tagged "open" and left out, and so is every message started in the
first `warmup_s` or after `duration_s` − `tail_s` (a message's FCT must fit in the run).

Reported per workload and scheme: mice (messages < 10 KB, the paper's definition) median, 99th and 99.9th
percentile FCT with the cut against CUBIC; large messages (≥ 1 MB) mean FCT; messages finished per second
(the closed loop's throughput); drops and timeouts."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, run_jobs, table
from .common import EXP, PAPER, add_cuts, drop_rate_flows, fct_stats, out_path, result, scheme_scenario

# Against CUBIC (§5.2, Fig. 23): median and 99.9th percentile FCT of the mice.
PAPER_TRACE = {
    "web_search": {"mice_p50_us_cut": {"DCTCP": 0.77, "AC/DC": 0.76}, "mice_p999_us_cut": {"DCTCP": 0.50, "AC/DC": 0.55}},
    "data_mining": {"mice_p50_us_cut": {"DCTCP": 0.72, "AC/DC": 0.73}, "mice_p999_us_cut": {"DCTCP": 0.36, "AC/DC": 0.53}},
}
MICE = 10_000  # bytes: "mice flows (smaller than 10KB)"
LARGE = 1_000_000


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for wl in p["workloads"]:
        for s in range(p["seeds"]):
            for name in p["schemes"]:
                traffic = [{"kind": "closed_loop", "sizes": wl, "messages": p["messages"], "threads": p.get("threads", 5),
                            "persistent": True, "tag": "msg", "opening_tag": "open"}]
                sc = scheme_scenario("star", name, traffic, {"time": f"{p['duration_s']}s"}, p, hosts=p["hosts"])
                if "vswitch" in sc["host"]:
                    # The paper's connections live for the whole run; OVS keeps their state while they do.
                    sc["host"]["vswitch"]["idle_timeout"] = p.get("acdc_idle_timeout", "1000s")
                sc["seed"] = 1 + s
                out.append((sc, {"workload": wl, "seed": 1 + s, "scheme": name}))
    return out


def measured(f: pd.DataFrame, p: dict) -> pd.DataFrame:
    """The messages that count: not the one opening its connection, started inside the window. (Rows of
    messages never sent carry the last start time of the run, after the window while the loop is busy;
    `exhausted` says when it was not.)"""
    a, b = p["warmup_s"] * 1e6, (p["duration_s"] - p["tail_s"]) * 1e6
    return f[(f["tag"] == "msg") & (f["start_us"] >= a) & (f["start_us"] < b)]


def stats(job, p: dict) -> dict:
    sc, r = job[0], result(job)
    f = r.flows
    m = measured(f, p)
    mice, large = m[m["size"] < MICE], m[m["size"] >= LARGE]
    span = p["duration_s"] - p["tail_s"] - p["warmup_s"]
    return (fct_stats(mice, "mice") | fct_stats(large, "large") |
            {"msgs_per_s": float(m["finished"].sum()) / span, "opened": int((f["tag"] == "open").sum()),
             # The entry ran out of messages before the end (every thread idle): raise `messages`.
             "exhausted": bool(f["finished"].sum() > p["messages"] - p["hosts"] * p.get("threads", 5)),
             "drops_run": int(sum(r.meta["drops"].values())), "drop_rate_pct": drop_rate_flows(r, sc["switch"]["mtu"]),
             "timeouts": int(f["timeouts"].sum()), "mice_timeouts": int(mice["timeouts"].sum()), "cache": job[2]})


def pooled(raw: pd.DataFrame, p: dict) -> pd.DataFrame:
    """One row per workload × scheme: the measured messages of every seed pooled, cuts against CUBIC."""
    from ...results import load as load_result

    rows = []
    for (wl, scheme), g in raw.groupby(["workload", "scheme"], sort=False):
        m = pd.concat([measured(load_result(c).flows, p) for c in g["cache"]])
        rows.append({"workload": wl, "scheme": scheme, "runs": len(g)} | fct_stats(m[m["size"] < MICE], "mice") |
                    fct_stats(m[m["size"] >= LARGE], "large") |
                    {"msgs_per_s": g["msgs_per_s"].mean(), "drops_run": int(g["drops_run"].sum()),
                     "drop_rate_pct": g["drop_rate_pct"].mean(), "timeouts": int(g["timeouts"].sum()),
                     "mice_timeouts": int(g["mice_timeouts"].sum()), "exhausted": bool(g["exhausted"].any())})
    return add_cuts(pd.DataFrame(rows), ["mice_p50_us", "mice_p99_us", "mice_p999_us", "large_mean_us"], ["workload"])


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per workload × scheme pooled over seeds) for preset `p` (hosts, threads,
    workloads, schemes, seeds, messages, duration_s, warmup_s, tail_s, non_ect)."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.drop(columns=["cache"]).to_csv(out / "trace_runs.csv", index=False)
    pool = pooled(raw, p)
    pool.to_csv(out / "trace_pooled.csv", index=False)
    return raw, pool


def trace(scale: str = "small", out: str | Path = "results/acdc", runner: Runner | None = None, **overrides) -> pd.DataFrame:
    """`run` at a scale's preset, with keyword overrides of its keys; the pooled table (runs: `trace_runs.csv`)."""
    return run(preset(PAPER, "trace", scale, **overrides), out, runner)[1]


def cdf_plot(raw: pd.DataFrame, p: dict, out, title: str) -> list[Path]:
    """The paper's Fig. 23: one panel per workload, the CDF of mice FCT (ms) per scheme, seeds pooled."""
    from ...results import load as load_result
    from ..common import plt, savefig

    pyplot = plt()
    wls = list(dict.fromkeys(raw["workload"]))
    fig, axes = pyplot.subplots(1, len(wls), figsize=(5 * len(wls), 3.2), squeeze=False)
    for ax, wl in zip(axes[0], wls):
        for scheme, g in raw[raw["workload"] == wl].groupby("scheme", sort=False):
            m = pd.concat([measured(load_result(c).flows, p) for c in g["cache"]])
            x = np.sort(m.loc[(m["size"] < MICE) & m["finished"], "fct_us"].to_numpy() / 1e3)
            ax.plot(x, np.arange(1, len(x) + 1) / max(len(x), 1), label=scheme)
        ax.set_xscale("log")
        ax.set_xlabel("mice FCT (ms)")
        ax.set_ylabel("CDF")
        ax.set_title(wl.replace("_", " "), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return [savefig(fig, out, "trace")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, pool = run(p, out, runner)
    cols = ["workload", "scheme", "runs", "mice_n", "mice_p50_us", "mice_p99_us", "mice_p999_us", "large_n", "large_mean_us",
            "msgs_per_s", "drops_run", "drop_rate_pct", "timeouts", "mice_timeouts"] + [c for c in pool.columns if c.endswith("_cut")]
    title = (f"trace-driven (Fig. 23), {p['hosts']} hosts × {p.get('threads', 5)} threads, persistent connections, "
             f"{p['duration_s']} s;\npaper: mice p50 −77 % / −76 % (web search), −72 % / −73 % (data mining), "
             "p99.9 −50 % / −55 %, −36 % / −53 % (DCTCP / AC/DC vs CUBIC)")
    return [f"<h2>Trace-driven (Fig. 23)</h2><p>{title.replace(chr(10), ' ')}. Mice: messages &lt; 10 KB, started in "
            f"[{p['warmup_s']}, {p['duration_s'] - p['tail_s']}) s, not the one opening its connection.</p>",
            table(pool[cols])] + imgs(cdf_plot(raw, p, out, title))
