"""Standard figures for one or more runs: FCT CDFs, slowdown by size bucket, queue occupancy over time,
link utilisation. Each is written as PNG and SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .results import BUCKETS, Result, summary  # noqa: E402

FIGURES = ("fct_cdf", "slowdown_by_bucket", "queue_occupancy", "link_utilization")
NO_FLOWS = "no flow finished"


def _save(fig, out: Path, name: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=110, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def _legend_or_note(ax, note: str) -> None:
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, note, ha="center", transform=ax.transAxes)


def fct_cdf(runs: Mapping[str, Result], out: Path) -> list[Path]:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, r in runs.items():
        f = r.flows[r.flows["finished"]]
        for ax, sel, title in (
            (axes[0], f, "all flows"),
            (axes[1], f[f["size"] <= 100_000], "flows ≤ 100 KB"),
        ):
            v = np.sort(sel["fct_us"].to_numpy())
            if len(v):
                ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=label)
            ax.set_title(title)
    for ax in axes:
        if ax.lines:
            ax.set_xscale("log")
        ax.set_xlabel("FCT (µs)")
        ax.set_ylabel("CDF")
        ax.grid(alpha=0.3)
        _legend_or_note(ax, NO_FLOWS)
    return _save(fig, out, "fct_cdf")


def slowdown_by_bucket(runs: Mapping[str, Result], out: Path) -> list[Path]:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    labels = list(runs)
    tables = {k: summary(r) for k, r in runs.items()}
    buckets = list(next(iter(tables.values())).index)
    x = np.arange(len(buckets))
    w = 0.8 / max(len(labels), 1)
    for ax, col, title in ((axes[0], "sd_mean", "mean slowdown"), (axes[1], "sd_p99", "99th-percentile slowdown")):
        values = [np.nan_to_num(tables[k][col].to_numpy(dtype=float), nan=0.0) for k in labels]
        for i, (k, v) in enumerate(zip(labels, values)):
            ax.bar(x + i * w, v, w, label=k)
        ax.set_xticks(x + w * (len(labels) - 1) / 2, buckets, fontsize=8)
        ax.set_title(title)
        if any((v > 0).any() for v in values):
            ax.set_yscale("log")
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, NO_FLOWS, ha="center", transform=ax.transAxes)
        ax.grid(alpha=0.3, axis="y")
    return _save(fig, out, "slowdown_by_bucket")


def queue_occupancy(runs: Mapping[str, Result], out: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for label, r in runs.items():
        q = r.queues
        if q.empty:
            continue
        # The port whose queue was longest on average.
        key = q.groupby(["node", "port", "queue"])["bytes"].mean().idxmax()
        s = q[(q["node"] == key[0]) & (q["port"] == key[1]) & (q["queue"] == key[2])]
        ax.plot(s["time_us"] / 1000.0, s["bytes"] / 1000.0, lw=0.8, label=f"{label}: {key[0]} port {key[1]}")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("queue (KB)")
    ax.set_title("queue occupancy (busiest sampled queue)")
    ax.grid(alpha=0.3)
    _legend_or_note(ax, "no queue samples (set record.queue_sample_interval)")
    return _save(fig, out, "queue_occupancy")


def link_utilization(runs: Mapping[str, Result], out: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for label, r in runs.items():
        ln = r.links
        if ln.empty:
            continue
        m = ln.groupby("time_us")["utilization"].mean()
        ax.plot(m.index / 1000.0, m.to_numpy(), lw=0.8, label=label)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("utilisation (mean over sampled ports)")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    _legend_or_note(ax, "no link samples (set record.link_sample_interval)")
    return _save(fig, out, "link_utilization")


def plot_all(runs: Mapping[str, Result], out: str | Path) -> list[Path]:
    out = Path(out)
    paths: list[Path] = []
    for fn in (fct_cdf, slowdown_by_bucket, queue_occupancy, link_utilization):
        paths += fn(runs, out)
    return paths


__all__ = ["BUCKETS", "FIGURES", "plot_all", "fct_cdf", "slowdown_by_bucket", "queue_occupancy", "link_utilization"]
