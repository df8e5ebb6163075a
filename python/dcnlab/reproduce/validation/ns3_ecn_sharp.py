"""dcnlab against the ECN♯ authors' ns-3 on their own large-scale scenario, flow by flow.

The ns-3 side is data (`data/validation/ns3-ecn-sharp/`): the driver's exact 1,406 flows with each flow's
delay class, and ns-3's per-flow FCT for ECN♯ and TCN. dcnlab replays the same flows with the same delay
classes (`experiments/validation/ns3_ecn_sharp.toml`) over several seeds (the seed changes ECMP hashing
only) and the two are compared per flow and by quantile. `experiments/validation/README.md` says what is
compared, why the tolerances are what they are, and how to run it."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from ...results import load as load_result
from ...scenario import load as load_scenario, override, scenario_hash
from ...sweep import ProcessRunner, Runner, cached_result
from .. import experiments_dir

EXP = experiments_dir("validation")
ROOT = EXP.parents[1]
DATA = ROOT / "data" / "validation" / "ns3-ecn-sharp"
SCENARIO = EXP / "ns3_ecn_sharp.toml"

# The parameters of the ns-3 runs (data README): ECN♯ ins 70 µs, pst_target 10 µs, pst_interval 70 µs with
# the square-root control law of the public ns-3 code; TCN at 70 µs.
SCHEMES = {
    "ECN#": {"kind": "ecn_sharp", "ins_target": "70us", "pst_target": "10us", "pst_interval": "70us",
             "control_law": "sqrt"},
    "TCN": {"kind": "tcn", "threshold": "70us"},
}
NS3_FILES = {"ECN#": "ns3_fct_P32_ecn_sharp.csv", "TCN": "ns3_fct_P32_tcn70.csv"}

SHORT_MAX = 100_000  # bytes: short flows are (0, 100 KB], the papers' bucket (dcnlab.results.BUCKETS)
LARGE_MIN = 10_000_000  # bytes: large flows are (10 MB, ∞)
# ns-3 property 3 (data README): after lost ACKs a flow's retransmissions go unanswered for good, so its
# closing exchange (fct_us − fct_data_us) never ends. Every other flow closes within 4 ms (median 0.1 ms);
# the stuck ones run on for 279–315 ms, until the run ends. 50 ms = 10 minimum RTOs separates the two.
STUCK_CLOSE_US = 50_000.0

# What the comparison must meet, from the spread over 8 seeds (experiments/validation/README.md): 2.5 σ of
# the difference between a 2-seed dcnlab mean and ns-3's one run (σ of one seed × √(1 + 1/2)).
TOL_SHORT_MEAN = {"ECN#": 0.07, "TCN": 0.10}  # |dcnlab short-flow mean / ns-3 − 1|; σ of a seed 2.2 %, 3.3 %
TOL_RATIO = 0.09  # |dcnlab ECN♯/TCN short-mean ratio − ns-3's|; σ of a seed 0.029
TOL_MEDIAN = 0.03  # |median over flows of dcnlab / ns-3 FCT − 1|, every seed; σ 0.4 % (+ 1 %, see ALONE_MIN)
ALONE_MIN = 0.99  # no ns-3 short flow is faster than dcnlab's same flow alone by more than 1 %


def load_ns3() -> dict[str, pd.DataFrame]:
    """ns-3's per-flow results, one frame per scheme, in the flow file's row order; a `key` column matches
    them to dcnlab's flows (src, dst, size, start in ns)."""
    flows = pd.read_csv(DATA / "flows_P32.csv")
    out = {}
    for name, f in NS3_FILES.items():
        d = pd.read_csv(DATA / f)
        if len(d) != len(flows) or not (d[["src", "dst", "size"]].values == flows[["src", "dst", "size"]].values).all():
            raise ValueError(f"{f}: its rows are not the flows of flows_P32.csv in the same order")
        d["key"] = _keys(d["src"], d["dst"], d["size"], d["start_us"])
        out[name] = d
    return out


def _keys(src, dst, size, start_us) -> pd.Series:
    ns = np.rint(np.asarray(start_us, dtype=float) * 1000).astype("int64")
    return pd.Series([f"{int(a)}-{int(b)}-{int(c)}-{t}" for a, b, c, t in zip(src, dst, size, ns)])


