"""What the ACC experiment uses: the compared schemes (the static settings SECN1 and SECN2 of
`spec/acc.md` §7 and the ACC agents), the large-scale scenario of §8 (`experiments/acc/large_scale.toml`)
resized by a preset, Poisson flow counts from the workload's mean flow size, and the paper's metrics."""

from __future__ import annotations

import copy
import hashlib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ... import _core
from ...scenario import ScenarioError, override
from ...scenario import load as load_scenario
from .. import experiments_dir
from ..common import ROOT

PAPER = "acc"
EXP = experiments_dir(PAPER)
SCHEMES = ("SECN1", "SECN2", "ACC")
FIXED = re.compile(r"(\d+(?:\.\d+)?[KMG]?B)/(\d+(?:\.\d+)?[KMG]?B)/(\d*\.?\d+)")  # a fixed setting: Kmin/Kmax/Pmax
DATA_QUEUE = 1  # the lossless RDMA class of large_scale.toml; ACKs, NACKs and CNPs use queue 0

# spec/acc.md §7. SECN1 (DCQCN's setting) as it is on every port; SECN2 (HPCC's) scales with the port's
# rate: 100 KB / 400 KB at 25 Gb/s, × C/25G elsewhere (400 KB / 1.6 MB on 100 Gb/s fabric ports).
SECN1 = {"kind": "red", "kmin": "5KB", "kmax": "200KB", "pmax": 0.01, "non_ect": "pass"}
SECN2_25G = (100_000, 400_000, 0.2)

MICE = 100_000          # mice: (0, 100 KB]
ELEPHANT = 10_000_000   # elephants: [10 MB, ∞)
METRICS = {"overall_avg_us": "overall avg FCT", "mice_avg_us": "mice (0,100KB] avg FCT",
           "mice_p99_us": "mice (0,100KB] p99 FCT", "elephant_avg_us": "elephants [10MB,∞) avg FCT"}

# §5.4 / Fig. 12 (web search, 90 % load): ACC's change in % against each static setting. The paper gives
# no elephant figure against SECN1 ("SECN1 achieves comparable performance to SECN2 but is slightly worse
# than ACC"), and Fig. 12 is the web-search workload only.
PAPER_CHANGE = {
    ("overall_avg_us", "SECN1"): -5.8, ("overall_avg_us", "SECN2"): -16.6,
    ("mice_avg_us", "SECN1"): -5.7, ("mice_avg_us", "SECN2"): -17.3,
    ("mice_p99_us", "SECN1"): -15.8, ("mice_p99_us", "SECN2"): -47.5,
    ("elephant_avg_us", "SECN2"): -4.4,
}
PAPER_POINT = ("web_search", 0.9)


def cdf_mean(sizes: str) -> float:
    """Mean flow size (bytes) of a built-in CDF (`data/cdf/<name>.txt`) or a CDF file (relative to
    experiments/acc/), by the trapezoid rule the core uses (`workload/cdf.rs` `Cdf::mean`), so that the
    flow count below matches the arrival rate the core draws."""
    path = ROOT / "data" / "cdf" / f"{sizes}.txt"
    if not path.exists():
        path = EXP / sizes
    if not path.exists():
        raise ScenarioError("workloads", f"`{sizes}` is neither a built-in CDF (data/cdf/) nor a file under experiments/acc/")
    pts = []
    for line in path.read_text().splitlines():
        cols = line.split("#")[0].replace(",", " ").split()
        if len(cols) >= 2:
            pts.append((float(cols[0]), float(cols[1])))
    scale = 100.0 if abs(pts[-1][1] - 100.0) < 1e-6 else 1.0
    return sum((a[0] + b[0]) / 2 * (b[1] - a[1]) / scale for a, b in zip(pts, pts[1:]))


def hosts(p: dict) -> int:
    return p["leaves"] * p["hosts_per_leaf"]


def flow_count(p: dict, workload: str, load: float) -> int:
    """Poisson flows for `arrivals_ms` of traffic: λ = hosts · C · load / (8 · mean size) per second
    (`workloads.md` §7a, the host links' capacity), times the time."""
    lam = hosts(p) * _core.parse_rate_bps(p["host_rate"]) * load / (8 * cdf_mean(workload))
    return max(1, math.ceil(lam * p["arrivals_ms"] / 1e3))


def fabric_ports(p: dict) -> list[dict]:
    """The leaf uplinks and spine downlinks as `{node, port}`. Ports are numbered per node in the order
    the leaf_spine builder lists links (`net/topology.rs`): a leaf's hosts first, then its uplinks to
    spine 0, 1, …; a spine's link to leaf 0, 1, …"""
    h = p["hosts_per_leaf"]
    return ([{"node": f"leaf{i}", "port": h + j} for i in range(p["leaves"]) for j in range(p["spines"])]
            + [{"node": f"spine{j}", "port": i} for j in range(p["spines"]) for i in range(p["leaves"])])


