//! Unit tests: TIMELY's update rules (C2, both variants) recomputed step by step, TIMELY+TCD's UE rule
//! and β, the RTT sample taken from the echoed send time, the receiver's echo of marks, and DCQCN+TCD's
//! UE notification and reaction.

use super::config::{Cfg, RdmaParams};
use super::dcqcn::Np;
use super::timely::{Echo, Rate, Spec, Update, Variant, TCD_BETA};
use super::*;
use crate::transport::Setup;
use crate::units::{MS, US};

const G40: u64 = 40_000_000_000;

/// A data packet of flow 0 from host 0 to 1.
fn data_packet() -> Packet {
    Packet { payload: 1456, ecn: Ecn::Ect, ..Packet::blank() }
}

fn resolved(toml_text: &str) -> RdmaParams {
    let cfg: Cfg = toml::from_str(toml_text).unwrap();
    cfg.resolve("t", 1500).unwrap()
}

fn reference_at(rate: f64) -> Rate {
    let mut r = Rate::new(Spec::reference().at(G40));
    r.rate = rate;
    r
}

#[test]
fn presets_hold_the_spec_values() {
    let p = Spec::reference().at(G40);
    assert_eq!((p.variant, p.ewma, p.t_low, p.t_high, p.beta, p.min_rtt, p.hai_thresh), (Variant::PerCompletion, 0.02, 0, MS, 0.8, 20 * US, 5));
    // δ = 10 Mb/s per 10 Gb/s: 40 Mb/s at 40 G; hyper 5δ.
    assert_eq!((p.rate_ai, p.rate_hai, p.rate_min), (40e6, 200e6, 100e6));
    let h = Spec::hpcc().at(G40);
    assert_eq!((h.variant, h.ewma, h.t_low, h.t_high, h.beta), (Variant::PerRtt, 0.875, 50 * US, 500 * US, 0.8));
    let t = resolved("cc = \"timely\"\ntcd = true").timely;
    assert_eq!((t.beta, t.tcd), (TCD_BETA, true));
    // An explicit β wins over TCD's.
    assert_eq!(resolved("cc = \"timely\"\ntcd = true\nbeta = 1.0").timely.beta, 1.0);
}

#[test]
fn per_completion_rules_exact() {
    let (a, beta, d, min_rtt) = (0.02, 0.8, 40e6, 20e-6);
    let mut r = reference_at(10e9);
    // First sample: no previous RTT, zero difference, gradient 0 → increase by w·δ with w = 1.
    assert_eq!(r.on_ack(0, 30 * US, 0, 0, Echo::None), Update::Increase);
    assert_eq!(r.rate, 10e9 + d);
    // 10 µs later, RTT 40 µs: diff +10 µs, EWMA a·10 µs = 0.2 µs, gradient 0.01 → R·(1 − β·0.01); the
    // gradient decrease is not time-scaled.
    let r0 = r.rate;
    assert_eq!(r.on_ack(10 * US, 40 * US, 0, 0, Echo::None), Update::GradientDecrease);
    let diff = a * 10e-6;
    assert!((r.gradient() - diff / min_rtt).abs() < 1e-12);
    assert!((r.rate - r0 * (1.0 - beta * diff / min_rtt)).abs() < 1e-3);
    // RTT 35 µs 5 µs later: diff −5 µs, EWMA 0.98·0.2 − 0.02·5 = 0.096 µs > 0: still a decrease.
    let r1 = r.rate;
    assert_eq!(r.on_ack(15 * US, 35 * US, 0, 0, Echo::None), Update::GradientDecrease);
    let diff = (1.0 - a) * diff + a * -5e-6;
    assert!((r.rate - r1 * (1.0 - beta * diff / min_rtt)).abs() < 1e-3, "{} {}", r.rate, r1);
    // Above T_high (1 ms), 5 µs after the last update: w = 5/20 → R·(1 − w·β·(1 − T_high/rtt)).
    let r2 = r.rate;
    assert_eq!(r.on_ack(20 * US, 2 * MS, 0, 0, Echo::None), Update::HighDecrease);
    assert!((r.rate - r2 * (1.0 - 0.25 * beta * 0.5)).abs() < 1e-3);
    assert_eq!(r.last_rtt, 2 * MS);
}

