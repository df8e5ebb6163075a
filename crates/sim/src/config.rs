//! The scenario schema. These serde types are the single source of truth for scenario files; the Python
//! front hands TOML text (or a dict turned into TOML) to [`Scenario::from_toml`]. Names, units and defaults
//! follow `conventions.md`. Every struct denies unknown keys, and every error names the field path.

use crate::units::{Bytes, Dur, Rate, Size, Time};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// One clear error naming the field and the fix.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Marks an error path carried inside a message through a `kind`-tagged enum (serde's own internally
/// tagged enums buffer their content and lose the field path; ours keep it).
const PATH_MARK: char = '\u{1}';

/// Split a message into the inner field path it carries (if any) and the text.
fn split_marked(msg: &str) -> (String, String) {
    if let Some(rest) = msg.strip_prefix(PATH_MARK) {
        if let Some((p, m)) = rest.split_once(PATH_MARK) {
            return (p.to_string(), m.to_string());
        }
    }
    (String::new(), msg.to_string())
}

fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty() || a == ".", b.is_empty() || b == ".") {
        (true, _) => b.to_string(),
        (false, true) => a.to_string(),
        (false, false) => format!("{a}.{b}"),
    }
}

/// Deserialize a variant's fields from what is left of the table once `kind` is taken out; the error
/// carries the inner path.
fn de_variant<T: serde::de::DeserializeOwned, E: de::Error>(rest: toml::Table) -> Result<T, E> {
    serde_path_to_error::deserialize(toml::Value::Table(rest)).map_err(|e| {
        let outer = e.path().to_string();
        let (inner, msg) = split_marked(&e.into_inner().to_string());
        E::custom(format!("{PATH_MARK}{}{PATH_MARK}{}", join_path(&outer, &inner), msg))
    })
}

/// Take the `kind` key out of a table.
fn take_kind<E: de::Error>(t: &mut toml::Table, kinds: &[&str]) -> Result<String, E> {
    match t.remove("kind") {
        Some(toml::Value::String(k)) => Ok(k),
        Some(_) => Err(E::custom(format!("{PATH_MARK}kind{PATH_MARK}must be a string, one of {}", kinds.join(", ")))),
        None => Err(E::custom(format!("missing `kind`; one of {}", kinds.join(", ")))),
    }
}

