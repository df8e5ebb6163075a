"""ECN♯ reproductions (Zhang, Bai, Chen, IEEE TCC 2022): the testbed experiment of §5.2 (Figs. 9–10),
the larger-variation one (Fig. 11) and the microscopic query incast of §5.4.1 (Figs. 16–17). `experiments/ecn_sharp/README.md` says what each
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


def run_jobs(jobs: list[tuple[dict, dict]], out: Path, runner: Runner | None = None, fn=_run_one) -> pd.DataFrame:
    """Run (scenario, labels) jobs through the sweep cache (`out/runs/<hash>`); one row per run with what
    `fn` returns (default: the summary columns)."""
    work = [(sc, str(EXP), str(out / "runs" / scenario_hash(sc))) for sc, _ in jobs]
    rows = list((runner or ProcessRunner()).map(fn, work))
    return pd.DataFrame([lab | row for (_, lab), row in zip(jobs, rows)])


def _cached(job: tuple[dict, str, str]):
    from ..results import load, run

    sc, base_dir, cache = job
    d = Path(cache)
    if not (d / "meta.json").exists():
        run(sc, base_dir=base_dir).save(d)
    return load(d)


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


def _table(df: pd.DataFrame) -> str:
    return df.to_html(float_format=lambda x: f"{x:.3f}", index=False, border=0)


def _section_testbed(scale, out, runner) -> list[str]:
    norm = testbed(scale, out, runner)
    figs = plot_testbed(norm, out)
    return ["<h2>Testbed (Figs. 9–11)</h2><p>normalised to DCTCP-RED-Tail on the same flows.</p>", _table(norm)] + _imgs(figs)


def _section_microscopic(scale, out, runner) -> list[str]:
    raw = microscopic(scale, out, runner)
    figs = plot_microscopic(raw, out)
    cols = ["n", "scheme", "standing_pkts", "peak_pkts", "drops", "query_avg_us", "query_p99_us", "query_timeouts"]
    t = raw.groupby(["n", "scheme"], sort=False)[cols[2:]].mean().reset_index()
    return ["<h2>Microscopic view (Figs. 16–17)</h2><p>paper: standing queue ECN♯ 8 vs Tail 182 packets; at N = 100 "
            "CoDel drops 125 packets, ECN♯ none; ECN♯ first drops at N = 175.</p>", _table(t)] + _imgs(figs)


def _imgs(paths) -> list[str]:
    import html

    from ..report import img_tag

    return [f"<h3>{html.escape(p.stem)}</h3>{img_tag(p)}" for p in paths]


EXPERIMENTS: dict[str, Callable] = {
    "testbed": _section_testbed,
    "microscopic": _section_microscopic,
}


def reproduce(scale: str = "small", out: str | Path = "results/ecn_sharp", jobs: int | None = None,
              log: Callable[[str], None] = print, only: list[str] | None = None) -> Path:
    """Run the experiments (all, or those named in `only`), write figures, tables and an HTML page;
    return the page."""
    import html
    import time

    from ..report import page

    out = Path(out)
    runner = ProcessRunner(jobs)
    body = ["<h1>ECN♯ reproduction</h1>", f"<p>scale: {html.escape(scale)}. What each figure reproduces, what the paper "
            "reports and what we measure: experiments/ecn_sharp/README.md.</p>"]
    for name in only or list(EXPERIMENTS):
        t0 = time.time()
        log(f"{name}, scale {scale} …")
        body += EXPERIMENTS[name](scale, out, runner)
        log(f"{name}: {time.time() - t0:.0f} s")
    report = out / "report.html"
    report.write_text(page("ECN♯ reproduction", body))
    log(f"report: {report}")
    return report


# ---------------------------------------------------------------- §5.4.1 microscopic view (Figs. 16–17)

# Tail from the 90th-percentile RTT of the 80–240 µs set-up (220 µs × 10 Gbps = 275 KB — the paper's Tail
# queue of 182 packets is this threshold); CoDel as §5.4.1 states; ECN♯'s instantaneous part at the same
# 220 µs and its persistent part at CoDel's target and interval (the paper does not list them for this run;
# its 8-packet queue is a 10 µs target at 10 Gbps, and the authors' incast driver uses pst_target 10 µs).
MICRO_SCHEMES = {
    "DCTCP-RED-Tail": {"kind": "dctcp_red", "threshold": "275KB"},
    "CoDel": {"kind": "codel", "target": "10us", "interval": "240us"},
    "ECN#": {"kind": "ecn_sharp", "ins_target": "220us", "pst_target": "10us", "pst_interval": "240us"},
}
MICRO_AT_US = 1_000_000.0  # query flows start here (microscopic.toml)
PAPER_MICRO = {"standing": {"DCTCP-RED-Tail": 182, "ECN#": 8}, "drops_n100": {"CoDel": 125, "ECN#": 0},
               "first_drops_n": {"CoDel": 100, "ECN#": 175}}


def _micro_stats(job) -> dict:
    r = _cached(job)
    q, f = r.queues, r.flows
    before = q[(q["time_us"] >= MICRO_AT_US - 10_000) & (q["time_us"] < MICRO_AT_US)]
    after = q[q["time_us"] >= MICRO_AT_US]
    qf = f[f["tag"] == "query"]
    done = qf[qf["finished"]]
    return {
        "standing_pkts": before["packets"].mean(),
        "peak_pkts": after["packets"].max(),
        "drops": int(after["drops"].sum()),
        "query_avg_us": done["fct_us"].mean(),
        "query_p99_us": done["fct_us"].quantile(0.99),
        "qct_us": done["fct_us"].max() if len(done) == len(qf) else float("nan"),
        "query_timeouts": int(qf["timeouts"].sum()),
        "queries_unfinished": int((~qf["finished"]).sum()),
        "cache": job[2],
    }


def microscopic(scale: str = "small", out: str | Path = "results/ecn_sharp", runner: Runner | None = None,
                ns=None, seeds: int | None = None, schemes=None) -> pd.DataFrame:
    """§5.4.1: 16 → 1 with data-mining background and N concurrent U(3, 60) KB query flows at t = 1 s.
    One row per (N, seed, scheme): standing queue (mean packets in the 10 ms before the queries), peak
    queue and drops after them, query FCT average / 99th / completion of the last one."""
    sc = MICRO_SCALES[scale]
    out = Path(out)
    base = load_scenario(EXP / "microscopic.toml")
    jobs = []
    for n in ns or sc.ns:
        for s in range(seeds or sc.seeds):
            for name, aqm in (schemes or MICRO_SCHEMES).items():
                job = override(base, {"switch.aqm": aqm, "traffic.1.flows": n, "seed": 1 + s})
                jobs.append((job, {"n": n, "seed": 1 + s, "scheme": name}))
    raw = run_jobs(jobs, out, runner, fn=_micro_stats)
    out.mkdir(parents=True, exist_ok=True)
    raw.drop(columns=["cache"]).to_csv(out / "microscopic_runs.csv", index=False)
    return raw


@dataclass
class MicroScale:
    ns: tuple[int, ...]
    seeds: int


MICRO_SCALES = {"small": MicroScale((25, 50, 75, 100, 125, 150, 175, 200), 1),
                "paper": MicroScale((25, 50, 75, 100, 125, 150, 175, 200), 3)}


def plot_microscopic(raw: pd.DataFrame, out: str | Path) -> list[Path]:
    """Fig. 16 (bottleneck queue around the N = 100 incast, one panel per scheme) and Fig. 17 (query FCT
    and drops against N)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..results import load

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    one = raw[(raw["n"] == 100) & (raw["seed"] == raw["seed"].min())]
    if len(one):
        fig, axes = plt.subplots(1, len(one), figsize=(4.2 * len(one), 3.2), sharey=True)
        for ax, (_, r) in zip(list(axes) if len(one) > 1 else [axes], one.iterrows()):
            q = load(r["cache"]).queues
            w = q[(q["time_us"] >= MICRO_AT_US - 2500) & (q["time_us"] < MICRO_AT_US + 2500)]
            ax.plot((w["time_us"] - MICRO_AT_US) / 1000, w["packets"], lw=0.8)
            paper = PAPER_MICRO["standing"].get(r["scheme"])
            note = f"standing {r['standing_pkts']:.0f} pkts" + (f" (paper {paper})" if paper is not None else "")
            ax.set_title(f"{r['scheme']}: {note}, {r['drops']} drops", fontsize=9)
            ax.set_xlabel("ms from the query burst")
            ax.grid(alpha=0.3)
        (axes[0] if len(one) > 1 else axes).set_ylabel("bottleneck queue (packets)")
        fig.suptitle("microscopic view, N = 100 query flows (Fig. 16)")
        p = out / "microscopic_queue.png"
        fig.savefig(p, dpi=100, bbox_inches="tight")
        plt.close(fig)
        paths.append(p)
    g = raw.groupby(["scheme", "n"], sort=False)[["query_avg_us", "query_p99_us", "drops", "peak_pkts"]].mean().reset_index()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.2))
    for ax, (col, title) in zip(axes, [("query_avg_us", "query FCT avg (µs)"), ("query_p99_us", "query FCT p99 (µs)"),
                                       ("drops", "drops after the burst"), ("peak_pkts", "peak queue (packets)")]):
        for scheme, s in g.groupby("scheme", sort=False):
            ax.plot(s["n"], s[col], marker="o", label=scheme)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("concurrent query flows N")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("query incast (Fig. 17); paper: CoDel drops from N = 100 (125 packets), ECN♯ from N = 175")
    p = out / "microscopic_queries.png"
    fig.savefig(p, dpi=100, bbox_inches="tight")
    plt.close(fig)
    paths.append(p)
    return paths
