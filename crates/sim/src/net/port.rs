//! A port: up to 8 queues (one per priority), each with its AQM, a scheduler (strict priority or DWRR)
//! between them, per-priority pause state and credits (for lossless fabrics), and counters per queue that
//! AQMs, controllers and records read. At a host the port is the NIC (drop-tail, no buffer limit; see
//! `host/nic.rs` for its per-flow round robin); at a switch a packet reaches it after the switch admitted
//! it (`net/switch.rs`) and the AQM's enqueue decision, and the AQM decides again at dequeue.

use super::fifo::PktFifo;
use super::int::Hop;
use super::packet::{flags, Arena, Ecn, Packet, PktId, TcpOpt};
use super::Owner;
use crate::aqm::{Aqm, Hooks, QueueCtx, Verdict};
use crate::host::nic::FlowRr;
use crate::rng::Rng;
use crate::sim::{Ev, Sim};
use crate::units::{Time, SEC};
use std::collections::VecDeque;

/// Cumulative counters of one queue (controllers take differences between ticks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// CE marks (packets) and their bytes.
    pub marks: u64,
    pub marked_bytes: u64,
    /// UE marks (TCD), packets.
    pub ue_marks: u64,
    /// Every drop at this queue: buffer, port limit, AQM.
    pub drops: u64,
    /// Time this queue's priority spent paused (ps), up to the last pause change.
    pub paused_ps: Time,
}

pub struct Queue {
    pub fifo: PktFifo,
    pub bytes: u64,
    pub aqm: Aqm,
    pub non_ect_drop: bool,
    /// `aqm.acts_at_dequeue()`, kept here: every departure reads it, and the AQM's answer was a match
    /// over its kinds (~8 instructions). Set by `new` and again wherever the AQM's parameters change
    /// (`control::Tick::set_aqm`); debug builds check it at each use.
    pub deq: bool,
    pub deficit: u64,
    pub count: QueueCounters,
    /// Marks and drops since the last queue sample.
    pub s_marks: u64,
    pub s_drops: u64,
}

impl Queue {
    pub fn new(aqm: Aqm, non_ect_drop: bool) -> Queue {
        let deq = aqm.acts_at_dequeue();
        Queue { fifo: PktFifo::new(), bytes: 0, aqm, non_ect_drop, deq, deficit: 0, count: QueueCounters::default(), s_marks: 0, s_drops: 0 }
    }

    /// Carry out an AQM verdict on a packet: mark CE (a Not-ECT packet passes or is dropped per
    /// `non_ect`), count it. Returns true when the packet must be dropped.
    #[inline(always)]
    pub fn apply(&mut self, v: Verdict, pkt: &mut Packet) -> bool {
        let drop = match v {
            Verdict::Pass => false,
            Verdict::Mark if pkt.ecn != Ecn::NotEct => {
                pkt.ecn = Ecn::Ce;
                self.count.marks += 1;
                self.count.marked_bytes += pkt.size as u64;
                self.s_marks += 1;
                false
            }
            Verdict::Mark => self.non_ect_drop,
            Verdict::MarkUe => {
                if matches!(pkt.ecn, Ecn::Ect | Ecn::Ue) {
                    pkt.ecn = Ecn::Ue;
                    self.count.ue_marks += 1;
                }
                false
            }
            Verdict::Drop => true,
        };
        if drop {
            self.count_drop();
        }
        drop
    }

    #[inline]
    pub fn count_drop(&mut self) {
        self.count.drops += 1;
        self.s_drops += 1;
    }
}

/// How a port picks the queue it serves next. (`repr(u8)`: a one-byte tag is cheaper to test on every
/// packet than the niche encoding Rust would pick.)
#[repr(u8)]
pub enum Sched {
    /// Strict priority: the lowest-numbered non-empty, unpaused queue.
    Sp,
    /// Deficit weighted round robin, quantum = weight × MTU.
    Dwrr { quantum: Vec<u64>, cur: usize, fresh: bool },
    /// A host NIC serving its flows in turn (one queue, `host.nic.scheduling = "round_robin"`).
    FlowRr(Box<FlowRr>),
}

