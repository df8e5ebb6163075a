//! InfiniBand congestion control (IBA Annex A10, `spec/transports.md` C3), `cc = "ib_cc"`, preset
//! `ib_cc`; with `tcd = true` the IB CC + TCD reaction of `spec/tcd.md` §6.3.
//!
//! - **Switch**: the congestion point marks FECN. Here that is the AQM `ib_fecn` (`aqm/ib_fecn.rs`):
//!   a port above its threshold that holds credits (the root of congestion) marks; a credit-starved one
//!   (a victim) marks only with `victim_mask`. With TCD, the `tcd` AQM marks CE (FECN) in congestion and
//!   UE in its undetermined state (`spec/tcd.md` §5b: FECN = CE; FECN 0 with BECN 1 on a forward packet
//!   = UE).
//! - **Destination**: returns a BECN for every FECN-marked packet (`becn_interval` = 0; the RoCE NP's
//!   CNP machinery carries it, `flags::CNP`), and with TCD a BECN with cause UE for UE-marked packets.
//! - **Source**, per queue pair:
//!
//! ```text
//! on BECN (cause CE):  CCTI ← min(CCTI + ccti_increase, ccti_limit); start the CCTI timer if stopped
//! on BECN (cause UE):  (TCD) CCTI unchanged; the next timer expiry does not decrement (hold)
//! on timer expiry (every ccti_timer × 1.024 µs): if CCTI > ccti_min: CCTI −= 1; restart the timer
//! inter-packet delay = CCT[CCTI] = CCTI · t_mtu / 8      (t_mtu: one full packet at line rate)
//! ```
//!
//! So the queue pair's packets start at least `t_wire + CCT[CCTI]` apart: the rate is the line rate ×
//! t_mtu / (t_mtu + IPD) for full packets, 1/(1 + CCTI/8) of it, ≈ 1/17 at the limit 127. The timer
//! stops once CCTI is back at `ccti_min` with no hold pending (a running timer with nothing to decrement
//! changes nothing) and restarts with the next BECN. Values [DEFAULT, typical of published IB CC studies
//! per the spec]: increase 1, limit 127, min 0, timer 100 (102.4 µs), CCT linear with 1/8 of a packet
//! time per index.

use super::config::Cfg;
use crate::config::ConfigError;
use crate::units::{Dur, Time, SEC};

/// The CCTI timer's unit (hfi1's timestamp comment): 1.024 µs.
pub const TIMER_UNIT: Time = 1_024_000;

/// IB CC's parameters (the `ib_cc` preset with the user's keys).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    pub ccti_increase: u32,
    pub ccti_limit: u32,
    pub ccti_min: u32,
    /// Timer period in units of 1.024 µs.
    pub ccti_timer: u32,
    /// The destination sends at most one BECN per flow per this interval (0: one per FECN packet).
    pub becn_interval: Time,
}

impl Spec {
    pub fn preset() -> Spec {
        Spec { ccti_increase: 1, ccti_limit: 127, ccti_min: 0, ccti_timer: 100, becn_interval: 0 }
    }
}

impl Cfg {
    /// IB CC's keys over its preset (the preset itself when `cc` is another control: unused).
    pub(super) fn ib_cc_keys(&self, field: &str) -> Result<Spec, ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let mut s = Spec::preset();
        if let Some(v) = self.ccti_limit {
            if v == 0 || v > 16_383 {
                return Err(ConfigError::new(f("ccti_limit"), "must be 1 to 16383 (the CCT's last index; 127 for 128 entries)"));
            }
            s.ccti_limit = v;
        }
        s.ccti_increase = self.ccti_increase.unwrap_or(s.ccti_increase);
        if s.ccti_increase == 0 {
            return Err(ConfigError::new(f("ccti_increase"), "must be at least 1 (a BECN that raises nothing is no congestion control)"));
        }
        s.ccti_min = self.ccti_min.unwrap_or(s.ccti_min);
        if s.ccti_min >= s.ccti_limit {
            return Err(ConfigError::new(f("ccti_min"), format!("must be below ccti_limit ({})", s.ccti_limit)));
        }
        if let Some(t) = self.ccti_timer {
            if t == 0 || t > 65_535 {
                return Err(ConfigError::new(f("ccti_timer"), "is in units of 1.024 us, 1 to 65535 (100: 102.4 us)"));
            }
            s.ccti_timer = t;
        }
        if let Some(Dur(t)) = self.becn_interval {
            s.becn_interval = t;
        }
        Ok(s)
    }
}

/// One queue pair's IB CC state.
#[derive(Clone, Debug)]
pub struct IbCc {
    pub spec: Spec,
    pub ccti: u32,
    /// The CCTI timer's next expiry (None: stopped).
    pub timer_at: Option<Time>,
    /// TCD: a UE BECN asked to skip the next decrement.
    pub hold: bool,
    line: f64,
    /// Time to send one full packet at line rate (ps, fractional).
    t_mtu: f64,
}

impl IbCc {
    /// `line` in bps; `mtu_wire` = a full data packet's bytes on the wire.
    pub fn new(spec: Spec, line: u64, mtu_wire: u32) -> IbCc {
        let line = line as f64;
        IbCc { spec, ccti: spec.ccti_min, timer_at: None, hold: false, line, t_mtu: mtu_wire as f64 * 8.0 * SEC as f64 / line }
    }

