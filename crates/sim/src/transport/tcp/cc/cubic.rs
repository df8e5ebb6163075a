//! CUBIC (Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", SIGOPS OSR 2008; RFC 8312,
//! RFC 9438; Linux `tcp_cubic.c`), as `spec/transports.md` B3 writes it. Windows in segments
//! (cwnd / MSS), times in seconds:
//!
//! ```text
//! on loss or ECN-Echo:   W_max ← cwnd·(1 + β)/2 if fast convergence and cwnd < W_max, else cwnd
//!                        ssthresh ← max(β·cwnd, 2·MSS); the epoch ends
//! first ACK of an epoch in congestion avoidance:
//!                        cwnd < W_max: K ← ∛((W_max − cwnd)/C), origin ← W_max;  else K ← 0, origin ← cwnd
//!                        W_est ← cwnd
//! every ACK in congestion avoidance:
//!                        target ← origin + C·(t + RTT_min − K)³          (W_cubic one RTT ahead)
//!                        cwnd += (target − cwnd)/cwnd if target > cwnd, else 0.01/cwnd
//!                        W_est += 3(1 − β)/(1 + β) · acked/cwnd;  cwnd ← W_est if larger   (TCP-friendly region)
//! timeout:               W_max ← cwnd; the epoch ends (cwnd falls to 1 MSS)
//! ```
//!
//! Slow start is Reno's (A1). Defaults (`cc = { kind = "cubic", … }`): `c = 0.4` (segments/s³), `beta = 0.7`,
//! `fast_convergence = true`, `tcp_friendliness = true`, `hystart = false` — RFC 8312's values; Linux has
//! β = 717/1024 and C = 41/1024·10 ≈ 0.4. Two things beyond B3's pseudocode: the target is capped at
//! 1.5·cwnd (RFC 9438 §4.2; Linux's `cnt ≥ 2`), so that an epoch that ran on while the window was not the
//! limit cannot multiply cwnd in one ACK; and `hystart = true` turns on Linux's HyStart (Ha & Rhee 2008)
//! with Linux's constants: from cwnd ≥ 16 segments in slow start, leave slow start (ssthresh ← cwnd) when
//! the ACKs of a round arrive ≤ 2 ms apart for longer than RTT_min/2 (ACK train), or when the smallest
//! of ≥ 8 RTT samples of the round exceeds RTT_min + clamp(RTT_min/8, 4 ms, 16 ms) (delay increase).

use super::{AckInfo, Cc, TcpParams, Window};
use crate::config::ConfigError;
use crate::units::{Time, MS, SEC};
use serde::Deserialize;

/// `cc = { kind = "cubic", … }`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cfg {
    /// C, the cubic function's scale (segments/s³).
    pub c: f64,
    /// β_cubic: the window after a reduction, as a fraction of the window before it.
    pub beta: f64,
    /// Release bandwidth to newer flows: a reduction below the last W_max sets W_max lower still.
    pub fast_convergence: bool,
    /// The TCP-friendly region: never grow slower than the Reno estimate W_est.
    pub tcp_friendliness: bool,
    /// Linux's hybrid slow start.
    pub hystart: bool,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg { c: 0.4, beta: 0.7, fast_convergence: true, tcp_friendliness: true, hystart: false }
    }
}

/// HyStart's constants (Linux `tcp_cubic.c`).
const HYSTART_LOW_WINDOW: f64 = 16.0;
const HYSTART_ACK_DELTA: Time = 2 * MS;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Time = 4 * MS;
const HYSTART_DELAY_MAX: Time = 16 * MS;

