//! Records: the tables of `conventions.md` (flows, queues, links, flow_trace, controller_steps), drop
//! counts by reason and run metadata. Times are kept in picoseconds here and written as microseconds
//! (`*_us`). Each table's columns are declared once, in `tables.rs`; the CSV files, the queue stream, the
//! Python binding and `docs/records.md` derive from there. `Recorder` is what a run samples and when; the
//! sampling itself is in `sim/sample.rs`.

mod ideal;
#[cfg(test)]
mod ideal_tests;
pub mod schema;
mod tables;
#[cfg(test)]
mod tests;

use crate::units::Time;
use serde::Serialize;
use std::io::Write;

pub use schema::{Cell, Column, ColumnData, Table, Ty};
pub use tables::{table, TABLES};

#[derive(Clone, Debug, PartialEq)]
pub struct FlowRow {
    pub flow_id: u32,
    pub src: u32,
    pub dst: u32,
    /// Payload bytes; `u64::MAX` for long-lived flows.
    pub size: u64,
    pub tag: u16,
    /// Index into `Meta::transports`.
    pub transport: u16,
    pub start: Time,
    pub finish: Option<Time>,
    pub ideal_fct: Time,
    pub standalone_fct: Time,
    /// A full segment out and its ACK back on the empty network, the flow's extra host delays included.
    pub base_rtt: Time,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Data packets that reached the receiver marked CE, and marked UE (TCD).
    pub ce_marks: u32,
    pub ue_marks: u32,
}

impl FlowRow {
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }
    /// FCT / ideal FCT, unclamped.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f as f64 / self.ideal_fct.max(1) as f64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueRow {
    pub time: Time,
    pub node: u32,
    pub port: u32,
    pub queue: u32,
    pub bytes: u64,
    pub packets: u32,
    pub marks: u64,
    pub drops: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkRow {
    pub time: Time,
    pub node: u32,
    pub port: u32,
    pub tx_bytes: u64,
    pub utilization: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRow {
    pub time: Time,
    pub flow_id: u32,
    pub cwnd_bytes: f64,
    pub rate_bps: f64,
    pub alpha: f64,
    pub srtt: Time,
    pub delivered_bytes: u64,
}

/// One PFC frame sent or received (`pauses`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseRow {
    pub time: Time,
    pub node: u32,
    pub port: u32,
    pub priority: u8,
    /// PAUSE (else RESUME, pause time 0).
    pub pause: bool,
    /// Sent by this port (else received by it).
    pub sent: bool,
}

/// What one port did over the run (`ports`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortRow {
    pub node: u32,
    pub port: u32,
    pub tx_bytes: u64,
    pub ce_marks: u64,
    pub ue_marks: u64,
    pub drops: u64,
    pub paused: Time,
    pub pause_frames_sent: u64,
    pub pause_frames_received: u64,
    pub credit_stall: Time,
}

/// A TCD queue's state changed (`port_states`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortStateRow {
    pub time: Time,
    pub node: u32,
    pub port: u32,
    pub queue: u32,
    pub state: crate::aqm::tcd::Ternary,
}

/// One RTT sample of a traced flow (`record.rtt_samples`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttRow {
    pub time: Time,
    pub flow_id: u32,
    pub rtt: Time,
}

/// One job of a jobs traffic entry (`workload/jobs.rs`): a storage IO, a training iteration (`jobs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRow {
    pub job_id: u32,
    /// The traffic entry it belongs to.
    pub entry: u32,
    /// What the job is (`read`, `write`, `iteration`, …), named by its model.
    pub kind: &'static str,
    pub start: Time,
    /// When its last flow's receiver got the last byte (the model closed it).
    pub finish: Option<Time>,
    /// Flows and payload bytes released for it so far.
    pub flows: u32,
    pub bytes: u64,
}

/// Drops by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Drops {
    /// Shared buffer full or the queue over its dynamic threshold.
    pub buffer: u64,
    /// Static per-port limit.
    pub port_buffer: u64,
    /// Dropped by the AQM (or a mark turned into a drop for a Not-ECT packet).
    pub aqm: u64,
    /// Random link loss.
    pub link_loss: u64,
    /// Dropped by a host's vSwitch.
    pub vswitch: u64,
    /// A host's receive buffer was full (`host.nic.rx_rate`).
    pub nic_rx: u64,
}

impl Drops {
    pub fn total(&self) -> u64 {
        self.buffer + self.port_buffer + self.aqm + self.link_loss + self.vswitch + self.nic_rx
    }
}

/// Packet and byte conservation: sent = delivered + dropped + in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Conservation {
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    pub in_flight_packets: u64,
    pub in_flight_bytes: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.sent_packets == self.delivered_packets + self.dropped_packets + self.in_flight_packets
            && self.sent_bytes == self.delivered_bytes + self.dropped_bytes + self.in_flight_bytes
    }
}