    fn period(&self) -> Time {
        self.spec.ccti_timer as Time * TIMER_UNIT
    }

    /// A BECN with cause CE.
    pub fn on_becn(&mut self, now: Time) {
        self.ccti = (self.ccti + self.spec.ccti_increase).min(self.spec.ccti_limit);
        if self.timer_at.is_none() {
            self.timer_at = Some(now + self.period());
        }
    }

    /// A BECN with cause UE (TCD): hold the current injection delay through the next expiry.
    pub fn on_ue(&mut self, now: Time) {
        if self.ccti > self.spec.ccti_min {
            // The timer runs whenever CCTI is above its minimum (`on_becn` starts it, `on_time` keeps it).
            debug_assert!(self.timer_at.is_some(), "CCTI above its minimum with no timer at {now} ps");
            self.hold = true;
        }
    }

    pub fn next_deadline(&self) -> Option<Time> {
        self.timer_at
    }

    /// Every timer expiry due at or before `now`.
    pub fn on_time(&mut self, now: Time) {
        while let Some(t) = self.timer_at.filter(|&t| t <= now) {
            if self.hold {
                self.hold = false;
            } else if self.ccti > self.spec.ccti_min {
                self.ccti -= 1;
            }
            self.timer_at = (self.ccti > self.spec.ccti_min).then(|| t + self.period());
        }
    }

    /// The inter-packet delay CCT[CCTI] (ps).
    pub fn ipd(&self) -> f64 {
        self.ccti as f64 * self.t_mtu / 8.0
    }

    /// Pacing: the next packet starts this long after one of `wire` bytes started.
    pub fn gap(&self, wire: u32) -> Time {
        libm::ceil(wire as f64 * 8.0 * SEC as f64 / self.line + self.ipd()) as Time
    }

    /// The rate full packets leave at (bps).
    pub fn rate(&self) -> f64 {
        self.line * self.t_mtu / (self.t_mtu + self.ipd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;

    fn cc() -> IbCc {
        // 1000 B packets at 40 Gb/s: 200 ns each.
        IbCc::new(Spec::preset(), 40_000_000_000, 1000)
    }

    #[test]
    fn becn_raises_ccti_to_the_limit_and_starts_the_timer_once() {
        let mut c = cc();
        assert_eq!((c.ccti, c.timer_at, c.gap(1000)), (0, None, 200_000));
        c.on_becn(10 * US);
        assert_eq!((c.ccti, c.timer_at), (1, Some(10 * US + 102_400_000)));
        assert_eq!(c.next_deadline(), c.timer_at, "the transport schedules the timer from next_deadline");
        c.on_becn(20 * US);
        assert_eq!((c.ccti, c.timer_at), (2, Some(10 * US + 102_400_000)), "the running timer is not restarted");
        // IPD = 2 · 200 ns / 8 = 50 ns on top of the packet's own 200 ns.
        assert_eq!(c.gap(1000), 250_000);
        assert_eq!(c.gap(500), 150_000);
        for _ in 0..200 {
            c.on_becn(30 * US);
        }
        assert_eq!(c.ccti, 127);
        assert!((c.rate() - 40e9 / (1.0 + 127.0 / 8.0)).abs() < 1.0);
        let mut c = IbCc::new(Spec { ccti_increase: 5, ccti_limit: 12, ..Spec::preset() }, 40_000_000_000, 1000);
        c.on_becn(0);
        c.on_becn(0);
        c.on_becn(0);
        assert_eq!(c.ccti, 12);
    }

    #[test]
    fn the_timer_decrements_once_per_period_down_to_the_minimum_then_stops() {
        let mut c = IbCc::new(Spec { ccti_min: 1, ..Spec::preset() }, 40_000_000_000, 1000);
        c.on_becn(0);
        c.on_becn(0);
        c.on_becn(0);
        assert_eq!(c.ccti, 4);
        let p = 102_400_000;
        c.on_time(p - 1);
        assert_eq!((c.ccti, c.timer_at), (4, Some(p)));
        c.on_time(p);
        assert_eq!((c.ccti, c.timer_at), (3, Some(2 * p)));
        // Late: two expiries at once.
        c.on_time(3 * p + 5);
        assert_eq!((c.ccti, c.timer_at), (1, None), "stopped at ccti_min");
        c.on_time(10 * p);
        assert_eq!(c.ccti, 1);
    }

    #[test]
    fn a_ue_becn_holds_the_delay_through_the_next_expiry() {
        let p = 102_400_000;
        let mut c = cc();
        c.on_becn(0);
        c.on_becn(0);
        c.on_ue(US);
        assert_eq!(c.ccti, 2, "UE never raises CCTI");
        c.on_time(p);
        assert_eq!((c.ccti, c.timer_at), (2, Some(2 * p)), "the expiry after a UE is skipped");
        c.on_time(2 * p);
        assert_eq!(c.ccti, 1);
        // UE with nothing to hold starts no timer.
        let mut idle = cc();
        idle.on_ue(0);
        assert_eq!((idle.timer_at, idle.hold), (None, false));
    }
}
