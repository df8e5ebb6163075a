"""§5.2.3 / Fig. 18(a) and the DCQCN victim-flow experiment: the victim flows S0 → R0 (they cross P2,
the port PFC pauses, and never the incast port P3) under every scheme, in several conditions (`conditions`
in the preset: the reduced scenario of `crates/sim/tests/tcd.rs`, larger XOFF, a large victim that
outlives the burst episode, other DCQCN presets). Reported per condition and scheme: the mean FCT of the
victims that start during the bursts, < 10 KB and > 1 MB (the paper's bins), unfinished ones, their CE and
UE marks and mark classes, how long P2 was paused, and (TCD) the share of the burst episode P3 and P2
spent in each state; the baseline / TCD ratios beside the paper's; P3's and P2's states over time."""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, LARGE, P2, P3, PAPER, SMALL, mark_classes, out_path, state_shares, victim_scenario

# Fig. 18(a): TIMELY+TCD's victims finish 2.2× (< 10 KB) and 2.3× (> 1 MB) faster than TIMELY's (mean FCT).
# DCQCN's victim figure is in §5.2.1, outside the excerpt we have: no number to compare with.
PAPER_VICTIM = {("TIMELY", "small"): 2.2, ("TIMELY", "large"): 2.3}
# Ratio pairs: (baseline, with TCD).
PAIRS = [("DCQCN", "DCQCN+TCD"), ("DCQCN", "DCQCN+NP-ECN"), ("TIMELY", "TIMELY+TCD")]


def condition(p: dict, c: dict) -> dict:
    """The preset with one condition's overrides (every key but `label`)."""
    return copy.deepcopy(p) | {k: v for k, v in c.items() if k != "label"}


def jobs(p: dict) -> list[tuple[dict, dict]]:
    out = []
    for c in p["conditions"]:
        q = condition(p, c)
        for s in p["schemes"]:
            sc = victim_scenario(s, q)
            sc["name"] = f"tcd victim {s}|{c['label']}"  # `stats` finds the condition by it
            out.append((sc, {"condition": c["label"], "scheme": s}))
    return out


def victims(f: pd.DataFrame, q: dict) -> pd.DataFrame:
    """The victim flows that start while the bursts last."""
    v = f[f["tag"] == "victim"]
    return v[(v["start_us"] >= q["burst_from_us"]) & (v["start_us"] < q["burst_to_us"])]


