//! Every record table's columns, declared once (the machinery is in `schema.rs`). Column names follow
//! `conventions.md` ("Records"); a table's existing columns keep their order, new ones go at the end.
//! `docs/records.md` is generated from here (`dcnlab schema --markdown`); a test keeps it in step.

use super::schema::{us, us_or_nan, Cell, Col, Column, Row, Table, Ty};
use super::{ControlRow, FlowRow, JobRow, LinkRow, PauseRow, PortRow, PortStateRow, QueueRow, Records, RttRow, TraceRow};

/// Every table, in the order of the docs.
pub static TABLES: [Table; 10] = [
    Table::of::<FlowRow>(),
    Table::of::<QueueRow>(),
    Table::of::<LinkRow>(),
    Table::of::<TraceRow>(),
    Table::of::<ControlRow>(),
    Table::of::<RttRow>(),
    Table::of::<PauseRow>(),
    Table::of::<PortRow>(),
    Table::of::<PortStateRow>(),
    Table::of::<JobRow>(),
];

/// The table called `name`.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

const fn col<R>(name: &'static str, ty: Ty, unit: &'static str, meaning: &'static str, get: for<'a> fn(&'a R, super::schema::Names<'a>) -> Cell<'a>) -> Col<R> {
    Col { column: Column { name, ty, unit, meaning }, get }
}

use Ty::{Bool, Float, Int, Str};

const TIME_US: &str = "Sample time.";
const NODE: &str = "The node's name (`meta.node_names`): a switch or a host.";
const PORT: &str = "Egress port, numbered within the node.";
const QUEUE: &str = "Queue of the port (its priority / DWRR class).";

impl Row for FlowRow {
    const NAME: &'static str = "flows";
    const MEANING: &'static str = "One row per flow the scenario defines, finished or not (unfinished flows have `finished = false` and NaN times), including flows that never started because the run stopped first (their `start_us` is when they were due).";
    const COLUMNS: &'static [Col<Self>] = &[
        col("flow_id", Int, "", "The flow's number, in the order flows start (from 0); flows that never started come last.", |r, _| Cell::Int(r.flow_id as i64)),
        col("src", Int, "", "Sending host, numbered from 0 in the order the topology lists hosts.", |r, _| Cell::Int(r.src as i64)),
        col("dst", Int, "", "Receiving host, numbered as `src`.", |r, _| Cell::Int(r.dst as i64)),
        col("size", Float, "bytes", "Payload bytes; inf for a long-lived flow.", |r, _| Cell::Size(r.size)),
        col("tag", Str, "", "The traffic entry's tag (\"\" when it has none).", |r, n| Cell::Str(n.tag(r.tag))),
        col("start_us", Float, "us", "When the flow's first byte is handed to the transport.", |r, _| Cell::Float(us(r.start))),
        col("finish_us", Float, "us", "When the receiver holds the last byte in order; NaN if unfinished.", |r, _| {
            Cell::Float(us_or_nan(r.finish))
        }),
        col("fct_us", Float, "us", "Flow completion time, finish − start; NaN if unfinished.", |r, _| Cell::Float(us_or_nan(r.fct()))),
        col(
            "ideal_fct_us",
            Float,
            "us",
            "The flow alone on the empty network, on its actual path (conventions.md); with `ecmp = \"packet\"` over several paths, a lower bound: the sender's and receiver's links serialise every packet, the fabric between them costs only its least latency; long-lived flows: +inf in DataFrames, 18446744073709.55 in the CSV.",
            |r, _| Cell::UsOrInf(r.ideal_fct),
        ),
        col(
            "standalone_fct_us",
            Float,
            "us",
            "HPCC's standalone FCT: base RTT + wire bytes at the bottleneck rate; long-lived flows as `ideal_fct_us`.",
            |r, _| Cell::UsOrInf(r.standalone_fct),
        ),
        col("slowdown", Float, "", "FCT / ideal FCT, unclamped (≥ 1); NaN if unfinished.", |r, _| {
            Cell::Float(r.slowdown().unwrap_or(f64::NAN))
        }),
        col("retransmits", Int, "packets", "Segments the sender retransmitted.", |r, _| Cell::Int(r.retransmits as i64)),
        col("timeouts", Int, "", "Retransmission timeouts of the sender.", |r, _| Cell::Int(r.timeouts as i64)),
        col("finished", Bool, "", "The receiver got the whole flow before the run stopped.", |r, _| Cell::Bool(r.finish.is_some())),
        col(
            "base_rtt_us",
            Float,
            "us",
            "A full segment out and its ACK back on the empty network, the flow's extra host delays included.",
            |r, _| Cell::Float(us(r.base_rtt)),
        ),
        col(
            "transport",
            Str,
            "",
            "The flow's effective transport and congestion control (`meta.transports`), e.g. `tcp:dctcp`.",
            |r, n| Cell::Str(n.transport(r.transport)),
        ),
        col("ce_marks", Int, "packets", "Packets of the flow that reached its receiving transport marked CE (behind an AC/DC vSwitch: none, the vSwitch takes the marks).", |r, _| Cell::Int(r.ce_marks as i64)),
        col("ue_marks", Int, "packets", "Packets of the flow that reached its receiving transport marked UE: they crossed a TCD port in the undetermined state and no congestion port.", |r, _| Cell::Int(r.ue_marks as i64)),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.flows
    }
}

