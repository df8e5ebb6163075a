//! Stride: host i sends `size` to host (i + stride) mod N, every host at `start` — the pattern of AC/DC's
//! concurrent-stride test (`workloads.md` §9.2), one stride per entry. Every host sends and receives
//! exactly one flow, so the load is even at the edge and the fabric's paths decide the outcome.

use super::{NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur};
use serde::Deserialize;

/// `{ kind = "stride", stride, size, start, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub stride: u32,
    pub size: Bytes,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        super::check_size(&self.size, &format!("{field}.size"))?;
        if self.stride == 0 {
            return Err(ConfigError::new(format!("{field}.stride"), "must be at least 1"));
        }
        Ok(())
    }

    fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        Some(n_hosts)
    }

    /// The stride must not map a host onto itself, which needs the host count.
    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (hosts, mtu, tags) = (b.hosts, b.mtu, &mut *b.tags);
        let n = hosts.n_hosts;
        if n < 2 || self.stride % n == 0 {
            return Err(ConfigError::new(
                format!("{field}.stride"),
                format!("stride must not be a multiple of the host count {n}"),
            ));
        }
        let (tag, size) = (tags.id(&self.tag), self.size.0.bytes(mtu));
        let (start, prio) = (self.start.0, self.priority);
        let flows = (0..n)
            .map(|s| NewFlow { src: s, dst: (s + self.stride) % n, size, start, tag, prio, transport: 0, entry: 0, extra_delay: None })
            .collect();
        Ok(Source::List { flows, next: 0 })
    }
}
