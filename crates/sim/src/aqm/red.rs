//! RED with Kmin/Kmax/Pmax — the piecewise-linear curve that DCQCN and ACC use:
//!   p(q) = 0 for q ≤ Kmin;  Pmax·(q − Kmin)/(Kmax − Kmin) for Kmin < q ≤ Kmax;  1 for q > Kmax,
//! one independent Bernoulli draw per packet. `q` is the instantaneous queue, or (with `weight`) Floyd &
//! Jacobson's EWMA avg ← (1 − w)·avg + w·q, decayed over idle periods by (1 − w)^m with m the packets the
//! link could have sent while idle.

use super::{Config, Hooks, MarkAt, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::units::{Bytes, Size};
use serde::Deserialize;
use crate::rng::{self, Rng};
use crate::units::{Time, SEC};

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
    /// EWMA weight; `None` = instantaneous queue.
    pub weight: Option<f64>,
    pub at_dequeue: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    pub avg: f64,
    /// When the queue last became empty (`None` while busy).
    pub idle_since: Option<Time>,
}

#[derive(Clone, Copy, Debug)]
pub struct Red {
    pub params: Params,
    pub state: State,
}

impl Red {
    pub fn new(params: Params) -> Self {
        Red { params, state: State::default() }
    }

    /// Marking probability for queue length q (bytes).
    pub fn probability(&self, q: f64) -> f64 {
        let p = &self.params;
        if q <= p.kmin as f64 {
            0.0
        } else if q <= p.kmax as f64 {
            if p.kmax == p.kmin {
                1.0
            } else {
                p.pmax * (q - p.kmin as f64) / (p.kmax - p.kmin) as f64
            }
        } else {
            1.0
        }
    }

    fn signal(&mut self, ctx: &QueueCtx) -> f64 {
        let q = ctx.queue_bytes as f64;
        match self.params.weight {
            None => q,
            Some(w) => {
                if let Some(t0) = self.state.idle_since.take() {
                    // m = idle time / typical transmission time of an MTU packet
                    let t_tx = ctx.mtu as f64 * 8.0 * SEC as f64 / ctx.port_rate as f64;
                    let m = (ctx.now.saturating_sub(t0)) as f64 / t_tx;
                    self.state.avg *= libm::pow(1.0 - w, m);
                }
                self.state.avg = (1.0 - w) * self.state.avg + w * q;
                self.state.avg
            }
        }
    }

    /// One Bernoulli draw at the curve's probability for `q` (no draw where it is 0 or 1).
    pub fn draw(&self, q: f64, rng: &mut Rng) -> Verdict {
        let p = self.probability(q);
        if p >= 1.0 || (p > 0.0 && rng::unit(rng) < p) {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    fn decide(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        let q = self.signal(ctx);
        self.draw(q, rng)
    }

    #[inline]
    pub fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        if self.params.at_dequeue {
            return Verdict::Pass;
        }
        self.decide(ctx, rng)
    }

    #[inline]
    pub fn on_dequeue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        if !self.params.at_dequeue {
            return Verdict::Pass;
        }
        self.decide(ctx, rng)
    }

    pub fn on_empty(&mut self, now: Time) {
        self.state.idle_since = Some(now);
    }
}

impl Hooks for Red {
    #[inline]
    fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        Red::on_enqueue(self, ctx, rng)
    }
    #[inline]
    fn on_dequeue(&mut self, ctx: &QueueCtx, _sojourn: Time, rng: &mut Rng) -> Verdict {
        Red::on_dequeue(self, ctx, rng)
    }
    #[inline]
    fn on_empty(&mut self, now: Time) {
        Red::on_empty(self, now)
    }
}

/// `aqm = { kind = "red", kmin, kmax, pmax, average, mark_at, non_ect }`: with `average` (the EWMA
/// weight) on the averaged queue, else on the instantaneous queue. RED is drop-capable: by default it
/// drops what it cannot mark (`non_ect = "drop"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub kmin: Bytes,
    pub kmax: Bytes,
    pub pmax: f64,
    #[serde(default)]
    pub average: Option<f64>,
    #[serde(default)]
    pub non_ect: Option<NonEct>,
    #[serde(default)]
    pub mark_at: MarkAt,
}

