//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015), as
//! `spec/transports.md` C2 has it, and TIMELY+TCD (`spec/tcd.md` §6.2). A pure state machine: each ACK
//! brings one RTT sample, `now − the send time the ACK echoes` (the data packet's own timestamp, kept in
//! the packet and echoed by the receiver, so a sample can never borrow another packet's time).
//!
//! Two variants, chosen by the preset:
//! - **per completion** (`timely_ref`, the authors' reference code snippet, TCD's default): every ACK is a
//!   completion event. `rtt_diff ← (1 − a)·rtt_diff + a·(rtt − prev_rtt)`; gradient = rtt_diff/min_rtt;
//!   w = min(1, (now − last update)/min_rtt) scales the additive step and the T_high decrease:
//!   - rtt < T_low: R ← R + w·δ
//!   - rtt > T_high: R ← R·(1 − w·β·(1 − T_high/rtt))
//!   - gradient ≤ 0: R ← R + w·N·δ, N = 5 once `hai_thresh` raw differences in a row were negative, else 1
//!   - else: R ← R·(1 − β·gradient)
//! - **per RTT** (`timely_hpcc`, HPCC ns-3 `UpdateRateTimely`): one update per RTT, when an ACK passes the
//!   `snd_nxt` recorded at the previous update; the first RTT only records. No time scaling; the increase
//!   is R_AI for the first `hai_thresh` increases in a row and R_HAI after; a decrease factor is clamped
//!   at 0.
//!
//! Both clamp R to [R_min, line rate].
//!
//! **TCD** (`tcd = true`): in the gradient region (T_low ≤ rtt ≤ T_high) a positive gradient on an ACK
//! that reports UE and not CE leaves the rate as it is (the EWMA and counters still move), and β is 1.6
//! (the preset's TCD value) so that congested flows back off harder.

use crate::units::{Time, SEC};

/// Which update rule (the two presets of C2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The authors' reference snippet: every ACK, time-scaled steps.
    PerCompletion,
    /// HPCC ns-3: once per RTT.
    PerRtt,
}

/// The rate control's parameters for one connection, rates at the sender's line rate (bps).
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub variant: Variant,
    /// a: EWMA weight of the newest RTT difference.
    pub ewma: f64,
    pub t_low: Time,
    pub t_high: Time,
    /// β: multiplicative-decrease factor.
    pub beta: f64,
    /// The fixed minimum network RTT the gradient is normalised by.
    pub min_rtt: Time,
    /// Consecutive negative gradients (per completion) or increases (per RTT) before hyper increase.
    pub hai_thresh: u32,
    /// δ, and the hyper step (per completion: N·δ with N = 5; per RTT: R_HAI).
    pub rate_ai: f64,
    pub rate_hai: f64,
    pub rate_min: f64,
    pub line_rate: f64,
    /// TIMELY+TCD: UE freezes a gradient-region decrease.
    pub tcd: bool,
}

/// What the ACK reports of the marks its data packet collected (the receiver's echo).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Echo {
    #[default]
    None,
    Ue,
    Ce,
}

/// What an update did (tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    Increase,
    Hyper,
    /// rtt > T_high.
    HighDecrease,
    /// Positive gradient.
    GradientDecrease,
    /// TCD: a positive gradient with UE only; the rate stays.
    Held,
    /// Per RTT: the ACK did not close an RTT (or it is the first one).
    NoUpdate,
}

#[derive(Clone, Debug)]
pub struct Rate {
    pub p: Params,
    /// R (bps).
    pub rate: f64,
    pub prev_rtt: Option<Time>,
    /// EWMA of the RTT differences (ps, signed).
    pub rtt_diff: f64,
    /// Per completion: raw negative differences in a row. Per RTT: increases in a row.
    pub count: u32,
    last_update: Option<Time>,
    /// Per RTT: the `snd_nxt` whose ACK closes the current RTT (`None`: before the first ACK).
    next_update_seq: Option<u64>,
    /// The latest RTT sample.
    pub last_rtt: Time,
    pub updates: u64,
}

