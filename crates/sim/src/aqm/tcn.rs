//! TCN (Bai et al., "Enabling ECN over Generic Packet Scheduling", CoNEXT 2016): mark at dequeue when
//! the packet's sojourn time exceeds a threshold T = λ·RTT — the time form of DCTCP's K = λ·C·RTT. It
//! keeps no state beyond the enqueue timestamp, so it works per queue under any scheduler.

use super::{Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::Dur;
use serde::Deserialize;
use crate::units::Time;

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub threshold: Time,
}

#[derive(Clone, Copy, Debug)]
pub struct Tcn {
    pub params: Params,
}

impl Tcn {
    pub fn new(params: Params) -> Self {
        Tcn { params }
    }

    #[inline]
    pub fn on_dequeue(&self, sojourn: Time) -> Verdict {
        if sojourn > self.params.threshold {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

impl Hooks for Tcn {
    #[inline]
    fn on_dequeue(&mut self, _ctx: &QueueCtx, sojourn: Time, _rng: &mut Rng) -> Verdict {
        Tcn::on_dequeue(self, sojourn)
    }
}

/// `aqm = { kind = "tcn", threshold, non_ect }`: `threshold` is a time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub threshold: Dur,
    #[serde(default)]
    pub non_ect: NonEct,
}

impl Config for Cfg {
    type Algo = Tcn;

    fn validate(&self, field: &str, _mtu: u64) -> Result<(), ConfigError> {
        if self.threshold.0 == 0 {
            return Err(ConfigError::new(format!("{field}.threshold"), "must be greater than zero"));
        }
        Ok(())
    }
    fn build(&self, _mtu: u64) -> Tcn {
        Tcn::new(Params { threshold: self.threshold.0 })
    }

    fn non_ect(&self) -> NonEct {
        self.non_ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn marks_strictly_above_threshold() {
        let t = Tcn::new(Params { threshold: 150_000_000 });
        assert_eq!(t.on_dequeue(150_000_000), Verdict::Pass);
        assert_eq!(t.on_dequeue(150_000_001), Verdict::Mark);
        assert_eq!(t.on_dequeue(0), Verdict::Pass);
    }

    #[test]
    fn a_zero_threshold_is_refused_and_keys_reach_the_algorithm() {
        let cfg = |t: &str| -> Cfg { toml::from_str(t).unwrap() };
        let e = cfg("threshold = \"0us\"").validate("switch.aqm", 1500).unwrap_err();
        assert_eq!(e.field, "switch.aqm.threshold");
        let c = cfg("threshold = \"70us\"\nnon_ect = \"drop\"");
        assert!(c.validate("switch.aqm", 1500).is_ok());
        assert_eq!((c.build(1500).params.threshold, c.non_ect()), (70_000_000, NonEct::Drop));
    }
}
