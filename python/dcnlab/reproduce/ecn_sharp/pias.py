"""§5.4.5 (Fig. 22): PIAS with DCTCP-RED-Tail per queue against PIAS with ECN♯ on the large-scale
scenario, web search."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, table
from .common import PAPER, plot_normalised
from .large_scale import LARGE_SCHEMES, normalised_run

# PIAS as in the authors' example: one demotion threshold of 100 packets, two strict-priority queues, the
# same AQM on both.
_PIAS = {"switch.queues": 2, "host.pias": {"thresholds": ["100pkt"]}}
PIAS_SCHEMES = {
    "PIAS": _PIAS | {"switch.aqm": LARGE_SCHEMES["DCTCP-RED-Tail"]},
    "PIAS+ECN#": _PIAS | {"switch.aqm": LARGE_SCHEMES["ECN#"]},
    "PIAS+ECN# (10 µs target)": _PIAS | {"switch.aqm": LARGE_SCHEMES["ECN# (10 µs target)"]},
}


def pias(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
         **overrides) -> pd.DataFrame:
    return normalised_run("pias", PIAS_SCHEMES, "PIAS", preset(PAPER, "pias", scale, **overrides), out, runner)


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    norm = normalised_run("pias", PIAS_SCHEMES, "PIAS", p, out, runner)
    figs = plot_normalised(norm, out, "pias", "PIAS and PIAS + ECN♯", "PIAS")
    return ["<h2>ECN♯ + PIAS (Fig. 22)</h2><p>normalised to PIAS (DCTCP-RED-Tail per queue); paper: overall unchanged, "
            "short flows up to 10.1 % faster.</p>", table(norm)] + imgs(figs)
