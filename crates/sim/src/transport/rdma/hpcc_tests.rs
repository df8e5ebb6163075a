//! HPCC's update (`spec/transports.md` C4) replayed ACK by ACK with hand-computed values. Unless a test
//! says otherwise: T = 10 µs, C = 100 Gb/s (W_max = C·T = 125 000 B), η = 0.95, W_AI = 50 B (R_AI =
//! 40 Mb/s), W_min = 125 B (R_min = 100 Mb/s), every hop 100 Gb/s.

use super::*;
use crate::net::int::Hop;

const T: Time = 10 * US;
const G100: u64 = 100_000_000_000;

fn params(max_stage: u32, fast_react: bool) -> Params {
    Params { eta: 0.95, max_stage, w_ai: 50.0, t: T, w_max: 125_000.0, w_min: 125.0, fast_react }
}

/// A hop record at `ts_us` µs with `tx` bytes sent before and `q` bytes queued, at `rate`.
fn hop(ts_us: f64, tx: u64, q: u64, rate: u64) -> Hop {
    Hop { ts: (ts_us * US as f64) as Time, tx_bytes: tx, qlen: q, rate }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}

#[test]
fn the_preset_resolves_to_the_ns3_values() {
    let mut s = Spec::preset();
    s.base_rtt = Some(T);
    let p = s.at(G100);
    assert_eq!((p.eta, p.max_stage, p.t, p.fast_react), (0.95, 0, T, true));
    // R_AI = 10 Mb/s·100G/25G = 40 Mb/s → W_AI = 40 Mb/s·10 µs = 50 B; R_min 100 Mb/s → 125 B.
    assert_close!(p.w_ai, 50.0);
    assert_close!(p.w_max, 125_000.0);
    assert_close!(p.w_min, 125.0);
}

#[test]
fn full_utilisation_cuts_by_eta_and_w_c_moves_once_per_rtt() {
    let mut h = Hpcc::new(params(0, true));
    assert_eq!((h.w, h.u, h.rate()), (125_000.0, 1.0, 100e9));
    // The first ACK records its INT and snd_nxt (10 000) only.
    assert_eq!(h.on_ack(1_000, 10_000, &[hop(0.0, 0, 0, G100)]), Update::Recorded);
    assert_eq!(h.w, 125_000.0);
    // 12 500 B in 1 µs = 100 Gb/s: u = 1; min(q, q_prev) = 0. ack 11 000 > 10 000 ends the RTT.
    // Û = (1·(10 − 1) + 1·1)/10 = 1; W = W_c/(1/0.95) + 50 = 118 800.
    assert_eq!(h.on_ack(11_000, 30_000, &[hop(1.0, 12_500, 20_000, G100)]), Update::Multiplicative);
    assert_close!(h.u, 1.0);
    assert_close!(h.w, 118_800.0);
    assert_close!(h.w_c, 118_800.0);
    assert_close!(h.rate(), 118_800.0 * 8.0 / 10e-6);
    // Fast react (ack 20 000 ≤ 30 000): u = 1 + min(10 000, 20 000)·8/(100 Gb/s · 10 µs) = 1.08,
    // Û = (1·9 + 1.08·1)/10 = 1.008, W = 118 800·0.95/1.008 + 50; W_c stays.
    assert_eq!(h.on_ack(20_000, 40_000, &[hop(2.0, 25_000, 10_000, G100)]), Update::Multiplicative);
    assert_close!(h.u, 1.008);
    assert_close!(h.w, 118_800.0 * 0.95 / 1.008 + 50.0);
    assert_close!(h.w_c, 118_800.0);
    // ack 31 000 > 30 000 (the snd_nxt of the last full update) ends the next RTT: W_c takes W.
    // 90 Gb/s over 4 µs = 45 000 B, q 0: u = 0.9; Û = (1.008·6 + 0.9·4)/10 = 0.9648.
    assert_eq!(h.on_ack(31_000, 50_000, &[hop(6.0, 70_000, 0, G100)]), Update::Multiplicative);
    assert_close!(h.u, 0.9648);
    let w = 118_800.0 * 0.95 / 0.9648 + 50.0;
    assert_close!(h.w, w);
    assert_close!(h.w_c, w);
    // The next RTT ends past 50 000, not 30 000.
    h.on_ack(45_000, 60_000, &[hop(7.0, 82_500, 0, G100)]);
    assert_close!(h.w_c, w);
}

