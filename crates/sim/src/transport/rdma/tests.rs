//! Unit tests: DCQCN's reaction point against C1's update rules written out step by step (the oracle
//! is the pseudocode, recomputed here), the notification point, and the queue pair's pacing, NACK and
//! go-back-N.

use super::config::{Cfg, DcqcnSpec, Preset};
use super::dcqcn::{Np, Params, Rp, Step};
use super::*;
use crate::transport::Setup;
use crate::units::US;

const G40: u64 = 40_000_000_000;

fn params(p: Preset, line: u64) -> Params {
    DcqcnSpec::preset(p).at(line)
}

#[test]
fn paper_cut_then_alpha_order_fast_recovery_additive_hyper_exact() {
    let mut p = params(Preset::DcqcnPaper, G40);
    p.clamp_target_rate = true;
    let (g, keep, line) = (p.g, 1.0 - p.g, G40 as f64);
    let (ai, hai, bc) = (p.rate_ai, p.rate_hai, p.byte_counter.unwrap());
    assert_eq!((ai, hai, bc, p.f), (40e6, 400e6, 10_000_000, 5));
    let mut rp = Rp::new(p);
    assert_eq!((rp.rc, rp.rt, rp.alpha), (line, line, 1.0));

    // First CNP at 0: R_T ← R_C (clamp), R_C ← R_C(1 − α/2) with α = 1, then α ← (1 − g)·1 + g = 1.
    rp.on_cnp(0);
    assert_eq!((rp.rt, rp.rc, rp.alpha), (line, line / 2.0, 1.0));
    // T = 55 µs = K: at 55 and 110 µs the increase timer fires (fast recovery: R_C ← (R_T + R_C)/2) and α
    // decays (α ← (1 − g)α, no CNP in the period).
    assert_eq!(rp.on_time(55 * US), Some(Step::FastRecovery));
    assert_eq!((rp.rc, rp.alpha), (0.75 * line, keep));
    assert_eq!(rp.on_time(110 * US), Some(Step::FastRecovery));
    let (rc, a) = (0.875 * line, keep * keep);
    assert_eq!((rp.rc, rp.alpha, rp.t_cnt), (rc, a, 2));

    // Second CNP at 110 µs. The order pinned: the cut uses α *before* this CNP's update.
    rp.on_cnp(110 * US);
    let (mut rt, mut rc) = (rc, rc * (1.0 - a / 2.0));
    assert_eq!(rp.rt, rt);
    assert_eq!(rp.rc, rc, "R_C ← R_C(1 − α/2) with the old α");
    assert_ne!(rp.rc, 0.875 * line * (1.0 - (keep * a + g) / 2.0), "not with the updated α");
    assert_eq!(rp.alpha, keep * a + g, "then α ← (1 − g)α + g");
    assert_eq!((rp.t_cnt, rp.bc_cnt), (0, 0));

    // Byte counter: BC bytes each. Events 1–4 are fast recovery (max(t, bc) < F), the 5th additive.
    let now = 111 * US;
    for k in 1..=5u32 {
        rp.on_sent(bc - 1, now);
        assert_eq!(rp.bc_cnt, k - 1, "BC − 1 bytes are not yet a byte-counter event");
        rp.on_sent(1, now);
        assert_eq!(rp.bc_cnt, k);
        if k < 5 {
            rc = (rt + rc) / 2.0;
        } else {
            rt += ai;
            rc = (rt + rc) / 2.0;
        }
        assert_eq!((rp.rt, rp.rc), (rt, rc), "byte event {k}");
    }
    // Timer events at 165, 220, 275, 330 µs: t_cnt 1–4 < F ≤ bc_cnt: additive.
    for k in 1..=4u64 {
        assert_eq!(rp.on_time((110 + 55 * k) * US), Some(Step::Additive));
        rt += ai;
        rc = (rt + rc) / 2.0;
        assert_eq!((rp.rt, rp.rc), (rt, rc), "timer event {k}");
    }
    // 5th timer event: min(t, bc) = 5 ≥ F: hyper, i = 1.
    assert_eq!(rp.on_time(385 * US), Some(Step::Hyper));
    rt += hai;
    rc = (rt + rc) / 2.0;
    assert_eq!((rp.rt, rp.rc), (rt, rc));
    // bc 6: min(5, 6) = 5, i = 1 again; timer 6: min(6, 6) = 6, i = 2.
    rp.on_sent(bc, 386 * US);
    rt += hai;
    rc = (rt + rc) / 2.0;
    assert_eq!((rp.rt, rp.rc), (rt, rc));
    assert_eq!(rp.on_time(440 * US), Some(Step::Hyper));
    rt += 2.0 * hai;
    rc = (rt + rc) / 2.0;
    assert_eq!((rp.rt, rp.rc, rp.t_cnt, rp.bc_cnt), (rt, rc, 6, 6));
    // α kept decaying once per K since the cut at 110 µs: 6 periods by 440 µs.
    let mut a2 = keep * a + g;
    for _ in 0..6 {
        a2 *= keep;
    }
    assert_eq!(rp.alpha, a2);
}

