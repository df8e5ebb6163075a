"""What the TCD experiments share: the compared schemes (DCQCN and TIMELY, each plain, with TCD, and
DCQCN with PCN's NP-ECN), the victim-flow scenario of `spec/tcd.md` §7.1 on the topology that
`crates/sim/tests/tcd.rs` uses (`experiments/tcd/victim_topology.toml`), and the metrics: per-flow mark
classes (congested / undetermined / clean), time in each TCD state per port, throughput from the flow
trace."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd

from .. import experiments_dir

PAPER = "tcd"
EXP = experiments_dir(PAPER)

# DCQCN's RED as the paper's CEE experiments set it (spec/tcd.md §7.2: Kmin 5 KB, Kmax 200 KB, Pmax 1 %),
# marked at dequeue like TCD's inner marker so the two differ only in the ternary state.
RED = {"kind": "red", "kmin": "5KB", "kmax": "200KB", "pmax": 0.01, "non_ect": "pass", "mark_at": "dequeue"}
TCD = {"kind": "tcd"}
NP_ECN = {"kind": "np_ecn"}

# Scheme → (transport table, AQM of the lossless data queue). TIMELY ignores ECN; its plain run keeps RED
# on the switch (the marks are counted, never acted on). NP-ECN is an ECN detector, so it is compared
# under DCQCN only.
SCHEMES: dict[str, tuple[dict, dict]] = {
    "DCQCN": ({"kind": "rdma", "cc": "dcqcn"}, RED),
    "DCQCN+TCD": ({"kind": "rdma", "cc": "dcqcn", "tcd": True}, TCD),
    "DCQCN+NP-ECN": ({"kind": "rdma", "cc": "dcqcn"}, NP_ECN),
    "TIMELY": ({"kind": "rdma", "cc": "timely", "preset": "timely_ref"}, RED),
    "TIMELY+TCD": ({"kind": "rdma", "cc": "timely", "preset": "timely_ref", "tcd": True}, TCD),
}

# Host numbering of victim_topology.toml.
A = list(range(15))            # burst senders A0–A14, under T2
S0, S1, R0, R1 = 15, 16, 17, 18
B = [19, 20, 21, 22]           # the fairness test's long-flow senders, on L0
T0, T1, T2, L0 = "s0", "s1", "s2", "s3"  # switch names, as the records' `node` column gives them
SMALL, LARGE = 10_000, 1_000_000  # the paper's victim bins: < 10 KB and > 1 MB


def _port_numbers() -> dict[tuple[str, str], int]:
    """(node, peer) → the node's port number, counted as the engine does: each node numbers its links
    in the order the topology file lists them."""
    import tomllib

    with open(EXP / "victim_topology.toml", "rb") as f:
        links = tomllib.load(f)["links"]
    count: dict[str, int] = {}
    out = {}
    for ln in links:
        for a, b in ((ln["a"], ln["b"]), (ln["b"], ln["a"])):
            out[(a, b)] = count.get(a, 0)
            count[a] = count.get(a, 0) + 1
    return out


_PORTS = _port_numbers()
# (node, port): P3 = T2 → R1 (the incast port), P2 = L0 → T2 (the port PFC pauses).
P3 = (T2, _PORTS[(T2, "h18")])
P2 = (L0, _PORTS[(L0, T2)])


def us(t: float) -> str:
    return f"{t:g}us"


def victim_scenario(scheme: str, p: dict, fairness: bool = False) -> dict:
    """The victim-flow scenario for one scheme and preset `p`.

    F1 (S1 → R1, long-lived) from 0; every `burst_period_us` from `burst_from_us` to `burst_to_us`, A0–A14
    each send `burst` to R1; victims S0 → R0 from `victim_from_us` to `victim_to_us`: a `small_size` flow
    every `small_every_us` and a `large_size` flow every `large_every_us`. With `fairness`, no victims but
    B0–B3 each send a long-lived flow to R0 from the first burst (§5.2.4). Data on lossless priority 1 (its
    queue takes the scheme's AQM), ACKs and CNPs on 0; PFC XOFF `xoff` (a size or "dynamic").
    Optional preset keys: `preset` (DCQCN preset), `transport` (extra transport keys), `aqm` (extra AQM
    keys merged into the scheme's), `pfc` (extra PFC keys)."""
    transport, aqm = SCHEMES[scheme]
    transport = copy.deepcopy(transport)
    if transport["cc"] == "dcqcn" and p.get("preset"):
        transport["preset"] = p["preset"]
    transport |= copy.deepcopy(p.get("transport", {}))
    aqm = copy.deepcopy(aqm) | (copy.deepcopy(p.get("aqm", {})) if aqm["kind"] != "red" else {})
    flows = [{"src": S1, "dst": R1, "size": "inf", "start": "0us", "tag": "f1"}]
    t = p["burst_from_us"]
    while t < p["burst_to_us"]:
        flows += [{"src": a, "dst": R1, "size": p["burst"], "start": us(t), "tag": "burst"} for a in A]
        t += p["burst_period_us"]
    if fairness:
        flows += [{"src": b, "dst": R0, "size": "inf", "start": us(p["burst_from_us"]), "tag": f"b{i}"}
                  for i, b in enumerate(B)]
    else:
        v, k = p["victim_from_us"], 0
        while v < p["victim_to_us"]:
            flows.append({"src": S0, "dst": R0, "size": p["small_size"], "start": us(v), "tag": "victim"})
            if (v - p["victim_from_us"]) % p["large_every_us"] == 0:
                flows.append({"src": S0, "dst": R0, "size": p["large_size"], "start": us(v), "tag": "victim"})
            k += 1
            v = p["victim_from_us"] + k * p["small_every_us"]
    for f in flows:
        f["priority"] = 1
    pfc = {"priorities": [1], "xoff": p["xoff"]} | copy.deepcopy(p.get("pfc", {}))
    sc = {
        "name": f"tcd victim {scheme}",
        "seed": p.get("seed", 3),
        "stop": {"time": us(p["stop_us"])},
        "topology": {"kind": "file", "path": "victim_topology.toml"},
        "switch": {"buffer": p.get("buffer", "12MB"), "queues": 2, "aqm": [{"kind": "droptail"}, aqm], "pfc": pfc},
        "host": {"transport": transport},
        "traffic": [{"kind": "flows", "list": flows}],
        "record": {"trace_interval": us(p.get("trace_interval_us", 100))},
    }
    if fairness:
        sc["record"]["trace_tags"] = ["f1"] + [f"b{i}" for i in range(len(B))]
    return sc


def mark_classes(f: pd.DataFrame) -> pd.Series:
    """Each flow's class from its marks (spec/tcd.md §7.4): congested (saw CE), undetermined (saw UE,
    never CE), clean."""
    return pd.Series(np.where(f["ce_marks"] > 0, "congested", np.where(f["ue_marks"] > 0, "undetermined", "clean")),
                     index=f.index)


def state_at(states: pd.DataFrame, node: str, port: int, t_us: float, queue: int = 1) -> str:
    s = states[(states["node"] == node) & (states["port"] == port) & (states["queue"] == queue) & (states["time_us"] <= t_us)]
    return str(s["state"].iloc[-1]) if len(s) else "non_congestion"


def state_shares(states: pd.DataFrame, node: str, port: int, a_us: float, b_us: float, queue: int = 1) -> dict[str, float]:
    """Share of [a, b) that (node, port, queue) spent in each TCD state, from `port_states` (every state
    change; before the first, non-congestion)."""
    s = states[(states["node"] == node) & (states["port"] == port) & (states["queue"] == queue)].sort_values("time_us")
    cur, since = state_at(states, node, port, a_us, queue), a_us
    tot = {"congestion": 0.0, "non_congestion": 0.0, "undetermined": 0.0}
    for t, st in zip(s["time_us"], s["state"]):
        if a_us < t < b_us:
            tot[cur] += t - since
            cur, since = str(st), t
    tot[cur] += b_us - since
    return {k: v / (b_us - a_us) for k, v in tot.items()}


def delivered(trace: pd.DataFrame) -> pd.DataFrame:
    """Delivered bytes, one column per traced flow, one row per trace time (µs)."""
    return (trace.pivot_table(index="time_us", columns="flow_id", values="delivered_bytes", aggfunc="last")
            .sort_index().ffill().fillna(0))


def rate_gbps(trace: pd.DataFrame) -> pd.DataFrame:
    """Each traced flow's goodput (Gb/s) over every trace interval, indexed by the interval's end (µs)."""
    d = delivered(trace)
    return d.diff().iloc[1:].div(np.diff(d.index.to_numpy()) * 1e-6, axis=0) * 8 / 1e9


def out_path(out) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out
