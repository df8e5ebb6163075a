//! Traffic: what flows a run offers, from which host to which, when. Each `[[traffic]]` kind is one file
//! that owns its config (`Cfg`: keys, defaults, checks) and builds its [`Source`]; adding a kind is that
//! file plus one line in [`TrafficKind`] and its arms below. Traffic draws only from its own random
//! streams (one per entry), so two runs that differ in AQM or transport see identical flows
//! (`conventions.md`, Determinism).

pub mod cdf;
pub mod closed_loop;
pub mod file;
pub mod flows;
pub mod incast;
pub mod jobs;
pub mod permutation;
pub mod poisson;
pub mod shuffle;
pub mod storage;
pub mod stride;
pub mod training;
pub mod workers;

pub use cdf::{Cdf, BUILTIN_CDFS};
pub use poisson::Poisson;

use crate::config::kind::{join_path, kind_enum, split_marked, ConfigError, PATH_MARK};
use crate::rng::{self, Rng};
use crate::units::{Bytes, Dur, Size, Time};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

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
    /// The flow's own extra delay at its sending host (a flow file's `extra_delay` column), replacing
    /// the draw of `host.extra_delay` for this flow (`host/mod.rs` `start_flow` says for which packets).
    pub extra_delay: Option<Time>,
    /// When the application stops writing (the flow ends with what it has sent by then).
    pub stop: Option<Time>,
    /// The worker (application thread) of the sending host that sends it (`workers.rs`; 0 for sources
    /// without workers). A finished flow frees its worker. A jobs source's flow carries its handle here
    /// instead (`jobs.rs`), which tells the source which of its flows finished.
    pub worker: u32,
    /// The connection it goes on.
    pub carrier: Carrier,
}

/// The connection a flow goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// Its own: opened when the flow starts, freed once both ends are done (the flow's transport's
    /// handshake, if any, is the flow's).
    Own,
    /// The persistent connection of its worker to its destination (`closed_loop`, `persistent = true`):
    /// opened by the worker's first message there (with the handshake, if any), never closed; the flow is
    /// the next message written on it, so the connection's window, RTT estimate and control state carry
    /// over from the messages before it (`host/mod.rs`, `Messages`).
    Persistent,
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

impl HostInfo {
    /// The hosts a set names (each checked, errors at `field[i]`), or every host when it is absent.
    pub fn members(&self, set: &Option<HostSet>, field: &str) -> Result<Vec<u32>, ConfigError> {
        let Some(h) = set else { return Ok((0..self.n_hosts).collect()) };
        for (i, &x) in h.0.iter().enumerate() {
            self.check(x, &format!("{field}[{i}]"))?;
        }
        Ok(h.0.clone())
    }

    /// Host `h` exists.
    pub fn check(&self, h: u32, field: &str) -> Result<(), ConfigError> {
        if h >= self.n_hosts {
            let msg = format!("host {h} does not exist (the topology has hosts 0–{})", self.n_hosts - 1);
            return Err(ConfigError::new(field, msg));
        }
        Ok(())
    }
}

/// One traffic source: a fixed list drained in start order, a live Poisson process, flows served by
/// workers at their sending hosts (`workers.rs`), or flows a job model releases as earlier ones finish
/// (`jobs.rs`).
pub enum Source {
    List { flows: Vec<NewFlow>, next: usize },
    /// Flows made as they come due by the kind's own rule (the incast's bursts).
    Generated(Box<dyn Generator>),
    Poisson(Poisson),
    Workers(workers::Workers),
    Jobs(jobs::Jobs),
}

/// A traffic kind's flows made as they come due, in start order, rather than listed when the run is built
/// (`incast.rs`'s bursts): a kind whose flows follow a rule needs no memory per flow before it starts.
/// (`Send`: a run may move to another thread, as the Python front's do.)
pub trait Generator: Send {
    /// Start time of the next flow, if any.
    fn peek(&self) -> Option<Time>;
    /// Take the next flow (its start is `peek()`).
    fn pop(&mut self) -> NewFlow;
    /// Keep only the flows that start in [start, stop) (the entry's `active` window; called once, before
    /// the first `peek`).
    fn window(&mut self, start: Time, stop: Time);
    /// The flows left, the next one among them.
    fn remaining(&self) -> u64;
}

