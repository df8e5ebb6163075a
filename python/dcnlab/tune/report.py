"""The advisor's outputs: the rules table and the trade-off table (rich, for the terminal), and under
`-o`: `settings.json`, `tune.csv` (one row per candidate and load), `runs.csv` (one per run),
`tune.png` and a self-contained `report.html`."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from rich.table import Table

from ..reproduce.common import plt, savefig, table as html_table

if TYPE_CHECKING:
    from . import Advice

STAR = "★"
# (column of the table, heading, format) — the four the recommendation weighs first.
SHOWN = [("short_p99_us", "short p99 FCT µs\n(≤ 100 KB)", "{:,.0f}"), ("large_mean_us", "large mean FCT µs\n(> 10 MB)", "{:,.0f}"),
         ("queue_p99_kb", "queue p99\nKB", "{:,.1f}"), ("uplink_util", "uplink\nutil.", "{:.3f}")]


def aqm_text(aqm: dict) -> str:
    """A `switch.aqm` table in one line: `dctcp_red threshold=275KB`."""
    return aqm["kind"] + " " + " ".join(f"{k}={v}" for k, v in aqm.items() if k not in ("kind", "non_ect"))


def stats_line(adv: "Advice") -> str:
    s = adv.stats
    return (f"RTT from {adv.rtt_source}: min {s.min_us:.1f} µs, mean {s.mean_us:.1f} µs, p{s.percentile:g} {s.tail_us:.1f} µs, "
            f"max {s.max_us:.1f} µs ({s.max_us / s.min_us:.2f}× variation); λ = {adv.lam:g}")


def rules_table(adv: "Advice") -> Table:
    t = Table(title=f"settings by the papers' rules — {adv.transport} at {adv.rate}", title_justify="left")
    for c in ("candidate", "switch.aqm", "rule", "source"):
        t.add_column(c)
    for c in adv.candidates:
        mark = f" {STAR}" if c.name == adv.recommended else ""
        t.add_row(c.name + mark, aqm_text(c.aqm), "\n".join([c.rule] + c.notes), c.source)
    return t


def tradeoff_table(adv: "Advice") -> Table:
    t = Table(title=f"verified: {adv.workload}, {adv.flows:,} flows × {adv.seeds} seed(s) per point ({STAR} recommended)",
              title_justify="left")
    t.add_column("candidate")
    t.add_column("load", justify="right")
    for _, head, _ in SHOWN:
        t.add_column(head, justify="right")
    t.add_column("unfinished", justify="right")
    for _, r in adv.table.iterrows():
        name = r["candidate"] + (f" {STAR}" if r["recommended"] else "")
        t.add_row(name, f"{r['load']:g}", *[f.format(r[c]) for c, _, f in SHOWN], f"{r['unfinished']:.0f}")
    return t


def plot(adv: "Advice", out: Path) -> Path:
    """The four metrics against load, one line per candidate; the recommended one drawn thick."""
    pyplot = plt()
    fig, axes = pyplot.subplots(1, 4, figsize=(16, 3.6))
    for ax, (col, head, _) in zip(axes, SHOWN):
        for name, g in adv.table.groupby("candidate", sort=False):
            rec = name == adv.recommended
            ax.plot(g["load"], g[col], marker="o", lw=2.6 if rec else 1.2, label=name + (f" {STAR}" if rec else ""))
        ax.set_title(head.replace("\n", " "))
        ax.set_xlabel("load")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"dcnlab tune: {adv.transport} at {adv.rate}, {adv.workload}", y=1.04)
    return savefig(fig, out, "tune")


def page(adv: "Advice", png: Path | None) -> str:
    from ..report import img_tag, page as html_page

    e = html.escape
    cands = [{"candidate": c.name + (f" {STAR}" if c.name == adv.recommended else ""), "switch.aqm": aqm_text(c.aqm),
              "rule": "; ".join([c.rule] + c.notes), "source": c.source} for c in adv.candidates]
    body = [f"<h1>dcnlab tune: {e(adv.transport)} at {e(adv.rate)}</h1>", f"<p>{e(stats_line(adv))}</p>",
            "<h2>Settings by the papers' rules</h2>", html_table(pd.DataFrame(cands))]
    if adv.table is not None:
        body += [f"<h2>Recommended: {e(adv.recommended)} {STAR}</h2>", f"<p>{e(adv.why)}.</p>",
                 f"<p class='meta'>Verified on a {e(adv.fabric)} (its own base RTT {adv.base_rtt_us:.2f} µs; the RTTs above "
                 f"become per-flow extra delay at the sender), {e(adv.workload)} traffic between racks at loads "
                 f"{', '.join(f'{x:g}' for x in adv.loads)} of the leaf uplinks, {adv.flows:,} flows × {adv.seeds} seed(s) per point, "
                 f"every candidate on the same flows; {len(adv.runs)} runs in {adv.wall_s:.0f} s. RTTs as simulated: "
                 f"min {adv.runs['rtt_min_us'].min():.1f} µs, mean {adv.runs['rtt_mean_us'].mean():.1f} µs.</p>",
                 "<h2>Trade-off (means over seeds; ×: ratio to the best candidate at that load)</h2>",
                 html_table(adv.table.assign(recommended=adv.table["recommended"].map({True: STAR, False: ""})))]
        if png is not None:
            body += ["<h2>Figure</h2>", img_tag(png)]
    body.append(f"<h2>Settings as scenario keys</h2><pre>{e(json.dumps(adv.settings()['candidates'], indent=2, ensure_ascii=False))}</pre>")
    return html_page(f"dcnlab tune: {adv.transport} at {adv.rate}", body)


def write_outputs(adv: "Advice", out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "settings.json"]
    files[0].write_text(json.dumps(adv.settings(), indent=2, ensure_ascii=False) + "\n")
    png = None
    if adv.table is not None:
        adv.table.to_csv(out / "tune.csv", index=False)
        adv.runs.to_csv(out / "runs.csv", index=False)
        png = plot(adv, out)
        files += [out / "tune.csv", out / "runs.csv", png]
    (out / "report.html").write_text(page(adv, png))
    return files + [out / "report.html"]
