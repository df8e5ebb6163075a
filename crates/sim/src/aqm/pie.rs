//! PIE — Proportional Integral controller Enhanced (RFC 8033, Pan, Natarajan, Baker & White), in drop mode
//! or ECN-marking mode.
//!
//! A drop/mark probability `p` is updated every `tupdate` from the queue delay (§4.2) and applied to
//! arriving packets (§4.1), with a burst allowance (§4.4). The RFC's periodic timer is run lazily: every
//! enqueue and dequeue first runs each update whose time has come, in order, with the delay estimate held
//! since the last dequeue — exactly what a timer would see, since the estimate only changes at a dequeue.
//! So PIE needs no engine event and stays deterministic.
//!
//! Queue delay: the sojourn time of the last dequeued packet, and 0 when that dequeue left the queue
//! empty — aqm.md §7's "timestamp-based sojourn" option (Linux `sch_pie` with `dq_rate_estimator` off
//! does the same). It is exact for a queue under SP/DWRR, where `queue_bytes / port_rate` would overstate
//! the queue's drain rate. De-randomisation (§5.4) is not done: every decision is one independent draw.

use super::{Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::{self, Rng};
use crate::units::{Dur, Time, US};
use serde::Deserialize;

/// ECN marking is used only while p ≤ this; above it an ECT packet is dropped too (RFC 8033 §5.1).
pub const MARK_ECNTH: f64 = 0.1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Drop,
    #[default]
    Ecn,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// QDELAY_REF.
    pub target: Time,
    /// T_UPDATE.
    pub tupdate: Time,
    /// α, per second: p moves by α·(qdelay − target) with delays in seconds.
    pub alpha: f64,
    /// β, per second: p moves by β·(qdelay − qdelay_old).
    pub beta: f64,
    /// MAX_BURST.
    pub max_burst: Time,
    pub mode: Mode,
}

#[derive(Clone, Copy, Debug)]
pub struct State {
    /// drop_prob_.
    pub p: f64,
    /// The current queue delay estimate (ps).
    pub qdelay: Time,
    /// The estimate at the previous update.
    pub qdelay_old: Time,
    /// burst_allowance_ (ps).
    pub burst_allowance: Time,
    /// When the next periodic update is due.
    pub next_update: Time,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub drops: u64,
    pub marks: u64,
    pub updates: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Pie {
    pub params: Params,
    pub state: State,
    pub stats: Stats,
}

fn secs(t: Time) -> f64 {
    t as f64 / 1e12
}

impl Pie {
    pub fn new(params: Params) -> Self {
        let state = State {
            p: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: params.max_burst,
            next_update: params.tupdate,
        };
        Pie { params, state, stats: Stats::default() }
    }

    /// One periodic update with the current estimate `state.qdelay` (RFC 8033 §4.2, §4.4).
    pub fn update(&mut self) {
        let (pr, s) = (&self.params, &mut self.state);
        let (q, q_old) = (secs(s.qdelay), secs(s.qdelay_old));
        // Δ = α·(qdelay − QDELAY_REF) + β·(qdelay − qdelay_old)
        let mut d = pr.alpha * (q - secs(pr.target)) + pr.beta * (q - q_old);
        // Auto-tuning: small p moves in small steps, so light congestion is not over-corrected (§4.2).
        d /= match s.p {
            p if p < 0.000001 => 2048.0,
            p if p < 0.00001 => 512.0,
            p if p < 0.0001 => 128.0,
            p if p < 0.001 => 32.0,
            p if p < 0.01 => 8.0,
            p if p < 0.1 => 2.0,
            _ => 1.0,
        };
        // At p ≥ 10 % no single step raises p by more than 2 % (§4.2).
        if s.p >= 0.1 && d > 0.02 {
            d = 0.02;
        }
        s.p = (s.p + d).clamp(0.0, 1.0);
        // An idle queue decays p exponentially rather than linearly (§4.2).
        if s.qdelay == 0 && s.qdelay_old == 0 {
            s.p *= 0.98;
        }
        // Burst allowance (§4.4, and the RFC's reference code): spent by one T_UPDATE per update, and
        // refilled when congestion is gone — p is 0 and both this and the previous delay sample are below
        // half the target.
        s.burst_allowance = s.burst_allowance.saturating_sub(pr.tupdate);
        let half = pr.target / 2;
        if s.p == 0.0 && s.qdelay < half && s.qdelay_old < half {
            s.burst_allowance = pr.max_burst;
        }
        s.qdelay_old = s.qdelay;
        self.stats.updates += 1;
    }