impl Source {
    /// Start time of the next flow, if any.
    pub fn peek(&self) -> Option<Time> {
        match self {
            Source::List { flows, next } => flows.get(*next).map(|f| f.start),
            Source::Generated(g) => g.peek(),
            Source::Poisson(p) => p.peek(),
            Source::Workers(w) => w.peek(),
            Source::Jobs(j) => j.peek(),
        }
    }

    /// Take the next flow (its start is `peek()`).
    pub fn pop(&mut self) -> NewFlow {
        match self {
            Source::List { flows, next } => {
                *next += 1;
                flows[*next - 1]
            }
            Source::Generated(g) => g.pop(),
            Source::Poisson(p) => p.pop(),
            Source::Workers(w) => w.pop(),
            Source::Jobs(j) => j.pop(),
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

    /// Every flow the entry still holds, in start order (a run's end): the rest of its list, or the
    /// rest of its Poisson count drawn as the process would have drawn them; never a flow at or after
    /// the entry's `active.stop`, which the scenario does not define.
    pub fn unstarted(&mut self) -> Vec<NewFlow> {
        if let Source::Workers(w) = &mut self.source {
            let (transport, entry) = (self.transport, self.index);
            return w.unstarted().into_iter().map(|f| NewFlow { transport, entry, ..f }).collect();
        }
        if let Source::Jobs(j) = &mut self.source {
            let (transport, entry) = (self.transport, self.index);
            return j.unstarted().into_iter().filter(|f| f.start < self.stop).map(|f| NewFlow { transport, entry, ..f }).collect();
        }
        let mut v = Vec::new();
        while self.peek().is_some() {
            v.push(self.pop());
        }
        v
    }

}

/// Every traffic entry of the run and how many flows are active.
#[derive(Default)]
pub struct Workload {
    pub sources: Vec<Entry>,
    /// The flows the entries will start at most (each source's count once the build has run), as checked
    /// against [`MAX_FLOWS`].
    pub flows: u64,
    pub active_flows: u64,
    /// The jobs of the entries made of jobs (`jobs.rs`): the `jobs` table.
    pub jobs: Vec<crate::records::JobRow>,
}

impl Workload {
    /// No entry has a flow left to start.
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.sources.iter().all(|s| s.peek().is_none())
    }

    /// One of entry `e`'s flows, from host `src`'s `worker` (a jobs flow: its handle), finished at
    /// `now`. Returns when the entry should look for its next flow (the engine's `Ev::Flow`): now, when a
    /// waiting flow may start (the closed-loop limit let it, or the host's worker took its next); for
    /// jobs, when the first flow the finish released is due.
    pub fn finished(&mut self, e: u32, src: u32, worker: u32, now: Time) -> Option<Time> {
        let entry = &mut self.sources[e as usize];
        entry.in_flight -= 1;
        let blocked = std::mem::take(&mut entry.blocked);
        match &mut entry.source {
            Source::Workers(w) => (w.finished(src, worker, now) | blocked).then_some(now),
            Source::Jobs(j) => {
                let next = j.finished(worker, now, e, &mut self.jobs);
                if blocked {
                    Some(now)
                } else {
                    next
                }
            }
            _ => blocked.then_some(now),
        }
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
    let mut w = Workload::default();
    let mut total = 0u64;
    for (i, t) in traffic.iter().enumerate() {
        let rng = rng::stream(seed, "traffic", i as u64);
        let mut source = t.kind.inner().build(&format!("traffic[{i}]"), &mut Build { rng, hosts, mtu, tags })?;
        let (start, stop) = t.active.map(|a| (a.start.0, a.stop.map_or(Time::MAX, |s| s.0))).unwrap_or((0, Time::MAX));
        match &mut source {
            Source::List { flows, .. } => flows.retain(|f| f.start >= start && f.start < stop),
            Source::Generated(g) => g.window(start, stop),
            Source::Workers(w) => w.retain(|f| f.start >= start && f.start < stop),
            Source::Jobs(j) => {
                j.start = j.start.max(start);
                j.begin(i as u32, &mut w.jobs);
            }
            Source::Poisson(p) => {
                if start > p.start {
                    // Arrivals begin at the window's start: shift the whole process.
                    p.next_time = p.next_time.saturating_add(start - p.start);
                }
            }
        }
        // Flow ids are 32-bit: the flows of every entry together must number at most 2^32. (The memory
        // estimate counts them before building where the config tells; a file's rows are known here.)
        total = total.saturating_add(match &source {
            Source::List { flows, .. } => flows.len() as u64,
            Source::Generated(g) => g.remaining(),
            Source::Poisson(p) => p.remaining,
            Source::Workers(w) => w.remaining(),
            Source::Jobs(j) => j.remaining(),
        });
        if total > MAX_FLOWS {
            return Err(too_many_flows(&format!("traffic[{i}]"), total));
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
    w.flows = total;
    Ok(w)
}

/// Every entry that sends over persistent connections has a transport that can carry them (one that
/// accepts more data after it started, `Resolved::appends`).
pub fn check_carriers(traffic: &[Traffic], transports: &[crate::transport::Params], transport_of: &[u16]) -> Result<(), ConfigError> {
    for (i, t) in traffic.iter().enumerate() {
        let p = &transports[transport_of[i] as usize];
        if t.kind.inner().persistent() && !p.appends() {
            let msg = format!("transport `{}` cannot carry persistent connections (it takes no data after it started); set `persistent = false`", p.label());
            return Err(ConfigError::new(format!("traffic[{i}].persistent"), msg));
        }
    }
    Ok(())
}

/// Flow ids are `u32`: a run has at most this many flows.
pub const MAX_FLOWS: u64 = 1 << 32;

/// The error for a scenario whose traffic defines more flows than there are flow ids; `field` is the
/// entry where the count passes the limit.
pub fn too_many_flows(field: &str, total: u64) -> ConfigError {
    let msg = format!("the traffic defines {total} flows by here, more than the {MAX_FLOWS} flow ids (32-bit); define fewer flows or split the run");
    ConfigError::new(field, msg)
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

/// Host lists or ranges: `3`, `[0, 1, 2]`, `"0-6"` (inclusive), or a list mixing both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSet(pub Vec<u32>);

fn parse_range(s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("`{s}` is not a host range; write \"A-B\" (inclusive) or a list of host numbers");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    if b < a {
        return Err(format!("host range `{s}` is empty (end before start)"));
    }
    Ok((a..=b).collect())
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HostSet;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a host number, a range \"A-B\", or a list of them")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HostSet, E> {
                u32::try_from(v).map(|v| HostSet(vec![v])).map_err(|_| E::custom("host numbers are ≥ 0"))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<HostSet, E> {
                parse_range(s).map(HostSet).map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<HostSet, A::Error> {
                let mut out = Vec::new();
                while let Some(h) = s.next_element::<HostSet>()? {
                    out.extend(h.0);
                }
                Ok(HostSet(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// One `[[traffic]]` entry: its kind with the kind's keys, and the keys every kind takes.
#[derive(Debug, Clone)]
pub struct Traffic {
    pub kind: TrafficKind,
    /// Keys merged over `host.transport` for this entry's flows.
    pub transport: Option<toml::Table>,
    /// The entry generates flows only inside this window.
    pub active: Option<Active>,
    /// At most this many of the entry's flows run at once; the next starts when one finishes.
    pub max_in_flight: Option<u32>,
}

/// `active = { start, stop }` of a traffic entry.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Active {
    #[serde(default = "zero_time")]
    pub start: Dur,
    pub stop: Option<Dur>,
}

impl<'de> Deserialize<'de> for Traffic {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = toml::Table::deserialize(d)?;
        let mark = |k: &str, e: String| {
            let (inner, msg) = split_marked(&e);
            de::Error::custom(format!("{}{}{}{}", PATH_MARK, join_path(k, &inner), PATH_MARK, msg))
        };
        let transport = match t.remove("transport") {
            None => None,
            Some(toml::Value::Table(x)) => Some(x),
            Some(_) => return Err(mark("transport", "must be a table such as { cc = \"dctcp\" }".into())),
        };
        let active = match t.remove("active") {
            None => None,
            Some(v) => Some(Active::deserialize(v).map_err(|e| mark("active", e.to_string()))?),
        };
        let max_in_flight = match t.remove("max_in_flight") {
            None => None,
            Some(v) => Some(u32::deserialize(v).map_err(|e| mark("max_in_flight", e.to_string()))?),
        };
        let kind = TrafficKind::deserialize(toml::Value::Table(t)).map_err(de::Error::custom)?;
        Ok(Traffic { kind, transport, active, max_in_flight })
    }
}

impl Traffic {
    /// The checks every kind shares, then the kind's own; `field` is the entry's path (`traffic[i]`).
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if let Some(a) = &self.active {
            if a.stop.is_some_and(|s| s.0 <= a.start.0) {
                return Err(ConfigError::new(format!("{field}.active.stop"), "must be later than active.start"));
            }
        }
        if self.max_in_flight == Some(0) {
            let msg = "must be at least 1 (leave it out for no limit)";
            return Err(ConfigError::new(format!("{field}.max_in_flight"), msg));
        }
        self.kind.inner().validate(field)
    }

    /// Apply `fix` (relative → the scenario file's folder) to the files this entry reads.
    pub fn resolve_paths(&mut self, fix: &dyn Fn(&mut String)) {
        self.kind.inner_mut().resolve_paths(fix)
    }

    /// Flows the entry defines on `n_hosts` hosts, if its config tells without building (see
    /// [`Kind::flow_count`]).
    pub fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        self.kind.inner().flow_count(n_hosts)
    }
}

fn zero_time() -> Dur {
    Dur(0)
}

/// Flow sizes are checked before the topology is known; a size in packets counts as non-zero unless it
/// is zero packets, whatever the MTU.
fn check_size(size: &Bytes, field: &str) -> Result<(), ConfigError> {
    if matches!(size.0, Size::Bytes(0) | Size::Packets(0)) {
        return Err(ConfigError::new(field, "flow size must be greater than zero"));
    }
    Ok(())
}

/// What a traffic kind's file provides: its checks (before the topology is known), the files it reads,
/// and its flow source.
pub trait Kind {
    fn validate(&self, _field: &str) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Apply `fix` (relative → the scenario file's folder) to the files this kind reads.
    fn resolve_paths(&mut self, _fix: &dyn Fn(&mut String)) {}
    /// How many flows the entry defines on `n_hosts` hosts, counted without making them (the memory
    /// estimate and the 32-bit flow ids need it before anything is built); `None` when only building
    /// tells (a file's rows).
    fn flow_count(&self, _n_hosts: u64) -> Option<u64> {
        None
    }
    /// The entry's source; `field` is the entry's path for errors.
    fn build(&self, field: &str, b: &mut Build) -> Result<Source, ConfigError>;
    /// Whether its flows go on persistent connections (`Carrier::Persistent`): its transport must accept
    /// more data after it started.
    fn persistent(&self) -> bool {
        false
    }
}

/// What a builder may use: the entry's own traffic stream, the hosts, the MTU and the tag table.
pub struct Build<'a> {
    pub rng: Rng,
    pub hosts: &'a HostInfo,
    pub mtu: u64,
    pub tags: &'a mut Tags,
}

/// The registry: one line per traffic kind (`Variant = "kind" => module`) makes the module's `Cfg` a
/// `kind` of `[[traffic]]` and routes checks, paths and building to it.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $module:ident ),* $(,)?) => {
        kind_enum! {
            /// A `[[traffic]]` entry's kind with its keys.
            #[derive(Debug, Clone)]
            pub enum TrafficKind {
                $( $variant = $kind ($module::Cfg) ),*
            }
        }

        impl TrafficKind {
            fn inner(&self) -> &dyn Kind {
                match self {
                    $( TrafficKind::$variant(c) => c, )*
                }
            }
            fn inner_mut(&mut self) -> &mut dyn Kind {
                match self {
                    $( TrafficKind::$variant(c) => c, )*
                }
            }
        }
    };
}

registry! {
    Poisson = "poisson" => poisson,
    Incast = "incast" => incast,
    Stride = "stride" => stride,
    Shuffle = "shuffle" => shuffle,
    ClosedLoop = "closed_loop" => closed_loop,
    Storage = "storage" => storage,
    Training = "training" => training,
    Permutation = "permutation" => permutation,
    Flows = "flows" => flows,
    File = "file" => file,
}