#[test]
fn max_stage_zero_raises_the_window_multiplicatively_below_eta() {
    let mut h = Hpcc::new(params(0, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100)]);
    (h.w, h.w_c) = (60_000.0, 60_000.0);
    // τ = 20 µs, more than T: τ = T and Û takes U whole. 50 Gb/s over 20 µs = 125 000 B: U = 0.5.
    // W = W_c/(Û/η) + W_AI = 60 000·0.95/0.5 + 50 = 114 050 (an increase: Û < η).
    assert_eq!(h.on_ack(20_000, 20_000, &[hop(20.0, 125_000, 0, G100)]), Update::Multiplicative);
    assert_close!(h.u, 0.5);
    assert_close!(h.w, 114_050.0);
    assert_eq!(h.inc_stage, 0);
    // At most line rate: 114 050·1.9 + 50 is clamped to W_max.
    h.on_ack(30_000, 30_000, &[hop(40.0, 250_000, 0, G100)]);
    assert_close!(h.w, 125_000.0);
}

#[test]
fn max_stage_five_adds_w_ai_five_rtts_then_multiplies() {
    let mut h = Hpcc::new(params(5, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100)]);
    (h.w, h.w_c) = (50_000.0, 50_000.0);
    // Every RTT: U = 0.5 over τ = T (Û = 0.5 < η): W ← W_c + 50, incStage + 1.
    for i in 1..=5u64 {
        let ts = 10.0 * i as f64;
        assert_eq!(h.on_ack(10_000 * i + 1, 10_000 * (i + 1), &[hop(ts, 62_500 * i, 0, G100)]), Update::Additive, "RTT {i}");
        assert_close!(h.w, 50_000.0 + 50.0 * i as f64);
        assert_close!(h.w_c, h.w);
        assert_eq!(h.inc_stage, i as u32);
    }
    // A fast-react ACK within the RTT sets W (multiplicative: incStage is at maxStage) but neither W_c
    // nor incStage.
    assert_eq!(h.on_ack(55_000, 60_000, &[hop(55.0, 343_750, 0, G100)]), Update::Multiplicative);
    assert_eq!(h.inc_stage, 5);
    assert_close!(h.w_c, 50_250.0);
    // incStage = maxStage: multiplicative, W = 50 250·0.95/0.5 + 50 = 95 525, incStage 0.
    assert_eq!(h.on_ack(60_001, 70_000, &[hop(65.0, 406_250, 0, G100)]), Update::Multiplicative);
    assert_close!(h.u, 0.5);
    assert_close!(h.w, 95_525.0);
    assert_eq!(h.inc_stage, 0);
    // Above η it is multiplicative at any stage: U = 1 over T → Û = 1, W = 95 525·0.95 + 50.
    h.inc_stage = 2;
    h.on_ack(70_001, 80_000, &[hop(75.0, 531_250, 0, G100)]);
    assert_close!(h.w, 95_525.0 * 0.95 + 50.0);
    assert_eq!(h.inc_stage, 0);
}

#[test]
fn the_ewma_weighs_by_tau_over_t() {
    let mut h = Hpcc::new(params(0, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100)]);
    // τ = 2 µs, U = 0.5 (12 500 B in 2 µs): Û = (1·8 + 0.5·2)/10 = 0.9.
    h.on_ack(20_000, 20_000, &[hop(2.0, 12_500, 0, G100)]);
    assert_close!(h.u, 0.9);
    // τ = T exactly: Û = U = 0.25 (31 250 B in 10 µs).
    h.on_ack(30_000, 30_000, &[hop(12.0, 43_750, 0, G100)]);
    assert_close!(h.u, 0.25);
}

