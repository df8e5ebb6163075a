//! Records: the tables of `conventions.md` (flows, queues, links, flow_trace), drop counts by reason and
//! run metadata. Times are kept in picoseconds here and written as microseconds (`*_us`). `Recorder` is
//! what a run samples and when; the sampling itself is in `sim/sample.rs`.

mod ideal;

use crate::units::{Time, US};
use serde::Serialize;
use std::io::Write;

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
}

impl Drops {
    pub fn total(&self) -> u64 {
        self.buffer + self.port_buffer + self.aqm + self.link_loss + self.vswitch
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

#[derive(Clone, Debug, Default, Serialize)]
pub struct Meta {
    pub name: String,
    pub seed: u64,
    pub config_hash: String,
    pub version: String,
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
    pub tags: Vec<String>,
    /// Label of every transport of the run (`flows.transport` indexes it), e.g. `tcp:dctcp`.
    pub transports: Vec<String>,
    pub node_names: Vec<String>,
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
}

#[derive(Default)]
pub struct Records {
    pub flows: Vec<FlowRow>,
    pub queues: Vec<QueueRow>,
    pub links: Vec<LinkRow>,
    pub flow_trace: Vec<TraceRow>,
    pub controller_steps: Vec<ControlRow>,
    pub meta: Meta,
}

fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

fn opt_f(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_else(|| "NaN".into())
}

/// CSV writers for the queue table (also used for streaming).
pub fn queue_header() -> &'static str {
    "time_us,node,port,queue,bytes,packets,marks,drops"
}

pub fn write_queue_row(w: &mut impl Write, r: &QueueRow, names: &[String]) -> std::io::Result<()> {
    writeln!(w, "{},{},{},{},{},{},{},{}", us(r.time), names[r.node as usize], r.port, r.queue, r.bytes, r.packets, r.marks, r.drops)
}

impl Records {
    pub fn tag_name(&self, id: u16) -> &str {
        self.meta.tags.get(id as usize).map(|s| s.as_str()).unwrap_or("")
    }

    /// Write `flows.csv`, `queues.csv`, `links.csv`, `flow_trace.csv` and `meta.json` into `dir`.
    pub fn write_dir(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("flows.csv"))?);
        writeln!(w, "flow_id,src,dst,size,tag,start_us,finish_us,fct_us,ideal_fct_us,standalone_fct_us,slowdown,retransmits,timeouts,finished,base_rtt_us")?;
        for f in &self.flows {
            let size = if f.size == u64::MAX { "inf".to_string() } else { f.size.to_string() };
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                f.flow_id,
                f.src,
                f.dst,
                size,
                self.tag_name(f.tag),
                us(f.start),
                opt_f(f.finish.map(us)),
                opt_f(f.fct().map(us)),
                us(f.ideal_fct),
                us(f.standalone_fct),
                opt_f(f.slowdown()),
                f.retransmits,
                f.timeouts,
                f.finish.is_some(),
                us(f.base_rtt)
            )?;
        }
        let names = &self.meta.node_names;
        let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("queues.csv"))?);
        writeln!(w, "{}", queue_header())?;
        for r in &self.queues {
            write_queue_row(&mut w, r, names)?;
        }
        let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("links.csv"))?);
        writeln!(w, "time_us,node,port,tx_bytes,utilization")?;
        for r in &self.links {
            writeln!(w, "{},{},{},{},{}", us(r.time), names[r.node as usize], r.port, r.tx_bytes, r.utilization)?;
        }
        let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("flow_trace.csv"))?);
        writeln!(w, "time_us,flow_id,cwnd_bytes,rate_bps,alpha,srtt_us,delivered_bytes")?;
        for r in &self.flow_trace {
            writeln!(w, "{},{},{},{},{},{},{}", us(r.time), r.flow_id, r.cwnd_bytes, r.rate_bps, r.alpha, us(r.srtt), r.delivered_bytes)?;
        }
        std::fs::write(dir.join("meta.json"), serde_json::to_string_pretty(&self.meta).unwrap())?;
        Ok(())
    }
}
