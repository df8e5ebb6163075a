//! Traffic: flow-size CDFs, Poisson arrivals at a target load, incast, stride, permutation, flow lists and
//! flow files. Traffic draws only from its own random streams, so two runs that differ in AQM or transport
//! see identical flows.

pub mod cdf;
pub mod file;

pub use cdf::{Cdf, BUILTIN_CDFS};
use file::{parse_dcnlab, parse_hpcc};

use crate::config::{ConfigError, FlowFileFormat, HostSet, LoadReference, Traffic, TrafficKind};
use crate::rng::{self, Rng};
use crate::units::Time;
use rand::Rng as _;

/// A flow as traffic hands it to the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewFlow {
    pub src: u32,
    pub dst: u32,
    /// Payload bytes; `u64::MAX` for a long-lived flow.
    pub size: u64,
    pub start: Time,
    pub tag: u16,
    pub prio: u8,
    /// Index of the flow's transport (`Scenario::transports`); set by its traffic entry.
    pub transport: u16,
    /// The traffic entry that made it.
    pub entry: u32,
}

/// What traffic needs to know about the topology.
pub struct HostInfo {
    pub n_hosts: u32,
    pub host_rate: Vec<u64>,
    /// Rack (leaf/edge switch) of each host, if the topology has racks.
    pub rack: Vec<Option<u32>>,
    /// Uplink capacity of each rack (bps).
    pub rack_uplink: Vec<u64>,
}

/// One traffic source: a fixed list drained in start order, or a live Poisson process.
pub enum Source {
    List { flows: Vec<NewFlow>, next: usize },
    Poisson(Poisson),
}

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
        NewFlow { src, dst, size, start: self.next_time, tag: self.tag, prio: self.prio, transport: 0, entry: 0 }
    }
}

impl Source {
    /// Start time of the next flow, if any.
    pub fn peek(&self) -> Option<Time> {
        match self {
            Source::List { flows, next } => flows.get(*next).map(|f| f.start),
            Source::Poisson(p) => (p.remaining > 0).then_some(p.next_time),
        }
    }

    /// Take the next flow (its start is `peek()`).
    pub fn pop(&mut self) -> NewFlow {
        match self {
            Source::List { flows, next } => {
                *next += 1;
                flows[*next - 1]
            }
            Source::Poisson(p) => {
                let f = p.next_flow();
                p.remaining -= 1;
                let gap = p.draw_gap();
                p.next_time = p.next_time.saturating_add(gap);
                f
            }
        }
    }
}

/// A traffic entry at run time: its source, the transport of its flows, its active window and its
/// closed-loop limit.
pub struct Entry {
    pub source: Source,
    pub index: u32,
    pub transport: u16,
    /// No flow starts at or after this time.
    pub stop: Time,
    /// Most flows of this entry running at once (`u32::MAX`: no limit).
    pub cap: u32,
    pub in_flight: u32,
    /// The next flow waits for one of this entry's flows to finish.
    pub blocked: bool,
}

impl Entry {
    /// Start time of the next flow, if any.
    #[inline]
    pub fn peek(&self) -> Option<Time> {
        self.source.peek().filter(|&t| t < self.stop)
    }

    /// Whether the next flow may start now (the closed-loop limit); if not, the entry waits.
    pub fn may_start(&mut self) -> bool {
        self.blocked = self.in_flight >= self.cap;
        !self.blocked
    }

    pub fn pop(&mut self) -> NewFlow {
        self.in_flight += 1;
        let mut f = self.source.pop();
        f.transport = self.transport;
        f.entry = self.index;
        f
    }

    /// One of this entry's flows finished; returns true when a waiting flow may now start.
    pub fn finished(&mut self) -> bool {
        self.in_flight -= 1;
        std::mem::take(&mut self.blocked)
    }
}

/// Every traffic entry of the run and how many flows are active.
#[derive(Default)]
pub struct Workload {
    pub sources: Vec<Entry>,
    pub active_flows: u64,
}

impl Workload {
    /// No entry has a flow left to start.
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.sources.iter().all(|s| s.peek().is_none())
    }
}

