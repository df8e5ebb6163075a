"""What every paper's reproduction uses: its jobs through the sweep cache, figures and HTML fragments."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..scenario import override, scenario_hash
from ..sweep import ProcessRunner, Runner, _run_one

ROOT = Path(__file__).resolve().parents[3]


def grid(base: dict, schemes: dict, workloads, loads, flows, seeds: int, extra: dict | None = None,
         labels: dict | None = None) -> list[tuple[dict, dict]]:
    """(scenario, labels) for every workload × load × seed × scheme of traffic entry 0. A scheme is an AQM
    table (`kind` = …) or a dict of overrides; `flows` is a count or a count per workload."""
    out = []
    for wl in workloads:
        for ld in loads:
            for s in range(seeds):
                for name, spec in schemes.items():
                    n = flows[wl] if isinstance(flows, dict) else flows
                    changes = {"traffic.0.sizes": wl, "traffic.0.load": ld, "traffic.0.flows": n, "seed": 1 + s}
                    changes |= extra or {}
                    changes |= {"switch.aqm": spec} if "kind" in spec else spec
                    lab = {"workload": wl, "load": ld, "seed": 1 + s, "scheme": name} | (labels or {})
                    out.append((override(base, changes), lab))
    return out


def run_jobs(jobs: list[tuple[dict, dict]], out: Path, base_dir: Path, runner: Runner | None = None,
             fn=_run_one) -> pd.DataFrame:
    """Run (scenario, labels) jobs through the sweep cache (`out/runs/<hash>`); relative paths in a
    scenario are taken from `base_dir`. One row per run: the labels and what `fn` returns (default: the
    summary columns)."""
    work = [(sc, str(base_dir), str(Path(out) / "runs" / scenario_hash(sc))) for sc, _ in jobs]
    rows = list((runner or ProcessRunner()).map(fn, work))
    return pd.DataFrame([lab | row for (_, lab), row in zip(jobs, rows)])


def plt():
    """pyplot on the file-only backend (imported when a figure is drawn, not with the module)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def savefig(fig, out: Path, stem: str) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p = out / f"{stem}.png"
    fig.savefig(p, dpi=100, bbox_inches="tight")
    plt().close(fig)
    return p


def table(df: pd.DataFrame) -> str:
    """A data frame as an HTML table for the report page."""
    return df.to_html(float_format=lambda x: f"{x:.3f}", index=False, border=0)


def imgs(paths) -> list[str]:
    """Figures as HTML fragments (embedded), each under its name."""
    import html

    from ..report import img_tag

    return [f"<h3>{html.escape(Path(p).stem)}</h3>{img_tag(p)}" for p in paths]