#[test]
fn clamp_only_after_an_increase_step_unless_clamp_target_rate() {
    // Default: no increase step since the last cut → R_T is kept.
    let mut rp = Rp::new(params(Preset::DcqcnPaper, G40));
    rp.on_cnp(0);
    rp.on_cnp(10 * US);
    assert_eq!((rp.rt, rp.rc), (40e9, 10e9));
    // A byte-counter step since the cut → the next cut clamps.
    rp.on_sent(10_000_000, 11 * US);
    let rc = rp.rc;
    rp.on_cnp(12 * US);
    assert_eq!(rp.rt, rc);
    // So does a timer step (T = 55 µs after the cut at 12 µs).
    rp.on_cnp(13 * US);
    assert_eq!(rp.rt, rc, "no step since the cut at 12 µs");
    rp.on_time(68 * US);
    let rc = rp.rc;
    rp.on_cnp(69 * US);
    assert_eq!(rp.rt, rc);
    // clamp_target_rate: every cut copies R_C into R_T.
    let mut p = params(Preset::DcqcnPaper, G40);
    p.clamp_target_rate = true;
    let mut rp = Rp::new(p);
    rp.on_cnp(0);
    rp.on_cnp(10 * US);
    assert_eq!((rp.rt, rp.rc), (20e9, 10e9));
}

#[test]
fn rate_min_bounds_the_cut() {
    let mut rp = Rp::new(params(Preset::DcqcnPaper, G40));
    for i in 0..20 {
        rp.on_cnp(i * US);
    }
    assert_eq!(rp.rc, 100e6);
}

#[test]
fn alpha_timer_decays_once_per_period_without_cnp() {
    let p = params(Preset::DcqcnPaper, G40);
    let keep = 1.0 - p.g;
    let mut rp = Rp::new(p);
    rp.touch(10_000 * US);
    assert_eq!(rp.alpha, 1.0, "no alpha timer before the first CNP");
    rp.on_cnp(0);
    rp.touch(54 * US);
    assert_eq!(rp.alpha, 1.0);
    rp.touch(55 * US);
    assert_eq!(rp.alpha, keep);
    rp.touch(164 * US);
    assert_eq!(rp.alpha, keep * keep);
    rp.touch(165 * US);
    assert_eq!(rp.alpha, keep * keep * keep);
    // A long idle stretch (10⁵ periods): one power, the same value to rounding.
    rp.touch(165 * US + 100_000 * 55 * US);
    let want = libm::pow(keep, 100_003.0);
    assert!((rp.alpha - want).abs() <= 1e-12 * want, "{} vs {want}", rp.alpha);
}

