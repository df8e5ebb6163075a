"""Verification of the candidate settings by simulation: the ECN♯ large-scale leaf-spine
(`experiments/ecn_sharp/large_scale.toml`) at the operator's link rate, the operator's RTT distribution
as per-flow extra host delay over the fabric's own base RTT, the workload at each load, every candidate
on the same flows (common random numbers), through the sweep cache."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..reproduce.common import run_jobs
from ..reproduce.ecn_sharp.common import EXP
from ..results import run, summary
from ..scenario import ScenarioError, load as load_scenario, override
from ..sweep import Runner, cached_result
from .inputs import RttDist
from .rules import Candidate

SHORT, LARGE = "(0B, 100KB]", "(10MB, inf]"  # the papers' buckets (results.BUCKETS)
SAMPLE = "50us"  # queue and link sample interval (a 20 µs one made a 128-host run at 30 % load hold 1.2 M rows a table)

TRANSPORT = {
    "dctcp": {"host.transport": {"kind": "tcp", "cc": "dctcp", "min_rto": "5ms"}},
    "ecn_star": {"host.transport": {"kind": "tcp", "cc": "reno", "ecn": True, "min_rto": "5ms"}},
    # As the ECN♯ + DCQCN reproduction (`reproduce/ecn_sharp/dcqcn.py`): RoCE with the DCQCN paper's
    # parameters over one lossless priority (PFC, dynamic XOFF in the 9 MB buffer).
    "dcqcn": {"host.transport": {"kind": "rdma", "cc": "dcqcn", "preset": "dcqcn_paper"}, "switch.pfc": {"priorities": [0]}},
}


def fabric_scenario(rate: str, link_delay: str, fabric: tuple[int, int, int], transport: str) -> dict:
    """The large-scale scenario with the operator's rate on every link, `link_delay` of propagation per
    link, `fabric` = (spines, leaves, hosts per leaf), the transport, no extra delay, every leaf port's
    queue and link sampled."""
    s, l, h = fabric
    link = {"rate": rate, "delay": link_delay}
    sc = override(load_scenario(EXP / "large_scale.toml"), {
        "name": "dcnlab tune", "topology.spines": s, "topology.leaves": l, "topology.hosts_per_leaf": h,
        "topology.host_link": link, "topology.fabric_link": link,
        "record": {"queue_sample_interval": SAMPLE, "queues": [{"node": f"leaf{i}", "port": p} for i in range(l) for p in range(h + s)]},
    } | TRANSPORT[transport])
    del sc["host"]["extra_delay"]
    return sc


def base_rtt_us(sc: dict) -> float:
    """The fabric's own base RTT between racks (a full segment out and its ACK back on the empty network,
    as the engine computes `flows.base_rtt_us`), from a one-flow run of the same fabric and transport."""
    h = sc["topology"]["hosts_per_leaf"]
    probe = override(sc, {"traffic": [{"kind": "flows", "list": [{"src": 0, "dst": h, "size": "1KB", "start": "0us"}]}],
                          "record": {}})
    return float(run(probe).flows["base_rtt_us"].iloc[0])


def extra_delay(dist: RttDist, base_us: float, fabric_desc: str, out: Path) -> dict:
    """`host.extra_delay`: the RTTs less the fabric's base RTT, per flow, as a CDF file under `out/rtt/`
    named by its content (so the run cache follows the content, not the path)."""
    if dist.points[0][0] < base_us:
        raise ScenarioError("--rtt", f"the smallest RTT of {dist.source} is {dist.points[0][0]:g} µs, below the simulated fabric's own "
                            f"base RTT of {base_us:.2f} µs ({fabric_desc}); give RTTs measured end to end, or a smaller --link-delay")
    # The operator's file is not named in it: the same RTTs from another file are the same runs.
    text = "# extra sending-host delay (µs, cumulative probability) = RTT − the fabric's base RTT " \
           f"{base_us:.4f} µs (dcnlab tune)\n" + "".join(f"{x:.4f} {f:.9f}\n" for x, f in dist.shifted(base_us))
    name = f"rtt/extra_{hashlib.sha256(text.encode()).hexdigest()[:12]}.txt"
    (out / "rtt").mkdir(parents=True, exist_ok=True)
    (out / name).write_text(text)
    return {"kind": "cdf", "path": name, "per": "flow"}


def jobs(base: dict, cands: list[Candidate], workload: str, loads: list[float], flows: int, seeds: int) -> list[tuple[dict, dict]]:
    """(scenario, labels) for every load × seed × candidate."""
    out = []
    for ld in loads:
        for seed in range(1, seeds + 1):
            for c in cands:
                sc = override(base, {"switch.aqm": c.aqm, "traffic.0.sizes": workload, "traffic.0.load": ld,
                                     "traffic.0.flows": flows, "seed": seed})
                out.append((sc, {"candidate": c.name, "load": ld, "seed": seed}))
    return out


def measure(job: tuple[dict, str, str]) -> dict:
    """One run's metrics (in the worker): short-flow (≤ 100 KB) p99 and mean FCT and p99 slowdown,
    large-flow (> 10 MB) mean FCT, the 99th percentile of every sampled leaf queue and the mean
    utilisation of the leaf uplinks — the capacity `load` refers to — while flows arrive (from 0 to the
    last flow's start: a setting that costs throughput leaves work for after it), and the simulated RTTs."""
    r = cached_result(job)
    s = summary(r)
    h = job[0]["topology"]["hosts_per_leaf"]
    until = r.flows["start_us"].max()
    q, ln = r.queues[r.queues["time_us"] <= until], r.links[r.links["time_us"] <= until]
    up = ln[ln["port"] >= h]
    rtt = r.flows["base_rtt_us"]
    return {
        "short_p99_us": s.loc[SHORT, "fct_p99"], "short_mean_us": s.loc[SHORT, "fct_mean"], "short_p99_slowdown": s.loc[SHORT, "sd_p99"],
        "large_mean_us": s.loc[LARGE, "fct_mean"], "all_mean_us": s.loc["all", "fct_mean"],
        "queue_p99_kb": float(np.percentile(q["bytes"], 99)) / 1000 if len(q) else np.nan,
        "uplink_util": float(up["utilization"].mean()) if len(up) else np.nan,
        "short_flows": int(s.loc[SHORT, "flows"]), "large_flows": int(s.loc[LARGE, "flows"]),
        "unfinished": int(s.loc["all", "unfinished"]), "drops": int(sum(r.meta.get("drops", {}).values())),
        "rtt_mean_us": float(rtt.mean()), "rtt_min_us": float(rtt.min()), "wall_s": r.meta.get("wall_s"),
    }


METRICS = ["short_p99_us", "large_mean_us", "queue_p99_kb", "uplink_util", "short_mean_us", "short_p99_slowdown",
           "all_mean_us", "unfinished", "drops"]


def simulate(todo: list[tuple[dict, dict]], out: Path, runner: Runner | None = None) -> pd.DataFrame:
    """The `jobs` through the sweep cache (`out/runs/<hash>`, relative paths from `out`) on `runner`
    (default: a process pool on all cores); one row per run: its labels and `measure`'s metrics."""
    return run_jobs(todo, out, Path(out).resolve(), runner, fn=measure)


def recommend(runs: pd.DataFrame, order: list[str], tolerance: float = 0.10) -> tuple[pd.DataFrame, str, str]:
    """Means over seeds per candidate and load, each candidate's ratio to the best at that load, and the
    recommendation: among the candidates whose large-flow mean FCT is, averaged over the loads, within
    `tolerance` of the best (throughput kept — ECN♯'s "similar FCT for large flows", §5.2), the one with
    the lowest short-flow p99 FCT relative to the best, averaged over the loads; ties go to the earlier
    candidate. Without large flows (a workload without flows over 10 MB) only the short-flow p99 counts.
    Returns (table, recommended name, why)."""
    t = runs.groupby(["candidate", "load"], sort=False)[METRICS].mean().reset_index()
    t["candidate"] = pd.Categorical(t["candidate"], order, ordered=True)
    t = t.sort_values(["candidate", "load"]).reset_index(drop=True)
    for m in ("short_p99_us", "large_mean_us"):
        t[m.replace("_us", "_x")] = t[m] / t.groupby("load")[m].transform("min")
    score = t.groupby("candidate", observed=True)[["short_p99_x", "large_mean_x"]].mean()
    has_large = score["large_mean_x"].notna().any()  # a candidate none of whose large flows finished is out
    ok = score[score["large_mean_x"] <= 1 + tolerance + 1e-12] if has_large else score
    if ok.empty:  # no candidate keeps throughput at every load: take the one closest to it
        ok = score[score["large_mean_x"] == score["large_mean_x"].min()]
    best = min(ok.index, key=lambda c: (round(ok.loc[c, "short_p99_x"], 9), order.index(c)))
    why = (f"lowest short-flow p99 ({score.loc[best, 'short_p99_x']:.2f}× the best, mean over loads)"
           + (f" among the candidates whose large-flow mean FCT is within {tolerance:.0%} of the best "
              f"({', '.join(f'{c} {v:.2f}×' for c, v in score['large_mean_x'].items())})" if has_large else
              " (no flow over 10 MB in this workload, so throughput is not compared)"))
    t["candidate"] = t["candidate"].astype(str)
    t.insert(0, "recommended", t["candidate"] == best)
    return t, str(best), why


def describe_fabric(rate: str, link_delay_us: float, fabric: tuple[int, int, int]) -> str:
    s, l, h = fabric
    return f"leaf-spine of {s} spines × {l} leaves × {h} hosts, every link {rate} with {link_delay_us:g} µs of propagation"