#[test]
fn per_completion_hyper_after_five_negative_differences_and_time_scaled_steps() {
    let mut r = reference_at(5e9);
    r.on_ack(0, 100 * US, 0, 0, Echo::None);
    let mut t = 0;
    let mut rtt = 100 * US;
    // Each sample 1 µs shorter, 20 µs apart (w = 1); the EWMA goes negative at once.
    for i in 1..=6 {
        t += 20 * US;
        rtt -= US;
        let before = r.rate;
        let u = r.on_ack(t, rtt, 0, 0, Echo::None);
        if i < 5 {
            assert_eq!((u, r.rate), (Update::Increase, before + 40e6), "{i}");
        } else {
            assert_eq!((u, r.rate), (Update::Hyper, before + 200e6), "{i}");
        }
    }
    // 4 µs later: w = 0.2, still hyper.
    let before = r.rate;
    r.on_ack(t + 4 * US, rtt - US, 0, 0, Echo::None);
    assert!((r.rate - (before + 0.2 * 200e6)).abs() < 1e-3);
    // A longer RTT resets the count.
    r.on_ack(t + 30 * US, rtt + 10 * US, 0, 0, Echo::None);
    assert_eq!(r.count, 0);
}

#[test]
fn per_completion_below_t_low_adds_w_delta_whatever_the_gradient() {
    let mut p = Spec::reference();
    p.t_low = 50 * US;
    let mut r = Rate::new(p.at(G40));
    r.rate = 10e9;
    r.on_ack(0, 30 * US, 0, 0, Echo::None);
    assert_eq!((r.rate, r.updates), (10e9 + 40e6, 1));
    // A rising RTT (positive gradient) still below T_low, 5 µs later (w = 0.25): + w·δ.
    assert_eq!(r.on_ack(5 * US, 45 * US, 0, 0, Echo::None), Update::Increase);
    assert!((r.rate - (10e9 + 40e6 + 0.25 * 40e6)).abs() < 1e-3);
    // At T_low exactly it is the gradient region: a decrease.
    assert_eq!(r.on_ack(10 * US, 50 * US, 0, 0, Echo::None), Update::GradientDecrease);
    assert_eq!(r.updates, 3);
    // At T_high exactly too (the T_high rule would leave the rate: 1 − w·β·0).
    let before = r.rate;
    assert_eq!(r.on_ack(20 * US, MS, 0, 0, Echo::None), Update::GradientDecrease);
    assert!(r.rate < before);
}

#[test]
fn rate_stays_between_min_and_line() {
    let mut r = reference_at(200e6);
    r.on_ack(0, 30 * US, 0, 0, Echo::None);
    r.on_ack(20 * US, 900 * US, 0, 0, Echo::None); // gradient 0.02·870/20 = 0.87 → factor 0.304
    r.on_ack(40 * US, 990 * US, 0, 0, Echo::None);
    assert_eq!(r.rate, 100e6);
    let mut r = reference_at(G40 as f64);
    r.on_ack(0, 30 * US, 0, 0, Echo::None);
    assert_eq!(r.rate, G40 as f64);
}

