//! A random permutation: every host sends `size` to exactly one other host and receives from exactly one,
//! all at `start` — the permutation traffic matrix of load-balancing studies (htsim's
//! `ConnectionMatrix::setPermutation`); `workloads.md` does not define it. The permutation is drawn from
//! the entry's traffic stream, so compared schemes see the same one.

use super::{Carrier, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur};
use rand::Rng as _;
use serde::Deserialize;

/// `{ kind = "permutation", size, start, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub size: Bytes,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        super::check_size(&self.size, &format!("{field}.size"))
    }

    fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        Some(n_hosts)
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (mut rng, hosts, mtu, tags) = (b.rng.clone(), b.hosts, b.mtu, &mut *b.tags);
        let n = hosts.n_hosts;
        if n < 2 {
            return Err(ConfigError::new(format!("{field}.kind"), "a permutation needs at least 2 hosts"));
        }
        // Sattolo's algorithm: a single cycle, so no host sends to itself.
        let mut perm: Vec<u32> = (0..n).collect();
        for k in (1..n as usize).rev() {
            let j = rng.gen_range(0..k);
            perm.swap(k, j);
        }
        let (tag, size) = (tags.id(&self.tag), self.size.0.bytes(mtu));
        let (start, prio) = (self.start.0, self.priority);
        let flows = (0..n)
            .map(|s| NewFlow { src: s, dst: perm[s as usize], size, start, tag, prio, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own })
            .collect();
        Ok(Source::List { flows, next: 0 })
    }
}