pub struct Port {
    pub owner: Owner,
    /// Node number of the owner and of the far end (records and routing use node numbers).
    pub node: u32,
    pub local: u32,
    pub peer: u32,
    pub peer_owner: Owner,
    pub rate: u64,
    pub delay: Time,
    pub loss: f64,
    pub queues: crate::idvec::IdVec<Queue>,
    pub sched: Sched,
    /// Strict priority on a fabric without credits: with nothing paused, a packet may leave without
    /// waiting in a queue (`port_push`, `wake`). Fixed when the network is built; one test where those
    /// paths made two.
    pub direct: bool,
    pub bytes: u64,
    pub pkts: u32,
    pub limit: u64,
    pub busy_until: Time,
    pub wake_pending: bool,
    /// Remainder of bits × 10¹² not yet turned into whole picoseconds.
    pub carry: u64,
    /// Exact picoseconds per byte when the rate divides 8·10¹² (every common rate); 0 otherwise.
    pub ps_per_byte: u64,
    pub pipe: super::link::Pipe,
    pub tx_bytes: u64,
    pub tx_bytes_link_sample: u64,
    pub rng: Option<Rng>,
    /// Bit k set ⇔ priority k may not send (PFC PAUSE received, or no InfiniBand credits).
    pub paused: u8,
    /// PFC frames waiting to go ahead of the data (`fc.ctl`; they count in `pkts`).
    pub ctl: u8,
    /// The same link's other direction: the far node's port back to this one.
    pub rev: u32,
    /// Per-priority flow-control state, kept apart (it is not touched per packet) and made on first use:
    /// a port that is never paused and sends no PFC frame has none (`fc()` reads it as all zero). On a
    /// lossy fabric of thousands of hosts this is 240 bytes a port saved.
    pub(crate) fc: Option<Box<FlowCtl>>,
}

/// Flow-control state of a port per priority.
#[derive(Clone, Debug)]
pub struct FlowCtl {
    /// When each priority's current pause began.
    pub paused_since: [Time; 8],
    /// Credits per priority in bytes, for credit-based flow control; `u64::MAX` = not credit-limited.
    pub credits: [u64; 8],
    /// PFC frames to send before any data (`net/lossless.rs`).
    pub ctl: VecDeque<PktId>,
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Timer-mode PFC: when each priority's pause runs out (0: not timed).
    pub pause_until: [Time; 8],
}

impl FlowCtl {
    /// No pause, no frame, not credit-limited.
    const NONE: FlowCtl = FlowCtl { paused_since: [0; 8], credits: [u64::MAX; 8], ctl: VecDeque::new(), frames_sent: 0, frames_received: 0, pause_until: [0; 8] };
}

static NO_FLOW_CTL: FlowCtl = FlowCtl::NONE;

impl Default for FlowCtl {
    fn default() -> Self {
        FlowCtl::NONE
    }
}

// Four cache lines each, so that a port's or a queue's address is a shift of its number.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Port>() == 256 && std::mem::size_of::<Queue>() == 256);

impl Port {
    /// The queue a packet of priority `prio` goes to (and, under credits, its virtual lane): its own
    /// index, or the last queue where the port has fewer.
    #[inline(always)]
    pub fn queue_for(&self, prio: u8) -> usize {
        (prio as usize).min(self.queues.len() - 1)
    }

    /// This port's flow-control state (all zero, not credit-limited, if it has never needed any).
    #[inline]
    pub fn fc(&self) -> &FlowCtl {
        self.fc.as_deref().unwrap_or(&NO_FLOW_CTL)
    }

    /// This port's flow-control state, made now if it has none.
    pub fn fc_mut(&mut self) -> &mut FlowCtl {
        self.fc.get_or_insert_with(Box::default)
    }

    /// Serialisation time of `size` bytes in whole picoseconds; the remainder is carried so the long-run
    /// rate is exact.
    #[inline(always)]
    pub fn serialise(&mut self, size: u64) -> Time {
        if self.ps_per_byte != 0 {
            size * self.ps_per_byte
        } else {
            let bits_ps = size as u128 * 8 * SEC as u128 + self.carry as u128;
            self.carry = (bits_ps % self.rate as u128) as u64;
            (bits_ps / self.rate as u128) as Time
        }
    }