#[test]
fn tcd_holds_the_rate_on_ue_in_the_gradient_region_only() {
    let mut p = Spec::reference();
    p.tcd = true;
    p.beta = TCD_BETA;
    let mut r = Rate::new(p.at(G40));
    r.rate = 10e9;
    r.on_ack(0, 30 * US, 0, 0, Echo::None);
    let r0 = r.rate;
    // Positive gradient with UE: held, but the EWMA moved.
    assert_eq!(r.on_ack(10 * US, 40 * US, 0, 0, Echo::Ue), Update::Held);
    assert_eq!(r.rate, r0);
    assert!(r.gradient() > 0.0);
    // The same with CE: decrease with β = 1.6.
    let g = {
        let diff = 0.98 * r.rtt_diff + 0.02 * 10e-6 * 1e12;
        diff / (20e-6 * 1e12)
    };
    assert_eq!(r.on_ack(20 * US, 50 * US, 0, 0, Echo::Ce), Update::GradientDecrease);
    assert!((r.rate - r0 * (1.0 - 1.6 * g)).abs() < 1e-3, "{} {}", r.rate, r0 * (1.0 - 1.6 * g));
    // Above T_high UE does not hold.
    assert_eq!(r.on_ack(40 * US, 3 * MS, 0, 0, Echo::Ue), Update::HighDecrease);
    // Without TCD, UE is nothing.
    let mut n = reference_at(10e9);
    n.on_ack(0, 30 * US, 0, 0, Echo::None);
    assert_eq!(n.on_ack(10 * US, 40 * US, 0, 0, Echo::Ue), Update::GradientDecrease);
    // Per RTT (timely_hpcc) the same: UE in the gradient region holds, no mark there cuts.
    let mut p = Spec::hpcc();
    p.tcd = true;
    let mut h = Rate::new(p.at(G40));
    h.rate = 10e9;
    h.on_ack(0, 60 * US, 1, 10_000, Echo::None);
    assert_eq!(h.on_ack(0, 70 * US, 10_001, 20_000, Echo::Ue), Update::Held);
    assert_eq!(h.rate, 10e9);
    assert_eq!(h.on_ack(0, 80 * US, 20_001, 30_000, Echo::None), Update::GradientDecrease);
}

#[test]
fn per_rtt_updates_once_an_rtt() {
    let mut r = Rate::new(Spec::hpcc().at(G40));
    r.rate = 10e9;
    // The first ACK records the RTT and snd_nxt = 10 000.
    assert_eq!(r.on_ack(0, 60 * US, 1_000, 10_000, Echo::None), Update::NoUpdate);
    // ACKs up to 10 000 do not close the RTT.
    assert_eq!(r.on_ack(US, 90 * US, 10_000, 20_000, Echo::None), Update::NoUpdate);
    // Past it: diff +30 µs → EWMA 0.875·30 µs, gradient 1.3125 → factor max(0, 1 − 0.8·1.3125) = 0 →
    // R_min.
    assert_eq!(r.on_ack(2 * US, 90 * US, 11_000, 30_000, Echo::None), Update::GradientDecrease);
    assert_eq!(r.rate, 100e6);
    // Below T_low: R_AI (10 Mb/s per 10 G = 40 Mb/s) for 5 increases, then R_HAI (200 Mb/s).
    let mut seq = 30_000;
    for i in 0..7 {
        let before = r.rate;
        r.on_ack(3 * US + i, 40 * US, seq + 1, seq + 10_000, Echo::None);
        seq += 10_000;
        let step = if i < 5 { 40e6 } else { 200e6 };
        assert!((r.rate - (before + step)).abs() < 1e-3, "{i}: {}", r.rate - before);
    }
}

#[test]
fn per_rtt_ewma_is_exact_over_two_rtts() {
    // rtt_diff ← (1 − a)·rtt_diff + a·(rtt − prev), a = 0.875, once an RTT; exact in binary floating point.
    let mut r = Rate::new(Spec::hpcc().at(G40));
    r.rate = 10e9;
    r.on_ack(0, 60 * US, 1_000, 10_000, Echo::None);
    r.on_ack(2 * US, 90 * US, 11_000, 20_000, Echo::None);
    assert_eq!(r.rtt_diff, 0.875 * (30 * US) as f64);
    r.on_ack(4 * US, 100 * US, 21_000, 30_000, Echo::None);
    assert_eq!(r.rtt_diff, 0.125 * (0.875 * (30 * US) as f64) + 0.875 * (10 * US) as f64);
}

