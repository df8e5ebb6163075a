//! TCP-Illinois (Liu, Başar, Srikant, "TCP-Illinois: a loss- and delay-based congestion control algorithm
//! for high-speed networks", Performance Evaluation 65(6–7), 2008; Linux `tcp_illinois.c`), as
//! `spec/transports.md` B5 writes it: AIMD whose increase α and decrease β depend on the queueing delay.
//! Every RTT sample r: baseRTT ← min, maxRTT ← max, and the round's sum and count. Once per RTT (an ACK
//! passes the snd_nxt recorded at the previous update):
//!
//! ```text
//! cwnd < win_thresh:  α ← 1, β ← 1/2
//! else (samples):     dm ← maxRTT − baseRTT,  da ← mean(r) − baseRTT,  d1 ← dm/100
//!     da ≤ d1:  α ← α_max — at once if da never went above d1, else after θ consecutive such RTTs
//!     da > d1:  α ← (dm − d1)·α_max / ((dm − d1) + (da − d1)·(α_max − α_min)/α_min)    (α_min at da = dm)
//!     d2 ← dm/10, d3 ← 8·dm/10:  β ← β_min if da ≤ d2, β_max if da ≥ d3, linear between
//! congestion avoidance:   cwnd += α·MSS²/cwnd per ACK (slow start is Reno's)
//! loss or ECN-Echo:       ssthresh ← max(cwnd − β·cwnd, 2·MSS)
//! timeout:                α ← 1, β ← 1/2, the θ count restarts
//! ```
//!
//! Defaults (`cc = { kind = "illinois", … }`, Linux's constants): `alpha_min = 0.3`, `alpha_max = 10`,
//! `beta_min = 0.125`, `beta_max = 0.5`, `win_thresh = 15` segments, `theta = 5` RTTs; α starts at
//! α_max and β at 1/2 (Linux). B5's θ RTTs are consecutive: an RTT above d1 restarts the count (Linux
//! only clears it when α reaches α_max).

use super::{AckInfo, Cc, TcpParams, Window};
use crate::config::ConfigError;
use crate::units::Time;
use serde::Deserialize;

/// `cc = { kind = "illinois", … }`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cfg {
    /// Increase per RTT (segments) when the queueing delay is at its maximum.
    pub alpha_min: f64,
    /// … and when it is near zero.
    pub alpha_max: f64,
    /// Decrease fraction when the delay is small (≤ dm/10).
    pub beta_min: f64,
    /// … and when it is large (≥ 8·dm/10).
    pub beta_max: f64,
    /// Below this cwnd (segments) Illinois is Reno (α = 1, β = 1/2).
    pub win_thresh: u32,
    /// Low-delay RTTs before α returns to α_max.
    pub theta: u32,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg { alpha_min: 0.3, alpha_max: 10.0, beta_min: 0.125, beta_max: 0.5, win_thresh: 15, theta: 5 }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Illinois {
    pub cfg: Cfg,
    /// The increase (segments per RTT) and decrease fraction in force.
    pub alpha: f64,
    pub beta: f64,
    base_rtt: Time,
    max_rtt: Time,
    /// Sum and count of this RTT's samples.
    sum_rtt: u128,
    cnt_rtt: u32,
    /// This RTT ends when snd_una passes it.
    end_seq: u64,
    /// Consecutive RTTs with da ≤ d1 since the delay was last above it.
    rtt_low: u32,
    rtt_above: bool,
}

impl Illinois {
    pub fn new(cfg: Cfg, snd_nxt: u64) -> Self {
        Illinois {
            cfg,
            alpha: cfg.alpha_max,
            beta: 0.5,
            base_rtt: Time::MAX,
            max_rtt: 0,
            sum_rtt: 0,
            cnt_rtt: 0,
            end_seq: snd_nxt,
            rtt_low: 0,
            rtt_above: false,
        }
    }

    /// α from the average (`da`) and maximum (`dm`) queueing delays; counts the θ low-delay RTTs.
    pub fn alpha_for(&mut self, da: f64, dm: f64) -> f64 {
        let Cfg { alpha_min, alpha_max, theta, .. } = self.cfg;
        let d1 = dm / 100.0;
        if da <= d1 {
            if !self.rtt_above {
                return alpha_max;
            }
            self.rtt_low += 1;
            if self.rtt_low < theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return alpha_max;
        }
        self.rtt_above = true;
        self.rtt_low = 0;
        // α = κ1/(κ2 + da): α_max at da = d1, α_min at da = dm
        (dm - d1) * alpha_max / ((dm - d1) + (da - d1) * (alpha_max - alpha_min) / alpha_min)
    }