/// Build every traffic entry: its source, with the transport index of each entry (`Scenario::transports`).
pub fn build(
    traffic: &[Traffic],
    seed: u64,
    hosts: &HostInfo,
    mtu: u64,
    tags: &mut Tags,
    transport_of: &[u16],
) -> Result<Workload, ConfigError> {
    let sources = build_sources(traffic, seed, hosts, mtu, tags)?;
    let mut w = Workload::default();
    for (i, (mut source, t)) in sources.into_iter().zip(traffic).enumerate() {
        let (start, stop) = t.active.map(|a| (a.start.0, a.stop.map_or(Time::MAX, |s| s.0))).unwrap_or((0, Time::MAX));
        match &mut source {
            Source::List { flows, .. } => flows.retain(|f| f.start >= start && f.start < stop),
            Source::Poisson(p) => {
                if start > p.start {
                    // Arrivals begin at the window's start: shift the whole process.
                    p.next_time += start - p.start;
                }
            }
        }
        w.sources.push(Entry {
            source,
            index: i as u32,
            transport: transport_of[i],
            stop,
            cap: t.max_in_flight.unwrap_or(u32::MAX),
            in_flight: 0,
            blocked: false,
        });
    }
    Ok(w)
}

/// Interned flow tags: id 0 is the empty tag.
#[derive(Debug, Clone, Default)]
pub struct Tags(pub Vec<String>);

impl Tags {
    pub fn id(&mut self, t: &Option<String>) -> u16 {
        let Some(t) = t else { return 0 };
        if self.0.is_empty() {
            self.0.push(String::new());
        }
        if let Some(i) = self.0.iter().position(|x| x == t) {
            return i as u16;
        }
        self.0.push(t.clone());
        (self.0.len() - 1) as u16
    }
    pub fn name(&self, id: u16) -> &str {
        self.0.get(id as usize).map(|s| s.as_str()).unwrap_or("")
    }
}

fn check_host(h: u32, n: u32, field: &str) -> Result<(), ConfigError> {
    if h >= n {
        return Err(ConfigError::new(field, format!("host {h} does not exist (the topology has hosts 0–{})", n - 1)));
    }
    Ok(())
}