#[test]
fn hpcc_timer_only_first_cnp_periodic_alpha_and_stages_exact() {
    let line = 100_000_000_000u64;
    let p = params(Preset::DcqcnHpcc, line);
    let (g, keep) = (p.g, 1.0 - p.g);
    // × C/25G: 5 Mb/s and 50 Mb/s at 25G are 20 and 200 Mb/s at 100G.
    assert_eq!((p.rate_ai, p.rate_hai, p.rate_min, p.f), (20e6, 200e6, 100e6, 1));
    let mut rp = Rp::new(p);
    // First CNP: rate unchanged, α = 1, nothing cut until the 4 µs check.
    rp.on_cnp(0);
    assert_eq!((rp.rc, rp.rt, rp.alpha), (1e11, 1e11, 1.0));
    assert_eq!(rp.next_deadline(), Some(4 * US));
    rp.on_time(4 * US);
    // α at 4 µs: four periods, none with a CNP (the first CNP does not count).
    let a4 = keep * keep * keep * keep;
    let mut rc = 1e11 * (1.0 - a4 / 2.0);
    assert_eq!((rp.alpha, rp.rc, rp.rt), (a4, rc, 1e11), "t_cnt = 0: no clamp");
    assert_eq!(rp.next_deadline(), Some(304 * US));
    // Stage 0 < F: fast recovery.
    assert_eq!(rp.on_time(304 * US), Some(Step::FastRecovery));
    rc = (1e11 + rc) / 2.0;
    assert_eq!(rp.rc, rc);
    // A CNP at 350 µs: the cut waits for the check at 352 µs, clamps (t_cnt = 1), uses α at 352 µs.
    rp.on_cnp(350 * US);
    assert_eq!(rp.rc, rc);
    assert_eq!(rp.next_deadline(), Some(352 * US));
    rp.on_time(352 * US);
    let mut a = 1.0;
    for j in 1..=352 {
        a = keep * a + if j == 351 { g } else { 0.0 }; // the CNP at 350 µs counts in period (350, 351]
    }
    let mut rt = rc;
    rc *= 1.0 - a / 2.0;
    assert_eq!((rp.alpha, rp.rt, rp.rc), (a, rt, rc));
    // Stages: 0 → FR, 1 = F → AI (R_AI), then hyper with a fixed R_HAI.
    assert_eq!(rp.on_time(652 * US), Some(Step::FastRecovery));
    rc = (rt + rc) / 2.0;
    assert_eq!((rp.rt, rp.rc), (rt, rc));
    assert_eq!(rp.on_time(952 * US), Some(Step::Additive));
    rt += 20e6;
    rc = (rt + rc) / 2.0;
    assert_eq!((rp.rt, rp.rc), (rt, rc));
    for t in [1252, 1552] {
        assert_eq!(rp.on_time(t * US), Some(Step::Hyper));
        rt += 200e6;
        rc = (rt + rc) / 2.0;
        assert_eq!((rp.rt, rp.rc), (rt, rc), "at {t} µs");
    }
    // The byte counter is off: bytes never make an increase.
    rp.on_sent(1 << 40, 1600 * US);
    assert_eq!(rp.rc, rc);
}

#[test]
fn decrease_checks_keep_the_grid_of_the_first_cnp_and_cnps_are_counted() {
    // Timer-only DCQCN (HPCC preset, checks every 4 µs): the first CNP at 3 µs puts every later check on
    // 3 + 4m µs, so a CNP at 350 µs waits for the check at 351 µs (not 352 or 359 µs: a grid from 0, or
    // one whose step is taken from now + epoch).
    let mut rp = Rp::new(params(Preset::DcqcnHpcc, 100_000_000_000));
    rp.on_cnp(3 * US);
    assert_eq!(rp.next_deadline(), Some(7 * US));
    rp.on_time(7 * US);
    assert_eq!(rp.on_time(307 * US), Some(Step::FastRecovery));
    rp.on_cnp(350 * US);
    assert_eq!(rp.next_deadline(), Some(351 * US));
    assert_eq!((rp.cnps, rp.cuts), (2, 1));
    rp.on_time(351 * US);
    assert_eq!((rp.cnps, rp.cuts), (2, 2));
}

#[test]
fn the_byte_counter_halves_in_hyper_increase_only() {
    // ns-3 DCQCN (byte counter 150 KB, F = 5, halved in hyper increase): after a cut, 75 KB make no
    // increase; five 150 KB and five timer periods take both counters to F, into hyper increase, where
    // 75 KB (not 74,999 B, nor 300 KB) make the next one.
    let mut rp = Rp::new(params(Preset::DcqcnNs3, G40));
    rp.on_cnp(0);
    rp.on_sent(75_000, 0);
    assert_eq!(rp.bc_cnt, 0, "not in hyper: the whole 150 KB");
    rp.on_sent(75_000, 0);
    assert_eq!(rp.bc_cnt, 1);
    for _ in 0..4 {
        rp.on_sent(150_000, 0);
    }
    let mut last = None;
    for k in 1..=5 {
        last = rp.on_time(k * 1500 * US);
    }
    assert_eq!((rp.t_cnt, rp.bc_cnt, last), (5, 5, Some(Step::Hyper)));
    assert_eq!(rp.next_deadline(), Some(7500 * US + 750 * US), "the increase timer halves in hyper increase too");
    rp.on_sent(74_999, 7500 * US);
    assert_eq!(rp.bc_cnt, 5);
    rp.on_sent(1, 7500 * US);
    assert_eq!(rp.bc_cnt, 6, "half the byte counter in hyper increase");
}

