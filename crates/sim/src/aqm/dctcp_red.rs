//! DCTCP step marking (Alizadeh et al., SIGCOMM 2010; RFC 8257 switch side): RED with w_q = 1,
//! min_th = max_th = K, max_p = 1 — mark every ECT packet when the instantaneous queue exceeds K.
//! Guidance: K > C·RTT/7.

use super::{Config, Hooks, MarkAt, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::{Bytes, Size, Time};
use serde::Deserialize;

#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// K in bytes.
    pub threshold: u64,
    /// Decide on the queue left behind at dequeue instead of the queue seen on arrival.
    pub at_dequeue: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct DctcpRed {
    pub params: Params,
}

impl DctcpRed {
    pub fn new(params: Params) -> Self {
        DctcpRed { params }
    }

    /// The arriving packet sees `queue_bytes` ahead of it: mark when q > K.
    #[inline]
    pub fn on_enqueue(&self, ctx: &QueueCtx) -> Verdict {
        if !self.params.at_dequeue && ctx.queue_bytes > self.params.threshold {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    #[inline]
    pub fn on_dequeue(&self, ctx: &QueueCtx) -> Verdict {
        if self.params.at_dequeue && ctx.queue_bytes > self.params.threshold {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

impl Hooks for DctcpRed {
    #[inline]
    fn on_enqueue(&mut self, ctx: &QueueCtx, _rng: &mut Rng) -> Verdict {
        DctcpRed::on_enqueue(self, ctx)
    }
    #[inline]
    fn on_dequeue(&mut self, ctx: &QueueCtx, _sojourn: Time, _rng: &mut Rng) -> Verdict {
        DctcpRed::on_dequeue(self, ctx)
    }
    #[inline]
    fn acts_at_dequeue(&self) -> bool {
        self.params.at_dequeue
    }
}

/// `aqm = { kind = "dctcp_red", threshold, mark_at = "enqueue"|"dequeue", non_ect = "pass"|"drop" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    /// K: mark when the queue exceeds it.
    pub threshold: Bytes,
    #[serde(default)]
    pub non_ect: NonEct,
    #[serde(default)]
    pub mark_at: MarkAt,
}

impl Config for Cfg {
    type Algo = DctcpRed;

    fn validate(&self, field: &str, _mtu: u64) -> Result<(), ConfigError> {
        if self.threshold.0 == Size::Inf {
            return Err(ConfigError::new(format!("{field}.threshold"), "must be a finite size"));
        }
        Ok(())
    }
    fn build(&self, mtu: u64) -> DctcpRed {
        DctcpRed::new(Params { threshold: self.threshold.0.bytes(mtu), at_dequeue: self.mark_at == MarkAt::Dequeue })
    }

    fn non_ect(&self) -> NonEct {
        self.non_ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn ctx(q: u64) -> QueueCtx {
        QueueCtx { now: 0, queue_bytes: q, queue_pkts: 0, port_bytes: q, port_rate: 10_000_000_000, mtu: 1500 }
    }
    #[test]
    fn marks_strictly_above_k() {
        let a = DctcpRed::new(Params { threshold: 30_000, at_dequeue: false });
        assert_eq!(a.on_enqueue(&ctx(30_000)), Verdict::Pass);
        assert_eq!(a.on_enqueue(&ctx(30_001)), Verdict::Mark);
        assert_eq!(a.on_dequeue(&ctx(90_000)), Verdict::Pass);
        let d = DctcpRed::new(Params { threshold: 30_000, at_dequeue: true });
        assert_eq!(d.on_enqueue(&ctx(90_000)), Verdict::Pass);
        assert_eq!(d.on_dequeue(&ctx(30_000)), Verdict::Pass);
        assert_eq!(d.on_dequeue(&ctx(30_001)), Verdict::Mark);
    }

    #[test]
    fn config_keys_reach_the_algorithm() {
        let cfg = |t: &str| -> Cfg { toml::from_str(t).unwrap() };
        let a = cfg("threshold = \"20pkt\"");
        assert_eq!((a.build(1500).params.threshold, a.build(1500).params.at_dequeue), (30_000, false));
        assert_eq!(a.non_ect(), NonEct::Pass);
        let b = cfg("threshold = \"65KB\"\nmark_at = \"dequeue\"\nnon_ect = \"drop\"");
        assert_eq!((b.build(1500).params.threshold, b.build(1500).params.at_dequeue), (65_000, true));
        assert_eq!(b.non_ect(), NonEct::Drop);
    }
}
