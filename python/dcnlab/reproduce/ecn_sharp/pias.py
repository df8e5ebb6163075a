"""§5.4.5 (Fig. 22): PIAS with DCTCP-RED-Tail on every queue against PIAS with ECN♯ on every queue, on the
large-scale scenario of §5.3 ("We use the experiment settings in Section 5.3"), web search, normalised to
PIAS with DCTCP-RED-Tail.

PIAS is run as its authors' simulations run it (`shared/spec/aqm.md` §12, from HKUST-SING/PIAS-NS2
`scripts/run_pias_dctcp.py` and `run_pias_vl2.py`): 8 strict-priority queues per port and 7 demotion
thresholds that depend on the workload and the load. The scripts tabulate them for loads 0.5–0.9; a load
between uses the nearest column, a load below 0.5 the 0.5 column (the scripts give none lower). The
thresholds are in 1460 B packets, the payload of a segment here too, so α × 1460 is the bytes a flow has
sent when it is demoted (web search: α1 = 1.1–1.5 MB, so every flow ≤ 100 KB stays in queue 0). The ECN♯
paper does not state its PIAS setting; its authors' ns-3 example uses one threshold of 100 packets and two
queues (aqm.md §12 [NOTE]) — `experiments/ecn_sharp/README.md` §7 says what that setting gives and why it
is not run any more."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...scenario import load as load_scenario
from ...sweep import Runner, _run_one, cached_result
from .. import preset
from ..common import grid, imgs, run_jobs, table
from .common import EXP, PAPER, normalise, plot_normalised
from .large_scale import LARGE_SCHEMES

MSS = 1460
QUEUES = 8
# Demotion thresholds α1…α7 in packets of 1460 B, per workload and load (aqm.md §12).
THRESHOLDS = {
    "web_search": {
        0.9: (759, 1132, 1456, 1737, 2010, 2199, 2325),
        0.8: (909, 1329, 1648, 1960, 2143, 2337, 2484),
        0.7: (999, 1305, 1564, 1763, 1956, 2149, 2309),
        0.6: (956, 1381, 1718, 2028, 2297, 2551, 2660),
        0.5: (1059, 1412, 1643, 1869, 2008, 2115, 2184),
    },
    "data_mining": {
        0.9: (750, 1083, 1416, 13705, 14952, 21125, 28253),
        0.8: (745, 1083, 1391, 13689, 14936, 21149, 27245),
        0.7: (907, 1301, 1619, 12166, 12915, 21313, 26374),
        0.6: (840, 1232, 1617, 11950, 12238, 21494, 25720),
        0.5: (805, 1106, 1401, 10693, 11970, 21162, 22272),
    },
}
# Queue occupancy is sampled on the busiest switch ports (§7 of the README reads it per priority).
_RECORD = {"record.queue_sample_interval": "100us", "record.queues": "busiest", "record.busiest": 16}
# The AQMs of the large-scale experiment, one instance per queue: Tail 275 KB; ECN♯ by the rule of thumb
# (220/137/220 µs) and with the 10 µs persistent target of the authors' drivers (README §4: the paper's
# simulated gains match that setting).
_AQMS = {
    "PIAS": LARGE_SCHEMES["DCTCP-RED-Tail"],
    "PIAS+ECN#": LARGE_SCHEMES["ECN#"],
    "PIAS+ECN# (10 µs target)": LARGE_SCHEMES["ECN# (10 µs target)"],
}
REF = "PIAS"


def thresholds(workload: str, load: float) -> list[int]:
    """α1…α7 in bytes for a workload at a load: the reference scripts' column nearest the load."""
    cols = THRESHOLDS[workload]
    col = min(cols, key=lambda c: (abs(c - load), -c))
    return [a * MSS for a in cols[col]]