impl Rate {
    /// A flow starts at line rate.
    pub fn new(p: Params) -> Rate {
        Rate {
            p,
            rate: p.line_rate,
            prev_rtt: None,
            rtt_diff: 0.0,
            count: 0,
            last_update: None,
            next_update_seq: None,
            last_rtt: 0,
            updates: 0,
        }
    }

    /// The gradient (the EWMA of RTT differences over the minimum RTT), the trace's `alpha`.
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.p.min_rtt as f64
    }

    /// An ACK with RTT sample `rtt` acknowledging up to `ack`, while the sender's next sequence is
    /// `snd_nxt`.
    pub fn on_ack(&mut self, now: Time, rtt: Time, ack: u64, snd_nxt: u64, echo: Echo) -> Update {
        self.last_rtt = rtt;
        match self.p.variant {
            Variant::PerCompletion => self.per_completion(now, rtt, echo),
            Variant::PerRtt => {
                let Some(seq) = self.next_update_seq else {
                    // The first RTT only records (HPCC: `m_lastUpdateSeq == 0`).
                    self.next_update_seq = Some(snd_nxt);
                    self.prev_rtt = Some(rtt);
                    return Update::NoUpdate;
                };
                if ack <= seq {
                    return Update::NoUpdate;
                }
                self.next_update_seq = Some(snd_nxt);
                self.per_rtt(rtt, echo)
            }
        }
    }

    /// The reference snippet's `getNewRate`.
    fn per_completion(&mut self, now: Time, rtt: Time, echo: Echo) -> Update {
        let p = self.p;
        let prev = self.prev_rtt.unwrap_or(rtt);
        let new_diff = rtt as f64 - prev as f64;
        if new_diff < 0.0 {
            self.count += 1;
        } else {
            self.count = 0;
        }
        self.rtt_diff = (1.0 - p.ewma) * self.rtt_diff + p.ewma * new_diff;
        let gradient = self.gradient();
        // w = min(1, time since the last update / min_rtt); the first update counts in full.
        let w = self.last_update.map_or(1.0, |t| ((now - t) as f64 / p.min_rtt as f64).min(1.0));
        self.prev_rtt = Some(rtt);
        self.last_update = Some(now);
        self.updates += 1;
        let r = self.rate;
        let (next, what) = if rtt < p.t_low {
            (r + w * p.rate_ai, Update::Increase)
        } else if rtt > p.t_high {
            // R·(1 − w·β·(1 − T_high/rtt))
            (r * (1.0 - w * p.beta * (1.0 - p.t_high as f64 / rtt as f64)), Update::HighDecrease)
        } else if gradient <= 0.0 {
            if self.count >= p.hai_thresh {
                (r + w * p.rate_hai, Update::Hyper)
            } else {
                (r + w * p.rate_ai, Update::Increase)
            }
        } else if p.tcd && echo == Echo::Ue {
            (r, Update::Held)
        } else {
            (r * (1.0 - p.beta * gradient), Update::GradientDecrease)
        };
        self.rate = next.clamp(p.rate_min, p.line_rate);
        what
    }

    /// HPCC ns-3 `UpdateRateTimely` at the end of an RTT.
    fn per_rtt(&mut self, rtt: Time, echo: Echo) -> Update {
        let p = self.p;
        let prev = self.prev_rtt.unwrap_or(rtt);
        self.prev_rtt = Some(rtt);
        self.rtt_diff = (1.0 - p.ewma) * self.rtt_diff + p.ewma * (rtt as f64 - prev as f64);
        let gradient = self.gradient();
        self.updates += 1;
        let r = self.rate;
        let increase = rtt < p.t_low || (rtt <= p.t_high && gradient <= 0.0);
        let (next, what) = if increase {
            let hyper = self.count >= p.hai_thresh;
            self.count += 1;
            if hyper {
                (r + p.rate_hai, Update::Hyper)
            } else {
                (r + p.rate_ai, Update::Increase)
            }
        } else if rtt > p.t_high {
            self.count = 0;
            (r * (1.0 - p.beta * (1.0 - p.t_high as f64 / rtt as f64)).max(0.0), Update::HighDecrease)
        } else if p.tcd && echo == Echo::Ue {
            (r, Update::Held)
        } else {
            self.count = 0;
            (r * (1.0 - p.beta * gradient).max(0.0), Update::GradientDecrease)
        };
        self.rate = next.clamp(p.rate_min, p.line_rate);
        what
    }

    /// Gap after a packet of `wire` bytes at R: ⌈wire·8 / R⌉ in picoseconds.
    pub fn gap(&self, wire: u32) -> Time {
        libm::ceil(wire as f64 * 8.0 * SEC as f64 / self.rate) as Time
    }
}