    #[inline]
    fn eligible(&self, q: usize) -> bool {
        !self.queues[q].fifo.is_empty() && self.paused & (1 << q) == 0
    }

    /// The queue the scheduler serves next, if any queue has a packet and may send.
    fn pick(&mut self, arena: &Arena) -> Option<usize> {
        let paused = self.paused;
        match &mut self.sched {
            // Queue 0 first, then the rest in order: one test for the usual single queue.
            Sched::Sp if paused == 0 && !self.queues[0].fifo.is_empty() => Some(0),
            Sched::Sp if paused == 0 => (1..self.queues.len()).find(|&q| !self.queues[q].fifo.is_empty()),
            Sched::Sp => (0..self.queues.len()).find(|&q| !self.queues[q].fifo.is_empty() && paused & (1 << q) == 0),
            Sched::FlowRr(_) => (paused & 1 == 0).then_some(0),
            Sched::Dwrr { .. } if paused != 0 && !self.queues.iter().enumerate().any(|(i, q)| !q.fifo.is_empty() && paused & (1 << i) == 0) => None,
            Sched::Dwrr { quantum, cur, fresh } => loop {
                let q = &mut self.queues[*cur];
                if q.fifo.is_empty() {
                    q.deficit = 0;
                    *cur = (*cur + 1) % quantum.len();
                    *fresh = true;
                    continue;
                }
                if paused & (1 << *cur) != 0 {
                    // A paused queue keeps its deficit and waits for its turn after the pause.
                    *cur = (*cur + 1) % quantum.len();
                    *fresh = true;
                    continue;
                }
                if *fresh {
                    q.deficit += quantum[*cur];
                    *fresh = false;
                }
                let head = arena.get(q.fifo.front().unwrap()).size as u64;
                if q.deficit >= head {
                    q.deficit -= head;
                    let i = *cur;
                    if q.fifo.len() == 1 {
                        q.deficit = 0;
                        *cur = (*cur + 1) % quantum.len();
                        *fresh = true;
                    }
                    break Some(i);
                }
                *cur = (*cur + 1) % quantum.len();
                *fresh = true;
            },
        }
    }

    /// Take the head packet of queue `qi`.
    #[inline(always)]
    fn pop(&mut self, qi: usize, arena: &Arena) -> PktId {
        let id = match &mut self.sched {
            Sched::FlowRr(rr) => rr.pop(arena),
            _ => self.queues[qi].fifo.pop_front(arena).unwrap(),
        };
        let size = arena.get(id).size as u64;
        let q = &mut self.queues[qi];
        q.count.tx_pkts += 1;
        q.count.tx_bytes += size;
        q.bytes -= size;
        self.bytes -= size;
        self.pkts -= 1;
        id
    }

    #[inline(always)]
    pub(crate) fn ctx(&self, qi: usize, now: Time, mtu: u32) -> QueueCtx {
        let q = &self.queues[qi];
        QueueCtx {
            now,
            queue_bytes: q.bytes,
            queue_pkts: q.fifo.len() as u32,
            port_bytes: self.bytes,
            port_rate: self.rate,
            mtu,
        }
    }
}

impl Sim {
    /// Queue a packet at port `p` (a switch has already admitted it and run the enqueue-time AQM) and
    /// start sending if the port is idle.
    #[inline(always)]
    pub(crate) fn port_push(&mut self, p: u32, qi: usize, id: PktId) {
        // Per-flow ECMP is a function of (switch, destination, hash), fixed for the run: the port the
        // packet will leave the next switch by is found now, while this port's state loads, rather than
        // when it is sent, where the route table's line was one more load after the queue's and the
        // packet's.
        let pkt = self.arena.get(id);
        let hop = self.next_hop(p, pkt.dst, pkt.hash);
        self.port_push_hop(p, qi, id, hop);
    }

    /// The port a packet to `dst` with `hash` will leave the next node by, once port `p` has sent it
    /// (`Packet::hop`): per-flow ECMP's choice at the next switch; `NO_HOP` where that node is a host or
    /// the switches spray packets.
    #[inline(always)]
    pub(crate) fn next_hop(&self, p: u32, dst: u32, hash: u32) -> u32 {
        match self.net.ports[p as usize].peer_owner {
            Owner::Switch(s) if !self.net.ecmp_packet => self.route(s, dst, hash),
            _ => super::link::NO_HOP,
        }
    }

