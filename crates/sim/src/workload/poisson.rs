//! Poisson arrivals at a target load, sizes from a CDF (`workloads.md` §7, sampling as §1).
//! `load_reference = "access"` is §7a (HPCC `traffic_gen.py`) over the entry's `src` and `dst` sets: the
//! capacity is the smaller of the senders' and the receivers' host links (`conventions.md`, Load).
//! `"fabric"` is §7c (ECN♯ `large-scale.cc`): the capacity is the racks' uplinks and flows cross racks.
//! One process per entry with a uniform source: with equal host links it is the superposition of §7a's
//! per-host processes, and its one stream keeps the flows identical across compared schemes.

use super::cdf::{Cdf, BUILTIN_CDFS};
use super::{Carrier, HostInfo, HostSet, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::rng::{self, Rng};
use crate::units::{Dur, Time};
use rand::Rng as _;
use serde::Deserialize;

/// What capacity `load` is a fraction of (`conventions.md`, Load).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LoadReference {
    /// §7a: the src or the dst hosts' links, whichever sum is smaller.
    #[default]
    Access,
    /// §7c: the leaf uplinks; inter-rack flows only.
    Fabric,
}

/// `{ kind = "poisson", sizes, load, flows, src, dst, load_reference, start, tag, priority }`; `src` and
/// `dst` default to every host, `flows` is the entry's total.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    /// A built-in CDF name or a CDF file.
    pub sizes: String,
    pub load: f64,
    pub flows: u64,
    pub src: Option<HostSet>,
    pub dst: Option<HostSet>,
    #[serde(default)]
    pub load_reference: LoadReference,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if !(self.load > 0.0 && self.load <= 1.0) {
            return Err(ConfigError::new(format!("{field}.load"), format!("load must be in (0, 1], got {}", self.load)));
        }
        if self.flows == 0 {
            return Err(ConfigError::new(format!("{field}.flows"), "must be at least 1"));
        }
        Ok(())
    }

    fn resolve_paths(&mut self, fix: &dyn Fn(&mut String)) {
        if !BUILTIN_CDFS.iter().any(|(n, _)| *n == self.sizes) {
            fix(&mut self.sizes);
        }
    }

    fn flow_count(&self, _n_hosts: u64) -> Option<u64> {
        Some(self.flows)
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (rng, hosts, tags) = (b.rng.clone(), b.hosts, &mut *b.tags);
        let f = |k: &str| format!("{field}.{k}");
        let cdf = Cdf::load(&self.sizes, &f("sizes"))?;
        let src = hosts_or_all(&self.src, hosts, &f("src"))?;
        let dst = hosts_or_all(&self.dst, hosts, &f("dst"))?;
        let fabric_only = self.load_reference == LoadReference::Fabric;
        let cap: u64 = match self.load_reference {
            LoadReference::Access => {
                let sum = |v: &[u32]| v.iter().fold(0u64, |a, &h| a.saturating_add(hosts.host_rate[h as usize]));
                let (a, b) = (sum(&src), sum(&dst));
                a.min(b)
            }
            LoadReference::Fabric => {
                if hosts.rack.iter().any(|r| r.is_none()) {
                    return Err(ConfigError::new(
                        f("load_reference"),
                        "\"fabric\" needs a topology with racks (leaf_spine or fat_tree); use \"access\"",
                    ));
                }
                let racks = |v: &Vec<u32>| {
                    let mut r: Vec<u32> = v.iter().map(|&h| hosts.rack[h as usize].unwrap()).collect();
                    r.sort();
                    r.dedup();
                    r.iter().fold(0u64, |a, &r| a.saturating_add(hosts.rack_uplink[r as usize]))
                };
                racks(&src).min(racks(&dst))
            }
        };
        let valid = src.iter().any(|&s| {
            dst.iter().any(|&d| s != d && (!fabric_only || hosts.rack[s as usize] != hosts.rack[d as usize]))
        });
        if !valid {
            let msg = "no allowed (src, dst) pair: src and dst must differ (and be in different racks for \"fabric\")";
            return Err(ConfigError::new(f("dst"), msg));
        }
        let mean = cdf.mean();
        if cap == 0 || mean <= 0.0 {
            return Err(ConfigError::new(f("sizes"), "the CDF has a zero mean"));
        }
        // λ = load × capacity / (8 × mean size)  (flows per second; §7a)
        let lambda = self.load * cap as f64 / (8.0 * mean);
        let mut p = Poisson {
            rng,
            cdf,
            mean_gap_ps: 1e12 / lambda,
            remaining: self.flows,
            next_time: self.start.0,
            start: self.start.0,
            src,
            dst,
            fabric_only,
            rack: hosts.rack.clone(),
            tag: tags.id(&self.tag),
            prio: self.priority,
            offered_bytes: 0,
        };
        let g = p.draw_gap();
        p.next_time = self.start.0.saturating_add(g);
        Ok(Source::Poisson(p))
    }
}

/// The hosts of a set (every host when it is left out), each checked to exist.
fn hosts_or_all(set: &Option<HostSet>, hosts: &HostInfo, field: &str) -> Result<Vec<u32>, ConfigError> {
    let v = set.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| (0..hosts.n_hosts).collect());
    for &h in &v {
        hosts.check(h, field)?;
    }
    if v.is_empty() {
        return Err(ConfigError::new(field, "the host set is empty"));
    }
    Ok(v)
}

/// The live process: flows are drawn when the engine reaches them, so a long run holds one pending flow
/// per entry rather than its whole list.
pub struct Poisson {
    pub rng: Rng,
    pub cdf: Cdf,
    /// Mean inter-arrival time in picoseconds (as f64 for the exponential draw).
    pub mean_gap_ps: f64,
    pub remaining: u64,
    pub next_time: Time,
    /// The entry's `start`.
    pub start: Time,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub fabric_only: bool,
    pub rack: Vec<Option<u32>>,
    pub tag: u16,
    pub prio: u8,
    /// Offered bytes, for the measured-load check in run metadata.
    pub offered_bytes: u64,
}

impl Poisson {
    fn draw_gap(&mut self) -> Time {
        // Exponential by inversion; libm keeps it identical across machines.
        let u = 1.0 - rng::unit(&mut self.rng);
        (-libm::log(u) * self.mean_gap_ps) as Time
    }

    /// Start time of the next flow, if any.
    #[inline]
    pub fn peek(&self) -> Option<Time> {
        (self.remaining > 0).then_some(self.next_time)
    }

    /// Take the next flow and draw the gap to the one after it. Draw order (size, src/dst, gap) is part
    /// of the records: changing it changes every run.
    pub fn pop(&mut self) -> NewFlow {
        let f = self.next_flow();
        self.remaining -= 1;
        let gap = self.draw_gap();
        self.next_time = self.next_time.saturating_add(gap);
        f
    }

    fn next_flow(&mut self) -> NewFlow {
        let size = self.cdf.sample(&mut self.rng);
        let (src, dst) = loop {
            let s = self.src[self.rng.gen_range(0..self.src.len())];
            let d = self.dst[self.rng.gen_range(0..self.dst.len())];
            if s == d {
                continue;
            }
            if self.fabric_only && self.rack[s as usize] == self.rack[d as usize] {
                continue;
            }
            break (s, d);
        };
        self.offered_bytes += size;
        NewFlow { src, dst, size, start: self.next_time, tag: self.tag, prio: self.prio, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own }
    }
}
