"""RTT variation helpers: the base-RTT distribution of a run's flows, and the marking thresholds the
papers derive from it.

ECN♯ (§2.3, §3.4) and DCTCP set the instantaneous marking threshold from an RTT with K = λ·C·RTT
(equivalently T = λ·RTT as a sojourn time): "Tail" uses a high percentile (the 90th) of the RTT
distribution, "AVG" its mean. ECN♯'s rule of thumb: ins_target from the 90th-percentile RTT,
pst_interval around the same high-percentile RTT, pst_target ≥ λ·mean RTT.
"""

from __future__ import annotations

from typing import Union

import numpy as np
import pandas as pd

from . import _core
from .results import Result

Flows = Union[Result, pd.DataFrame]


def _rtts(flows: Flows) -> np.ndarray:
    f = flows.flows if isinstance(flows, Result) else flows
    return f["base_rtt_us"].to_numpy(dtype=float)


def stats(flows: Flows) -> dict:
    """Min, mean, median, 90th and 99th percentile and max of the flows' base RTTs (µs): a full segment
    out and its ACK back on the empty network, extra host delays included."""
    r = _rtts(flows)
    return {
        "min": float(r.min()),
        "mean": float(r.mean()),
        "p50": float(np.percentile(r, 50)),
        "p90": float(np.percentile(r, 90)),
        "p99": float(np.percentile(r, 99)),
        "max": float(r.max()),
        "variation": float(r.max() / r.min()),
    }


def threshold_bytes(rtt_us: float, rate: Union[str, float], lam: float = 1.0) -> float:
    """K = λ · C · RTT in bytes, for a link rate given as "10Gbps" or in bits per second."""
    bps = _core.parse_rate_bps(rate) if isinstance(rate, str) else float(rate)
    return lam * bps * rtt_us * 1e-6 / 8.0


def tail_avg(flows: Flows, rate: Union[str, float], lam: float = 1.0, percentile: float = 90.0) -> dict:
    """DCTCP-RED thresholds: "tail" from the given percentile RTT (default 90th), "avg" from the mean."""
    r = _rtts(flows)
    return {
        "tail": threshold_bytes(float(np.percentile(r, percentile)), rate, lam),
        "avg": threshold_bytes(float(r.mean()), rate, lam),
    }


def ecn_sharp_rule_of_thumb(flows: Flows, lam: float = 1.0, percentile: float = 90.0) -> dict:
    """ECN♯ parameters (µs) by §3.4: ins_target = λ·p90 RTT, pst_interval = p90 RTT, pst_target = λ·mean RTT."""
    r = _rtts(flows)
    p = float(np.percentile(r, percentile))
    return {"ins_target_us": lam * p, "pst_interval_us": p, "pst_target_us": lam * float(r.mean())}