def schemes(workload: str, load: float, split: bool = False) -> dict:
    """The schemes at one (workload, load): 8 queues, that point's thresholds, one AQM on every queue.
    `split` adds the 10 µs ECN♯ on queue 0 only and on queues 1–7 only (Tail on the others), which tells
    where its gain and its cost come from (README §7)."""
    pias = {"switch.queues": QUEUES, "host.pias": {"thresholds": [f"{b}B" for b in thresholds(workload, load)]}}
    out = {name: pias | _RECORD | {"switch.aqm": aqm} for name, aqm in _AQMS.items()}
    if split:
        tail, sharp = _AQMS["PIAS"], _AQMS["PIAS+ECN# (10 µs target)"]
        out["PIAS+ECN# (10 µs) on queue 0"] = pias | _RECORD | {"switch.aqm": [sharp] + [tail] * (QUEUES - 1)}
        out["PIAS+ECN# (10 µs) on queues 1–7"] = pias | _RECORD | {"switch.aqm": [tail] + [sharp] * (QUEUES - 1)}
    return out


def _run_pias(job) -> dict:
    """The summary row of a run, plus per queue the mean packets over the samples of the sampled switch
    ports (`q0_pkts` … `q7_pkts`) and the fraction of flows demoted at least once."""
    row = _run_one(job)
    r = cached_result(job)
    q = r.queues
    q = q[~q["node"].str.startswith("h")]
    for k in range(QUEUES):
        row[f"q{k}_pkts"] = float(q.loc[q["queue"] == k, "packets"].mean()) if len(q) else 0.0
    row["q_max_busy"] = int(q.loc[q["packets"] > 0, "queue"].max()) if (q["packets"] > 0).any() else -1
    t = job[0]["host"].get("pias", {}).get("thresholds", ["inf"])
    row["demoted"] = float((r.flows["size"] > float(t[0].removesuffix("B"))).mean())
    return row


def run(p: dict, out: str | Path, runner: Runner | None, split: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The schemes at preset `p`; writes `pias_runs.csv` and `pias_normalised.csv`. Returns (runs,
    normalised)."""
    out = Path(out)
    base = load_scenario(EXP / "large_scale.toml")
    jobs = [j for wl in p["workloads"] for ld in p["loads"]
            for j in grid(base, schemes(wl, ld, split), [wl], [ld], p["flows"], p["seeds"])]
    raw = run_jobs(jobs, out, EXP, runner, fn=_run_pias)
    out.mkdir(parents=True, exist_ok=True)
    raw.to_csv(out / "pias_runs.csv", index=False)
    norm = normalise(raw, keys=("workload", "load", "seed"), ref=REF)
    norm.to_csv(out / "pias_normalised.csv", index=False)
    return raw, norm


def pias(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
         split: bool = False, **overrides) -> pd.DataFrame:
    """The experiment at a scale's preset, with keyword overrides of its keys; the normalised table."""
    return run(preset(PAPER, "pias", scale, **overrides), out, runner, split)[1]


def runs(p: dict) -> int:
    return len(_AQMS) * len(p["workloads"]) * len(p["loads"]) * p["seeds"]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, norm = run(p, out, runner)
    # The paper states no load for its "up to 10.1 %", so there is no point to plot.
    figs = plot_normalised(norm, out, "pias", "PIAS (8 queues) and PIAS + ECN♯", REF)
    cols = [f"q{k}_pkts" for k in range(QUEUES)] + ["demoted"]
    occ = raw.groupby(["workload", "load", "scheme"], sort=False)[cols].mean().reset_index()
    return ["<h2>ECN♯ + PIAS (Fig. 22)</h2><p>PIAS with 8 strict-priority queues and the PIAS scripts' thresholds "
            "for the workload and load; normalised to PIAS with DCTCP-RED-Tail on every queue; paper: overall "
            "unchanged, short flows up to 10.1 % faster.</p>", table(norm),
            "<p>mean packets per queue on the busiest switch ports, and the fraction of flows demoted</p>",
            table(occ)] + imgs(figs)