/// The version of what a run records for a given scenario and seed. Bump it with every change that alters
/// some scenario's records (a named fix, a changed default); a refactor leaves it. Cached runs
/// (`dcnlab.sweep.cached_result`, the reproductions' `runs/` folders) are reused only at the same
/// version, so a fix is never hidden behind results of the build before it.
/// 2: ACC's branching head picks the best valid setting (`control/acc/ddqn.rs`), 2026-11-28.
pub const RECORDS_VERSION: u32 = 2;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Meta {
    pub name: String,
    pub seed: u64,
    pub config_hash: String,
    pub version: String,
    /// [`RECORDS_VERSION`] of the build that ran it.
    pub records_version: u32,
    pub events: u64,
    pub packet_hops: u64,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub sim_time_us: f64,
    pub flows_total: u64,
    pub flows_finished: u64,
    pub peak_rss_bytes: u64,
    pub warmup_us: f64,
    pub drops: Drops,
    pub conservation: Conservation,
    /// Offered load measured on the Poisson traffic entries: bytes started / duration / capacity.
    pub marks: u64,
    pub stop_reason: String,
    /// The user stopped the run (Ctrl-C) before its end; the records hold what happened until then.
    pub interrupted: bool,
    pub tags: Vec<String>,
    /// What the hosts' AC/DC vSwitches did, summed over hosts (absent without AC/DC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acdc: Option<crate::host::vswitch::acdc::Stats>,
    /// Label of every transport of the run (`flows.transport` indexes it), e.g. `tcp:dctcp`.
    pub transports: Vec<String>,
    pub node_names: Vec<String>,
    /// PFC deadlocks found with `on_deadlock = "record"`, one text per cycle.
    pub deadlocks: Vec<String>,
    /// Why the run stopped early with wrong results (a lossless drop, a deadlock with `on_deadlock =
    /// "fail"`); `stop_reason` is then `"failed"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the controller reports of itself (ACC: agents, parameters, model bytes, FLOPs per decision,
    /// transitions), and the CPU seconds its ticks took (`controller_cpu_s`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub controller: std::collections::BTreeMap<String, f64>,
}

/// What a run records and when (from `[record]`).
#[derive(Default)]
pub struct Recorder {
    pub tags: crate::workload::Tags,
    pub sample_ports: Vec<u32>,
    pub sample_interval: Option<Time>,
    pub link_interval: Option<Time>,
    pub sample_until: Time,
    /// Link samples count bytes since the previous one; the first (at `sample_from` > 0) only resets.
    pub link_primed: bool,
    /// Keep only the N busiest sampled ports (`record.queues = "busiest"`).
    pub busiest: Option<usize>,
    pub queue_stream: Option<std::io::BufWriter<std::fs::File>>,
    pub trace_flows: Vec<u32>,
    pub trace_tags: Vec<u16>,
    pub trace_interval: Time,
    /// Record every RTT sample of the traced flows.
    pub rtt_samples: bool,
    /// With `rtt_samples`: whether each started flow is traced, by flow id.
    pub rtt_traced: Vec<bool>,
}

/// One parameter change a controller made.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlRow {
    pub time: Time,
    pub node: u32,
    pub port: u32,
    pub queue: u32,
    /// The AQM's parameters after the change.
    pub action: String,
    /// A learning controller's reward for its previous action, its exploration rate, the loss of the
    /// training step it took at this decision (NaN where there is none) and the state it decided on.
    pub reward: f64,
    pub epsilon: f64,
    pub loss: f64,
    pub features: String,
}

#[derive(Default)]
pub struct Records {
    pub flows: Vec<FlowRow>,
    pub queues: Vec<QueueRow>,
    pub links: Vec<LinkRow>,
    pub flow_trace: Vec<TraceRow>,
    pub controller_steps: Vec<ControlRow>,
    pub rtt_samples: Vec<RttRow>,
    pub pauses: Vec<PauseRow>,
    pub ports: Vec<PortRow>,
    pub port_states: Vec<PortStateRow>,
    pub jobs: Vec<JobRow>,
    pub meta: Meta,
}

/// The header of the queue table's CSV (also of the queue stream).
pub fn queue_header() -> String {
    schema::header::<QueueRow>()
}

/// One line of the queue table's CSV, for streaming samples to disk as they are taken.
pub fn write_queue_row(w: &mut impl Write, r: &QueueRow, names: &[String]) -> std::io::Result<()> {
    schema::write_row(w, r, schema::Names { nodes: names, ..Default::default() })
}

impl Records {
    pub fn tag_name(&self, id: u16) -> &str {
        schema::Names::of(&self.meta).tag(id)
    }

    /// Every column of table `name` (see [`TABLES`]) with its values; `None` for an unknown table.
    pub fn table(&self, name: &str) -> Option<Vec<(&'static Column, ColumnData)>> {
        table(name).map(|t| t.data(self))
    }

    /// Write `NAME.csv` for every table of [`TABLES`] and `meta.json` into `dir`.
    pub fn write_dir(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for t in &TABLES {
            let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{}.csv", t.name)))?);
            t.write_csv(self, &mut w)?;
            w.flush()?;
        }
        std::fs::write(dir.join("meta.json"), serde_json::to_string_pretty(&self.meta).unwrap())?;
        Ok(())
    }
}
