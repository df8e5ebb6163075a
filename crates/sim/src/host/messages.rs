//! Persistent connections (`closed_loop` with `persistent = true`): what a connection carries — one
//! flow, or the messages written to it one after another, each its own flow record, complete once the
//! receiver holds its last byte in order — and how a message is written to an open connection and
//! finished.

use super::Slot;
use crate::records::FlowRow;
use crate::sim::{Ev, Sim};
use crate::transport::Transport;
use crate::units::Time;
use crate::workload::NewFlow;
use std::collections::VecDeque;

/// What a connection carries.
pub enum Carries {
    /// One flow, whose id is the slot's `flow`; the connection is freed once both ends are done.
    Flow,
    /// A persistent connection's messages (`Carrier::Persistent`); it is never freed.
    Messages(Messages),
}

/// The messages written to a persistent connection that its receiver does not hold whole yet, in the
/// order they were written.
#[derive(Default)]
pub struct Messages {
    pub pending: VecDeque<Message>,
    /// Bytes written to the connection so far (where the last message ends).
    pub written: u64,
}

/// One message on a persistent connection: its flow record, the connection's byte offset where it ends,
/// and the connection's (retransmits, timeouts) when it was written (its row gets the difference).
#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub flow: u32,
    pub end: u64,
    pub losses: (u32, u32),
}

impl Slot {
    /// The flow a packet of this connection counts for now: the flow, or the oldest message not yet
    /// complete (the last one written when all are).
    pub(crate) fn current_flow(&self) -> u32 {
        match &self.carries {
            Carries::Flow => self.flow,
            Carries::Messages(m) => m.pending.front().map_or(self.flow, |x| x.flow),
        }
    }
}

impl Sim {
    /// The next message of a persistent connection's worker: its row (the connection's path and extra
    /// delays; the ideal FCT without a handshake, the connection being open), then its bytes written to
    /// the connection.
    pub(crate) fn write_message(&mut self, sid: u32, f: NewFlow) {
        let now = self.now();
        let flow_id = self.rec.flows.len() as u32;
        let slot = &self.hosts.slots[sid as usize];
        let (hash, rhash) = (slot.hash, slot.rhash);
        let delays = [slot.delay_data, slot.delay_ctl, slot.delay_ack];
        let losses = slot.conn.losses();
        let params = self.hosts.transports[f.transport as usize].established();
        let (ideal, standalone, base_rtt) = self.ideal_fct(f.src, f.dst, hash, rhash, f.size, delays, &params);
        let row = FlowRow {
            flow_id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            tag: f.tag,
            transport: f.transport,
            start: now,
            finish: None,
            ideal_fct: ideal,
            standalone_fct: standalone,
            base_rtt,
            retransmits: 0,
            timeouts: 0,
            ce_marks: 0,
            ue_marks: 0,
        };
        self.open_flow(row, f.tag);
        self.trace_slot(flow_id, sid);
        let slot = &mut self.hosts.slots[sid as usize];
        let Carries::Messages(m) = &mut slot.carries else { unreachable!("a persistent connection carries messages") };
        m.written += f.size;
        m.pending.push_back(Message { flow: flow_id, end: m.written, losses });
        let mut out = std::mem::take(&mut self.hosts.outbox);
        slot.conn.append(f.size, now, &mut out);
        self.flush(sid, &mut out);
        self.hosts.outbox = out;
    }

    /// The messages of persistent connection `sid` whose last byte the receiver now holds complete at
    /// `now`, in order; each frees its worker.
    pub(crate) fn messages_delivered(&mut self, sid: u32, now: Time) {
        loop {
            let slot = &mut self.hosts.slots[sid as usize];
            let (src, worker, entry) = (slot.src, slot.worker, slot.entry);
            let delivered = slot.conn.delivered();
            let losses = slot.conn.losses();
            let Carries::Messages(m) = &mut slot.carries else { return };
            let Some(&msg) = m.pending.front().filter(|x| x.end <= delivered) else { return };
            m.pending.pop_front();
            let row = &mut self.rec.flows[msg.flow as usize];
            row.finish = Some(now);
            (row.retransmits, row.timeouts) = (losses.0 - msg.losses.0, losses.1 - msg.losses.1);
            self.flows_running(false);
            if (msg.flow as usize) < self.hosts.flow_slot.len() {
                self.hosts.flow_slot[msg.flow as usize] = u32::MAX;
            }
            if let Some(t) = self.work.finished(entry, src, worker, now) {
                self.push(t, Ev::Flow(entry));
            }
        }
    }

    /// At a run's end: the losses of the flows still open so far (a persistent connection's pending
    /// messages: since each was written).
    pub(crate) fn record_open_losses(&mut self) {
        for s in self.hosts.slots.iter().filter(|s| s.live) {
            let losses = s.conn.losses();
            match &s.carries {
                Carries::Flow => {
                    let f = &mut self.rec.flows[s.flow as usize];
                    (f.retransmits, f.timeouts) = losses;
                }
                Carries::Messages(m) => {
                    for msg in &m.pending {
                        let f = &mut self.rec.flows[msg.flow as usize];
                        (f.retransmits, f.timeouts) = (losses.0 - msg.losses.0, losses.1 - msg.losses.1);
                    }
                }
            }
        }
    }
}
