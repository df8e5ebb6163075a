"""Reduced ECN♯ testbed reproduction: the paper's main effects, with the tolerances stated in
experiments/ecn_sharp/README.md."""

from __future__ import annotations

from pathlib import Path

from dcnlab.reproduce import ecn_sharp
from dcnlab.sweep import SerialRunner


def test_testbed_web_search_high_load(tmp_path: Path):
    n = ecn_sharp.testbed(
        "small", tmp_path, runner=SerialRunner(), flows=2000, loads=(0.9,), seeds=2,
        workloads=("web_search",), variations=("3x",),
    )
    row = {r["scheme"]: r for _, r in n.iterrows()}
    sharp, avg, codel = row["ECN#"], row["DCTCP-RED-AVG"], row["CoDel"]
    assert sharp["short avg"] <= 0.92, sharp
    assert sharp["short p99"] <= 0.95, sharp
    assert abs(sharp["large avg"] - 1.0) <= 0.10, sharp
    assert avg["short avg"] < min(sharp["short avg"], codel["short avg"]), (avg, sharp, codel)
    # AVG hurts large flows, more than ECN♯ does (paper: > 20 %; here about 5 %, see the README).
    assert avg["large avg"] >= 1.03 and avg["large avg"] > sharp["large avg"], (avg, sharp)
    assert (tmp_path / "testbed_runs.csv").exists()


def test_microscopic_standing_queue_and_query_incast(tmp_path: Path):
    # §5.4.1 reduced: N = 125 query flows, 4 seeds (the background's state at the burst differs by seed:
    # at seed 3 no long flow holds a queue and the burst lands on a near-empty port).
    raw = ecn_sharp.microscopic("small", tmp_path, runner=SerialRunner(), ns=(125,), seeds=4)
    m = raw.groupby("scheme")[["standing_pkts", "drops", "peak_pkts", "query_p99_us"]].mean()
    tail, codel, sharp = m.loc["DCTCP-RED-Tail"], m.loc["CoDel"], m.loc["ECN#"]
    # Paper: standing queue 8 (ECN♯) vs 182 (Tail) packets.
    assert tail["standing_pkts"] > 100, m
    assert sharp["standing_pkts"] <= 0.2 * tail["standing_pkts"], m
    # Paper: CoDel drops under the query incast where ECN♯ does not (CoDel from N = 100, ECN♯ from 175).
    assert codel["drops"] >= 50 and codel["drops"] >= 5 * sharp["drops"], m
    assert (raw[raw["scheme"] == "ECN#"]["drops"] == 0).sum() >= 3, raw
    assert sharp["peak_pkts"] < codel["peak_pkts"], m
    assert sharp["query_p99_us"] < min(codel["query_p99_us"], tail["query_p99_us"]), m
    assert (tmp_path / "microscopic_runs.csv").exists()


def test_gain_grows_with_rtt_variation(tmp_path: Path):
    # Fig. 11 reduced: web search 90 %, Tail and ECN♯ each configured from the variation's own RTTs.
    n = ecn_sharp.testbed(
        "small", tmp_path, runner=SerialRunner(), flows=2000, loads=(0.9,), seeds=2,
        workloads=("web_search",), variations=("3x", "5x"),
    )
    sharp = n[n["scheme"] == "ECN#"].set_index("variation")
    assert sharp.loc["5x", "short avg"] <= sharp.loc["3x", "short avg"] - 0.03, sharp
    assert sharp.loc["5x", "short p99"] <= sharp.loc["3x", "short p99"] - 0.03, sharp
    assert abs(sharp.loc["5x", "large avg"] - 1.0) <= 0.12, sharp


def test_motivation_no_single_threshold_serves_both(tmp_path: Path):
    # Figs. 2–3 reduced: a higher instantaneous threshold costs short flows and helps large ones, and a
    # larger variation widens the gap between Tail and AVG.
    f2, f3 = ecn_sharp.motivation("small", tmp_path, runner=SerialRunner(), flows=2000, variations=("2x", "5x"))
    by = f2.set_index("scheme")
    assert by.loc["250KB", "short p99"] >= 1.2 and by.loc["250KB", "short avg"] >= 1.2, f2
    assert by.loc["250KB", "large avg"] <= 0.95, f2
    tail = f3[f3["scheme"] == "Tail"].set_index("variation")
    # (The paper's statistic is the p99; on ~1000 short flows it moves ±0.1 between seeds, so the
    # reduced test asserts the growth on the average and only the sign of the p99 cost.)
    assert tail.loc["5x", "short avg"] > tail.loc["2x", "short avg"] + 0.1, f3
    assert tail.loc["5x", "short p99"] > 1.05, f3
    assert tail.loc["5x", "large avg"] < tail.loc["2x", "large avg"], f3
    assert tail.loc["5x", "tail_kb"] > 2 * tail.loc["2x", "tail_kb"] - 10, f3


def test_scheduler_keeps_dwrr_shares_and_cuts_short_fct(tmp_path: Path):
    # §5.4.3: DWRR 2:1:1; ECN♯ keeps the weights (paper 4.82 / 2.40 / 2.40 Gbps) and, with the authors'
    # parameters, cuts short-flow FCT against TCN at 150 µs (paper: avg −19.6 %).
    raw = ecn_sharp.scheduler("small", tmp_path, runner=SerialRunner()).set_index("scheme")
    for scheme in ("TCN", "ECN#"):
        g = [float(x) for x in raw.loc[scheme, "goodput_phase3_gbps"].split(" / ")]
        assert len(g) == 3 and abs(g[0] / (g[1] + g[2]) - 1.0) < 0.1 and abs(g[1] / g[2] - 1.0) < 0.1, (scheme, g)
        g2 = [float(x) for x in raw.loc[scheme, "goodput_phase2_gbps"].split(" / ")]
        assert abs(g2[0] / g2[1] - 2.0) < 0.25, (scheme, g2)
    assert raw.loc["ECN#", "short avg / TCN"] <= 0.9, raw


