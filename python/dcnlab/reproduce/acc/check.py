"""The issue's check scenario (`experiments/acc/check.toml`): one 25 Gb/s bottleneck where SECN1 starves
the large flows and SECN2 fills the queue. Three questions, each on held-out seeds:

1. **Sensitivity gate**: do fixed settings of ACC's grid spread the metric (mean FCT slowdown of all flows)
   by ≥ 5 %? If not, no agent could show anything.
2. **Does the trained agent beat both static settings** on each seed (the pre-trained model of the large
   scale experiment, learning online as there)?
3. **What does the reward prefer?** For each fixed setting, the reward's two terms averaged over the run
   (T: the bottleneck's utilisation; D: the log-scaled queue term, acc.md §4) beside the metric. At a
   fixed offered load T averages to the load whatever the setting, so the setting with the best long-run
   reward is the one with the smallest queue — which need not be the one with the lowest slowdown.

Each run also reports `in_progress`, the mean number of flows in progress per 500 µs interval (at this
one bottleneck, the flows through it): by Little's law it follows the mean FCT, which ranks the settings
unlike the mean slowdown (experiments/acc/README.md). A preset's optional `traffic` table overrides
keys of check.toml's traffic entry, e.g. `traffic = { load = 1.0, max_in_flight = 16, flows = 5000 }`
for a closed loop in which a setting that starves throughput does lower the utilisation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from ...scenario import load as load_scenario
from ...scenario import ScenarioError, override
from .. import preset
from ..common import run_jobs, table
from .common import DATA_QUEUE, EXP, PAPER, SECN1, delay_term, model_path, secn2, where

BOTTLENECK = {"node": "sw0", "port": 8}  # check.toml: the switch's port towards host 8, the receiver
SHORT, LARGE = 100_000, 1_000_000
INTERVAL_US = 500.0  # ACC's Δt (acc.md §1)


def settings(p: dict) -> dict[str, tuple[str, str, float]]:
    """The fixed (Kmin, Kmax, Pmax) settings: the two baselines and the preset's grid points."""
    s2 = secn2("25Gbps")
    out = {"SECN1": (SECN1["kmin"], SECN1["kmax"], SECN1["pmax"]), "SECN2": (s2["kmin"], s2["kmax"], s2["pmax"])}
    for s in p["grid_points"]:
        out[f"{s[0]}/{s[1]}/{s[2]}"] = (s[0], s[1], float(s[2]))
    return out


def scenario(label: str, seed: int, p: dict, acc: dict | None = None) -> dict:
    """One run of the preset's scenario file (`scenario`, default check.toml): a fixed setting's, or ACC's
    with the preset's model and `acc` keys (`acc`: other controller keys, which win)."""
    ch = {"seed": seed, "stop.time": p["stop"], "record.queue_sample_interval": "500us", "record.queues": [BOTTLENECK]}
    if "flows" in p:
        ch["traffic.0.flows"] = p["flows"]
    ch |= {f"traffic.0.{k}": v for k, v in p.get("traffic", {}).items()}
    base = load_scenario(EXP / p.get("scenario", "check.toml"))
    if label.startswith("ACC"):
        model_path(p)  # exists, or one clear error naming the preset key
        ctl = {"kind": "acc", "training": p["training"], "model": p["model"]} | dict(p.get("acc", {})) | (acc or {})
        return override(base, ch | {"switch.controller": ctl})
    kmin, kmax, pmax = settings(p)[label]
    return override(base, ch | {"switch.aqm.1.kmin": kmin, "switch.aqm.1.kmax": kmax, "switch.aqm.1.pmax": pmax})


def in_progress(flows: pd.DataFrame, stop_us: float) -> float:
    """Mean over the Δt intervals of [0, stop) of the number of flows in progress during each: started
    before its end and not finished by its start (unfinished flows are in progress to the end)."""
    start = np.sort(flows["start_us"].to_numpy(dtype=float))
    end = np.sort(np.where(flows["finished"], flows["finish_us"].to_numpy(dtype=float), np.inf))
    edges = np.arange(0.0, stop_us, INTERVAL_US)
    n = np.searchsorted(start, edges + INTERVAL_US, side="left") - np.searchsorted(end, edges, side="right")
    return float(n.mean())


