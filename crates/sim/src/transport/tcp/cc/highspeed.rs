//! HighSpeed TCP (Floyd, RFC 3649, 2003; Linux `tcp_highspeed.c`), as `spec/transports.md` B6 writes it:
//! Reno up to w = 38 segments; above, the increase a(w) and decrease b(w) depend on the window w
//! (segments):
//!
//! ```text
//! congestion avoidance:   cwnd += a(w)·MSS²/cwnd per ACK (slow start is Reno's)
//! loss or ECN-Echo:       ssthresh ← max(cwnd − b(w)·cwnd, 2·MSS)
//! ```
//!
//! (on cwnd, as Linux; our Reno halves FlightSize, RFC 5681 — the same when the window is the limit).
//! `response = "table"` (the default) is Linux's `hstcp_aimd_vals`, RFC 3649 Appendix B: with row i the
//! first whose bound is ≥ w (w in (bound_{i−1}, bound_i]; the last row beyond it), a(w) = i + 1 and
//! b(w) = md_i/256. `response = "formula"` computes RFC 3649 §5's response function instead from its
//! parameters `low_window = 38`, `low_p = 1e-3` (Reno's loss rate at Low_Window), `high_window = 83000`,
//! `high_p = 1e-7`, `high_decrease = 0.1` (a new `low_window` wants Reno's `low_p = 1.44/low_window²`, from
//! w = 1.2/√p, for a(w) to start at 1): p(w) on the log-log line through (Low_Window, Low_P) and
//! (High_Window, High_P), b(w) linear in ln w from 0.5 to High_Decrease,
//!
//! ```text
//! x = (ln w − ln Low_Window)/(ln High_Window − ln Low_Window)
//! b(w) = (High_Decrease − 0.5)·x + 0.5,   p(w) = exp(ln Low_P + x·(ln High_P − ln Low_P))
//! a(w) = w²·p(w)·2·b(w)/(2 − b(w))
//! ```
//!
//! for Low_Window < w, with w capped at High_Window (as the table stops at its last row). With the
//! defaults p(w) = 0.0781/w^1.198; the table was computed from the RFC's rounded 0.078/w^1.2 (B6), so the
//! two differ in a(w) by up to 1.8 segments near the table's top. The five keys apply to the formula only.

use super::{AckInfo, Cc, TcpParams, Window};
use crate::config::ConfigError;
use crate::units::Time;
use serde::Deserialize;

/// RFC 3649 Appendix B as Linux has it: (upper bound of w in segments, md) with b = md/256.
pub const TABLE: [(u32, u32); 72] = [
    (38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89), (851, 86), (1058, 83),
    (1284, 81), (1529, 78), (1793, 76), (2076, 74), (2378, 72), (2699, 71), (3039, 69), (3399, 68),
    (3778, 66), (4177, 65), (4596, 64), (5036, 62), (5497, 61), (5979, 60), (6483, 59), (7009, 58),
    (7558, 57), (8130, 56), (8726, 55), (9346, 54), (9991, 53), (10661, 52), (11358, 52), (12082, 51),
    (12834, 50), (13614, 49), (14424, 48), (15265, 48), (16137, 47), (17042, 46), (17981, 45), (18955, 45),
    (19965, 44), (21013, 43), (22101, 43), (23230, 42), (24402, 41), (25618, 41), (26881, 40), (28193, 39),
    (29557, 39), (30975, 38), (32450, 38), (33986, 37), (35586, 36), (37253, 36), (38992, 35), (40808, 35),
    (42707, 34), (44694, 33), (46776, 33), (48961, 32), (51258, 32), (53677, 31), (56230, 30), (58932, 30),
    (61799, 29), (64851, 28), (68113, 28), (71617, 27), (75401, 26), (79517, 26), (84035, 25), (89053, 24),
];

/// Where a(w) and b(w) come from.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// Linux's table (RFC 3649 Appendix B).
    #[default]
    Table,
    /// RFC 3649 §5's formulas from the four parameters.
    Formula,
}

/// `cc = { kind = "highspeed", … }`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Cfg {
    pub response: Response,
    /// Low_Window (segments): Reno up to here. Formula only; default 38.
    pub low_window: Option<f64>,
    /// Low_P, the loss rate at Low_Window. Formula only; 1e-3.
    pub low_p: Option<f64>,
    /// High_Window (segments), where the loss rate is High_P and b = High_Decrease. Formula only; 83000.
    pub high_window: Option<f64>,
    /// High_P. Formula only; 1e-7.
    pub high_p: Option<f64>,
    /// High_Decrease. Formula only; 0.1.
    pub high_decrease: Option<f64>,
}