impl Config for Cfg {
    type Algo = Red;

    fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
        let (a, b) = (self.kmin.0.bytes(mtu), self.kmax.0.bytes(mtu));
        if self.kmin.0 == Size::Inf || self.kmax.0 == Size::Inf || b < a {
            return Err(ConfigError::new(format!("{field}.kmax"), "kmin ≤ kmax, both finite"));
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(ConfigError::new(format!("{field}.pmax"), "must be a probability in [0, 1]"));
        }
        if let Some(w) = self.average {
            if !(w > 0.0 && w <= 1.0) {
                return Err(ConfigError::new(format!("{field}.average"), "EWMA weight must be in (0, 1]"));
            }
        }
        Ok(())
    }
    fn build(&self, mtu: u64) -> Red {
        Red::new(Params {
            kmin: self.kmin.0.bytes(mtu),
            kmax: self.kmax.0.bytes(mtu),
            pmax: self.pmax,
            weight: self.average,
            at_dequeue: self.mark_at == MarkAt::Dequeue,
        })
    }
    fn non_ect(&self) -> NonEct {
        self.non_ect.unwrap_or(NonEct::Drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn ctx(q: u64) -> QueueCtx {
        QueueCtx { now: 0, queue_bytes: q, queue_pkts: 0, port_bytes: q, port_rate: 10_000_000_000, mtu: 1500 }
    }
    #[test]
    fn curve() {
        let r = Red::new(Params { kmin: 100, kmax: 300, pmax: 0.2, weight: None, at_dequeue: false });
        assert_eq!(r.probability(100.0), 0.0);
        assert!((r.probability(200.0) - 0.1).abs() < 1e-12);
        assert_eq!(r.probability(301.0), 1.0);
    }
    #[test]
    fn marking_frequency_matches_probability() {
        let mut r = Red::new(Params { kmin: 0, kmax: 1000, pmax: 0.5, weight: None, at_dequeue: false });
        let mut rng = crate::rng::stream(3, "red", 0);
        let n = 100_000;
        let marks = (0..n).filter(|_| r.on_enqueue(&ctx(500), &mut rng) == Verdict::Mark).count();
        let f = marks as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.01, "{f}");
    }
    #[test]
    fn the_average_is_an_ewma_decayed_over_idle_time_by_the_packets_the_link_could_have_sent() {
        let mut r = Red::new(Params { kmin: 1 << 20, kmax: 1 << 21, pmax: 1.0, weight: Some(0.25), at_dequeue: false });
        let mut rng = crate::rng::stream(3, "red", 1);
        let at = |now: Time, q: u64| QueueCtx { now, ..ctx(q) };
        r.on_enqueue(&at(0, 8000), &mut rng); // 0.25 · 8000
        r.on_enqueue(&at(0, 4000), &mut rng); // 0.75 · 2000 + 0.25 · 4000
        assert_eq!(r.state.avg, 2500.0);
        // Empty at 10 µs, the next arrival at 22 µs: 12 µs idle is m = 10 packet times (1500 B at 10 Gb/s
        // takes 1.2 µs), so avg ← 2500 · 0.75¹⁰, then the arrival's own step with q = 0.
        Hooks::on_empty(&mut r, 10 * crate::units::US);
        r.on_enqueue(&at(22 * crate::units::US, 0), &mut rng);
        let want = 2500.0 * 0.75f64.powi(11);
        assert!((r.state.avg - want).abs() <= 1e-12 * want, "{} vs {want}", r.state.avg);
        // The idle period is used once.
        r.on_enqueue(&at(30 * crate::units::US, 0), &mut rng);
        assert!((r.state.avg - want * 0.75).abs() <= 1e-12 * want);
    }

    #[test]
    fn marks_where_the_config_says_and_draws_only_where_the_curve_is_strictly_between_0_and_1() {
        let mut rng = crate::rng::stream(3, "red", 2);
        for at_dequeue in [false, true] {
            let mut r = Red::new(Params { kmin: 100, kmax: 300, pmax: 0.2, weight: None, at_dequeue });
            // Above Kmax every packet is marked, at the chosen end only.
            let (enq, deq) = (r.on_enqueue(&ctx(1000), &mut rng), Hooks::on_dequeue(&mut r, &ctx(1000), 0, &mut rng));
            let want = if at_dequeue { (Verdict::Pass, Verdict::Mark) } else { (Verdict::Mark, Verdict::Pass) };
            assert_eq!((enq, deq), want, "at_dequeue = {at_dequeue}");
        }
        // At Kmin (p = 0) and above Kmax (p = 1) the verdict is certain: the switch's stream is untouched.
        let mut r = Red::new(Params { kmin: 100, kmax: 300, pmax: 0.2, weight: None, at_dequeue: false });
        for (q, want) in [(100, Verdict::Pass), (301, Verdict::Mark)] {
            assert_eq!(crate::rng::without_draw(&format!("q = {q}"), |rng| r.on_enqueue(&ctx(q), rng)), want);
        }
    }

    #[test]
    fn keys_are_checked_and_reach_the_algorithm() {
        let cfg = |t: &str| toml::from_str::<Cfg>(&format!("kmin = \"10KB\"\npmax = 0.5\n{t}")).unwrap();
        let field = |t: &str| cfg(t).validate("switch.aqm", 1500).err().map(|e| e.field);
        let bad = |k: &str| Some(format!("switch.aqm.{k}"));
        // kmin ≤ kmax (equal is a step), both finite.
        assert_eq!(field("kmax = \"10KB\""), None);
        assert_eq!(field("kmax = \"9KB\""), bad("kmax"));
        assert_eq!(field("kmax = \"inf\""), bad("kmax"));
        let inf_kmin: Cfg = toml::from_str("kmin = \"inf\"\nkmax = \"10KB\"\npmax = 0.5").unwrap();
        assert!(inf_kmin.validate("switch.aqm", 1500).is_err());
        // pmax in [0, 1]; the EWMA weight in (0, 1].
        for (t, ok) in [("pmax = 1.0", true), ("pmax = 1.01", false), ("pmax = -0.01", false)] {
            let c: Cfg = toml::from_str(&format!("kmin = \"10KB\"\nkmax = \"20KB\"\n{t}")).unwrap();
            assert_eq!(c.validate("switch.aqm", 1500).is_ok(), ok, "{t}");
        }
        for (w, ok) in [("1.0", true), ("0.002", true), ("0.0", false), ("1.01", false), ("-0.5", false)] {
            let t = format!("kmax = \"20KB\"\naverage = {w}");
            assert_eq!(field(&t), if ok { None } else { bad("average") }, "average = {w}");
        }
        let c = cfg("kmax = \"20pkt\"\naverage = 0.25\nmark_at = \"dequeue\"");
        let p = c.build(1500).params;
        assert_eq!((p.kmin, p.kmax, p.pmax, p.weight, p.at_dequeue), (10_000, 30_000, 0.5, Some(0.25), true));
        assert_eq!(c.non_ect(), NonEct::Drop);
        let p = cfg("kmax = \"20KB\"").build(1500).params;
        assert_eq!((p.weight, p.at_dequeue), (None, false));
    }

    #[test]
    fn average_follows_slowly() {
        let mut r = Red::new(Params { kmin: 1000, kmax: 2000, pmax: 1.0, weight: Some(0.002), at_dequeue: false });
        let mut rng = crate::rng::stream(3, "red", 0);
        // A sudden large queue does not cross kmin on the average at once.
        assert_eq!(r.on_enqueue(&ctx(100_000), &mut rng), Verdict::Pass);
        assert!((r.state.avg - 200.0).abs() < 1e-9);
        for _ in 0..5000 {
            r.on_enqueue(&ctx(100_000), &mut rng);
        }
        assert_eq!(r.on_enqueue(&ctx(100_000), &mut rng), Verdict::Mark);
    }
}