    /// β: β_min up to dm/10, β_max from 8·dm/10, linear between.
    pub fn beta_for(&self, da: f64, dm: f64) -> f64 {
        let Cfg { beta_min, beta_max, .. } = self.cfg;
        let (d2, d3) = (dm / 10.0, 8.0 * dm / 10.0);
        if da <= d2 {
            beta_min
        } else if da >= d3 {
            beta_max
        } else {
            beta_min + (beta_max - beta_min) * (da - d2) / (d3 - d2)
        }
    }

    /// Once per RTT: new α and β, and a new round.
    fn update(&mut self, w: &Window) {
        if w.cwnd < self.cfg.win_thresh as f64 * w.mss {
            self.alpha = 1.0;
            self.beta = 0.5;
        } else if self.cnt_rtt > 0 {
            let dm = (self.max_rtt - self.base_rtt) as f64;
            let da = (self.sum_rtt as f64 / self.cnt_rtt as f64) - self.base_rtt as f64;
            self.alpha = self.alpha_for(da, dm);
            self.beta = self.beta_for(da, dm);
        }
        self.restart(w);
    }

    fn restart(&mut self, w: &Window) {
        self.end_seq = w.snd_nxt;
        self.sum_rtt = 0;
        self.cnt_rtt = 0;
    }

    /// ssthresh = max(cwnd − β·cwnd, 2·MSS)
    pub fn reduce(&self, w: &Window) -> f64 {
        (w.cwnd - self.beta * w.cwnd).max(2.0 * w.mss)
    }
}