/// The formula's constants, resolved once per connection.
#[derive(Clone, Copy, Debug)]
struct Formula {
    low_window: f64,
    high_window: f64,
    high_decrease: f64,
    ln_low_window: f64,
    ln_span: f64,
    ln_low_p: f64,
    ln_high_p: f64,
}

impl Formula {
    fn new(c: &Cfg) -> Self {
        let lw = c.low_window.unwrap_or(38.0);
        let hw = c.high_window.unwrap_or(83_000.0);
        Formula {
            low_window: lw,
            high_window: hw,
            high_decrease: c.high_decrease.unwrap_or(0.1),
            ln_low_window: libm::log(lw),
            ln_span: libm::log(hw) - libm::log(lw),
            ln_low_p: libm::log(c.low_p.unwrap_or(1e-3)),
            ln_high_p: libm::log(c.high_p.unwrap_or(1e-7)),
        }
    }

    fn ab(&self, w: f64) -> (f64, f64) {
        if w <= self.low_window {
            return (1.0, 0.5);
        }
        let w = w.min(self.high_window);
        let x = (libm::log(w) - self.ln_low_window) / self.ln_span;
        let b = (self.high_decrease - 0.5) * x + 0.5;
        let p = libm::exp(self.ln_low_p + x * (self.ln_high_p - self.ln_low_p));
        (w * w * p * 2.0 * b / (2.0 - b), b) // a(w) = w²·p(w)·2·b(w)/(2 − b(w))
    }
}

/// a(w) and b(w) from the table for a window of `w` segments.
pub fn table_ab(w: f64) -> (f64, f64) {
    let i = TABLE.partition_point(|&(bound, _)| (bound as f64) < w).min(TABLE.len() - 1);
    ((i + 1) as f64, TABLE[i].1 as f64 / 256.0)
}

#[derive(Clone, Copy, Debug)]
pub struct HighSpeed {
    formula: Option<Formula>,
}

impl HighSpeed {
    pub fn new(cfg: &Cfg) -> Self {
        HighSpeed { formula: (cfg.response == Response::Formula).then(|| Formula::new(cfg)) }
    }

    /// (a(w), b(w)) for a window of `w` segments.
    pub fn ab(&self, w: f64) -> (f64, f64) {
        match &self.formula {
            None => table_ab(w),
            Some(f) => f.ab(w),
        }
    }

    /// ssthresh = max(cwnd − b(w)·cwnd, 2·MSS)
    pub fn reduce(&self, w: &Window) -> f64 {
        let (_, b) = self.ab(w.cwnd / w.mss);
        (w.cwnd - b * w.cwnd).max(2.0 * w.mss)
    }
}

