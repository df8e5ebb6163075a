//! ECN♯ (Zhang, Bai, Chen, "Enabling ECN for Datacenter Networks With RTT Variations", IEEE TCC 2022).
//!
//! Decided at dequeue. A packet is marked when either part says so:
//! - instantaneous: its sojourn time exceeds `ins_target` (§3.2, T = λ·RTT with a high-percentile RTT);
//! - persistent (Algorithm 1): once the sojourn time has stayed at or above `pst_target` for more than
//!   `pst_interval` (`now > first_above_time + pst_interval`), mark one packet, then the first packet
//!   after `marking_next`, which advances by `pst_interval / marking_count` per mark (the paper's linear
//!   law), or — as the authors' public ns-3 code does — is set to `now + pst_interval / √count` with the
//!   count restarting at 1 (`control_law = "sqrt"`). Every comparison is strict, as printed.
//!
//! `signal = "queue"` is the queue-length variant of §3.5: the same rules on the bytes left in the queue
//! at dequeue, with the two targets in bytes. `division = "tofino"` reproduces the hardware prototype:
//! Algorithm 2's emulated 32-bit clock in 1.024 µs units and Algorithm 3's 16-entry lookup-table division.

use super::{Config, Hooks, NonEct, QueueCtx, TimeOrSize, Verdict};
use crate::config::ConfigError;
use crate::units::{Dur, Size};
use serde::Deserialize;
use crate::units::Time;
use crate::rng::{self, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Sojourn time (ps).
    #[default]
    Sojourn,
    /// Bytes in the queue after the departing packet.
    Queue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ControlLaw {
    /// marking_next += pst_interval / marking_count (Algorithm 1).
    #[default]
    Linear,
    /// marking_next = now + pst_interval / √count (the public ns-3 code).
    Sqrt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Division {
    #[default]
    Exact,
    /// Algorithms 2 and 3 of the paper.
    Tofino,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Instantaneous threshold: ps (sojourn) or bytes (queue).
    pub ins_target: u64,
    /// Persistent target: ps (sojourn) or bytes (queue).
    pub pst_target: u64,
    pub pst_interval: Time,
    /// Probabilistic instantaneous marking (DCQCN, §3.5): (ins_max, pmax); `None`: the cut-off at
    /// `ins_target`.
    pub ins_ramp: Option<(u64, f64)>,
    pub signal: Signal,
    pub control_law: ControlLaw,
    pub division: Division,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    /// `None` plays the role of the paper's `first_above_time = 0`.
    pub first_above_time: Option<Time>,
    pub marking_state: bool,
    pub marking_count: u32,
    pub marking_next: Time,
    /// Algorithm 2's registers.
    clock_low: u64,
    clock_high: u64,
    clock_started: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub instantaneous_marks: u64,
    pub persistent_marks: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct EcnSharp {
    pub params: Params,
    pub state: State,
    pub stats: Stats,
}

/// Ticks of the emulated Tofino clock: 2¹⁰ ns.
const TOFINO_TICK: Time = 1024 * 1000;

impl EcnSharp {
    pub fn new(params: Params) -> Self {
        EcnSharp { params, state: State::default(), stats: Stats::default() }
    }

    /// now() in the algorithm's clock: picoseconds, or Algorithm 2's emulated 32-bit time.
    fn clock(&mut self, now: Time) -> u64 {
        match self.params.division {
            Division::Exact => now,
            Division::Tofino => {
                // tmp = lower_32bits(ns); time_low = tmp >> 10 (22 bits); a wrap of the low part bumps the
                // high register. The paper prints `time_low ≤ register_low` as the wrap test, which would
                // count two packets in the same 1.024 µs as a wrap; we use `<`.
                let ns = now / 1000;
                let low = (ns & 0xFFFF_FFFF) >> 10;
                if self.state.clock_started && low < self.state.clock_low {
                    self.state.clock_high += 1;
                }
                self.state.clock_started = true;
                self.state.clock_low = low;
                (self.state.clock_high << 22) + low
            }
        }
    }

    /// pst_interval in clock units.
    fn interval(&self) -> u64 {
        match self.params.division {
            Division::Exact => self.params.pst_interval,
            Division::Tofino => self.params.pst_interval.div_ceil(TOFINO_TICK),
        }
    }

    /// pst_interval / n in clock units, exactly or by Algorithm 3.
    fn divide(&self, n: u32) -> u64 {
        let iv = self.interval();
        match self.params.division {
            Division::Exact => iv / n as u64,
            Division::Tofino => tofino_divide(iv, n),
        }
    }

    fn sqrt_divide(&self, n: u32) -> u64 {
        (self.interval() as f64 / libm::sqrt(n as f64)) as u64
    }

    /// Algorithm 1, IsPersistentQueueBuildups.
    fn persistent_queue(&mut self, value: u64, now: u64) -> bool {
        if value < self.params.pst_target {
            self.state.first_above_time = None;
            return false;
        }
        match self.state.first_above_time {
            None => {
                self.state.first_above_time = Some(now);
                false
            }
            Some(t) => now > t + self.interval(),
        }
    }

    /// Algorithm 1, ShouldPersistentMark.
    fn should_persistent_mark(&mut self, value: u64, now: u64) -> bool {
        let detected = self.persistent_queue(value, now);
        let s = &mut self.state;
        if s.marking_state {
            if !detected {
                s.marking_state = false;
                return false;
            }
            if now > s.marking_next {
                s.marking_count += 1;
                match self.params.control_law {
                    ControlLaw::Linear => {
                        let c = s.marking_count;
                        let step = self.divide(c);
                        self.state.marking_next += step;
                    }
                    ControlLaw::Sqrt => {
                        let c = s.marking_count;
                        self.state.marking_next = now + self.sqrt_divide(c);
                    }
                }
                return true;
            }
            false
        } else {
            if detected {
                let iv = self.interval();
                let s = &mut self.state;
                s.marking_state = true;
                s.marking_count = 1;
                s.marking_next = now + iv;
                return true;
            }
            false
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, rng: &mut Rng) -> Verdict {
        let value = match self.params.signal {
            Signal::Sojourn => sojourn,
            Signal::Queue => ctx.queue_bytes,
        };
        let now = self.clock(ctx.now);
        // Both parts run on every packet: the persistent state must see every sojourn time.
        let persistent = self.should_persistent_mark(value, now);
        let instantaneous = match self.params.ins_ramp {
            None => value > self.params.ins_target,
            Some((max, pmax)) => {
                value > max
                    || (value > self.params.ins_target
                        && rng::unit(rng) < pmax * (value - self.params.ins_target) as f64 / (max - self.params.ins_target) as f64)
            }
        };
        if instantaneous {
            self.stats.instantaneous_marks += 1;
        } else if persistent {
            self.stats.persistent_marks += 1;
        }
        if instantaneous || persistent {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

/// Algorithm 3: pst_interval / n with the Tofino math unit. n is normalised to a mantissa m in [8, 15]
/// (n ≈ m·2^e, e = ⌊log₂ n⌋ − 3, the low bits dropped as the hardware shift does); a 16-entry table holds
/// ⌈interval / m⌉ for m = 8…15 as 8-bit values scaled by 2^s so that they fit; the result is the entry
/// shifted back by s − e.
pub fn tofino_divide(interval: u64, n: u32) -> u64 {
    assert!(n >= 1);
    let shift_val = 31 - n.leading_zeros() as i64; // ⌊log₂ n⌋
    let table_offset = 3i64;
    let m = if shift_val >= table_offset {
        (n >> (shift_val - table_offset)) as u64
    } else {
        (n << (table_offset - shift_val)) as u64
    };
    // scale s: the smallest shift that fits ⌈interval / 8⌉ into the table's 8-bit entries.
    let mut s = 0u32;
    while interval.div_ceil(8) >> s > 255 {
        s += 1;
    }
    let entry = interval.div_ceil(m) >> s; // 8-bit table value
    let e = shift_val - table_offset; // n ≈ m · 2^e
    let v = entry << s;
    if e >= 0 {
        v >> e
    } else {
        v << (-e)
    }
}

impl Hooks for EcnSharp {
    #[inline]
    fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, rng: &mut Rng) -> Verdict {
        EcnSharp::on_dequeue(self, ctx, sojourn, rng)
    }
}

/// `aqm = { kind = "ecn_sharp", ins_target, pst_target, pst_interval, … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub ins_target: TimeOrSize,
    pub pst_target: TimeOrSize,
    pub pst_interval: Dur,
    /// Probabilistic instantaneous part for DCQCN (§3.5): with `ins_max` and `ins_pmax`, a packet is
    /// marked with probability rising linearly from 0 at `ins_target` to `ins_pmax` at `ins_max`, and
    /// always above `ins_max` (RED's ramp on the instantaneous signal).
    #[serde(default)]
    pub ins_max: Option<TimeOrSize>,
    #[serde(default)]
    pub ins_pmax: Option<f64>,
    #[serde(default)]
    pub signal: Signal,
    #[serde(default)]
    pub control_law: ControlLaw,
    #[serde(default)]
    pub division: Division,
    #[serde(default)]
    pub non_ect: NonEct,
}

impl Config for Cfg {
    type Algo = EcnSharp;

    fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
        let want_time = self.signal == Signal::Sojourn;
        match (self.ins_max, self.ins_pmax) {
            (Some(_), None) | (None, Some(_)) => {
                return Err(ConfigError::new(
                    format!("{field}.{}", if self.ins_max.is_some() { "ins_pmax" } else { "ins_max" }),
                    "the probabilistic instantaneous part needs both ins_max and ins_pmax",
                ))
            }
            _ => {}
        }
        if let Some(p) = self.ins_pmax {
            if !(p > 0.0 && p <= 1.0) {
                return Err(ConfigError::new(format!("{field}.ins_pmax"), "must be a probability in (0, 1]"));
            }
        }
        let named = [("ins_target", Some(self.ins_target)), ("pst_target", Some(self.pst_target)), ("ins_max", self.ins_max)];
        for (k, v) in named.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))) {
            match (want_time, v) {
                (true, TimeOrSize::Size(_)) => {
                    return Err(ConfigError::new(format!("{field}.{k}"), "with signal = \"sojourn\" this is a time, e.g. \"200us\""))
                }
                (false, TimeOrSize::Time(_)) => {
                    return Err(ConfigError::new(format!("{field}.{k}"), "with signal = \"queue\" this is a size, e.g. \"100KB\""))
                }
                (_, TimeOrSize::Size(Size::Inf)) => return Err(ConfigError::new(format!("{field}.{k}"), "must be finite")),
                _ => {}
            }
        }
        if let Some(m) = self.ins_max {
            if m.value(mtu) <= self.ins_target.value(mtu) {
                return Err(ConfigError::new(format!("{field}.ins_max"), "must be above ins_target"));
            }
        }
        if self.pst_interval.0 == 0 {
            return Err(ConfigError::new(format!("{field}.pst_interval"), "must be greater than zero"));
        }
        Ok(())
    }

    fn build(&self, mtu: u64) -> EcnSharp {
        EcnSharp::new(Params {
            ins_target: self.ins_target.value(mtu),
            pst_target: self.pst_target.value(mtu),
            pst_interval: self.pst_interval.0,
            ins_ramp: match (self.ins_max, self.ins_pmax) {
                (Some(m), Some(p)) => Some((m.value(mtu), p)),
                _ => None,
            },
            signal: self.signal,
            control_law: self.control_law,
            division: self.division,
        })
    }

    fn non_ect(&self) -> NonEct {
        self.non_ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn sharp(law: ControlLaw) -> EcnSharp {
        EcnSharp::new(Params {
            ins_target: 200 * US,
            pst_target: 85 * US,
            pst_interval: 200 * US,
            ins_ramp: None,
            signal: Signal::Sojourn,
            control_law: law,
            division: Division::Exact,
        })
    }

    fn ctx(now: Time) -> QueueCtx {
        QueueCtx { now, queue_bytes: 0, queue_pkts: 0, port_bytes: 0, port_rate: 10_000_000_000, mtu: 1500 }
    }

    /// Feed (time, sojourn) pairs; return the times of marked packets.
    fn marks(a: &mut EcnSharp, seq: &[(Time, Time)]) -> Vec<Time> {
        seq.iter().filter(|&&(t, s)| a.on_dequeue(&ctx(t), s, &mut crate::rng::stream(1, "t", 0)) == Verdict::Mark).map(|&(t, _)| t).collect()
    }

    #[test]
    fn instantaneous_marking_is_strictly_above_ins_target() {
        let mut a = sharp(ControlLaw::Linear);
        assert_eq!(marks(&mut a, &[(1, 200 * US), (2, 200 * US + 1), (3, 10 * US)]), vec![2]);
        assert_eq!((a.stats.instantaneous_marks, a.stats.persistent_marks), (1, 0));
    }

    #[test]
    fn persistent_marks_follow_algorithm_1_linear_law() {
        let mut a = sharp(ControlLaw::Linear);
        // One packet every 10 µs with a sojourn of 100 µs (above pst_target, below ins_target),
        // starting at t = 1000 µs: first_above_time = 1000 µs.
        let seq: Vec<(Time, Time)> = (0..200).map(|k| ((1000 + 10 * k) * US + 1, 100 * US)).collect();
        let got = marks(&mut a, &seq);
        let fat = 1000 * US + 1;
        let iv = 200 * US;
        // First mark t0: the first packet strictly after first_above_time + interval.
        let first_after = |x: Time| seq.iter().map(|p| p.0).find(|&t| t > x).unwrap();
        let t0 = first_after(fat + iv);
        assert_eq!(got[0], t0);
        // Then the first packet strictly after t0 + I, then I/2 later, then I/3 later, … (one mark per
        // packet at most: once the schedule runs ahead of the packets every packet is marked).
        let mut next = t0 + iv;
        let mut c = 1;
        let mut expect = vec![t0];
        for &(t, _) in seq.iter().filter(|p| p.0 > t0) {
            if t > next {
                expect.push(t);
                c += 1;
                next += iv / c;
            }
        }
        assert_eq!(got.len(), expect.len());
        assert!(got == expect, "first differences: {:?}", got.iter().zip(&expect).find(|(a, b)| a != b));
        // The schedule itself: 1210, 1420 (+200), 1520 (+100 → 1510), 1580 (+66.7 → 1576.7) µs, …
        assert_eq!(&got[..4], &[1210 * US + 1, 1420 * US + 1, 1520 * US + 1, 1580 * US + 1]);
        assert_eq!(a.stats.persistent_marks as usize, got.len());
    }

    #[test]
    fn everything_resets_when_sojourn_drops_below_pst_target() {
        let mut a = sharp(ControlLaw::Linear);
        let mut seq: Vec<(Time, Time)> = (0..60).map(|k| (k * 10 * US, 100 * US)).collect();
        seq.push((600 * US, 50 * US)); // below pst_target: reset
        seq.extend((61..100).map(|k| (k * 10 * US, 100 * US)));
        let got = marks(&mut a, &seq);
        // Before the reset: first mark at the first packet after 0 + 200 µs, i.e. 210 µs.
        assert_eq!(got[0], 210 * US);
        // After the reset at 600 µs the detection restarts: first_above_time = 610 µs, next first mark at
        // the first packet strictly after 810 µs.
        let after: Vec<Time> = got.iter().cloned().filter(|&t| t > 600 * US).collect();
        assert_eq!(after[0], 820 * US);
        // Still above pst_target at the end: marking, and the count restarted at the reset (one per mark
        // since 820 µs, not carried over from before).
        assert!(a.state.marking_state);
        assert_eq!(a.state.marking_count as usize, after.len());
    }

    #[test]
    fn a_sojourn_at_pst_target_is_not_below_it() {
        // Algorithm 1 resets only on a value below pst_target: a sojourn of exactly 85 µs keeps the
        // detection going, so the first persistent mark is the first packet after 0 + 200 µs.
        let mut a = sharp(ControlLaw::Linear);
        let seq: Vec<(Time, Time)> = (0..30).map(|k| (k * 10 * US, 85 * US)).collect();
        assert_eq!(marks(&mut a, &seq)[0], 210 * US);
    }

    #[test]
    fn sqrt_law_of_the_public_code() {
        let mut a = sharp(ControlLaw::Sqrt);
        // 1.5 ms of packets, so that the law's spacing shows (at 300 µs there was only the first mark).
        let seq: Vec<(Time, Time)> = (0..1500).map(|k| (k * US, 100 * US)).collect();
        let got = marks(&mut a, &seq);
        // t0 = 201 µs; the first packet after 201 + 200 µs; then after now + 200/√2 µs, then + 200/√3 µs
        // from that mark, …: 402, 543.4 → 544, 659.5 → 660, 760 → 761 µs.
        assert_eq!(&got[..5], &[201 * US, 402 * US, 544 * US, 660 * US, 761 * US]);
        let iv = 200.0 * US as f64;
        let mut expect = vec![201 * US];
        let mut next = 201 * US + 200 * US;
        let mut c = 1;
        for &(t, _) in &seq {
            if t > next && t > expect[expect.len() - 1] {
                c += 1;
                expect.push(t);
                next = t + (iv / (c as f64).sqrt()) as Time;
            }
        }
        assert_eq!(got, expect);
    }

    #[test]
    fn queue_length_variant() {
        let mut a = EcnSharp::new(Params {
            ins_target: 200_000,
            pst_target: 30_000,
            pst_interval: 100 * US,
            ins_ramp: None,
            signal: Signal::Queue,
            control_law: ControlLaw::Linear,
            division: Division::Exact,
        });
        let mut c = ctx(0);
        c.queue_bytes = 250_000;
        assert_eq!(a.on_dequeue(&c, 0, &mut crate::rng::stream(1, "t", 0)), Verdict::Mark);
        c.queue_bytes = 50_000;
        let mut first = None;
        for k in 1..40u64 {
            c.now = k * 10 * US;
            if a.on_dequeue(&c, 0, &mut crate::rng::stream(1, "t", 0)) == Verdict::Mark && first.is_none() {
                first = Some(c.now);
            }
        }
        // first_above_time = 0 (the instantaneous packet was above pst_target too); first mark after 100 µs.
        assert_eq!(first, Some(110 * US));
    }

    #[test]
    fn tofino_division_is_close_to_exact() {
        for &iv in &[200u64, 1000, 5000] {
            for n in 1..200u32 {
                let approx = tofino_divide(iv, n) as f64;
                let exact = iv as f64 / n as f64;
                // Mantissa truncation (≤ 1/8) plus table quantisation.
                assert!(approx >= exact * 0.99 - 1.0 && approx <= exact * 1.3 + 2.0, "iv {iv} n {n}: {approx} vs {exact}");
            }
        }
        assert_eq!(tofino_divide(1000, 8), 125);
        assert_eq!(tofino_divide(1000, 1), 1000);
    }

    #[test]
    fn tofino_table_entries_use_all_eight_bits() {
        // ⌈2040 / 8⌉ = 255 fits an 8-bit entry unscaled (s = 0), so 2040 / 8 is exact; ⌈2048 / 8⌉ = 256 does
        // not (s = 1: 128 << 1), and ⌈2056 / 8⌉ = 257 shows the scaled entry's rounding (128 << 1 = 256).
        assert_eq!(tofino_divide(2040, 8), 255);
        assert_eq!(tofino_divide(2048, 8), 256);
        assert_eq!(tofino_divide(2056, 8), 256);
    }

    #[test]
    fn tofino_clock_counts_wraps() {
        let mut a = sharp(ControlLaw::Linear);
        a.params.division = Division::Tofino;
        let t1 = a.clock(4_200_000_000_000); // 4.2 s
        assert_eq!(t1, 4_200_000_000u64 >> 10);
        // Past 2³² ns (4.295 s) the low 22 bits wrap and the high register counts it.
        let t2 = a.clock(4_400_000_000_000); // 4.4 s
        let low = (4_400_000_000u64 & 0xFFFF_FFFF) >> 10;
        assert_eq!(t2, (1 << 22) + low);
        assert!(t2 > t1);
        // Two packets within the same 1.024 µs tick are not a wrap.
        assert_eq!(a.clock(4_400_000_000_100), t2);
    }

    #[test]
    fn config_keys_reach_the_algorithm_and_bad_values_are_refused() {
        let cfg = |t: &str| -> Cfg { toml::from_str(t).unwrap() };
        let field = |t: &str| cfg(t).validate("switch.aqm", 1500).unwrap_err().field;
        let sojourn = |extra: &str| format!("ins_target = \"100us\"\npst_target = \"85us\"\npst_interval = \"200us\"\n{extra}");
        // ins_pmax is a probability in (0, 1]: 0 is refused, 1 is not; each ramp key needs the other.
        assert_eq!(field(&sojourn("ins_max = \"300us\"\nins_pmax = 0.0")), "switch.aqm.ins_pmax");
        assert!(cfg(&sojourn("ins_max = \"300us\"\nins_pmax = 1.0")).validate("switch.aqm", 1500).is_ok());
        assert_eq!(field(&sojourn("ins_pmax = 0.2")), "switch.aqm.ins_max");
        // With signal = "sojourn" the targets are times, with signal = "queue" sizes, and an unlimited size
        // is refused.
        assert_eq!(field("ins_target = \"200KB\"\npst_target = \"85us\"\npst_interval = \"200us\""), "switch.aqm.ins_target");
        assert_eq!(field("signal = \"queue\"\nins_target = \"200KB\"\npst_target = \"85us\"\npst_interval = \"200us\""), "switch.aqm.pst_target");
        let e = cfg("signal = \"queue\"\nins_target = \"inf\"\npst_target = \"100KB\"\npst_interval = \"200us\"")
            .validate("switch.aqm", 1500)
            .unwrap_err();
        assert_eq!(e.field, "switch.aqm.ins_target");
        assert!(e.message.contains("finite"), "{}", e.message);
        assert_eq!(field("ins_target = \"100us\"\npst_target = \"85us\"\npst_interval = \"0us\""), "switch.aqm.pst_interval");
        // Every key reaches the algorithm.
        let c = cfg(&sojourn("ins_max = \"300us\"\nins_pmax = 0.5\nnon_ect = \"drop\"\ncontrol_law = \"sqrt\"\ndivision = \"tofino\""));
        assert!(c.validate("switch.aqm", 1500).is_ok());
        let p = c.build(1500).params;
        assert_eq!((p.ins_target, p.pst_target, p.pst_interval), (100 * US, 85 * US, 200 * US));
        assert_eq!(p.ins_ramp, Some((300 * US, 0.5)));
        assert_eq!((p.signal, p.control_law, p.division, c.non_ect()), (Signal::Sojourn, ControlLaw::Sqrt, Division::Tofino, NonEct::Drop));
        let q = cfg("signal = \"queue\"\nins_target = \"40pkt\"\npst_target = \"30KB\"\npst_interval = \"100us\"");
        assert!(q.validate("switch.aqm", 1500).is_ok());
        let p = q.build(1500).params;
        assert_eq!((p.ins_target, p.pst_target, p.ins_ramp, p.signal, q.non_ect()), (60_000, 30_000, None, Signal::Queue, NonEct::Pass));
    }

    #[test]
    fn probabilistic_instantaneous_ramp_for_dcqcn() {
        // ins_target 100 µs (kmin), ins_max 300 µs (kmax), pmax 0.5; persistent part out of reach.
        let mut a = EcnSharp::new(Params {
            ins_target: 100 * US,
            pst_target: 10_000 * US,
            pst_interval: 200 * US,
            ins_ramp: Some((300 * US, 0.5)),
            signal: Signal::Sojourn,
            control_law: ControlLaw::Linear,
            division: Division::Exact,
        });
        let mut rng = crate::rng::stream(7, "ramp", 0);
        let mut frac = |soj: Time| {
            let n = 20_000;
            (0..n).filter(|&k| a.on_dequeue(&ctx(k as Time), soj, &mut rng) == Verdict::Mark).count() as f64 / n as f64
        };
        assert_eq!(frac(100 * US), 0.0, "never at or below ins_target");
        assert!((frac(200 * US) - 0.25).abs() < 0.015, "half-way up the ramp: pmax / 2");
        assert!((frac(300 * US) - 0.5).abs() < 0.015, "pmax at ins_max");
        assert_eq!(frac(300 * US + 1), 1.0, "always above ins_max");
        // A packet at or below ins_target cannot be marked and draws no random number (RED's rule below
        // min_th), so the draws of later packets stay those of the same seed.
        for soj in [0, 100 * US] {
            let v = crate::rng::without_draw(&format!("a sojourn of {soj} ps"), |rng| a.on_dequeue(&ctx(1), soj, rng));
            assert_eq!(v, Verdict::Pass);
        }
    }
}