impl Row for QueueRow {
    const NAME: &'static str = "queues";
    const MEANING: &'static str = "Samples of the queues of the ports `record.queues` selects, every `record.queue_sample_interval`.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", TIME_US, |r, _| Cell::Float(us(r.time))),
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", PORT, |r, _| Cell::Int(r.port as i64)),
        col("queue", Int, "", QUEUE, |r, _| Cell::Int(r.queue as i64)),
        col("bytes", Int, "bytes", "Bytes in the queue at the sample.", |r, _| Cell::Int(r.bytes as i64)),
        col("packets", Int, "packets", "Packets in the queue at the sample.", |r, _| Cell::Int(r.packets as i64)),
        col("marks", Int, "packets", "Packets marked CE since the previous sample.", |r, _| Cell::Int(r.marks as i64)),
        col("drops", Int, "packets", "Packets dropped since the previous sample.", |r, _| Cell::Int(r.drops as i64)),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.queues
    }
}

impl Row for LinkRow {
    const NAME: &'static str = "links";
    const MEANING: &'static str = "Transmitted bytes of the sampled ports, per sample interval.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", TIME_US, |r, _| Cell::Float(us(r.time))),
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", PORT, |r, _| Cell::Int(r.port as i64)),
        col("tx_bytes", Int, "bytes", "Bytes the port sent since the previous sample.", |r, _| Cell::Int(r.tx_bytes as i64)),
        col("utilization", Float, "", "Sent bits / (link rate × interval): 1 is a busy link.", |r, _| Cell::Float(r.utilization)),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.links
    }
}

impl Row for TraceRow {
    const NAME: &'static str = "flow_trace";
    const MEANING: &'static str = "Sender state of the flows `record.trace_flows` (or `trace_tags`) names, every `record.trace_interval`.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", TIME_US, |r, _| Cell::Float(us(r.time))),
        col("flow_id", Int, "", "The flow (`flows.flow_id`).", |r, _| Cell::Int(r.flow_id as i64)),
        col("cwnd_bytes", Float, "bytes", "Congestion window.", |r, _| Cell::Float(r.cwnd_bytes)),
        col("rate_bps", Float, "bps", "The window's rate, cwnd / srtt (rate-based senders: their rate); NaN before the first RTT sample.", |r, _| Cell::Float(r.rate_bps)),
        col("alpha", Float, "", "DCTCP's α, the estimated fraction of marked bytes; for RDMA senders DCQCN's α, TIMELY's RTT gradient, HPCC's Û or IB CC's CCTI (NaN for other controls).", |r, _| Cell::Float(r.alpha)),
        col("srtt_us", Float, "us", "Smoothed RTT (0 before the first sample).", |r, _| Cell::Float(us(r.srtt))),
        col("delivered_bytes", Int, "bytes", "Bytes the receiver holds in order.", |r, _| Cell::Int(r.delivered_bytes as i64)),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.flow_trace
    }
}

