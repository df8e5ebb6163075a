//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: end to end congestion avoidance on a global Internet", IEEE
//! JSAC 13(8), 1995; Linux `tcp_vegas.c`), as `spec/transports.md` B4 writes it. Once per RTT — when
//! snd_una passes the snd_nxt recorded one RTT before — with rtt the smallest RTT sample of that RTT and
//! baseRTT the smallest of the connection, and only if that RTT gave ≥ 3 samples (else one Reno step):
//!
//! ```text
//! diff ← (cwnd/baseRTT − cwnd/rtt)·baseRTT = cwnd·(rtt − baseRTT)/rtt     segments this flow keeps queued
//! slow start:  diff > γ: cwnd ← min(cwnd, cwnd·baseRTT/rtt + 1 MSS); ssthresh ← min(ssthresh, cwnd − MSS)
//!              else: Reno slow start
//! otherwise:   diff > β: cwnd −= MSS; ssthresh ← min(ssthresh, cwnd − MSS)
//!              diff < α: cwnd += MSS
//! cwnd ← max(cwnd, 2·MSS)
//! ```
//!
//! Between those points slow start grows per ACK and congestion avoidance holds cwnd. Loss and ECN-Echo
//! are Reno's; after either, the per-RTT measurement starts afresh (Linux re-enables Vegas). Defaults
//! (`cc = { kind = "vegas", … }`, segments): `alpha = 2`, `beta = 4`, `gamma = 1` (Linux's module
//! parameters). B4 follows the paper's diff (divided by rtt); Linux divides by baseRTT, which counts a
//! little more queue for the same delay.

use super::{AckInfo, Cc, TcpParams, Window};
use crate::config::ConfigError;
use crate::units::Time;
use serde::Deserialize;

/// `cc = { kind = "vegas", … }` (segments).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cfg {
    /// Below this many segments queued, congestion avoidance adds one MSS per RTT.
    pub alpha: f64,
    /// Above this many, it removes one.
    pub beta: f64,
    /// Slow start ends when more than this many are queued.
    pub gamma: f64,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg { alpha: 2.0, beta: 4.0, gamma: 1.0 }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Vegas {
    pub cfg: Cfg,
    /// The current RTT ends when snd_una passes this.
    beg_snd_nxt: u64,
    /// RTT samples in the current RTT, and the smallest.
    cnt_rtt: u32,
    min_rtt: Time,
}

/// diff = (expected − actual)·baseRTT = cwnd·(rtt − baseRTT)/rtt (segments, with cwnd in segments).
pub fn diff(cwnd: f64, base_rtt: Time, rtt: Time) -> f64 {
    cwnd * (rtt - base_rtt) as f64 / rtt as f64
}

impl Vegas {
    pub fn new(cfg: Cfg, snd_nxt: u64) -> Self {
        Vegas { cfg, beg_snd_nxt: snd_nxt, cnt_rtt: 0, min_rtt: Time::MAX }
    }

    fn restart(&mut self, w: &Window) {
        self.beg_snd_nxt = w.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = Time::MAX;
    }