    /// `port_push` with the packet's next hop known (`next_hop`; a host's connection keeps its own,
    /// `host::Slot::hop_src`).
    #[inline(always)]
    pub(crate) fn port_push_hop(&mut self, p: u32, qi: usize, id: PktId, hop: u32) {
        let now = self.now();
        let pkt = self.arena.get_mut(id);
        pkt.enq = now;
        pkt.hop = hop;
        let (size, conn) = (pkt.size as u64, pkt.conn);
        let port = &mut self.net.ports[p as usize];
        // A port with nothing queued, its link free, nothing paused and no credits to check sends the
        // packet at once: queued and taken straight back by `start_tx`, it would leave every counter and
        // every AQM input as this path leaves them (strict priority picks the one packet there is; DWRR's
        // deficits and a NIC's per-flow round robin change at a pick, so those ports queue it). A wake-up
        // is pending only while a packet is queued, so `!wake_pending` is a guard, not a test.
        if port.pkts == 0 && !port.wake_pending && port.busy_until <= now && port.paused == 0 && port.direct {
            let owner = port.owner;
            if port.busy_until < now && matches!(owner, Owner::Switch(_)) {
                for q in 0..port.queues.len() {
                    port.queues[q].aqm.on_idle();
                }
            }
            let q = &mut port.queues[qi];
            q.count.tx_pkts += 1;
            q.count.tx_bytes += size;
            self.depart(p, owner, qi, id, size);
            return;
        }
        let qi = match &mut port.sched {
            Sched::FlowRr(rr) => {
                rr.push(conn, id);
                0 // one queue, served flow by flow
            }
            _ => {
                port.queues[qi].fifo.push_back(id, &mut self.arena);
                qi
            }
        };
        let q = &mut port.queues[qi];
        q.bytes += size;
        port.bytes += size;
        port.pkts += 1;
        if !port.wake_pending {
            if port.busy_until <= now {
                self.start_tx(p);
            } else {
                port.wake_pending = true;
                let t = port.busy_until;
                self.push(t, Ev::Wake(p));
            }
        }
    }

    #[inline]
    pub(crate) fn wake(&mut self, p: u32) {
        let port = &mut self.net.ports[p as usize];
        port.wake_pending = false;
        if port.pkts > 0 {
            // A PFC frame goes ahead of the data (`net/lossless.rs`). Frames wait only behind a frame on
            // the wire, so a port with one waiting always has a wake pending: `start_tx` never sees one.
            if port.ctl != 0 {
                return self.send_ctl(p);
            }
            // The usual wake-up: a strict-priority port, nothing paused, no credits, its link freed just
            // now (not idle: no idle hook) and a packet in queue 0, which the scheduler would pick. Taken
            // here without `start_tx`'s loop; after a dequeue-time drop `start_tx` asks again, as its loop
            // would at the same instant.
            if port.paused == 0 && port.busy_until == self.eng.now() && port.direct && !port.queues[0].fifo.is_empty() {
                let owner = port.owner;
                let id = port.pop(0, &self.arena);
                let size = self.arena.get(id).size as u64;
                if self.depart(p, owner, 0, id, size) {
                    self.start_tx(p);
                }
                return;
            }
            self.start_tx(p);
        }
    }

