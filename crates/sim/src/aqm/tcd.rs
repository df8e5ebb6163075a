//! TCD — Ternary Congestion Detection (Zhang, Liu, Meng, Ren, "Congestion Detection in Lossless
//! Networks", SIGCOMM 2021), as the first author's public ns-3 code does it (`spec/tcd.md` §0, which wins
//! over the reconstruction of §3). Per egress queue of a lossless priority, decided at dequeue on the
//! queue left behind:
//!
//! - Every RESUME of the queue's priority (a paused → unpaused change) records its time and the queue
//!   length then.
//! - Within `max_t_on` of the last RESUME the port may be throttled by its downstream neighbour:
//!   **undetermined**. The packet is marked **UE** (unless it carries CE already); the CE marker is not
//!   consulted.
//! - Past it, from undetermined: a queue at least as long as at the RESUME → **congestion** (CE per the
//!   marker); a shorter one → **checking** the trend (its time and length saved; no mark).
//! - Checking: once `max_t_on` has passed since the trend started, a queue grown by more than
//!   `trend_margin` → congestion (CE per the marker); else the trend restarts. Whenever the queue is at
//!   most `empty_level` while checking → non-congestion. No marks while checking.
//! - Non-congestion and congestion: the CE marker alone decides (`ce`, RED with DCQCN's values by
//!   default). The code records in these states whether the last packet was marked; here the state is
//!   **congestion** while the queue is in the marker's marking region (above Kmin) and **non-congestion**
//!   below it. Marks are the same either way; the recorded state does not flip with each random draw.
//!
//! `port_states` reports the ternary state (checking is reported as non-congestion: congestion is not
//! established, and its packets get no mark) at every change. Departures from the code: the queue
//! length is the whole queue's bytes (the code leaves out a 1030 B per-queue minimum cell), and times
//! are exact picoseconds (the code's are whole microseconds).

use super::red::{self, Red};
use super::{AqmCfg, Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::{Bytes, Dur, Size, Time, US};
use serde::Deserialize;

/// The ternary state plus the code's internal "checking the trend".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    NonCongestion,
    Checking,
    Undetermined,
    Congestion,
}

impl State {
    /// The ternary state `port_states` shows.
    pub fn ternary(self) -> Ternary {
        match self {
            State::NonCongestion | State::Checking => Ternary::NonCongestion,
            State::Undetermined => Ternary::Undetermined,
            State::Congestion => Ternary::Congestion,
        }
    }
}

/// A port state as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ternary {
    NonCongestion,
    Undetermined,
    Congestion,
}

impl Ternary {
    pub fn name(self) -> &'static str {
        match self {
            Ternary::NonCongestion => "non_congestion",
            Ternary::Undetermined => "undetermined",
            Ternary::Congestion => "congestion",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// max(T_on): the detection interval after a RESUME, and the trend-check period.
    pub max_t_on: Time,
    /// Growth over one checking period that means congestion.
    pub trend_margin: u64,
    /// A queue this short ends checking.
    pub empty_level: u64,
    /// The CE marker's curve (RED on the instantaneous queue, at dequeue).
    pub ce: red::Params,
}

#[derive(Clone, Debug)]
pub struct Tcd {
    pub params: Params,
    pub state: State,
    /// The last RESUME's time and the queue then (`None`: never paused).
    pub resume: Option<(Time, u64)>,
    /// Checking: when the trend started and the queue then.
    pub trend: (Time, u64),
    /// Ternary state changes (time, new state), drained into `port_states` at the end of the run.
    pub log: Vec<(Time, Ternary)>,
}

impl Tcd {
    pub fn new(params: Params) -> Tcd {
        Tcd { params, state: State::NonCongestion, resume: None, trend: (0, 0), log: Vec::new() }
    }

    fn set(&mut self, now: Time, s: State) {
        if s.ternary() != self.state.ternary() {
            self.log.push((now, s.ternary()));
        }
        self.state = s;
    }

    /// RED's verdict on queue `q` (one draw, only in the marking region).
    fn ce(&self, q: u64, rng: &mut Rng) -> Verdict {
        Red::new(self.params.ce).draw(q as f64, rng)
    }