def stats(job, p: dict) -> dict:
    sc, r = job[0], cached_result(job)
    label = sc["name"].split("|", 1)[1]
    q = condition(p, next(c for c in p["conditions"] if c["label"] == label))
    v = victims(r.flows, q)
    small, large = v[v["size"] < SMALL], v[v["size"] > LARGE]
    cls = mark_classes(v).value_counts()
    ce, ue = int(v["ce_marks"].sum()), int(v["ue_marks"].sum())
    ports = r.ports.set_index(["node", "port"])
    row = {
        "small_n": len(small), "small_fct_us": small.loc[small["finished"], "fct_us"].mean(),
        "large_n": len(large), "large_fct_us": large.loc[large["finished"], "fct_us"].mean(),
        "unfinished": int((~v["finished"]).sum()),
        "victim_ce": ce, "victim_ue": ue, "ue_share": ue / (ce + ue) if ce + ue else float("nan"),
        "congested": int(cls.get("congested", 0)), "undetermined": int(cls.get("undetermined", 0)),
        "clean": int(cls.get("clean", 0)),
        "f1_ce": int(r.flows.loc[r.flows["tag"] == "f1", "ce_marks"].sum()),
        "p2_paused_us": float(ports.loc[P2, "paused_us"]), "p3_ce": int(ports.loc[P3, "ce_marks"]),
        "p2_ue": int(ports.loc[P2, "ue_marks"]),
        "cache": job[2],
    }
    a, b = q["burst_from_us"] + 100, q["burst_to_us"]
    for name, (node, port) in (("p3", P3), ("p2", P2)):
        for st, x in state_shares(r.port_states, node, port, a, b).items():
            row[f"{name}_{st}"] = x if len(r.port_states) else float("nan")
    return row


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per condition × scheme, the baseline/TCD ratios per condition) for preset `p` (the
    victim scenario's keys of `victim_scenario`, `schemes`, `conditions` = [{label, overrides…}])."""
    out = out_path(out)
    raw = run_jobs(jobs(p), out, EXP, runner, fn=partial(stats, p=p))
    raw.drop(columns=["cache"]).to_csv(out / "victim_runs.csv", index=False)
    ratios = ratio_table(raw)
    ratios.to_csv(out / "victim_ratios.csv", index=False)
    return raw, ratios


def ratio_table(raw: pd.DataFrame) -> pd.DataFrame:
    """Per condition and pair: baseline mean FCT / the other's (> 1: victims faster with TCD), with the
    paper's ratio where it gives one."""
    rows = []
    by = raw.set_index(["condition", "scheme"])
    for cond in dict.fromkeys(raw["condition"]):
        for base, other in PAIRS:
            if (cond, base) not in by.index or (cond, other) not in by.index:
                continue
            b, o = by.loc[(cond, base)], by.loc[(cond, other)]
            rows.append({"condition": cond, "baseline": base, "scheme": other,
                         "small_speedup": b["small_fct_us"] / o["small_fct_us"],
                         "large_speedup": b["large_fct_us"] / o["large_fct_us"],
                         "paper_small": PAPER_VICTIM.get((base, "small"), float("nan")) if other.endswith("TCD") else float("nan"),
                         "paper_large": PAPER_VICTIM.get((base, "large"), float("nan")) if other.endswith("TCD") else float("nan"),
                         "unfinished": f"{int(b['unfinished'])} / {int(o['unfinished'])}"})
    return pd.DataFrame(rows)


def victim(scale: str = "small", out: str | Path = "results/tcd", runner: Runner | None = None, **overrides):
    """`run` at a scale's preset, with keyword overrides of its keys."""
    return run(preset(PAPER, "victim", scale, **overrides), out, runner)


STATE_Y = {"non_congestion": 0, "undetermined": 1, "congestion": 2}


def plot_states(raw: pd.DataFrame, p: dict, out) -> list[Path]:
    """P3's and P2's TCD state over time in the first condition's DCQCN+TCD and TIMELY+TCD runs."""
    from ...results import load as load_result

    pyplot = plt()
    cond = p["conditions"][0]
    q = condition(p, cond)
    runs = raw[(raw["condition"] == cond["label"]) & raw["scheme"].str.endswith("+TCD")]
    if runs.empty:
        return []
    fig, axes = pyplot.subplots(len(runs), 1, figsize=(10, 2.4 * len(runs)), squeeze=False)
    for ax, (_, row) in zip(axes[:, 0], runs.iterrows()):
        st = load_result(row["cache"]).port_states
        for name, (node, port), off in (("P3 (T2→R1)", P3, 0.06), ("P2 (L0→T2)", P2, -0.06)):
            s = st[(st["node"] == node) & (st["port"] == port) & (st["queue"] == 1)].sort_values("time_us")
            t = [0.0] + list(s["time_us"] / 1e3) + [q["stop_us"] / 1e3]
            y = [0] + [STATE_Y[x] for x in s["state"]]
            ax.step(t, [v + off for v in y + y[-1:]], where="post", label=name, lw=0.8)
        ax.axvspan(q["burst_from_us"] / 1e3, q["burst_to_us"] / 1e3, color="grey", alpha=0.12, label="bursts")
        ax.set_yticks(list(STATE_Y.values()), list(STATE_Y))
        ax.set_title(f"{row['scheme']} — {cond['label']}", fontsize=9)
        ax.set_xlabel("time (ms)")
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return [savefig(fig, out, "victim_port_states")]


def plot_fct(raw: pd.DataFrame, out) -> list[Path]:
    pyplot = plt()
    conds = list(dict.fromkeys(raw["condition"]))
    fig, axes = pyplot.subplots(1, 2, figsize=(13, 0.5 * len(conds) + 2.5))
    for ax, col, title in ((axes[0], "small_fct_us", "victims < 10 KB"), (axes[1], "large_fct_us", "victims > 1 MB")):
        piv = raw.pivot_table(index="condition", columns="scheme", values=col, sort=False).reindex(conds)
        piv.plot.barh(ax=ax, width=0.8)
        ax.set_xlabel("mean FCT (µs)")
        ax.set_title(title, fontsize=9)
        ax.invert_yaxis()
        ax.legend(fontsize=7)
    axes[1].set_ylabel("")
    axes[1].set_yticklabels([])
    fig.suptitle("victim flows' mean FCT (Fig. 18a; paper, TIMELY+TCD vs TIMELY: 2.2× < 10 KB, 2.3× > 1 MB)", fontsize=9)
    return [savefig(fig, out, "victim_fct")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, ratios = run(p, out, runner)
    cols = ["condition", "scheme", "small_n", "small_fct_us", "large_n", "large_fct_us", "unfinished", "victim_ce",
            "victim_ue", "ue_share", "congested", "undetermined", "clean", "f1_ce", "p2_paused_us",
            "p3_congestion", "p2_undetermined", "p2_congestion"]
    return ["<h2>Victim flows (Fig. 18a and the DCQCN case)</h2><p>S0 → R0 victims cross P2, which PFC pauses while "
            "A0–A14's bursts and F1 congest P3. FCTs are means over the victims started during the bursts. Speedup = "
            "baseline FCT / scheme FCT. Paper (TIMELY): 2.2× for &lt; 10 KB, 2.3× for &gt; 1 MB. What each condition "
            "changes and why: experiments/tcd/README.md.</p>", table(ratios), table(raw[cols])] + imgs(plot_fct(raw, out) + plot_states(raw, p, out))
