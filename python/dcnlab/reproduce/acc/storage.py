"""§5.3.1, Fig. 9: IOPS of a distributed storage system against the IO depth, ACC against the vendor's
static ECN setting SECN (Kmin 30 KB, Kmax 270 KB, Pmax 10 %). 18 compute nodes run FIO-like jobs against
6 storage nodes with the patterns of Table 1 (`experiments/acc/storage.toml`, `workloads.md` §8); every
scheme of a pattern, depth and seed sees the same IOs (each FIO job draws from its own stream).

Per run, over the IOs that complete in [warmup, warmup + measure): IOPS, mean and p99 IO latency, the
PFC pause time, and for ACC its decisions. Per pattern × depth: ACC's IOPS change against SECN in %,
beside the paper's where it quotes one."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...jobs import io_latency, iops
from ...scenario import ScenarioError
from ...scenario import load as load_scenario
from ...scenario import override
from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, acc_changes, decisions

SCHEMES = ("SECN", "ACC")
# The paper's storage baseline (§5.3.1: "as suggested by the device vendor").
SECN = {"kind": "red", "kmin": "30KB", "kmax": "270KB", "pmax": 0.1, "non_ect": "pass"}
PATTERNS = ("oltp", "olap", "vdi", "exchange_server", "video_streaming", "file_backup")

# ACC's IOPS gain over SECN in %, as §5.3.1 quotes it: VDI at depths 16 and 128; File Backup "up to 30 %"
# (the depth is not given: we put it beside the deepest).
PAPER_GAIN = {("vdi", 16): 5.0, ("vdi", 128): 15.3, ("file_backup", 128): 30.0}


def storage_scenario(scheme: str, pattern: str, depth: int, seed: int, p: dict) -> dict:
    """experiments/acc/storage.toml for one scheme, pattern, IO depth and seed at preset `p`."""
    if pattern not in PATTERNS:
        raise ScenarioError(f"experiments/acc/scales.toml [{p.get('scale', '…')}.storage] patterns",
                            f"unknown pattern `{pattern}`; Table 1 has: {', '.join(PATTERNS)}")
    base = load_scenario(EXP / "storage.toml")
    ch = {
        "seed": seed,
        "warmup": f"{p['warmup_ms']}ms",
        "stop": {"time": f"{p['warmup_ms'] + p['measure_ms']}ms"},
        "traffic.0.pattern": pattern,
        "traffic.0.io_depth": depth,
        "record.controller_steps": bool(p.get("controller_steps", False)),
    }
    if scheme == "SECN":
        ch["switch.aqm"] = [{"kind": "droptail"}, copy.deepcopy(SECN)]
    elif scheme == "ACC":
        ch |= acc_changes(p | {"experiment": "storage"}, SECN, "acc storage")
    else:
        raise ScenarioError(f"experiments/acc/scales.toml [{p.get('scale', '…')}.storage] schemes",
                            f"unknown scheme `{scheme}`; the storage experiment has: {', '.join(SCHEMES)}")
    return override(base, ch)


def jobs(p: dict) -> list[tuple[dict, dict]]:
    return [(storage_scenario(s, pat, d, 1 + k, p), {"pattern": pat, "io_depth": d, "seed": 1 + k, "scheme": s})
            for pat in p["patterns"] for d in p["depths"] for k in range(p["seeds"]) for s in p["schemes"]]


def stats(job, p: dict) -> dict:
    r = cached_result(job)
    a, b = p["warmup_ms"] * 1e3, (p["warmup_ms"] + p["measure_ms"]) * 1e3
    lat = io_latency(r.jobs, a, b)
    row = {"iops": iops(r.jobs, a, b), "read_iops": iops(r.jobs, a, b, kind="read"),
           "ios": len(lat), "lat_mean_us": float(lat.mean()) if len(lat) else float("nan"),
           "lat_p99_us": float(np.percentile(lat, 99)) if len(lat) else float("nan"),
           "paused_ms": float(r.ports["paused_us"].sum()) / 1e3, "cpu_s": r.meta.get("cpu_s")}
    return row | decisions(r.controller_steps) | {"cache": job[2]}


def changes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per pattern × depth: IOPS of each scheme and ACC's change against SECN in %, beside the paper's."""
    by = summary.set_index(["pattern", "io_depth", "scheme"])
    rows = []
    for pat, d in dict.fromkeys(zip(summary["pattern"], summary["io_depth"])):
        row = {"pattern": pat, "io_depth": d}
        for s in ("SECN", "ACC"):
            row[f"{s} IOPS"] = by.loc[(pat, d, s), "iops"] if (pat, d, s) in by.index else float("nan")
        row["ACC vs SECN %"] = 100 * (row["ACC IOPS"] / row["SECN IOPS"] - 1)
        row["paper %"] = PAPER_GAIN.get((pat, d), float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(one row per run, the mean per pattern × depth × scheme, ACC's changes in %)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.to_csv(out / "storage_runs.csv", index=False)
    keys = ["pattern", "io_depth", "scheme"]
    cols = [c for c in raw.columns if c not in (*keys, "seed") and raw[c].dtype.kind in "fiub"]
    summary = raw.groupby(keys, sort=False)[cols].mean().reset_index()
    summary.to_csv(out / "storage_summary.csv", index=False)
    ch = changes(summary)
    ch.to_csv(out / "storage_change.csv", index=False)
    return raw, summary, ch


def storage(scale: str = "small", out: str | Path = "results/acc", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "storage", scale, **overrides), out, runner)


def plot(summary: pd.DataFrame, out) -> Path:
    pyplot = plt()
    pats = list(dict.fromkeys(summary["pattern"]))
    fig, axes = pyplot.subplots(1, len(pats), figsize=(4 * len(pats), 3.2), squeeze=False)
    for ax, pat in zip(axes[0], pats):
        for s, color in (("SECN", "#888"), ("ACC", "#c33")):
            d = summary[(summary["pattern"] == pat) & (summary["scheme"] == s)]
            ax.plot(d["io_depth"], d["iops"] / 1e3, "o-", color=color, label=s)
        ax.set_xscale("log", base=2)
        ax.set_title(pat, fontsize=9)
        ax.set_xlabel("IO depth")
        ax.set_ylabel("kIOPS")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return savefig(fig, out, "storage")


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, summary, ch = run(p, out, runner)
    cols = ["pattern", "io_depth", "scheme", "iops", "lat_mean_us", "lat_p99_us", "paused_ms", "acc_kmin_kb", "acc_kmax_kb", "acc_pmax"]
    return [f"<h2>Distributed storage (§5.3.1, Fig. 9)</h2><p>18 compute and 6 storage nodes, patterns of Table 1, "
            f"IOPS over {p['measure_ms']} ms after {p['warmup_ms']} ms of warm-up; ACC against the vendor setting "
            "SECN (30 KB / 270 KB / 10 %), beside the paper's gains:</p>", table(ch),
            table(summary[[c for c in cols if c in summary]])] + imgs([plot(summary, out)])