#[test]
fn the_most_utilised_hop_decides_with_its_own_rate_and_tau() {
    let g40 = 40_000_000_000;
    let mut h = Hpcc::new(params(0, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100), hop(0.0, 0, 5_000, g40)]);
    // Hop 1 (100 G): 3 750 B in 1 µs → 0.3. Hop 2 (40 G): 8 000 B in 2 µs = 32 Gb/s → 0.8, and
    // min(5 000, 6 000)·8/(40 Gb/s·10 µs) = 0.1 → 0.9. U = 0.9 with hop 2's τ = 2 µs:
    // Û = (1·8 + 0.9·2)/10 = 0.98; W = 125 000·0.95/0.98 + 50.
    let hops = [hop(1.0, 3_750, 0, G100), hop(2.0, 8_000, 6_000, g40)];
    assert_eq!(h.measure(&hops).map(|(u, tau)| (close(u, 0.9), tau)), Some((true, 2 * US)));
    h.on_ack(20_000, 20_000, &hops);
    assert_close!(h.u, 0.98);
    assert_close!(h.w, 125_000.0 * 0.95 / 0.98 + 50.0);
}

#[test]
fn of_two_equally_utilised_hops_the_first_gives_tau() {
    // Both hops at U = 0.5 (6 250 B in 1 µs, 12 500 B in 2 µs: the same quotient bit for bit, the
    // second doubled exactly). The reference keeps the first maximum (`u > U`), so τ = 1 µs.
    let mut h = Hpcc::new(params(0, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100), hop(0.0, 0, 0, G100)]);
    let hops = [hop(1.0, 6_250, 0, G100), hop(2.0, 12_500, 0, G100)];
    assert_eq!(h.measure(&hops), Some((0.5, US)));
}

#[test]
fn without_fast_react_only_the_ack_that_ends_an_rtt_updates() {
    let mut h = Hpcc::new(params(0, false));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100)]);
    assert_eq!(h.on_ack(5_000, 20_000, &[hop(1.0, 1_000, 0, G100)]), Update::NoUpdate);
    assert_eq!((h.w, h.u), (125_000.0, 1.0));
    // The skipped ACK's records were not kept: the deltas run from the first ACK's.
    // 25 000 B in 2 µs = 100 Gb/s: U = 1, Û = (1·8 + 1·2)/10 = 1, W = 125 000·0.95 + 50.
    assert_eq!(h.on_ack(10_001, 20_000, &[hop(2.0, 25_000, 0, G100)]), Update::Multiplicative);
    assert_close!(h.w, 118_800.0);
}

#[test]
fn the_window_floor_and_the_pacing_gap() {
    let mut h = Hpcc::new(params(0, true));
    h.on_ack(0, 10_000, &[hop(0.0, 0, 0, G100)]);
    // Line rate over T, the queue of the first record 0: U = 1, W = W_c = 118 800 (RTT end).
    h.on_ack(20_000, 20_000, &[hop(10.0, 125_000, 1_250_000, G100)]);
    assert_close!(h.w_c, 118_800.0);
    // A standing queue of 1.25 MB in both records: u = 1 + 1.25 MB·8/(100 Gb/s·10 µs) = 11 over τ = T
    // (fast react): W = 118 800·0.95/11 + 50 = 10 310.
    h.on_ack(20_000, 20_000, &[hop(20.0, 250_000, 1_250_000, G100)]);
    assert_close!(h.u, 11.0);
    assert_close!(h.w, 10_310.0);
    // R = W·8/10 µs; a 1 000 B packet may go while in flight + 1 000 ≤ ⌈W⌉ + 999, i.e. in flight < W.
    assert_close!(h.rate(), 10_310.0 * 8.0 / 10e-6);
    // (W is 10 310 up to rounding: ⌈W⌉ may be 10 311.)
    assert_eq!(h.window_limit(1_000), libm::ceil(h.w) as u64 + 999);
    assert!((10_310..=10_311).contains(&(libm::ceil(h.w) as u64)));
    assert_eq!(h.gap(1_086), libm::ceil(1_086.0 * 8.0 * 1e12 / h.rate()) as Time);
    // A huge standing queue cannot take the window below W_min (R_min·T): u = 10, then 8 000.
    h.on_ack(30_000, 30_000, &[hop(30.0, 250_000, 1_000_000_000, G100)]);
    assert_close!(h.w, 118_800.0 * 0.95 / 10.0 + 50.0);
    h.on_ack(40_000, 40_000, &[hop(40.0, 250_000, 1_000_000_000, G100)]);
    assert_close!(h.w, 125.0);
    // A record that did not move (same time) gives no rate: nothing changes.
    let before = h.w;
    assert_eq!(h.on_ack(50_000, 50_000, &[hop(40.0, 250_000, 0, G100)]), Update::NoUpdate);
    assert_eq!(h.w, before);
}