    /// Run every update due by `now` (the RFC's T_UPDATE timer, driven by packet events).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        while now >= self.state.next_update {
            let s = &self.state;
            if s.p == 0.0 && s.qdelay == 0 && s.qdelay_old == 0 {
                // A fixed point: every further update leaves p at 0 and refills the burst allowance
                // (delays are low); jump to the last one due.
                let n = (now - s.next_update) / self.params.tupdate + 1;
                self.state.burst_allowance = self.params.max_burst;
                self.state.next_update += n * self.params.tupdate;
                self.stats.updates += n;
                return;
            }
            self.update();
            self.state.next_update += self.params.tupdate;
        }
    }

    /// An arriving packet; `ctx.queue_bytes` excludes it (RFC 8033 §4.1, §4.4, §5.1).
    #[inline]
    pub fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        self.advance(ctx.now);
        let (pr, s) = (&self.params, &self.state);
        let half = pr.target / 2;
        if s.burst_allowance > 0 {
            return Verdict::Pass;
        }
        // Safeguards that keep PIE work-conserving: low recent delay with moderate p, or a queue of at most
        // two packets (§4.1).
        if (s.qdelay_old < half && s.p < 0.2) || ctx.queue_bytes <= 2 * ctx.mtu as u64 {
            return Verdict::Pass;
        }
        if !(s.p > 0.0 && (s.p >= 1.0 || rng::unit(rng) < s.p)) {
            return Verdict::Pass;
        }
        if pr.mode == Mode::Ecn && s.p <= MARK_ECNTH {
            self.stats.marks += 1;
            Verdict::Mark
        } else {
            self.stats.drops += 1;
            Verdict::Drop
        }
    }

    /// A departure gives the delay estimate: this packet's sojourn, or 0 if it left the queue empty.
    #[inline]
    pub fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time) -> Verdict {
        self.advance(ctx.now);
        self.state.qdelay = if ctx.queue_bytes == 0 { 0 } else { sojourn };
        Verdict::Pass
    }
}

impl Hooks for Pie {
    #[inline]
    fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        Pie::on_enqueue(self, ctx, rng)
    }
    #[inline]
    fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, _rng: &mut Rng) -> Verdict {
        Pie::on_dequeue(self, ctx, sojourn)
    }
}

/// `aqm = { kind = "pie", target, tupdate, alpha, beta, max_burst, mode = "ecn"|"drop", non_ect }`.
///
/// Defaults, aqm.md §7: `target` = `tupdate` = 20 µs (its datacenter values); `alpha` = 0.125 and
/// `beta` = 1.25 per second, the RFC's values unchanged; `max_burst` = 200 µs, the RFC's 150 ms scaled by
/// the same factor as target and T_UPDATE (15 ms → 20 µs, ÷ 750) — the spec gives no datacenter value.
/// Kept per second, α and β make p slow against µs-scale delay errors (a 20 µs error moves p by 2.5e-6 per
/// update before the table's division): long flows settle over a few hundred ms; raise them for faster control.
/// `mode = "ecn"` marks ECT packets while p ≤ 10 % (RFC §5.1); drop-capable: by default a Not-ECT packet it
/// would mark is dropped (`non_ect = "drop"`, as CoDel).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_target")]
    pub tupdate: Dur,
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    #[serde(default = "default_beta")]
    pub beta: f64,
    #[serde(default = "default_max_burst")]
    pub max_burst: Dur,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub non_ect: Option<NonEct>,
}