def secn2(rate: str) -> dict:
    s = _core.parse_rate_bps(rate) / 25e9
    kmin, kmax, pmax = SECN2_25G
    return {"kind": "red", "kmin": f"{kmin * s:.0f}B", "kmax": f"{kmax * s:.0f}B", "pmax": pmax, "non_ect": "pass"}


TRAINING = ("none", "local", "shared", "central", "from_scratch")


def where(p: dict, key: str) -> str:
    return f"experiments/acc/scales.toml [{p.get('scale', '…')}.{p.get('experiment', 'large_scale')}] {key}"


def model_path(p: dict) -> Path:
    """The preset's model file (relative to experiments/acc/), which must exist."""
    if not p.get("model"):
        raise ScenarioError(where(p, "model"), f"training = \"{p['training']}\" starts from a model: give its file")
    path = EXP / p["model"]
    if not path.is_file():
        raise ScenarioError(where(p, "model"), f"the ACC model `{path}` does not exist: pre-train one with `dcnlab train` "
                            "(experiments/acc/README.md) or point `model` at one")
    return path


def acc_changes(p: dict, start: dict, name: str) -> dict:
    """Overrides that add the ACC agents, every data queue starting at the static setting `start` and
    learning as the preset's `training` says; `name` is the scenario's name, to which the model's hash is
    added (a run's cache key is the scenario's hash, so a new model is a new run)."""
    if p["training"] not in TRAINING:
        raise ScenarioError(where(p, "training"), f"`{p['training']}`: give one of {', '.join(TRAINING)}")
    ctl = {"kind": "acc", "training": p["training"]} | dict(p.get("acc", {}))
    ch = {"switch.aqm": [{"kind": "droptail"}, copy.deepcopy(start)]}
    if p["training"] != "from_scratch":
        path = model_path(p)
        ctl["model"] = p["model"]
        ch["name"] = f"{name}, model {hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    if ctl.get("train_state"):
        # The central learner's starting state (README, "What makes online learning erode a good model"):
        # a new state file is a new run, as a new model is.
        state = EXP / ctl["train_state"]
        if not state.is_file():
            raise ScenarioError(where(p, "acc"), f"the training state `{state}` does not exist: write one with "
                                "`dcnlab train … --set 'switch.controller.save_train_state=\"FILE\"'` or remove `train_state`")
        ch["name"] = f"{ch.get('name', name)}, state {hashlib.sha256(state.read_bytes()).hexdigest()[:16]}"
    return ch | {"switch.controller": ctl}


def decisions(steps: pd.DataFrame) -> dict:
    """ACC's recorded decisions in brief: how many, how many distinct settings, mean Kmin/Kmax (KB) and Pmax."""
    if not len(steps):
        return {}
    s = settings(steps)
    return {"acc_decisions": len(steps), "acc_settings_used": int(s.drop_duplicates().shape[0]),
            "acc_kmin_kb": s["kmin"].mean() / 1e3, "acc_kmax_kb": s["kmax"].mean() / 1e3, "acc_pmax": s["pmax"].mean()}


def scheme_changes(scheme: str, p: dict) -> dict:
    """Overrides of the base scenario for one scheme. ACC starts every queue at SECN1 (spec §3: the
    scenario's static setting until the first decision) and learns as the preset's `training` says."""
    if scheme == "SECN1":
        return {"switch.aqm": [{"kind": "droptail"}, copy.deepcopy(SECN1)]}
    if scheme == "SECN2":
        ch = {"switch.aqm": [{"kind": "droptail"}, secn2(p["host_rate"])]}
        if p["fabric_rate"] != p["host_rate"]:
            # RED has one setting per queue class; the fabric ports get theirs at t = 0, before any packet.
            ch["switch.controller"] = {"kind": "schedule", "ports": fabric_ports(p), "queue": DATA_QUEUE,
                                       "changes": [{"at": "0us", "aqm": secn2(p["fabric_rate"])}]}
        return ch
    if scheme == "ACC":
        return acc_changes(p, SECN1, "acc large scale")
    fixed = FIXED.fullmatch(scheme)
    if fixed:
        # One of ACC's own settings (acc.md §3: absolute thresholds), fixed on every port — e.g. the setting
        # its reward prefers, to see what an agent that had converged to it would get.
        kmin, kmax, pmax = fixed.groups()
        if _bytes(kmin) > _bytes(kmax) or not 0 < float(pmax) <= 1:
            raise ScenarioError(where(p, "schemes"), f"fixed setting `{scheme}`: needs Kmin ≤ Kmax and 0 < Pmax ≤ 1")
        return {"switch.aqm": [{"kind": "droptail"}, SECN1 | {"kmin": kmin, "kmax": kmax, "pmax": float(pmax)}]}
    raise ScenarioError(where(p, "schemes"), f"unknown scheme `{scheme}`; the ACC experiment has: {', '.join(SCHEMES)}, "
                        "or a fixed RED setting written Kmin/Kmax/Pmax (e.g. 20KB/20KB/1.0)")