    /// The once-per-RTT rule of B4, with `rtt` this RTT's smallest sample.
    pub fn adjust(&self, w: &mut Window, acked: u64, base_rtt: Time, rtt: Time) {
        let Cfg { alpha, beta, gamma } = self.cfg;
        let mss = w.mss;
        let d = diff(w.cwnd / mss, base_rtt, rtt);
        if w.cwnd < w.ssthresh {
            if d > gamma {
                w.cwnd = w.cwnd.min(w.cwnd * base_rtt as f64 / rtt as f64 + mss);
                w.ssthresh = w.ssthresh.min(w.cwnd - mss);
            } else {
                w.reno_increase(acked);
            }
        } else if d > beta {
            w.cwnd -= mss;
            w.ssthresh = w.ssthresh.min(w.cwnd - mss);
        } else if d < alpha {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(2.0 * mss);
    }
}

impl Cc for Vegas {
    type Cfg = Cfg;
    fn validate(cfg: &Cfg, field: &str) -> Result<(), ConfigError> {
        let ok = |v: f64| v >= 0.0 && v.is_finite();
        if !ok(cfg.alpha) {
            return Err(ConfigError::new(format!("{field}.alpha"), "must be a number of segments ≥ 0, e.g. 2"));
        }
        if !ok(cfg.beta) || cfg.beta < cfg.alpha {
            return Err(ConfigError::new(format!("{field}.beta"), "must be a number of segments ≥ alpha, e.g. 4"));
        }
        if !ok(cfg.gamma) {
            return Err(ConfigError::new(format!("{field}.gamma"), "must be a number of segments ≥ 0, e.g. 1"));
        }
        Ok(())
    }
    fn build(_p: &TcpParams, cfg: &Cfg, snd_nxt: u64) -> Self {
        Vegas::new(*cfg, snd_nxt)
    }
    fn on_ack(&mut self, _w: &Window, ack: &AckInfo) {
        if ack.rtt.latest > 0 {
            self.cnt_rtt += 1;
            self.min_rtt = self.min_rtt.min(ack.rtt.latest);
        }
    }
    fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        if w.snd_una > self.beg_snd_nxt {
            if self.cnt_rtt <= 2 {
                w.reno_increase(ack.acked); // too few samples to trust: one Reno step
            } else {
                self.adjust(w, ack.acked, ack.rtt.min, self.min_rtt);
            }
            self.restart(w);
        } else if w.cwnd < w.ssthresh {
            w.reno_increase(ack.acked);
        }
    }
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        self.restart(w);
        super::reno::Reno::ssthresh_on_loss(w, w.cwnd)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: f64, _now: Time) -> f64 {
        self.restart(w);
        super::reno::Reno::ssthresh_on_loss(w, flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::cc::Rtt;
    use crate::units::US;

    const MSS: f64 = 1000.0;

    fn win(cwnd_segs: f64, ssthresh: f64) -> Window {
        Window { cwnd: cwnd_segs * MSS, ssthresh, mss: MSS, snd_una: 0, snd_nxt: 0 }
    }

    /// One RTT: the samples, then the ACK that ends it (snd_una passes the recorded snd_nxt).
    fn rtt_round(v: &mut Vegas, w: &mut Window, base: Time, samples: &[Time]) {
        for &r in samples {
            let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: r, srtt: r, min: base } };
            v.on_ack(w, &a);
        }
        w.snd_una = v.beg_snd_nxt + 1;
        w.snd_nxt = w.snd_una + 100_000;
        let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 0, srtt: base, min: base } };
        v.increase(w, &a);
    }

    #[test]
    fn between_rtt_points_slow_start_grows_per_ack_and_congestion_avoidance_holds() {
        let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 0, srtt: 0, min: 0 } };
        let mut v = Vegas::new(Cfg::default(), 1_000_000);
        // snd_una has not passed the RTT's end: below ssthresh one MSS per ACK, at ssthresh nothing.
        let mut w = win(4.0, 10_000.0);
        v.increase(&mut w, &a);
        assert_eq!(w.cwnd, 5000.0);
        let mut w = win(10.0, 10_000.0);
        v.increase(&mut w, &a);
        assert_eq!(w.cwnd, 10_000.0);
    }

    #[test]
    fn diff_is_the_queue_the_flow_keeps() {
        // 20 segments, baseRTT 100 µs, rtt 125 µs: 20·25/125 = 4 segments (Linux's ·/baseRTT form gives 5).
        assert_eq!(diff(20.0, 100 * US, 125 * US), 4.0);
        assert_eq!(diff(10.0, 100 * US, 100 * US), 0.0);
        assert_eq!(diff(30.0, 100 * US, 150 * US), 10.0);
    }

    #[test]
    fn congestion_avoidance_follows_alpha_and_beta_once_per_rtt() {
        let base = 100 * US;
        // (cwnd, rtt) → diff: 20·20/120 = 3.33 holds; 20·25/125 = 4 holds (not > β); 20·30/130 = 4.6 removes
        // an MSS and pulls ssthresh to cwnd − MSS; 10·10/110 = 0.9 adds one; 10·25/125 = 2 holds (not < α).
        for (cwnd, rtt, after, ss) in [
            (20.0, 120, 20.0, 5.0),
            (20.0, 125, 20.0, 5.0),
            (20.0, 130, 19.0, 5.0),
            (10.0, 110, 11.0, 5.0),
            (10.0, 125, 10.0, 5.0),
        ] {
            let mut v = Vegas::new(Cfg::default(), 0);
            let mut w = win(cwnd, ss * MSS);
            rtt_round(&mut v, &mut w, base, &[rtt * US, (rtt + 40) * US, (rtt + 10) * US]);
            assert_eq!(w.cwnd, after * MSS, "cwnd {cwnd}, rtt {rtt}");
            assert_eq!(w.ssthresh, ss * MSS);
        }
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(20.0, 25.0 * MSS);
        w.ssthresh = 19.5 * MSS; // below cwnd: congestion avoidance
        rtt_round(&mut v, &mut w, base, &[200 * US; 3]); // diff 10 > β
        assert_eq!((w.cwnd, w.ssthresh), (19.0 * MSS, 18.0 * MSS));
        // Between the per-RTT points congestion avoidance holds cwnd.
        let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 1, srtt: 1, min: 1 } };
        v.increase(&mut w, &a);
        assert_eq!(w.cwnd, 19.0 * MSS);
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_is_queued() {
        let base = 100 * US;
        // diff = 10·10/110 = 0.91 ≤ γ: a Reno slow-start step (one MSS for this ACK).
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(10.0, f64::INFINITY);
        rtt_round(&mut v, &mut w, base, &[110 * US; 3]);
        assert_eq!(w.cwnd, 11.0 * MSS);
        // diff = 10·25/125 = 2 > γ: cwnd ← min(cwnd, cwnd·100/125 + 1) = 9 segments, ssthresh ← 8.
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(10.0, f64::INFINITY);
        rtt_round(&mut v, &mut w, base, &[125 * US; 3]);
        assert_eq!((w.cwnd, w.ssthresh), (9.0 * MSS, 8.0 * MSS));
        // The floor: 2 segments.
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(2.0, f64::INFINITY);
        rtt_round(&mut v, &mut w, base, &[1000 * US; 3]);
        assert_eq!(w.cwnd, 2.0 * MSS);
    }

    #[test]
    fn boundaries_of_the_rules() {
        let base = 100 * US;
        // diff = 5·25/125 = 1 = γ exactly: still slow start (one MSS for the ACK).
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(5.0, f64::INFINITY);
        rtt_round(&mut v, &mut w, base, &[125 * US; 3]);
        assert_eq!(w.cwnd, 6.0 * MSS);
        // cwnd = ssthresh is congestion avoidance: diff 5 > β removes one MSS and pulls ssthresh to
        // cwnd − MSS (slow start would cut to cwnd·baseRTT/rtt + 1 = 6 segments).
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(10.0, 10.0 * MSS);
        rtt_round(&mut v, &mut w, base, &[200 * US; 3]);
        assert_eq!((w.cwnd, w.ssthresh), (9.0 * MSS, 8.0 * MSS));
        // The RTT ends only when snd_una passes the recorded snd_nxt, not when it reaches it.
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(20.0, 5.0 * MSS);
        rtt_round(&mut v, &mut w, base, &[200 * US; 3]); // ends the first RTT (−1 MSS)
        for _ in 0..3 {
            v.on_ack(&w, &AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 200 * US, srtt: 1, min: base } });
        }
        w.snd_una = v.beg_snd_nxt;
        let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 0, srtt: 1, min: base } };
        v.increase(&mut w, &a);
        assert_eq!(w.cwnd, 19.0 * MSS);
        // ACKs without an RTT sample are not samples: two samples and one without is still a Reno step.
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(20.0, 10.0 * MSS);
        let none = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 0, srtt: 1, min: base } };
        v.on_ack(&w, &none);
        rtt_round(&mut v, &mut w, base, &[200 * US; 2]);
        assert_eq!(w.cwnd, 20.0 * MSS + MSS * MSS / (20.0 * MSS));
    }

    #[test]
    fn fewer_than_three_samples_is_one_reno_step() {
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(20.0, 10.0 * MSS);
        rtt_round(&mut v, &mut w, 100 * US, &[200 * US; 2]); // diff 10 would remove an MSS
        assert_eq!(w.cwnd, 20.0 * MSS + MSS * MSS / (20.0 * MSS));
        // The next RTT counts its own samples only.
        rtt_round(&mut v, &mut w, 100 * US, &[200 * US]);
        assert!(w.cwnd > 20.0 * MSS);
    }

    #[test]
    fn a_loss_restarts_the_measurement_and_keys_reach_the_algorithm() {
        let mut v = Vegas::new(Cfg::default(), 0);
        let mut w = win(20.0, 10.0 * MSS);
        let a = AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt { latest: 200 * US, srtt: 1, min: 100 * US } };
        for _ in 0..3 {
            v.on_ack(&w, &a);
        }
        w.snd_nxt = 50_000;
        assert_eq!(v.ssthresh_on_loss(&w, 16_000.0, 0), 8000.0); // Reno: FlightSize/2
        assert_eq!((v.cnt_rtt, v.min_rtt, v.beg_snd_nxt), (0, Time::MAX, 50_000));
        // ECN-Echo: Reno's halving of cwnd, and the same restart.
        v.on_ack(&w, &a);
        w.snd_nxt = 60_000;
        assert_eq!(v.ssthresh_on_ece(&w, 0), 10_000.0);
        assert_eq!((v.cnt_rtt, v.min_rtt, v.beg_snd_nxt), (0, Time::MAX, 60_000));
        // α = 5: diff 3.33 now adds an MSS.
        let mut v = Vegas::new(Cfg { alpha: 5.0, beta: 6.0, gamma: 1.0 }, 0);
        let mut w = win(20.0, 5.0 * MSS);
        rtt_round(&mut v, &mut w, 100 * US, &[120 * US; 3]);
        assert_eq!(w.cwnd, 21.0 * MSS);
        let e = Vegas::validate(&Cfg { alpha: 5.0, beta: 4.0, gamma: 1.0 }, "cc").unwrap_err();
        assert_eq!(e.field, "cc.beta");
        assert_eq!(Vegas::validate(&Cfg { gamma: -1.0, ..Cfg::default() }, "cc").unwrap_err().field, "cc.gamma");
        assert_eq!(Vegas::validate(&Cfg { alpha: f64::NAN, ..Cfg::default() }, "cc").unwrap_err().field, "cc.alpha");
        assert_eq!(Vegas::validate(&Cfg { beta: f64::INFINITY, ..Cfg::default() }, "cc").unwrap_err().field, "cc.beta");
        // Zeros and α = β are allowed.
        assert!(Vegas::validate(&Cfg { alpha: 0.0, beta: 0.0, gamma: 0.0 }, "cc").is_ok());
    }
}
