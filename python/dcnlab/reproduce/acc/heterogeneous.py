"""§5.4, Fig. 13: temporally and spatially heterogeneous traffic (`spec/workloads.md` §9.6). Web search and
data mining mixed, the load of each period drawn from {60, 70, 80, 90} % and its workload from the two,
sources and destinations uniform over all hosts; SECN1, SECN2 and ACC on the large-scale leaf-spine (the
preset's size), every scheme on the same periods and flows; the paper averages ten runs. The period's
length is not in the paper: 50 ms [DEFAULT, workloads.md §9.6].

Each period is its own Poisson traffic entry, active only inside the period (its arrivals begin at the
period's start); the periods of a run come from its seed. The four metrics over the flows that start after
the warm-up, ACC's change against each static setting beside the paper's."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, METRICS, PAPER, fct_metrics, flow_count, scenario
from .large_scale import acc_stats, queue_stats

# Fig. 13(a): ACC's change in % (negative: ACC lower). The paper quotes these six only.
PAPER_CHANGE = {
    ("mice_avg_us", "SECN1"): -8.7, ("mice_p99_us", "SECN1"): -24.3, ("elephant_avg_us", "SECN1"): -8.6,
    ("mice_avg_us", "SECN2"): -28.6, ("mice_p99_us", "SECN2"): -58.3, ("overall_avg_us", "SECN2"): -21.1,
}
LOADS = (0.6, 0.7, 0.8, 0.9)


def periods(p: dict, seed: int) -> list[tuple[str, float]]:
    """(workload, load) of each period of run `seed`: drawn uniformly, from a stream of its own (so the
    periods do not depend on anything else the seed draws)."""
    rng = np.random.default_rng([seed, 913])
    return [(str(rng.choice(p["workloads"])), float(rng.choice(LOADS))) for _ in range(p["periods"])]


def het_scenario(scheme: str, seed: int, p: dict) -> dict:
    """The large-scale scenario of one scheme with one Poisson entry per period."""
    period_ms, n = p["period_ms"], p["periods"]
    q = p | {"arrivals_ms": period_ms, "measure_ms": period_ms * n - p["warmup_ms"]}
    sc = scenario(scheme, p["workloads"][0], LOADS[0], seed, q)
    first = sc["traffic"][0]
    entries = []
    for k, (wl, ld) in enumerate(periods(p, seed)):
        e = copy.deepcopy(first)
        e |= {"sizes": wl, "load": ld, "flows": flow_count(q, wl, ld),
              "active": {"start": f"{k * period_ms}ms", "stop": f"{(k + 1) * period_ms}ms"}}
        entries.append(e)
    sc["traffic"] = entries
    return sc


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(het_scenario(s, 1 + k, p), {"seed": 1 + k, "scheme": s}) for k in range(p["seeds"]) for s in p["schemes"]]


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    f = r.flows[r.flows["start_us"] >= p["warmup_ms"] * 1e3]
    row = fct_metrics(f) | queue_stats(r.queues) | {"paused_ms": float(r.ports["paused_us"].sum()) / 1e3,
                                                     "cpu_s": r.meta.get("cpu_s")}
    if job[0].get("switch", {}).get("controller", {}).get("kind") == "acc":
        row |= acc_stats(r, p)
    return row


def changes(summary: pd.DataFrame) -> pd.DataFrame:
    """ACC's change against SECN1 and SECN2 in % per metric (mean over runs first), beside the paper's."""
    by = summary.set_index("scheme")
    rows = []
    for m, label in METRICS.items():
        row = {"metric": label}
        for ref in ("SECN1", "SECN2"):
            ok = "ACC" in by.index and ref in by.index
            row |= {f"ACC vs {ref} %": 100 * (by.loc["ACC", m] / by.loc[ref, m] - 1) if ok else float("nan"),
                    f"paper vs {ref} %": PAPER_CHANGE.get((m, ref), float("nan"))}
        rows.append(row)
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, the mean per scheme, ACC's changes in %)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.to_csv(out / "heterogeneous_runs.csv", index=False)
    cols = [c for c in raw.columns if c not in ("seed", "scheme") and raw[c].dtype.kind in "fiub"]
    summary = raw.groupby("scheme", sort=False)[cols].mean().reset_index()
    summary.to_csv(out / "heterogeneous_summary.csv", index=False)
    ch = changes(summary)
    ch.to_csv(out / "heterogeneous_change.csv", index=False)
    return raw, summary, ch


def heterogeneous(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "heterogeneous", scale, **overrides), out, runner)


def plot(summary: pd.DataFrame, out) -> Path:
    pyplot = plt()
    fig, axes = pyplot.subplots(1, 4, figsize=(14, 3.2))
    for ax, (m, label) in zip(axes, METRICS.items()):
        scale, unit = (1.0, "µs") if m.startswith("mice") else (1e3, "ms")
        ax.bar(summary["scheme"], summary[m] / scale, color=["#888", "#bbb", "#c33"][: len(summary)])
        ax.set_title(label, fontsize=9)
        ax.set_ylabel(unit)
    fig.tight_layout()
    return savefig(fig, out, "heterogeneous")


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, summary, ch = run(p, out, runner)
    cols = ["scheme", "flows", "unfinished", *METRICS, "mice_n", "elephant_n", "paused_ms", "queue_mean_kb", "queue_p99_kb"]
    return [f"<h2>Heterogeneous traffic (§5.4, Fig. 13)</h2><p>{p['periods']} periods of {p['period_ms']} ms, each "
            f"web search or data mining at 60–90 % load; mean over {p['seeds']} runs. ACC's change against the "
            "static settings, beside the paper's:</p>", table(ch), table(summary[[c for c in cols if c in summary]])] + imgs([plot(summary, out)])