    /// The decision for a packet leaving with `q` bytes behind it at `now`.
    pub fn decide(&mut self, now: Time, q: u64, rng: &mut Rng) -> Verdict {
        let p = self.params;
        if self.resume.is_some_and(|(t, _)| now - t <= p.max_t_on) {
            self.set(now, State::Undetermined);
            return Verdict::MarkUe;
        }
        match self.state {
            State::Undetermined => {
                let at_resume = self.resume.map_or(0, |r| r.1);
                if q >= at_resume {
                    self.set(now, State::Congestion);
                    self.ce(q, rng)
                } else {
                    self.trend = (now, q);
                    self.set(now, State::Checking);
                    Verdict::Pass
                }
            }
            State::Checking => {
                if now - self.trend.0 >= p.max_t_on {
                    if q >= self.trend.1 + p.trend_margin {
                        self.set(now, State::Congestion);
                        return self.ce(q, rng);
                    }
                    self.trend = (now, q);
                }
                if q <= p.empty_level {
                    self.set(now, State::NonCongestion);
                }
                Verdict::Pass
            }
            State::NonCongestion | State::Congestion => {
                let s = if q > p.ce.kmin { State::Congestion } else { State::NonCongestion };
                self.set(now, s);
                self.ce(q, rng)
            }
        }
    }
}

impl Hooks for Tcd {
    fn on_dequeue(&mut self, ctx: &QueueCtx, _sojourn: Time, rng: &mut Rng) -> Verdict {
        self.decide(ctx.now, ctx.queue_bytes, rng)
    }
    fn on_pause(&mut self, now: Time, paused: bool, queue_bytes: u64, _queue_pkts: u32) {
        if !paused {
            self.resume = Some((now, queue_bytes));
        }
    }
}

/// The CE marker of `tcd` and `np_ecn`: `red` (instantaneous queue; `average` is refused),
/// `dctcp_red` (a step at `threshold`) or `ib_fecn` (IB CC's FECN above `threshold`, every packet: with
/// TCD, whether the port is root or victim is TCD's own state), as RED's curve on the queue at dequeue.
pub fn ce_curve(ce: &AqmCfg, field: &str, mtu: u64) -> Result<red::Params, ConfigError> {
    ce.validate(field, mtu)?;
    match ce {
        // Only the curve is used (`Red::probability` on the queue at dequeue); `mark_at` does not apply.
        AqmCfg::Red(c) if c.average.is_none() => Ok(c.build(mtu).params),
        AqmCfg::Red(_) => Err(ConfigError::new(format!("{field}.average"), "the CE marker works on the instantaneous queue; remove `average`")),
        AqmCfg::DctcpRed(c) => {
            let k = c.build(mtu).params.threshold;
            Ok(red::Params { kmin: k, kmax: k, pmax: 1.0, weight: None, at_dequeue: true })
        }
        AqmCfg::IbFecn(c) if c.marking_rate == 0 && !c.victim_mask => {
            let k = c.build(mtu).params.threshold;
            Ok(red::Params { kmin: k, kmax: k, pmax: 1.0, weight: None, at_dequeue: true })
        }
        AqmCfg::IbFecn(_) => Err(ConfigError::new(
            field,
            "as TCD's CE marker `ib_fecn` marks every packet above its threshold: remove marking_rate and victim_mask (TCD tells congestion from victims itself)",
        )),
        other => Err(ConfigError::new(
            format!("{field}.kind"),
            format!("the CE marker must be `red`, `dctcp_red` or `ib_fecn`, not `{}`", other.kind()),
        )),
    }
}

/// The default CE marker: DCQCN's RED (Kmin 5 KB, Kmax 200 KB, Pmax 1 %; `spec/tcd.md` §7.2).
pub fn default_ce() -> Box<AqmCfg> {
    Box::new(AqmCfg::Red(red::Cfg {
        kmin: Bytes(Size::Bytes(5_000)),
        kmax: Bytes(Size::Bytes(200_000)),
        pmax: 0.01,
        average: None,
        non_ect: Some(NonEct::Pass),
        mark_at: super::MarkAt::Dequeue,
    }))
}

fn default_max_t_on() -> Dur {
    Dur(40 * US)
}
fn default_trend_margin() -> Bytes {
    Bytes(Size::Bytes(900))
}
fn default_empty_level() -> Bytes {
    Bytes(Size::Bytes(2060))
}

/// `aqm = { kind = "tcd", max_t_on = "40us", trend_margin = "900B", empty_level = "2060B", ce = { kind =
/// "red", kmin, kmax, pmax } }`. Defaults are the public code's (`spec/tcd.md` §0: interval 40 µs,
/// margin 900 B, empty level 2 × 1030 B); `ce` is DCQCN's RED. TCD marks, never drops: a Not-ECT packet
/// passes (`non_ect = "pass"`, the only value a lossless queue allows).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    #[serde(default = "default_max_t_on")]
    pub max_t_on: Dur,
    #[serde(default = "default_trend_margin")]
    pub trend_margin: Bytes,
    #[serde(default = "default_empty_level")]
    pub empty_level: Bytes,
    #[serde(default = "default_ce")]
    pub ce: Box<AqmCfg>,
    #[serde(default)]
    pub non_ect: NonEct,
}

