//! Stride: host i sends `size` to host (i + stride) mod N — the pattern of AC/DC's concurrent-stride test
//! (`workloads.md` §9.2). With `strides = [1, 2, 3, 4]` host i sends to each of (i + 1 … i + 4) mod N,
//! all at once or, with `sequential = true`, one after the other (the next when the last finishes:
//! `workers.rs`); `repeat` and `period` send the same again every `period` (§9.2's 16 KB message every
//! 100 ms). Every host sends and receives the same flows, so the load is even at the edge and the fabric's
//! paths decide the outcome.

use super::workers::Workers;
use super::{Carrier, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur};
use serde::Deserialize;

/// `{ kind = "stride", stride | strides, size, start, sequential, repeat, period, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub stride: Option<u32>,
    pub strides: Option<Vec<u32>>,
    pub size: Bytes,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    #[serde(default)]
    pub sequential: bool,
    #[serde(default = "one")]
    pub repeat: u32,
    pub period: Option<Dur>,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

fn one() -> u32 {
    1
}

impl Cfg {
    fn list(&self) -> Vec<u32> {
        self.strides.clone().unwrap_or_else(|| self.stride.into_iter().collect())
    }
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        super::check_size(&self.size, &format!("{field}.size"))?;
        match (&self.stride, &self.strides) {
            (Some(_), Some(_)) => return Err(ConfigError::new(format!("{field}.strides"), "give `stride` or `strides`, not both")),
            (None, None) => return Err(ConfigError::new(format!("{field}.stride"), "missing: the offset to the receiver, e.g. `stride = 1` (or `strides = [1, 2, 3, 4]`)")),
            (None, Some(v)) if v.is_empty() => return Err(ConfigError::new(format!("{field}.strides"), "must list at least one stride")),
            _ => {}
        }
        if let Some(i) = self.list().iter().position(|&s| s == 0) {
            let f = if self.strides.is_some() { format!("{field}.strides[{i}]") } else { format!("{field}.stride") };
            return Err(ConfigError::new(f, "must be at least 1"));
        }
        if self.repeat == 0 || self.repeat > 1 << 24 {
            return Err(ConfigError::new(format!("{field}.repeat"), "must be 1 to 16777216"));
        }
        if self.repeat > 1 && self.period.is_none_or(|p| p.0 == 0) {
            return Err(ConfigError::new(format!("{field}.period"), "`repeat` > 1 needs a positive `period` (e.g. \"100ms\")"));
        }
        Ok(())
    }

    fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        Some(n_hosts * self.list().len() as u64 * self.repeat as u64)
    }

    /// A stride must not map a host onto itself, which needs the host count.
    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (hosts, mtu, tags) = (b.hosts, b.mtu, &mut *b.tags);
        let n = hosts.n_hosts;
        let list = self.list();
        if let Some(i) = list.iter().position(|&s| n < 2 || s % n == 0) {
            let f = if self.strides.is_some() { format!("{field}.strides[{i}]") } else { format!("{field}.stride") };
            return Err(ConfigError::new(f, format!("stride must not be a multiple of the host count {n}")));
        }
        let (tag, size) = (tags.id(&self.tag), self.size.0.bytes(mtu));
        let prio = self.priority;
        let period = self.period.map_or(0, |p| p.0);
        let mut flows = Vec::with_capacity((n as usize) * list.len() * self.repeat as usize);
        for r in 0..self.repeat as u64 {
            let start = self.start.0.saturating_add(period.saturating_mul(r));
            for s in 0..n {
                for &k in &list {
                    let dst = ((s as u64 + k as u64) % n as u64) as u32;
                    flows.push(NewFlow { src: s, dst, size, start, tag, prio, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own });
                }
            }
        }
        if self.sequential {
            // Each host's flows in order: by repeat, then by the list's order.
            flows.sort_by_key(|f| (f.src, f.start));
            return Ok(Source::Workers(Workers::new(flows, n, 1)));
        }
        Ok(Source::List { flows, next: 0 })
    }
}
