"""ECN♯ reproductions (Zhang, Bai, Chen, IEEE TCC 2022). Implemented so far: the testbed experiment of
§5.2 (Figs. 9–10) and the larger-variation one (Fig. 11). `experiments/ecn_sharp/README.md` says what each
reproduces, what the paper reports, what we measure and the tolerance.

Every scheme sees the same flows: only the AQM differs between runs of one (workload, load, seed), and
traffic draws from its own random stream."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ..scenario import load as load_scenario, override, scenario_hash
from ..sweep import ProcessRunner, Runner, _run_one

ROOT = Path(__file__).resolve().parents[3]
EXP = ROOT / "experiments" / "ecn_sharp"

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

# What the paper reports (testbed, normalised to DCTCP-RED-Tail), quoted from §5.2.
PAPER_TESTBED = [
    ("web_search", "short avg", "ECN#", 0.9, 738 / 964, "23.4% lower avg FCT of short flows at 90% load"),
    ("web_search", "short p99", "ECN#", 0.9, 3287 / 5242, "37.2% lower p99 FCT of short flows at 90% load"),
    ("data_mining", "short avg", "ECN#", 0.8, 377 / 548, "31.2% lower avg FCT of short flows at 80% load"),
    ("data_mining", "short p99", "ECN#", 0.8, 1347 / 2161, "37.6% lower p99 FCT of short flows at 80% load"),
    ("web_search", "large avg", "DCTCP-RED-AVG", None, 1.2, "AVG hurts large flows by over 20% (web search)"),
]


@dataclass
class Scale:
    loads: tuple[float, ...]
    flows: int
    seeds: int
    workloads: tuple[str, ...]
    variations: tuple[str, ...]


SCALES = {
    # ~5 minutes on 2 cores: 3 loads × 2 workloads × 4 schemes × 1 seed, 3000 flows each.
    "small": Scale((0.3, 0.6, 0.9), 3000, 1, ("web_search", "data_mining"), ("3x", "5x")),
    "paper": Scale(tuple(x / 10 for x in range(1, 10)), 20000, 3, ("web_search", "data_mining"), ("3x", "4x", "5x")),
}


def _jobs(base: dict, schemes: dict, workloads, loads, flows: int, seeds: int, variation: str) -> list[tuple[dict, dict]]:
    out = []
    for wl in workloads:
        for ld in loads:
            for s in range(seeds):
                for name, aqm in schemes.items():
                    sc = override(
                        base,
                        {
                            "switch.aqm": aqm,
                            "traffic.0.sizes": wl,
                            "traffic.0.load": ld,
                            "traffic.0.flows": flows,
                            "seed": 1 + s,
                            "host.extra_delay.path": f"../../data/rtt/extra_delay_{variation}.txt",
                        },
                    )
                    out.append((sc, {"workload": wl, "load": ld, "seed": 1 + s, "scheme": name, "variation": variation}))
    return out


def run_jobs(jobs: list[tuple[dict, dict]], out: Path, runner: Runner | None = None) -> pd.DataFrame:
    """Run (scenario, labels) jobs through the sweep cache; one row per run with the summary columns."""
    work = [(sc, str(EXP), str(out / "runs" / scenario_hash(sc))) for sc, _ in jobs]
    rows = list((runner or ProcessRunner()).map(_run_one, work))
    return pd.DataFrame([lab | row for (_, lab), row in zip(jobs, rows)])


def normalise(df: pd.DataFrame, keys=("workload", "variation", "load", "seed"), ref: str = "DCTCP-RED-Tail") -> pd.DataFrame:
    """Each metric divided by the reference scheme's on the same flows, then averaged over seeds."""
    base = df[df["scheme"] == ref].set_index(list(keys))
    out = []
    for _, r in df.iterrows():
        b = base.loc[tuple(r[k] for k in keys)]
        out.append({k: r[k] for k in keys} | {"scheme": r["scheme"]} | {m: r[c] / b[c] for m, c in METRICS.items()})
    n = pd.DataFrame(out)
    return n.groupby([k for k in keys if k != "seed"] + ["scheme"], sort=False)[list(METRICS)].mean().reset_index()


def testbed(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
            flows: int | None = None, loads=None, seeds: int | None = None, workloads=None,
            variations=None, schemes=None) -> pd.DataFrame:
    """§5.2 (Figs. 9–10) and §5.2.2 (Fig. 11): normalised FCT per workload, RTT variation, load and scheme."""
    sc = SCALES[scale]
    out = Path(out)
    base = load_scenario(EXP / "testbed.toml")
    jobs = []
    for v in variations or sc.variations:
        # Fig. 11 compares ECN♯ with Tail only; at 3× all four schemes run (Figs. 9–10).
        sch = schemes or (TESTBED_SCHEMES if v == "3x" else {k: TESTBED_SCHEMES[k] for k in ("DCTCP-RED-Tail", "ECN#")})
        jobs += _jobs(base, sch, workloads or sc.workloads, loads or sc.loads, flows or sc.flows, seeds or sc.seeds, v)
    raw = run_jobs(jobs, out, runner)
    out.mkdir(parents=True, exist_ok=True)
    raw.to_csv(out / "testbed_runs.csv", index=False)
    norm = normalise(raw)
    norm.to_csv(out / "testbed_normalised.csv", index=False)
    return norm


def plot_testbed(norm: pd.DataFrame, out: str | Path) -> list[Path]:
    """One PNG per (workload, variation): the four panels of Figs. 9–11, normalised to Tail, with the
    paper's reported points where it gives them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for (wl, var), g in norm.groupby(["workload", "variation"], sort=False):
        fig, axes = plt.subplots(1, 4, figsize=(15, 3.4))
        for ax, m in zip(axes, METRICS):
            for scheme, s in g.groupby("scheme", sort=False):
                ax.plot(s["load"], s[m], marker="o", label=scheme)
            for pwl, pm, ps, pload, val, _ in PAPER_TESTBED:
                if pwl == wl and pm == m and var == "3x" and pload is not None:
                    ax.plot([pload], [val], marker="*", ms=12, color="k", ls="none", label=f"paper: {ps}")
            ax.axhline(1.0, color="grey", lw=0.6)
            ax.set_title(m)
            ax.set_xlabel("load")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("FCT / DCTCP-RED-Tail")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"testbed, {wl.replace('_', ' ')}, RTT variation {var}")
        p = out / f"testbed_{wl}_{var}.png"
        fig.savefig(p, dpi=100, bbox_inches="tight")
        plt.close(fig)
        paths.append(p)
    return paths


def reproduce(scale: str = "small", out: str | Path = "results/ecn_sharp", jobs: int | None = None,
              log: Callable[[str], None] = print) -> Path:
    """Run the implemented experiments, write figures, tables and an HTML page; return the page."""
    import html

    from ..report import img_tag, page

    out = Path(out)
    runner = ProcessRunner(jobs)
    log(f"testbed (Figs. 9–11), scale {scale} …")
    norm = testbed(scale, out, runner)
    figs = plot_testbed(norm, out)
    body = ["<h1>ECN♯ reproduction</h1>", f"<p>scale: {html.escape(scale)}; normalised to DCTCP-RED-Tail on the same flows.</p>"]
    body.append(norm.to_html(float_format=lambda x: f"{x:.3f}", index=False, border=0))
    for p in figs:
        body.append(f"<h3>{html.escape(p.stem)}</h3>{img_tag(p)}")
    report = out / "report.html"
    report.write_text(page("ECN♯ reproduction", body))
    log(f"report: {report}")
    return report
