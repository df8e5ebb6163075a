"""The operator's ECN advisor (`dcnlab tune`): settings by the papers' rules from a link rate and an RTT
distribution, verified by simulating every candidate on a leaf-spine built from the inputs.

    >>> from dcnlab.tune import tune
    >>> advice = tune("10Gbps", "rtts.txt", "dctcp", "web_search", loads=[0.3, 0.6, 0.9], out="results/tune")
    >>> advice.recommended, advice.table

`rules` holds the formulas (each citing its paper), `inputs` reads and checks the inputs, `verify` builds
and runs the scenarios, `report` writes the table, the figure and the HTML page. `docs/tune.md`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..sweep import Runner
from . import inputs, rules, verify
from .report import write_outputs
from .rules import LAMBDA, TAIL_PERCENTILE, Candidate, RttStats

__all__ = ["Advice", "Candidate", "RttStats", "plan", "tune"]


@dataclass
class Advice:
    """What `tune` found: the inputs' RTT statistics, the candidates, and when verified the trade-off
    table (one row per candidate and load, metrics averaged over seeds) with the recommendation."""

    rate: str
    transport: str
    workload: str
    stats: RttStats
    lam: float
    candidates: list[Candidate]
    rtt_source: str
    dist: inputs.RttDist | None = field(default=None, repr=False)
    fabric: str = ""
    base_rtt_us: float | None = None
    loads: list[float] = field(default_factory=list)
    flows: int = 0
    seeds: int = 0
    scenario: dict | None = None
    table: pd.DataFrame | None = None
    runs: pd.DataFrame | None = None
    recommended: str | None = None
    why: str = ""
    wall_s: float = 0.0
    files: list[Path] = field(default_factory=list)

    def settings(self) -> dict:
        """Every candidate's `switch.aqm` table with its rule and source, and the recommendation."""
        return {"rate": self.rate, "transport": self.transport, "lambda": self.lam,
                "rtt": {"source": self.rtt_source, "min_us": self.stats.min_us, "mean_us": self.stats.mean_us,
                        f"p{self.stats.percentile:g}_us": self.stats.tail_us, "max_us": self.stats.max_us},
                "recommended": self.recommended, "why": self.why,
                "candidates": {c.name: {"switch.aqm": c.aqm, "rule": c.rule, "source": c.source, "notes": c.notes}
                               for c in self.candidates}}


def plan(rate: str, rtt: str | Path, transport: str, workload: str = "web_search", lam: float = LAMBDA,
         percentile: float = TAIL_PERCENTILE) -> Advice:
    """The rules alone (no simulation): the inputs checked, the RTT statistics and the candidates."""
    bps = inputs.rate_bps(rate)
    transport = inputs.transport(transport)
    workload = inputs.workload(workload)
    if not 0 < percentile < 100:
        raise inputs.ScenarioError("--percentile", f"{percentile:g} is not in (0, 100); ECN♯ §2.3 uses 90")
    if not lam > 0:
        raise inputs.ScenarioError("--lam", f"{lam:g} must be greater than zero (1 for ECN♯'s numbers; DCTCP's bound is 1/7)")
    dist = inputs.read_rtt(rtt)
    stats = dist.stats(percentile)
    return Advice(rate=rate, transport=transport, workload=workload, stats=stats, lam=lam,
                  candidates=rules.candidates(stats, bps, transport, lam), rtt_source=dist.source, dist=dist)


def tune(rate: str, rtt: str | Path, transport: str, workload: str = "web_search", loads=(0.3, 0.6, 0.9),
         flows: int = 2000, seeds: int = 1, out: str | Path = "results/tune", runner: Runner | None = None,
         simulate: bool = True, lam: float = LAMBDA, percentile: float = TAIL_PERCENTILE, tolerance: float = 0.10,
         fabric: str = "8x8x16", link_delay: str = "1us", on_plan=None) -> Advice:
    """The candidates by the rules, then (unless `simulate` is false) each simulated at every load × seed
    through `runner` (default: a process pool on all cores; anything with `map(fn, jobs)`), cached under
    `out/runs/`. Writes `settings.json`, and with verification `tune.csv`, `runs.csv`, `tune.png` and
    `report.html` under `out`. `on_plan(advice, jobs)` is called once the runs are known, before anything
    is built (the command line checks their memory there; the jobs have no extra delay yet)."""
    t0 = time.perf_counter()
    loads = inputs.loads(loads if isinstance(loads, str) else ",".join(str(x) for x in loads))
    if flows < 1 or seeds < 1:
        raise inputs.ScenarioError("--flows" if flows < 1 else "--seeds", "must be at least 1")
    if not tolerance >= 0:
        raise inputs.ScenarioError("--tolerance", f"{tolerance:g} must be ≥ 0, e.g. 0.1 for 10 %")
    shape = inputs.fabric(fabric)
    delay_us = inputs.time_us(link_delay, "--link-delay")
    adv = plan(rate, rtt, transport, workload, lam, percentile)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if simulate:
        base = verify.fabric_scenario(rate, link_delay, shape, adv.transport)
        adv.fabric = verify.describe_fabric(rate, delay_us, shape)
        adv.loads, adv.flows, adv.seeds = loads, flows, seeds
        if on_plan:  # before anything is built, the one-flow probe included
            on_plan(adv, verify.jobs(base, adv.candidates, adv.workload, loads, flows, seeds))
        adv.base_rtt_us = verify.base_rtt_us(base)
        base["host"]["extra_delay"] = verify.extra_delay(adv.dist, adv.base_rtt_us, adv.fabric, out)
        adv.scenario = base
        todo = verify.jobs(base, adv.candidates, adv.workload, loads, flows, seeds)
        adv.runs = verify.simulate(todo, out, runner)
        adv.table, adv.recommended, adv.why = verify.recommend(adv.runs, [c.name for c in adv.candidates], tolerance)
    adv.wall_s = time.perf_counter() - t0
    adv.files = write_outputs(adv, out)
    return adv