    /// Pick the next packet by the scheduler, run the dequeue-time AQM, serialise it onto the link.
    pub(crate) fn start_tx(&mut self, p: u32) {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let owner = port.owner;
        if port.busy_until < now && matches!(owner, Owner::Switch(_)) {
            // The link went idle with every queue empty (CoDel leaves its dropping state).
            // (By index: a slice iterator over the queues made LLVM derive its trip count with a
            // division on every idle start.)
            for q in 0..port.queues.len() {
                port.queues[q].aqm.on_idle();
            }
        }
        // The queue the scheduler picked; after a dequeue-time drop the same queue is asked again at the
        // same instant (RFC 8289's dequeue loop), then the scheduler if it ran dry.
        let mut picked: Option<usize> = None;
        loop {
            if self.net.credit.is_some() {
                // VLs whose head packet lacks credits go OFF before the scheduler picks (its DWRR
                // deficits count only packets that leave).
                self.credit_gate(p);
            }
            let port = &mut self.net.ports[p as usize];
            if port.pkts == 0 {
                return;
            }
            let qi = match picked.filter(|&q| port.eligible(q)) {
                Some(q) => q,
                None => match port.pick(&self.arena) {
                    Some(q) => q,
                    None => return, // everything left is paused
                },
            };
            picked = Some(qi);
            let port = &mut self.net.ports[p as usize];
            let id = port.pop(qi, &self.arena);
            if self.net.credit.is_some() {
                self.credit_dequeued(p, qi, id);
            }
            let size = self.arena.get(id).size as u64;
            if self.depart(p, owner, qi, id, size) {
                continue;
            }
            return;
        }
    }

    /// Packet `id` (`size` bytes), just taken from queue `qi` of port `p`: release its switch buffer, run
    /// the dequeue-time AQM, record INT, serialise it onto the link and tell its host it left. True when
    /// the AQM dropped it (nothing was sent).
    #[inline(always)]
    fn depart(&mut self, p: u32, owner: Owner, qi: usize, id: PktId, size: u64) -> bool {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let tsq = match owner {
            Owner::Switch(s) => {
                let sw = &mut self.net.switches[s as usize];
                if sw.pfc.is_none() {
                    sw.used -= size;
                } else {
                    super::lossless::release(&self.net.pfc, sw, s, self.arena.get(id), size, &mut self.eng);
                }
                // An AQM quiet at dequeue (DCTCP marking at enqueue, drop-tail) would pass the packet
                // and change nothing: no call, no context.
                debug_assert_eq!(port.queues[qi].deq, port.queues[qi].aqm.acts_at_dequeue());
                if port.queues[qi].deq && self.aqm_dequeue(p, s, qi, id, size) {
                    return true;
                }
                let port = &self.net.ports[p as usize];
                let pkt = self.arena.get(id);
                // INT (HPCC): the port's record on a data packet that collects them.
                if let TcpOpt::Int(i) = pkt.opt {
                    if pkt.flags & flags::DATA != 0 {
                        self.int.push(i, Hop { ts: now, tx_bytes: port.tx_bytes, qlen: port.bytes, rate: port.rate });
                    }
                }
                None
            }
            Owner::Host(h) => {
                let pkt = self.arena.get(id);
                (pkt.payload > 0 && pkt.src == h).then_some((pkt.conn, pkt.flow, pkt.payload))
            }
        };
        self.transmit(p, id, size);
        if let Some((sid, flow, payload)) = tsq {
            self.host_departure(sid, flow, payload);
        }
        false
    }

    /// The dequeue-time AQM of queue `qi` of switch `s`'s port `p` on packet `id` (`size` bytes), just
    /// taken from it: mark, or drop (true). Out of line, so that the values a sojourn-time AQM derives
    /// from the clock are not computed ahead in `start_tx` for every packet of every port (LLVM hoisted
    /// them out of its loop; out of line, shortened benchmark 1 runs 1 % fewer instructions).
    #[inline(never)]
    fn aqm_dequeue(&mut self, p: u32, s: u32, qi: usize, id: PktId, size: u64) -> bool {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let sw = &mut self.net.switches[s as usize];
        let pkt = self.arena.get_mut(id);
        let ctx = port.ctx(qi, now, self.net.mtu);
        let q = &mut port.queues[qi];
        let v = q.aqm.on_dequeue(&ctx, now - pkt.enq, &mut sw.rng);
        if q.fifo.is_empty() {
            q.aqm.on_empty(now);
        }
        if !q.apply(v, pkt) {
            return false;
        }
        q.count.tx_pkts -= 1;
        q.count.tx_bytes -= size;
        self.rec.meta.drops.aqm += 1;
        let prio = pkt.prio;
        self.drop_pkt(id);
        if self.net.pfc.as_deref().is_some_and(|f| f.is_lossless(prio)) || self.net.credit.is_some() {
            self.lossless_drop(p, prio, "its AQM dropped it at dequeue");
        }
        true
    }

