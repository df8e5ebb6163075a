//! Shuffle (AC/DC, `workloads.md` §9.3): every host sends `size` to every other host, in its own random
//! order, at most `parallel` transfers at once per sender; a host starts its next transfer when one of its
//! own finishes (`workers.rs`). The orders are drawn from the entry's traffic stream, so compared schemes
//! see the same ones.

use super::workers::Workers;
use super::{Carrier, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur};
use rand::seq::SliceRandom;
use serde::Deserialize;

/// `{ kind = "shuffle", size, parallel = 2, hosts, start, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub size: Bytes,
    #[serde(default = "default_parallel")]
    pub parallel: u32,
    /// The hosts that shuffle among themselves (default: all).
    pub hosts: Option<super::HostSet>,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

fn default_parallel() -> u32 {
    2
}

impl Cfg {
    fn members(&self, n_hosts: u64) -> u64 {
        self.hosts.as_ref().map_or(n_hosts, |h| h.0.len() as u64)
    }
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        super::check_size(&self.size, &format!("{field}.size"))?;
        if self.parallel == 0 || self.parallel > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.parallel"), "transfers at once per sender: 1 to 65536"));
        }
        Ok(())
    }

    fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        let m = self.members(n_hosts);
        Some(m * m.saturating_sub(1))
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (mut rng, hosts, mtu, tags) = (b.rng.clone(), b.hosts, b.mtu, &mut *b.tags);
        let members = hosts.members(&self.hosts, &format!("{field}.hosts"))?;
        if members.len() < 2 {
            return Err(ConfigError::new(format!("{field}.hosts"), "a shuffle needs at least 2 hosts"));
        }
        let (tag, size, start, prio) = (tags.id(&self.tag), self.size.0.bytes(mtu), self.start.0, self.priority);
        let mut flows = Vec::with_capacity(members.len() * (members.len() - 1));
        for &s in &members {
            let mut dsts: Vec<u32> = members.iter().copied().filter(|&d| d != s).collect();
            dsts.shuffle(&mut rng);
            flows.extend(dsts.into_iter().map(|dst| NewFlow { src: s, dst, size, start, tag, prio, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own }));
        }
        Ok(Source::Workers(Workers::new(flows, hosts.n_hosts, self.parallel)))
    }
}
