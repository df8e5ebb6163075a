"""One self-contained HTML page: summary tables, a side-by-side comparison and the standard figures
(embedded as data URIs, so the file can be mailed or archived alone)."""

from __future__ import annotations

import base64
import html
import tempfile
from pathlib import Path
from typing import Mapping

import pandas as pd

from .plots import plot_all
from .results import Result, summary

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.meta { color: #666; font-size: 0.85em; }
"""

COLS = ["flows", "unfinished", "fct_mean", "fct_p50", "fct_p99", "sd_mean", "sd_p50", "sd_p95", "sd_p99"]


def compare_table(runs: Mapping[str, Result], metrics=("fct_mean", "fct_p99", "sd_mean", "sd_p99")) -> pd.DataFrame:
    """Side by side: one row per (bucket, statistic), one column per run, then each later run's ratio to
    the first (columns ending in ×)."""
    tables = {k: summary(r) for k, r in runs.items()}
    rows = {}
    for k, t in tables.items():
        rows[k] = t[list(metrics)].stack()
    df = pd.DataFrame(rows)
    df.index.names = ["bucket", "statistic"]
    first = df.columns[0]
    for k in list(df.columns[1:]):
        df[f"{k} ×"] = df[k] / df[first]
    return df


def img_tag(png: Path) -> str:
    """A PNG embedded as a data URI, so the page stands alone."""
    data = base64.b64encode(Path(png).read_bytes()).decode()
    return f"<img class='figure' alt='{html.escape(Path(png).stem)}' src='data:image/png;base64,{data}'>"


def page(title: str, body: list[str]) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>"
    )


def _fmt(x) -> str:
    return f"{x:,.2f}" if isinstance(x, float) else str(x)


def write_report(runs: Mapping[str, Result], out: str | Path, title: str = "dcnlab report") -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    body = [f"<h1>{html.escape(title)}</h1>"]
    if len(runs) > 1:
        body.append("<h2>Comparison (ratios to the first run)</h2>")
        body.append(compare_table(runs).to_html(float_format=_fmt, border=0))
    for label, r in runs.items():
        m = r.meta
        body.append(f"<h2>{html.escape(label)}</h2>")
        body.append(
            "<p class='meta'>"
            + html.escape(
                f"{m.get('name', '')} · seed {m.get('seed')} · {m.get('flows_finished')}/{m.get('flows_total')} flows "
                f"finished · {m.get('sim_time_us', 0) / 1000:.1f} ms simulated · {m.get('events', 0):,} events · "
                f"{m.get('wall_s', 0):.1f} s wall · drops {m.get('drops', {})}"
            )
            + "</p>"
        )
        if not r.flows["finished"].any():
            body.append("<p class='meta'>No flow finished in this run: its FCT and slowdown statistics are empty.</p>")
        body.append(summary(r)[COLS].to_html(float_format=_fmt, border=0))
    body.append("<h2>Figures</h2>")
    with tempfile.TemporaryDirectory() as tmp:
        for p in plot_all(runs, tmp):
            if p.suffix != ".png":
                continue
            body.append(f"<h3>{html.escape(p.stem.replace('_', ' '))}</h3>")
            body.append(img_tag(p))
    out.write_text(page(title, body))
    return out
