"""`dcnlab train`: offline pre-training of ACC's shared model over episodes (spec/acc.md §6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dcnlab
from dcnlab.cli import main
from dcnlab.scenario import FileScenario, ScenarioError
from dcnlab.train import epsilon_at, train

SCENARIO = """
seed = 1
stop = { time = "5ms" }
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 4
host_link = { rate = "25Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }
[switch]
buffer = "4MB"
queues = 2
aqm = [{ kind = "droptail" }, { kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }]
pfc = { priorities = [0, 1] }
controller = { kind = "acc", warmup = 8, sync_period = "2ms", upload_every = 2 }
[host]
transport = { kind = "rdma", cc = "dcqcn", preset = "dcqcn_hpcc", control_priority = 0 }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.5
priority = 1
flows = 100000
"""


def scenario(tmp_path: Path, text: str = SCENARIO) -> Path:
    p = tmp_path / "acc.toml"
    p.write_text(text)
    return p


def test_episodes_continue_one_model_and_it_reloads(tmp_path: Path):
    sc = FileScenario.open(scenario(tmp_path))
    out = tmp_path / "m.model"
    t1 = train(sc, out, episodes=1, episode="8ms", loads=[0.7], workloads=["web_search"])
    first = out.read_bytes()
    t2 = train(sc, out, episodes=2, episode="8ms", loads=[0.7, 0.9], workloads=["hadoop"])
    assert len(t1) == 1 and len(t2) == 2 and (t2["decisions"] > 0).all()
    assert t2["mean_reward"].notna().all() and t2["mean_loss"].notna().any()
    second = out.read_bytes()
    assert second != first, "training went on from the saved model and changed it"
    assert not list(tmp_path.glob(".m.model.partial-*")), "no partial file left"
    assert not list(tmp_path.glob(".m.model.state*")), "no training-state file left"
    # A frozen run loads it; the same model gives the same decisions.
    frozen = {"switch.controller.training": "none", "switch.controller.model": str(out), "stop.time": "3ms"}
    a = dcnlab.run(FileScenario.open(scenario(tmp_path)).with_overrides(frozen))
    b = dcnlab.run(FileScenario.open(scenario(tmp_path)).with_overrides(frozen))
    assert len(a.controller_steps) > 0 and a.controller_steps["action"].equals(b.controller_steps["action"])
    assert a.meta["controller"]["acc_params"] == 26780


def test_bad_input_is_one_clear_error(tmp_path: Path, capsys):
    p = scenario(tmp_path, SCENARIO.replace('controller = { kind = "acc", warmup = 8, sync_period = "2ms", upload_every = 2 }\n', ""))
    with pytest.raises(ScenarioError, match="switch.controller"):
        train(FileScenario.open(p), tmp_path / "m", 1)
    assert main(["train", str(p), "-o", str(tmp_path / "m")]) == 2
    assert "switch.controller" in capsys.readouterr().err
    q = scenario(tmp_path)
    assert main(["train", str(q), "-o", str(tmp_path / "m"), "--loads", "0.5,x"]) == 2
    assert "--loads" in capsys.readouterr().err
    assert main(["train", str(q), "-o", str(tmp_path / "nodir" / "m")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["train", str(q), "-o", str(tmp_path / "m"), "--episode", "5 parsecs"]) == 2
    assert "--episode" in capsys.readouterr().err
    assert main(["train", str(q), "-o", str(tmp_path / "m"), "--explore", "1.5"]) == 2
    assert "--explore" in capsys.readouterr().err


def test_exploration_decays_across_episodes_with_the_offline_column(tmp_path: Path):
    # acc.md §5: ε 1.0 → 0.05 over the exploring share of the training, then 0.05.
    assert [epsilon_at(x, 0.5) for x in (0.0, 0.25, 0.5, 0.9)] == [1.0, 0.525, 0.05, 0.05]
    assert epsilon_at(0.0, 0.0) == 0.05
    t = train(FileScenario.open(scenario(tmp_path)), tmp_path / "m", episodes=4, episode="3ms", loads=[0.5], workloads=None, explore=0.5)
    assert list(t["epsilon"]) == [1.0, 0.525, 0.05, 0.05]


def test_an_episode_runs_its_stretch_of_the_schedule(tmp_path: Path, monkeypatch):
    seen = []
    import dcnlab.train as tr

    real = tr.run

    def spy(sc):
        seen.append(sc.as_dict()["switch"]["controller"])
        return real(sc)

    monkeypatch.setattr(tr, "run", spy)
    t = train(FileScenario.open(scenario(tmp_path)), tmp_path / "m", episodes=2, episode="2ms", loads=[0.5], workloads=None, explore=1.0,
              carry_state=True)
    # 2 ms of 500 µs decisions per episode; the scenario's own warmup = 8 is kept.
    assert [(c["epsilon_start"], c["epsilon_end"], c["epsilon_decisions"]) for c in seen] == [(1.0, 0.525, 4), (0.525, 0.05, 4)]
    assert all(c["lr"] == 1e-3 and c["batch"] == 64 and c["warmup"] == 8 for c in seen)
    # Parameter sharing: every transition uploaded, one central step per interval, no steps of the agents'
    # own; the scenario's own sync_period ("2ms") and upload_every (2) win.
    assert all(c["upload_every"] == 2 and c["sync_batches"] == 1 and c["train_every"] == 2**62 and c["sync_period"] == "2ms" for c in seen)
    assert t["epsilon"].tolist() == [1.0, 0.525]
    # One learner across the episodes: each saves its training state, the next resumes from it.
    assert "train_state" not in seen[0] and seen[1]["train_state"].endswith(".m.state-" + str(os.getpid()))
    assert all(c["save_train_state"] for c in seen)


def test_a_carried_state_changes_the_training(tmp_path: Path):
    # With carry_state the second episode resumes the first's memory, target network and optimiser: a
    # different model from one whose second episode starts afresh (the default).
    sc = FileScenario.open(scenario(tmp_path))
    kw = dict(episodes=2, episode="8ms", loads=[0.7], workloads=None)
    train(sc, tmp_path / "a", carry_state=True, **kw)
    train(sc, tmp_path / "b", **kw)
    train(sc, tmp_path / "c", carry_state=True, **kw)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "c").read_bytes(), "deterministic"
    assert (tmp_path / "a").read_bytes() != (tmp_path / "b").read_bytes()