    /// Pause or resume priority `prio` of port `p` (PFC, credits): counts paused time, tells the queue's
    /// AQM, and restarts sending on resume.
    #[cold]
    pub fn set_paused(&mut self, p: u32, prio: u8, on: bool) {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let bit = 1u8 << prio;
        if (port.paused & bit != 0) == on {
            return;
        }
        let qi = port.queue_for(prio);
        if on {
            port.paused |= bit;
            port.fc_mut().paused_since[prio as usize] = now;
        } else {
            port.paused &= !bit;
            port.queues[qi].count.paused_ps += now - port.fc().paused_since[prio as usize];
        }
        let q = &mut port.queues[qi];
        q.aqm.on_pause(now, on, q.bytes, q.fifo.len() as u32);
        if !on && port.pkts > 0 && !port.wake_pending && port.busy_until <= now {
            self.start_tx(p);
        }
    }

    #[cold]
    pub(crate) fn drop_pkt(&mut self, id: PktId) {
        let pkt = self.arena.get(id);
        let size = pkt.size as u64;
        if let TcpOpt::Int(i) = pkt.opt {
            self.int.free(i);
        }
        self.rec.meta.conservation.dropped_packets += 1;
        self.rec.meta.conservation.dropped_bytes += size;
        self.arena.free(id);
    }
}

#[cfg(test)]
mod tests {
    use crate::aqm::{Aqm, Hooks};
    use crate::net::packet::{Ecn, Packet, PktId};
    use crate::net::test_ring::{clockwise, port, ring, ring_with, NOW};
    use crate::net::Owner;
    use crate::sim::Sim;
    use crate::units::US;

    /// A 1,500-byte packet from h0 to h1 handed to switch port `p` as the switch's arrival path does it
    /// (the switch's buffer counts it first).
    fn queue_at(s: &mut Sim, p: u32) -> PktId {
        let id = s.arena.alloc(Packet { ecn: Ecn::Ect, ..Packet::blank() });
        s.count_sent(id);
        let Owner::Switch(sw) = s.net.ports[p as usize].owner else { panic!("not a switch port") };
        s.net.switches[sw as usize].used += 1500;
        s.port_push(p, 0, id);
        id
    }

    /// A packet reaching an idle port with nothing queued is sent at once (`port_push` takes it straight
    /// to the wire), one reaching a busy port waits its turn; either way the queue counts it as sent once,
    /// its byte and packet counts return to zero and the switch's buffer is given back.
    #[test]
    fn a_packet_is_counted_once_whether_it_waited_or_not() {
        let mut s = ring_with("");
        let p = port(&s, "s0", "s1");
        let first = queue_at(&mut s, p);
        {
            let port = &s.net.ports[p as usize];
            assert_eq!(port.pipe.iter(&s.arena).collect::<Vec<_>>(), vec![first], "sent at once");
            assert_eq!((port.pkts, port.bytes, port.queues[0].bytes), (0, 0, 0));
            assert_eq!((port.queues[0].count.tx_pkts, port.queues[0].count.tx_bytes), (1, 1500));
            assert!(port.busy_until > NOW);
        }
        let second = queue_at(&mut s, p);
        {
            let port = &s.net.ports[p as usize];
            assert_eq!(port.pipe.iter(&s.arena).count(), 1, "the second waits for the first");
            assert_eq!((port.pkts, port.bytes, port.queues[0].bytes), (1, 1500, 1500));
            assert_eq!(port.queues[0].count.tx_pkts, 1);
        }
        let until = s.net.ports[p as usize].busy_until;
        s.run_until(until + 1);
        let port = &s.net.ports[p as usize];
        assert_eq!(port.pipe.iter(&s.arena).collect::<Vec<_>>(), vec![first, second]);
        assert_eq!((port.pkts, port.bytes, port.queues[0].bytes), (0, 0, 0));
        assert_eq!((port.queues[0].count.tx_pkts, port.queues[0].count.tx_bytes), (2, 3000));
        assert_eq!(s.net.switches[0].used, 0);
    }

