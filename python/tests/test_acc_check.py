"""ACC's check scenario (`experiments/acc/check.toml`): the sensitivity gate of issue 20 — before any claim
about a trained agent, fixed settings of ACC's action grid must spread the metric (mean FCT slowdown) by
at least 5 %, or no agent could show anything — and the two static baselines failing in opposite ways,
which is what the scenario is built for."""

from __future__ import annotations

import pytest

import dcnlab
from dcnlab.reproduce import experiments_dir
from dcnlab.scenario import FileScenario

CHECK = experiments_dir("acc") / "check.toml"

# Fixed (Kmin, Kmax, Pmax) settings: the two static baselines of acc.md §7 and grid points of acc.md §3
# from the most aggressive corner to the laxest.
SETTINGS = {
    "SECN1": ("5KB", "200KB", 0.01),
    "SECN2": ("100KB", "400KB", 0.2),
    "20KB/20KB/1.0": ("20KB", "20KB", 1.0),
    "40KB/80KB/0.2": ("40KB", "80KB", 0.2),
    "160KB/160KB/1.0": ("160KB", "160KB", 1.0),
    "640KB/2MB/0.05": ("640KB", "2MB", 0.05),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, float]]:
    return measure()


def measure() -> dict[str, dict[str, float]]:
    # A reduced run: half the simulated time and flows of the scenario file.
    base = FileScenario.open(CHECK).with_overrides({"stop.time": "500ms", "traffic.0.flows": 600, "seed": 2})
    out = {}
    for name, (kmin, kmax, pmax) in SETTINGS.items():
        r = dcnlab.run(base.with_overrides({"switch.aqm.1.kmin": kmin, "switch.aqm.1.kmax": kmax, "switch.aqm.1.pmax": pmax}))
        assert r.meta["drops"]["buffer"] == 0 and len(r.flows) == 600
        f = r.flows[r.flows["finished"]]
        assert len(f) == 600, f"{name}: {600 - len(f)} flows unfinished"
        out[name] = {
            "slowdown": f["slowdown"].mean(),
            "short_slowdown": f[f["size"] <= 100_000]["slowdown"].mean(),
            "large_fct_us": f[f["size"] > 1_000_000]["fct_us"].mean(),
        }
    return out


def test_sensitivity_gate_fixed_settings_spread_the_metric(runs):
    sd = {k: v["slowdown"] for k, v in runs.items()}
    spread = max(sd.values()) / min(sd.values()) - 1
    assert spread >= 0.05, f"fixed settings spread the mean slowdown by only {spread:.1%}: {sd}"
    # Not only the extreme corner: the baselines and the middle of the grid differ by ≥ 5 % too.
    middle = sd["40KB/80KB/0.2"]
    assert min(sd["SECN1"], sd["SECN2"]) >= 1.05 * middle, sd


def test_the_static_baselines_fail_in_opposite_ways(runs):
    s1, s2 = runs["SECN1"], runs["SECN2"]
    # SECN1 marks from 5 KB and starves the large flows; SECN2 keeps a standing queue the short flows wait in.
    assert s1["large_fct_us"] > 1.2 * s2["large_fct_us"], (s1, s2)
    assert s2["short_slowdown"] > 1.2 * s1["short_slowdown"], (s1, s2)


@pytest.fixture(scope="module")
def held_out(tmp_path_factory):
    """`dcnlab reproduce acc --only check --scale small`: fixed settings, SECN1, SECN2 and the shipped
    pre-trained agents (learning online) on seeds the model never saw."""
    from dcnlab.reproduce import acc
    from dcnlab.sweep import SerialRunner

    return acc.check("small", tmp_path_factory.mktemp("check"), runner=SerialRunner())


def test_gate_holds_on_the_held_out_seeds(held_out):
    raw, v = held_out
    assert v["gate_passed"] and v["gate_spread"] >= 0.05, v
    assert (raw["unfinished"] == 0).all()


def test_the_utilisation_term_cannot_tell_settings_apart_at_a_fixed_load(held_out):
    # Open-loop arrivals: every setting carries the same bytes, so the run's mean utilisation (the reward's
    # T) is the same to 0.5 % — only the queue term D separates settings in the long run.
    raw, _ = held_out
    for seed, g in raw.groupby("seed"):
        assert g["T"].max() / g["T"].min() - 1 < 0.005, (seed, g["T"].tolist())
        assert g["D"].max() - g["D"].min() > 0.2, (seed, g["D"].tolist())


def test_the_trained_agents_earn_more_reward_than_both_baselines(held_out):
    # What the agents are trained for (acc.md §4's reward), over the held-out seeds: above SECN1 and SECN2.
    raw, _ = held_out
    rw = raw.groupby("setting")["reward"].mean()
    assert rw["ACC"] > max(rw["SECN1"], rw["SECN2"]), rw


def test_the_rewards_favourite_is_not_the_slowdowns(held_out):
    # Why the agents do not beat both baselines on slowdown here (README, "The check scenario"): the fixed
    # setting with the best long-run reward is the most aggressive one, which the slowdown ranks worse.
    raw, v = held_out
    mean = raw[raw["setting"] != "ACC"].groupby("setting")["slowdown"].mean()
    assert v["best_reward_fixed"] == "20KB/20KB/1.0"
    assert mean[v["best_reward_fixed"]] > 1.1 * mean[v["best_fixed"]], mean


def test_check_bad_preset_keys_are_one_clear_error(tmp_path):
    from dcnlab.reproduce import acc
    from dcnlab.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=r"\[small.check\] seeds"):
        acc.check("small", tmp_path, seeds=[])
    with pytest.raises(ScenarioError, match=r"\[small.check\] model"):
        acc.check("small", tmp_path, model="no_such.bin")