/// TIMELY's parameters before the line rate is known (a preset with the user's overrides).
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub variant: Variant,
    pub ewma: f64,
    pub t_low: Time,
    pub t_high: Time,
    pub beta: f64,
    pub min_rtt: Time,
    pub hai_thresh: u32,
    pub rate_ai: super::config::RateVal,
    pub rate_hai: super::config::RateVal,
    pub rate_min: super::config::RateVal,
    pub tcd: bool,
}

impl Spec {
    /// `timely_ref`: the authors' reference snippet's recommended values — a = 0.02, T_low = 0 (per-packet
    /// pacing), T_high = 1 ms, HAI after 5 negative gradients, δ = 10 Mb/s per 10 Gb/s of line rate (hyper
    /// 5·δ), β = 0.8; min_rtt = 20 µs (the TIMELY paper's) and R_min = 100 Mb/s [DEFAULT: the snippet
    /// leaves both to the user]. TCD's TIMELY.
    pub fn reference() -> Spec {
        use super::config::RateVal;
        Spec {
            variant: Variant::PerCompletion,
            ewma: 0.02,
            t_low: 0,
            t_high: crate::units::MS,
            beta: 0.8,
            min_rtt: 20 * crate::units::US,
            hai_thresh: 5,
            rate_ai: RateVal::Per10G(10_000_000),
            rate_hai: RateVal::Per10G(50_000_000),
            rate_min: RateVal::Bps(100_000_000),
            tcd: false,
        }
    }

    /// `timely_hpcc`: HPCC ns-3 — one update per RTT, a = 0.875, T_low = 50 µs, T_high = 500 µs, β = 0.8,
    /// min_rtt = 20 µs, HAI after 5 increases, R_AI = 10 Mb/s and R_HAI = 50 Mb/s per 10 Gb/s of line rate,
    /// R_min = 100 Mb/s.
    pub fn hpcc() -> Spec {
        use super::config::RateVal;
        Spec {
            variant: Variant::PerRtt,
            ewma: 0.875,
            t_low: 50 * crate::units::US,
            t_high: 500 * crate::units::US,
            beta: 0.8,
            min_rtt: 20 * crate::units::US,
            hai_thresh: 5,
            rate_ai: RateVal::Per10G(10_000_000),
            rate_hai: RateVal::Per10G(50_000_000),
            rate_min: RateVal::Bps(100_000_000),
            tcd: false,
        }
    }

    /// The rate control's parameters at line rate `line` (bps).
    pub fn at(&self, line: u64) -> Params {
        Params {
            variant: self.variant,
            ewma: self.ewma,
            t_low: self.t_low,
            t_high: self.t_high,
            beta: self.beta,
            min_rtt: self.min_rtt,
            hai_thresh: self.hai_thresh,
            rate_ai: self.rate_ai.at(line),
            rate_hai: self.rate_hai.at(line),
            rate_min: self.rate_min.at(line).min(line as f64),
            line_rate: line as f64,
            tcd: self.tcd,
        }
    }
}

/// β under TCD (`spec/tcd.md` §6.2: "raised from 0.8 to 1.6 to decrease the rate of congested flows
/// aggressively").
pub const TCD_BETA: f64 = 1.6;
