//! The scenario schema. These serde types are the single source of truth for scenario files; the Python
//! front hands TOML text (or a dict turned into TOML) to [`Scenario::from_toml`]. Names, units and defaults
//! follow `conventions.md`. Every struct denies unknown keys, and every error names the field path.

pub mod kind;
pub mod source;

pub use kind::ConfigError;
pub(crate) use kind::{kind_enum, tagged_enum};
use kind::{join_path, split_marked};
use crate::aqm::AqmCfg;
use crate::host::delay::DelayCfg;
use crate::transport::TransportCfg;
use crate::units::{Bytes, Dur, Rate, Size, Time};
use crate::workload::Traffic;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub stop: Stop,
    /// Flows that start before `warmup` are simulated but left out of summaries.
    #[serde(default)]
    pub warmup: Option<Dur>,
    pub topology: Topology,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub host: HostCfg,
    #[serde(default)]
    pub traffic: Vec<Traffic>,
    #[serde(default)]
    pub record: RecordCfg,
}

fn default_name() -> String {
    "unnamed".into()
}
fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Stop at this simulated time.
    pub time: Option<Dur>,
    /// Stop when every generated flow has finished…
    #[serde(default)]
    pub all_flows_done: bool,
    /// …or at this time cap, whichever comes first.
    pub max_time: Option<Dur>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub rate: Rate,
    pub delay: Dur,
    /// Random per-packet drop probability.
    #[serde(default)]
    pub loss: f64,
}

tagged_enum! {
    #[derive(Debug, Clone)]
    pub enum Topology {
        /// N hosts on one switch (the papers' testbeds).
        Star = "star" { hosts: u32, link: LinkCfg },
        /// `left` hosts — switch — bottleneck — switch — `right` hosts.
        Dumbbell = "dumbbell" { left: u32, right: u32, host_link: LinkCfg, bottleneck_link: LinkCfg },
        /// Two-tier Clos: every leaf connects to every spine.
        LeafSpine = "leaf_spine" { spines: u32, leaves: u32, hosts_per_leaf: u32, host_link: LinkCfg, fabric_link: LinkCfg },
        /// k-ary fat-tree (k even): k³/4 hosts.
        FatTree = "fat_tree" { k: u32, link: LinkCfg },
        /// Explicit nodes and links from a TOML file (see README).
        File = "file" { path: String },
    }
}

/// The explicit topology file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<FileLink>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLink {
    /// Node names: `h<i>` for host i, `s<j>` for switch j.
    pub a: String,
    pub b: String,
    pub rate: Rate,
    pub delay: Dur,
    #[serde(default)]
    pub loss: f64,
}

/// One spec for every queue, or a list with one per queue.
#[derive(Debug, Clone)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Default> Default for OneOrMany<T> {
    fn default() -> Self {
        OneOrMany::One(T::default())
    }
}