impl Cc for Illinois {
    type Cfg = Cfg;
    fn validate(cfg: &Cfg, field: &str) -> Result<(), ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        if !(cfg.alpha_min > 0.0 && cfg.alpha_min.is_finite()) {
            return Err(ConfigError::new(f("alpha_min"), "must be a positive number of segments, e.g. 0.3"));
        }
        if !(cfg.alpha_max >= cfg.alpha_min && cfg.alpha_max.is_finite()) {
            return Err(ConfigError::new(f("alpha_max"), "must be a number of segments ≥ alpha_min, e.g. 10"));
        }
        if !(cfg.beta_min > 0.0 && cfg.beta_min < 1.0) {
            return Err(ConfigError::new(f("beta_min"), "must be in (0, 1), e.g. 0.125"));
        }
        if !(cfg.beta_max >= cfg.beta_min && cfg.beta_max < 1.0) {
            return Err(ConfigError::new(f("beta_max"), "must be in [beta_min, 1), e.g. 0.5"));
        }
        if cfg.theta == 0 {
            return Err(ConfigError::new(f("theta"), "must be at least 1 RTT"));
        }
        Ok(())
    }
    fn build(_p: &TcpParams, cfg: &Cfg, snd_nxt: u64) -> Self {
        Illinois::new(*cfg, snd_nxt)
    }
    fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
        let r = ack.rtt.latest;
        if r > 0 {
            self.base_rtt = self.base_rtt.min(r);
            self.max_rtt = self.max_rtt.max(r);
            self.sum_rtt += r as u128;
            self.cnt_rtt += 1;
        }
        if w.snd_una > self.end_seq {
            self.update(w);
        }
    }
    fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        if w.cwnd < w.ssthresh {
            w.reno_increase(ack.acked);
        } else {
            w.cwnd += self.alpha * w.mss * w.mss / w.cwnd; // cwnd += α·MSS²/cwnd
        }
    }
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        self.reduce(w)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: f64, _now: Time) -> f64 {
        self.reduce(w)
    }
    fn on_timeout(&mut self, w: &Window, _now: Time) {
        self.alpha = 1.0;
        self.beta = 0.5;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.restart(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::cc::Rtt;

    const MSS: f64 = 1000.0;

    fn win(cwnd_segs: f64) -> Window {
        Window { cwnd: cwnd_segs * MSS, ssthresh: 1.0, mss: MSS, snd_una: 0, snd_nxt: 0 }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn alpha_at_its_end_points_and_between() {
        let mut i = Illinois::new(Cfg::default(), 0);
        // dm = 100: d1 = 1. da ≤ d1 with the delay never above: α_max at once.
        assert_eq!(i.alpha_for(1.0, 100.0), 10.0);
        assert_eq!(i.alpha_for(0.0, 100.0), 10.0);
        // da = dm: α_min; da = 50.5: 99·10/(99 + 49.5·9.7/0.3) = 0.58252; da = 2: 7.53807.
        assert!(close(i.alpha_for(100.0, 100.0), 0.3));
        assert!(close(i.alpha_for(50.5, 100.0), 0.582_524_271_844_660_2));
        assert!(close(i.alpha_for(2.0, 100.0), 7.538_071_065_989_847));
    }

    #[test]
    fn a_delay_at_d1_is_still_low() {
        // da = d1 exactly is the low-delay zone: it does not mark the delay as having been above d1, so
        // the next low RTT gives α_max at once.
        let mut i = Illinois::new(Cfg::default(), 0);
        assert_eq!(i.alpha_for(1.0, 100.0), 10.0);
        i.alpha = 0.3;
        assert_eq!(i.alpha_for(0.0, 100.0), 10.0);
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_consecutive_low_delay_rtts() {
        let mut i = Illinois::new(Cfg::default(), 0);
        i.alpha = i.alpha_for(100.0, 100.0); // above d1: α_min
        for k in 1..5 {
            i.alpha = i.alpha_for(0.5, 100.0);
            assert_eq!(i.alpha, 0.3, "low RTT {k} keeps α");
        }
        assert_eq!(i.alpha_for(0.5, 100.0), 10.0, "the 5th gives α_max");
        // An RTT above d1 in between restarts the count.
        i.alpha = i.alpha_for(100.0, 100.0);
        for _ in 0..4 {
            i.alpha = i.alpha_for(0.5, 100.0);
        }
        i.alpha = i.alpha_for(100.0, 100.0);
        for _ in 0..4 {
            i.alpha = i.alpha_for(0.5, 100.0);
            assert_eq!(i.alpha, 0.3);
        }
    }

    #[test]
    fn beta_at_its_end_points_and_between() {
        let i = Illinois::new(Cfg::default(), 0);
        // dm = 100: d2 = 10, d3 = 80.
        assert_eq!(i.beta_for(0.0, 100.0), 0.125);
        assert_eq!(i.beta_for(10.0, 100.0), 0.125);
        assert_eq!(i.beta_for(80.0, 100.0), 0.5);
        assert_eq!(i.beta_for(100.0, 100.0), 0.5);
        assert!(close(i.beta_for(45.0, 100.0), 0.3125)); // 0.125 + 0.375·35/70
        assert!(close(i.beta_for(79.0, 100.0), 0.125 + 0.375 * 69.0 / 70.0));
    }

    fn ack(acked: u64, latest: Time) -> AckInfo {
        AckInfo { now: 0, acked, marked: 0, ece: false, rtt: Rtt { latest, srtt: latest, min: latest } }
    }

    #[test]
    fn once_per_rtt_update_then_increase_and_decrease_use_it() {
        let mut i = Illinois::new(Cfg::default(), 10_000);
        let mut w = win(20.0);
        // One RTT of samples 100, 200, 150 (µs units are irrelevant): base 100, max 200, mean 150, so
        // dm = 100, da = 50: α = 99·10/(99 + 49·9.7/0.3), β = 0.125 + 0.375·40/70.
        for (una, r) in [(4000, 100), (8000, 200), (10_000, 150)] {
            w.snd_una = una;
            i.on_ack(&w, &ack(1000, r));
        }
        assert_eq!(i.alpha, 10.0, "no update before snd_una passes the round's end");
        w.snd_una = 10_001;
        w.snd_nxt = 30_000;
        i.on_ack(&w, &ack(1, 0));
        let alpha = 990.0 / (99.0 + 49.0 * 9.7 / 0.3);
        let beta = 0.125 + 0.375 * 40.0 / 70.0;
        assert!(close(i.alpha, alpha) && close(i.beta, beta), "{} {}", i.alpha, i.beta);
        // cwnd += α·MSS²/cwnd; ssthresh = cwnd − β·cwnd.
        i.increase(&mut w, &ack(1000, 0));
        assert!(close(w.cwnd, 20_000.0 + alpha * 1e6 / 20_000.0));
        assert!(close(i.ssthresh_on_loss(&w, 1.0, 0), w.cwnd * (1.0 - beta)));
        assert!(close(i.ssthresh_on_ece(&w, 0), w.cwnd * (1.0 - beta)));
        assert_eq!(i.reduce(&win(2.0)), 2.0 * MSS, "floor of 2 MSS");
        // The next round starts empty: one sample equal to base gives da = 0 → α_max after θ; the max of
        // the connection stays, so dm = 100 still.
        w.snd_una = 30_001;
        i.on_ack(&w, &ack(1000, 100));
        assert_eq!(i.beta, 0.125);
    }

    #[test]
    fn small_windows_are_reno_and_a_timeout_resets_alpha_and_beta() {
        let mut i = Illinois::new(Cfg::default(), 0);
        let mut w = win(14.0);
        w.snd_una = 1;
        i.on_ack(&w, &ack(1000, 300));
        assert_eq!((i.alpha, i.beta), (1.0, 0.5));
        let mut w = win(15.0);
        w.snd_una = 2;
        i.on_ack(&w, &ack(1000, 100)); // from 15 segments: delay-based (da = 0 here)
        assert_eq!(i.beta, 0.125);
        i.rtt_above = true;
        i.rtt_low = 3;
        i.on_timeout(&w, 0);
        assert_eq!((i.alpha, i.beta, i.rtt_low, i.rtt_above), (1.0, 0.5, 0, false));
        // Slow start is Reno's; at cwnd = ssthresh congestion avoidance (α = 1 now) takes over.
        let mut w = win(4.0);
        w.ssthresh = f64::INFINITY;
        i.increase(&mut w, &ack(1000, 0));
        assert_eq!(w.cwnd, 5000.0);
        w.ssthresh = 5000.0;
        i.increase(&mut w, &ack(1000, 0));
        assert_eq!(w.cwnd, 5200.0);
        // At cwnd = ssthresh it is Illinois' own α that grows the window, not Reno's 1 (α_max = 10 at the start).
        let mut j = Illinois::new(Cfg::default(), 0);
        let mut w = win(5.0);
        w.ssthresh = 5000.0;
        j.increase(&mut w, &ack(1000, 0));
        assert_eq!(w.cwnd, 5000.0 + 10.0 * 1e6 / 5000.0);
    }

    #[test]
    fn a_round_without_rtt_samples_keeps_alpha_and_beta() {
        let mut i = Illinois::new(Cfg::default(), 0);
        (i.alpha, i.beta) = (0.7, 0.2);
        let mut w = win(20.0);
        w.snd_una = 1;
        i.on_ack(&w, &ack(1000, 0));
        assert_eq!((i.alpha, i.beta), (0.7, 0.2));
    }

    #[test]
    fn keys_are_checked_and_reach_the_algorithm() {
        let bad = |c: Cfg| Illinois::validate(&c, "cc").unwrap_err().field;
        let d = Cfg::default();
        assert_eq!(bad(Cfg { alpha_min: 0.0, ..d }), "cc.alpha_min");
        assert_eq!(bad(Cfg { alpha_max: 0.2, ..d }), "cc.alpha_max");
        assert_eq!(bad(Cfg { beta_min: 1.0, ..d }), "cc.beta_min");
        assert_eq!(bad(Cfg { beta_max: 0.1, ..d }), "cc.beta_max");
        assert_eq!(bad(Cfg { theta: 0, ..d }), "cc.theta");
        assert_eq!(bad(Cfg { beta_min: 0.0, ..d }), "cc.beta_min");
        assert_eq!(bad(Cfg { beta_max: 1.0, ..d }), "cc.beta_max");
        assert_eq!(bad(Cfg { alpha_max: f64::INFINITY, ..d }), "cc.alpha_max");
        assert!(Illinois::validate(&d, "cc").is_ok());
        // Fixed α or β (min = max) is allowed.
        assert!(Illinois::validate(&Cfg { alpha_min: 1.0, alpha_max: 1.0, beta_min: 0.5, beta_max: 0.5, ..d }, "cc").is_ok());
        let mut i = Illinois::new(Cfg { alpha_min: 1.0, alpha_max: 2.0, theta: 2, ..d }, 0);
        assert_eq!(i.alpha, 2.0);
        assert!(close(i.alpha_for(100.0, 100.0), 1.0));
        i.alpha = 1.0;
        assert_eq!(i.alpha_for(0.0, 100.0), 1.0);
        assert_eq!(i.alpha_for(0.0, 100.0), 2.0, "θ = 2");
    }
}
