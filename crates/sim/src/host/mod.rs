//! Hosts: where flows start and end. A flow's transport (`transport/`) writes segments into an outbox;
//! here they become packets (ECN codepoint, PIAS priority, ECMP hash), pass the host's vSwitch slot
//! (`vswitch.rs`), wait out the host's extra delay (`delay.rs`) and join the NIC's queue (`nic.rs`,
//! `net/port.rs`). Packets that reach a host pass its vSwitch and go to the flow's transport.
//!
//! A connection carries one flow, or the messages of a persistent connection ([`Carries`]): one per
//! (traffic entry, sending host, worker, destination), opened by its first message and never freed. Its
//! packets carry the id of that first message as their `flow` (what the five-tuple is to a vSwitch: AC/DC's
//! per-connection state is shared by all its messages); each message is its own flow record, written to
//! the connection as it starts and complete once the receiver holds its last byte in order.

pub mod delay;
pub mod messages;
pub mod nic;
pub mod rx;
mod shim;
pub mod vswitch;

use crate::idvec::IdVec;
use crate::net::packet::{flags, Ecn, Packet, PktId, TcpOpt, ACK_BYTES};
use crate::records::FlowRow;
use crate::rng::{mix64, Rng};
use crate::sim::{Ev, Sim};
use crate::transport::{Connection, Fire, Out, Params, Transport, MAX_TIMERS};
use crate::units::Time;
use crate::workload::{Carrier, NewFlow};
use std::collections::{HashMap, VecDeque};
pub use messages::{Carries, Message, Messages};
use delay::{AppliesTo, DelayPer, DelaySampler};
use vswitch::{ShimOut, VSwitch};

pub struct Host {
    /// Extra delay of this host (drawn once when `per = "host"`).
    pub delay: Time,
    pub vswitch: Option<VSwitch>,
}

/// A live connection and what its packets carry.
pub struct Slot {
    pub conn: Connection,
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub hash: u32,
    pub rhash: u32,
    pub prio: u8,
    /// Extra host delay of the flow's data segments, of its other packets at the sender (the SYN), and
    /// of its ACKs at the receiver.
    pub delay_data: Time,
    pub delay_ctl: Time,
    pub delay_ack: Time,
    pub live: bool,
    /// The traffic entry that started the flow.
    pub entry: u32,
    /// The worker of the sending host that sent it (`NewFlow::worker`).
    pub worker: u32,
    pub carries: Carries,
    /// The sender's NIC port and the port its packets leave the first switch by (`Sim::next_hop`), and
    /// the same of the receiver for the ACKs: fixed for the connection's life, found when it opens
    /// rather than from each packet (a chain of four dependent loads per packet sent).
    pub nic_src: u32,
    pub hop_src: u32,
    pub nic_dst: u32,
    pub hop_dst: u32,
}

pub struct Hosts {
    pub hosts: IdVec<Host>,
    /// Every transport of the run (`Scenario::transports`); a flow names its own by index.
    pub transports: Vec<Params>,
    /// PIAS demotion thresholds (bytes sent); empty when PIAS is off.
    pub pias: Vec<u64>,
    /// Extra host delay: the sampler (built once — a CDF file is read once), per flow or per host, and
    /// whether ACKs get it too.
    pub delay: Option<(DelaySampler, DelayPer, AppliesTo)>,
    pub delay_rng: Rng,
    pub slots: IdVec<Slot>,
    pub free_slots: Vec<u32>,
    /// Slot of each traced flow (`u32::MAX`: none), kept only while flows are traced.
    pub flow_slot: Vec<u32>,
    pub outbox: Vec<Out>,
    pub shim_out: ShimOut,
    /// Whether hosts run a vSwitch (one test per packet instead of a look at the host).
    pub shims: bool,
    /// Hosts slower than their links (`host.nic.rx_rate`): their receive buffers.
    pub rx: Option<rx::RxPath>,
    /// PFC frames may arrive, hosts have receive buffers or vSwitches: arrivals take `host_receive_slow`.
    pub slow_rx: bool,
    /// The slot of each persistent connection, by (traffic entry, sending host, worker, destination).
    pub persistent: HashMap<(u32, u32, u32, u32), u32>,
}