impl Row for ControlRow {
    const NAME: &'static str = "controller_steps";
    const MEANING: &'static str = "One row per parameter change a controller (`switch.controller`) made to a queue's AQM, unless `record.controller_steps = false` (long runs with many learning agents).";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", "When the change took effect.", |r, _| Cell::Float(us(r.time))),
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", PORT, |r, _| Cell::Int(r.port as i64)),
        col("queue", Int, "", QUEUE, |r, _| Cell::Int(r.queue as i64)),
        col("action", Str, "", "The AQM's kind and parameters after the change.", |r, _| Cell::Str(&r.action)),
        col("reward", Float, "", "A learning controller's reward for its previous action at this queue (centralized ACC: the mean over its queues, the same on every row of a tick); NaN for others and at the first decision.", |r, _| Cell::Float(r.reward)),
        col("epsilon", Float, "", "Its exploration rate at this decision; NaN for controllers that do not explore.", |r, _| Cell::Float(r.epsilon)),
        col("loss", Float, "", "The loss of the training step taken at this decision; NaN when none was.", |r, _| Cell::Float(r.loss)),
        col("features", Str, "", "The state the decision was made on, space-separated (ACC: queue, tx rate, marked rate, Kmin, Kmax, Pmax of the newest sample, normalised; centralized ACC: per port group the mean then the maximum of those six, on the first row of each tick only); empty for others.", |r, _| Cell::Str(&r.features)),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.controller_steps
    }
}

impl Row for RttRow {
    const NAME: &'static str = "rtt_samples";
    const MEANING: &'static str = "Every RTT sample of the traced flows (`record.trace_flows` / `trace_tags`) when `record.rtt_samples = true`: one per ACK that acknowledges new data, now − the echoed send time of the segment it acknowledges (RFC 7323 timestamps), so it includes the queueing on both paths and the receiver's ACK delay.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", "When the ACK reached the sender.", |r, _| Cell::Float(us(r.time))),
        col("flow_id", Int, "", "The flow (`flows.flow_id`).", |r, _| Cell::Int(r.flow_id as i64)),
        col("rtt_us", Float, "us", "The sample.", |r, _| Cell::Float(us(r.rtt))),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.rtt_samples
    }
}

impl Row for PauseRow {
    const NAME: &'static str = "pauses";
    const MEANING: &'static str = "Every PFC frame (`switch.pfc`) a port sent or received, unless `record.pauses = false`: a PAUSE stops the receiving port's priority, a RESUME (pause time 0) restarts it.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", "When the frame was queued to be sent, or reached the port it pauses.", |r, _| Cell::Float(us(r.time))),
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", "The port the frame left by (sent) or the port it pauses (received), numbered within the node.", |r, _| Cell::Int(r.port as i64)),
        col("priority", Int, "", "The priority it pauses or resumes.", |r, _| Cell::Int(r.priority as i64)),
        col("event", Str, "", "`pause` or `resume`.", |r, _| Cell::Str(if r.pause { "pause" } else { "resume" })),
        col("direction", Str, "", "`sent` or `received`.", |r, _| Cell::Str(if r.sent { "sent" } else { "received" })),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.pauses
    }
}

