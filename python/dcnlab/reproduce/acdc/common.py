"""What the AC/DC experiments share: the compared schemes as the paper configures them, scenarios built
from the two templates (`experiments/acdc/dumbbell.toml`, `star.toml`), and the metrics — per-flow
goodput from delivered bytes, Jain's index, drop rate, the bottleneck queue and RTT percentiles."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd

from ...scenario import load as load_scenario
from ...sweep import cached_result
from ...tables import TABLES
from .. import experiments_dir

PAPER = "acdc"
EXP = experiments_dir(PAPER)

# The switch's WRED/ECN as the paper runs DCTCP and AC/DC: DCTCP's step marker at K = 100 KB, Not-ECT
# packets dropped above K (`spec/acdc.md` §9). "Marking off" (the paper's CUBIC baselines) is drop-tail.
MARKING = {"kind": "dctcp_red", "threshold": "100KB", "non_ect": "drop"}
NO_MARKING = {"kind": "droptail"}
ACDC = {"kind": "acdc"}

# Scheme → (guest control, vSwitch or None, AQM). The paper's three curves of §5.2 and the floor variant.
SCHEMES = {
    "CUBIC": ("cubic", None, NO_MARKING),
    "DCTCP": ("dctcp", None, MARKING),
    "AC/DC": ("cubic", ACDC, MARKING),
    "AC/DC rwnd_min=2mss": ("cubic", {"kind": "acdc", "rwnd_min": "2mss"}, MARKING),
}

# The paper's names of the guests' controls → ours (NewReno is `reno`, which does NewReno recovery).
CCS = {"CUBIC": "cubic", "Illinois": "illinois", "HighSpeed": "highspeed", "NewReno": "reno", "Vegas": "vegas"}

# Whether the engine records per-ACK RTT samples (`[record] rtt_samples = true`, table `rtt_samples`).
HAVE_RTT_SAMPLES = "rtt_samples" in TABLES


def scenario(template: str, flows: list[dict], aqm: dict, vswitch: dict | None, stop_s: float,
             mtu: int = 9000, queue: dict | None = None, trace_interval: str = "10ms",
             queue_interval: str | None = None, rtt_samples: bool = False) -> dict:
    """A scenario from `experiments/acdc/<template>.toml`: `flows` are `{src, dst, cc, start, tag}` (one
    traffic entry per guest control, its `transport.cc`), every flow long-lived and traced; the AQM, the
    vSwitch (None: plain OVS), the MTU, the stop time and the sampled queue (`{node, port}`) replaced."""
    sc = copy.deepcopy(load_scenario(EXP / f"{template}.toml"))
    sc["stop"] = {"time": f"{stop_s}s"}
    sc["switch"]["aqm"] = copy.deepcopy(aqm)
    sc["switch"]["mtu"] = mtu
    if vswitch is None:
        sc["host"].pop("vswitch", None)
    else:
        sc["host"]["vswitch"] = copy.deepcopy(vswitch)
    by_cc: dict[str, list] = {}
    for f in flows:
        by_cc.setdefault(f["cc"], []).append({"src": f["src"], "dst": f["dst"], "size": "inf",
                                              "start": f.get("start", "0us"), "tag": f.get("tag", "long")})
    sc["traffic"] = [{"kind": "flows", "transport": {"cc": cc}, "list": lst} for cc, lst in by_cc.items()]
    rec = sc["record"]
    rec["trace_tags"] = sorted({f.get("tag", "long") for f in flows})
    rec["trace_interval"] = trace_interval
    if queue is not None:
        rec["queues"] = [queue]
    if queue_interval is not None:
        rec["queue_sample_interval"] = queue_interval
    if rtt_samples and HAVE_RTT_SAMPLES:
        rec["rtt_samples"] = True
    return sc


def link_params(sc: dict) -> tuple[float, float]:
    """(rate in bit/s, base RTT in µs) of a star scenario: 4 propagation delays and two serialisations
    of a full frame (data out, data in; the ACK's are negligible)."""
    link = sc["topology"]["link"]
    rate = _rate(link["rate"])
    delay_us = _time_us(link["delay"])
    return rate, 4 * delay_us + 2 * sc["switch"]["mtu"] * 8 / rate * 1e6


def _rate(s: str) -> float:
    for unit, m in (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1.0)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * m
    raise ValueError(s)


def _time_us(s: str) -> float:
    for unit, m in (("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * m
    raise ValueError(s)


def delivered(trace: pd.DataFrame) -> pd.DataFrame:
    """Delivered bytes, one column per traced flow, one row per trace time (µs)."""
    return trace.pivot_table(index="time_us", columns="flow_id", values="delivered_bytes", aggfunc="last").sort_index().ffill().fillna(0)


def goodput_bps(trace: pd.DataFrame, a_us: float, b_us: float) -> pd.Series:
    """Each traced flow's goodput (bit/s) between two trace times (the last sample at or before each)."""
    d = delivered(trace)
    at = lambda u: d[d.index <= u].iloc[-1] if (d.index <= u).any() else d.iloc[0] * 0  # noqa: E731
    return (at(b_us) - at(a_us)) * 8 / ((b_us - a_us) * 1e-6)


def rate_series(trace: pd.DataFrame) -> pd.DataFrame:
    """Each traced flow's goodput (Gbps) over every trace interval, indexed by the interval's end (s)."""
    d = delivered(trace)
    r = d.diff().iloc[1:].div(np.diff(d.index.to_numpy()) * 1e-6, axis=0) * 8 / 1e9
    r.index = r.index / 1e6
    return r


def jain(v) -> float:
    """Jain's fairness index of a list of throughputs."""
    v = np.asarray(list(v), dtype=float)
    return float(v.sum() ** 2 / (len(v) * (v**2).sum())) if len(v) and (v**2).sum() > 0 else float("nan")


def drop_rate(r, mtu: int) -> float:
    """Switch drops (all causes) over data packets sent, in percent. Data packets are estimated as the
    bytes the traced flows delivered in MSS-sized segments (MTU − 40) plus the drops; the estimate is
    exact for the baselines that drop (full-sized segments) and the drops are zero otherwise."""
    drops = sum(r.meta["drops"].values())
    last = r.flow_trace.groupby("flow_id")["delivered_bytes"].max().sum()
    pkts = last / (mtu - 40) + drops
    return 100.0 * drops / pkts if pkts else float("nan")


def percentiles(x, qs=(0.5, 0.999)) -> list[float]:
    x = pd.Series(x, dtype=float).dropna()
    return [float(x.quantile(q)) if len(x) else float("nan") for q in qs]


def rtt_stats(r, warm_us: float, base_rtt_us: float, rate_bps: float, flows=None) -> dict:
    """RTT percentiles (µs) three ways: `rtt_*` from the engine's per-ACK samples when it records them
    (else from the queue), `qrtt_*` as base RTT + queueing delay at the sampled port (samples in time,
    every `queue_sample_interval`), `srtt_*` from the guests' smoothed RTT in the flow trace."""
    q = r.queues[r.queues["time_us"] >= warm_us]
    qrtt = base_rtt_us + q["bytes"] * 8 / rate_bps * 1e6
    tr = r.flow_trace[r.flow_trace["time_us"] >= warm_us]
    if flows is not None:
        tr = tr[tr["flow_id"].isin(flows)]
    out = {}
    out["qrtt_p50_us"], out["qrtt_p999_us"] = percentiles(qrtt)
    out["srtt_p50_us"], out["srtt_p999_us"] = percentiles(tr["srtt_us"])
    samples = getattr(r, "rtt_samples", None)
    if samples is not None and len(samples):
        s = samples[samples["time_us"] >= warm_us]
        if flows is not None:
            s = s[s["flow_id"].isin(flows)]
        out["rtt_p50_us"], out["rtt_p999_us"] = percentiles(s["rtt_us"])
        out["rtt_source"] = "rtt_samples"
    else:
        out["rtt_p50_us"], out["rtt_p999_us"] = out["qrtt_p50_us"], out["qrtt_p999_us"]
        out["rtt_source"] = "queue"
    return out


def result(job):
    """The cached records of a job (scenario, base_dir, cache_dir)."""
    return cached_result(job)


def out_path(out) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def stop_us(sc: dict) -> float:
    return _time_us(sc["stop"]["time"])


def flow_stats(job, warm_us: float, flows=None) -> dict:
    """What every experiment reports of one run, measured from `warm_us` to the end: each traced flow's
    goodput (or those in `flows`), their average and Jain's index, drops at the sampled port in that
    window and in the whole run (start-up included), the window's drop rate, the guests' retransmissions
    and timeouts, the sampled queue and AC/DC's counters."""
    sc, r = job[0], cached_result(job)
    end = stop_us(sc)
    g = goodput_bps(r.flow_trace, warm_us, end)
    if flows is not None:
        g = g[g.index.isin(flows)]
    q = r.queues[r.queues["time_us"] >= warm_us]
    mtu = sc["switch"]["mtu"]
    drops = int(q["drops"].sum())
    pkts = g.sum() * (end - warm_us) * 1e-6 / 8 / (mtu - 40) + drops
    f = r.flows if flows is None else r.flows[r.flows["flow_id"].isin(flows)]
    a = r.meta.get("acdc") or {}
    return {
        "goodput_gbps": " / ".join(f"{x / 1e9:.2f}" for x in g),
        "avg_gbps": g.mean() / 1e9,
        "total_gbps": g.sum() / 1e9,
        "jain": jain(g),
        "drops": drops,
        "drop_rate_pct": 100.0 * drops / pkts if pkts else float("nan"),
        "drops_run": int(sum(r.meta["drops"].values())),
        "retransmits": int(f["retransmits"].sum()),
        "timeouts": int(f["timeouts"].sum()),
        "queue_mean_kb": q["bytes"].mean() / 1e3,
        "queue_p999_kb": q["bytes"].quantile(0.999) / 1e3 if len(q) else float("nan"),
        "acdc_ecn_cuts": a.get("ecn_cuts", 0),
        "cache": job[2],
    }


def with_non_ect(aqm: dict, p: dict) -> dict:
    """The marking AQM with the preset's `non_ect` ("drop": the paper's WRED as `spec/acdc.md` §9 states
    it; "pass": Not-ECT packets above K are queued). The engine's guests send pure ACKs Not-ECT (Linux
    DCTCP sends them ECT), so with "drop" every ACK that meets a queue above K is lost (README)."""
    if aqm.get("kind") == "dctcp_red" and "non_ect" in p:
        return aqm | {"non_ect": p["non_ect"]}
    return aqm


def scheme_scenario(template: str, name: str, traffic: list[dict], stop: dict, p: dict, hosts: int | None = None,
                    record: dict | None = None) -> dict:
    """A scenario from `experiments/acdc/<template>.toml` for one of `SCHEMES` with the given traffic
    entries (their flows take the scheme's guest control from `host.transport`), stop condition and
    record table; the AQM's `non_ect` from the preset (`with_non_ect`); `hosts` resizes a star."""
    cc, vs, aqm = SCHEMES[name]
    sc = copy.deepcopy(load_scenario(EXP / f"{template}.toml"))
    sc["stop"] = copy.deepcopy(stop)
    sc["switch"]["aqm"] = with_non_ect(copy.deepcopy(aqm), p)
    sc["host"]["transport"]["cc"] = cc
    if vs is None:
        sc["host"].pop("vswitch", None)
    else:
        sc["host"]["vswitch"] = copy.deepcopy(vs)
    if hosts is not None:
        sc["topology"]["hosts"] = hosts
    sc["traffic"] = copy.deepcopy(traffic)
    sc["record"] = copy.deepcopy(record or {})
    return sc


def fct_stats(f: pd.DataFrame, prefix: str) -> dict:
    """Median, 99th and 99.9th percentile and mean FCT (µs) of the finished flows in `f`, and their count."""
    x = f.loc[f["finished"], "fct_us"]
    p50, p99, p999 = percentiles(x, (0.5, 0.99, 0.999))
    return {f"{prefix}_n": int(len(x)), f"{prefix}_unfinished": int((~f["finished"]).sum()), f"{prefix}_p50_us": p50,
            f"{prefix}_p99_us": p99, f"{prefix}_p999_us": p999, f"{prefix}_mean_us": float(x.mean()) if len(x) else float("nan")}


def add_cuts(raw: pd.DataFrame, cols: list[str], by: list[str]) -> pd.DataFrame:
    """For each column in `cols`, `<col>_cut` = 1 − value / CUBIC's value among the rows with the same
    values of `by` (none: all rows)."""
    if "CUBIC" not in set(raw["scheme"]):
        return raw
    key = lambda r: tuple(r[k] for k in by)  # noqa: E731
    ref = {key(r): r for _, r in raw[raw["scheme"] == "CUBIC"].iterrows()}
    for c in cols:
        raw[f"{c}_cut"] = [1 - r[c] / ref[key(r)][c] for _, r in raw.iterrows()]
    return raw


def mice_entry(p: dict) -> dict:
    """The macrobenchmarks' periodic messages (`workloads.md` §9.2–9.3): every host i sends `mice_size`
    (16 KB) to (i + 8) mod N every `mice_period`, `mice_repeat` times, tagged "mice"."""
    return {"kind": "stride", "stride": 8, "size": p.get("mice_size", "16KB"), "repeat": p["mice_repeat"],
            "period": p["mice_period"], "tag": "mice"}


def mice_bg_stats(job) -> dict:
    """FCT percentiles of the background flows (tag "bg") and of the mice sent while background traffic
    ran (started before the last background flow finished: later ones cross an idle network), drops,
    retransmissions and timeouts."""
    sc, r = job[0], cached_result(job)
    f = r.flows
    bg, mice = f[f["tag"] == "bg"], f[f["tag"] == "mice"]
    end = bg["finish_us"].max() if bg["finished"].all() else float("inf")
    m = mice[mice["start_us"] < end]
    return ({"bg_end_ms": end / 1e3} | fct_stats(m, "mice") | fct_stats(bg, "bg") |
            {"drops_run": int(sum(r.meta["drops"].values())), "drop_rate_pct": drop_rate_flows(r, sc["switch"]["mtu"]),
             "retransmits": int(f["retransmits"].sum()), "timeouts": int(f["timeouts"].sum()),
             "mice_timeouts": int(m["timeouts"].sum()), "cache": job[2]})


def drop_rate_flows(r, mtu: int) -> float:
    """Switch drops over data packets in percent, the packets estimated from the flows' sizes in MSS-sized
    segments plus the drops (every flow here finishes)."""
    drops = sum(r.meta["drops"].values())
    pkts = float((np.ceil(r.flows["size"] / (mtu - 40))).sum()) + drops
    return 100.0 * drops / pkts if pkts else float("nan")


def pooled_fcts(raw: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One row per `by` group: mice and background FCT percentiles over all its runs' flows pooled
    (the paper's CDFs pool its runs), drops and timeouts summed, with the cuts against CUBIC."""
    from ...results import load as load_result

    rows = []
    for key, g in raw.groupby(by, sort=False):
        fl = []
        for _, row in g.iterrows():
            f = load_result(row["cache"]).flows
            f = f[(f["tag"] == "bg") | (f["start_us"] < row["bg_end_ms"] * 1e3)]
            fl.append(f)
        f = pd.concat(fl)
        key = key if isinstance(key, tuple) else (key,)
        rows.append(dict(zip(by, key)) | {"runs": len(g)} | fct_stats(f[f["tag"] == "mice"], "mice") |
                    fct_stats(f[f["tag"] == "bg"], "bg") |
                    {"drops_run": int(g["drops_run"].sum()), "drop_rate_pct": g["drop_rate_pct"].mean(),
                     "timeouts": int(g["timeouts"].sum()), "mice_timeouts": int(g["mice_timeouts"].sum())})
    return add_cuts(pd.DataFrame(rows), ["mice_p50_us", "mice_p99_us", "mice_p999_us", "bg_p50_us", "bg_mean_us"],
                    [c for c in by if c != "scheme"])


def fct_cdf_plot(raw: pd.DataFrame, out, stem: str, title: str, by: str | None = None) -> list[Path]:
    """The paper's two panels (mice FCT in ms, background FCT in s), CDFs over every run's flows pooled,
    one figure per value of `by` (e.g. the stride's variant)."""
    from ...results import load as load_result
    from ..common import plt, savefig

    pyplot = plt()
    paths = []
    groups = raw.groupby(by, sort=False) if by else [(None, raw)]
    for val, gr in groups:
        fig, axes = pyplot.subplots(1, 2, figsize=(10, 3.2))
        for scheme, g in gr.groupby("scheme", sort=False):
            fl = []
            for _, row in g.iterrows():
                f = load_result(row["cache"]).flows
                fl.append(f[f["finished"] & ((f["tag"] == "bg") | (f["start_us"] < row["bg_end_ms"] * 1e3))])
            f = pd.concat(fl)
            for ax, tag, scale in ((axes[0], "mice", 1e3), (axes[1], "bg", 1e6)):
                x = np.sort(f.loc[f["tag"] == tag, "fct_us"].to_numpy() / scale)
                ax.plot(x, np.arange(1, len(x) + 1) / max(len(x), 1), label=scheme)
        axes[0].set_xlabel("mice FCT (ms)")
        axes[1].set_xlabel("background FCT (s)")
        for ax in axes:
            ax.set_ylabel("CDF")
            ax.grid(alpha=0.3)
        axes[0].set_xscale("log")
        axes[0].legend(fontsize=7)
        fig.suptitle(title + (f" — {val}" if val is not None else ""), fontsize=9)
        paths.append(savefig(fig, out, stem + (f"_{val}" if val is not None else "")))
    return paths
