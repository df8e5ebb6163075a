"""§5.4.2 (Fig. 18): ECN♯ with pst_target / pst_interval around the rule of thumb on the large-scale
scenario, normalised to the rule of thumb."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...sweep import Runner
from .. import preset
from ..common import imgs, table
from .common import PAPER, plot_normalised
from .large_scale import LARGE_SCHEMES, normalised_run

# The paper does not list its values.
SENSITIVITY = {
    "rule of thumb (137 µs / 220 µs)": LARGE_SCHEMES["ECN#"],
    "pst_interval 110 µs": LARGE_SCHEMES["ECN#"] | {"pst_interval": "110us"},
    "pst_target 110 µs": LARGE_SCHEMES["ECN#"] | {"pst_target": "110us"},
    "pst_target 165 µs": LARGE_SCHEMES["ECN#"] | {"pst_target": "165us"},
}
REF = next(iter(SENSITIVITY))


def sensitivity(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
                **overrides) -> pd.DataFrame:
    return normalised_run("sensitivity", SENSITIVITY, REF, preset(PAPER, "sensitivity", scale, **overrides), out, runner)


def runs(p: dict) -> int:
    return len(SENSITIVITY) * len(p["workloads"]) * len(p["loads"]) * p["seeds"]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    norm = normalised_run("sensitivity", SENSITIVITY, REF, p, out, runner)
    figs = plot_normalised(norm, out, "sensitivity", "ECN♯ parameter sensitivity", REF)
    return [f"<h2>Parameter sensitivity (Fig. 18)</h2><p>normalised to ECN♯ with {REF}; paper: overall FCT within 1 % "
            "(web search) and 0.2 % (data mining).</p>", table(norm)] + imgs(figs)
