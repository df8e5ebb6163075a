//! Closed-loop messages (AC/DC's trace-driven test, `workloads.md` §9.4): every host runs `threads`
//! application threads; each loops — draw a size from `sizes`, pick a destination at random among the
//! other hosts, send the message, wait until it is delivered, repeat — until the entry has sent `messages`.
//! Each message is a flow record (its FCT is the message's). The paper sends them over persistent
//! connections; here each message opens its own connection with the entry's transport (persistent
//! connections are planned), so a transport with `handshake = true` pays one RTT per message.

use super::cdf::{Cdf, BUILTIN_CDFS};
use super::workers::Workers;
use super::{HostSet, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::Dur;
use rand::Rng as _;
use serde::Deserialize;

/// `{ kind = "closed_loop", sizes, messages, threads = 5, hosts, start, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub sizes: String,
    /// Messages of the whole entry.
    pub messages: u64,
    #[serde(default = "default_threads")]
    pub threads: u32,
    /// The hosts that run threads and receive (default: all).
    pub hosts: Option<HostSet>,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

fn default_threads() -> u32 {
    5
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.messages == 0 {
            return Err(ConfigError::new(format!("{field}.messages"), "must be at least 1"));
        }
        if self.threads == 0 || self.threads > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.threads"), "threads per host: 1 to 65536"));
        }
        Ok(())
    }

    fn resolve_paths(&mut self, fix: &dyn Fn(&mut String)) {
        if !BUILTIN_CDFS.iter().any(|(n, _)| *n == self.sizes) {
            fix(&mut self.sizes);
        }
    }

    fn flow_count(&self, _n_hosts: u64) -> Option<u64> {
        Some(self.messages)
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (mut rng, hosts, tags) = (b.rng.clone(), b.hosts, &mut *b.tags);
        let cdf = Cdf::load(&self.sizes, &format!("{field}.sizes"))?;
        let members = hosts.members(&self.hosts, &format!("{field}.hosts"))?;
        if members.len() < 2 {
            return Err(ConfigError::new(format!("{field}.hosts"), "closed-loop messages need at least 2 hosts"));
        }
        let (tag, prio) = (tags.id(&self.tag), self.priority);
        let mut left = self.messages;
        let others = members.clone();
        let generator = Box::new(move |src: u32, now| {
            if left == 0 {
                return None;
            }
            left -= 1;
            let size = cdf.sample(&mut rng);
            let dst = loop {
                let d = others[rng.gen_range(0..others.len())];
                if d != src {
                    break d;
                }
            };
            Some(NewFlow { src, dst, size, start: now, tag, prio, transport: 0, entry: 0, extra_delay: None, stop: None })
        });
        Ok(Source::Workers(Workers::generated(hosts.n_hosts, &members, self.threads, self.start.0, generator)))
    }
}