fn default_target() -> Dur {
    Dur(20 * US)
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_max_burst() -> Dur {
    Dur(200 * US)
}

impl Config for Cfg {
    type Algo = Pie;

    fn validate(&self, field: &str, _mtu: u64) -> Result<(), ConfigError> {
        if self.target.0 == 0 {
            return Err(ConfigError::new(format!("{field}.target"), "must be greater than zero"));
        }
        if self.tupdate.0 == 0 {
            return Err(ConfigError::new(format!("{field}.tupdate"), "must be greater than zero"));
        }
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ConfigError::new(format!("{field}.{k}"), "must be a finite number ≥ 0 (per second)"));
            }
        }
        Ok(())
    }
    fn build(&self, _mtu: u64) -> Pie {
        Pie::new(Params {
            target: self.target.0,
            tupdate: self.tupdate.0,
            alpha: self.alpha,
            beta: self.beta,
            max_burst: self.max_burst.0,
            mode: self.mode,
        })
    }
    fn non_ect(&self) -> NonEct {
        self.non_ect.unwrap_or(NonEct::Drop)
    }
    fn drops(&self) -> bool {
        self.mode == Mode::Drop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: Time, q: u64) -> QueueCtx {
        QueueCtx { now, queue_bytes: q, queue_pkts: 0, port_bytes: q, port_rate: 10_000_000_000, mtu: 1500 }
    }

    fn pie(mode: Mode) -> Pie {
        let cfg: Cfg = toml::from_str(&format!("mode = \"{}\"", if mode == Mode::Ecn { "ecn" } else { "drop" })).unwrap();
        cfg.build(1500)
    }

    /// A PIE that judges each arrival on `p` alone: no burst allowance left, no update due, and the last
    /// delay sample `qdelay_old` (which the low-delay safeguard reads).
    fn drawing(mode: Mode, qdelay_old: Time, p: f64) -> Pie {
        let mut a = pie(mode);
        a.state.burst_allowance = 0;
        a.state.next_update = u64::MAX;
        (a.state.qdelay_old, a.state.p) = (qdelay_old, p);
        a
    }

    #[test]
    fn defaults() {
        let p = pie(Mode::Ecn).params;
        assert_eq!((p.target, p.tupdate, p.max_burst), (20 * US, 20 * US, 200 * US));
        assert_eq!((p.alpha, p.beta, p.mode), (0.125, 1.25, Mode::Ecn));
    }

    #[test]
    fn bad_keys_name_the_field() {
        let c: Cfg = toml::from_str("tupdate = \"0us\"").unwrap();
        assert_eq!(c.validate("switch.aqm", 1500).unwrap_err().field, "switch.aqm.tupdate");
        let c: Cfg = toml::from_str("alpha = -1.0").unwrap();
        assert_eq!(c.validate("switch.aqm", 1500).unwrap_err().field, "switch.aqm.alpha");
        assert!(toml::from_str::<Cfg>("interval = \"1ms\"").is_err());
        assert!(toml::from_str::<Cfg>("target = 20").is_err());
        let c: Cfg = toml::from_str("mode = \"drop\"").unwrap();
        assert_eq!((c.build(1500).params.mode, c.non_ect(), c.drops()), (Mode::Drop, NonEct::Drop, true));
        assert!(!toml::from_str::<Cfg>("mode = \"ecn\"").unwrap().drops());
    }

    #[test]
    fn probability_follows_the_rfc_update_through_every_scaling_band() {
        let mut a = pie(Mode::Ecn);
        // The RFC's update by hand (delays in seconds, target 20 µs, α = 0.125, β = 1.25), with the divisor
        // the §4.2 table gives for the p before each step written out; a wrong or missing table fails.
        // (qdelay µs, divisor)
        let steps: [(u64, f64); 14] = [
            (100, 2048.0),    // p = 0 → 6.59e-8
            (100, 2048.0),    // p < 1e-6, only the α term → 7.08e-8
            (10_000, 2048.0), // the β term of a 9.9 ms rise → 6.72e-6
            (10_000, 512.0),  // 1e-6 ≤ p < 1e-5 → 9.16e-6
            (10_000, 512.0),  // → 1.160e-5
            (50_000, 128.0),  // 1e-5 ≤ p < 1e-4, β of a 40 ms rise → 4.51e-4
            (50_000, 32.0),   // 1e-4 ≤ p < 1e-3 → 6.46e-4
            (200_000, 32.0),  // → 7.29e-3
            (200_000, 8.0),   // 1e-3 ≤ p < 1e-2 → 1.041e-2
            (200_000, 2.0),   // 1e-2 ≤ p < 0.1 → 2.29e-2
            (200_000, 2.0),   // → 3.54e-2
            (900_000, 2.0),   // β of a 0.7 ms rise → 0.5292
            (900_000, 1.0),   // p ≥ 0.1: Δ = 0.1125 capped at 0.02 → 0.5492
            (5, 1.0),         // the delay falls below target: Δ = −1.1265, p clamps at 0
        ];
        let (mut p, mut old) = (0.0f64, 0.0f64);
        for (i, &(q_us, div)) in steps.iter().enumerate() {
            let q = q_us as f64 * 1e-6;
            let mut d = (0.125 * (q - 20e-6) + 1.25 * (q - old)) / div;
            if p >= 0.1 && d > 0.02 {
                d = 0.02;
            }
            p = (p + d).clamp(0.0, 1.0);
            old = q;
            a.state.qdelay = q_us * US;
            a.update();
            assert!((a.state.p - p).abs() <= 1e-12 * p.max(1e-9), "step {i}: {} vs {p}", a.state.p);
        }
        // The same values written out (from the comments' arithmetic): one per band and the capped step.
        let lit = [(2, 6.722412109375e-6), (4, 1.1595458984375e-5), (5, 4.5102905273437495e-4), (7, 7.286810302734375e-3), (8, 1.0411497802734374e-2), (11, 0.5291577478027344), (12, 0.5491577478027344)];
        let mut c = pie(Mode::Ecn);
        for (i, &(q_us, _)) in steps.iter().enumerate() {
            c.state.qdelay = q_us * US;
            c.update();
            if let Some(&(_, want)) = lit.iter().find(|(k, _)| *k == i) {
                assert!((c.state.p - want).abs() <= 1e-12 * want, "step {i}: {} vs {want}", c.state.p);
            }
        }
        // Spot values computed by hand.
        let mut b = pie(Mode::Ecn);
        b.state.qdelay = 100 * US;
        b.update();
        // (0.125·80e-6 + 1.25·100e-6) / 2048 = 1.35e-4 / 2048
        assert!((b.state.p - 6.591796875e-8).abs() < 1e-20, "{}", b.state.p);
        b.update();
        // + 0.125·80e-6 / 2048 = 4.8828125e-9
        assert!((b.state.p - 7.080078125e-8).abs() < 1e-20, "{}", b.state.p);
        // Without the table the first step alone would give 1.35e-4.
        assert_eq!(a.state.p, 0.0);
    }

    #[test]
    fn each_scaling_band_starts_at_its_lower_bound() {
        // RFC 8033 §4.2: `if (drop_prob_ < 0.000001) p /= 2048` and so on — strict, so a p of exactly a
        // band's bound takes the next band's divisor. A steady 1 ms above target: Δ = α · 1e-3 = 1.25e-4.
        for (p0, div) in [(1e-6, 512.0), (1e-5, 128.0), (1e-4, 32.0), (1e-3, 8.0), (1e-2, 2.0), (0.1, 1.0)] {
            let mut a = pie(Mode::Ecn);
            a.state.p = p0;
            a.state.qdelay = 1020 * US;
            a.state.qdelay_old = 1020 * US;
            a.update();
            let want = p0 + 1.25e-4 / div;
            assert!((a.state.p - want).abs() <= 1e-12 * want, "p = {p0}: {} vs {want}", a.state.p);
        }
    }

    #[test]
    fn idle_queue_decays_p_and_cap_at_high_p() {
        let mut a = pie(Mode::Ecn);
        a.state.p = 0.5;
        a.update(); // qdelay = qdelay_old = 0: Δ = −2.5e-6 then ×0.98
        assert!((a.state.p - (0.5 - 2.5e-6) * 0.98).abs() < 1e-15, "{}", a.state.p);
        a.state.qdelay = 100_000 * US; // Δ = 0.0125 + 0.125 > 0.02 at p ≥ 0.1: capped
        let before = a.state.p;
        a.update();
        assert!((a.state.p - (before + 0.02)).abs() < 1e-15);
    }

    #[test]
    fn updates_run_lazily_on_packet_events() {
        let mut a = pie(Mode::Ecn);
        // A dequeue at 10 µs leaves a 100 µs sojourn as the estimate; no update is due yet.
        a.on_dequeue(&ctx(10 * US, 50_000), 100 * US);
        assert_eq!(a.stats.updates, 0);
        // An enqueue at 65 µs runs the updates due at 20, 40 and 60 µs, all with that estimate.
        a.on_enqueue(&ctx(65 * US, 50_000), &mut rng::stream(1, "t", 0));
        assert_eq!(a.stats.updates, 3);
        let mut b = pie(Mode::Ecn);
        for _ in 0..3 {
            b.state.qdelay = 100 * US;
            b.update();
        }
        assert_eq!(a.state.p, b.state.p);
        assert_eq!(a.state.next_update, 80 * US);
        // A long idle period: p decays to 0 and the rest is skipped in one step.
        a.on_dequeue(&ctx(66 * US, 0), 1 * US);
        a.advance(1_000_000 * US);
        assert_eq!(a.state.p, 0.0);
        assert_eq!(a.stats.updates, 1_000_000 / 20);
        // The jump lands on the first update after `now` (the one at exactly 1 s ran).
        assert_eq!(a.state.next_update, 1_000_020 * US);
        // Not a fixed point while the previous sample was high: that update spends the allowance and, with
        // the old sample at or above target/2, does not refill it.
        let mut c = pie(Mode::Ecn);
        c.state.burst_allowance = 0;
        (c.state.qdelay, c.state.qdelay_old) = (0, 30 * US);
        c.advance(20 * US);
        assert_eq!((c.stats.updates, c.state.p, c.state.burst_allowance), (1, 0.0, 0));
    }

    #[test]
    fn burst_allowance_lets_the_first_max_burst_through() {
        let mut rng = rng::stream(7, "pie", 0);
        for mode in [Mode::Ecn, Mode::Drop] {
            let mut a = pie(mode);
            a.state.p = 0.05; // well above 0, below mark_ecnth
            let mut first = None;
            // A packet every µs against a deep queue with a 100 µs sojourn.
            for t in 0..1000u64 {
                let now = t * US;
                a.on_dequeue(&ctx(now, 100_000), 100 * US);
                a.state.p = 0.05;
                let v = a.on_enqueue(&ctx(now, 100_000), &mut rng);
                if v != Verdict::Pass && first.is_none() {
                    first = Some(now);
                }
                let want = if mode == Mode::Ecn { Verdict::Mark } else { Verdict::Drop };
                assert!(v == Verdict::Pass || v == want, "{v:?}");
            }
            // The allowance (200 µs) is spent by the tenth update, at 200 µs; none before.
            let first = first.unwrap();
            assert!(first >= 200 * US && first < 400 * US, "{first}");
            assert!(a.stats.drops + a.stats.marks > 20, "{:?}", a.stats);
        }
    }

    #[test]
    fn burst_allowance_refills_at_an_update_once_two_samples_are_low() {
        // RFC 8033's reference code: at an update, after spending T_UPDATE, the allowance refills when
        // p = 0 and both this sample and the previous one are below target/2 (10 µs); an arrival never
        // refills it.
        let mut rng = rng::stream(7, "pie", 3);
        let mut a = pie(Mode::Drop);
        a.state.next_update = u64::MAX;
        a.state.burst_allowance = 0;
        (a.state.p, a.state.qdelay, a.state.qdelay_old) = (0.0, 5 * US, 30 * US);
        a.on_enqueue(&ctx(0, 100_000), &mut rng);
        assert_eq!(a.state.burst_allowance, 0, "an arrival does not refill");
        a.update();
        assert_eq!((a.state.p, a.state.burst_allowance), (0.0, 0), "the previous sample was high");
        a.update();
        assert_eq!(a.state.burst_allowance, 200 * US, "two low samples and p = 0: refilled");
        a.update();
        assert_eq!(a.state.burst_allowance, 200 * US, "refilled after being spent by one T_UPDATE");
        a.state.p = 0.01;
        a.update();
        assert_eq!(a.state.burst_allowance, 180 * US, "p > 0: only spent");
        // Below target/2 is strict: a sample of exactly 10 µs, now or the one before, does not refill (both
        // pairs keep p at 0, so only the delay condition can refuse it).
        for (q, q_old) in [(10 * US, 19 * US / 2), (5 * US, 10 * US)] {
            (a.state.p, a.state.qdelay, a.state.qdelay_old, a.state.burst_allowance) = (0.0, q, q_old, 0);
            a.update();
            assert_eq!((a.state.p, a.state.burst_allowance), (0.0, 0), "samples {q} and {q_old} ps");
        }
    }

    #[test]
    fn safeguards_pass_at_low_delay_with_small_p_and_at_a_short_queue() {
        let mut rng = rng::stream(7, "pie", 1);
        // qdelay_old below target/2 (10 µs) with p < 20 %: never dropped, though p = 0.19.
        let mut a = drawing(Mode::Drop, 9 * US, 0.19);
        a.state.qdelay = 9 * US;
        for t in 0..1000 {
            assert_eq!(a.on_enqueue(&ctx(t, 100_000), &mut rng), Verdict::Pass);
        }
        // The same delay with p ≥ 20 % drops.
        a.state.p = 0.5;
        assert!((0..1000).any(|t| a.on_enqueue(&ctx(t, 100_000), &mut rng) == Verdict::Drop));
        // Above target/2 with small p drops ...
        a.state.qdelay_old = 30 * US;
        a.state.p = 0.19;
        assert!((0..1000).any(|t| a.on_enqueue(&ctx(t, 100_000), &mut rng) == Verdict::Drop));
        // ... but never with two packets or fewer queued.
        a.state.p = 1.0;
        for t in 0..1000 {
            assert_eq!(a.on_enqueue(&ctx(t, 3000), &mut rng), Verdict::Pass);
        }
        assert_eq!(a.on_enqueue(&ctx(0, 3001), &mut rng), Verdict::Drop);
    }

    #[test]
    fn each_arrival_is_dropped_with_probability_p_and_draws_only_when_p_is_strictly_between_0_and_1() {
        // p = 5 %: 20,000 arrivals drop 1,000 ± 31 (one σ); ± 130 is over four σ.
        let mut a = drawing(Mode::Drop, 100 * US, 0.05);
        let mut rng = rng::stream(7, "pie", 4);
        let drops = (0..20_000).filter(|&t| a.on_enqueue(&ctx(t, 100_000), &mut rng) == Verdict::Drop).count();
        assert!((870..=1130).contains(&drops), "{drops}");
        // At p = 0 and p = 1 the verdict is certain: no draw, so the switch's stream is left as it was.
        for (p, want) in [(0.0, Verdict::Pass), (1.0, Verdict::Drop)] {
            a.state.p = p;
            assert_eq!(rng::without_draw(&format!("p = {p}"), |r| a.on_enqueue(&ctx(0, 100_000), r)), want);
        }
    }

    #[test]
    fn the_low_delay_safeguard_is_strict_in_delay_and_in_p() {
        // RFC 8033 §4.1: `qdelay_old < QDELAY_REF/2 && drop_prob < 0.2` lets a packet through. At exactly
        // target/2, or at exactly p = 20 %, it does not: the packet is drawn like any other (about one in
        // five dropped).
        let mut rng = rng::stream(7, "pie", 6);
        for (q_old, p) in [(10 * US, 0.19), (9 * US, 0.2)] {
            let mut a = drawing(Mode::Drop, q_old, p);
            let drops = (0..1000).filter(|&t| a.on_enqueue(&ctx(t, 100_000), &mut rng) == Verdict::Drop).count();
            assert!(drops > 100, "qdelay_old {q_old} ps, p {p}: {drops}");
        }
    }

    #[test]
    fn ecn_mode_drops_above_mark_ecnth() {
        let mut rng = rng::stream(7, "pie", 2);
        let mut a = drawing(Mode::Ecn, 100 * US, 1.0);
        assert_eq!(a.on_enqueue(&ctx(0, 100_000), &mut rng), Verdict::Drop);
        a.state.p = 0.1 - 1e-9;
        let v: Vec<_> = (0..200).map(|t| a.on_enqueue(&ctx(t, 100_000), &mut rng)).collect();
        assert!(v.contains(&Verdict::Mark) && !v.contains(&Verdict::Drop));
    }
}