impl Sim {
    /// A traffic source hands over a flow: record it, open its connection (or write it to its open
    /// persistent connection), send what the window allows.
    pub(crate) fn start_flow(&mut self, f: NewFlow) {
        if f.carrier == Carrier::Persistent {
            let key = (f.entry, f.src, f.worker, f.dst);
            if let Some(&sid) = self.hosts.persistent.get(&key) {
                return self.write_message(sid, f);
            }
        }
        let now = self.now();
        let flow_id = self.rec.flows.len() as u32;
        let (row, hash, rhash, [dd, dc, da]) = self.flow_row(&f, flow_id, now);
        let params = self.hosts.transports[f.transport as usize];
        self.open_flow(row, f.tag);
        let (nic_src, nic_dst) = (self.net.nic(f.src), self.net.nic(f.dst));
        let line_rate = self.net.ports[nic_src as usize].rate;
        let conn = Connection::new(flow_id, f.size, &params, line_rate);
        let slot = Slot {
            nic_src,
            hop_src: self.next_hop(nic_src, f.dst, hash),
            nic_dst,
            hop_dst: self.next_hop(nic_dst, f.src, rhash),
            conn,
            flow: flow_id,
            src: f.src,
            dst: f.dst,
            hash,
            rhash,
            prio: f.prio,
            delay_data: dd,
            delay_ctl: dc,
            delay_ack: da,
            live: true,
            entry: f.entry,
            worker: f.worker,
            carries: match f.carrier {
                Carrier::Own => Carries::Flow,
                Carrier::Persistent => {
                    let first = Message { flow: flow_id, end: f.size, losses: (0, 0) };
                    Carries::Messages(Messages { pending: VecDeque::from([first]), written: f.size })
                }
            },
        };
        let h = &mut self.hosts;
        let sid = if let Some(s) = h.free_slots.pop() {
            h.slots[s as usize] = slot;
            s
        } else {
            h.slots.push(slot);
            (h.slots.len() - 1) as u32
        };
        if f.carrier == Carrier::Persistent {
            self.hosts.persistent.insert((f.entry, f.src, f.worker, f.dst), sid);
        }
        self.trace_slot(flow_id, sid);
        if let Some(t) = f.stop {
            self.push(t, Ev::EndData { slot: sid, flow: flow_id });
        }
        let mut out = std::mem::take(&mut self.hosts.outbox);
        self.hosts.slots[sid as usize].conn.start(now, &mut out);
        self.flush(sid, &mut out);
        self.hosts.outbox = out;
    }

    /// A flow starts running: its record row, the count of running flows, and whether it is traced (by
    /// its tag) and its RTT samples kept.
    pub(crate) fn open_flow(&mut self, row: FlowRow, tag: u16) {
        let flow_id = row.flow_id;
        self.rec.flows.push(row);
        self.flows_running(true);
        if self.obs.trace_tags.contains(&tag) {
            self.obs.trace_flows.push(flow_id);
        }
        if self.obs.rtt_samples {
            let traced = self.obs.trace_flows.contains(&flow_id);
            self.obs.rtt_traced.push(traced);
        }
    }

    /// Where a traced flow's samples come from (`flow_slot`), kept only while flows are traced.
    fn trace_slot(&mut self, flow_id: u32, sid: u32) {
        if !self.obs.trace_flows.is_empty() {
            let fs = &mut self.hosts.flow_slot;
            if fs.len() <= flow_id as usize {
                fs.resize(flow_id as usize + 1, u32::MAX);
            }
            fs[flow_id as usize] = sid;
        }
    }