impl<T: Clone> OneOrMany<T> {
    pub fn get(&self, i: usize) -> T {
        match self {
            OneOrMany::One(t) => t.clone(),
            OneOrMany::Many(v) => v[i.min(v.len() - 1)].clone(),
        }
    }
    pub fn len(&self) -> Option<usize> {
        match self {
            OneOrMany::One(_) => None,
            OneOrMany::Many(v) => Some(v.len()),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a table or a list of tables")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(m)).map(OneOrMany::One)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(de::value::SeqAccessDeserializer::new(s)).map(OneOrMany::Many)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

tagged_enum! {
    #[derive(Debug, Clone)]
    pub enum SchedulerCfg {
        /// Strict priority: queue 0 first.
        Sp = "sp" {},
        /// Deficit weighted round robin, quantum = weight × MTU.
        Dwrr = "dwrr" { weights: Vec<u32> },
    }
}

impl Default for SchedulerCfg {
    fn default() -> Self {
        SchedulerCfg::Sp {}
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Ecmp {
    /// A seeded hash of the flow's five-tuple picks among the equal-cost ports.
    #[default]
    Flow,
    /// Every packet picks anew (spraying).
    Packet,
    /// Static destination-modulo routing (InfiniBand's D-mod-k on fat-trees and leaf-spines): a switch at
    /// tier t going up takes port (d / D_t) mod k of its k equal-cost ports, with D_t the product of the
    /// up-port counts of the tiers below (`sim/build.rs` `d_mod_k`).
    DModK,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    /// Shared buffer per switch, with dynamic-threshold admission.
    pub buffer: Option<Bytes>,
    /// Dynamic-threshold alpha: a queue may hold up to alpha × (free shared buffer).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Static limit per egress port.
    pub port_buffer: Option<Bytes>,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default = "default_queues")]
    pub queues: u32,
    #[serde(default)]
    pub scheduler: SchedulerCfg,
    #[serde(default)]
    pub aqm: OneOrMany<AqmCfg>,
    #[serde(default)]
    pub ecmp: Ecmp,
    /// A controller that changes AQM parameters while the run goes on.
    pub controller: Option<crate::control::ControllerCfg>,
    /// Lossless priorities with PFC (`net/pfc.rs`); absent = every priority is lossy.
    pub pfc: Option<crate::net::pfc::PfcCfg>,
    /// InfiniBand credit flow control (`net/credit.rs`), instead of PFC.
    pub credit: Option<crate::net::credit::CreditCfg>,
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer: None,
            alpha: default_alpha(),
            port_buffer: None,
            mtu: default_mtu(),
            queues: default_queues(),
            scheduler: SchedulerCfg::Sp {},
            aqm: OneOrMany::default(),
            ecmp: Ecmp::Flow,
            controller: None,
            pfc: None,
            credit: None,
        }
    }
}

fn default_alpha() -> f64 {
    1.0
}
fn default_mtu() -> u32 {
    1500
}
fn default_queues() -> u32 {
    1
}

/// Delayed-ACK setting: an ACK every `n` full segments (1 = every segment), or `true` (= 2) / `false` (= 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelAck(pub u32);

impl<'de> Deserialize<'de> for DelAck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DelAck;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "true, false, or the number of segments per ACK (1 = every segment)")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<DelAck, E> {
                Ok(DelAck(if b { 2 } else { 1 }))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DelAck, E> {
                if (1..=64).contains(&v) {
                    Ok(DelAck(v as u32))
                } else {
                    Err(E::custom("delayed_ack must be between 1 and 64 segments per ACK"))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A transport table as written, kept so that a `[[traffic]]` entry's `transport` keys can be merged
/// over it (conventions.md), and its parsed form.
#[derive(Debug, Clone, Default)]
pub struct TransportSpec {
    pub table: toml::Table,
    pub cfg: TransportCfg,
}

impl<'de> Deserialize<'de> for TransportSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(d)?;
        let cfg = TransportCfg::deserialize(toml::Value::Table(table.clone())).map_err(de::Error::custom)?;
        Ok(TransportSpec { table, cfg })
    }
}

impl TransportSpec {
    /// The transport of a traffic entry: its own keys merged over these (a key it leaves out is
    /// inherited; a different `kind` inherits nothing). `field` names the entry's table for errors.
    pub fn merged(&self, over: &toml::Table, field: &str) -> Result<TransportCfg, ConfigError> {
        let mut t = match (over.get("kind"), self.table.get("kind")) {
            (Some(a), Some(b)) if a != b => toml::Table::new(),
            (Some(_), None) => toml::Table::new(),
            _ => self.table.clone(),
        };
        if t.is_empty() && over.get("kind").is_none() {
            t.insert("kind".into(), toml::Value::String(self.cfg.kind().into()));
        }
        for (k, v) in over {
            t.insert(k.clone(), v.clone());
        }
        let e = match serde_path_to_error::deserialize::<_, TransportCfg>(toml::Value::Table(t)) {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        let outer = e.path().to_string();
        let (inner, msg) = split_marked(&e.into_inner().to_string());
        // The toml crate may append "in `key`" context on later lines; the field path already says it.
        let msg = msg.trim().lines().next().unwrap_or("").trim().to_string();
        Err(ConfigError::new(join_path(field, &join_path(&outer, &inner)), msg))
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    /// The default transport of every traffic entry.
    #[serde(default)]
    pub transport: TransportSpec,
    pub extra_delay: Option<DelayCfg>,
    /// How a host's NIC picks the next packet.
    #[serde(default)]
    pub nic: crate::host::nic::NicCfg,
    /// A shim between the host's transports and its NIC that sees every packet; absent = none.
    pub vswitch: Option<crate::host::vswitch::VSwitchCfg>,
    /// PIAS tagging at the sender (Bai et al., NSDI 2015).
    pub pias: Option<PiasCfg>,
}

/// PIAS: a flow's packets go to queue k once the flow has sent `thresholds[k-1]` bytes (multi-level
/// feedback queue, strict priority at the switches). ACKs go to queue 0.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiasCfg {
    pub thresholds: Vec<Bytes>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PortRef {
    /// Node name, e.g. `sw0`, `leaf3`, `h5`.
    pub node: String,
    pub port: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueSel {
    All,
    Busiest,
    List(Vec<PortRef>),
}

impl Default for QueueSel {
    fn default() -> Self {
        QueueSel::Busiest
    }
}

impl<'de> Deserialize<'de> for QueueSel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueSel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "\"all\", \"busiest\" or a list of {{ node, port }}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<QueueSel, E> {
                match s {
                    "all" => Ok(QueueSel::All),
                    "busiest" => Ok(QueueSel::Busiest),
                    _ => Err(E::custom(format!("unknown queue selection `{s}`; use \"all\", \"busiest\" or a list of {{ node, port }}"))),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<QueueSel, A::Error> {
                Vec::<PortRef>::deserialize(de::value::SeqAccessDeserializer::new(s)).map(QueueSel::List)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordCfg {
    /// Queue samples every interval (none: no queue samples).
    pub queue_sample_interval: Option<Dur>,
    #[serde(default)]
    pub queues: QueueSel,
    /// How many ports `"busiest"` keeps.
    #[serde(default = "default_busiest")]
    pub busiest: u32,
    /// Link utilisation samples every interval (default: the queue sample interval).
    pub link_sample_interval: Option<Dur>,
    /// Queue and link samples only from this time (default 0) …
    #[serde(default = "zero_time")]
    pub sample_from: Dur,
    /// … until this time (default: the end of the run).
    pub sample_until: Option<Dur>,
    /// Write queue samples to this CSV file as they are taken instead of holding them in memory.
    pub queue_stream: Option<String>,
    #[serde(default)]
    pub trace_flows: Vec<u64>,
    /// Also trace every flow of the traffic with these tags (ids are not known before the run).
    #[serde(default)]
    pub trace_tags: Vec<String>,
    #[serde(default = "default_trace_interval")]
    pub trace_interval: Dur,
    /// Record every RTT sample of the traced flows (`rtt_samples`).
    #[serde(default)]
    pub rtt_samples: bool,
    /// Record every PFC frame sent and received (`pauses`) when the switches run PFC.
    #[serde(default = "yes")]
    pub pauses: bool,
    /// Record every controller decision (`controller_steps`); `false` keeps the memory of long runs with
    /// many agents flat (432 ACC agents write 864 000 rows per simulated second).
    #[serde(default = "yes")]
    pub controller_steps: bool,
}

fn yes() -> bool {
    true
}

fn zero_time() -> Dur {
    Dur(0)
}
fn default_busiest() -> u32 {
    8
}
fn default_trace_interval() -> Dur {
    Dur(10 * crate::units::US)
}

impl Default for RecordCfg {
    fn default() -> Self {
        RecordCfg {
            queue_sample_interval: None,
            queues: QueueSel::Busiest,
            busiest: default_busiest(),
            link_sample_interval: None,
            sample_from: zero_time(),
            sample_until: None,
            queue_stream: None,
            trace_flows: vec![],
            trace_tags: vec![],
            trace_interval: default_trace_interval(),
            rtt_samples: false,
            pauses: true,
            controller_steps: true,
        }
    }
}

impl Scenario {
    /// Parse a scenario from TOML text; errors name the field path.
    pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
        let table = match text.parse::<toml::Table>() {
            Ok(t) => t,
            Err(e) => return Err(source::syntax_error(text, e.span(), e.message())),
        };
        // From the table just parsed, as `source::scenario_from_value` does: every config type is then
        // deserialised through one deserializer type, not two (the binary's code 2.47 → 2.19 MB, all of
        // it resident while a run's memory peaks). Lines come from the field path (`line_of`).
        let sc: Scenario = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let outer = e.path().to_string();
            let inner = e.into_inner();
            let (ipath, msg) = split_marked(inner.message());
            let path = join_path(&outer, &ipath);
            // The toml crate may append "\nin `key`" context; the field path already says it.
            let mut m = msg.trim().lines().next().unwrap_or("").trim().to_string();
            if let Some(line) = source::line_of(text, &path) {
                m = format!("{m} (line {line})");
            }
            ConfigError::new(if path == "." { String::new() } else { path }, m)
        })?;
        Ok(sc)
    }

    pub fn from_file(path: &str) -> Result<Scenario, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new("", format!("cannot read scenario file `{path}`: {e}")))?;
        let mut sc = Scenario::from_toml(&text)?;
        if let Some(dir) = std::path::Path::new(path).parent() {
            sc.resolve_paths(dir);
        }
        Ok(sc)
    }