impl Row for PortRow {
    const NAME: &'static str = "ports";
    const MEANING: &'static str = "One row per port of every node (switch ports and host NICs), summed over the run.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", PORT, |r, _| Cell::Int(r.port as i64)),
        col("tx_bytes", Int, "bytes", "Bytes the port sent, PFC frames included.", |r, _| Cell::Int(r.tx_bytes as i64)),
        col("ce_marks", Int, "packets", "Packets its queues marked CE.", |r, _| Cell::Int(r.ce_marks as i64)),
        col("ue_marks", Int, "packets", "Packets its queues marked UE (TCD's undetermined state).", |r, _| Cell::Int(r.ue_marks as i64)),
        col("drops", Int, "packets", "Packets dropped at its queues (buffer, port limit, AQM).", |r, _| Cell::Int(r.drops as i64)),
        col("paused_us", Float, "us", "Time its priorities spent paused, summed over priorities.", |r, _| Cell::Float(us(r.paused))),
        col("pause_frames_sent", Int, "", "PFC frames (PAUSE and RESUME) it sent.", |r, _| Cell::Int(r.pause_frames_sent as i64)),
        col("pause_frames_received", Int, "", "PFC frames that reached it.", |r, _| Cell::Int(r.pause_frames_received as i64)),
        col("credit_stall_us", Float, "us", "Time it waited for InfiniBand credits (`switch.credit`: some VL had packets but too few credits for its head one); 0 without credits.", |r, _| Cell::Float(us(r.credit_stall))),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.ports
    }
}

impl Row for PortStateRow {
    const NAME: &'static str = "port_states";
    const MEANING: &'static str = "Every change of state of a queue running TCD (`aqm = { kind = \"tcd\" }`), in time order; a queue starts in `non_congestion`.";
    const COLUMNS: &'static [Col<Self>] = &[
        col("time_us", Float, "us", "When the packet that showed the change left the queue.", |r, _| Cell::Float(us(r.time))),
        col("node", Str, "", NODE, |r, n| Cell::Str(n.node(r.node))),
        col("port", Int, "", PORT, |r, _| Cell::Int(r.port as i64)),
        col("queue", Int, "", QUEUE, |r, _| Cell::Int(r.queue as i64)),
        col("state", Str, "", "`congestion`, `non_congestion` or `undetermined` (TCD's checking of the queue trend counts as `non_congestion`).", |r, _| Cell::Str(r.state.name())),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.port_states
    }
}

impl Row for JobRow {
    const NAME: &'static str = "jobs";
    const MEANING: &'static str = "One row per job of the traffic kinds made of jobs (`storage`: one IO; `training`: one iteration), in the order they began; a job's flows are rows of `flows` as any others. Storage IOPS = IOs finished in a window / its length; training speed = workers × batch / iteration time (`dcnlab.jobs`).";
    const COLUMNS: &'static [Col<Self>] = &[
        col("job_id", Int, "", "The job's number, in the order jobs began (from 0, over all traffic entries).", |r, _| Cell::Int(r.job_id as i64)),
        col("entry", Int, "", "The traffic entry (`[[traffic]]`, from 0) that made it.", |r, _| Cell::Int(r.entry as i64)),
        col("kind", Str, "", "`read` or `write` (storage), `iteration` (training).", |r, _| Cell::Str(r.kind)),
        col("start_us", Float, "us", "When the job began: a storage IO when it was issued (its first message starts), a training iteration when its compute phase began.", |r, _| Cell::Float(us(r.start))),
        col("finish_us", Float, "us", "When the receiver of its last flow got the last byte; NaN if unfinished.", |r, _| Cell::Float(us_or_nan(r.finish))),
        col("duration_us", Float, "us", "finish − start (an IO's latency, an iteration's time); NaN if unfinished.", |r, _| Cell::Float(us_or_nan(r.finish.map(|f| f - r.start)))),
        col("flows", Int, "", "Flows (messages) the job sent.", |r, _| Cell::Int(r.flows as i64)),
        col("bytes", Int, "bytes", "Payload bytes of those flows.", |r, _| Cell::Int(r.bytes as i64)),
        col("finished", Bool, "", "The job completed before the run stopped.", |r, _| Cell::Bool(r.finish.is_some())),
    ];
    fn rows(rec: &Records) -> &[Self] {
        &rec.jobs
    }
}
