"""§5.4.4 (Fig. 21): ECN♯ with DCQCN on the large-scale scenario (128 hosts, 80–240 µs RTTs), web search,
normalised to DCQCN. The hosts run RoCE with DCQCN (`dcqcn_paper`) over a lossless fabric (PFC on the one
priority, dynamic XOFF in the 9 MB buffer); the switches mark with DCQCN's RED on the instantaneous queue,
or with ECN♯ whose instantaneous part is that same RED ramp (`ins_max`, `ins_pmax`: §3.5, "change the
original cut-off marking into probabilistic marking, and keep the marking based on persistent congestion
unchanged") and whose persistent part is the large-scale experiment's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, table
from .common import PAPER, plot_normalised
from .large_scale import normalised_run

# DCQCN's RED "derived based on high percentile RTTs" (§5.4.4): Kmax at the tail threshold of the
# large-scale RTTs (275 KB = C · p90 RTT, as DCTCP-RED-Tail), Kmin and Pmax in the DCQCN paper's
# proportions (5 KB / 200 KB, 1 %). ECN♯'s instantaneous ramp is the same curve in sojourn time at 10 Gbps
# (5 KB = 4 µs, 275 KB = 220 µs); its persistent part is the large-scale ECN♯'s (137 µs over 220 µs), and
# the 10 µs variant of the authors' drivers.
_LOSSLESS = {
    "host.transport": {"kind": "rdma", "cc": "dcqcn", "preset": "dcqcn_paper"},
    "switch.pfc": {"priorities": [0]},
}
_RED = {"kind": "red", "kmin": "5KB", "kmax": "275KB", "pmax": 0.01, "non_ect": "pass"}
_SHARP = {"kind": "ecn_sharp", "ins_target": "4us", "ins_max": "220us", "ins_pmax": 0.01, "pst_interval": "220us"}
DCQCN_SCHEMES = {
    "DCQCN": _LOSSLESS | {"switch.aqm": _RED},
    "DCQCN+ECN#": _LOSSLESS | {"switch.aqm": _SHARP | {"pst_target": "137us"}},
    "DCQCN+ECN# (10 µs target)": _LOSSLESS | {"switch.aqm": _SHARP | {"pst_target": "10us"}},
}
PAPER_DCQCN = [
    ("web_search", "short avg", "DCQCN+ECN#", 0.9, 1 - 0.149, "up to 14.9% lower short-flow FCT"),
]


def dcqcn(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
          **overrides) -> pd.DataFrame:
    return normalised_run("dcqcn", DCQCN_SCHEMES, "DCQCN", preset(PAPER, "dcqcn", scale, **overrides), out, runner)


def runs(p: dict) -> int:
    return len(DCQCN_SCHEMES) * len(p["workloads"]) * len(p["loads"]) * p["seeds"]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    norm = normalised_run("dcqcn", DCQCN_SCHEMES, "DCQCN", p, out, runner)
    figs = plot_normalised(norm, out, "dcqcn", "DCQCN and DCQCN + ECN♯", "DCQCN", paper=PAPER_DCQCN)
    return ["<h2>ECN♯ + DCQCN (Fig. 21)</h2><p>normalised to DCQCN (RED 5/275 KB, 1 %) on the same flows over PFC; "
            "paper: overall unchanged, short flows up to 14.9 % faster.</p>", table(norm)] + imgs(figs)
