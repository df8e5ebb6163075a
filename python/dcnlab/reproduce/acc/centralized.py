"""§5.4, Fig. 14: the centralized design (C-ACC) against the distributed one (D-ACC) and the static
settings SECN1 and SECN2, on the 96-host leaf-spine of the paper (4 leaves × 24 hosts, 2 spines) with
web-search Poisson traffic. C-ACC is `mode = "centralized"` of the core (`control/acc/central.rs`,
spec/acc.md §8): one agent over the port groups leaf-down, leaf-up and spine-down, each group choosing one
of 8 grid settings sampled from the seed (512 joint actions), every port of a group set alike.

Both agents learn during the run. C-ACC cannot start from a model file (there is no pre-trained C-ACC), so
it always runs `training = "from_scratch"`; D-ACC runs the preset's `training` (from scratch as well by
default, so the two designs start equal). Keys in the preset's `acc` go to both, `dacc` to D-ACC only,
`cacc` to C-ACC only."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import pandas as pd

from ...scenario import ScenarioError, override
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, METRICS, PAPER, SECN1, acc_changes, fct_metrics, hosts, scenario, window, where
from .large_scale import queue_stats

SCHEMES = ("SECN1", "SECN2", "D-ACC", "C-ACC")
# §5.4 (Fig. 14): C-ACC's change in % against each static setting. D-ACC: "C-ACC has higher FCT compared
# to D-ACC" (no number).
PAPER_CHANGE = {("overall_avg_us", "SECN1"): -16.0, ("overall_p99_us", "SECN1"): -25.0,
                ("overall_avg_us", "SECN2"): -52.0, ("overall_p99_us", "SECN2"): -70.0}
COLS = {"overall_avg_us": "overall avg FCT", "overall_p99_us": "overall p99 FCT"} | METRICS


def scheme_changes(scheme: str, p: dict) -> dict:
    """The overrides of one scheme on top of the large-scale scenario's SECN1 (the static settings come
    from `scenario`)."""
    both = dict(p.get("acc", {}))
    if scheme == "D-ACC":
        ch = acc_changes(p, SECN1, "acc centralized")
        ch["switch.controller"] |= both | dict(p.get("dacc", {}))
        return ch
    if scheme == "C-ACC":
        ctl = {"kind": "acc", "mode": "centralized", "training": "from_scratch"} | both | dict(p.get("cacc", {}))
        return {"switch.aqm": [{"kind": "droptail"}, copy.deepcopy(SECN1)], "switch.controller": ctl}
    raise ScenarioError(where(p, "schemes"), f"unknown scheme `{scheme}`; this experiment has: {', '.join(SCHEMES)}")


def cent_scenario(scheme: str, load: float, seed: int, p: dict) -> dict:
    """The large-scale scenario at preset `p` (web search at `load`) for one scheme."""
    if scheme in ("SECN1", "SECN2"):
        return scenario(scheme, "web_search", load, seed, p)
    return override(scenario("SECN1", "web_search", load, seed, p), scheme_changes(scheme, p))


def jobs(p: dict) -> list[tuple[dict, dict]]:
    for s in p["schemes"]:
        if s not in SCHEMES:
            raise ScenarioError(where(p, "schemes"), f"unknown scheme `{s}`; this experiment has: {', '.join(SCHEMES)}")
    return [(cent_scenario(s, ld, 1 + k, p), {"load": ld, "seed": 1 + k, "scheme": s})
            for ld in p["loads"] for k in range(p["seeds"]) for s in p["schemes"]]


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    f = window(r.flows, p)
    row = fct_metrics(f)
    done = f[f["finished"]]
    row["overall_p99_us"] = float(done["fct_us"].quantile(0.99)) if len(done) else float("nan")
    row |= queue_stats(r.queues) | {"paused_ms": float(r.ports["paused_us"].sum()) / 1e3, "cpu_s": r.meta.get("cpu_s")}
    c = r.meta.get("controller") or {}
    row |= {k: c[k] for k in ("acc_agents", "acc_groups", "acc_joint_actions", "acc_params", "acc_flops_per_decision",
                              "acc_transitions_stored") if k in c}
    return row


def changes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per load and metric: C-ACC's and D-ACC's change against each static setting and C-ACC's against
    D-ACC (%), beside the paper's."""
    by = summary.set_index(["load", "scheme"])
    rows = []
    for ld in dict.fromkeys(summary["load"]):
        for m, label in COLS.items():
            row = {"load": ld, "metric": label}
            for a, ref in (("C-ACC", "SECN1"), ("C-ACC", "SECN2"), ("D-ACC", "SECN1"), ("D-ACC", "SECN2"), ("C-ACC", "D-ACC")):
                ok = (ld, a) in by.index and (ld, ref) in by.index
                row[f"{a} vs {ref} %"] = 100 * (by.loc[(ld, a), m] / by.loc[(ld, ref), m] - 1) if ok else float("nan")
            row |= {f"paper C-ACC vs {ref} %": PAPER_CHANGE.get((m, ref), float("nan")) for ref in ("SECN1", "SECN2")}
            rows.append(row)
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, the mean per load × scheme, the changes in %)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.to_csv(out / "centralized_runs.csv", index=False)
    cols = [c for c in raw.columns if c not in ("load", "seed", "scheme") and raw[c].dtype.kind in "fiub"]
    summary = raw.groupby(["load", "scheme"], sort=False)[cols].mean().reset_index()
    summary.to_csv(out / "centralized_summary.csv", index=False)
    ch = changes(summary)
    ch.to_csv(out / "centralized_change.csv", index=False)
    return raw, summary, ch


def centralized(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "centralized", scale, **overrides), out, runner)


def plot(summary: pd.DataFrame, out) -> Path:
    pyplot = plt()
    fig, axes = pyplot.subplots(1, 2, figsize=(9, 3.2))
    for ax, m in zip(axes, ("overall_avg_us", "overall_p99_us")):
        for scheme, g in summary.groupby("scheme", sort=False):
            ax.plot(g["load"], g[m] / 1e3, marker="o", label=scheme)
        ax.set_title(COLS[m], fontsize=9)
        ax.set_xlabel("load")
        ax.set_ylabel("ms")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return savefig(fig, out, "centralized")


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, summary, ch = run(p, out, runner)
    cols = ["load", "scheme", "flows", "unfinished", *COLS, "paused_ms", "queue_mean_kb", "queue_p99_kb"]
    text = (f"<h2>Centralized vs distributed (§5.4, Fig. 14)</h2><p>{hosts(p)} hosts ({p['leaves']} leaves × "
            f"{p['hosts_per_leaf']} at {p['host_rate']}, {p['spines']} spines at {p['fabric_rate']}), web search; FCTs of "
            f"the flows started in [{p['warmup_ms']}, {p['warmup_ms'] + p['measure_ms']}) ms. C-ACC: one agent, port "
            "groups leaf-down / leaf-up / spine-down, 8 sampled settings each (512 joint actions), from scratch; D-ACC: "
            f"training = {p['training']}. Paper: C-ACC −16 % / −25 % average / p99 FCT against SECN1, −52 % / −70 % "
            "against SECN2, and worse than D-ACC.</p>")
    return [text, table(ch), table(summary[[c for c in cols if c in summary]])] + imgs([plot(summary, out)])