/// An enum tagged by `kind = "…"`, one struct-like variant per kind, unknown keys denied, field paths
/// kept in errors.
macro_rules! tagged_enum {
    (
        $(#[$eattr:meta])*
        pub enum $name:ident {
            $(
                $(#[$vattr:meta])*
                $variant:ident = $kind:literal {
                    $( $(#[$fattr:meta])* $field:ident : $fty:ty ),* $(,)?
                }
            ),* $(,)?
        }
    ) => {
        $(#[$eattr])*
        pub enum $name {
            $( $(#[$vattr])* $variant { $( $field: $fty ),* } ),*
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[allow(non_snake_case)]
                mod variants {
                    #[allow(unused_imports)]
                    use super::*;
                    $(
                        #[derive(Deserialize)]
                        #[serde(deny_unknown_fields)]
                        pub struct $variant { $( $(#[$fattr])* pub $field: $fty ),* }
                    )*
                }
                const KINDS: &[&str] = &[$($kind),*];
                let mut t = toml::Table::deserialize(d)?;
                let kind: String = take_kind(&mut t, KINDS)?;
                match kind.as_str() {
                    $(
                        $kind => {
                            let _v: variants::$variant = de_variant(t)?;
                            Ok($name::$variant { $( $field: _v.$field ),* })
                        }
                    )*
                    other => Err(de::Error::custom(format!(
                        "{PATH_MARK}kind{PATH_MARK}unknown kind `{other}`; use one of {}", KINDS.join(", ")
                    ))),
                }
            }
        }
    };
}

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

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Forward a Not-ECT packet that would have been marked.
    #[default]
    Pass,
    /// Drop it (what WRED-with-ECN switches do).
    Drop,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    #[default]
    Enqueue,
    Dequeue,
}

tagged_enum! {
    #[derive(Debug, Clone)]
    pub enum AqmCfg {
        Droptail = "droptail" {},
        /// DCTCP step marking: mark when the instantaneous queue exceeds `threshold`.
        DctcpRed = "dctcp_red" {
            threshold: Bytes,
            #[serde(default)]
            non_ect: NonEct,
            #[serde(default)]
            mark_at: MarkAt,
        },
        /// RED with Kmin/Kmax/Pmax, on the instantaneous queue or (with `average` = EWMA weight) on the
        /// averaged queue.
        Red = "red" {
            kmin: Bytes,
            kmax: Bytes,
            pmax: f64,
            #[serde(default)]
            average: Option<f64>,
            #[serde(default)]
            non_ect: Option<NonEct>,
            #[serde(default)]
            mark_at: MarkAt,
        },
        /// TCN: mark at dequeue when the sojourn time exceeds `threshold`.
        Tcn = "tcn" {
            threshold: Dur,
            #[serde(default)]
            non_ect: NonEct,
        },
        /// CoDel (RFC 8289) in ECN-marking or drop mode.
        Codel = "codel" {
            target: Dur,
            interval: Dur,
            #[serde(default)]
            mode: CodelMode,
            #[serde(default)]
            non_ect: Option<NonEct>,
        },
        /// ECN♯: instantaneous sojourn marking plus persistent-queue marking (Algorithm 1).
        EcnSharp = "ecn_sharp" {
            ins_target: TimeOrSize,
            pst_target: TimeOrSize,
            pst_interval: Dur,
            /// Probabilistic instantaneous part for DCQCN (§3.5): with `ins_max` and `ins_pmax`, a
            /// packet is marked with probability rising linearly from 0 at `ins_target` to `ins_pmax`
            /// at `ins_max`, and always above `ins_max` (RED's ramp on the instantaneous signal).
            #[serde(default)]
            ins_max: Option<TimeOrSize>,
            #[serde(default)]
            ins_pmax: Option<f64>,
            #[serde(default)]
            signal: SharpSignal,
            #[serde(default)]
            control_law: ControlLawCfg,
            #[serde(default)]
            division: DivisionCfg,
            #[serde(default)]
            non_ect: NonEct,
        },
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CodelMode {
    #[default]
    Ecn,
    Drop,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SharpSignal {
    #[default]
    Sojourn,
    Queue,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ControlLawCfg {
    #[default]
    Linear,
    Sqrt,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DivisionCfg {
    #[default]
    Exact,
    Tofino,
}

/// A threshold given as a time (`"200us"`) or a size (`"100KB"`, `"40pkt"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeOrSize {
    Time(Time),
    Size(Size),
}

impl<'de> Deserialize<'de> for TimeOrSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)
            .map_err(|_| de::Error::custom("a time (\"200us\") or a size (\"100KB\") with its unit"))?;
        if let Ok(t) = crate::units::parse_time(&s) {
            return Ok(TimeOrSize::Time(t));
        }
        crate::units::parse_size(&s).map(TimeOrSize::Size).map_err(|_| {
            de::Error::custom(format!("`{s}` is neither a time (ps, ns, us, ms, s) nor a size (B, KB, MB, KiB, pkt)"))
        })
    }
}

impl Default for AqmCfg {
    fn default() -> Self {
        AqmCfg::Droptail {}
    }
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
    #[default]
    Flow,
    Packet,
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

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcName {
    Reno,
    Dctcp,
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

tagged_enum! {
    #[derive(Debug, Clone)]
    pub enum TransportCfg {
        Tcp = "tcp" {
            #[serde(default = "default_cc")]
            cc: CcName,
            /// ECN negotiated for the flow; DCTCP implies it.
            ecn: Option<bool>,
            #[serde(default = "default_min_rto")]
            min_rto: Dur,
            /// Initial window in segments.
            #[serde(default = "default_init_cwnd")]
            init_cwnd: u32,
            #[serde(default = "default_delack")]
            delayed_ack: DelAck,
            #[serde(default = "default_delack_timeout")]
            delayed_ack_timeout: Dur,
            /// Segment payload; default MTU − 40.
            mss: Option<Bytes>,
            /// Receive window advertised by the receiver (bytes, after window scaling).
            #[serde(default = "default_rwnd")]
            rwnd: Bytes,
            /// Window-scale shift the receiver advertises (0–14).
            #[serde(default = "default_wscale")]
            wscale: u8,
            /// Exchange SYN/SYN-ACK before the first byte.
            #[serde(default)]
            handshake: bool,
            /// DCTCP's alpha gain.
            #[serde(default = "default_dctcp_g")]
            dctcp_g: f64,
            /// TCP Small Queues: the most data a connection keeps queued at its own host ("inf": off).
            #[serde(default = "default_tsq")]
            tsq_limit: Bytes,
        },
    }
}

fn default_cc() -> CcName {
    CcName::Reno
}
fn default_min_rto() -> Dur {
    Dur(5 * crate::units::MS)
}
fn default_init_cwnd() -> u32 {
    10
}
fn default_delack() -> DelAck {
    DelAck(1)
}
fn default_delack_timeout() -> Dur {
    Dur(crate::units::MS)
}
fn default_rwnd() -> Bytes {
    Bytes(Size::Bytes(1 << 30))
}
fn default_wscale() -> u8 {
    14
}
fn default_tsq() -> Bytes {
    // Linux's tcp_limit_output_bytes before 5.x.
    Bytes(Size::Bytes(262_144))
}
fn default_dctcp_g() -> f64 {
    1.0 / 16.0
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg::Tcp {
            cc: default_cc(),
            ecn: None,
            min_rto: default_min_rto(),
            init_cwnd: default_init_cwnd(),
            delayed_ack: default_delack(),
            delayed_ack_timeout: default_delack_timeout(),
            mss: None,
            rwnd: default_rwnd(),
            wscale: default_wscale(),
            handshake: false,
            dctcp_g: default_dctcp_g(),
            tsq_limit: default_tsq(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelayPer {
    #[default]
    Host,
    Flow,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AppliesTo {
    #[default]
    Data,
    All,
}

tagged_enum! {
    /// Extra delay at the sending host's NIC, drawn once per host or once per flow.
    #[derive(Debug, Clone)]
    pub enum DelayCfg {
        Constant = "constant" {
            value: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        Uniform = "uniform" {
            min: Dur,
            max: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        /// Lognormal with the given median and sigma (of the underlying normal), clamped to [min, max].
        Lognormal = "lognormal" {
            median: Dur,
            sigma: f64,
            min: Dur,
            max: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        Choice = "choice" {
            values: Vec<Dur>,
            weights: Option<Vec<f64>>,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        /// A CDF file: `delay_us cumulative_probability` per line.
        Cdf = "cdf" {
            path: String,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
    }
}

impl DelayCfg {
    pub fn per(&self) -> DelayPer {
        match self {
            DelayCfg::Constant { per, .. }
            | DelayCfg::Uniform { per, .. }
            | DelayCfg::Lognormal { per, .. }
            | DelayCfg::Choice { per, .. }
            | DelayCfg::Cdf { per, .. } => *per,
        }
    }
    pub fn applies_to(&self) -> AppliesTo {
        match self {
            DelayCfg::Constant { applies_to, .. }
            | DelayCfg::Uniform { applies_to, .. }
            | DelayCfg::Lognormal { applies_to, .. }
            | DelayCfg::Choice { applies_to, .. }
            | DelayCfg::Cdf { applies_to, .. } => *applies_to,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    #[serde(default)]
    pub transport: TransportCfg,
    pub extra_delay: Option<DelayCfg>,
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

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LoadReference {
    #[default]
    Access,
    Fabric,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowFileFormat {
    #[default]
    Dcnlab,
    Hpcc,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: Bytes,
    #[serde(default = "zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    /// Traffic class: the queue index at every port.
    #[serde(default)]
    pub priority: u8,
}

fn zero_time() -> Dur {
    Dur(0)
}

tagged_enum! {
    #[derive(Debug, Clone)]
    pub enum Traffic {
        /// Flow sizes from a CDF, Poisson arrivals at a target load.
        Poisson = "poisson" {
            sizes: String,
            load: f64,
            flows: u64,
            src: Option<HostSet>,
            dst: Option<HostSet>,
            #[serde(default)]
            load_reference: LoadReference,
            #[serde(default = "zero_time")]
            start: Dur,
            tag: Option<String>,
            #[serde(default)]
            priority: u8,
        },
        /// Many-to-one bursts: every sender sends `size` to `receiver` at `at` (+ k × period). With
        /// `flows = N` a burst is N flows dealt round-robin over the senders (a query incast of N
        /// concurrent flows from fewer hosts); with `size_max` each flow's size is uniform in
        /// [size, size_max] bytes, drawn from the traffic stream.
        Incast = "incast" {
            senders: HostSet,
            receiver: u32,
            size: Bytes,
            at: Dur,
            #[serde(default)]
            flows: Option<u32>,
            #[serde(default)]
            size_max: Option<Bytes>,
            #[serde(default = "one")]
            repeat: u32,
            period: Option<Dur>,
            tag: Option<String>,
            #[serde(default)]
            priority: u8,
        },
        /// Host i sends to host (i + stride) mod N.
        Stride = "stride" {
            stride: u32,
            size: Bytes,
            #[serde(default = "zero_time")]
            start: Dur,
            tag: Option<String>,
            #[serde(default)]
            priority: u8,
        },
        /// A random permutation: every host sends to exactly one other and receives from exactly one.
        Permutation = "permutation" {
            size: Bytes,
            #[serde(default = "zero_time")]
            start: Dur,
            tag: Option<String>,
            #[serde(default)]
            priority: u8,
        },
        /// An inline list of flows.
        Flows = "flows" { list: Vec<FlowSpec> },
        /// A flow file: ours (`src,dst,size_bytes,start_us[,tag]` CSV) or HPCC's.
        File = "file" {
            path: String,
            #[serde(default)]
            format: FlowFileFormat,
            tag: Option<String>,
        },
    }
}

fn one() -> u32 {
    1
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
        }
    }
}

impl Scenario {
    /// Parse a scenario from TOML text; errors name the field path.
    pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
        if let Err(e) = text.parse::<toml::Table>() {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().trim().lines().next().unwrap_or("").to_string();
            return Err(ConfigError::new(
                "",
                match line {
                    Some(l) => format!("not valid TOML: {msg} (line {l})"),
                    None => format!("not valid TOML: {msg}"),
                },
            ));
        }
        let de = toml::Deserializer::new(text);
        let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let outer = e.path().to_string();
            let inner = e.into_inner();
            let (ipath, msg) = split_marked(inner.message());
            let path = join_path(&outer, &ipath);
            // The toml crate may append "\nin `key`" context; the field path already says it.
            let mut m = msg.trim().lines().next().unwrap_or("").trim().to_string();
            if let Some(span) = inner.span() {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
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
            match t {
                Traffic::File { path, .. } => fix(path),
                Traffic::Poisson { sizes, .. } => {
                    let builtin = crate::workload::BUILTIN_CDFS.iter().any(|(n, _)| n == sizes);
                    if !builtin {
                        fix(sizes);
                    }
                }
                _ => {}
            }
        }
        if let Some(p) = &mut self.record.queue_stream {
            fix(p);
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
            match sw.aqm.get(i) {
                AqmCfg::Droptail {} => {}
                AqmCfg::DctcpRed { threshold, .. } => {
                    if threshold.0 == Size::Inf {
                        return Err(ConfigError::new(format!("{field}.threshold"), "must be a finite size"));
                    }
                }
                AqmCfg::Tcn { threshold, .. } => {
                    if threshold.0 == 0 {
                        return Err(ConfigError::new(format!("{field}.threshold"), "must be greater than zero"));
                    }
                }
                AqmCfg::Codel { target, interval, .. } => {
                    if target.0 == 0 || interval.0 == 0 {
                        return Err(ConfigError::new(format!("{field}.interval"), "target and interval must be greater than zero"));
                    }
                }
                AqmCfg::EcnSharp { ins_target, pst_target, pst_interval, ins_max, ins_pmax, signal, .. } => {
                    let want_time = signal == SharpSignal::Sojourn;
                    match (ins_max, ins_pmax) {
                        (Some(_), None) | (None, Some(_)) => {
                            return Err(ConfigError::new(
                                format!("{field}.{}", if ins_max.is_some() { "ins_pmax" } else { "ins_max" }),
                                "the probabilistic instantaneous part needs both ins_max and ins_pmax",
                            ))
                        }
                        _ => {}
                    }
                    if let Some(p) = ins_pmax {
                        if !(p > 0.0 && p <= 1.0) {
                            return Err(ConfigError::new(format!("{field}.ins_pmax"), "must be a probability in (0, 1]"));
                        }
                    }
                    let key = |v: &TimeOrSize| match v {
                        TimeOrSize::Time(t) => *t,
                        TimeOrSize::Size(s) => s.bytes(sw.mtu as u64),
                    };
                    let named = [("ins_target", Some(ins_target)), ("pst_target", Some(pst_target)), ("ins_max", ins_max)];
                    for (k, v) in named.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))) {
                        match (want_time, v) {
                            (true, TimeOrSize::Size(_)) => {
                                return Err(ConfigError::new(format!("{field}.{k}"), "with signal = \"sojourn\" this is a time, e.g. \"200us\""))
                            }
                            (false, TimeOrSize::Time(_)) => {
                                return Err(ConfigError::new(format!("{field}.{k}"), "with signal = \"queue\" this is a size, e.g. \"100KB\""))
                            }
                            (_, TimeOrSize::Size(Size::Inf)) => {
                                return Err(ConfigError::new(format!("{field}.{k}"), "must be finite"))
                            }
                            _ => {}
                        }
                    }
                    if let Some(m) = ins_max {
                        if key(&m) <= key(&ins_target) {
                            return Err(ConfigError::new(format!("{field}.ins_max"), "must be above ins_target"));
                        }
                    }
                    if pst_interval.0 == 0 {
                        return Err(ConfigError::new(format!("{field}.pst_interval"), "must be greater than zero"));
                    }
                }
                AqmCfg::Red { kmin, kmax, pmax, average, .. } => {
                    let (a, b) = (kmin.0.bytes(sw.mtu as u64), kmax.0.bytes(sw.mtu as u64));
                    if kmin.0 == Size::Inf || kmax.0 == Size::Inf || b < a {
                        return Err(ConfigError::new(format!("{field}.kmax"), "kmin ≤ kmax, both finite"));
                    }
                    if !(0.0..=1.0).contains(&pmax) {
                        return Err(ConfigError::new(format!("{field}.pmax"), "must be a probability in [0, 1]"));
                    }
                    if let Some(w) = average {
                        if !(w > 0.0 && w <= 1.0) {
                            return Err(ConfigError::new(format!("{field}.average"), "EWMA weight must be in (0, 1]"));
                        }
                    }
                }
            }
        }
        let TransportCfg::Tcp { init_cwnd, mss, wscale, dctcp_g, min_rto, rwnd, handshake, tsq_limit, .. } = &s.host.transport;
        if tsq_limit.0 != Size::Inf && tsq_limit.0.bytes(sw.mtu as u64) < sw.mtu as u64 {
            return Err(ConfigError::new("host.transport.tsq_limit", format!("must be at least one MTU ({} B), or \"inf\" to turn it off", sw.mtu)));
        }
        if *init_cwnd == 0 {
            return Err(ConfigError::new("host.transport.init_cwnd", "must be at least 1 segment"));
        }
        if let Some(m) = mss {
            let b = m.0.bytes(sw.mtu as u64);
            if m.0 == Size::Inf || b == 0 || b + 40 > sw.mtu as u64 {
                return Err(ConfigError::new(
                    "host.transport.mss",
                    format!("must be between 1 B and MTU − 40 = {} B", sw.mtu - 40),
                ));
            }
        }
        if *wscale > 14 {
            return Err(ConfigError::new("host.transport.wscale", "window scale shift is 0–14 (RFC 7323)"));
        }
        if !(*dctcp_g > 0.0 && *dctcp_g <= 1.0) {
            return Err(ConfigError::new("host.transport.dctcp_g", "must be in (0, 1], e.g. 0.0625"));
        }
        if min_rto.0 == 0 {
            return Err(ConfigError::new("host.transport.min_rto", "must be greater than zero"));
        }
        if rwnd.0 == Size::Inf || rwnd.0.bytes(sw.mtu as u64) == 0 {
            return Err(ConfigError::new("host.transport.rwnd", "must be a finite positive size"));
        }
        if *handshake {
            // Accepted: the SYN exchange is simulated as one RTT of control packets before data.
        }
        if let Some(d) = &s.host.extra_delay {
            validate_delay(d)?;
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
            let f = |k: &str| format!("traffic[{i}].{k}");
            match t {
                Traffic::Poisson { load, flows, .. } => {
                    if !(*load > 0.0 && *load <= 1.0) {
                        return Err(ConfigError::new(f("load"), format!("load must be in (0, 1], got {load}")));
                    }
                    if *flows == 0 {
                        return Err(ConfigError::new(f("flows"), "must be at least 1"));
                    }
                }
                Traffic::Incast { size, repeat, period, senders, .. } => {
                    check_flow_size(size, &f("size"))?;
                    if senders.0.is_empty() {
                        return Err(ConfigError::new(f("senders"), "needs at least one sender"));
                    }
                    if *repeat > 1 && period.is_none() {
                        return Err(ConfigError::new(f("period"), "repeat > 1 needs a period"));
                    }
                    if *repeat == 0 {
                        return Err(ConfigError::new(f("repeat"), "must be at least 1"));
                    }
                }
                Traffic::Stride { size, stride, .. } => {
                    check_flow_size(size, &f("size"))?;
                    if *stride == 0 {
                        return Err(ConfigError::new(f("stride"), "must be at least 1"));
                    }
                }
                Traffic::Permutation { size, .. } => check_flow_size(size, &f("size"))?,
                Traffic::Flows { list } => {
                    for (j, fl) in list.iter().enumerate() {
                        check_flow_size(&fl.size, &format!("traffic[{i}].list[{j}].size"))?;
                    }
                }
                Traffic::File { .. } => {}
            }
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
        if s.record.trace_interval.0 == 0 {
            return Err(ConfigError::new("record.trace_interval", "must be greater than zero"));
        }
        Ok(())
    }

    pub fn stop_time(&self) -> Time {
        self.stop.time.or(self.stop.max_time).map(|d| d.0).unwrap_or(Time::MAX)
    }
}

fn check_flow_size(size: &Bytes, field: &str) -> Result<(), ConfigError> {
    if size.0.bytes(1500) == 0 {
        return Err(ConfigError::new(field, "flow size must be greater than zero"));
    }
    Ok(())
}

fn validate_delay(d: &DelayCfg) -> Result<(), ConfigError> {
    match d {
        DelayCfg::Uniform { min, max, .. } if max.0 < min.0 => {
            Err(ConfigError::new("host.extra_delay.max", "max must be ≥ min"))
        }
        DelayCfg::Lognormal { min, max, sigma, median, .. } => {
            if max.0 < min.0 {
                return Err(ConfigError::new("host.extra_delay.max", "max must be ≥ min"));
            }
            if !(*sigma >= 0.0 && sigma.is_finite()) {
                return Err(ConfigError::new("host.extra_delay.sigma", "must be ≥ 0"));
            }
            if median.0 == 0 {
                return Err(ConfigError::new("host.extra_delay.median", "must be greater than zero"));
            }
            Ok(())
        }
        DelayCfg::Choice { values, weights, .. } => {
            if values.is_empty() {
                return Err(ConfigError::new("host.extra_delay.values", "give at least one value"));
            }
            if let Some(w) = weights {
                if w.len() != values.len() || w.iter().any(|x| !(*x >= 0.0)) || w.iter().sum::<f64>() <= 0.0 {
                    return Err(ConfigError::new(
                        "host.extra_delay.weights",
                        "one non-negative weight per value, not all zero",
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