impl Config for Cfg {
    type Algo = Tcd;

    fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
        if self.max_t_on.0 == 0 {
            return Err(ConfigError::new(format!("{field}.max_t_on"), "must be greater than zero, e.g. \"40us\""));
        }
        for (k, v) in [("trend_margin", self.trend_margin), ("empty_level", self.empty_level)] {
            if v.0 == Size::Inf {
                return Err(ConfigError::new(format!("{field}.{k}"), "must be a finite size"));
            }
        }
        ce_curve(&self.ce, &format!("{field}.ce"), mtu).map(|_| ())
    }
    fn build(&self, mtu: u64) -> Tcd {
        Tcd::new(Params {
            max_t_on: self.max_t_on.0,
            trend_margin: self.trend_margin.0.bytes(mtu),
            empty_level: self.empty_level.0.bytes(mtu),
            ce: ce_curve(&self.ce, "", mtu).expect("validated"),
        })
    }
    fn non_ect(&self) -> NonEct {
        self.non_ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KMIN: u64 = 5_000;

    fn tcd() -> Tcd {
        Tcd::new(Params {
            max_t_on: 40 * US,
            trend_margin: 900,
            empty_level: 2060,
            ce: red::Params { kmin: KMIN, kmax: 200_000, pmax: 1.0, weight: None, at_dequeue: true },
        })
    }

    fn rng() -> Rng {
        crate::rng::stream(1, "tcd", 0)
    }

    #[test]
    fn undetermined_for_max_t_on_after_a_resume_then_congestion_if_the_queue_held() {
        let mut t = tcd();
        let mut r = rng();
        // Never paused: the CE marker decides; above Kmin with pmax 1 at 200 KB.
        assert_eq!(t.decide(0, 1_000, &mut r), Verdict::Pass);
        assert_eq!(t.state, State::NonCongestion);
        assert_eq!(t.decide(US, 300_000, &mut r), Verdict::Mark);
        assert_eq!(t.state, State::Congestion);
        t.on_pause(10 * US, true, 300_000, 300);
        t.on_pause(20 * US, false, 100_000, 100);
        // UE up to and including 40 µs after the RESUME; no CE even above Kmax.
        assert_eq!(t.decide(20 * US, 300_000, &mut r), Verdict::MarkUe);
        assert_eq!(t.decide(60 * US, 300_000, &mut r), Verdict::MarkUe);
        assert_eq!(t.state, State::Undetermined);
        // Past it, the queue (100 KB) is still as long as at the RESUME: congestion, and CE per RED.
        assert_eq!(t.decide(60 * US + 1, 250_000, &mut r), Verdict::Mark);
        assert_eq!(t.state, State::Congestion);
        let log: Vec<Ternary> = t.log.iter().map(|x| x.1).collect();
        assert_eq!(log, [Ternary::Congestion, Ternary::Undetermined, Ternary::Congestion]);
        assert_eq!(t.log[1].0, 20 * US);
    }

    #[test]
    fn a_shorter_queue_is_checked_for_a_trend() {
        let mut t = tcd();
        let mut r = rng();
        t.on_pause(0, false, 50_000, 50);
        assert_eq!(t.decide(10 * US, 60_000, &mut r), Verdict::MarkUe);
        // 41 µs: the queue (40 KB) is shorter than at the RESUME: checking, no mark.
        assert_eq!(t.decide(41 * US, 40_000, &mut r), Verdict::Pass);
        assert_eq!((t.state, t.trend), (State::Checking, (41 * US, 40_000)));
        // Within the period nothing changes, whatever the queue (no CE while checking).
        assert_eq!(t.decide(80 * US, 190_000, &mut r), Verdict::Pass);
        assert_eq!(t.state, State::Checking);
        // A full period later, grown by less than the margin: the trend restarts.
        assert_eq!(t.decide(81 * US, 40_899, &mut r), Verdict::Pass);
        assert_eq!((t.state, t.trend), (State::Checking, (81 * US, 40_899)));
        // Next period: grown by the margin → congestion, CE per RED (above Kmax: certain).
        t.params.ce.kmax = 41_000;
        assert_eq!(t.decide(121 * US, 41_799, &mut r), Verdict::Mark);
        assert_eq!(t.state, State::Congestion);
    }

    #[test]
    fn checking_ends_when_the_queue_is_nearly_empty() {
        let mut t = tcd();
        let mut r = rng();
        t.on_pause(0, false, 50_000, 50);
        t.decide(US, 50_000, &mut r);
        t.decide(41 * US, 40_000, &mut r);
        assert_eq!(t.state, State::Checking);
        assert_eq!(t.decide(42 * US, 2_061, &mut r), Verdict::Pass);
        assert_eq!(t.state, State::Checking);
        assert_eq!(t.decide(43 * US, 2_060, &mut r), Verdict::Pass);
        assert_eq!(t.state, State::NonCongestion);
        // Checking is recorded as non-congestion: entering it is the change, leaving it to
        // non-congestion is none.
        assert_eq!(t.log, [(US, Ternary::Undetermined), (41 * US, Ternary::NonCongestion)]);
    }

    #[test]
    fn a_pause_alone_changes_nothing_until_the_resume() {
        let mut t = tcd();
        let mut r = rng();
        t.on_pause(0, true, 80_000, 80);
        assert_eq!(t.resume, None);
        assert_eq!(t.decide(US, 250_000, &mut r), Verdict::Mark);
        // A RESUME long ago (more than max_t_on before the packet) is not undetermined either.
        t.on_pause(2 * US, false, 80_000, 80);
        assert_eq!(t.decide(43 * US, 250_000, &mut r), Verdict::Mark);
        assert_eq!(t.state, State::Congestion);
    }

    #[test]
    fn congestion_marks_ce_with_red_probability() {
        // Never paused, q between Kmin and Kmax: p = pmax·(q − Kmin)/(Kmax − Kmin) = 0.5·0.5 = 0.25.
        let mut t = tcd();
        t.params.ce = red::Params { kmin: 1_000, kmax: 2_000, pmax: 0.5, weight: None, at_dequeue: true };
        let mut r = rng();
        let n = 100_000;
        let marks = (0..n).filter(|_| t.decide(0, 1_500, &mut r) == Verdict::Mark).count() as f64 / n as f64;
        assert!((marks - 0.25).abs() < 0.01, "{marks}");
        assert_eq!(t.state, State::Congestion);
        assert_eq!(t.decide(0, 1_000, &mut r), Verdict::Pass);
        assert_eq!(t.state, State::NonCongestion);
    }

    #[test]
    fn config_defaults_and_errors() {
        let cfg = |t: &str| -> Result<Cfg, toml::de::Error> { toml::from_str(t) };
        let c = cfg("").unwrap();
        c.validate("switch.aqm", 1500).unwrap();
        let t = c.build(1500);
        assert_eq!((t.params.max_t_on, t.params.trend_margin, t.params.empty_level), (40 * US, 900, 2060));
        assert_eq!((t.params.ce.kmin, t.params.ce.kmax, t.params.ce.pmax), (5_000, 200_000, 0.01));
        let c = cfg("max_t_on = \"97us\"\nce = { kind = \"dctcp_red\", threshold = \"30KB\" }").unwrap();
        let t = c.build(1500);
        assert_eq!((t.params.max_t_on, t.params.ce.kmin, t.params.ce.kmax), (97 * US, 30_000, 30_000));
        let e = cfg("ce = { kind = \"codel\", target = \"5us\", interval = \"100us\", mode = \"ecn\" }").unwrap().validate("switch.aqm", 1500).unwrap_err();
        assert_eq!(e.field, "switch.aqm.ce.kind");
        let e = cfg("max_t_on = \"0us\"").unwrap().validate("switch.aqm", 1500).unwrap_err();
        assert_eq!(e.field, "switch.aqm.max_t_on");
        let e = cfg("ce = { kind = \"red\", kmin = \"5KB\", kmax = \"1KB\", pmax = 0.1 }").unwrap().validate("switch.aqm", 1500).unwrap_err();
        assert_eq!(e.field, "switch.aqm.ce.kmax");
    }
}