def stuck_flows(ns3: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The rows whose closing exchange never ends in some ns-3 run (property 3), with what shows it.
    They are left out of every comparison, for both schemes, so that all numbers cover the same flows."""
    rows = []
    for name, d in ns3.items():
        close = d["fct_us"] - d["fct_data_us"]
        for i in d.index[close > STUCK_CLOSE_US]:
            rows.append({"row": int(i), "in run": name, "src": int(d.at[i, "src"]), "dst": int(d.at[i, "dst"]),
                         "size": int(d.at[i, "size"]), "fct_data_us": d.at[i, "fct_data_us"],
                         "fct_us": d.at[i, "fct_us"], "closing_us": close[i],
                         "next_longest_closing_us": close.drop(index=d.index[close > STUCK_CLOSE_US]).max()})
    return pd.DataFrame(rows)


def _flows_job(job) -> str:
    """Run (or find) one scenario; return its cache folder (records are read in the parent)."""
    cached_result(job)
    return job[2]


def run_dcnlab(seeds: int, out: Path, runner: Runner | None = None) -> pd.DataFrame:
    """dcnlab's FCT of every flow, for each scheme and seed: columns scheme, seed, key, fct_us, finished,
    ideal_fct_us. The seed changes ECMP hashing only: the flows and their delays come from the file."""
    base = load_scenario(SCENARIO)
    jobs, labels = [], []
    for s in range(seeds):
        for name, aqm in SCHEMES.items():
            sc = override(base, {"switch.aqm": aqm, "seed": int(base["seed"]) + s})
            jobs.append((sc, str(EXP), str(out / "runs" / scenario_hash(sc))))
            labels.append((name, s))
    frames = []
    for (name, s), d in zip(labels, (runner or ProcessRunner()).map(_flows_job, jobs)):
        f = load_result(d).flows
        frames.append(pd.DataFrame({"scheme": name, "seed": s, "key": _keys(f["src"], f["dst"], f["size"], f["start_us"]),
                                    "fct_us": f["fct_us"].to_numpy(), "finished": f["finished"].to_numpy(),
                                    "ideal_fct_us": f["ideal_fct_us"].to_numpy()}))
    return pd.concat(frames, ignore_index=True)


def run_alone(ns3: dict[str, pd.DataFrame], keep: pd.Series, out: Path, runner: Runner | None = None) -> pd.Series:
    """dcnlab's FCT of each short flow alone on the empty fabric (same endpoints, size and delay class;
    one flow every 5 ms, so none meets another), indexed by the flow's row."""
    d = next(iter(ns3.values()))
    rows = d.index[keep & (d["size"] <= SHORT_MAX)]
    flows = pd.read_csv(DATA / "flows_P32.csv").loc[rows]
    flows["start"] = [f"{5 * (j + 1)}ms" for j in range(len(flows))]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "ns3_ecn_sharp_alone_flows.csv"
    flows.to_csv(path, index=False)
    sc = override(load_scenario(SCENARIO), {"traffic.0.path": str(path.resolve()), "stop.max_time": f"{5 * len(flows) + 50}ms"})
    job = (sc, str(EXP), str(out / "runs" / scenario_hash(sc)))
    f = load_result(list((runner or ProcessRunner()).map(_flows_job, [job]))[0]).flows
    f = f.sort_values("start_us")
    if not f["finished"].all() or (f["finish_us"].to_numpy()[:-1] >= f["start_us"].to_numpy()[1:]).any():
        raise RuntimeError("a flow alone did not finish before the next one started")
    return pd.Series(f["fct_us"].to_numpy(), index=rows)


def _stats(fct: pd.Series, size: pd.Series) -> dict:
    short, large = fct[size <= SHORT_MAX], fct[size > LARGE_MIN]
    return {"short mean": short.mean(), "short p50": short.quantile(0.5), "short p99": short.quantile(0.99),
            "large mean": large.mean()}