#[test]
fn per_rtt_regions_at_their_boundaries() {
    // timely_hpcc: T_low 50 µs, T_high 500 µs. Each call closes one RTT (its ACK passes the last snd_nxt).
    let mut r = Rate::new(Spec::hpcc().at(G40));
    r.rate = 10e9;
    let mut seq = 0;
    let mut close = |r: &mut Rate, rtt_us: u64, echo: Echo| {
        let ack = seq + 1;
        seq += 10_000;
        r.on_ack(0, rtt_us * US, ack, seq, echo)
    };
    assert_eq!(close(&mut r, 30, Echo::None), Update::NoUpdate, "the first RTT only records");
    // Below T_low the rate rises even with a rising RTT (positive gradient).
    assert_eq!(close(&mut r, 40, Echo::None), Update::Increase);
    // At T_low exactly, rising: the gradient region, which cuts.
    assert_eq!(close(&mut r, 50, Echo::None), Update::GradientDecrease);
    assert_eq!(close(&mut r, 200, Echo::None), Update::GradientDecrease);
    // Between T_low and T_high with a falling RTT (negative gradient): an increase.
    assert!(r.rtt_diff > 0.0);
    assert_eq!(close(&mut r, 100, Echo::None), Update::Increase);
    assert!(r.rtt_diff < 0.0);
    // At T_high exactly, rising: still the gradient region (a cut), not the T_high rule (factor 1 there).
    // The packet was UE-marked, which TIMELY without TCD ignores (no hold).
    let before = r.rate;
    assert_eq!(close(&mut r, 500, Echo::Ue), Update::GradientDecrease);
    assert!(r.rate < before);
    // Above T_high: R·(1 − β·(1 − T_high/rtt)), β = 0.8 — from 10 Gb/s, so that no wrong factor hides
    // behind the R_min clamp.
    r.rate = 10e9;
    let before = r.rate;
    assert_eq!(close(&mut r, 600, Echo::None), Update::HighDecrease);
    assert_eq!(r.rate, before * (1.0 - 0.8 * (1.0 - 500.0 * US as f64 / (600 * US) as f64)));
    assert!((r.rate - 10e9 * (1.0 - 0.8 / 6.0)).abs() < 1.0, "{}", r.rate);
    assert_eq!(r.updates, 6, "one update per closed RTT after the first");
}

#[test]
fn the_rtt_sample_is_now_minus_the_echoed_send_time() {
    let p = resolved("cc = \"timely\"");
    let mut c = Conn::new(0, 100_000, p, G40);
    let mut out = Vec::new();
    c.start(0, &mut out);
    let Out::Seg { ts, .. } = out[0] else { panic!() };
    assert_eq!(ts, 0);
    c.departed(1456, 0, &mut out);
    // An ACK echoing the first packet's send time (0) arrives at 17 µs; one echoing 1 µs at 19 µs.
    let mut a = Packet { ack: 1456, flags: flags::ACK, ts: 0, ..data_packet() };
    c.on_feedback(17 * US, &a, &mut out);
    assert_eq!(c.last_rtt(), 17 * US);
    a.ts = US;
    a.ack = 2912;
    c.on_feedback(19 * US, &a, &mut out);
    assert_eq!(c.last_rtt(), 18 * US);
    assert_eq!(c.trace().alpha, c.rc.alpha());
}

#[test]
fn timely_receiver_echoes_the_strongest_mark_since_the_last_ack() {
    let p = resolved("cc = \"timely\"\nack_interval = 2");
    let mut c = Conn::new(0, u64::MAX, p, G40);
    let mut out = Vec::new();
    let mss = 1456u64;
    let pkt = |seq: u64, ecn: Ecn| Packet { seq, payload: mss as u32, ecn, ..data_packet() };
    c.on_data(0, &pkt(0, Ecn::Ue), &mut out);
    c.on_data(US, &pkt(mss, Ecn::Ect), &mut out);
    c.on_data(2 * US, &pkt(2 * mss, Ecn::Ce), &mut out);
    c.on_data(3 * US, &pkt(3 * mss, Ecn::Ue), &mut out);
    c.on_data(4 * US, &pkt(4 * mss, Ecn::Ect), &mut out);
    c.on_data(5 * US, &pkt(5 * mss, Ecn::Ect), &mut out);
    let f: Vec<u16> = out.iter().map(|o| if let Out::Ack { flags, .. } = o { *flags } else { 0 }).collect();
    assert_eq!(f, [flags::ACK | flags::UE, flags::ACK | flags::ECE, flags::ACK], "no CNPs for TIMELY");
}

