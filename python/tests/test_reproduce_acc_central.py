"""Reduced `centralized` (Fig. 14) and `unseen` (Fig. 16) ACC experiments. Structural checks only: at the
sizes a test affords both agents are still exploring, and no direction between C-ACC, D-ACC and the
static settings holds there (experiments/acc/README.md has the measured figures). What is asserted: C-ACC
is one agent over the three port groups of the 96-host leaf-spine and sets every port of a group alike;
D-ACC is one agent per port; the unseen-traffic periods carry their own workload at the preset's load and
every scheme sees the same flows; the per-window table covers the run at the paper's times."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dcnlab import reproduce
from dcnlab.reproduce import acc
from dcnlab.reproduce.acc import common
from dcnlab.results import load
from dcnlab.scenario import ScenarioError
from dcnlab.sweep import SerialRunner

cent = importlib.import_module("dcnlab.reproduce.acc.centralized")  # the package's names are its functions
unseen = importlib.import_module("dcnlab.reproduce.acc.unseen")


def group(node: str, port: int, hosts_per_leaf: int) -> str:
    if node.startswith("leaf"):
        return "leaf-down" if port < hosts_per_leaf else "leaf-up"
    return "spine-down"


def test_centralized_runs_one_agent_over_three_groups_and_sets_each_group_alike(tmp_path: Path):
    # 5 ms of arrivals at 70 % on the 96 hosts: ~2 CPU-s per run.
    p = reproduce.preset("acc", "centralized", "small", arrivals_ms=5, warmup_ms=1, measure_ms=4, controller_steps=True)
    raw, summary, change = cent.run(p, tmp_path, SerialRunner())
    assert list(summary["scheme"]) == ["SECN1", "SECN2", "D-ACC", "C-ACC"]
    for m in ("overall_avg_us", "overall_p99_us", "mice_avg_us"):
        assert np.isfinite(summary[m]).all() and (summary[m] > 0).all(), m
    # Every scheme saw the same flows.
    assert summary["flows"].nunique() == 1 and summary["flows"].iloc[0] > 200
    by = raw.set_index("scheme")
    hpl = p["hosts_per_leaf"]
    ports = p["leaves"] * (hpl + p["spines"]) + p["spines"] * p["leaves"]
    assert by.loc["D-ACC", "acc_agents"] == ports == 112
    c = by.loc["C-ACC"]
    assert (c["acc_agents"], c["acc_groups"], c["acc_joint_actions"]) == (1, 3, 512)
    # 3 groups × mean and max of 6 features × 3 samples = 108 inputs → 20 → 40 → 40 → 20 → 512.
    assert c["acc_params"] == 108 * 20 + 20 + 20 * 40 + 40 + 40 * 40 + 40 + 40 * 20 + 20 + 20 * 512 + 512
    # Every port of a group carries one setting at each tick, and the groups do not all move together.
    jobs = cent.jobs(p)
    k = [lab["scheme"] for _, lab in jobs].index("C-ACC")
    from dcnlab.sweep import scenario_hash

    st = load(tmp_path / "runs" / scenario_hash(jobs[k][0])).controller_steps
    assert len(st) == ports * st["time_us"].nunique() and st["time_us"].nunique() >= 9
    st = st.assign(group=[group(n, q, hpl) for n, q in zip(st["node"], st["port"])])
    per = st.groupby(["time_us", "group"])["action"].nunique()
    assert (per == 1).all(), per[per > 1]
    wide = st.groupby(["time_us", "group"])["action"].first().unstack("group")
    assert (wide["leaf-down"] != wide["spine-down"]).any()
    assert all(wide[g].nunique() <= 8 for g in wide)
    assert set(change.columns) >= {"C-ACC vs SECN1 %", "C-ACC vs D-ACC %", "paper C-ACC vs SECN2 %"}


def test_unseen_periods_switch_workload_and_every_scheme_sees_the_same_flows(tmp_path: Path):
    # Fig. 16 at 1/200 of the paper's times (52.5 ms, 2.5 ms windows) on the 32-host fabric.
    p = reproduce.preset("acc", "unseen", "small", time_scale=0.005, drain_ms=20,
                         acc={"epsilon_decisions": 10, "sync_period": "1ms"})
    assert "20KB/20KB/1.0" in p["schemes"]
    assert unseen.periods(p) == [("web_search", 0.0, 22.5), ("data_mining", 22.5, 42.5),
                                 ("web_search", 42.5, 47.5), ("data_mining", 47.5, 52.5)]
    raw, series, summary = unseen.run(p, tmp_path, SerialRunner())
    # 21 windows at the paper's times 0, 0.5, …, 10 s, every scheme.
    assert list(series.index) == [0.5 * k for k in range(21)]
    assert list(series.columns) == ["20KB/20KB/1.0", "ACC", "SECN1", "SECN2"]
    win = raw[raw["workload"] != "all"]
    assert set(win.loc[win["t_s"] < 4.5, "workload"]) == {"web_search"}
    assert set(win.loc[(win["t_s"] >= 4.5) & (win["t_s"] < 8.5), "workload"]) == {"data_mining"}
    counts = win.pivot_table(index="t_s", columns="scheme", values="flows")
    assert (counts.nunique(axis=1) == 1).all(), "the schemes saw different flows"
    # Each period's flows number what its workload and load give (λ·T, 3σ of Poisson noise) and follow
    # its workload (no web-search flow beyond the CDF's 30 MB).
    f = load(next((tmp_path / "runs").iterdir())).flows
    for wl, a, b in unseen.periods(p):
        g = f[(f["start_us"] >= a * 1e3) & (f["start_us"] < b * 1e3)]
        expect = common.flow_count(p | {"arrivals_ms": b - a}, wl, p["load"])
        tol = 3 / np.sqrt(expect)
        assert abs(len(g) / expect - 1) < max(tol, 0.05), (wl, a, len(g), expect)
        if wl == "web_search":
            assert g["size"].max() <= 30e6
    assert set(summary["against"]) == {"SECN1", "SECN2"} and "recovery after 4.5 s (s)" in summary
    assert list(summary["paper %"]) == [-31.1, -56.2]
    # The reward each run's switch ports earned: the fixed 20 KB step marks hardest and keeps the shortest
    # queues (D), SECN2 the longest; the agents' own mean reward and settings come from their decisions.
    by = unseen.by_scheme(raw).set_index("scheme")
    assert by.loc["20KB/20KB/1.0", "D"] > by.loc["SECN1", "D"] > by.loc["SECN2", "D"]
    assert ((by["reward"] > 0.3) & (by["reward"] < 1)).all()
    assert 0 < by.loc["ACC", "acc_reward"] < 1 and 20 <= by.loc["ACC", "acc_kmin_kb"] <= by.loc["ACC", "acc_kmax_kb"]
    assert np.isnan(by.loc["SECN2", "acc_reward"])  # its fabric ports' schedule is not an agent
    assert by.loc["SECN1", "FCT vs SECN1 %"] == 0


def test_both_are_registered_and_bad_input_is_one_clear_error(tmp_path: Path):
    assert {"centralized", "unseen"} <= set(acc.EXPERIMENTS)
    with pytest.raises(ScenarioError, match=r"\[small\.centralized\] schemes.*D-ACC, C-ACC"):
        acc.centralized("small", tmp_path, runner=SerialRunner(), schemes=["E-ACC"])
    with pytest.raises(ScenarioError, match="SECN1, SECN2, ACC, or a fixed RED setting written Kmin/Kmax/Pmax"):
        acc.unseen("small", tmp_path, runner=SerialRunner(), schemes=["C-ACC"])
    with pytest.raises(ScenarioError, match="schemes"):
        acc.unseen("small", tmp_path, runner=SerialRunner(), schemes=["20KB/20KB"])
    for bad in ("2MB/640KB/0.5", "20KB/40KB/1.5", "20KB/40KB/0"):
        with pytest.raises(ScenarioError, match=r"\[small\.unseen\] schemes.*Kmin ≤ Kmax and 0 < Pmax ≤ 1"):
            acc.unseen("small", tmp_path, runner=SerialRunner(), schemes=[bad])


def test_a_fixed_setting_scheme_sets_red_on_every_port():
    p = reproduce.preset("acc", "unseen", "small")
    aqm = common.scheme_changes("640KB/2MB/0.05", p)["switch.aqm"]
    assert aqm[0] == {"kind": "droptail"}
    assert aqm[1] == common.SECN1 | {"kmin": "640KB", "kmax": "2MB", "pmax": 0.05}


def test_the_sampled_reward_is_acc_md_section_4():
    # D: 1 at an empty queue, 1 − log2(32)/log2(1001) at 31 KB, 0 from 1 MB on; T capped at 1.
    q = pd.DataFrame({"time_us": [0, 0, 0, 0], "node": ["leaf0"] * 4, "port": [0, 1, 2, 2], "queue": [1, 1, 1, 0],
                      "bytes": [0, 31_000, 2_000_000, 0]})
    links = pd.DataFrame({"time_us": [0, 0, 0], "node": ["leaf0"] * 3, "port": [0, 1, 2], "utilization": [0.5, 1.2, 0.0]})
    r = common.sampled_reward(q, links).set_index("port")
    assert len(r) == 3  # the data queue only
    assert r["D"].tolist() == pytest.approx([1.0, 1 - 5 / np.log2(1001), 0.0])
    assert r["T"].tolist() == [0.5, 1.0, 0.0]
    assert r["reward"].tolist() == pytest.approx([0.75, 0.5 + 0.5 * (1 - 5 / np.log2(1001)), 0.0])
