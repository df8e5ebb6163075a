"""`python -m dcnlab.reproduce.validation [--scale small|paper] [--out DIR] [--jobs N]`: every validation
experiment at the presets of `experiments/validation/scales.toml`, written as CSVs, PNGs and one HTML page
(`DIR/report.html`). Until `dcnlab reproduce validation` lists it, this is how to run it."""

from __future__ import annotations

import argparse
import time
import tomllib
from pathlib import Path

from ...report import page
from ...sweep import ProcessRunner
from . import EXPERIMENTS, TITLE
from .ns3_ecn_sharp import EXP


def presets(scale: str) -> dict[str, dict]:
    """Each experiment's preset table for `scale`, with `scale` added."""
    scales = tomllib.loads((EXP / "scales.toml").read_text())
    if scale not in scales:
        raise SystemExit(f"--scale: `{scale}` is not one of {', '.join(scales)} (experiments/validation/scales.toml)")
    return {name: dict(scales[scale].get(name, {})) | {"scale": scale} for name in EXPERIMENTS}


def main(argv: list[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(prog="python -m dcnlab.reproduce.validation", description=TITLE)
    ap.add_argument("--scale", default="small")
    ap.add_argument("--out", type=Path, default=Path("results") / "validation")
    ap.add_argument("--jobs", type=int, default=None, help="simulations at once (default: every core)")
    a = ap.parse_args(argv)
    runner = ProcessRunner(a.jobs)
    body = [f"<h1>{TITLE}</h1>", f"<p>scale: {a.scale}</p>"]
    for name, p in presets(a.scale).items():
        t0 = time.time()
        body += EXPERIMENTS[name](p, a.out, runner)
        print(f"{name}: {time.time() - t0:.0f} s")
    a.out.mkdir(parents=True, exist_ok=True)
    report = a.out / "report.html"
    report.write_text(page(TITLE, body))
    print(f"report: {report}")
    return report


if __name__ == "__main__":
    main()