#[test]
fn dcqcn_tcd_receiver_sends_ue_cnps_apart_from_ce_ones() {
    let mss = 1456u32;
    let pkt = |seq: u64, ecn: Ecn| Packet { seq, payload: mss, ecn, ..data_packet() };
    let cnps = |toml_text: &str| {
        let mut c = Conn::new(0, u64::MAX, resolved(toml_text), G40);
        let mut out = Vec::new();
        let marks = [Ecn::Ue, Ecn::Ue, Ecn::Ce, Ecn::Ue, Ecn::Ce];
        for (i, e) in marks.iter().enumerate() {
            c.on_data(i as u64 * 20 * US, &pkt(i as u64 * mss as u64, *e), &mut out);
        }
        out.iter().map(|o| if let Out::Ack { flags, .. } = o { *flags & (flags::CNP | flags::UE) } else { 0 }).collect::<Vec<u16>>()
    };
    let ue = flags::CNP | flags::UE;
    // UE CNPs at 0 and 60 µs (limit 50 µs), CE CNPs at 40 µs and not at 80 µs (40 µs after the last).
    assert_eq!(cnps("tcd = true"), [ue, 0, flags::CNP, ue, 0]);
    assert_eq!(cnps(""), [0, 0, flags::CNP, 0, 0], "without TCD, UE is not notified");
    let mut np = Np::default();
    assert!(np.on_ue(0, 50 * US) && !np.on_ue(49 * US, 50 * US) && np.on_ce(49 * US, 50 * US));
}

#[test]
fn dcqcn_ue_holds_the_rate_and_restarts_the_increase_stages() {
    let p = super::config::DcqcnSpec::preset(super::config::Preset::DcqcnPaper).at(G40);
    let mut rp = dcqcn::Rp::new(p);
    rp.on_cnp(0); // R_C = 20 G, R_T = 40 G (no clamp before an increase step), α = 1
    let (rc, alpha) = (rp.rc, rp.alpha);
    // 30 µs later a UE CNP: R_T ← R_C, nothing else moves, the increase timer restarts at 30 + 55 µs.
    rp.on_ue(30 * US);
    assert_eq!((rp.rc, rp.rt, rp.alpha, rp.t_cnt, rp.ues, rp.cuts), (rc, rc, alpha, 0, 1, 1));
    assert_eq!(rp.next_deadline(), Some(85 * US));
    // The alpha timer restarted at the UE: no decay at 55 µs, the next at 85 µs.
    rp.touch(84 * US);
    assert_eq!(rp.alpha, alpha);
    // Fast recovery towards R_T = R_C: the rate stays.
    rp.on_time(85 * US);
    assert_eq!((rp.rc, rp.alpha), (rc, alpha * (1.0 - p.g)));
}

#[test]
fn a_ue_leaves_a_periodic_alpha_timer_alone() {
    // HPCC's timer-only DCQCN updates α on its own 1 µs timer from the first CNP: a UE at 2.5 µs must not
    // restart it (only the per-CNP α of the paper's model restarts at a UE, as above), so by 4 µs α has
    // decayed four periods, not three.
    let p = super::config::DcqcnSpec::preset(super::config::Preset::DcqcnHpcc).at(100_000_000_000);
    let keep = 1.0 - p.g;
    let mut rp = dcqcn::Rp::new(p);
    rp.on_cnp(0);
    rp.on_ue(2 * US + US / 2);
    rp.touch(4 * US);
    assert_eq!(rp.alpha, keep * keep * keep * keep);
}
