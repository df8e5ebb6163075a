"""Paper reproductions: `dcnlab reproduce PAPER [--scale NAME] [--only A,B]`.

A paper is a package `dcnlab/reproduce/<paper>/` whose `__init__.py` names its experiments in
`EXPERIMENTS` (experiment name → section function, one module per experiment) and gives a `TITLE`. Its
scale presets are data: `experiments/<paper>/scales.toml`, one table per scale and experiment
(`[small.testbed]`, `[paper.testbed]`, …). Adding a paper is that package, that file and one line here.
"""

from __future__ import annotations

import html
import importlib
import time
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Callable

from .common import ROOT

# Paper name → its package. One line per paper.
PAPERS = {
    "ecn_sharp": "dcnlab.reproduce.ecn_sharp",
    "validation": "dcnlab.reproduce.validation",
    "acdc": "dcnlab.reproduce.acdc",
    "tcd": "dcnlab.reproduce.tcd",
    "acc": "dcnlab.reproduce.acc",
}


class UnknownName(ValueError):
    """A paper, scale or experiment name that does not exist; the message lists the ones that do."""


def paper(name: str) -> ModuleType:
    """The package of a paper."""
    if name not in PAPERS:
        raise UnknownName(f"unknown paper `{name}`; reproductions exist for: {', '.join(PAPERS)}")
    return importlib.import_module(PAPERS[name])


def experiments_dir(name: str) -> Path:
    """`experiments/<paper>/`: the paper's scenarios, presets and README."""
    return ROOT / "experiments" / name


def scales(name: str) -> dict[str, dict[str, dict]]:
    """Scale name → experiment → preset table, from `experiments/<paper>/scales.toml`."""
    with open(experiments_dir(name) / "scales.toml", "rb") as f:
        return tomllib.load(f)


def preset(name: str, experiment: str, scale: str, **overrides) -> dict:
    """One experiment's preset at a scale, with keyword overrides (None means "keep the preset"), the
    scale's name under `scale` and the experiment's under `experiment` (so errors can name the table)."""
    table = scales(name)
    if scale not in table:
        raise UnknownName(f"`--scale`: unknown scale `{scale}`; {name} has: {', '.join(table)}")
    if experiment not in table[scale]:
        raise UnknownName(f"scale `{scale}` of {name} has no preset for `{experiment}` (experiments/{name}/scales.toml)")
    return table[scale][experiment] | {k: v for k, v in overrides.items() if v is not None} | {"scale": scale, "experiment": experiment}


def check(name: str, scale: str, only: list[str] | None) -> ModuleType:
    """The paper's package once the scale and experiment names are known to exist (else UnknownName)."""
    mod = paper(name)
    table = scales(name)
    if scale not in table:
        raise UnknownName(f"`--scale`: unknown scale `{scale}`; {name} has: {', '.join(table)}")
    for n in only or []:
        if n not in mod.EXPERIMENTS:
            raise UnknownName(f"`--only`: unknown experiment `{n}`; {name} has: {', '.join(mod.EXPERIMENTS)}")
    missing = [e for e in mod.EXPERIMENTS if e not in table[scale]]
    if missing:
        raise UnknownName(f"experiments/{name}/scales.toml: scale `{scale}` has no preset for {', '.join(missing)}")
    return mod


class _SuiteProgress:
    """Runs done across the whole suite — `suite: runs 37/120 (31 %), 5.2 min (now testbed)` — logged at
    most every `every_s` seconds and after each experiment. It chains to the runner's own per-batch
    `progress` (which it replaces until `close`); the total is the paper's `RUNS` counts, when it has
    them. Runs made outside the runner (a module's own cached look-ups) are not counted."""

    def __init__(self, runner, total: int | None, log: Callable[[str], None], every_s: float = 15.0):
        self.runner, self.total, self.log, self.every_s = runner, total, log, every_s
        self.inner = getattr(runner, "progress", None)
        self.hooked = hasattr(runner, "progress")
        if self.hooked:
            runner.progress = self._batch
        self.done, self.in_batch, self.exp = 0, 0, ""
        self.t0 = self.last = time.time()

    def _batch(self, done: int, n: int) -> None:
        if self.inner:
            self.inner(done, n)
        self.done += done - self.in_batch
        self.in_batch = 0 if done >= n else done
        if time.time() - self.last >= self.every_s:
            self.show()

    def show(self) -> None:
        self.last = time.time()
        of = f"/{self.total} ({100 * self.done / max(self.total, 1):.0f} %)" if self.total else ""
        self.log(f"suite: runs {self.done}{of}, {(self.last - self.t0) / 60:.1f} min" + (f" (now {self.exp})" if self.exp else ""))

    def close(self) -> None:
        if self.hooked:
            self.runner.progress = self.inner


def reproduce(name: str, scale: str = "small", out: str | Path | None = None, jobs: int | None = None,
              log: Callable[[str], None] = print, only: list[str] | None = None, runner=None) -> Path:
    """Run a paper's experiments (all, or those named in `only`) at a scale; each writes its tables and
    figures under `out` and returns its part of the HTML page, which is written last. Returns the page.
    The runs go to `runner` (default: a process pool of `jobs`; `sweep.make_runner` gives a Ray one)."""
    from ..report import page
    from ..sweep import ProcessRunner

    mod = check(name, scale, only)
    out = Path(out) if out is not None else Path("results") / name
    runner = runner or ProcessRunner(jobs)
    body = [f"<h1>{html.escape(mod.TITLE)}</h1>",
            f"<p>scale: {html.escape(scale)}. What each figure reproduces, what the paper reports and what we "
            f"measure: experiments/{html.escape(name)}/README.md.</p>"]
    names = only or list(mod.EXPERIMENTS)
    counts = getattr(mod, "RUNS", {})
    total = sum(counts[e](preset(name, e, scale)) for e in names) if all(e in counts for e in names) else None
    suite = _SuiteProgress(runner, total, log)
    try:
        for exp in names:
            t0 = time.time()
            suite.exp = exp
            log(f"{exp}, scale {scale} …")
            body += mod.EXPERIMENTS[exp](preset(name, exp, scale), out, runner)
            log(f"{exp}: {time.time() - t0:.0f} s")
            suite.show()
    finally:
        suite.close()
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.html"
    report.write_text(page(mod.TITLE, body))
    log(f"report: {report}")
    return report
