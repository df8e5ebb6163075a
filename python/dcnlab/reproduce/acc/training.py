"""§5.3.2, Fig. 10(a): training speed of data-parallel training with a parameter server and 7 workers
(`experiments/acc/training.toml`, `workloads.md` §9.5), AlexNet and ResNet-50 at batch 64, ACC against the
static settings SECN1 and SECN2 (`spec/acc.md` §7). Per run: the mean iteration time of the iterations
after the first `skip` (ACC's agents adapt during the first) and the training speed, 7 × 64 images / that
time; the ideal iteration (compute + 2 × 7 gradients through the PS's link at line rate) beside it."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import pandas as pd

from ... import _core
from ...jobs import iteration_time, training_speed
from ...scenario import ScenarioError
from ...scenario import load as load_scenario
from ...scenario import override
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, SECN1, acc_changes, decisions, secn2

SCHEMES = ("SECN1", "SECN2", "ACC")
WORKERS, BATCH = 7, 64
# workloads.md §9.5 [DEFAULT]: compute per iteration (s) and gradient bytes.
MODELS = {"alexnet": (0.060, 61_000_000 * 4), "resnet50": (0.150, 25_600_000 * 4)}
# §5.3.2: ACC's training-speed gain in % ("up to", ResNet-50); the paper gives no AlexNet figure.
PAPER_GAIN = {("resnet50", "SECN1"): 7.0, ("resnet50", "SECN2"): 12.0}


def where(p: dict, key: str) -> str:
    return f"experiments/acc/scales.toml [{p.get('scale', '…')}.training] {key}"


def training_scenario(scheme: str, model: str, seed: int, p: dict) -> dict:
    """experiments/acc/training.toml for one scheme, model and seed at preset `p`."""
    if model not in MODELS:
        raise ScenarioError(where(p, "models"), f"unknown model `{model}`; give one of {', '.join(MODELS)}")
    base = load_scenario(EXP / "training.toml")
    ch = {"seed": seed, "traffic.0.model": model, "traffic.0.iterations": p["iterations"],
          "record.controller_steps": bool(p.get("controller_steps", False))}
    rate = base["topology"]["link"]["rate"]
    if scheme == "SECN1":
        ch["switch.aqm"] = [{"kind": "droptail"}, copy.deepcopy(SECN1)]
    elif scheme == "SECN2":
        ch["switch.aqm"] = [{"kind": "droptail"}, secn2(rate)]
    elif scheme == "ACC":
        ch |= acc_changes(p | {"experiment": "training"}, SECN1, "acc training")
    else:
        raise ScenarioError(where(p, "schemes"), f"unknown scheme `{scheme}`; the training experiment has: {', '.join(SCHEMES)}")
    return override(base, ch)


def ideal_iteration_s(model: str) -> float:
    """Compute + the push and pull phases at line rate: 2 × 7 gradients through the PS's 25 Gb/s link, with
    RoCEv2's 44 B of headers per 1000 B of payload (training.toml)."""
    compute, grad = MODELS[model]
    return compute + 2 * WORKERS * grad * 1044 / 1000 * 8 / _core.parse_rate_bps("25Gbps")


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(training_scenario(s, m, 1 + k, p), {"model": m, "seed": 1 + k, "scheme": s})
            for m in p["models"] for k in range(p["seeds"]) for s in p["schemes"]]


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    it = iteration_time(r.jobs, skip=p["skip"])
    return ({"iterations": int(r.jobs["finished"].sum()), "iteration_ms": it / 1e3,
             "images_per_s": training_speed(r.jobs, WORKERS, BATCH, skip=p["skip"]),
             "paused_ms": float(r.ports["paused_us"].sum()) / 1e3, "cpu_s": r.meta.get("cpu_s")}
            | decisions(r.controller_steps) | {"cache": job[2]})


def changes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model: each scheme's speed, the ideal, and ACC's gain against SECN1 and SECN2 in %."""
    by = summary.set_index(["model", "scheme"])
    rows = []
    for m in dict.fromkeys(summary["model"]):
        row = {"model": m, "ideal images/s": WORKERS * BATCH / ideal_iteration_s(m)}
        for s in SCHEMES:
            row[f"{s} images/s"] = by.loc[(m, s), "images_per_s"] if (m, s) in by.index else float("nan")
        for ref in ("SECN1", "SECN2"):
            row[f"ACC vs {ref} %"] = 100 * (row["ACC images/s"] / row[f"{ref} images/s"] - 1)
            row[f"paper vs {ref} %"] = PAPER_GAIN.get((m, ref), float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, the mean per model × scheme, the speeds and ACC's gains)."""
    if p["iterations"] <= p["skip"]:
        raise ScenarioError(where(p, "skip"), f"leaves no iteration of the {p['iterations']} to measure; make it smaller than `iterations`")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.to_csv(out / "training_runs.csv", index=False)
    cols = [c for c in raw.columns if c not in ("model", "seed", "scheme") and raw[c].dtype.kind in "fiub"]
    summary = raw.groupby(["model", "scheme"], sort=False)[cols].mean().reset_index()
    summary.to_csv(out / "training_summary.csv", index=False)
    ch = changes(summary)
    ch.to_csv(out / "training_change.csv", index=False)
    return raw, summary, ch


def training(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "training", scale, **overrides), out, runner)


def plot(summary: pd.DataFrame, out) -> Path:
    pyplot = plt()
    models = list(dict.fromkeys(summary["model"]))
    fig, axes = pyplot.subplots(1, len(models), figsize=(4 * len(models), 3.2), squeeze=False)
    for ax, m in zip(axes[0], models):
        d = summary[summary["model"] == m]
        ax.bar(d["scheme"], d["images_per_s"], color=["#888", "#bbb", "#c33"][: len(d)])
        ax.axhline(WORKERS * BATCH / ideal_iteration_s(m), color="k", ls="--", lw=1, label="line rate")
        ax.set_title(m, fontsize=9)
        ax.set_ylabel("images/s")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return savefig(fig, out, "training")


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, summary, ch = run(p, out, runner)
    cols = ["model", "scheme", "iterations", "iteration_ms", "images_per_s", "paused_ms", "acc_kmin_kb", "acc_kmax_kb", "acc_pmax"]
    return [f"<h2>Distributed training (§5.3.2, Fig. 10a)</h2><p>A parameter server and 7 workers, batch 64, "
            f"{p['iterations']} iterations (the first {p['skip']} left out); training speed per scheme, the line-rate "
            "ideal and ACC's gains beside the paper's:</p>", table(ch),
            table(summary[[c for c in cols if c in summary]])] + imgs([plot(summary, out)])