def test_large_scale_web_search_high_load(tmp_path: Path):
    # §5.3 reduced: 128-host leaf-spine, web search at 90 % (of the leaf uplinks), 1500 flows, 1 seed.
    sch = {k: ecn_sharp.LARGE_SCHEMES[k] for k in ("DCTCP-RED-Tail", "ECN#", "ECN# (10 µs target)")}
    n = ecn_sharp.large_scale("small", tmp_path, runner=SerialRunner(), loads=(0.9,), workloads=("web_search",),
                              flows={"web_search": 1500}, schemes=sch).set_index("scheme")
    for s in ("ECN#", "ECN# (10 µs target)"):
        assert n.loc[s, "short avg"] < 1.0 and abs(n.loc[s, "overall avg"] - 1.0) <= 0.05, n
    # Paper: short avg 0.77, p99 0.63 of Tail at 90 % load.
    assert n.loc["ECN# (10 µs target)", "short avg"] <= 0.85 and n.loc["ECN# (10 µs target)", "short p99"] <= 0.85, n


def test_dcqcn_with_ecn_sharp_cuts_short_flows_over_pfc(tmp_path: Path):
    # §5.4.4 reduced: the large-scale set-up as RoCE with DCQCN over PFC, web search at 60 %, 1000 flows.
    n = ecn_sharp.dcqcn("small", tmp_path, runner=SerialRunner(), loads=(0.6,), flows={"web_search": 1000}).set_index("scheme")
    # Paper: overall FCT unchanged, short flows up to 14.9 % faster with ECN♯. The 10 µs persistent target
    # of the authors' drivers removes the standing queue DCQCN's RED (Kmin 5 KB, 1 %) leaves.
    s = "DCQCN+ECN# (10 µs target)"
    assert n.loc[s, "short avg"] <= 0.92 and n.loc[s, "short p99"] < 1.0, n
    assert 0.9 <= n.loc[s, "overall avg"] <= 1.15, n
    assert n.loc["DCQCN+ECN#", "short avg"] <= 1.02, n


def test_pias_thresholds_follow_the_reference_scripts():
    # aqm.md §12: web search, run_pias_dctcp.py; × 1460 B; loads below 0.5 take the 0.5 column.
    from dcnlab.reproduce.ecn_sharp.pias import schemes, thresholds as t

    assert t("web_search", 0.9) == [a * 1460 for a in (759, 1132, 1456, 1737, 2010, 2199, 2325)]
    assert t("web_search", 0.6)[0] == 956 * 1460 and t("web_search", 0.3) == t("web_search", 0.5)
    sch = schemes("web_search", 0.9)
    assert all(s["switch.queues"] == 8 and len(s["host.pias"]["thresholds"]) == 7 for s in sch.values()), sch


def test_pias_eight_queues_ecn_sharp_10us_cuts_short_flows(tmp_path: Path):
    import pandas as pd

    # §5.4.5 reduced: 8-queue PIAS on the large-scale set-up, web search at 90 %, 2000 flows, 2 seeds.
    n = ecn_sharp.pias("small", tmp_path, runner=SerialRunner(), loads=(0.9,), flows={"web_search": 2000},
                       seeds=2).set_index("scheme")
    raw = pd.read_csv(tmp_path / "pias_runs.csv")
    # All 8 queues carry packets and about a quarter of the flows are demoted (α1 = 1.1 MB): a run that
    # fell back to fewer queues has no samples in queues ≥ 2.
    low = raw[[f"q{k}_pkts" for k in range(2, 8)]]
    assert (raw["q_max_busy"] == 7).all() and (low > 0).all().all(), raw
    assert raw["demoted"].between(0.2, 0.35).all(), raw
    # ECN♯ removes the standing queue of the lowest priority: rule of thumb about half, 10 µs most of it.
    q7 = raw.groupby("scheme")["q7_pkts"].mean()
    assert q7["PIAS+ECN#"] <= 0.7 * q7["PIAS"] and q7["PIAS+ECN# (10 µs target)"] <= 0.35 * q7["PIAS"], q7
    # Paper: short flows up to 10.1 % faster, overall unchanged. The 10 µs target gives ~5 % on the short
    # average (0.94–0.96 on each of seeds 1–4); the rule of thumb (137 µs) gives nothing: short flows live
    # in queue 0, whose queue is transient (new flows' first 1.1 MB). Both cost demoted flows a few per
    # cent (README §7).
    # (The short p99 is not asserted: on ~1000 short flows it moves from 0.86 to 1.08 between seeds.)
    assert n.loc["PIAS+ECN# (10 µs target)", "short avg"] <= 0.97, n
    assert abs(n.loc["PIAS+ECN#", "short avg"] - 1.0) <= 0.02, n
    for s in ("PIAS+ECN#", "PIAS+ECN# (10 µs target)"):
        assert 0.98 <= n.loc[s, "overall avg"] <= 1.10, n
