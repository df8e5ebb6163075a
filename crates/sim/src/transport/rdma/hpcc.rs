//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), as `spec/transports.md` C4
//! has it and HPCC's ns-3 runs it (`rdma-hw.cc` `UpdateRateHp`, `FastReactHp`; single rate, no sampled
//! feedback). The switches stamp every data packet with their egress port's INT record (`net/int.rs`),
//! the receiver copies the stack into its ACK, and on each ACK the sender, per hop j:
//!
//! ```text
//! txRate_j ← (txBytes_j − txBytes_j_prev)·8 / (ts_j − ts_j_prev)
//! u_j      ← txRate_j / B_j + min(qlen_j, qlen_j_prev)·8 / (B_j · T)
//! U        ← max_j u_j;  τ ← the ts delta of that hop, at most T
//! Û        ← (Û·(T − τ) + U·τ) / T                        (the EWMA; Û starts at 1)
//! if Û ≥ η or incStage ≥ maxStage:  W ← W_c / (Û/η) + W_AI;  incStage ← 0
//! else:                             W ← W_c + W_AI;          incStage += 1
//! R ← W / T
//! ```
//!
//! `W_c` (the reference window) and `incStage` take the new values once per RTT, when an ACK acknowledges
//! past the `snd_nxt` recorded at the previous such update; with fast react (`FAST_REACT = 1`) every
//! other ACK also computes W from the current `W_c` and sets the rate and window at once. The first ACK
//! only records its INT and `snd_nxt`. W is clamped to the window of the rate range [R_min, C] (C: the
//! sender's line rate), and it is the queue pair's window too (`VAR_WIN`: bytes in flight < W).
//! T defaults to the topology's largest base RTT (`GLOBAL_T`).
//!
//! The preset `hpcc`: η = 0.95, maxStage = 0, R_AI = 10 Mb/s·C/25G (W_AI = R_AI·T), R_min = 100 Mb/s,
//! fast react on. maxStage = 0 is what HPCC's ns-3 ships and what its published runs used, so results
//! compare with that literature; with it every update is multiplicative, which also *raises* the window
//! when Û < η (W_c·η/Û). The paper's additive stages are `max_stage = 5`. R_min is `config.txt`'s
//! 100 Mb/s (`run.py`'s template has 1000 Mb/s), the floor DCQCN's `dcqcn_hpcc` preset uses too.

use crate::net::int::{Hop, Stack};
use crate::units::{Time, SEC, US};

/// The rate control's parameters for one connection (rates at the sender's line rate).
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// η: the target utilisation.
    pub eta: f64,
    /// maxStage: additive steps before a multiplicative one (0: always multiplicative).
    pub max_stage: u32,
    /// W_AI (bytes): R_AI·T.
    pub w_ai: f64,
    /// T (ps).
    pub t: Time,
    /// The window of the line rate C·T and of R_min·T (bytes).
    pub w_max: f64,
    pub w_min: f64,
    /// Update on every ACK, not only once per RTT.
    pub fast_react: bool,
}

impl Params {
    /// The window of rate `r` (bps): r·T, in bytes.
    pub fn window_of(&self, r: f64) -> f64 {
        r * self.t as f64 / SEC as f64 / 8.0
    }
}

/// What an ACK's update did (tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The first ACK: its INT and `snd_nxt` are recorded.
    Recorded,
    /// W ← W_c/(Û/η) + W_AI.
    Multiplicative,
    /// W ← W_c + W_AI.
    Additive,
    /// No hop gave a rate (no INT, or no time between the records).
    NoUpdate,
}

#[derive(Clone, Debug)]
pub struct Hpcc {
    pub p: Params,
    /// W (bytes): the window and, over T, the rate.
    pub w: f64,
    /// W_c: the reference window, set once per RTT.
    pub w_c: f64,
    /// Û: the smoothed utilisation of the most utilised hop.
    pub u: f64,
    pub inc_stage: u32,
    /// The `snd_nxt` whose ACK ends the current RTT (`None`: before the first ACK).
    last_update_seq: Option<u64>,
    /// The previous ACK's INT records.
    prev: Stack,
}

impl Hpcc {
    /// A flow starts at line rate with W = W_c = C·T and Û = 1 (ns-3 `RdmaQueuePair`).
    pub fn new(p: Params) -> Hpcc {
        Hpcc { p, w: p.w_max, w_c: p.w_max, u: 1.0, inc_stage: 0, last_update_seq: None, prev: Stack::default() }
    }

    /// R = W/T (bps).
    #[inline]
    pub fn rate(&self) -> f64 {
        self.w * 8.0 * SEC as f64 / self.p.t as f64
    }

    /// Gap after a packet of `wire` bytes at R: ⌈wire·8 / R⌉ in picoseconds.
    #[inline]
    pub fn gap(&self, wire: u32) -> Time {
        libm::ceil(wire as f64 * 8.0 * SEC as f64 / self.rate()) as Time
    }

