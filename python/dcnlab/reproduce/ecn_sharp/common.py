"""What the ECN♯ experiments share: the testbed's schemes as the paper sets them, the four FCT metrics,
normalisation to a reference scheme on the same flows, the normalised-FCT figure, and RTT-derived
parameters."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...scenario import load as load_scenario, override, scenario_hash
from ...sweep import cached_result
from .. import experiments_dir
from ..common import plt, savefig

PAPER = "ecn_sharp"
EXP = experiments_dir(PAPER)

# §5.2: "DCTCP-RED-AVG 80KB, DCTCP-RED-Tail 250KB; CoDel interval 200 µs, target 85 µs; ECN♯ ins_target
# 200 µs, pst_interval 200 µs, pst_target 85 µs".
TESTBED_SCHEMES = {
    "DCTCP-RED-Tail": {"kind": "dctcp_red", "threshold": "250KB"},
    "DCTCP-RED-AVG": {"kind": "dctcp_red", "threshold": "80KB"},
    "CoDel": {"kind": "codel", "target": "85us", "interval": "200us"},
    "ECN#": {"kind": "ecn_sharp", "ins_target": "200us", "pst_target": "85us", "pst_interval": "200us"},
}

METRICS = {
    "overall avg": "all:fct_mean",
    "short avg": "(0B, 100KB]:fct_mean",
    "short p99": "(0B, 100KB]:fct_p99",
    "large avg": "(10MB, inf]:fct_mean",
}


def delay_file(variation: str) -> dict:
    """The override that gives the testbed a variation's per-host extra delays (`data/rtt/`)."""
    return {"host.extra_delay.path": f"../../data/rtt/extra_delay_{variation}.txt"}


def normalise(df: pd.DataFrame, keys=("workload", "variation", "load", "seed"), ref: str = "DCTCP-RED-Tail") -> pd.DataFrame:
    """Each metric divided by the reference scheme's on the same flows, then averaged over seeds."""
    base = df[df["scheme"] == ref].set_index(list(keys))
    out = []
    for _, r in df.iterrows():
        b = base.loc[tuple(r[k] for k in keys)]
        out.append({k: r[k] for k in keys} | {"scheme": r["scheme"]} | {m: r[c] / b[c] for m, c in METRICS.items()})
    n = pd.DataFrame(out)
    return n.groupby([k for k in keys if k != "seed"] + ["scheme"], sort=False)[list(METRICS)].mean().reset_index()


def rtt_params(variation: str, out: str | Path, flows: int = 3000) -> dict:
    """Tail/AVG thresholds and ECN♯'s rule-of-thumb parameters for a variation's RTT file, from the base
    RTTs of a (cached) testbed run at 50 % web-search load — as an operator derives them from measured
    RTTs. Keys: tail_kb, avg_kb, p90_us, mean_us."""
    from ...rtt import ecn_sharp_rule_of_thumb, tail_avg

    base = override(load_scenario(EXP / "testbed.toml"), {"traffic.0.load": 0.5, "traffic.0.flows": flows,
                    "switch.aqm": {"kind": "dctcp_red", "threshold": "50KB"}} | delay_file(variation))
    r = cached_result((base, str(EXP), str(Path(out) / "runs" / scenario_hash(base))))
    ta, rt = tail_avg(r, "10Gbps"), ecn_sharp_rule_of_thumb(r)
    return {"tail_kb": round(ta["tail"] / 1000), "avg_kb": round(ta["avg"] / 1000),
            "p90_us": round(rt["ins_target_us"]), "mean_us": round(rt["pst_target_us"])}


def plot_normalised(norm: pd.DataFrame, out: str | Path, stem: str, title: str, ref: str,
                    by=("workload",), paper=()) -> list[Path]:
    """One PNG per group of `by`: the four panels (overall avg, short avg, short p99, large avg) against
    load, normalised to `ref`, with the paper's reported points (workload, metric, scheme, load, value,
    …) as black stars."""
    pyplot = plt()
    paths = []
    for key, g in norm.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        wl = key[0]
        fig, axes = pyplot.subplots(1, 4, figsize=(15, 3.4))
        for ax, m in zip(axes, METRICS):
            for scheme, s in g.groupby("scheme", sort=False):
                ax.plot(s["load"], s[m], marker="o", label=scheme)
            for pwl, pm, ps, pload, val, *_ in paper:
                if pwl == wl and pm == m and pload is not None:
                    ax.plot([pload], [val], marker="*", ms=12, color="k", ls="none", label=f"paper: {ps}")
            ax.axhline(1.0, color="grey", lw=0.6)
            ax.set_title(m)
            ax.set_xlabel("load")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(f"FCT / {ref}")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{title}, " + ", ".join(str(k).replace("_", " ") for k in key))
        paths.append(savefig(fig, Path(out), f"{stem}_{'_'.join(str(k) for k in key)}"))
    return paths