    /// A flow's record row as it starts at `start` with id `flow_id` (ideal FCT, base RTT), with its ECMP
    /// hashes and extra delays (drawn here, in start order, from the delay stream).
    fn flow_row(&mut self, f: &NewFlow, flow_id: u32, start: Time) -> (FlowRow, u32, u32, [Time; 3]) {
        let hash = (mix64(self.seed() ^ ((f.src as u64) << 32 | f.dst as u64) ^ mix64(flow_id as u64 + 1)) >> 32) as u32;
        let rhash = (mix64(hash as u64 ^ 0x5EED) >> 32) as u32;
        let h = &mut self.hosts;
        let (dd, da) = match &h.delay {
            None => (0, 0),
            Some((sampler, per, applies_to)) => {
                let (ds, dr) = match per {
                    DelayPer::Flow => {
                        let d = sampler.draw(&mut h.delay_rng);
                        (d, d)
                    }
                    DelayPer::Host => (h.hosts[f.src as usize].delay, h.hosts[f.dst as usize].delay),
                };
                (ds, if *applies_to == AppliesTo::All { dr } else { 0 })
            }
        };
        // A flow file's delay is the flow's own: it replaces what `host.extra_delay` gave the flow's data,
        // and its ACKs' too when that applies to all packets (the same value both ways, as a per-flow draw
        // gives). The draw above is still made, so the other flows' draws do not depend on which flows carry
        // a delay of their own.
        let applies_to = h.delay.as_ref().map_or(AppliesTo::Data, |d| d.2);
        let (dd, da) = match f.extra_delay {
            None => (dd, da),
            Some(x) => (x, if applies_to == AppliesTo::All { x } else { 0 }),
        };
        // The SYN waits as the data does, unless only segments with payload are held.
        let dc = if applies_to == AppliesTo::Payload { 0 } else { dd };
        let params = self.hosts.transports[f.transport as usize];
        // A NIC-paced sender (RDMA) gets its RTT variation on the way back: its receiver's ACKs wait.
        let (dd, dc, da) = if params.delay_on_data() { (dd, dc, da) } else { (0, 0, da + dd) };
        let (ideal, standalone, base_rtt) = self.ideal_fct(f.src, f.dst, hash, rhash, f.size, [dd, dc, da], &params);
        let row = FlowRow {
            flow_id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            tag: f.tag,
            transport: f.transport,
            start,
            finish: None,
            ideal_fct: ideal,
            standalone_fct: standalone,
            base_rtt,
            retransmits: 0,
            timeouts: 0,
            ce_marks: 0,
            ue_marks: 0,
        };
        (row, hash, rhash, [dd, dc, da])
    }

    /// At the end of a run, the flows the scenario defines that never started (the run stopped before
    /// their start time, or a closed-loop entry was still waiting) become unfinished rows with the start
    /// time the traffic gave them, in start order after the flows that ran.
    pub(crate) fn record_unstarted(&mut self) {
        let mut pending: Vec<NewFlow> = self.work.sources.iter_mut().flat_map(|e| e.unstarted()).collect();
        pending.sort_by_key(|f| (f.start, f.entry));
        for f in pending {
            let flow_id = self.rec.flows.len() as u32;
            let (row, ..) = self.flow_row(&f, flow_id, f.start);
            self.rec.flows.push(row);
        }
    }