/// Build every traffic source of the scenario.
pub fn build_sources(
    traffic: &[Traffic],
    seed: u64,
    hosts: &HostInfo,
    mtu: u64,
    tags: &mut Tags,
) -> Result<Vec<Source>, ConfigError> {
    let n = hosts.n_hosts;
    let all: Vec<u32> = (0..n).collect();
    let mut out = Vec::new();
    for (i, t) in traffic.iter().enumerate() {
        let f = |k: &str| format!("traffic[{i}].{k}");
        let set = |s: &Option<HostSet>, k: &str| -> Result<Vec<u32>, ConfigError> {
            let v = s.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| all.clone());
            for &h in &v {
                check_host(h, n, &f(k))?;
            }
            if v.is_empty() {
                return Err(ConfigError::new(f(k), "the host set is empty"));
            }
            Ok(v)
        };
        let mut rng = rng::stream(seed, "traffic", i as u64);
        match &t.kind {
            TrafficKind::Poisson { sizes, load, flows, src, dst, load_reference, start, tag, priority } => {
                let cdf = Cdf::load(sizes, &f("sizes"))?;
                let src = set(src, "src")?;
                let dst = set(dst, "dst")?;
                let fabric_only = *load_reference == LoadReference::Fabric;
                let cap: u64 = match load_reference {
                    LoadReference::Access => {
                        let a: u64 = src.iter().map(|&h| hosts.host_rate[h as usize]).sum();
                        let b: u64 = dst.iter().map(|&h| hosts.host_rate[h as usize]).sum();
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
                            r.iter().map(|&r| hosts.rack_uplink[r as usize]).sum::<u64>()
                        };
                        racks(&src).min(racks(&dst))
                    }
                };
                let valid = src.iter().any(|&s| {
                    dst.iter().any(|&d| s != d && (!fabric_only || hosts.rack[s as usize] != hosts.rack[d as usize]))
                });
                if !valid {
                    return Err(ConfigError::new(f("dst"), "no allowed (src, dst) pair: src and dst must differ (and be in different racks for \"fabric\")"));
                }
                let mean = cdf.mean();
                if cap == 0 || mean <= 0.0 {
                    return Err(ConfigError::new(f("sizes"), "the CDF has a zero mean"));
                }
                // λ = load × capacity / (8 × mean size)  (flows per second)
                let lambda = load * cap as f64 / (8.0 * mean);
                let mean_gap_ps = 1e12 / lambda;
                let mut p = Poisson {
                    rng,
                    cdf,
                    mean_gap_ps,
                    remaining: *flows,
                    next_time: start.0,
                    start: start.0,
                    src,
                    dst,
                    fabric_only,
                    rack: hosts.rack.clone(),
                    tag: tags.id(tag),
                    prio: *priority,
                    offered_bytes: 0,
                };
                let g = p.draw_gap();
                p.next_time = start.0 + g;
                out.push(Source::Poisson(p));
            }
            TrafficKind::Incast { senders, receiver, size, at, flows: count, size_max, repeat, period, tag, priority } => {
                check_host(*receiver, n, &f("receiver"))?;
                for &s in &senders.0 {
                    check_host(s, n, &f("senders"))?;
                    if s == *receiver {
                        return Err(ConfigError::new(f("senders"), format!("host {s} is also the receiver")));
                    }
                }
                let lo = size.0.bytes(mtu);
                let hi = match size_max {
                    None => lo,
                    Some(m) => {
                        let hi = m.0.bytes(mtu);
                        if hi < lo || hi == u64::MAX {
                            return Err(ConfigError::new(f("size_max"), format!("size_max must be a finite size ≥ size ({lo} B)")));
                        }
                        hi
                    }
                };
                if senders.0.is_empty() {
                    return Err(ConfigError::new(f("senders"), "an incast needs at least one sender"));
                }
                if *count == Some(0) {
                    return Err(ConfigError::new(f("flows"), "an incast needs at least one flow"));
                }
                let per_burst = count.unwrap_or(senders.0.len() as u32) as usize;
                let tag = tags.id(tag);
                let mut flows = Vec::new();
                for r in 0..*repeat {
                    let t0 = at.0 + r as u64 * period.map(|p| p.0).unwrap_or(0);
                    for k in 0..per_burst {
                        let s = senders.0[k % senders.0.len()];
                        let size = if hi > lo { rng.gen_range(lo..=hi) } else { lo };
                        flows.push(NewFlow { src: s, dst: *receiver, size, start: t0, tag, prio: *priority, transport: 0, entry: 0 });
                    }
                }
                out.push(Source::List { flows, next: 0 });
            }
            TrafficKind::Stride { stride, size, start, tag, priority } => {
                if n < 2 || stride % n == 0 {
                    return Err(ConfigError::new(f("stride"), format!("stride must not be a multiple of the host count {n}")));
                }
                let tag = tags.id(tag);
                let flows = (0..n)
                    .map(|s| NewFlow { src: s, dst: (s + stride) % n, size: size.0.bytes(mtu), start: start.0, tag, prio: *priority, transport: 0, entry: 0 })
                    .collect();
                out.push(Source::List { flows, next: 0 });
            }
            TrafficKind::Permutation { size, start, tag, priority } => {
                if n < 2 {
                    return Err(ConfigError::new(f("kind"), "a permutation needs at least 2 hosts"));
                }
                // Sattolo's algorithm: a single cycle, so no host sends to itself.
                let mut perm: Vec<u32> = (0..n).collect();
                for k in (1..n as usize).rev() {
                    let j = rng.gen_range(0..k);
                    perm.swap(k, j);
                }
                let tag = tags.id(tag);
                let flows = (0..n)
                    .map(|s| NewFlow { src: s, dst: perm[s as usize], size: size.0.bytes(mtu), start: start.0, tag, prio: *priority, transport: 0, entry: 0 })
                    .collect();
                out.push(Source::List { flows, next: 0 });
            }
            TrafficKind::Flows { list } => {
                let mut flows = Vec::new();
                for (j, fl) in list.iter().enumerate() {
                    let ff = |k: &str| format!("traffic[{i}].list[{j}].{k}");
                    check_host(fl.src, n, &ff("src"))?;
                    check_host(fl.dst, n, &ff("dst"))?;
                    if fl.src == fl.dst {
                        return Err(ConfigError::new(ff("dst"), "src and dst must differ"));
                    }
                    flows.push(NewFlow {
                        src: fl.src,
                        dst: fl.dst,
                        size: fl.size.0.bytes(mtu),
                        start: fl.start.0,
                        tag: tags.id(&fl.tag),
                        prio: fl.priority,
                        transport: 0,
                        entry: 0,
                    });
                }
                flows.sort_by_key(|f| f.start);
                out.push(Source::List { flows, next: 0 });
            }
            TrafficKind::File { path, format, tag } => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| ConfigError::new(f("path"), format!("cannot read flow file `{path}`: {e}")))?;
                let tag = tags.id(tag);
                let mut flows = match format {
                    FlowFileFormat::Hpcc => parse_hpcc(&text, tag),
                    FlowFileFormat::Dcnlab => parse_dcnlab(&text, tag, tags),
                }
                .map_err(|e| ConfigError::new(f("path"), format!("flow file `{path}`: {e}")))?;
                for (j, fl) in flows.iter().enumerate() {
                    if fl.src >= n || fl.dst >= n || fl.src == fl.dst {
                        return Err(ConfigError::new(
                            f("path"),
                            format!("flow file `{path}`, flow {j}: endpoints {} → {} do not exist or are equal (hosts 0–{})", fl.src, fl.dst, n - 1),
                        ));
                    }
                }
                flows.sort_by_key(|f| f.start);
                out.push(Source::List { flows, next: 0 });
            }
        }
    }
    Ok(out)
}
