"""Train a simple agent on dcnlab's ACC environment (`dcnlab.rl`, `pip install 'dcnlab[rl]'`).

The bottleneck port of a DCQCN incast (`SinglePortEnv`, agent 3: the switch port toward the receiver)
learns which RED setting to hold with an ε-greedy bandit over 12 settings of ACC's grid, one episode
(20 ms, 40 decisions) after another, each with its own seed; the other ports keep their setting. Then
the learnt setting and a random one are each run on held-out seeds and their mean rewards printed, and
the environment's stepping speed is set against the Rust agents' own (the same run with the decisions
made in Rust).

    python examples/acc_gym_bandit.py [--episodes 15]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dcnlab
from dcnlab.rl import AccEnv, SinglePortEnv

SCENARIO = """
seed = 1
stop = { time = "20ms" }
[topology]
kind = "star"
hosts = 5
link = { rate = "25Gbps", delay = "1us" }
[switch]
buffer = "2MB"
queues = 2
aqm = [{ kind = "droptail" }, { kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }]
pfc = { priorities = [0, 1], xoff = "30KB" }
controller = { kind = "acc", training = "none" }
[host]
transport = { kind = "rdma", cc = "dcqcn", control_priority = 0 }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.8
flows = 2000
src = "0-3"
dst = 4
priority = 1
"""

# 12 of the 1100 settings: a = pair · 20 + p (pairs i ≤ j over the 10 levels; `grid.rs`), Pmax 0.5 or 1.0.
ARMS = [pair * 20 + p for pair in (0, 5, 10, 19, 27, 40) for p in (9, 19)]


def run_episode(env: SinglePortEnv, arm_of_step, seed: int) -> float:
    env.reset(seed=seed)
    total, n, done = 0.0, 0, False
    while not done:
        _, r, done, _, _ = env.step(arm_of_step())
        total, n = total + r, n + 1
    return total / max(n, 1)


def main(episodes: int) -> None:
    env = SinglePortEnv(SCENARIO, agent=4)
    rng = np.random.default_rng(0)
    value, count = np.zeros(len(ARMS)), np.zeros(len(ARMS))
    for e in range(episodes):
        eps = max(0.1, 1.0 - e / (0.6 * episodes))
        env.reset(seed=100 + e)
        done, rewards, arm = False, [], int(rng.integers(len(ARMS)))
        while not done:
            # ε-greedy per decision; each reward is credited to the arm that earned it.
            _, r, done, _, _ = env.step(ARMS[arm])
            if not done:
                count[arm] += 1
                value[arm] += (r - value[arm]) / count[arm]
                rewards.append(r)
            arm = int(rng.integers(len(ARMS))) if rng.random() < eps else int(np.argmax(value))
        print(f"episode {e + 1}/{episodes}: ε {eps:.2f}, mean reward {np.mean(rewards):.3f}")
    best = ARMS[int(np.argmax(value))]
    held_out = range(900, 903)
    learnt = np.mean([run_episode(env, lambda: best, s) for s in held_out])
    random = np.mean([run_episode(env, lambda: ARMS[int(rng.integers(len(ARMS)))], s) for s in held_out])
    print(f"learnt setting {best}: mean reward {learnt:.3f} on held-out seeds; random settings: {random:.3f}")

    # Stepping speed over a longer run (200 ms, 400 decisions): every port's decisions from Python (random
    # actions), from the Rust agents (the frozen network's greedy choice), and no controller at all.
    long = SCENARIO.replace('"20ms"', '"200ms"').replace("flows = 2000", "flows = 20000")
    venv = AccEnv(long)
    t0 = time.perf_counter()
    venv.reset(seed=1)
    steps, done = 0, False
    while not done:
        _, _, done, _, _ = venv.step(venv.action_space.sample())
        steps += 1
    py_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dcnlab.run(long)
    rust_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dcnlab.run(long.replace('controller = { kind = "acc", training = "none" }', ""))
    bare_s = time.perf_counter() - t0
    print(f"{steps} decisions × {venv.agents} agents, 200 ms simulated: {py_s:.2f} s from Python "
          f"({steps / py_s:,.0f} steps/s), {rust_s:.2f} s with the Rust agents ({steps / rust_s:,.0f} steps/s), "
          f"{bare_s:.2f} s without a controller")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=15)
    main(ap.parse_args().episodes)
