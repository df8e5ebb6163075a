"""ACC's per-port ECN tuning as a Gymnasium environment (`pip install 'dcnlab[rl]'`; docs/rl.md).

The Rust simulation runs until the scenario's ACC controller (`switch.controller = { kind = "acc",
training = "none" }`) ticks, every Δt; there every agent (one per owned switch queue) observes what the
Rust agents observe — the last `history` samples of six features (spec/acc.md §2) — and is rewarded as they
are (§4). The run waits for the actions — one grid setting (Kmin, Kmax, Pmax) per agent, §3 — and
applies them at that instant, before any other event, so simulated time and decisions never drift apart:
replaying the Rust agents' own choices gives their run bit for bit (`crates/sim/tests/acc_env.rs`).

- `AccEnv`: every agent of the run at once — observations `(agents, state_len)`, actions
  `MultiDiscrete([n_actions] * agents)`, reward the mean of the agents' rewards, each agent's in
  `info["rewards"]`.
- `SinglePortEnv`: one agent's view; every other queue keeps its scenario setting.

An episode is one run of the scenario: `reset(seed=s)` starts it with seed `s` (without a seed, the
scenario's seed, then the next one each episode); it ends (`terminated`) when the scenario stops.
`records()` returns the finished episode's records as `dcnlab.Result`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _core
from .results import Result, _result, _source


class AccEnv(gym.Env):
    """All ACC agents of a scenario as one environment (see the module's text)."""

    metadata = {"render_modes": []}

    def __init__(self, scenario: Any, base_dir: str | Path | None = None):
        self._src, self._base, self._overrides = _source(scenario, base_dir)
        probe = self._session(None)
        self.agents, self.state_len, self.n_actions, self.interval_us = probe.shape
        self.observation_space = spaces.Box(0.0, np.inf, shape=(self.agents, self.state_len), dtype=np.float32)
        self.action_space = spaces.MultiDiscrete([self.n_actions] * self.agents)
        self._run: Any = None
        self._episode_seed: int | None = None
        self._last = np.zeros((self.agents, self.state_len), dtype=np.float32)
        self._records: Result | None = None

    def _session(self, seed: int | None):
        overrides = list(self._overrides or []) + ([("seed", seed)] if seed is not None else [])
        return _core.AccSession(self._src, self._base, overrides or None)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None and self._episode_seed is not None:
            seed = self._episode_seed + 1
        self._run, self._records = self._session(seed), None
        self._episode_seed = seed if seed is not None else int(_scenario_seed(self._src, self._overrides))
        if self._run.next():
            states, _ = self._run.view()
            self._last = states
        return self._last.copy(), {"time_us": self._run.now_us()}

    def step(self, action):
        if self._run is None:
            raise RuntimeError("call reset() first")
        self._run.act([int(a) for a in np.asarray(action).reshape(-1)])
        if self._run.next():
            states, rewards = self._run.view()
            self._last = states
            return self._last.copy(), _mean(rewards), False, False, {"rewards": rewards, "time_us": self._run.now_us()}
        info = {"rewards": np.full(self.agents, np.nan, dtype=np.float32), "time_us": self._run.now_us()}
        self._records = _result(self._run.finish())
        self._run = None
        return self._last.copy(), 0.0, True, False, info

    def records(self) -> Result:
        """The records of the episode that has ended (or of the one under way, which this ends)."""
        if self._records is None and self._run is not None:
            self._records, self._run = _result(self._run.finish()), None
        if self._records is None:
            raise RuntimeError("no episode has run")
        return self._records

    def close(self):
        self._run = None


class SinglePortEnv(gym.Env):
    """One ACC agent's view of a run: its state, its grid action, its reward; every other owned queue
    keeps its scenario setting (action −1)."""

    metadata = {"render_modes": []}

    def __init__(self, scenario: Any, agent: int = 0, base_dir: str | Path | None = None):
        self.env = AccEnv(scenario, base_dir)
        if not 0 <= agent < self.env.agents:
            raise ValueError(f"agent {agent}: the scenario's ACC controller has agents 0..{self.env.agents - 1}")
        self.agent = agent
        self.observation_space = spaces.Box(0.0, np.inf, shape=(self.env.state_len,), dtype=np.float32)
        self.action_space = spaces.Discrete(self.env.n_actions)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        return obs[self.agent], info

    def step(self, action):
        actions = np.full(self.env.agents, -1, dtype=np.int64)
        actions[self.agent] = int(action)
        obs, _, terminated, truncated, info = self.env.step(actions)
        r = float(info["rewards"][self.agent])
        return obs[self.agent], 0.0 if np.isnan(r) else r, terminated, truncated, {"time_us": info["time_us"]}

    def records(self) -> Result:
        return self.env.records()


def _mean(rewards: np.ndarray) -> float:
    ok = rewards[~np.isnan(rewards)]
    return float(ok.mean()) if len(ok) else 0.0


def _scenario_seed(src: Any, overrides) -> int:
    for k, v in overrides or []:
        if k == "seed":
            return int(v)
    text = src if isinstance(src, str) else None
    if text is None:
        return int(dict(src).get("seed", 1))
    import tomllib

    return int(tomllib.loads(text).get("seed", 1))


__all__ = ["AccEnv", "SinglePortEnv"]