    /// Turn what connection `sid` asked to send into packets and send them.
    fn flush(&mut self, sid: u32, out: &mut Vec<Out>) {
        // Read, then cleared: a `drain` cost ~20 instructions per packet (shortened incast 772.7 -> 760.3
        // per packet-hop). The connection's values are read from its slot where each packet needs them,
        // not gathered before the loop: most calls make one packet, and values held across the NIC's
        // inlined send path were spilled to the stack and read back.
        for &o in out.iter() {
            let f = match o {
                Out::Seg { flags, .. } | Out::Ack { flags, .. } => flags,
            };
            // A SYN's window scale (of its sender's end); a fresh INT stack for an HPCC data packet, and
            // for its ACK a copy of the records its data packet brought (the packet just delivered:
            // `int.scratch`).
            let opt = if f & (flags::SYN | flags::INT) == 0 {
                TcpOpt::None
            } else if f & flags::SYN != 0 {
                TcpOpt::WScale(self.hosts.slots[sid as usize].conn.wscale())
            } else if f & flags::DATA != 0 {
                TcpOpt::Int(self.int.alloc(Default::default()))
            } else {
                TcpOpt::Int(self.int.alloc_scratch())
            };
            let slot = &self.hosts.slots[sid as usize];
            let (src, dst, flow) = (slot.src, slot.dst, slot.flow);
            let pias = &self.hosts.pias;
            // Each arm hands its packet straight to the arena, so that it is written into its slot
            // rather than built aside and copied there.
            let (id, from, delay, (nic, hop)) = match o {
                Out::Seg { seq, len, ts, .. } => (
                    self.arena.alloc(Packet {
                        conn: sid,
                        flow,
                        seq,
                        ack: 0,
                        ts,
                        enq: 0,
                        src,
                        dst,
                        hash: slot.hash,
                        // RoCE: its own header bytes.
                        size: if len == 0 { ACK_BYTES } else { (len + slot.conn.header_bytes()).max(ACK_BYTES) },
                        payload: len,
                        win: 0,
                        flags: f,
                        ecn: if slot.conn.ect() { Ecn::Ect } else { Ecn::NotEct },
                        // PIAS: demote by the bytes the flow sent before this segment.
                        prio: if pias.is_empty() { slot.prio } else { pias.iter().filter(|&&t| seq >= t).count() as u8 },
                        in_port: 0,
                        opt,
                        next: 0,
                        hop: crate::net::link::NO_HOP,
                    }),
                    src,
                    if len == 0 { slot.delay_ctl } else { slot.delay_data },
                    (slot.nic_src, slot.hop_src),
                ),
                Out::Ack { ack, ts_echo, win, .. } => (
                    self.arena.alloc(Packet {
                        conn: sid,
                        flow,
                        seq: 0,
                        ack,
                        ts: ts_echo,
                        enq: 0,
                        src: dst,
                        dst: src,
                        hash: slot.rhash,
                        size: ACK_BYTES,
                        payload: 0,
                        win,
                        flags: f,
                        ecn: if slot.conn.ect_control() { Ecn::Ect } else { Ecn::NotEct },
                        // RoCE: its ACKs/NACKs/CNPs on their own priority.
                        prio: match slot.conn.control_prio() {
                            Some(c) => c,
                            None if pias.is_empty() => slot.prio,
                            None => 0,
                        },
                        in_port: 0,
                        opt,
                        next: 0,
                        hop: crate::net::link::NO_HOP,
                    }),
                    dst,
                    slot.delay_ack,
                    (slot.nic_dst, slot.hop_dst),
                ),
            };
            self.count_sent(id);
            if self.hosts.shims && !self.shim_egress(from, id) {
                continue;
            }
            if delay > 0 || self.hosts.shims {
                // Delayed, or perhaps rewritten by a vSwitch: the general way.
                self.to_nic(id, delay);
            } else {
                let pkt = self.arena.get(id);
                // What the general path would find (every test checks it on every packet it sends).
                debug_assert_eq!((nic, hop), (self.net.nic(pkt.src), self.next_hop(self.net.nic(pkt.src), pkt.dst, pkt.hash)));
                let qi = self.net.ports[nic as usize].queue_for(pkt.prio);
                self.port_push_hop(nic, qi, id, hop);
            }
        }
        out.clear();
        self.sync_timers(sid);
    }

    /// A packet enters the network's accounting (conservation: sent = delivered + dropped + in flight).
    #[inline(always)]
    pub(crate) fn count_sent(&mut self, id: PktId) {
        let size = self.arena.get(id).size as u64;
        self.rec.meta.conservation.sent_packets += 1;
        self.rec.meta.conservation.sent_bytes += size;
    }

    /// The extra host delay, then the NIC.
    #[inline(always)]
    fn to_nic(&mut self, id: PktId, delay: Time) {
        if delay > 0 {
            let now = self.now();
            self.push(now + delay, Ev::Release(id));
        } else {
            self.nic_release(id);
        }
    }

    /// A packet reaches its sending host's NIC queue.
    #[inline(always)]
    pub(crate) fn nic_release(&mut self, id: PktId) {
        let pkt = self.arena.get(id);
        let p = self.net.nic(pkt.src);
        let qi = self.net.ports[p as usize].queue_for(pkt.prio);
        self.port_push(p, qi, id);
    }

    /// The RTT sample an ACK just gave a traced flow (`record.rtt_samples`).
    #[cold]
    fn record_rtt(&mut self, now: Time, flow: u32, sid: u32) {
        if !self.obs.rtt_traced[flow as usize] {
            return;
        }
        let rtt = self.hosts.slots[sid as usize].conn.last_rtt();
        if rtt > 0 {
            self.rec.rtt_samples.push(crate::records::RttRow { time: now, flow_id: flow, rtt });
        }
    }

    fn sync_timers(&mut self, sid: u32) {
        let due = self.hosts.slots[sid as usize].conn.due();
        for (i, d) in due.into_iter().enumerate() {
            if let Some(t) = d {
                self.push(t, Ev::Timer { slot: sid, timer: i as u8 });
            }
        }
    }