#[test]
fn target_rate_reset_divides_a_far_target_by_eight() {
    let mut rp = Rp::new(params(Preset::DcqcnNs3, G40));
    for i in 0..4 {
        rp.on_cnp(i * US); // α = 1 stays 1 (binary +g): R_C halves, R_T stays at line
    }
    assert_eq!((rp.rc, rp.rt), (2.5e9, 40e9));
    assert_eq!(rp.on_time(3 * US + 1500 * US), Some(Step::FastRecovery));
    assert_eq!((rp.rt, rp.rc), (5e9, 3.75e9), "R_T > 10·R_C on the first step: R_T/8");
}

#[test]
fn target_rate_reset_only_on_the_first_step_of_a_far_target_and_only_where_enabled() {
    // Four CNPs leave R_C = 2.5 G under R_T = 40 G (α stays 1: each cut halves).
    let four = |p: Params| {
        let mut rp = Rp::new(p);
        for i in 0..4 {
            rp.on_cnp(i * US);
        }
        rp
    };
    // ns-3 (reset on): the first increase by the byte counter (t_cnt = 0, bc_cnt = 1) divides R_T by 8.
    let mut rp = four(params(Preset::DcqcnNs3, G40));
    rp.on_sent(150_000, 4 * US);
    assert_eq!((rp.t_cnt, rp.bc_cnt, rp.rt, rp.rc), (0, 1, 5e9, 3.75e9));
    // ns-3, one CNP: the first step, but R_T = 2·R_C is not far: fast recovery only.
    let mut rp = Rp::new(params(Preset::DcqcnNs3, G40));
    rp.on_cnp(0);
    rp.on_time(1500 * US);
    assert_eq!((rp.rt, rp.rc), (40e9, 30e9));
    // ns-3 with R_min = 4 G: R_T = 10·R_C exactly is not "more than ten times".
    let mut p = params(Preset::DcqcnNs3, G40);
    p.rate_min = 4e9;
    let mut rp = four(p);
    assert_eq!(rp.rc, 4e9);
    rp.on_time(1503 * US);
    assert_eq!((rp.rt, rp.rc), (40e9, 22e9));
    // The paper's model has no reset: a far target stays.
    let mut rp = four(params(Preset::DcqcnPaper, G40));
    assert_eq!((rp.rc, rp.rt), (2.5e9, 40e9));
    rp.on_time(58 * US);
    assert_eq!((rp.rt, rp.rc), (40e9, 21.25e9));
}

#[test]
fn increase_stops_at_line_rate() {
    let mut rp = Rp::new(params(Preset::DcqcnPaper, G40));
    rp.on_cnp(0);
    let mut t = 0;
    while let Some(d) = rp.next_deadline() {
        t = d;
        rp.on_time(d);
        assert!(t < 100_000 * US);
    }
    assert_eq!((rp.rc, rp.rt), (40e9, 40e9));
    assert!(t > 0);
}

#[test]
fn np_one_cnp_per_interval() {
    let mut np = Np::default();
    assert!(np.on_ce(0, 50 * US));
    assert!(!np.on_ce(10 * US, 50 * US), "10 µs later: none");
    let mut np = Np::default();
    assert!(np.on_ce(0, 50 * US));
    assert!(np.on_ce(60 * US, 50 * US), "60 µs later: a second");
    assert_eq!(np.cnps, 2);
    assert!(!np.on_ce(110 * US - 1, 50 * US) && np.on_ce(110 * US, 50 * US), "exactly one interval later: the next");
}

fn conn(size: u64, line: u64) -> Conn {
    conn_with("", size, line)
}

/// A queue pair with the transport keys `keys` over the defaults.
fn conn_with(keys: &str, size: u64, line: u64) -> Conn {
    let cfg: Cfg = toml::from_str(keys).unwrap();
    Conn::new(0, size, cfg.resolve("t", 1500).unwrap(), line)
}