impl Cc for HighSpeed {
    type Cfg = Cfg;
    fn validate(cfg: &Cfg, field: &str) -> Result<(), ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let keys = [
            ("low_window", cfg.low_window),
            ("low_p", cfg.low_p),
            ("high_window", cfg.high_window),
            ("high_p", cfg.high_p),
            ("high_decrease", cfg.high_decrease),
        ];
        if cfg.response == Response::Table {
            if let Some((k, _)) = keys.iter().find(|(_, v)| v.is_some()) {
                return Err(ConfigError::new(f(k), "applies to response = \"formula\"; the table (the default) is fixed"));
            }
            return Ok(());
        }
        let fm = Formula::new(cfg);
        if !(fm.low_window >= 1.0 && fm.low_window.is_finite()) {
            return Err(ConfigError::new(f("low_window"), "must be a number of segments ≥ 1, e.g. 38"));
        }
        if !(fm.high_window > fm.low_window && fm.high_window.is_finite()) {
            return Err(ConfigError::new(f("high_window"), "must be a number of segments above low_window, e.g. 83000"));
        }
        let (lp, hp) = (cfg.low_p.unwrap_or(1e-3), cfg.high_p.unwrap_or(1e-7));
        if !(lp > 0.0 && lp < 1.0) {
            return Err(ConfigError::new(f("low_p"), "must be a loss rate in (0, 1), e.g. 1e-3"));
        }
        if !(hp > 0.0 && hp < lp) {
            return Err(ConfigError::new(f("high_p"), "must be a loss rate in (0, low_p), e.g. 1e-7"));
        }
        if !(fm.high_decrease > 0.0 && fm.high_decrease <= 0.5) {
            return Err(ConfigError::new(f("high_decrease"), "must be in (0, 0.5], e.g. 0.1"));
        }
        Ok(())
    }
    fn build(_p: &TcpParams, cfg: &Cfg, _snd_nxt: u64) -> Self {
        HighSpeed::new(cfg)
    }
    fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        if w.cwnd < w.ssthresh {
            w.reno_increase(ack.acked);
        } else {
            let (a, _) = self.ab(w.cwnd / w.mss);
            w.cwnd += a * w.mss * w.mss / w.cwnd; // cwnd += a(w)·MSS²/cwnd
        }
    }
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        self.reduce(w)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, _flight: f64, _now: Time) -> f64 {
        self.reduce(w)
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
    fn ack() -> AckInfo {
        AckInfo { now: 0, acked: 1000, marked: 0, ece: false, rtt: Rtt::default() }
    }

    #[test]
    fn a_and_b_at_the_tables_points_and_between() {
        // Row i covers (bound_{i−1}, bound_i]: a = i + 1, b = md_i/256.
        for (w, a, md) in [
            (1.0, 1.0, 128.0),
            (38.0, 1.0, 128.0),
            (38.01, 2.0, 112.0),
            (100.0, 2.0, 112.0),
            (118.0, 2.0, 112.0),
            (118.5, 3.0, 104.0),
            (1058.0, 8.0, 83.0),
            (1059.0, 9.0, 81.0),
            (11358.0, 31.0, 52.0),
            (89053.0, 72.0, 24.0),
            (1e7, 72.0, 24.0),
        ] {
            assert_eq!(table_ab(w), (a, md / 256.0), "w = {w}");
        }
    }

    #[test]
    fn the_table_is_rfc_3649s_rounded_response_function() {
        // B6: b(w) = −0.4·(ln w − ln 38)/(ln 83000 − ln 38) + 0.5, p(w) = 0.078/w^1.2,
        // a(w) = w²·p(w)·2·b(w)/(2 − b(w)). Each row's bound is where a(w) reaches i + 1 and its md is
        // ⌊256·b⌋: a transcription error in a row shows (1058 written 1085 is off by 0.26).
        let ab = |w: f64| {
            let b = -0.4 * (libm::log(w) - libm::log(38.0)) / (libm::log(83_000.0) - libm::log(38.0)) + 0.5;
            (w * w * (0.078 / libm::pow(w, 1.2)) * 2.0 * b / (2.0 - b), b)
        };
        let mut last = (0, 129);
        for (i, &(bound, md)) in TABLE.iter().enumerate() {
            assert!(bound > last.0 && md <= last.1, "row {i} out of order");
            last = (bound, md);
            let (a, b) = ab(bound as f64);
            assert!((a - (i + 1) as f64).abs() < 0.05, "row {i}: a({bound}) = {a}");
            assert_eq!((256.0 * b).floor() as u32, md, "row {i}: b = {b}");
        }
    }

    #[test]
    fn the_formula_at_its_end_points_and_between() {
        let f = HighSpeed::new(&Cfg { response: Response::Formula, ..Cfg::default() });
        // Reno at Low_Window; High_Decrease and a = 83000²·1e-7·2·0.1/1.9 at High_Window.
        assert_eq!(f.ab(38.0), (1.0, 0.5));
        let (a, b) = f.ab(83_000.0);
        assert!((b - 0.1).abs() < 1e-12 && (a - 72.515_789_473_684_15).abs() < 1e-9, "{a} {b}");
        // w = 100: x = ln(100/38)/ln(83000/38), p = 1e-3·(1e-4)^x.
        let (a, b) = f.ab(100.0);
        assert!((a - 1.820_257_560_760_271_1).abs() < 1e-9 && (b - 0.449_664_049_826_473_56).abs() < 1e-12, "{a} {b}");
        assert_eq!(f.ab(1e6), f.ab(83_000.0), "capped at High_Window");
    }

    #[test]
    fn reno_up_to_38_segments() {
        let mut h = HighSpeed::new(&Cfg::default());
        for segs in [10.0, 38.0] {
            let mut w = win(segs);
            let mut r = w;
            h.increase(&mut w, &ack());
            r.reno_increase(1000);
            assert_eq!(w.cwnd, r.cwnd);
            assert_eq!(h.ssthresh_on_loss(&win(segs), 0.0, 0), segs * MSS / 2.0);
        }
        assert_eq!(h.ssthresh_on_ece(&win(3.0), 0), 2.0 * MSS, "floor of 2 MSS");
        // Slow start is Reno's at any window; at cwnd = ssthresh it is over (a(501) = 6).
        let mut w = win(500.0);
        w.ssthresh = f64::INFINITY;
        h.increase(&mut w, &ack());
        assert_eq!(w.cwnd, 501.0 * MSS);
        w.ssthresh = w.cwnd;
        h.increase(&mut w, &ack());
        assert_eq!(w.cwnd, 501.0 * MSS + 6.0 * MSS / 501.0);
    }

    #[test]
    fn above_38_segments_the_table_sets_increase_and_decrease() {
        let mut h = HighSpeed::new(&Cfg::default());
        // 100 segments: a = 2, b = 112/256.
        let mut w = win(100.0);
        h.increase(&mut w, &ack());
        assert_eq!(w.cwnd, 100_000.0 + 2.0 * 1e6 / 100_000.0);
        assert_eq!(h.ssthresh_on_loss(&win(100.0), 0.0, 0), 100_000.0 * (1.0 - 112.0 / 256.0));
        // 5000 segments: a = 20, b = 62/256.
        let mut w = win(5000.0);
        h.increase(&mut w, &ack());
        assert_eq!(w.cwnd, 5e6 + 20.0 * 1e6 / 5e6);
        assert_eq!(h.ssthresh_on_ece(&win(5000.0), 0), 5e6 * (1.0 - 62.0 / 256.0));
    }

    #[test]
    fn keys_are_checked_and_reach_the_algorithm() {
        let bad = |c: Cfg| HighSpeed::validate(&c, "cc").unwrap_err().field;
        let formula = Cfg { response: Response::Formula, ..Cfg::default() };
        assert!(HighSpeed::validate(&Cfg::default(), "cc").is_ok());
        assert!(HighSpeed::validate(&formula, "cc").is_ok());
        assert_eq!(bad(Cfg { high_p: Some(1e-6), ..Cfg::default() }), "cc.high_p", "table with a formula key");
        assert_eq!(bad(Cfg { low_window: Some(0.5), ..formula }), "cc.low_window");
        assert_eq!(bad(Cfg { high_window: Some(30.0), ..formula }), "cc.high_window");
        assert_eq!(bad(Cfg { high_p: Some(0.01), ..formula }), "cc.high_p");
        assert_eq!(bad(Cfg { low_p: Some(1.0), ..formula }), "cc.low_p");
        assert_eq!(bad(Cfg { low_p: Some(0.0), ..formula }), "cc.low_p");
        assert_eq!(bad(Cfg { high_window: Some(38.0), ..formula }), "cc.high_window");
        assert_eq!(bad(Cfg { high_p: Some(1e-3), ..formula }), "cc.high_p");
        assert_eq!(bad(Cfg { high_p: Some(0.0), ..formula }), "cc.high_p");
        assert_eq!(bad(Cfg { high_decrease: Some(0.0), ..formula }), "cc.high_decrease");
        assert_eq!(bad(Cfg { low_window: Some(f64::INFINITY), ..formula }), "cc.low_window");
        assert_eq!(bad(Cfg { low_window: Some(38.0), ..Cfg::default() }), "cc.low_window");
        // The edges that are allowed: Low_Window 1, High_Decrease ½ (no decrease change).
        assert!(HighSpeed::validate(&Cfg { low_window: Some(1.0), low_p: Some(0.5), high_decrease: Some(0.5), ..formula }, "cc").is_ok());
        assert_eq!(bad(Cfg { high_decrease: Some(0.6), ..formula }), "cc.high_decrease");
        // Low_Window 10 (with Reno's Low_P there, 1.44/10²) and High_Decrease 0.3: Reno up to 10 segments,
        // faster above, b(High_Window) = 0.3.
        let h = HighSpeed::new(&Cfg { low_window: Some(10.0), low_p: Some(0.0144), high_decrease: Some(0.3), ..formula });
        assert_eq!(h.ab(10.0), (1.0, 0.5));
        assert!(h.ab(11.0).0 > 1.0);
        assert!((h.ab(83_000.0).1 - 0.3).abs() < 1e-12);
        let h = HighSpeed::new(&Cfg { high_window: Some(1000.0), high_p: Some(1e-5), ..formula });
        let (a, b) = h.ab(1000.0);
        assert!((b - 0.1).abs() < 1e-12 && (a - 1e6 * 1e-5 * 0.2 / 1.9).abs() < 1e-9, "{a} {b}");
        // Low_P sets p between the ends: at the geometric middle of the windows, p is the geometric middle.
        let h = HighSpeed::new(&Cfg { low_window: Some(10.0), low_p: Some(1e-2), high_window: Some(1000.0), high_p: Some(1e-6), ..formula });
        let (a, b) = h.ab(100.0);
        assert!((b - 0.3).abs() < 1e-12 && (a - 1e4 * 1e-4 * 0.6 / 1.7).abs() < 1e-9, "{a} {b}");
    }
}
