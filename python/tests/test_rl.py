"""ACC as a Gymnasium environment (`dcnlab.rl`): it passes Gymnasium's checker in both views, a seed fixes
every observation, reward and record, the agents' settings reach the switch, and bad input is one error."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="the optional extra dcnlab[rl]; `make test` installs it")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import dcnlab  # noqa: E402
from dcnlab.rl import AccEnv, SinglePortEnv  # noqa: E402

# Three DCQCN senders into host 3 of a 25 Gb/s star over PFC; ACC (frozen: the host decides) on the RED
# data queue of every switch port: 4 agents, a decision every 500 µs, 12 decisions per episode.
SCENARIO = """
seed = 4
stop = { time = "6ms" }
[topology]
kind = "star"
hosts = 4
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
kind = "flows"
list = [{ src = 0, dst = 3, size = "inf", start = "0us", priority = 1 },
        { src = 1, dst = 3, size = "inf", start = "7us", priority = 1 },
        { src = 2, dst = 3, size = "inf", start = "14us", priority = 1 }]
"""


def episode(env, actions):
    obs, _ = env.reset(seed=9)
    out = [obs]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs, r, info["rewards"]))
        if term:
            break
    return out


def test_both_views_pass_the_gymnasium_checker():
    env = AccEnv(SCENARIO)
    assert (env.agents, env.state_len, env.n_actions, env.interval_us) == (4, 18, 1100, 500.0)
    check_env(env, skip_render_check=True)
    check_env(SinglePortEnv(SCENARIO, agent=3), skip_render_check=True)


def test_a_seed_fixes_the_episode_and_the_agents_settings_reach_the_switch():
    env = AccEnv(SCENARIO)
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, env.n_actions, env.agents) for _ in range(20)]
    a, b = episode(env, acts), episode(AccEnv(SCENARIO), acts)
    assert len(a) == 13, "12 decisions in 6 ms, then the end"
    np.testing.assert_array_equal(a[0], b[0])
    for x, y in zip(a[1:], b[1:]):
        np.testing.assert_array_equal(x[0], y[0])
        np.testing.assert_array_equal(x[2], y[2])
    # Every decision is one controller_steps row per agent at its tick.
    r = env.records()
    steps = r.controller_steps
    assert len(steps) == 12 * 4 and sorted(set(steps["time_us"])) == [500.0 * k for k in range(1, 13)]
    # The bottleneck port (sw0 → host 3): action 0 (a 20 KB step, Pmax 5 %) marks hundreds of packets
    # (757 measured), the last (10 MB) only those of the first 500 µs under the scenario's own RED (5).
    lax = [np.full(4, env.n_actions - 1)] * 12
    strict = [np.zeros(4, dtype=int)] * 12
    marks = {}
    for name, plan in (("lax", lax), ("strict", strict)):
        episode(env, plan)
        p = env.records().ports
        marks[name] = int(p[(p["node"] == "sw0") & (p["port"] == 3)]["ce_marks"].iloc[0])
    assert marks["strict"] > 300 and marks["lax"] < marks["strict"] / 10, marks


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(dcnlab.ConfigError, match="switch.controller.*training"):
        AccEnv(SCENARIO.replace('training = "none"', 'training = "local"'))
    with pytest.raises(dcnlab.ConfigError, match="no `switch.controller"):
        AccEnv(SCENARIO.replace('controller = { kind = "acc", training = "none" }', ""))
    env = AccEnv(SCENARIO)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="action 1100 of agent 0"):
        env.step(np.array([1100, 0, 0, 0]))
    with pytest.raises(ValueError, match="agents 0..3"):
        SinglePortEnv(SCENARIO, agent=4)