    /// Make relative file paths (flow files, CDF files, topology files, streams) relative to `base`, the
    /// scenario file's folder, as users expect.
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        let fix = |p: &mut String| {
            let pp = std::path::Path::new(p.as_str());
            if pp.is_relative() && !base.as_os_str().is_empty() {
                *p = base.join(pp).to_string_lossy().into_owned();
            }
        };
        if let Topology::File { path } = &mut self.topology {
            fix(path);
        }
        if let Some(DelayCfg::Cdf { path, .. }) = &mut self.host.extra_delay {
            fix(path);
        }
        for t in self.traffic.iter_mut() {
            t.resolve_paths(&fix);
        }
        if let Some(p) = &mut self.record.queue_stream {
            fix(p);
        }
        if let Some(crate::control::ControllerCfg::Acc(c)) = &mut self.switch.controller {
            if let Some(p) = &mut c.model {
                fix(p);
            }
            if let Some(p) = &mut c.save_model {
                fix(p);
            }
            if let Some(p) = &mut c.train_state {
                fix(p);
            }
            if let Some(p) = &mut c.save_train_state {
                fix(p);
            }
        }
    }

    /// Checks that need more than one field, done before the run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let s = self;
        match (&s.stop.time, s.stop.all_flows_done, &s.stop.max_time) {
            (Some(_), false, None) => {}
            (None, true, Some(_)) => {}
            (None, true, None) => {
                return Err(ConfigError::new("stop.max_time", "all_flows_done needs a time cap: add max_time = \"…\""))
            }
            _ => {
                return Err(ConfigError::new(
                    "stop",
                    "write either { time = \"…\" } or { all_flows_done = true, max_time = \"…\" }",
                ))
            }
        }
        if let Some(t) = s.stop.time.or(s.stop.max_time) {
            if t.0 == 0 {
                return Err(ConfigError::new("stop", "the stop time must be greater than zero"));
            }
        }
        let sw = &s.switch;
        if sw.mtu < 100 || sw.mtu > 65_000 {
            return Err(ConfigError::new("switch.mtu", "must be between 100 and 65000 bytes (e.g. 1500 or 9000)"));
        }
        if sw.queues == 0 || sw.queues > 8 {
            return Err(ConfigError::new("switch.queues", "must be between 1 and 8"));
        }
        if !(sw.alpha > 0.0 && sw.alpha.is_finite()) {
            return Err(ConfigError::new("switch.alpha", "must be a positive number (e.g. 1.0 or 0.125)"));
        }
        for (name, b) in [("switch.buffer", &sw.buffer), ("switch.port_buffer", &sw.port_buffer)] {
            if let Some(b) = b {
                match b.0 {
                    Size::Inf => return Err(ConfigError::new(name, "must be a finite size such as \"9MB\"")),
                    x if x.bytes(sw.mtu as u64) < sw.mtu as u64 => {
                        return Err(ConfigError::new(name, format!("must hold at least one MTU ({} B)", sw.mtu)))
                    }
                    _ => {}
                }
            }
        }
        if let SchedulerCfg::Dwrr { weights } = &sw.scheduler {
            if weights.len() != sw.queues as usize {
                return Err(ConfigError::new(
                    "switch.scheduler.weights",
                    format!("give one weight per queue ({} queues, {} weights)", sw.queues, weights.len()),
                ));
            }
            if weights.iter().any(|&w| w == 0) {
                return Err(ConfigError::new("switch.scheduler.weights", "weights must be ≥ 1"));
            }
        }
        if let Some(n) = sw.aqm.len() {
            if n != sw.queues as usize {
                return Err(ConfigError::new(
                    "switch.aqm",
                    format!("give one AQM per queue ({} queues, {} AQMs) or a single table for all", sw.queues, n),
                ));
            }
        }
        for i in 0..sw.aqm.len().unwrap_or(1) {
            let field = if sw.aqm.len().is_some() { format!("switch.aqm[{i}]") } else { "switch.aqm".into() };
            sw.aqm.get(i).validate(&field, sw.mtu as u64)?;
        }
        s.host.nic.validate(sw.mtu as u64)?;
        if let Some(p) = &sw.pfc {
            p.validate(sw)?;
            if s.host.nic.scheduling == crate::host::nic::Scheduling::RoundRobin {
                let msg = "a round-robin NIC serves all priorities from one queue and cannot pause one of them; use \"fifo\" with switch.pfc";
                return Err(ConfigError::new("host.nic.scheduling", msg));
            }
        }
        if let Some(c) = &sw.credit {
            c.validate(sw)?;
            if s.host.nic.scheduling == crate::host::nic::Scheduling::RoundRobin {
                let msg = "a round-robin NIC serves all VLs from one queue and cannot stop one of them; use \"fifo\" with switch.credit";
                return Err(ConfigError::new("host.nic.scheduling", msg));
            }
            if s.host.nic.rx_rate.is_some() {
                let msg = "a host of a credit-controlled fabric takes each packet at once (a receive rate is not modelled with credits): remove host.nic.rx_rate";
                return Err(ConfigError::new("host.nic.rx_rate", msg));
            }
        }
        self.transports()?;
        if let Some(d) = &s.host.extra_delay {
            crate::host::delay::validate(d)?;
        }
        if let Some(p) = &s.host.pias {
            let t: Vec<u64> = p.thresholds.iter().map(|b| b.0.bytes(sw.mtu as u64)).collect();
            if t.is_empty() || t.windows(2).any(|w| w[1] <= w[0]) || p.thresholds.iter().any(|b| b.0 == Size::Inf) {
                return Err(ConfigError::new("host.pias.thresholds", "give one or more finite, increasing sizes, e.g. [\"100KB\", \"1MB\"]"));
            }
            if t.len() + 1 > sw.queues as usize {
                return Err(ConfigError::new(
                    "host.pias.thresholds",
                    format!("{} thresholds need {} queues per port; set switch.queues = {}", t.len(), t.len() + 1, t.len() + 1),
                ));
            }
        }
        for (i, t) in s.traffic.iter().enumerate() {
            t.validate(&format!("traffic[{i}]"))?;
        }
        if let Some(w) = &s.record.queue_sample_interval {
            if w.0 == 0 {
                return Err(ConfigError::new("record.queue_sample_interval", "must be greater than zero"));
            }
        }
        if let Some(w) = &s.record.link_sample_interval {
            if w.0 == 0 {
                return Err(ConfigError::new("record.link_sample_interval", "must be greater than zero"));
            }
        }
        if let Some(u) = &s.record.sample_until {
            if u.0 <= s.record.sample_from.0 {
                return Err(ConfigError::new("record.sample_until", "must be later than record.sample_from"));
            }
        }
        if let Some(i) = s.record.trace_flows.iter().position(|&f| f >= crate::workload::MAX_FLOWS) {
            let msg = format!("flow ids are 32-bit, below {}; trace a flow the traffic defines", crate::workload::MAX_FLOWS);
            return Err(ConfigError::new(format!("record.trace_flows[{i}]"), msg));
        }
        if s.record.trace_interval.0 == 0 {
            return Err(ConfigError::new("record.trace_interval", "must be greater than zero"));
        }
        Ok(())
    }

    /// Every transport of the run, resolved: `host.transport` first, then one per traffic entry that
    /// has its own `transport` table (in entry order). Returns them and, per traffic entry, the index of
    /// its transport.
    pub fn transports(&self) -> Result<(Vec<crate::transport::Params>, Vec<u16>), ConfigError> {
        let mtu = self.switch.mtu;
        let mut all = vec![self.host.transport.cfg.resolve("host.transport", mtu)?];
        let mut of_entry = Vec::with_capacity(self.traffic.len());
        for (i, t) in self.traffic.iter().enumerate() {
            match &t.transport {
                None => of_entry.push(0),
                Some(over) => {
                    let field = format!("traffic[{i}].transport");
                    let cfg = self.host.transport.merged(over, &field)?;
                    all.push(cfg.resolve(&field, mtu)?);
                    of_entry.push((all.len() - 1) as u16);
                }
            }
        }
        Ok((all, of_entry))
    }

    pub fn stop_time(&self) -> Time {
        self.stop.time.or(self.stop.max_time).map(|d| d.0).unwrap_or(Time::MAX)
    }
}