def stats(job) -> dict:
    r = cached_result(job)
    f = r.flows[r.flows["finished"]]
    q = r.queues.loc[r.queues["queue"] == DATA_QUEUE, "bytes"].to_numpy(dtype=float)
    d = delay_term(q)
    T = float(np.minimum(1.0, r.links["utilization"].to_numpy()).mean())
    D = float(d.mean()) if len(d) else np.nan
    done = int(r.flows["finished"].sum())
    return {"flows": len(r.flows), "done": done, "unfinished": len(r.flows) - done,
            "slowdown": float(f["slowdown"].mean()),
            "short_slowdown": float(f.loc[f["size"] <= SHORT, "slowdown"].mean()),
            "large_fct_ms": float(f.loc[f["size"] > LARGE, "fct_us"].mean()) / 1e3,
            "T": T, "D": D, "reward": 0.5 * T + 0.5 * D,  # acc.md §4 with its default weights
            "in_progress": np.nan if closed_loop(job[0]) else in_progress(r.flows, float(r.meta["sim_time_us"])),
            "cache": job[2]}


def closed_loop(scenario: dict) -> bool:
    """Whether the traffic entry has a closed-loop cap: then a waiting flow's row carries the time it was
    due, not when it started, and the count in progress is the cap itself (Little's law then ties the FCT
    to the throughput, `done`)."""
    return scenario["traffic"][0].get("max_in_flight") is not None


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, dict]:
    """(one row per setting × seed, the verdicts) for preset `p` (experiments/acc/scales.toml [*.check])."""
    p = {"experiment": "check"} | p
    if not p["seeds"]:
        raise ScenarioError(where(p, "seeds"), "give the held-out seeds, e.g. [11, 12, 13]")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    labels = [*settings(p), "ACC"]
    jobs = [(scenario(s, seed, p), {"setting": s, "seed": seed}) for seed in p["seeds"] for s in labels]
    raw = run_jobs(jobs, out, EXP, runner, fn=stats).drop(columns=["cache"])
    raw.to_csv(out / "check_runs.csv", index=False)
    sd = raw.pivot(index="setting", columns="seed", values="slowdown")
    fixed = sd.drop(index="ACC")
    spread = (fixed.max() / fixed.min() - 1).min()
    beats = (sd.loc["ACC"] < sd.loc["SECN1"]) & (sd.loc["ACC"] < sd.loc["SECN2"])
    mean = raw[raw["setting"] != "ACC"].groupby("setting")[["slowdown", "reward"]].mean()
    verdict = {"gate_spread": float(spread), "gate_passed": bool(spread >= 0.05),
               "acc_beats_both": {int(k): bool(v) for k, v in beats.items()},
               "best_fixed": mean["slowdown"].idxmin(), "best_reward_fixed": mean["reward"].idxmax()}
    return raw, verdict


def check(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "check", scale, **overrides), out, runner)


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, v = run(p, out, runner)
    per = raw.pivot_table(index="setting", columns="seed", values="slowdown")
    terms = raw.groupby("setting", sort=False)[["slowdown", "short_slowdown", "large_fct_ms", "T", "D", "reward",
                                                 "in_progress"]].mean()
    beats = ", ".join(f"seed {s}: {'yes' if b else 'no'}" for s, b in v["acc_beats_both"].items())
    text = (f"<h2>Check scenario</h2><p>{len(p['seeds'])} held-out seeds, {p['stop']} each. Sensitivity gate: fixed "
            f"settings spread the mean slowdown by {100 * v['gate_spread']:.0f} % at least (≥ 5 % needed: "
            f"{'passed' if v['gate_passed'] else 'failed'}). ACC below both SECN1 and SECN2: {beats}. Best fixed "
            f"setting by slowdown: {v['best_fixed']}; by the reward (w1 = w2 = 0.5, run averages): "
            f"{v['best_reward_fixed']}.</p>")
    return [text, "<h3>Mean FCT slowdown per seed</h3>", table(per.reset_index()),
            "<h3>Means over seeds, with the reward's terms</h3>", table(terms.reset_index())]
