"""Offline pre-training of ACC's agents (`spec/acc.md` §6): `dcnlab train SCENARIO -o MODEL`.

The scenario is the target network with `switch.controller = { kind = "acc", … }`. Each episode runs it
once more — a fresh seed, the next load of `loads` and the next size distribution of `workloads` on its
first traffic entry, `episode` of simulated time — with parameter sharing (`training = "shared"`: one
model, one global replay memory), starting from the model the previous episode saved and saving the
model it learnt (`save_model`). The last episode's model is the output. Each episode is a row of the
returned table (load, workload, decisions, mean reward, mean loss, wall seconds).

Unless the scenario's controller sets them, the episodes use the offline column of acc.md §5 with its
parameter sharing (§6): Adam's learning rate 1e-3, minibatch 64, every agent uploading each transition to
the global memory, one training step of the shared model on it per interval Δt and the shared model pushed
to every agent at once (the agents take no steps of their own: the push would overwrite them within the
same interval), and exploration that decays linearly over the whole training — ε from 1.0 at the first
episode to 0.05 at `explore` of the episodes (default 60 %), then 0.05 — carried across episodes by giving
each its own stretch of the schedule.

The episodes are separate runs: each starts with an empty global memory, fresh optimiser moments and a
target network that is never copied within 200 ms (400 steps < C = 500). With `carry_state` the learner
lives on across them instead — each episode saves the central learner's training state (the global replay
memory, the target network, Adam's moments and step count: `save_train_state`) and the next resumes from
it (`train_state`), one global memory and one learner as acc.md §5–§6 describe. It is off by default:
measured, it did not make training more reliable and it made the pool model lax on the closed-loop check
(experiments/acc/README.md, "Why training was bimodal").
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from . import _core
from .results import run
from .scenario import FileScenario, ScenarioError, get, override

WORKLOADS = ("web_search", "data_mining", "hadoop")
# acc.md §5, offline pre-training column, and §6's parameter sharing (the keys a scenario sets itself win;
# `sync_period` is the scenario's interval). `train_every`: an agent's own steps would be overwritten by the
# push of the same interval, so they are never taken.
OFFLINE = {"lr": 1e-3, "batch": 64, "upload_every": 1, "sync_batches": 1, "train_every": 2**62}
EPS_START, EPS_END = 1.0, 0.05
LOADS = (0.3, 0.5, 0.7, 0.9)


def _us(text: str, field: str) -> float:
    """A positive duration string ("200ms", "500us") in µs, by the core's parser."""
    try:
        v = _core.parse_time_us(str(text))
    except _core.ConfigError as e:
        raise ScenarioError(field, str(e)) from None
    if v <= 0:
        raise ScenarioError(field, f"`{text}` must be a positive duration, e.g. \"200ms\"")
    return v


def epsilon_at(progress: float, explore: float) -> float:
    """ε at a point of the training (0 = start, 1 = end): linear 1.0 → 0.05 over `explore`, then 0.05."""
    if explore <= 0 or progress >= explore:
        return EPS_END
    return EPS_START + (EPS_END - EPS_START) * progress / explore


def _check(sc: FileScenario) -> None:
    d = sc.as_dict()
    ctl = d.get("switch", {}).get("controller")
    if not isinstance(ctl, dict) or ctl.get("kind") != "acc":
        raise ScenarioError("switch.controller", "pre-training needs ACC agents: set controller = { kind = \"acc\" }")
    traffic = d.get("traffic")
    if not traffic or "load" not in traffic[0]:
        raise ScenarioError("traffic[0].load", "the first traffic entry must have a `load` for the episodes to vary")


def train(
    scenario: FileScenario,
    out: Path,
    episodes: int,
    episode: str = "200ms",
    loads: Sequence[float] = LOADS,
    workloads: Sequence[str] | None = WORKLOADS,
    progress: Callable[[int, dict], None] | None = None,
    explore: float = 0.6,
    carry_state: bool = False,
) -> pd.DataFrame:
    """Run `episodes` episodes and leave the learnt model in `out` (written atomically after each
    episode, so an interrupted training keeps the last whole model)."""
    if episodes < 1:
        raise ScenarioError("--episodes", "must be at least 1")
    if not loads or any(not (0 < x <= 1) for x in loads):
        raise ScenarioError("--loads", "loads are fractions in (0, 1], e.g. 0.3,0.5,0.7,0.9")
    if not (0 <= explore <= 1):
        raise ScenarioError("--explore", "the share of episodes over which ε decays is in [0, 1], e.g. 0.6")
    _check(scenario)
    ctl = scenario.as_dict()["switch"]["controller"]
    per_episode = max(1, round(_us(episode, "--episode") / _us(ctl.get("interval", "500us"), "switch.controller.interval")))
    out = Path(out).resolve()
    if not out.parent.is_dir():
        raise ScenarioError("-o", f"the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    state = out.with_name(f".{out.name}.state-{os.getpid()}")
    tmp_state = out.with_name(f".{out.name}.state-partial-{os.getpid()}")
    seed = int(get(scenario.as_dict(), "seed")) if "seed" in scenario.as_dict() else 1
    rows = []
    for e in range(episodes):
        changes = {
            "seed": seed + e,
            "stop": {"time": episode},
            "switch.controller.training": "shared",
            "switch.controller.save_model": str(tmp),
            "record.controller_steps": True,  # the progress line's decisions, reward and loss
            "traffic.0.load": loads[e % len(loads)],
        }
        offline = OFFLINE | {"sync_period": ctl.get("interval", "500us")}
        changes.update({f"switch.controller.{k}": v for k, v in offline.items() if k not in ctl})
        if not any(k in ctl for k in ("epsilon_start", "epsilon_end", "epsilon_decisions")):
            changes["switch.controller.epsilon_start"] = epsilon_at(e / episodes, explore)
            changes["switch.controller.epsilon_end"] = epsilon_at((e + 1) / episodes, explore)
            changes["switch.controller.epsilon_decisions"] = per_episode
        if workloads:
            changes["traffic.0.sizes"] = workloads[e % len(workloads)]
        if out.exists():
            changes["switch.controller.model"] = str(out)
        if carry_state:
            changes["switch.controller.save_train_state"] = str(tmp_state)
            if e > 0:
                changes["switch.controller.train_state"] = str(state)
        start = time.perf_counter()
        try:
            res = run(override(scenario, changes))
        except BaseException:
            for f in (tmp_state, state):
                f.unlink(missing_ok=True)
            raise
        os.replace(tmp, out)
        if carry_state:
            os.replace(tmp_state, state)
        steps = res.controller_steps
        row = {
            "episode": e,
            "load": loads[e % len(loads)],
            "workload": workloads[e % len(workloads)] if workloads else str(get(scenario.as_dict(), "traffic.0.sizes")),
            "epsilon": changes.get("switch.controller.epsilon_start", math.nan),
            "decisions": len(steps),
            "mean_reward": float(steps["reward"].mean()) if len(steps) else math.nan,
            # The shared model's training loss (the agents' own steps, if any, are in the rows).
            "mean_loss": float(res.meta.get("controller", {}).get("acc_central_loss", steps["loss"].mean() if len(steps) else math.nan)),
            "flows_finished": int(res.meta.get("flows_finished", 0)),
            "wall_s": time.perf_counter() - start,
        }
        rows.append(row)
        if progress:
            progress(e, row)
    state.unlink(missing_ok=True)
    return pd.DataFrame(rows)