    /// Every queue's AQM hears that the link went idle (CoDel leaves its dropping state) before the next
    /// packet leaves, on the path that sends a packet at once as on the one through the queue. (Queue 1's
    /// CoDel is the witness: the packet leaves by queue 0, whose own dequeue resets its CoDel anyway.)
    #[test]
    fn an_idle_link_ends_codels_dropping_state_before_the_next_packet() {
        let mut s = ring_with("queues = 2\naqm = { kind = \"codel\", target = \"5us\", interval = \"100us\" }");
        let p = port(&s, "s0", "s1");
        fn codel(s: &mut Sim, p: u32) -> &mut bool {
            match &mut s.net.ports[p as usize].queues[1].aqm {
                Aqm::Codel(c) => &mut c.state.dropping,
                _ => panic!("not CoDel"),
            }
        }
        *codel(&mut s, p) = true;
        queue_at(&mut s, p);
        assert!(!*codel(&mut s, p), "the idle link was not told to the AQM");
        // A packet that comes as the link frees goes at once, back to back: the link was never idle.
        *codel(&mut s, p) = true;
        let until = s.net.ports[p as usize].busy_until;
        s.run_until(until);
        queue_at(&mut s, p);
        assert_eq!(s.net.ports[p as usize].pipe.len(), 2);
        assert!(*codel(&mut s, p), "told at the instant the link freed");
        // Busy now: the next packet waits, and one after the link has been idle again is sent at once.
        queue_at(&mut s, p);
        assert!(*codel(&mut s, p), "told while the link was busy");
        let until = s.net.ports[p as usize].busy_until;
        s.run_until(until + 1);
        assert!(*codel(&mut s, p), "a queued packet left a busy link");
        s.run_until(until + 10 * US);
        queue_at(&mut s, p);
        assert!(!*codel(&mut s, p));
    }

    /// A paused priority's packet waits at an idle port, and leaves when the pause ends.
    #[test]
    fn an_idle_port_keeps_a_paused_prioritys_packet() {
        let mut s = ring();
        let (p, from_host, _) = clockwise(&s, 0);
        s.set_paused(p, 0, true);
        let id = s.arena.alloc(Packet { ecn: Ecn::Ect, ..Packet::blank() });
        s.count_sent(id);
        s.lossless_enqueue(0, from_host as u32, id, p, 0);
        let port = &s.net.ports[p as usize];
        assert_eq!(port.pipe.iter(&s.arena).count(), 0);
        assert_eq!((port.pkts, port.queues[0].count.tx_pkts), (1, 0));
        s.set_paused(p, 0, false);
        assert_eq!(s.net.ports[p as usize].pipe.iter(&s.arena).count(), 1);
    }

    /// A controller that switches DCTCP's marking from enqueue to dequeue leaves every queue it changed
    /// running its dequeue hook (`Queue::deq` follows the parameters; debug builds also check it at each
    /// departure).
    #[test]
    fn a_parameter_change_turns_the_dequeue_hook_on() {
        let text = "seed = 1\nstop = { time = \"2ms\" }\n[topology]\nkind = \"star\"\nhosts = 3\n\
                    link = { rate = \"10Gbps\", delay = \"1us\" }\n[switch]\n\
                    aqm = { kind = \"dctcp_red\", threshold = \"20KB\" }\n\
                    controller = { kind = \"schedule\", changes = [{ at = \"1ms\", aqm = { kind = \"dctcp_red\", threshold = \"20KB\", mark_at = \"dequeue\" } }] }\n\
                    [host]\ntransport = { kind = \"tcp\", cc = \"dctcp\" }\n\
                    [[traffic]]\nkind = \"incast\"\nsenders = \"0-1\"\nreceiver = 2\nsize = \"2MB\"\nat = \"10us\"\n";
        let mut s = Sim::from_toml(text).unwrap();
        let switch_queues = |s: &Sim| -> Vec<bool> {
            s.net.ports.iter().filter(|p| matches!(p.owner, Owner::Switch(_))).map(|p| p.queues[0].deq).collect()
        };
        s.run_until(500 * US);
        assert_eq!(switch_queues(&s), vec![false; 3]);
        s.run_until(1500 * US);
        assert_eq!(switch_queues(&s), vec![true; 3]);
        assert!(s.net.ports.iter().all(|p| p.queues.iter().all(|q| q.deq == q.aqm.acts_at_dequeue())));
    }
}