/// HyStart's per-round state.
#[derive(Clone, Copy, Debug)]
struct HyStart {
    found: bool,
    round_start: Time,
    last_ack: Time,
    /// The round ends when snd_una passes this.
    end_seq: u64,
    /// Smallest RTT sample of the round.
    curr_rtt: Time,
    samples: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Cubic {
    pub cfg: Cfg,
    /// W_max (segments); 0 before the first reduction.
    pub w_max: f64,
    /// K (s) and the origin point (segments) of the current epoch.
    pub k: f64,
    pub origin: f64,
    /// W_est, the Reno-friendly estimate (segments).
    pub w_est: f64,
    /// Start of the current epoch; none after a reduction until the next ACK in congestion avoidance.
    pub epoch_start: Option<Time>,
    hy: HyStart,
}

impl Cubic {
    pub fn new(cfg: Cfg, snd_nxt: u64) -> Self {
        let hy = HyStart { found: false, round_start: 0, last_ack: 0, end_seq: snd_nxt, curr_rtt: Time::MAX, samples: 0 };
        Cubic { cfg, w_max: 0.0, k: 0.0, origin: 0.0, w_est: 0.0, epoch_start: None, hy }
    }

    /// Loss or ECN-Echo: W_max with fast convergence, end the epoch, ssthresh = max(β·cwnd, 2·MSS).
    pub fn reduce(&mut self, w: &Window) -> f64 {
        let cwnd = w.cwnd / w.mss;
        self.w_max = if self.cfg.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.cfg.beta) / 2.0 // W_max ← cwnd·(1 + β)/2
        } else {
            cwnd
        };
        self.epoch_start = None;
        (w.cwnd * self.cfg.beta).max(2.0 * w.mss)
    }

    /// Congestion avoidance on one ACK (B3).
    pub fn cubic_update(&mut self, w: &mut Window, ack: &AckInfo) {
        let (c, beta) = (self.cfg.c, self.cfg.beta);
        let cwnd = w.cwnd / w.mss;
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                if cwnd < self.w_max {
                    self.k = libm::cbrt((self.w_max - cwnd) / c); // K = ∛((W_max − cwnd)/C)
                    self.origin = self.w_max;
                } else {
                    self.k = 0.0;
                    self.origin = cwnd;
                }
                self.w_est = cwnd;
                self.epoch_start = Some(ack.now);
                ack.now
            }
        };
        let t = (ack.now - start) as f64 / SEC as f64;
        let rtt_min = ack.rtt.min as f64 / SEC as f64;
        let d = t + rtt_min - self.k;
        // W_cubic(t + RTT_min) = origin + C·(t + RTT_min − K)³, at most 1.5·cwnd (RFC 9438 §4.2)
        let target = (self.origin + c * d * d * d).min(1.5 * cwnd);
        let grown = if target > cwnd {
            cwnd + (target - cwnd) / cwnd
        } else {
            cwnd + 0.01 / cwnd // Linux: cnt = 100·cwnd
        };
        w.cwnd = grown * w.mss;
        if self.cfg.tcp_friendliness {
            // W_est += 3(1 − β)/(1 + β) · acked/cwnd   (RFC 8312 §4.2, per ACK)
            self.w_est += 3.0 * (1.0 - beta) / (1.0 + beta) * ack.acked as f64 / (cwnd * w.mss);
            if self.w_est > grown {
                w.cwnd = self.w_est * w.mss;
            }
        }
    }

    /// Linux's `hystart_update` on one ACK in slow start; may end slow start (ssthresh ← cwnd).
    fn hystart(&mut self, w: &mut Window, ack: &AckInfo) {
        let h = &mut self.hy;
        if w.snd_una > h.end_seq {
            // A new round.
            h.round_start = ack.now;
            h.last_ack = ack.now;
            h.end_seq = w.snd_nxt;
            h.curr_rtt = Time::MAX;
            h.samples = 0;
        }
        if w.cwnd < HYSTART_LOW_WINDOW * w.mss {
            return;
        }
        let delay_min = ack.rtt.min;
        // ACK train: ACKs ≤ 2 ms apart for longer than RTT_min/2.
        if ack.now - h.last_ack <= HYSTART_ACK_DELTA {
            h.last_ack = ack.now;
            if ack.now - h.round_start > delay_min / 2 {
                h.found = true;
            }
        }
        // Delay increase: the round's smallest RTT above RTT_min + clamp(RTT_min/8, 4 ms, 16 ms).
        h.curr_rtt = h.curr_rtt.min(ack.rtt.latest);
        if h.samples < HYSTART_MIN_SAMPLES {
            h.samples += 1;
        } else if h.curr_rtt > delay_min + (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX) {
            h.found = true;
        }
        if h.found {
            w.ssthresh = w.cwnd;
        }
    }
}

