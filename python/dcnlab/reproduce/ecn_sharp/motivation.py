"""§2.3 motivation (Figs. 2–3): the testbed at 50 % web-search load with instantaneous DCTCP-RED marking.
Fig. 2: thresholds 50–250 KB at 3× variation, normalised to 50 KB. Fig. 3: per variation, Tail and AVG
thresholds derived (K = C·RTT) from the 90th-percentile and mean base RTT of the run's own flows — as an
operator does from measured RTTs — normalised to AVG."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...scenario import load as load_scenario, override
from ...sweep import Runner
from .. import preset
from ..common import grid, imgs, plt, run_jobs, savefig, table
from .common import EXP, METRICS, PAPER, delay_file, normalise, rtt_params

PAPER_MOTIVATION = {
    # Fig. 2 (3×, normalised to 50 KB): short-flow p99 at 250 KB, overall avg at 100 KB vs 250 KB.
    "fig2 short p99 250KB/50KB": 581 / 265,
    "fig2 overall avg 100KB/250KB": 3701 / 3426,
    # Fig. 3 (normalised to AVG): overall avg AVG/Tail and short p99 Tail/AVG at 2× and 5×.
    "fig3 overall avg AVG/Tail 2x": 3375 / 3163,
    "fig3 overall avg AVG/Tail 5x": 4464 / 3439,
    "fig3 short p99 Tail/AVG 2x": 404 / 287,
    "fig3 short p99 Tail/AVG 5x": 995 / 334,
}


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Fig. 2 table, Fig. 3 table) for preset `p` (flows, seeds, thresholds, variations)."""
    out = Path(out)
    # `max_time` (optional): the testbed's 30 s cap holds ~11700 flows at 50 % web-search load.
    base = override(load_scenario(EXP / "testbed.toml"), {"traffic.0.load": 0.5} | ({"stop.max_time": p["max_time"]} if "max_time" in p else {}))
    n, k = p["flows"], p["seeds"]
    thr = {t: {"kind": "dctcp_red", "threshold": t} for t in p["thresholds"]}
    raw2 = run_jobs(grid(base, thr, ("web_search",), (0.5,), n, k, delay_file("3x"), {"variation": "3x"}), out, EXP, runner)
    fig2 = normalise(raw2, ref=p["thresholds"][0])
    # Fig. 3: the RTT distribution a variation produces is the same whatever the AQM; take it from a run.
    jobs = []
    for v in p["variations"]:
        r = rtt_params(v, out)
        schemes = {"AVG": {"kind": "dctcp_red", "threshold": f"{r['avg_kb']}KB"},
                   "Tail": {"kind": "dctcp_red", "threshold": f"{r['tail_kb']}KB"}}
        jobs += grid(base, schemes, ("web_search",), (0.5,), n, k, delay_file(v),
                     {"variation": v, "avg_kb": r["avg_kb"], "tail_kb": r["tail_kb"]})
    raw3 = run_jobs(jobs, out, EXP, runner)
    fig3 = normalise(raw3, ref="AVG")
    kb = raw3.groupby("variation", sort=False)[["avg_kb", "tail_kb"]].first().reset_index()
    fig3 = fig3.merge(kb, on="variation")
    out.mkdir(parents=True, exist_ok=True)
    pd.concat([raw2, raw3]).to_csv(out / "motivation_runs.csv", index=False)
    fig2.to_csv(out / "motivation_fig2.csv", index=False)
    fig3.to_csv(out / "motivation_fig3.csv", index=False)
    return fig2, fig3


def motivation(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
               **overrides) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "motivation", scale, **overrides), out, runner)


def plot(fig2: pd.DataFrame, fig3: pd.DataFrame, out: str | Path) -> list[Path]:
    pyplot = plt()
    paths = []
    fig, axes = pyplot.subplots(1, 4, figsize=(15, 3.2))
    x = [int(t[:-2]) for t in fig2["scheme"]]
    for ax, m in zip(axes, METRICS):
        ax.plot(x, fig2[m], marker="o")
        ax.set_title(m)
        ax.set_xlabel("marking threshold (KB)")
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.grid(alpha=0.3)
    axes[2].plot([250], [PAPER_MOTIVATION["fig2 short p99 250KB/50KB"]], "k*", ms=12, label="paper")
    axes[2].legend(fontsize=7)
    axes[0].set_ylabel("FCT / threshold 50 KB")
    fig.suptitle("motivation (Fig. 2): one instantaneous threshold, 3× RTT variation, web search 50 %")
    paths.append(savefig(fig, out, "motivation_fig2"))
    fig, axes = pyplot.subplots(1, 2, figsize=(9, 3.2))
    t = fig3[fig3["scheme"] == "Tail"]
    v = [int(s[:-1]) for s in t["variation"]]
    axes[0].plot(v, 1 / t["overall avg"], marker="o", label="measured")
    axes[0].plot([2, 5], [PAPER_MOTIVATION["fig3 overall avg AVG/Tail 2x"], PAPER_MOTIVATION["fig3 overall avg AVG/Tail 5x"]], "k*", ms=12, label="paper")
    axes[0].set_title("overall avg FCT, AVG / Tail (throughput loss of AVG)")
    axes[1].plot(v, t["short p99"], marker="o", label="measured")
    axes[1].plot([2, 5], [PAPER_MOTIVATION["fig3 short p99 Tail/AVG 2x"], PAPER_MOTIVATION["fig3 short p99 Tail/AVG 5x"]], "k*", ms=12, label="paper")
    axes[1].set_title("short-flow p99 FCT, Tail / AVG (latency cost of Tail)")
    for ax in axes:
        ax.set_xlabel("RTT variation (×)")
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("motivation (Fig. 3): larger RTT variation, larger loss either way")
    paths.append(savefig(fig, out, "motivation_fig3"))
    return paths


def runs(p: dict) -> int:
    """Runs of preset `p` through the runner (suite progress): Fig. 2's thresholds, Fig. 3's AVG and Tail
    per variation."""
    return (len(p["thresholds"]) + 2 * len(p["variations"])) * p["seeds"]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    f2, f3 = run(p, out, runner)
    paper = pd.DataFrame([{"paper figure": k, "ratio": v} for k, v in PAPER_MOTIVATION.items()])
    return ["<h2>Motivation (Figs. 2–3)</h2><p>Fig. 2 normalised to the 50 KB threshold; Fig. 3 to AVG.</p>",
            table(f2), table(f3), table(paper)] + imgs(plot(f2, f3, out))