def compare(seeds: int, out: str | Path, runner: Runner | None = None, alone: bool = True) -> dict:
    """The whole comparison. Returns (and writes under `out`, as CSV) the tables:
    `summary` (statistic × scheme: ns-3, dcnlab's mean over seeds, its min and max, dcnlab / ns-3),
    `seeds` (one row per scheme and seed), `per_flow` (one row per flow and scheme: ns-3's FCT, dcnlab's
    mean over seeds, their ratio), `by_delay` (short-flow mean per delay class), `stuck` (the ns-3 flows
    left out), `checks` (each tolerance: value, bound, met) and, with `alone`, `alone` (ns-3 against
    dcnlab's same flow alone)."""
    out = Path(out)
    ns3 = load_ns3()
    stuck = stuck_flows(ns3)
    first = next(iter(ns3.values()))
    keep = ~first.index.isin(stuck["row"].tolist() if len(stuck) else [])
    dc = run_dcnlab(seeds, out, runner)

    seed_rows, per_flow, summary, by_delay, long = [], [], [], [], []
    for name, d in ns3.items():
        d = d[keep]
        runs = dc[dc["scheme"] == name].pivot(index="key", columns="seed", values="fct_us")
        missing = set(d["key"]) - set(runs.index)
        if missing:
            raise ValueError(f"{len(missing)} ns-3 flows have no dcnlab flow with the same src, dst, size and start")
        runs = runs.loc[d["key"]].set_axis(d.index)
        if runs.isna().any().any():
            raise RuntimeError(f"{name}: some dcnlab flows did not finish before the run's stop")
        ref = _stats(d["fct_data_us"], d["size"])
        for s in runs.columns:
            ratio = runs[s] / d["fct_data_us"]
            seed_rows.append({"scheme": name, "seed": int(s)} | _stats(runs[s], d["size"])
                             | {"per-flow ratio median": ratio.median(), "per-flow ratio q1": ratio.quantile(0.25),
                                "per-flow ratio q3": ratio.quantile(0.75)})
        per_flow.append(pd.DataFrame({"row": d.index, "scheme": name, "src": d["src"], "dst": d["dst"], "size": d["size"],
                                      "extra_delay_us": d["extra_delay_us"], "ns3_fct_us": d["fct_data_us"],
                                      "dcnlab_median_us": runs.median(axis=1), "dcnlab_min_us": runs.min(axis=1),
                                      "dcnlab_max_us": runs.max(axis=1)}))
        long.append(runs.rename_axis("row").reset_index().melt(id_vars="row", var_name="seed", value_name="fct_us")
                    .assign(scheme=name, size=lambda x: d.loc[x["row"], "size"].to_numpy()))
        sh = d["size"] <= SHORT_MAX
        for cls, g in d[sh].groupby("extra_delay_us"):
            by_delay.append({"scheme": name, "delay class (µs)": cls, "short flows": len(g), "ns-3 mean (µs)": g["fct_data_us"].mean(),
                             "dcnlab mean (µs)": runs.loc[g.index].to_numpy().mean()})
        summary += [{"statistic": k, "scheme": name, "ns-3": v} for k, v in ref.items()]
    seeds_t = pd.DataFrame(seed_rows)
    per_flow_t = pd.concat(per_flow, ignore_index=True)
    per_flow_t["ratio"] = per_flow_t["dcnlab_median_us"] / per_flow_t["ns3_fct_us"]
    by_delay_t = pd.DataFrame(by_delay)
    by_delay_t["dcnlab / ns-3"] = by_delay_t["dcnlab mean (µs)"] / by_delay_t["ns-3 mean (µs)"]

    summary_t = pd.DataFrame(summary)
    g = seeds_t.groupby("scheme")
    for col in ("dcnlab", "dcnlab min", "dcnlab max"):
        agg = {"dcnlab": "mean", "dcnlab min": "min", "dcnlab max": "max"}[col]
        summary_t[col] = [g[r["statistic"]].agg(agg)[r["scheme"]] for _, r in summary_t.iterrows()]
    # ECN♯ / TCN on short flows: ns-3's runs, and dcnlab per seed (same hashing for both schemes).
    ref_ratio = summary_t.set_index(["statistic", "scheme"]).loc["short mean", "ns-3"]
    ref_ratio = ref_ratio["ECN#"] / ref_ratio["TCN"]
    per_seed = seeds_t.pivot(index="seed", columns="scheme", values="short mean")
    ratios = per_seed["ECN#"] / per_seed["TCN"]
    summary_t = pd.concat([summary_t, pd.DataFrame([{"statistic": "short mean ECN#/TCN", "scheme": "both", "ns-3": ref_ratio,
                                                     "dcnlab": ratios.mean(), "dcnlab min": ratios.min(),
                                                     "dcnlab max": ratios.max()}])], ignore_index=True)
    summary_t["dcnlab / ns-3"] = summary_t["dcnlab"] / summary_t["ns-3"]

    checks = []
    for name in SCHEMES:
        r = summary_t[(summary_t["statistic"] == "short mean") & (summary_t["scheme"] == name)].iloc[0]
        tol = TOL_SHORT_MEAN[name]
        checks.append(("short mean: dcnlab / ns-3 − 1", name, r["dcnlab / ns-3"] - 1, f"±{tol:.2f}",
                       abs(r["dcnlab / ns-3"] - 1) <= tol))
        med = seeds_t[seeds_t["scheme"] == name]["per-flow ratio median"]
        worst = med.iloc[(med - 1).abs().argmax()]
        checks.append(("per-flow ratio median − 1 (worst seed)", name, worst - 1, f"±{TOL_MEDIAN:.2f}", abs(worst - 1) <= TOL_MEDIAN))
    checks.append(("short mean ECN#/TCN: dcnlab − ns-3", "both", ratios.mean() - ref_ratio, f"±{TOL_RATIO:.2f}",
                   abs(ratios.mean() - ref_ratio) <= TOL_RATIO))
    checks.append(("ECN# beats TCN on short flows (dcnlab ratio at the worst seed)", "both", ratios.max(), "< 1", ratios.max() < 1))
    tables = {"summary": summary_t, "seeds": seeds_t, "per_flow": per_flow_t, "by_delay": by_delay_t, "stuck": stuck,
              "runs": pd.concat(long, ignore_index=True)}
    if alone:
        a = run_alone(ns3, pd.Series(keep, index=first.index), out, runner)
        rows = []
        for name, d in ns3.items():
            q = d.loc[a.index, "fct_data_us"] / a
            rows.append({"scheme": name, "short flows": len(q), "ns-3 / alone min": q.min(), "1st percentile": q.quantile(0.01),
                         "median": q.median(), "share within 2 %": (q <= 1.02).mean()})
        tables["alone"] = pd.DataFrame(rows)
        worst = tables["alone"]["ns-3 / alone min"].min()
        checks.append(("no ns-3 short flow beats dcnlab's same flow alone (min ratio)", "both", worst, f"≥ {ALONE_MIN}",
                       worst >= ALONE_MIN))
    tables["checks"] = pd.DataFrame(checks, columns=["check", "scheme", "value", "tolerance", "met"])
    out.mkdir(parents=True, exist_ok=True)
    for k, t in tables.items():
        t.to_csv(out / f"ns3_ecn_sharp_{k}.csv", index=False)
    return tables


