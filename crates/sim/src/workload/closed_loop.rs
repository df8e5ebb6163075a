//! Closed-loop messages (AC/DC's trace-driven test, `workloads.md` §9.4): every host runs `threads`
//! application threads; each loops — draw a size from `sizes`, pick a destination at random among the
//! other hosts, send the message, wait until it is delivered, repeat — until the entry has sent `messages`.
//! Each message is a flow record (its FCT is the message's: from the moment it is handed to the transport
//! until the receiver holds its last byte in order).
//!
//! `persistent = true` (the default, as the paper: "an application on each server builds a long-lived TCP
//! connection with every other server", five applications per server) sends each thread's messages to a
//! destination over one connection of that thread's, opened by its first message there (which pays the
//! handshake, if the transport has one) and kept for the run: a message finds the window, RTT estimate
//! and control state its thread's previous messages to that host left (`Carrier::Persistent`; an idle
//! connection restarts its window as `slow_start_after_idle` says). `persistent = false` opens a
//! connection per message, each starting from the initial window. `opening_tag` tags the message that
//! opens each persistent connection (the paper's connections were open before it measured; a reproduction
//! leaves these out).

use super::cdf::{Cdf, BUILTIN_CDFS};
use super::workers::Workers;
use super::{Carrier, HostSet, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::Dur;
use rand::Rng as _;
use serde::Deserialize;

/// `{ kind = "closed_loop", sizes, messages, threads = 5, hosts, start, tag, priority, persistent = true,
/// opening_tag }`.
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
    /// Each thread keeps one connection per destination and sends its messages there over it.
    #[serde(default = "default_persistent")]
    pub persistent: bool,
    /// The tag of each persistent connection's first message (default: `tag`).
    pub opening_tag: Option<String>,
}

fn default_threads() -> u32 {
    5
}

fn default_persistent() -> bool {
    true
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.messages == 0 {
            return Err(ConfigError::new(format!("{field}.messages"), "must be at least 1"));
        }
        if self.threads == 0 || self.threads > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.threads"), "threads per host: 1 to 65536"));
        }
        if self.opening_tag.is_some() && !self.persistent {
            return Err(ConfigError::new(format!("{field}.opening_tag"), "tags the first message of a persistent connection: needs `persistent = true`"));
        }
        Ok(())
    }

    fn resolve_paths(&mut self, fix: &dyn Fn(&mut String)) {
        if !BUILTIN_CDFS.iter().any(|(n, _)| *n == self.sizes) {
            fix(&mut self.sizes);
        }
    }

    fn persistent(&self) -> bool {
        self.persistent
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
        let opening = if self.opening_tag.is_some() { tags.id(&self.opening_tag) } else { tag };
        // The (host, worker, destination) connections opened so far.
        let mut open = std::collections::HashSet::new();
        let carrier = if self.persistent { Carrier::Persistent } else { Carrier::Own };
        let mut left = self.messages;
        let others = members.clone();
        let generator = Box::new(move |src: u32, worker: u32, now| {
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
            let tag = if carrier == Carrier::Persistent && open.insert((src, worker, dst)) { opening } else { tag };
            Some(NewFlow { src, dst, size, start: now, tag, prio, transport: 0, entry: 0, extra_delay: None, stop: None, worker, carrier })
        });
        Ok(Source::Workers(Workers::generated(hosts.n_hosts, &members, self.threads, self.start.0, generator)))
    }
}