def _bytes(size: str) -> float:
    """A size FIXED matched ("20KB", "1.5MB"), in bytes (decimal units, as the core's)."""
    return float(size[:-1].rstrip("KMG")) * {"K": 1e3, "M": 1e6, "G": 1e9}.get(size[-2], 1.0)


def scenario(scheme: str, workload: str, load: float, seed: int, p: dict) -> dict:
    """The large-scale scenario for one scheme, workload, load and seed at preset `p`."""
    base = load_scenario(EXP / "large_scale.toml")
    stop_ms = p["warmup_ms"] + p["measure_ms"]
    ch = {
        "seed": seed,
        "warmup": f"{p['warmup_ms']}ms",
        "stop": {"all_flows_done": True, "max_time": f"{p['max_time_ms']}ms"},
        "topology.leaves": p["leaves"], "topology.spines": p["spines"],
        "topology.hosts_per_leaf": p["hosts_per_leaf"],
        "topology.host_link.rate": p["host_rate"], "topology.fabric_link.rate": p["fabric_rate"],
        "traffic.0.sizes": workload, "traffic.0.load": load, "traffic.0.flows": flow_count(p, workload, load),
        "record.controller_steps": bool(p.get("controller_steps", False)),
        "record.queue_sample_interval": f"{p['queue_sample_us']}us", "record.queues": "all",
        "record.sample_from": f"{p['warmup_ms']}ms", "record.sample_until": f"{stop_ms}ms",
    }
    return override(base, ch | scheme_changes(scheme, p))


def window(f: pd.DataFrame, p: dict) -> pd.DataFrame:
    """Flows that start in the measured window [warmup, warmup + measure)."""
    lo = p["warmup_ms"] * 1e3
    return f[(f["start_us"] >= lo) & (f["start_us"] < lo + p["measure_ms"] * 1e3)]


def fct_metrics(f: pd.DataFrame) -> dict:
    """The paper's four metrics (µs) over the finished flows, with the bins' flow counts and unfinished."""
    done = f[f["finished"]]
    mice = done.loc[done["size"] <= MICE, "fct_us"]
    eleph = done.loc[done["size"] >= ELEPHANT, "fct_us"]
    nan = float("nan")
    return {"flows": len(f), "unfinished": int((~f["finished"]).sum()),
            "overall_avg_us": float(done["fct_us"].mean()) if len(done) else nan,
            "mice_n": len(mice), "mice_avg_us": float(mice.mean()) if len(mice) else nan,
            "mice_p99_us": float(np.percentile(mice, 99)) if len(mice) else nan,
            "elephant_n": len(eleph), "elephant_avg_us": float(eleph.mean()) if len(eleph) else nan}


def delay_term(qlen_bytes) -> np.ndarray:
    """acc.md §4's D of queue lengths in bytes: 1 when empty, 0 at 1 MB or more, on a log scale."""
    q = np.asarray(qlen_bytes, dtype=float)
    return np.maximum(0.0, 1 - np.log2(1 + q / 1e3) / np.log2(1 + 1e6 / 1e3))


def sampled_reward(queues: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """acc.md §4's reward with its default weights, 0.5·T + 0.5·D, as a run's samples see it — whatever ran
    the queues, so a static setting's runs can be scored as an agent is: one row per switch port's sample
    of the data queue, T the link's utilisation over the sample (capped at 1), D its queue then. Sampled
    every `record.queue_sample_interval`, not every Δt, so it approximates what the agents are paid."""
    q = queues.loc[queues["queue"] == DATA_QUEUE, ["time_us", "node", "port", "bytes"]]
    m = q.merge(links[["time_us", "node", "port", "utilization"]], on=["time_us", "node", "port"])
    T = np.minimum(1.0, m["utilization"].to_numpy(dtype=float))
    D = delay_term(m["bytes"])
    return m.assign(T=T, D=D, reward=0.5 * T + 0.5 * D)


ACTION = re.compile(r"kmin: (\d+), kmax: (\d+), pmax: ([0-9.eE+-]+)")


def settings(steps: pd.DataFrame) -> pd.DataFrame:
    """The RED settings of recorded controller decisions: kmin, kmax (bytes) and pmax per row."""
    m = steps["action"].str.extract(ACTION)
    return pd.DataFrame({"kmin": m[0].astype(float), "kmax": m[1].astype(float), "pmax": m[2].astype(float)},
                        index=steps.index)