impl Cc for Cubic {
    type Cfg = Cfg;
    fn validate(cfg: &Cfg, field: &str) -> Result<(), ConfigError> {
        if !(cfg.c > 0.0 && cfg.c.is_finite()) {
            return Err(ConfigError::new(format!("{field}.c"), "must be a positive number (segments/s³), e.g. 0.4"));
        }
        if !(cfg.beta > 0.0 && cfg.beta < 1.0) {
            return Err(ConfigError::new(format!("{field}.beta"), "must be in (0, 1), e.g. 0.7"));
        }
        Ok(())
    }
    fn build(_p: &TcpParams, cfg: &Cfg, snd_nxt: u64) -> Self {
        Cubic::new(*cfg, snd_nxt)
    }
    fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        if self.cfg.hystart && !self.hy.found && w.cwnd < w.ssthresh && ack.rtt.latest > 0 {
            self.hystart(w, ack);
        }
        if w.cwnd < w.ssthresh {
            w.reno_increase(ack.acked);
        } else {
            self.cubic_update(w, ack);
        }
    }
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        self.reduce(w)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: f64, _now: Time) -> f64 {
        self.reduce(w)
    }
    fn on_timeout(&mut self, w: &Window, now: Time) {
        // B3: W_max ← cwnd (Linux resets W_max to 0 here instead); HyStart may act again (Linux).
        self.w_max = w.cwnd / w.mss;
        self.epoch_start = None;
        self.hy = HyStart { found: false, round_start: now, last_ack: now, end_seq: w.snd_nxt, curr_rtt: Time::MAX, samples: 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::cc::Rtt;
    use crate::units::US;

    const MSS: f64 = 1000.0;

    fn win(cwnd_segs: f64, ssthresh: f64) -> Window {
        Window { cwnd: cwnd_segs * MSS, ssthresh, mss: MSS, snd_una: 0, snd_nxt: 1 << 40 }
    }
    fn ack(now: Time, rtt_min: Time, latest: Time) -> AckInfo {
        AckInfo { now, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest, srtt: latest, min: rtt_min } }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn after_a_loss_the_cubic_region_governs_one_rtt_ahead() {
        // Loss at 100 segments with no earlier W_max: W_max = 100, ssthresh = 70 segments.
        let mut c = Cubic::new(Cfg::default(), 0);
        let mut w = win(100.0, f64::INFINITY);
        assert_eq!(c.ssthresh_on_loss(&w, 100_000.0, 0), 70_000.0);
        assert_eq!(c.w_max, 100.0);
        w.cwnd = 70_000.0;
        w.ssthresh = 70_000.0;
        // First ACK in congestion avoidance (t = 0, RTT_min = 100 ms): K = ∛(30/0.4) = ∛75, origin = 100,
        // target = 100 + 0.4·(0 + 0.1 − K)³ = 72.08393 (without RTT_min it would be 70.0: no growth).
        c.increase(&mut w, &ack(SEC, 100 * MS, 100 * MS));
        assert!(close(c.k, 4.217163326508746), "K = {}", c.k);
        assert_eq!(c.origin, 100.0);
        // cwnd = 70 + (72.08393 − 70)/70 segments; W_est = 70 + 0.5294/70 stays below it.
        assert!(close(w.cwnd, 70_029.770_428_896_8), "{}", w.cwnd);
        assert!(close(c.w_est, 70.007_563_025_210_09), "{}", c.w_est);
        // 0.5 s into the epoch: target = 100 + 0.4·(0.6 − K)³ = 81.06940.
        c.increase(&mut w, &ack(SEC + SEC / 2, 100 * MS, 100 * MS));
        assert!(close(w.cwnd, 70_187.412_398_056_53), "{}", w.cwnd);
    }

    #[test]
    fn with_no_loss_yet_the_tcp_friendly_region_governs() {
        // First epoch: W_max = 0, so K = 0 and origin = cwnd; at a 100 µs RTT the cubic term is ~1e-13
        // segments, and W_est grows 3(1 − β)/(1 + β) = 0.5294 segments per window of ACKs.
        let mut c = Cubic::new(Cfg::default(), 0);
        let mut w = win(20.0, 20_000.0);
        for i in 0..20 {
            c.increase(&mut w, &ack(i * 5 * US, 100 * US, 100 * US));
        }
        assert!(close(w.cwnd, 20_522.917_518_808_98), "{}", w.cwnd);
        assert!(close(w.cwnd / MSS, c.w_est));
        // Without the friendly region only the cubic term (and its tiny floor) acts.
        let mut c = Cubic::new(Cfg { tcp_friendliness: false, ..Cfg::default() }, 0);
        let mut w = win(20.0, 20_000.0);
        for i in 0..20 {
            c.increase(&mut w, &ack(i * 5 * US, 100 * US, 100 * US));
        }
        assert!(w.cwnd < 20_000.001, "{}", w.cwnd);
    }

    #[test]
    fn fast_convergence_lowers_w_max_and_k() {
        for (fc, w_max, k) in [(true, 68.0, 3.107_232_505_953_858_6), (false, 80.0, 3.914_867_641_168_863_4)] {
            let mut c = Cubic::new(Cfg { fast_convergence: fc, ..Cfg::default() }, 0);
            c.ssthresh_on_loss(&win(100.0, 1e9), 0.0, 0);
            // Second loss at 80 < W_max = 100: W_max = 80·(1 + 0.7)/2 = 68 with fast convergence.
            let ss = c.ssthresh_on_ece(&win(80.0, 1e9), 0);
            assert_eq!(ss, 56_000.0);
            assert!(close(c.w_max, w_max), "{}", c.w_max);
            let mut w = win(56.0, ss);
            c.increase(&mut w, &ack(0, 0, 0));
            assert!(close(c.k, k), "fc={fc}: K = {}", c.k); // ∛((W_max − 56)/0.4)
        }
    }

    #[test]
    fn a_loss_at_w_max_keeps_it_and_the_floor_is_two_segments() {
        // Fast convergence only below W_max: a loss at exactly W_max = 100 keeps it at 100, not 85.
        let mut c = Cubic::new(Cfg::default(), 0);
        c.ssthresh_on_loss(&win(100.0, 1e9), 0.0, 0);
        c.ssthresh_on_loss(&win(100.0, 1e9), 0.0, 0);
        assert_eq!(c.w_max, 100.0);
        // max(β·cwnd, 2·MSS): 0.7·2 segments is below the floor.
        assert_eq!(c.ssthresh_on_loss(&win(2.0, 1e9), 0.0, 0), 2.0 * MSS);
        assert_eq!(c.ssthresh_on_ece(&win(3.0, 1e9), 0), 2100.0);
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_cwnd_and_never_shrinks_cwnd() {
        // 10 s into an epoch from 10 segments: W_cubic = 10 + 0.4·10³ = 410, capped at 15, so one ACK adds
        // (15 − 10)/10 = 0.5 segment.
        let mut c = Cubic::new(Cfg { tcp_friendliness: false, ..Cfg::default() }, 0);
        let mut w = win(10.0, 10_000.0);
        // At the epoch's first ACK with no RTT yet, target = origin = cwnd: not above it, so the tiny
        // increase.
        c.increase(&mut w, &ack(0, 0, 0));
        assert!(close(w.cwnd, 10_000.0 + 1000.0 * 0.01 / 10.0), "{}", w.cwnd);
        w.cwnd = 10_000.0;
        c.increase(&mut w, &ack(10 * SEC, 0, 0));
        assert!(close(w.cwnd, 10_500.0), "{}", w.cwnd);
        // Above the target (cwnd 90 against K = ∛75 from W_max 100): the tiny increase 0.01/cwnd.
        let mut c = Cubic::new(Cfg { tcp_friendliness: false, ..Cfg::default() }, 0);
        c.w_max = 100.0;
        let mut w = win(70.0, 70_000.0);
        c.increase(&mut w, &ack(0, 0, 0));
        w.cwnd = 90_000.0;
        c.increase(&mut w, &ack(MS, 0, 0));
        assert!(close(w.cwnd, 90_000.0 + 1000.0 * 0.01 / 90.0), "{}", w.cwnd);
    }

    #[test]
    fn a_timeout_sets_w_max_to_cwnd_and_ends_the_epoch() {
        let mut c = Cubic::new(Cfg::default(), 0);
        c.w_max = 100.0;
        c.epoch_start = Some(5);
        let w = win(80.0, 1e9);
        c.ssthresh_on_loss(&w, 80_000.0, 0);
        c.on_timeout(&w, 0);
        assert_eq!((c.w_max, c.epoch_start), (80.0, None));
    }

    #[test]
    fn hystart_is_off_by_default_and_its_ack_train_ends_slow_start() {
        assert!(!Cfg::default().hystart);
        // Slow start from 16 segments, ACKs 10 µs apart, RTT_min 100 µs: the train passes RTT_min/2 = 50 µs
        // at the 7th ACK (60 µs after the round began), when cwnd is 16 + 6 segments.
        for hystart in [false, true] {
            let mut c = Cubic::new(Cfg { hystart, ..Cfg::default() }, 0);
            let mut w = win(16.0, f64::INFINITY);
            for i in 0..7u64 {
                w.snd_una = 1 + i;
                c.increase(&mut w, &ack(i * 10 * US, 100 * US, 100 * US));
            }
            if hystart {
                assert_eq!(w.ssthresh, 22_000.0);
            } else {
                assert_eq!((w.ssthresh, w.cwnd), (f64::INFINITY, 23_000.0));
            }
        }
    }

    #[test]
    fn hystart_waits_for_16_segments_and_times_a_train_from_its_rounds_start() {
        // Rounds that begin at 10 ms, not at 0 (where a fresh state already has round_start = last_ack).
        let t0 = 10 * MS;
        // From 16 segments, ACKs 10 µs apart, RTT_min 100 µs: the train passes RTT_min/2 = 50 µs after the
        // round's first ACK at the 7th ACK, when cwnd is 22 segments — timed from that first ACK.
        let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
        let mut w = win(16.0, f64::INFINITY);
        for i in 0..7u64 {
            w.snd_una = 1 + i;
            c.increase(&mut w, &ack(t0 + i * 10 * US, 100 * US, 100 * US));
        }
        assert_eq!(w.ssthresh, 22_000.0);
        // Below 16 segments HyStart only keeps its round: from 2 segments, with RTT_min 20 µs (a 10 µs
        // train), slow start ends when cwnd reaches 16 segments, not at the third ACK.
        let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
        let mut w = win(2.0, f64::INFINITY);
        for i in 0..20u64 {
            w.snd_una = 1 + i;
            c.increase(&mut w, &ack(t0 + i * 10 * US, 20 * US, 20 * US));
        }
        assert_eq!(w.ssthresh, 16_000.0);
    }

    #[test]
    fn hystart_ack_train_counts_acks_up_to_two_ms_apart_within_a_round() {
        // ACKs exactly 2 ms apart still make a train; RTT_min 5 ms puts the threshold at 2.5 ms, passed
        // at the third ACK (4 ms after the round began).
        let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
        let mut w = win(16.0, f64::INFINITY);
        for i in 0..3u64 {
            w.snd_una = 1 + i;
            c.increase(&mut w, &ack(i * 2 * MS, 5 * MS, 5 * MS));
        }
        assert_eq!(w.ssthresh, 18_000.0);
        // A round ends only when snd_una passes its end (snd_nxt at its start, here 5): an ACK at exactly
        // 5 does not restart it, so the train of 10 µs ACKs still ends slow start at 60 µs.
        let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
        let mut w = win(16.0, f64::INFINITY);
        w.snd_nxt = 5;
        for i in 0..7u64 {
            w.snd_una = (1 + i).min(5);
            c.increase(&mut w, &ack(i * 10 * US, 100 * US, 100 * US));
        }
        assert_eq!(w.ssthresh, 22_000.0);
        // Once found, HyStart stays quiet for the connection's slow starts after fast recovery.
        w.ssthresh = 40_000.0;
        for i in 7..20u64 {
            c.increase(&mut w, &ack(i * 10 * US, 100 * US, 100 * US));
        }
        assert_eq!(w.ssthresh, 40_000.0);
    }

    #[test]
    fn hystart_delay_threshold_is_clamped_between_4_and_16_ms() {
        // delay_min/8 inside the clamp (40 ms → 5 ms), at its floor (1 ms → 4 ms), at its ceiling
        // (200 ms → 16 ms): the round's smallest of ≥ 8 samples must exceed delay_min + that.
        for (min, limit) in [(40 * MS, 45 * MS), (MS, 5 * MS), (200 * MS, 216 * MS)] {
            for (rtt, ends) in [(limit, false), (limit + 1, true)] {
                let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
                let mut w = win(16.0, f64::INFINITY);
                w.snd_una = 1;
                for i in 0..9u64 {
                    c.increase(&mut w, &ack(i * 300 * MS, min, rtt));
                }
                assert_eq!(w.ssthresh.is_finite(), ends, "min {min}, rtt {rtt}");
            }
        }
        // An ACK without an RTT sample is not one of the samples.
        let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
        let mut w = win(16.0, f64::INFINITY);
        w.snd_una = 1;
        for i in 0..10u64 {
            c.increase(&mut w, &ack(i * 3 * MS, MS, if i == 3 { 0 } else { 5 * MS + 1 }));
        }
        assert!(w.ssthresh.is_finite());
    }

    #[test]
    fn hystart_delay_increase_needs_the_clamped_threshold_and_eight_samples() {
        // ACKs 3 ms apart (no train); RTT_min 1 ms, so the threshold is 1 + clamp(0.125, 4, 16) = 5 ms.
        for (rtt, ends) in [(5 * MS, false), (5 * MS + 1, true)] {
            let mut c = Cubic::new(Cfg { hystart: true, ..Cfg::default() }, 0);
            let mut w = win(16.0, f64::INFINITY);
            w.snd_una = 1;
            for i in 0..9u64 {
                c.increase(&mut w, &ack(i * 3 * MS, MS, rtt));
                // The first 8 samples only fill the round's minimum.
                assert!(i < 8 && w.ssthresh.is_infinite() || i == 8);
            }
            assert_eq!(w.ssthresh.is_finite(), ends, "rtt {rtt}");
        }
    }

    #[test]
    fn keys_are_checked_and_reach_the_algorithm() {
        assert!(Cubic::validate(&Cfg::default(), "cc").is_ok());
        let e = Cubic::validate(&Cfg { beta: 1.0, ..Cfg::default() }, "host.transport.cc").unwrap_err();
        assert_eq!(e.field, "host.transport.cc.beta");
        let e = Cubic::validate(&Cfg { c: 0.0, ..Cfg::default() }, "cc").unwrap_err();
        assert_eq!(e.field, "cc.c");
        assert_eq!(Cubic::validate(&Cfg { beta: 0.0, ..Cfg::default() }, "cc").unwrap_err().field, "cc.beta");
        assert_eq!(Cubic::validate(&Cfg { c: f64::INFINITY, ..Cfg::default() }, "cc").unwrap_err().field, "cc.c");
        let mut c = Cubic::new(Cfg { beta: 0.5, ..Cfg::default() }, 0);
        assert_eq!(c.ssthresh_on_loss(&win(100.0, 1e9), 0.0, 0), 50_000.0);
    }
}
