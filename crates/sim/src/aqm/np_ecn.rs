//! NP-ECN: the congestion detection of PCN (Cheng et al., NSDI 2020, "non-pause ECN"), TCD's baseline,
//! as the TCD author's public ns-3 code has it (`spec/tcd.md` §0): a packet is marked CE only where the
//! CE marker (RED by default) says so **and** it was not queued while the port was paused. At every
//! RESUME the queue's packets are counted; each of them leaves unmarked, and only packets that came after
//! may be marked. Decided at dequeue on the queue left behind, as TCD. PCN's receiver side (a CNP only
//! when ≥ 95 % of a window's packets were marked) is not modelled: the receiver is DCQCN's.

use super::red::{self, Red};
use super::tcd::{ce_curve, default_ce};
use super::{AqmCfg, Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::Time;
use serde::Deserialize;

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// The CE marker's curve (RED on the instantaneous queue).
    pub ce: red::Params,
}

#[derive(Clone, Copy, Debug)]
pub struct NpEcn {
    pub params: Params,
    /// Packets queued at the last RESUME still to leave (they are exempt from CE).
    pub paused_pkts: u32,
}

impl NpEcn {
    pub fn decide(&mut self, q: u64, rng: &mut Rng) -> Verdict {
        if self.paused_pkts > 0 {
            self.paused_pkts -= 1;
            return Verdict::Pass;
        }
        Red::new(self.params.ce).draw(q as f64, rng)
    }
}

impl Hooks for NpEcn {
    fn on_dequeue(&mut self, ctx: &QueueCtx, _sojourn: Time, rng: &mut Rng) -> Verdict {
        self.decide(ctx.queue_bytes, rng)
    }
    fn on_pause(&mut self, _now: Time, paused: bool, _queue_bytes: u64, queue_pkts: u32) {
        if !paused {
            self.paused_pkts = queue_pkts;
        }
    }
}

/// `aqm = { kind = "np_ecn", ce = { kind = "red", kmin, kmax, pmax } }`; `ce` defaults to DCQCN's RED as
/// TCD's does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    #[serde(default = "default_ce")]
    pub ce: Box<AqmCfg>,
    #[serde(default)]
    pub non_ect: NonEct,
}

impl Config for Cfg {
    type Algo = NpEcn;

    fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
        ce_curve(&self.ce, &format!("{field}.ce"), mtu).map(|_| ())
    }
    fn build(&self, mtu: u64) -> NpEcn {
        NpEcn { params: Params { ce: ce_curve(&self.ce, "", mtu).expect("validated") }, paused_pkts: 0 }
    }
    fn non_ect(&self) -> NonEct {
        self.non_ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_queued_at_a_resume_leave_unmarked() {
        let mut a = NpEcn { params: Params { ce: red::Params { kmin: 1_000, kmax: 2_000, pmax: 1.0, weight: None, at_dequeue: true } }, paused_pkts: 0 };
        let mut r = crate::rng::stream(1, "np", 0);
        assert_eq!(a.decide(5_000, &mut r), Verdict::Mark);
        assert_eq!(a.decide(500, &mut r), Verdict::Pass);
        a.on_pause(0, true, 9_000, 3);
        assert_eq!(a.paused_pkts, 0, "a PAUSE alone exempts nothing");
        a.on_pause(1, false, 9_000, 3);
        for _ in 0..3 {
            assert_eq!(a.decide(5_000, &mut r), Verdict::Pass);
        }
        assert_eq!(a.decide(5_000, &mut r), Verdict::Mark);
    }

    #[test]
    fn between_kmin_and_kmax_marks_with_red_probability() {
        // p(q) = pmax·(q − Kmin)/(Kmax − Kmin) = 0.5·500/1000 = 0.25 per packet; none at or below Kmin.
        let mut a = NpEcn { params: Params { ce: red::Params { kmin: 1_000, kmax: 2_000, pmax: 0.5, weight: None, at_dequeue: true } }, paused_pkts: 0 };
        let mut r = crate::rng::stream(2, "np", 0);
        let n = 100_000;
        let marks = (0..n).filter(|_| a.decide(1_500, &mut r) == Verdict::Mark).count() as f64 / n as f64;
        assert!((marks - 0.25).abs() < 0.01, "{marks}");
        assert!((0..1000).all(|_| a.decide(1_000, &mut r) == Verdict::Pass));
    }

    #[test]
    fn config() {
        let c: Cfg = toml::from_str("ce = { kind = \"red\", kmin = \"10KB\", kmax = \"100KB\", pmax = 0.2 }").unwrap();
        c.validate("switch.aqm", 1500).unwrap();
        let a = c.build(1500);
        assert_eq!((a.params.ce.kmin, a.params.ce.kmax, a.params.ce.pmax), (10_000, 100_000, 0.2));
        let c: Cfg = toml::from_str("ce = { kind = \"pie\" }").unwrap();
        assert_eq!(c.validate("switch.aqm", 1500).unwrap_err().field, "switch.aqm.ce.kind");
    }
}