fn data(seq: u64, len: u32, ce: bool) -> Packet {
    let ecn = if ce { Ecn::Ce } else { Ecn::Ect };
    Packet { seq, size: len + ROCE_HEADER_BYTES, payload: len, ecn, ..Packet::blank() }
}

fn ack(a: u64, f: u16) -> Packet {
    Packet { ack: a, flags: f, payload: 0, ..data(0, 0, false) }
}

#[test]
fn receiver_cnp_rides_on_acks_at_most_once_per_interval() {
    let mss = 1456;
    let mut c = conn(u64::MAX, G40);
    let mut out = Vec::new();
    c.on_data(0, &data(0, mss, true), &mut out);
    c.on_data(10 * US, &data(mss as u64, mss, true), &mut out);
    c.on_data(60 * US, &data(2 * mss as u64, mss, true), &mut out);
    let f: Vec<u16> = out.iter().map(|o| if let Out::Ack { flags, .. } = o { *flags } else { 0 }).collect();
    assert_eq!(f, vec![flags::ACK | flags::CNP, flags::ACK, flags::ACK | flags::CNP]);
}

#[test]
fn receiver_nacks_a_gap_once_per_interval_and_drops_out_of_order() {
    let mss = 1456u64;
    let mut c = conn(u64::MAX, G40);
    let mut out = Vec::new();
    c.on_data(0, &data(0, mss as u32, false), &mut out);
    c.on_data(US, &data(2 * mss, mss as u32, false), &mut out);
    c.on_data(2 * US, &data(3 * mss, mss as u32, false), &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[1], Out::Ack { ack: mss, flags: flags::NACK, ts_echo: 0, win: 0 });
    assert_eq!(c.rcv_nxt, mss);
    // After nack_interval (500 µs), the same gap is named again.
    c.on_data(501 * US, &data(4 * mss, mss as u32, false), &mut out);
    assert_eq!(out.len(), 3);
    c.on_data(502 * US, &data(mss, mss as u32, false), &mut out);
    assert_eq!(out[3], Out::Ack { ack: 2 * mss, flags: flags::ACK, ts_echo: 0, win: 0 });
}

