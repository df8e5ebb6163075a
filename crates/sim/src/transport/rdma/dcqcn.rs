//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015), as
//! `spec/transports.md` C1 has it: the reaction point (RP, the sender NIC's rate limiter) and the
//! notification point (NP, the receiver NIC's CNP generator). Pure state machines: time comes in as an
//! argument, deadlines go out as values; the connection (`mod.rs`) turns them into one engine timer.
//!
//! Two variants share this file, chosen by parameters (the presets of `config.rs`):
//! - **per-CNP** (paper, `bobzhuyb/ns3-rdma`): every CNP cuts the rate at once and moves α; an alpha timer
//!   K decays α while no CNP comes; rate increases come from a timer T *and* a byte counter BC, with the
//!   QCN stage rule (FR while both counters < F, AI when one has reached F, HAI when both have).
//! - **timer-only** (HPCC ns-3 `rdma-hw.cc` "Mlx", Mellanox-like): a CNP only sets flags; α is updated
//!   every K ("binary": +g if a CNP came in the period); the rate is cut at most once per
//!   `rate_decrease_interval` (checks every 4 µs after the first CNP); increases come from the timer alone
//!   (FR while t_cnt < F, AI when t_cnt = F, HAI with a fixed step afterwards).
//!
//! α is evaluated lazily: its periodic updates are applied, in order and exactly, whenever the RP is
//! next touched (a CNP, an ACK, a rate event), so a long-lived flow costs no event per alpha period.

use crate::units::{Time, SEC};

/// How α moves (C1 table, "alpha timer K" row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlphaUpdate {
    /// α ← (1 − g)α + g at each rate cut; α ← (1 − g)α every K without a CNP (the timer restarts at each
    /// cut). DCQCN paper, bobzhuyb ns-3.
    OnCnp,
    /// Every K from the first CNP on: α ← (1 − g)α + g if a CNP came in the period, else (1 − g)α.
    /// HPCC ns-3 `UpdateAlphaMlx`.
    Periodic,
}

/// The RP's parameters for one connection, rates resolved at the sender's line rate (bits per second).
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub g: f64,
    /// K: alpha period.
    pub alpha_timer: Time,
    pub alpha_update: AlphaUpdate,
    /// 0: cut on each CNP. Else: check this often (from the first CNP) whether a CNP came, and cut once.
    pub rate_decrease_interval: Time,
    /// T: rate-increase timer period.
    pub rate_increase_timer: Time,
    /// BC in bytes; `None`: timer only (and the timer-only stage rule).
    pub byte_counter: Option<u64>,
    /// F: fast-recovery steps.
    pub f: u32,
    pub rate_ai: f64,
    pub rate_hai: f64,
    pub rate_min: f64,
    pub line_rate: f64,
    /// Copy R_C into R_T at every cut. Else only if an increase step (timer or byte counter) happened
    /// since the last cut (C1's clamp note: HPCC's time-stage rule; bobzhuyb's ns-3 with
    /// `ClampTargetRateAfterTimeInc` — its attribute default counts byte-counter steps only).
    pub clamp_target_rate: bool,
    /// bobzhuyb's ns-3: on the first increase step after a cut, R_T ← R_T/8 instead of growing if
    /// R_T > 10·R_C.
    pub target_rate_reset: bool,
    /// At the first CNP: α ← 1 and R_T = R_C ← this fraction of R_C (HPCC `RateOnFirstCnp`).
    pub rate_on_first_cnp: Option<f64>,
    /// bobzhuyb's ns-3: T and BC are halved while in hyper increase.
    pub hyper_halving: bool,
}

/// Which increase a rate-increase event made (tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    FastRecovery,
    Additive,
    Hyper,
}

