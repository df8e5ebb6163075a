//! The InfiniBand CC congestion point (IBA Annex A10, `spec/transports.md` C3): an output port (per VL)
//! whose queue is above its threshold sets FECN in the packets it forwards, if it is the **root** of the
//! congestion — it holds credits, i.e. is not itself stopped by the downstream — or, when it is a
//! **victim** (stopped for lack of credits), only with `victim_mask`. `marking_rate` thins the marks
//! (the mean number of eligible packets between marks; 0 = mark every eligible packet: here every
//! (marking_rate + 1)-th, deterministically), and packets smaller than `packet_size` are never marked.
//! FECN is carried as CE (`spec/tcd.md` §5b); the destination answers with a BECN (`transport/rdma/
//! ib_cc.rs`). The decision is taken on the queue an arriving packet sees. Root or victim comes from the
//! `on_pause` hook, which credit flow control (`net/credit.rs`) and PFC both drive. [DEFAULT reading of
//! "root"] a port that stopped for credits with its queue above the threshold stays a victim until its
//! queue is back at or below the threshold: the backlog it drains when credits return was built by the
//! downstream blockage, not by its own link (with credits, a victim port turns ON for an instant at each
//! credit update, which would otherwise make it a root at every one).
//!
//! `threshold` is a size. The IBA's 4-bit `Threshold` (15 = most sensitive) has no byte mapping in the
//! sources we have; [DEFAULT] 4 KB, 1/16 of a 64 KB VL buffer, stands for level 15.

use super::{Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::{Bytes, Size, Time};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Mark above this many bytes queued.
    pub threshold: u64,
    /// Eligible packets skipped between two marks.
    pub marking_rate: u32,
    /// Packets below this size are not marked.
    pub packet_size: u32,
    /// A victim port (stopped for lack of credits) marks too.
    pub victim_mask: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct IbFecn {
    pub params: Params,
    /// The port's VL is stopped (no credits, or PFC-paused).
    pub paused: bool,
    /// Stopped since its queue was last at or below the threshold.
    pub victim: bool,
    /// Eligible packets since the last mark.
    pub skipped: u32,
}

impl IbFecn {
    pub fn new(params: Params) -> Self {
        IbFecn { params, paused: false, victim: false, skipped: 0 }
    }

    /// An arriving packet of `size` bytes sees `ctx.queue_bytes` ahead of it.
    pub fn decide(&mut self, ctx: &QueueCtx, size: u32) -> Verdict {
        let p = &self.params;
        if ctx.queue_bytes <= p.threshold {
            self.victim = self.paused;
            return Verdict::Pass;
        }
        if size < p.packet_size || (self.victim && !p.victim_mask) {
            return Verdict::Pass;
        }
        if self.skipped < p.marking_rate {
            self.skipped += 1;
            return Verdict::Pass;
        }
        self.skipped = 0;
        Verdict::Mark
    }
}

impl Hooks for IbFecn {
    fn acts_at_dequeue(&self) -> bool {
        false
    }
    fn on_enqueue(&mut self, ctx: &QueueCtx, _rng: &mut Rng) -> Verdict {
        // The AQM sees no packet size; every data packet of a run is one MTU but its last.
        self.decide(ctx, ctx.mtu)
    }
    fn on_pause(&mut self, _now: Time, paused: bool, queue_bytes: u64, _queue_pkts: u32) {
        self.paused = paused;
        if paused {
            self.victim = true;
        } else if queue_bytes <= self.params.threshold {
            self.victim = false;
        }
    }
}

/// `aqm = { kind = "ib_fecn", threshold = "4KB", marking_rate = 0, packet_size = "0B", victim_mask = false }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    #[serde(default = "default_threshold")]
    pub threshold: Bytes,
    #[serde(default)]
    pub marking_rate: u32,
    /// Only `"0B"` (every size marked) is supported: the AQM does not see a packet's size.
    #[serde(default = "zero")]
    pub packet_size: Bytes,
    #[serde(default)]
    pub victim_mask: bool,
}

fn default_threshold() -> Bytes {
    Bytes(Size::Bytes(4_000))
}
fn zero() -> Bytes {
    Bytes(Size::Bytes(0))
}

impl Config for Cfg {
    type Algo = IbFecn;

    fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
        if self.threshold.0 == Size::Inf {
            return Err(ConfigError::new(format!("{field}.threshold"), "must be a finite size, e.g. \"4KB\""));
        }
        if self.packet_size.0.bytes(mtu) != 0 {
            let msg = "only \"0B\" (mark packets of every size) is supported: the switch's AQM does not see a packet's size";
            return Err(ConfigError::new(format!("{field}.packet_size"), msg));
        }
        Ok(())
    }
    fn build(&self, mtu: u64) -> IbFecn {
        IbFecn::new(Params { threshold: self.threshold.0.bytes(mtu), marking_rate: self.marking_rate, packet_size: 0, victim_mask: self.victim_mask })
    }
    /// IB packets are all congestion-capable; a Not-ECT packet (another transport) passes unmarked.
    fn non_ect(&self) -> NonEct {
        NonEct::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(q: u64) -> QueueCtx {
        QueueCtx { now: 0, queue_bytes: q, queue_pkts: 0, port_bytes: q, port_rate: 40_000_000_000, mtu: 1000 }
    }
    fn params() -> Params {
        Params { threshold: 4_000, marking_rate: 0, packet_size: 0, victim_mask: false }
    }

    #[test]
    fn a_root_marks_strictly_above_the_threshold() {
        let mut a = IbFecn::new(params());
        assert_eq!(a.decide(&ctx(4_000), 1000), Verdict::Pass);
        assert_eq!(a.decide(&ctx(4_001), 1000), Verdict::Mark);
        assert_eq!(a.decide(&ctx(4_001), 1000), Verdict::Mark);
    }

    #[test]
    fn a_victim_marks_only_with_victim_mask() {
        let mut rng = crate::rng::stream(1, "t", 0);
        let mut a = IbFecn::new(params());
        a.on_pause(0, true, 9_000, 9);
        assert_eq!(a.on_enqueue(&ctx(9_000), &mut rng), Verdict::Pass);
        // Credits back with the backlog still above the threshold: still a victim.
        a.on_pause(5, false, 9_000, 9);
        assert_eq!(a.on_enqueue(&ctx(9_000), &mut rng), Verdict::Pass);
        // Once the queue is at the threshold it is judged afresh: a backlog it builds now is its own.
        assert_eq!(a.on_enqueue(&ctx(4_000), &mut rng), Verdict::Pass);
        assert_eq!(a.on_enqueue(&ctx(4_001), &mut rng), Verdict::Mark);
        // Resumed with a short queue: a root at once.
        let mut b = IbFecn::new(params());
        b.on_pause(0, true, 9_000, 9);
        b.on_pause(1, false, 3_000, 3);
        assert_eq!(b.on_enqueue(&ctx(5_000), &mut rng), Verdict::Mark);
        let mut v = IbFecn::new(Params { victim_mask: true, ..params() });
        v.on_pause(0, true, 9_000, 9);
        assert_eq!(v.on_enqueue(&ctx(9_000), &mut rng), Verdict::Mark);
    }

    #[test]
    fn marking_rate_skips_that_many_eligible_packets_between_marks() {
        let mut a = IbFecn::new(Params { marking_rate: 2, ..params() });
        let got: Vec<Verdict> = (0..7).map(|_| a.decide(&ctx(5_000), 1000)).collect();
        use Verdict::{Mark, Pass};
        assert_eq!(got, [Pass, Pass, Mark, Pass, Pass, Mark, Pass]);
        // Ineligible packets (below the threshold, too small) do not count.
        let mut b = IbFecn::new(Params { marking_rate: 1, packet_size: 500, ..params() });
        assert_eq!(b.decide(&ctx(100), 1000), Pass);
        assert_eq!(b.decide(&ctx(5_000), 100), Pass);
        assert_eq!(b.decide(&ctx(5_000), 1000), Pass);
        assert_eq!(b.decide(&ctx(5_000), 1000), Mark);
        // A packet of exactly `packet_size` is not smaller: it is marked.
        let mut c = IbFecn::new(Params { packet_size: 500, ..params() });
        assert_eq!(c.decide(&ctx(5_000), 499), Pass);
        assert_eq!(c.decide(&ctx(5_000), 500), Mark);
    }

    #[test]
    fn keys_reach_the_algorithm_and_bad_ones_name_the_field() {
        let cfg = |t: &str| -> Cfg { toml::from_str(t).unwrap() };
        let d = cfg("").build(1000).params;
        assert_eq!(d, params());
        let c = cfg("threshold = \"20KB\"\nmarking_rate = 3\nvictim_mask = true");
        assert_eq!(c.build(1000).params, Params { threshold: 20_000, marking_rate: 3, packet_size: 0, victim_mask: true });
        assert_eq!(cfg("threshold = \"inf\"").validate("switch.aqm", 1000).unwrap_err().field, "switch.aqm.threshold");
        assert_eq!(cfg("packet_size = \"100B\"").validate("switch.aqm", 1000).unwrap_err().field, "switch.aqm.packet_size");
        assert!(toml::from_str::<Cfg>("threshhold = \"4KB\"").is_err());
    }
}