    /// The window as a limit on `in flight + next packet` for a queue pair sending `mss`-byte packets:
    /// ns-3 sends while the bytes in flight are below W (`IsWinBound`), so a full packet may go while
    /// in flight + mss ≤ ⌈W⌉ + mss − 1.
    pub fn window_limit(&self, mss: u32) -> u64 {
        libm::ceil(self.w) as u64 + mss as u64 - 1
    }

    /// The most utilised hop of `hops` against the previous ACK's records: (U, τ). `None` when no hop
    /// has a previous record with an earlier time (the first ACK, a longer path, a record that did not
    /// move).
    pub fn measure(&self, hops: &[Hop]) -> Option<(f64, Time)> {
        let t = self.p.t as f64 / SEC as f64;
        let mut best: Option<(f64, Time)> = None;
        for (h, q) in hops.iter().zip(self.prev.hops()) {
            if h.ts <= q.ts || h.tx_bytes < q.tx_bytes {
                continue; // another path (packet spraying) or the same record: no rate to take
            }
            let tau = h.ts - q.ts;
            let b = h.rate as f64;
            // txRate_j = ΔtxBytes·8/Δts
            let tx_rate = (h.tx_bytes - q.tx_bytes) as f64 * 8.0 / (tau as f64 / SEC as f64);
            // u_j = txRate_j/B_j + min(qlen_j, qlen_j_prev)·8/(B_j·T)
            let u = tx_rate / b + h.qlen.min(q.qlen) as f64 * 8.0 / (b * t);
            if best.is_none_or(|(m, _)| u > m) {
                best = Some((u, tau));
            }
        }
        best
    }

    /// An ACK (or NACK) acknowledging up to `ack` carries `hops`; the sender's next sequence is `snd_nxt`.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, hops: &[Hop]) -> Update {
        let Some(seq) = self.last_update_seq else {
            self.last_update_seq = Some(snd_nxt);
            self.prev = Stack::of(hops);
            return Update::Recorded;
        };
        let full = ack > seq;
        if !full && !self.p.fast_react {
            return Update::NoUpdate;
        }
        let what = match self.measure(hops) {
            None => Update::NoUpdate,
            Some((u, tau)) => {
                let p = self.p;
                let tau = tau.min(p.t);
                // Û ← (Û·(T − τ) + U·τ)/T, τ = min(ts delta, T)
                self.u = (self.u * (p.t - tau) as f64 + u * tau as f64) / p.t as f64;
                let (w, stage, what) = if self.u >= p.eta || self.inc_stage >= p.max_stage {
                    // W ← W_c/(Û/η) + W_AI
                    (self.w_c / (self.u / p.eta) + p.w_ai, 0, Update::Multiplicative)
                } else {
                    // W ← W_c + W_AI
                    (self.w_c + p.w_ai, self.inc_stage + 1, Update::Additive)
                };
                self.w = w.clamp(p.w_min, p.w_max);
                if full {
                    self.w_c = self.w;
                    self.inc_stage = stage;
                }
                what
            }
        };
        self.prev = Stack::of(hops);
        if full {
            self.last_update_seq = Some(snd_nxt.max(seq));
        }
        what
    }
}

/// HPCC's parameters before the line rate and the topology are known (the preset with the user's
/// overrides).
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub eta: f64,
    pub max_stage: u32,
    pub rate_ai: super::config::RateVal,
    pub rate_min: super::config::RateVal,
    /// T; `None`: the topology's largest base RTT (set when the run is built, `Spec::at_topology`).
    pub base_rtt: Option<Time>,
    pub fast_react: bool,
}

impl Spec {
    /// `hpcc`: HPCC ns-3's shipped configuration (module comment).
    pub fn preset() -> Spec {
        use super::config::RateVal;
        Spec {
            eta: 0.95,
            max_stage: 0,
            rate_ai: RateVal::Per25G(10_000_000),
            rate_min: RateVal::Bps(100_000_000),
            base_rtt: None,
            fast_react: true,
        }
    }

    /// T: the given base RTT, else the topology's (a stand-in of 10 µs only before the run is built).
    pub fn t(&self) -> Time {
        self.base_rtt.unwrap_or(10 * US)
    }

    /// The rate control's parameters at line rate `line` (bps).
    pub fn at(&self, line: u64) -> Params {
        let mut p = Params { eta: self.eta, max_stage: self.max_stage, w_ai: 0.0, t: self.t(), w_max: 0.0, w_min: 0.0, fast_react: self.fast_react };
        p.w_ai = p.window_of(self.rate_ai.at(line));
        p.w_max = p.window_of(line as f64);
        p.w_min = p.window_of(self.rate_min.at(line).min(line as f64));
        p
    }
}

#[cfg(test)]
#[path = "hpcc_tests.rs"]
mod tests;
