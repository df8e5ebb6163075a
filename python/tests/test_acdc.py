"""Reduced AC/DC reproduction (`dcnlab reproduce acdc`): the direction and rough size of each effect the
paper reports, with the tolerances of experiments/acdc/README.md. Every assertion compares schemes run on
the same set-up, so each can fail if AC/DC, the marking switch or a guest control stops behaving."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcnlab.reproduce import acdc
from dcnlab.sweep import SerialRunner


def test_table1_every_guest_control_is_fair_through_acdc(tmp_path: Path):
    rows = ["CUBIC*", "DCTCP*", "CUBIC", "NewReno", "Vegas", "HighSpeed"]
    raw = acdc.cc_table("small", tmp_path, runner=SerialRunner(), mtus=[9000], rows=rows, duration_s=2.0, warmup_s=0.5)
    by = raw.set_index("row")
    through = by.loc[["CUBIC", "NewReno", "Vegas", "HighSpeed"]]
    # Paper: Jain 0.99 through AC/DC, throughput as DCTCP's (1.98 Gbps per flow at 9 KB).
    assert (through["jain"] >= 0.99).all(), through
    assert (abs(through["avg_gbps"] / by.loc["DCTCP*", "avg_gbps"] - 1) < 0.03).all(), by
    assert abs(by.loc["DCTCP*", "avg_gbps"] - 1.98) < 0.05, by
    # Paper: plain CUBIC without marking is the unfair row (0.85 / 0.98); here it drops and is below AC/DC.
    assert by.loc["CUBIC*", "jain"] < through["jain"].min() - 0.02, by
    assert by.loc["CUBIC*", "drops"] > 0 and by.loc["CUBIC*", "retransmits"] > 0, by
    assert (through["drops"] == 0).all() and by.loc["DCTCP*", "drops"] == 0, by
    # The window is AC/DC's: loss-based guests of different controls get the very same goodputs.
    assert by.loc["CUBIC", "goodput_gbps"] == by.loc["NewReno", "goodput_gbps"], by
    assert through["acdc_ecn_cuts"].min() > 100, by


def test_coexistence_cubic_starves_without_acdc_and_shares_with_it(tmp_path: Path):
    raw = acdc.coexistence("small", tmp_path, runner=SerialRunner(), duration_s=1.5, warmup_s=0.5)
    by = raw.set_index("case")
    plain, with_ = by.loc["default (no AC/DC)"], by.loc["AC/DC"]
    assert plain["cubic_share"] < 0.1 and plain["cubic_timeouts"] > 5, plain
    # Paper: CUBIC's loss rate 0.18 % without AC/DC.
    assert 0.05 < plain["drop_rate_pct"] < 0.5, plain
    assert 0.4 < with_["cubic_share"] < 0.6 and with_["jain"] >= 0.99, with_
    assert with_["cubic_retransmits"] == 0 and with_["drops"] == 0, with_


def test_five_controls_through_acdc_track_all_dctcp(tmp_path: Path):
    raw = acdc.five_ccs("small", tmp_path, runner=SerialRunner(), duration_s=2.0, warmup_s=0.5)
    by = raw.set_index("case")
    dctcp, through, plain = by.loc["all DCTCP (plain OVS)"], by.loc["5 CCs through AC/DC"], by.loc["5 CCs, plain OVS"]
    assert through["jain"] >= 0.99 and dctcp["jain"] >= 0.99, by
    assert plain["jain"] < 0.8 and plain["drops"] > 0, plain
    assert abs(through["total_gbps"] / dctcp["total_gbps"] - 1) < 0.03, by
    assert through["drops"] == 0 and through["retransmits"] == 0, through


def test_incast_rtt_cubic_far_above_dctcp_above_acdc(tmp_path: Path):
    raw = acdc.incast("small", tmp_path, runner=SerialRunner(), senders=[16, 47], duration_s=0.6, warmup_s=0.2)
    for n, g in raw.groupby("senders"):
        by = g.set_index("scheme")
        cubic, dctcp, a, two = (by.loc[s] for s in ("CUBIC", "DCTCP", "AC/DC", "AC/DC rwnd_min=2mss"))
        # Paper: CUBIC ≫ DCTCP ≥ AC/DC in RTT; comparable throughput; Jain > 0.99 and no drops for both.
        for q in ("rtt_p50_us", "rtt_p999_us", "queue_mean_kb"):
            assert cubic[q] > 3 * dctcp[q] and dctcp[q] >= a[q], (n, q, g)
        assert abs(a["avg_mbps"] / dctcp["avg_mbps"] - 1) < 0.03, (n, g)
        assert dctcp["drops"] == 0 and a["drops"] == 0 and cubic["drops"] > 0, (n, g)
        assert dctcp["jain"] >= 0.99 and a["jain"] >= 0.99, (n, g)
        # "Setting AC/DC's lower bound to 2 packets reproduces DCTCP."
        assert abs(two["queue_mean_kb"] / dctcp["queue_mean_kb"] - 1) < 0.05, (n, g)
    by = raw[raw["senders"] == 47].set_index("scheme")
    # Paper at 47 senders: median RTT −82 % (DCTCP) and −97 % (AC/DC) against CUBIC; AC/DC well below DCTCP
    # because its window goes below two 9 KB segments.
    assert 0.7 <= by.loc["DCTCP", "rtt_p50_cut_vs_cubic"] <= 0.9, by
    assert by.loc["AC/DC", "rtt_p50_cut_vs_cubic"] >= 0.9, by
    assert by.loc["AC/DC", "rtt_p50_us"] < 0.5 * by.loc["DCTCP", "rtt_p50_us"], by


@pytest.mark.parametrize("non_ect", ["pass"])
def test_all_ports_congested(tmp_path: Path, non_ect):
    raw = acdc.all_ports("small", tmp_path, runner=SerialRunner(), duration_s=0.5, warmup_s=0.2, non_ect=non_ect)
    by = raw.set_index("scheme")
    # Paper: 214 / 214 / 201 Mbps into B1 (10 Gbps / 46 = 217), Jain > 0.98; CUBIC drops 0.34 %, 4 % at
    # the hottest port; DCTCP and AC/DC none.
    assert (abs(by["b1_avg_mbps"] / (10e3 / 46) - 1) < 0.05).all(), by
    assert (by["b1_jain"] >= 0.95).all(), by
    assert by.loc["CUBIC", "drop_rate_b1_pct"] > 1.0 and by.loc["CUBIC", "drop_rate_all_pct"] > 0.02, by
    assert by.loc["DCTCP", "drops_run"] == 0 and by.loc["AC/DC", "drops_run"] == 0, by
    assert by.loc["CUBIC", "rtt_p50_us"] > 2 * by.loc["DCTCP", "rtt_p50_us"] > 2 * by.loc["AC/DC", "rtt_p50_us"], by


def test_convergence_dctcp_and_acdc_share_cubic_drops(tmp_path: Path):
    raw = acdc.convergence("small", tmp_path, runner=SerialRunner(), flows=3, period_s=0.5, settle_s=0.15)
    by = raw.set_index("scheme")
    # Paper (Fig. 14): DCTCP and AC/DC converge to fair shares and drop nothing; CUBIC drops 0.17 %.
    assert by.loc["DCTCP", "jain_min_shared"] >= 0.95 and by.loc["AC/DC", "jain_min_shared"] >= 0.95, by
    assert by.loc["CUBIC", "drop_rate_pct"] > 0 and by.loc["CUBIC", "retransmits"] > 0, by
    assert by.loc["DCTCP", "drops_run"] == 0, by
    # AC/DC: no data segment lost; at most the SYN of each joining flow (Not-ECT, WRED drops it above K; README).
    assert by.loc["AC/DC", "retransmits"] == 0 and by.loc["AC/DC", "drops_run"] <= 2, by
    assert by.loc["AC/DC", "drop_rate_pct"] < 0.001, by
    assert (by["total_gbps_min"] > 9.5).all(), by


def _mice_checks(by, what):
    cubic, dctcp, a = (by.loc[s] for s in ("CUBIC", "DCTCP", "AC/DC"))
    # AC/DC's 16 KB messages as DCTCP's (within 25 %) and far below CUBIC's at the tail.
    for q in ("mice_p99_us", "mice_p999_us"):
        assert a[q] < 0.3 * cubic[q] and dctcp[q] < 0.3 * cubic[q], (what, q, by)
    for q in ("mice_p50_us", "mice_p99_us", "mice_p999_us"):
        assert abs(a[q] / dctcp[q] - 1) < 0.25, (what, q, by)
    assert dctcp["drops_run"] == 0 and a["drops_run"] == 0 and cubic["drops_run"] > 0, (what, by)
    assert (by["mice_unfinished"] == 0).all() and (by["bg_unfinished"] == 0).all(), (what, by)
    # Background flows: DCTCP and AC/DC alike (the paper: similar completion times).
    assert abs(a["bg_mean_us"] / dctcp["bg_mean_us"] - 1) < 0.1, (what, by)


def test_stride_mice_acdc_as_dctcp_far_below_cubic(tmp_path: Path):
    raw = acdc.stride("small", tmp_path, runner=SerialRunner(), bg_size="32MB", seeds=1, mice_repeat=60)
    st = raw[raw["variant"] == "staggered"].set_index("scheme")
    _mice_checks(st, "staggered")
    # Lockstep: every port carries one flow at a time, nothing queues at the switch, all schemes alike.
    lk = raw[raw["variant"] == "lockstep"].set_index("scheme")
    assert (lk["drops_run"] == 0).all() and lk["mice_p999_us"].max() / lk["mice_p999_us"].min() < 1.05, lk


def test_shuffle_mice_acdc_as_dctcp_far_below_cubic(tmp_path: Path):
    by = acdc.shuffle("small", tmp_path, runner=SerialRunner(), bg_size="8MB", seeds=2, mice_repeat=60).set_index("scheme")
    _mice_checks(by, "shuffle")
    # Paper: median −72 % (DCTCP) and −71 % (AC/DC) against CUBIC.
    assert by.loc["DCTCP", "mice_p50_us_cut"] > 0.4 and by.loc["AC/DC", "mice_p50_us_cut"] > 0.4, by


def test_trace_driven_mice_acdc_as_dctcp_far_below_cubic(tmp_path: Path):
    """Fig. 23, reduced (0.4 s per run): closed-loop web search and data mining messages over persistent
    connections. The paper: DCTCP and AC/DC cut the mice's median FCT by 72–77 % against CUBIC, and AC/DC
    tracks DCTCP."""
    t = acdc.trace("small", tmp_path, runner=SerialRunner(), duration_s=0.4, warmup_s=0.1)
    for wl in ("web_search", "data_mining"):
        by = t[t["workload"] == wl].set_index("scheme")
        cubic, dctcp, a, a2 = (by.loc[s] for s in ("CUBIC", "DCTCP", "AC/DC", "AC/DC rwnd_min=2mss"))
        assert (by["mice_n"] > 200).all() and (by["mice_unfinished"] == 0).all() and not by["exhausted"].any(), (wl, by)
        # The paper's effect: both cut the median by more than half and the tail far more (CUBIC's mice
        # meet full drop-tail queues and, now and then, a 10 ms timeout).
        for s in (dctcp, a, a2):
            assert s["mice_p50_us_cut"] > 0.5 and s["mice_p99_us_cut"] > 0.5, (wl, by)
            assert s["mice_p999_us"] < 0.3 * cubic["mice_p999_us"], (wl, by)
        # AC/DC's mice as DCTCP's: with DCTCP's floor of two segments within 25 % at p50 and p99; with its own
        # floor (1460 B) never slower than DCTCP by more than 10 %, and at most 40 % quicker (README).
        for q in ("mice_p50_us", "mice_p99_us"):
            assert abs(a2[q] / dctcp[q] - 1) < 0.25, (wl, q, by)
            assert 0.6 < a[q] / dctcp[q] < 1.1, (wl, q, by)
        assert dctcp["drops_run"] == 0 and a["drops_run"] == 0 and cubic["drops_run"] > 0, (wl, by)