    pub(crate) fn timer_fired(&mut self, sid: u32, i: u8) {
        let now = self.now();
        let Some(slot) = self.hosts.slots.get_mut(sid as usize).filter(|s| s.live) else { return };
        let Some(timer) = slot.conn.timer(i as usize) else { return };
        match timer.fire(now) {
            Fire::Ignore => {}
            Fire::Rearm(t) => self.push(t, Ev::Timer { slot: sid, timer: i }),
            Fire::Expired => {
                let mut out = std::mem::take(&mut self.hosts.outbox);
                self.hosts.slots[sid as usize].conn.on_timer(i as usize, now, &mut out);
                self.flush(sid, &mut out);
                self.hosts.outbox = out;
            }
        }
    }

    /// A data packet left its sender's NIC: TSQ accounting, and sending what it held back.
    /// The connection writes into the outbox in place (it is empty here, or the empty stand-in of a
    /// `flush` under way); it is taken only when there is something to send, which for most departures
    /// there is not.
    #[inline(always)]
    pub(crate) fn host_departure(&mut self, sid: u32, flow: u32, payload: u32) {
        let now = self.now();
        let hosts = &mut self.hosts;
        let Some(slot) = hosts.slots.get_mut(sid as usize).filter(|s| s.live && s.flow == flow) else { return };
        if slot.conn.departed(payload, now, &mut hosts.outbox) {
            let mut out = std::mem::take(&mut self.hosts.outbox);
            self.flush(sid, &mut out);
            self.hosts.outbox = out;
        }
        debug_assert!(self.hosts.outbox.is_empty(), "a connection that only counted a departure sent something");
    }

    /// A packet reaches host `host` from the network.
    #[inline(always)]
    pub(crate) fn host_receive(&mut self, host: u32, id: PktId) {
        if self.hosts.slow_rx {
            return self.host_receive_slow(host, id);
        }
        self.deliver(host, id);
    }

    /// With PFC, a receive rate or a vSwitch: a PFC frame pauses the NIC, other packets go through the
    /// receive buffer if the host has one, then the vSwitch.
    #[cold]
    fn host_receive_slow(&mut self, host: u32, id: PktId) {
        if self.arena.get(id).flags & flags::PFC != 0 {
            return self.frame_arrived(self.net.nic(host), id);
        }
        if self.net.credit.is_some() {
            // The host takes the packet at once: its blocks go back to the switch port that sent it.
            self.credit_return(self.net.ports[self.net.nic(host) as usize].rev, id);
        }
        if self.hosts.rx.is_some() {
            return self.rx_arrive(host, id);
        }
        self.host_take(host, id);
    }

    /// Host `host` takes a packet up from its NIC: its vSwitch, then the flow's transport.
    pub(crate) fn host_take(&mut self, host: u32, id: PktId) {
        if self.hosts.shims && !self.shim_ingress(host, id) {
            return;
        }
        self.deliver(host, id);
    }

    /// Hand a packet to its flow's transport at `host`. The transport reads the packet in its arena slot
    /// rather than an 88-byte copy (1.3–1.5 % of the instructions per packet-hop on benchmarks 1–3), and
    /// the slot is freed before anything is sent, so the arena hands out the slots `take_delivered` would.
    #[inline(always)]
    fn deliver(&mut self, host: u32, id: PktId) {
        self.count_delivered(id);
        let now = self.now();
        let pkt = self.arena.get(id);
        debug_assert_eq!(pkt.dst, host);
        let (sid, flow) = (pkt.conn, pkt.flow);
        let Some(slot) = self.hosts.slots.get_mut(sid as usize).filter(|s| s.live && s.flow == flow) else {
            self.arena.free(id);
            return; // a late packet of a connection that has closed
        };
        let mut out = std::mem::take(&mut self.hosts.outbox);
        if host == slot.dst {
            if pkt.ecn as u8 >= Ecn::Ue as u8 {
                let row = &mut self.rec.flows[flow as usize];
                if pkt.ecn == Ecn::Ce {
                    row.ce_marks += 1;
                } else {
                    row.ue_marks += 1;
                }
            }
            let done = slot.conn.at_receiver(now, pkt, &mut out);
            let (entry, worker, src) = (slot.entry, slot.worker, pkt.src);
            let messages = matches!(slot.carries, Carries::Messages(_));
            self.arena.free(id);
            if messages {
                self.flush(sid, &mut out);
                self.messages_delivered(sid, now);
                self.hosts.outbox = out;
                return;
            }
            if done {
                self.rec.flows[flow as usize].finish = Some(now);
                self.flows_running(false);
            }
            self.flush(sid, &mut out);
            if done {
                if let Some(t) = self.work.finished(entry, src, worker, now) {
                    self.push(t, Ev::Flow(entry));
                }
            }
        } else {
            if let TcpOpt::Int(_) = pkt.opt {
                slot.conn.at_sender_int(now, pkt, self.int.scratch.hops(), &mut out);
            } else {
                slot.conn.at_sender(now, pkt, &mut out);
            }
            self.arena.free(id);
            if self.obs.rtt_samples {
                // The flow an RTT sample counts for: a persistent connection's oldest open message.
                let current = self.hosts.slots[sid as usize].current_flow();
                self.record_rtt(now, current, sid);
            }
            self.flush(sid, &mut out);
            self.close_if_done(sid, flow);
        }
        self.hosts.outbox = out;
    }