/// Reaction point: one flow's rate.
#[derive(Clone, Debug)]
pub struct Rp {
    pub p: Params,
    /// R_C, current rate (bps).
    pub rc: f64,
    /// R_T, target rate (bps).
    pub rt: f64,
    pub alpha: f64,
    pub t_cnt: u32,
    pub bc_cnt: u32,
    /// Bytes sent since the byte counter last fired or was reset.
    bytes: u64,
    seen_cnp: bool,
    /// Next expiry of the increase timer T (`None`: not running — before the first cut, and once R_C and
    /// R_T are both at line rate, where another increase changes nothing until the next cut resets the
    /// stages).
    inc_at: Option<Time>,
    /// The last step was hyper (with `hyper_halving`: T/2 and BC/2 until the next cut).
    in_hyper: bool,
    /// Alpha periods end at `alpha_epoch + j·K`, j ≥ 1; `alpha_ticks` of them have been applied.
    alpha_running: bool,
    alpha_epoch: Time,
    alpha_ticks: u64,
    /// Periodic α: a CNP came in the current period.
    cnp_in_period: bool,
    /// Timer-only decrease: checks at `dec_epoch + m·interval`, m ≥ 1; a CNP came since the last one.
    dec_epoch: Time,
    dec_flag: bool,
    dec_at: Option<Time>,
    /// CNPs received, rate cuts made, UE CNPs received (TCD).
    pub cnps: u64,
    pub cuts: u64,
    pub ues: u64,
}

impl Rp {
    /// A flow starts at line rate with α = 1 (the paper's initial value; HPCC sets it at the first CNP).
    pub fn new(p: Params) -> Rp {
        Rp {
            p,
            rc: p.line_rate,
            rt: p.line_rate,
            alpha: 1.0,
            t_cnt: 0,
            bc_cnt: 0,
            bytes: 0,
            seen_cnp: false,
            inc_at: None,
            in_hyper: false,
            alpha_running: false,
            alpha_epoch: 0,
            alpha_ticks: 0,
            cnp_in_period: false,
            dec_epoch: 0,
            dec_flag: false,
            dec_at: None,
            cnps: 0,
            cuts: 0,
            ues: 0,
        }
    }

    /// Apply every alpha period that ended at or before `now` (a period ending at `now` comes before a
    /// CNP or a cut at `now`).
    pub fn touch(&mut self, now: Time) {
        if !self.alpha_running || now < self.alpha_epoch + (self.alpha_ticks + 1) * self.p.alpha_timer {
            return;
        }
        let n = (now - self.alpha_epoch) / self.p.alpha_timer;
        let mut k = n - self.alpha_ticks;
        let keep = 1.0 - self.p.g;
        if self.p.alpha_update == AlphaUpdate::Periodic && self.cnp_in_period {
            self.alpha = keep * self.alpha + self.p.g; // α ← (1 − g)α + g  (a CNP came in the period)
            self.cnp_in_period = false;
            k -= 1;
        }
        // α ← (1 − g)α per period without a CNP; a long idle stretch in one power (libm: deterministic).
        if k <= 1024 {
            for _ in 0..k {
                self.alpha *= keep;
            }
        } else {
            self.alpha *= libm::pow(keep, k as f64);
        }
        self.alpha_ticks = n;
    }

    /// A CNP reached the sender.
    pub fn on_cnp(&mut self, now: Time) {
        self.touch(now);
        self.cnps += 1;
        let first = !self.seen_cnp;
        self.seen_cnp = true;
        if first {
            if let Some(f) = self.p.rate_on_first_cnp {
                // HPCC `cnp_received_mlx`: α = 1, R_T = R_C = RateOnFirstCnp·R_C; this CNP does not count
                // in the first alpha period.
                self.alpha = 1.0;
                self.rc = (f * self.rc).max(self.p.rate_min);
                self.rt = self.rc;
            }
            if self.p.alpha_update == AlphaUpdate::Periodic {
                self.alpha_running = true;
                self.alpha_epoch = now;
                self.alpha_ticks = 0;
            }
            self.dec_epoch = now;
        }
        if self.p.alpha_update == AlphaUpdate::Periodic && !(first && self.p.rate_on_first_cnp.is_some()) {
            self.cnp_in_period = true;
        }
        if self.p.rate_decrease_interval == 0 {
            self.cut(now);
        } else {
            self.dec_flag = true;
            if self.dec_at.is_none() {
                // The first check after `now` on the grid dec_epoch + m·interval, m ≥ 1.
                let d = self.p.rate_decrease_interval;
                let m = (now - self.dec_epoch) / d + 1;
                self.dec_at = Some(self.dec_epoch + m * d);
            }
        }
    }