#[test]
fn sender_paces_at_r_c_one_packet_in_the_nic_and_goes_back_on_nack() {
    let mss = 1456u64;
    let line = 10_000_000_000u64;
    let mut c = conn(100 * mss, line);
    let mut out = Vec::new();
    c.start(0, &mut out);
    assert_eq!(out.len(), 1, "one packet in the NIC");
    c.on_feedback(US / 2, &ack(0, flags::ACK), &mut out);
    assert_eq!(out.len(), 1, "still one until it departs");
    // It leaves at 0: the next may leave 1500 B · 8 / 10 Gb/s = 1.2 µs later.
    c.departed(mss as u32, 0, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(c.cc_timer.deadline, Some(1_200_000));
    c.on_timer(0, 1_200_000, &mut out);
    assert_eq!(out.len(), 2);
    // A CNP halves R_C (paper preset, α = 1): the next gap is 2.4 µs.
    c.on_feedback(1_300_000, &ack(0, flags::CNP), &mut out);
    c.departed(mss as u32, 1_200_000, &mut out);
    assert_eq!(c.cc_timer.deadline, Some(3_600_000));
    c.on_timer(0, 3_600_000, &mut out);
    assert_eq!(out.len(), 3);
    c.departed(mss as u32, 3_600_000, &mut out);
    // NACK for the second packet: go back to it.
    assert_eq!(c.snd_nxt, 3 * mss);
    c.on_feedback(4 * US, &ack(mss, flags::NACK), &mut out);
    assert_eq!((c.snd_una, c.snd_nxt), (mss, mss));
    c.on_timer(0, 6_000_000, &mut out);
    assert_eq!(out.last(), Some(&Out::Seg { seq: mss, len: mss as u32, flags: flags::DATA, ts: 6_000_000 }));
    assert_eq!(c.losses(), (1, 0));
}

#[test]
fn rto_goes_back_after_a_lost_tail() {
    let mss = 1456u64;
    let mut c = conn(2 * mss, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    c.departed(mss as u32, 0, &mut out);
    c.on_timer(0, 1_000_000, &mut out);
    c.departed(mss as u32, 1_000_000, &mut out);
    c.on_feedback(5 * US, &ack(mss, flags::ACK), &mut out);
    assert_eq!(c.rto_timer.deadline, Some(5 * US + 1000 * US));
    c.on_timer(1, 1005 * US, &mut out);
    assert_eq!(c.losses(), (1, 1));
    assert_eq!(c.rto_timer.deadline, Some(2005 * US), "the RTO runs again from the timeout");
    assert_eq!(out.last(), Some(&Out::Seg { seq: mss, len: mss as u32, flags: flags::DATA, ts: 1005 * US }));
}

#[test]
fn a_queue_pair_is_no_larger_than_a_tcp_connection() {
    // The Connection enum takes its largest variant: RDMA must not grow every TCP run's slots.
    let (rdma, tcp) = (std::mem::size_of::<Conn>(), std::mem::size_of::<crate::transport::tcp::Conn>());
    eprintln!("rdma::Conn {rdma} B, tcp::Conn {tcp} B");
    assert!(rdma <= tcp, "rdma::Conn {rdma} B > tcp::Conn {tcp} B");
}

#[test]
fn a_queue_pair_runs_dcqcns_increase_timer_until_its_data_is_acknowledged() {
    // Paper preset (no byte counter in reach: 10 MB): the increase timer T = 55 µs is the queue pair's
    // engine deadline whenever no pacing departure is earlier, and only while it has data unacknowledged.
    let mss = 1456u64;
    let line = G40 as f64;
    let mut c = conn(mss, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    assert_eq!((c.trace().rate_bps, c.trace().alpha), (line, 1.0));
    // A CNP while the first packet is still in the NIC: R_C halves, α stays 1, and the timer runs.
    c.on_feedback(US, &ack(0, flags::CNP), &mut out);
    assert_eq!((c.trace().rate_bps, c.trace().alpha), (line / 2.0, 1.0));
    assert_eq!(c.cc_timer.deadline, Some(56 * US));
    c.on_timer(0, 56 * US, &mut out);
    // Fast recovery: R_C ← (R_T + R_C) / 2; α decays by (1 − g), g = 1/256.
    assert_eq!((c.trace().rate_bps, c.trace().alpha), (0.75 * line, 1.0 - 1.0 / 256.0));
    c.departed(mss as u32, 57 * US, &mut out);
    assert_eq!(c.cc_timer.deadline, Some(111 * US));
    // Every byte acknowledged: no deadline left for the rate control.
    c.on_feedback(60 * US, &ack(mss, flags::ACK), &mut out);
    assert!(c.sender_done());
    assert_eq!((c.cc_timer.deadline, c.rto_timer.deadline), (None, None));
}

#[test]
fn a_queue_pair_feeds_its_sent_bytes_to_dcqcns_byte_counter() {
    // A 4 500 B byte counter (three 1 500 B packets on the wire) and a timer too slow to matter.
    let mss = 1456u64;
    let line = G40 as f64;
    let mut c = conn_with("byte_counter = \"4500B\"\nrate_increase_timer = \"1s\"", 100 * mss, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    c.on_feedback(US, &ack(0, flags::CNP), &mut out);
    assert_eq!(c.trace().rate_bps, line / 2.0);
    // Bytes before the cut do not count; three packets after it are one byte-counter event.
    let mut t = 0;
    for k in 1..=3 {
        c.departed(mss as u32, t, &mut out);
        t = c.cc_timer.deadline.unwrap();
        c.on_timer(0, t, &mut out);
        let want = if k < 3 { line / 2.0 } else { 0.75 * line };
        assert_eq!(c.trace().rate_bps, want, "after packet {k} of the cut");
    }
}

#[test]
fn only_new_acknowledgements_move_the_sender_and_its_rto() {
    // Two packets out (no window, the paper preset's pacing at 40 Gb/s: 0.3 µs apart).
    let mss = 1456u64;
    let mut c = conn(3 * mss, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    c.departed(mss as u32, 0, &mut out);
    c.on_timer(0, c.cc_timer.deadline.unwrap(), &mut out);
    assert_eq!((c.snd_una, c.snd_max), (0, 2 * mss));
    // A CNP of its own (with `ack_interval` > 1 the receiver sends them between ACKs) carries the
    // receiver's rcv_nxt but acknowledges nothing.
    c.on_feedback(2 * US, &ack(mss, flags::CNP), &mut out);
    assert_eq!(c.snd_una, 0);
    assert_eq!(c.rto_timer.deadline, Some(1000 * US), "armed at the first send");
    // An ACK of the first packet restarts the RTO from now; a duplicate of it does not.
    c.on_feedback(3 * US, &ack(mss, flags::ACK), &mut out);
    assert_eq!((c.snd_una, c.rto_timer.deadline), (mss, Some(1003 * US)));
    c.on_feedback(4 * US, &ack(mss, flags::ACK), &mut out);
    assert_eq!((c.snd_una, c.rto_timer.deadline), (mss, Some(1003 * US)));
}

#[test]
fn a_cnp_goes_alone_when_no_ack_is_due() {
    // ACKs every second packet: a CE-marked first packet owes no ACK yet, so its CNP is a packet of its
    // own (acknowledging rcv_nxt); the second packet's ACK then carries no CNP (one per 50 µs).
    let mss = 1456u64;
    let mut c = conn_with("ack_interval = 2", u64::MAX, G40);
    let mut out = Vec::new();
    c.on_data(0, &data(0, mss as u32, true), &mut out);
    assert_eq!(out, vec![Out::Ack { ack: mss, flags: flags::CNP, ts_echo: 0, win: 0 }]);
    c.on_data(US, &data(mss, mss as u32, true), &mut out);
    assert_eq!(out[1], Out::Ack { ack: 2 * mss, flags: flags::ACK, ts_echo: 0, win: 0 });
}

#[test]
fn the_queue_pairs_transport_hooks() {
    let mss = 1456u64;
    // One packet: the receiver holds it before the sender has its ACK — closed only with both ends done.
    let mut c = conn(mss, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    assert!(c.on_data(US, &data(0, mss as u32, false), &mut out));
    assert!(!c.closed(), "the sender still waits for its ACK");
    c.on_feedback(2 * US, &ack(mss, flags::ACK), &mut out);
    assert!(c.closed());
    // A long-lived queue pair whose application stops writing: the flow becomes what was sent, complete
    // once the receiver holds it all, and only once.
    let mut c = conn(u64::MAX, G40);
    c.start(0, &mut out);
    c.departed(mss as u32, 0, &mut out);
    c.on_timer(0, c.cc_timer.deadline.unwrap(), &mut out);
    c.on_data(US, &data(0, mss as u32, false), &mut out);
    assert_eq!(c.end_data(2 * US), (2 * mss, false), "the second packet is not there yet");
    c.on_data(3 * US, &data(mss, mss as u32, false), &mut out);
    assert_eq!(c.finished_at, Some(3 * US));
    let mut d = conn(u64::MAX, G40);
    d.start(0, &mut out);
    d.on_data(US, &data(0, mss as u32, false), &mut out);
    assert_eq!(d.end_data(2 * US), (mss, true));
    assert_eq!(d.end_data(3 * US), (mss, false));
    // Control packets go on `control_priority`.
    assert_eq!(conn_with("control_priority = 3", mss, G40).control_prio(), Some(3));
    // The trace's window: none (NaN) without one, the window with one, HPCC's W.
    assert!(conn(mss, G40).trace().cwnd_bytes.is_nan());
    assert_eq!(conn_with("window = \"10KB\"", mss, G40).trace().cwnd_bytes, 10_000.0);
    let h = conn_with("cc = \"hpcc\"\nbase_rtt = \"8us\"", mss, G40);
    let RateControl::Hpcc(hp) = &h.rc else { unreachable!() };
    assert_eq!(h.trace().cwnd_bytes, hp.w);
    assert_ne!(h.trace().cwnd_bytes, h.p.window as f64, "W, not the window rounded to packets");
}

#[test]
fn the_ns3_preset_is_the_bobzhuyb_column_and_rdma_delays_acks_not_data() {
    // transports.md C1, "DCQCN ns-3 bobzhuyb/ns3-rdma defaults" (the paper and HPCC columns are pinned
    // step by step above).
    let d = DcqcnSpec::preset(Preset::DcqcnNs3);
    assert_eq!((d.g, d.cnp_interval, d.alpha_timer, d.rate_decrease_interval), (1.0 / 16.0, 50 * US, 55 * US, 0));
    assert_eq!((d.rate_increase_timer, d.byte_counter, d.f), (1500 * US, Some(150_000), 5));
    let p = d.at(G40);
    assert_eq!((p.rate_ai, p.rate_hai, p.rate_min), (5e6, 50e6, 100e6));
    assert!(p.target_rate_reset && p.hyper_halving && !p.clamp_target_rate);
    // The NIC paces a queue pair: extra RTT (host.extra_delay) goes on its ACKs, not its data.
    let cfg: Cfg = toml::from_str("").unwrap();
    assert!(!crate::transport::Resolved::delay_on_data(&cfg.resolve("t", 1500).unwrap()));
}

#[test]
fn any_key_that_overrides_the_preset_labels_the_transport_custom() {
    let label = |keys: &str| {
        let cfg: Cfg = toml::from_str(keys).unwrap();
        crate::transport::Resolved::label(&cfg.resolve("t", 1500).unwrap_or_else(|e| panic!("{keys}: {e}")))
    };
    assert_eq!(label(""), "rdma:dcqcn(dcqcn_paper)");
    let keys = [
        ("timely", "ewma = 0.5"), ("timely", "t_low = \"10us\""), ("timely", "t_high = \"900us\""), ("timely", "beta = 0.5"),
        ("timely", "min_rtt = \"10us\""), ("timely", "hai_thresh = 3"), ("hpcc", "eta = 0.9"), ("hpcc", "max_stage = 3"),
        ("hpcc", "base_rtt = \"10us\""), ("hpcc", "fast_react = false"), ("ib_cc", "ccti_increase = 2"),
        ("ib_cc", "ccti_limit = 100"), ("ib_cc", "ccti_min = 1"), ("ib_cc", "ccti_timer = 100"), ("ib_cc", "becn_interval = \"5us\""),
        ("dcqcn", "g = 0.5"), ("dcqcn", "cnp_interval = \"10us\""), ("dcqcn", "alpha_timer = \"10us\""),
        ("dcqcn", "alpha_update = \"periodic\""), ("dcqcn", "rate_decrease_interval = \"4us\""),
        ("dcqcn", "rate_increase_timer = \"100us\""), ("dcqcn", "byte_counter = \"1MB\""), ("dcqcn", "f = 3"),
        ("dcqcn", "rate_ai = \"10Mbps\""), ("dcqcn", "rate_hai = \"100Mbps\""), ("dcqcn", "rate_min = \"1Gbps\""),
        ("dcqcn", "clamp_target_rate = true"), ("dcqcn", "target_rate_reset = true"), ("dcqcn", "rate_on_first_cnp = 0.5"),
        ("dcqcn", "hyper_halving = true"),
    ];
    for (cc, key) in keys {
        assert!(label(&format!("cc = \"{cc}\"\n{key}")).ends_with("+custom"), "{key}");
        assert!(!label(&format!("cc = \"{cc}\"")).ends_with("+custom"), "{cc}");
    }
}

#[test]
fn queue_pair_keys_at_their_bounds() {
    let resolve = |keys: &str| {
        let cfg: Cfg = toml::from_str(keys).unwrap();
        cfg.resolve("t", 1500).map_err(|e| e.field)
    };
    let p = resolve("").unwrap();
    assert_eq!((p.mss, p.ack_interval, p.nack_interval, p.rto, p.control_priority, p.window), (1456, 1, 500 * US, 1000 * US, 0, u64::MAX));
    // The largest payload (MTU − 44), a window of one packet and the last priority are accepted.
    assert_eq!(resolve("mss = \"1456B\"").unwrap().mss, 1456);
    assert_eq!(resolve("mss = \"1000B\"\nwindow = \"1000B\"").unwrap().window, 1000);
    assert_eq!(resolve("control_priority = 7").unwrap().control_priority, 7);
    // HPCC's η at its bound; TIMELY's HPCC preset is HPCC ns-3's parameter set (a = 0.875), not the reference.
    assert!(resolve("cc = \"hpcc\"\neta = 1.0").is_ok());
    assert_eq!(resolve("cc = \"timely\"\npreset = \"timely_hpcc\"").unwrap().timely.ewma, 0.875);
    for bad in ["mss = \"1457B\"", "mss = \"0B\"", "mss = \"inf\"", "mss = \"1000B\"\nwindow = \"999B\"", "cc = \"hpcc\"\neta = 0.0", "cc = \"timely\"\nbeta = 0.0", "cc = \"timely\"\nbeta = inf"] {
        assert!(resolve(bad).is_err(), "{bad}");
    }
}