def plot(tables: dict, out: str | Path) -> list[Path]:
    """Short-flow FCT CDFs (dcnlab, one line per seed, against ns-3) and the per-flow scatter (dcnlab's
    median over seeds against ns-3, every flow), one panel per scheme."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..common import plt as _plt, savefig as _savefig

    plt = _plt()
    out = Path(out)
    pf, runs, seeds = tables["per_flow"], tables["runs"], tables["seeds"]
    ms = FuncFormatter(lambda v, _: f"{v:g}")
    paths = []
    fig, axes = plt.subplots(1, len(SCHEMES), figsize=(6 * len(SCHEMES), 3.6), sharey=True)
    for ax, name in zip(axes, SCHEMES):
        r = runs[(runs["scheme"] == name) & (runs["size"] <= SHORT_MAX)]
        for i, (_, g) in enumerate(r.groupby("seed")):
            v = np.sort(g["fct_us"].to_numpy())
            ax.plot(v / 1000, np.arange(1, len(v) + 1) / len(v), color="C0", lw=0.7, alpha=0.7,
                    label="dcnlab, one line per seed" if i == 0 else None)
        v = np.sort(pf[(pf["scheme"] == name) & (pf["size"] <= SHORT_MAX)]["ns3_fct_us"].to_numpy())
        ax.plot(v / 1000, np.arange(1, len(v) + 1) / len(v), color="k", lw=1.6, label="ns-3")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.xaxis.set_major_formatter(ms)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("FCT (ms)")
        ax.set_title(f"{name}: short flows (≤ 100 KB), {len(v)} flows", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("CDF")
    axes[0].legend(fontsize=7)
    fig.suptitle("ns-3 (ECN♯ authors' code) and dcnlab on the same flows")
    paths.append(_savefig(fig, out, "ns3_ecn_sharp_cdf"))

    fig, axes = plt.subplots(1, len(SCHEMES), figsize=(6 * len(SCHEMES), 5))
    for ax, name in zip(axes, SCHEMES):
        f = pf[pf["scheme"] == name]
        for i, (cls, g) in enumerate(f.groupby("extra_delay_us")):
            ax.scatter(g["ns3_fct_us"] / 1000, g["dcnlab_median_us"] / 1000, s=4, alpha=0.6, color=f"C{i}",
                       label=f"{cls:g} µs class")
        lo = f[["ns3_fct_us", "dcnlab_median_us"]].min().min() / 1000
        hi = f[["ns3_fct_us", "dcnlab_median_us"]].max().max() / 1000
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(ms)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ns-3 FCT (ms)")
        ax.set_ylabel("dcnlab FCT, median over seeds (ms)")
        med = seeds[seeds["scheme"] == name]["per-flow ratio median"].mean()
        ax.set_title(f"{name}: every flow; median of dcnlab / ns-3 per flow = {med:.3f}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, markerscale=3)
    paths.append(_savefig(fig, out, "ns3_ecn_sharp_scatter"))
    return paths


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    """The report's section: `p["seeds"]` seeds per scheme, `p.get("alone", True)` for the unloaded check."""
    from ..common import imgs as _imgs, table as _table

    t = compare(int(p["seeds"]), out, runner, alone=bool(p.get("alone", True)))
    figs = plot(t, out)
    ms = t["summary"].copy()
    is_ratio = ms["statistic"].str.contains("/")
    for c in ("ns-3", "dcnlab", "dcnlab min", "dcnlab max"):
        ms[c] = [v if r else v / 1000 for v, r in zip(ms[c], is_ratio)]
    ms = ms.rename(columns={"ns-3": "ns-3 (ms)", "dcnlab": "dcnlab (ms)", "dcnlab min": "min", "dcnlab max": "max"})
    stuck = t["stuck"]
    left = ", ".join(f"row {r['row']} ({r['in run']}: {r['size']} B, closing {r['closing_us'] / 1000:.0f} ms)"
                     for _, r in stuck.iterrows()) or "none"
    met = t["checks"]["met"].all()
    body = [
        "<h2>ns-3 (ECN♯ authors' code), same flows: ECN♯ and TCN</h2>",
        f"<p>{len(pd.read_csv(DATA / 'flows_P32.csv'))} web-search flows on 4 × 4 × 8 leaf-spine at fabric load 0.6, "
        f"each with its delay class; dcnlab over {int(p['seeds'])} seeds of ECMP hashing (scale "
        f"{html.escape(str(p.get('scale', '')))}). ns-3 FCT to the last data byte; left out, for both schemes, "
        f"the flows whose closing exchange never ends in an ns-3 run: {html.escape(left)}. Times in ms (ratios as they "
        "are). What is compared and why the tolerances: experiments/validation/README.md.</p>",
        _table(ms),
        f"<p>Tolerances: {'all met' if met else '<b>NOT all met</b>'}.</p>",
        _table(t["checks"]),
        "<p>Per seed (µs):</p>", _table(t["seeds"]),
        "<p>Short flows by delay class (µs):</p>", _table(t["by_delay"]),
    ]
    if "alone" in t:
        body += ["<p>Each short flow alone on the empty fabric in dcnlab, against the same flow in the loaded ns-3 run "
                 "(ns-3 / alone ≥ 1 unless ns-3 models a lone flow faster):</p>", _table(t["alone"])]
    return body + _imgs(figs)