    /// The rate cut (C1 "on CNP"), in the paper's order:
    ///   R_T ← R_C (clamp rule);  R_C ← max(R_min, R_C·(1 − α/2));  then α ← (1 − g)α + g.
    /// The cut uses α as it was *before* this CNP's update (DCQCN paper Algorithm 1; bobzhuyb's ns-3
    /// updates α first, HPCC's updates α only on its alpha timer).
    fn cut(&mut self, now: Time) {
        self.touch(now);
        let clamp = self.p.clamp_target_rate || self.t_cnt != 0 || self.bc_cnt != 0;
        if clamp {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.rate_min);
        if self.p.alpha_update == AlphaUpdate::OnCnp {
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
            self.alpha_running = true;
            self.alpha_epoch = now;
            self.alpha_ticks = 0;
        }
        self.restart_increase(now);
        self.cuts += 1;
    }

    /// The increase stages start over after a cut or a UE: counters, byte counter, timer T.
    fn restart_increase(&mut self, now: Time) {
        self.t_cnt = 0;
        self.bc_cnt = 0;
        self.bytes = 0;
        self.in_hyper = false;
        self.inc_at = Some(now + self.p.rate_increase_timer);
    }

    /// A UE CNP reached the sender (DCQCN+TCD, `spec/tcd.md` §0 — the first author's code): the increase
    /// stages restart as after a cut — R_T ← R_C, t_cnt = bc_cnt = 0, byte counter and increase timer
    /// restarted, the alpha timer restarted (per-CNP α) — but R_C and α stay. Fast recovery towards
    /// R_T = R_C changes nothing, so a flow that keeps seeing UE holds its rate, and increases resume F
    /// timer periods after the last UE. (The code clamps R_T here through its `ClampTargetRate = 1`; we
    /// always do, so that UE never raises the rate.)
    pub fn on_ue(&mut self, now: Time) {
        self.touch(now);
        self.ues += 1;
        self.rt = self.rc;
        if self.p.alpha_update == AlphaUpdate::OnCnp && self.alpha_running {
            self.alpha_epoch = now;
            self.alpha_ticks = 0;
        }
        self.restart_increase(now);
    }

    /// `bytes` left the sender (wire bytes): the byte counter (per-CNP variant only).
    pub fn on_sent(&mut self, bytes: u64, now: Time) {
        let Some(bc) = self.p.byte_counter else { return };
        if self.inc_at.is_none() {
            return; // at line rate and target: nothing to increase (see `inc_at`)
        }
        self.bytes += bytes;
        let limit = if self.p.hyper_halving && self.in_hyper { (bc / 2).max(1) } else { bc };
        if self.bytes >= limit {
            self.bytes = 0;
            self.bc_cnt += 1;
            self.touch(now);
            self.increase();
        }
    }