    /// A packet leaves the network at its destination (conservation: delivered); returns it.
    #[inline(always)]
    pub(crate) fn take_delivered(&mut self, id: PktId) -> Packet {
        self.count_delivered(id);
        let pkt = *self.arena.get(id);
        self.arena.free(id);
        pkt
    }

    /// A packet leaves the network at its destination (conservation: delivered); its INT records, if
    /// any, go to `int.scratch` for the transport. The caller frees its slot.
    #[inline(always)]
    fn count_delivered(&mut self, id: PktId) {
        let pkt = self.arena.get(id);
        if let TcpOpt::Int(i) = pkt.opt {
            self.int.take(i);
        }
        self.rec.meta.conservation.delivered_packets += 1;
        self.rec.meta.conservation.delivered_bytes += pkt.size as u64;
    }

    /// Free connection `sid` (of `flow`) once both ends are done; a persistent connection stays. The test
    /// is made where the ACK was delivered, the closing out of line (a call per ACK cost ~15 instructions).
    #[inline(always)]
    fn close_if_done(&mut self, sid: u32, flow: u32) {
        let slot = &self.hosts.slots[sid as usize];
        if matches!(slot.carries, Carries::Flow) && slot.conn.closed() {
            self.close(sid, flow);
        }
    }

    #[cold]
    fn close(&mut self, sid: u32, flow: u32) {
        let slot = &mut self.hosts.slots[sid as usize];
        let f = &mut self.rec.flows[flow as usize];
        (f.retransmits, f.timeouts) = slot.conn.losses();
        slot.live = false;
        for i in 0..MAX_TIMERS {
            if let Some(t) = slot.conn.timer(i) {
                t.deadline = None;
            }
        }
        if (flow as usize) < self.hosts.flow_slot.len() {
            self.hosts.flow_slot[flow as usize] = u32::MAX;
        }
        self.hosts.free_slots.push(sid);
    }

    /// A flow's application stops writing (`stop` of a flows list): the flow becomes what its sender has
    /// sent, its record's size and ideal FCT with it; it completes now if the receiver holds all of that.
    pub(crate) fn end_data(&mut self, sid: u32, flow: u32) {
        let now = self.now();
        let Some(slot) = self.hosts.slots.get_mut(sid as usize).filter(|s| s.live && s.flow == flow) else { return };
        debug_assert!(matches!(slot.carries, Carries::Flow), "messages have no stop");
        let (size, done) = slot.conn.end_data(now);
        let (src, dst, hash, rhash, entry, worker) = (slot.src, slot.dst, slot.hash, slot.rhash, slot.entry, slot.worker);
        let delays = [slot.delay_data, slot.delay_ctl, slot.delay_ack];
        let row = &self.rec.flows[flow as usize];
        let params = self.hosts.transports[row.transport as usize];
        if size != row.size {
            let (ideal, standalone, _) = self.ideal_fct(src, dst, hash, rhash, size, delays, &params);
            let row = &mut self.rec.flows[flow as usize];
            (row.size, row.ideal_fct, row.standalone_fct) = (size, ideal, standalone);
        }
        if done {
            self.rec.flows[flow as usize].finish = Some(now);
            self.flows_running(false);
            if let Some(t) = self.work.finished(entry, src, worker, now) {
                self.push(t, Ev::Flow(entry));
            }
        }
        self.close_if_done(sid, flow);
    }
}
