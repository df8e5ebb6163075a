"""The check with a throughput to lose (`experiments/acc/check_closed.toml`; experiments/acc/README.md, "The
check scenario, closed loop"): closed-loop 10 MB elephants and Poisson mice share one 25 Gb/s bottleneck,
so a setting that makes DCQCN back off leaves the link idle (T falls) and a lax one keeps a queue the
mice wait behind (D falls) — the issue's "one starves throughput, the other fills the queue" in the terms
the reward sees, which check.toml's open loop cannot show (there every setting carries the same bytes).

Agents are trained on this scenario's own training seeds (`dcnlab.train`, the offline column of acc.md §5:
`episodes` × `episode`, the training seed `seed`, `seed` + 1, …) once per discount γ of `gammas` and
training seed of `train_seeds`, then run frozen (`training = "none"`: the greedy policy alone) on the
held-out seeds beside SECN1, SECN2 and the preset's fixed grid settings. Per γ one model is **selected**
as a practitioner would, by its own objective on seeds that are neither training nor held-out seeds: the
highest mean reward (acc.md §4 at the bottleneck, from the records) on `validation_seeds`. A model file
is named by a hash of what made it, so a finished training is reused (training is bit-identical for its
inputs)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from ...scenario import FileScenario, ScenarioError, get
from ...sweep import ProcessRunner, Runner
from ...train import train
from .. import preset
from ..common import run_jobs, table
from .check import scenario, settings, stats
from .common import EXP, PAPER, where


def model_for(p: dict, gamma: float, seed: int, out: Path) -> Path:
    """Train (or reuse) the model of discount `gamma` and training seed `seed`; returns its file."""
    ctl = {"kind": "acc", "gamma": gamma} | dict(p.get("acc", {}))
    # `trainer`: 2 since the branching head's greedy is the best valid setting (models of the earlier
    # trainer are not reused).
    spec = {"scenario": p["scenario"], "ctl": ctl, "seed": seed, "episodes": p["episodes"], "episode": p["episode"],
            "trainer": 2}
    path = out / f"check_trained_{hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]}.bin"
    if not path.is_file():
        sc = FileScenario.open(EXP / p["scenario"]).with_overrides({"switch.controller": ctl, "seed": seed})
        load = float(get(sc.as_dict(), "traffic.0.load"))
        train(sc, path, p["episodes"], p["episode"], loads=[load], workloads=None)
    return path


def _train(job: tuple) -> str:
    """A runner's job: (preset, γ, training seed, out folder) → the model file, trained if not yet there."""
    p, gamma, seed, out = job
    return str(model_for(p, gamma, seed, Path(out)))


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, dict]:
    """(one row per setting × held-out seed, the verdicts) for preset `p` ([*.check_trained])."""
    p = {"experiment": "check_trained"} | p
    for key, eg in (("seeds", "[11, 12, 13]"), ("train_seeds", "[100, 200, 300]"), ("validation_seeds", "[21, 22]"),
                    ("gammas", "[0.9, 0.99]")):
        if not p.get(key):
            raise ScenarioError(where(p, key), f"give a non-empty list, e.g. {eg}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runner = runner or ProcessRunner()
    # The trainings first, side by side (each is one process's work; a finished one is reused).
    todo = [(g, ts) for g in p["gammas"] for ts in p["train_seeds"]]
    models = dict(zip(todo, runner.map(_train, [(p, g, ts, str(out)) for g, ts in todo])))
    jobs = [(scenario(s, seed, p), {"setting": s, "seed": seed}) for seed in p["seeds"] for s in settings(p)]
    for g in p["gammas"]:
        for ts in p["train_seeds"]:
            model = models[(g, ts)]
            label = f"ACC γ={g} (training seed {ts})"
            acc = {"gamma": g, "training": "none"}
            for split, seeds in (("held-out", p["seeds"]), ("validation", p["validation_seeds"])):
                jobs += [(scenario("ACC", seed, p | {"model": str(model)}, acc),
                          {"setting": label, "seed": seed, "gamma": g, "train_seed": ts, "split": split}) for seed in seeds]
    raw = run_jobs(jobs, out, EXP, runner, fn=stats).drop(columns=["cache"])
    raw["split"] = raw["split"].fillna("held-out")
    raw.to_csv(out / "check_trained_runs.csv", index=False)
    val = raw[raw["split"] == "validation"].groupby(["gamma", "setting"])["reward"].mean()
    selected = {g: val.loc[g].idxmax() for g in p["gammas"]}
    held = raw[raw["split"] == "held-out"]
    sd = held.pivot(index="setting", columns="seed", values="slowdown")
    base = sd.loc[["SECN1", "SECN2"]].min()
    agents = held.dropna(subset=["gamma"]).groupby("setting").first()[["gamma", "train_seed"]]
    beats = {s: bool((sd.loc[s] < base).all()) for s in agents.index}
    verdict = {"beats_both_every_seed": beats,
               "models_beating": {g: sum(beats[s] for s in agents.index[agents["gamma"] == g]) for g in p["gammas"]},
               "models": {g: int((agents["gamma"] == g).sum()) for g in p["gammas"]},
               "selected": selected, "selected_beats_both": {g: beats[s] for g, s in selected.items()}}
    return raw, verdict


def check_trained(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "check_trained", scale, **overrides), out, runner)


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, v = run(p, out, runner)
    held = raw[raw["split"] == "held-out"]
    per = held.pivot_table(index="setting", columns="seed", values="slowdown")
    terms = held.groupby("setting", sort=False)[["slowdown", "short_slowdown", "T", "D", "reward"]].mean()
    counts = "; ".join(f"γ = {g}: {v['models_beating'][g]} of {v['models'][g]}" for g in p["gammas"])
    sel = "; ".join(f"γ = {g}: {s} — {'below both' if v['selected_beats_both'][g] else 'not below both'}"
                    for g, s in v["selected"].items())
    text = (f"<h2>Check scenario, closed loop (trained on its own seeds)</h2><p>{p['scenario']}: models trained "
            f"{p['episodes']} × {p['episode']} per discount and training seed, run frozen on held-out seeds "
            f"{p['seeds']}. Models below both SECN1 and SECN2 on every held-out seed: {counts}. Selected by "
            f"their mean reward on validation seeds {p['validation_seeds']}: {sel}.</p>")
    return [text, "<h3>Mean FCT slowdown per held-out seed</h3>", table(per.reset_index()),
            "<h3>Means over seeds, with the reward's terms</h3>", table(terms.reset_index())]