    /// One rate-increase event; the counter that fired has been advanced (per-CNP variant), or is read
    /// before it is advanced (timer-only).
    fn increase(&mut self) -> Step {
        let f = self.p.f;
        let step = match self.p.byte_counter {
            Some(_) => {
                let (hi, lo) = (self.t_cnt.max(self.bc_cnt), self.t_cnt.min(self.bc_cnt));
                if hi < f {
                    self.adjust(0.0);
                    Step::FastRecovery
                } else if lo >= f {
                    // R_T ← R_T + i·R_HAI, i = min(t_cnt, bc_cnt) − F + 1
                    self.adjust((lo - f + 1) as f64 * self.p.rate_hai);
                    Step::Hyper
                } else {
                    self.adjust(self.p.rate_ai);
                    Step::Additive
                }
            }
            None => {
                // HPCC `RateIncEventMlx`, stage = t_cnt before this event.
                if self.t_cnt < f {
                    self.adjust(0.0);
                    Step::FastRecovery
                } else if self.t_cnt == f {
                    self.adjust(self.p.rate_ai);
                    Step::Additive
                } else {
                    self.adjust(self.p.rate_hai);
                    Step::Hyper
                }
            }
        };
        self.in_hyper = step == Step::Hyper;
        if self.rc >= self.p.line_rate && self.rt >= self.p.line_rate {
            self.inc_at = None;
        }
        step
    }

    /// R_T ← R_T + step (or R_T/8 under `target_rate_reset`), R_C ← (R_T + R_C)/2, both ≤ line rate.
    fn adjust(&mut self, step: f64) {
        let first = self.t_cnt == 1 || self.bc_cnt == 1;
        if self.p.target_rate_reset && first && self.rt > 10.0 * self.rc {
            self.rt /= 8.0;
        } else {
            self.rt = (self.rt + step).min(self.p.line_rate);
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(self.p.line_rate);
    }

    /// The earliest time the RP needs to be woken (`on_time`).
    pub fn next_deadline(&self) -> Option<Time> {
        match (self.inc_at, self.dec_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handle every rate event due at or before `now`, in time order (a decrease check before an increase
    /// at the same time). Returns the increase steps taken, last one.
    pub fn on_time(&mut self, now: Time) -> Option<Step> {
        let mut last = None;
        while let Some(t) = self.next_deadline().filter(|&t| t <= now) {
            if self.dec_at == Some(t) {
                self.dec_at = None;
                if self.dec_flag {
                    self.dec_flag = false;
                    self.cut(t);
                }
                continue;
            }
            // The increase timer T.
            self.touch(t);
            if self.p.byte_counter.is_some() {
                self.t_cnt += 1;
                last = Some(self.increase());
            } else {
                last = Some(self.increase());
                self.t_cnt += 1;
            }
            let period = if self.p.hyper_halving && self.in_hyper {
                (self.p.rate_increase_timer / 2).max(1)
            } else {
                self.p.rate_increase_timer
            };
            if self.inc_at.is_some() {
                self.inc_at = Some(t + period);
            }
        }
        last
    }

    /// Gap after a packet of `wire` bytes at R_C: ⌈wire·8 / R_C⌉ in picoseconds.
    pub fn gap(&self, wire: u32) -> Time {
        libm::ceil(wire as f64 * 8.0 * SEC as f64 / self.rc) as Time
    }
}

/// Notification point: the receiver of one flow. A CE-marked packet yields a CNP unless one was sent in
/// the last `interval` (C1 "NP"; 0: every CE-marked packet yields one). With TCD a UE-marked packet
/// yields a UE CNP under its own limit of one per `interval` (`spec/tcd.md` §6: CE and UE notifications
/// are limited apart, so a UE CNP never holds back a CE one — CE wins).
#[derive(Clone, Copy, Debug, Default)]
pub struct Np {
    last_cnp: Option<Time>,
    last_ue: Option<Time>,
    pub cnps: u64,
}

impl Np {
    /// A CE-marked packet arrived at `now`: whether to send a CNP.
    pub fn on_ce(&mut self, now: Time, interval: Time) -> bool {
        if self.last_cnp.is_some_and(|l| now - l < interval) {
            return false;
        }
        self.last_cnp = Some(now);
        self.cnps += 1;
        true
    }

    /// A UE-marked packet arrived at `now`: whether to send a UE CNP.
    pub fn on_ue(&mut self, now: Time, interval: Time) -> bool {
        if self.last_ue.is_some_and(|l| now - l < interval) {
            return false;
        }
        self.last_ue = Some(now);
        true
    }
}
