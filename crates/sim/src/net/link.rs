//! A link direction: the sending port serialises a packet (integer picoseconds, remainder carried), then
//! the packet travels the propagation delay in the port's pipe — a FIFO with one event-queue entry for
//! its head, so the event queue holds one entry per busy link, not one per packet in flight. Random loss
//! is applied when a packet reaches the far end.
//!
//! A pipe is a list linked through a table beside the packet arena ([`Wire`], one 16-byte entry per
//! packet slot), so a link holds no storage beyond its ends in the port: a ring per port kept the
//! capacity of its largest burst for the whole run (1 KB a port on benchmark 4, where hosts send 33 ACKs
//! back to back), while the table grows with the packets alive at once. An arrival reads one entry, as it
//! read one ring entry.

use super::packet::{Arena, PktId};
use super::Owner;
use crate::rng;
use crate::sim::{Ev, Sim};
use crate::units::Time;

/// A packet on the wire, in the table beside the arena (`Arena::wire`): the packet sent after it on the
/// same link, the time that one reaches the far end, and the port that one will leave the far switch by
/// (all meaningless for the pipe's last packet). That port (`NO_HOP` where the far node is a host or routes
/// by spraying) was found when the packet was queued (`Packet::hop`); the pipe keeps its head's in the
/// port (`Pipe::head_hop`), so that an arrival starts loading that port and the packet as soon as the
/// sending port's line is in, without waiting for the wire entry (shortened benchmark 1 −4 %, leaf-spine
/// −3 % against reading it from the head's own entry).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wire {
    pub next_t: Time,
    pub next: PktId,
    pub next_hop: u32,
}

pub const NO_HOP: u32 = u32::MAX;

/// The packets on a link's wire, oldest first (linked through `Wire::next`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pipe {
    head: PktId,
    tail: PktId,
    len: u32,
    /// The port the head will leave the far switch by (the `Wire::next_hop` of the packet before it).
    head_hop: u32,
}

impl Pipe {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packets on the wire, oldest first.
    pub fn iter<'a>(&self, arena: &'a Arena) -> impl Iterator<Item = PktId> + 'a {
        let mut id = self.head;
        (0..self.len).map(move |i| {
            if i > 0 {
                id = arena.wire(id).next;
            }
            id
        })
    }
}

impl Sim {
    /// Put packet `id` (`size` bytes) on the wire of port `p`, which is free now.
    #[inline(always)]
    pub(crate) fn transmit(&mut self, p: u32, id: PktId, size: u64) {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let ser = port.serialise(size);
        port.busy_until = now + ser;
        port.tx_bytes += size;
        self.packet_hops += 1;
        let arrive = port.busy_until + port.delay;
        // Found when the packet was queued at this port (`Packet::hop`; a PFC frame, never routed, is made
        // with `NO_HOP`).
        let hop = self.arena.get(id).hop;
        let port = &mut self.net.ports[p as usize];
        *self.arena.wire_mut(id) = Wire { next_t: 0, next: 0, next_hop: NO_HOP };
        let pipe = &mut port.pipe;
        let first = pipe.len == 0;
        if first {
            pipe.head = id;
            pipe.head_hop = hop;
        } else {
            let last = self.arena.wire_mut(pipe.tail);
            last.next = id;
            last.next_t = arrive;
            last.next_hop = hop;
        }
        pipe.tail = id;
        pipe.len += 1;
        let more = port.pkts > 0;
        let until = port.busy_until;
        if more {
            port.wake_pending = true;
        }
        if first {
            self.push(arrive, Ev::Arrive(p));
        }
        if more {
            self.push(until, Ev::Wake(p));
        }
    }

    /// The head of port `p`'s pipe reaches the far node.
    #[inline]
    pub(crate) fn arrive(&mut self, p: u32) {
        let Pipe { head: id, head_hop: hop, .. } = self.net.ports[p as usize].pipe;
        // (`Net::prefetch_below`: all ports or none; a host-bound packet's `hop` is `NO_HOP`.)
        crate::engine::prefetch_lines(self.arena.get(id));
        if hop < self.net.prefetch_below {
            crate::engine::prefetch_lines(&self.net.ports[hop as usize]);
        }
        let Wire { next_t, next, next_hop } = *self.arena.wire(id);
        let pipe = &mut self.net.ports[p as usize].pipe;
        pipe.len -= 1;
        if pipe.len > 0 {
            pipe.head = next;
            pipe.head_hop = next_hop;
            self.push(next_t, Ev::Arrive(p));
        }
        let port = &mut self.net.ports[p as usize];
        if let Some(rng) = port.rng.as_mut() {
            if rng::unit(rng) < port.loss {
                self.rec.meta.drops.link_loss += 1;
                self.drop_pkt(id);
                return;
            }
        }
        match port.peer_owner {
            Owner::Host(h) => self.host_receive(h, id),
            Owner::Switch(s) => self.switch_receive(s, id, p, hop),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::net::packet::{flags, Packet};
    use crate::net::test_ring::{port, ring, NOW};
    use crate::sim::Ev;
    use crate::units::US;

    /// Three 64-byte PFC frames (consumed where they arrive) sent back to back on h0's 10 Gb/s, 1 µs link:
    /// all three are on its wire at once, oldest first, each entry holding when the next one arrives (51.2
    /// ns apart); the event queue holds one arrival for the link, the first packet's; once they have
    /// arrived the wire is empty and the far port has received all three.
    #[test]
    fn a_pipe_holds_its_packets_oldest_first_with_one_event_for_the_link() {
        let mut s = ring();
        let p = port(&s, "h0", "s0");
        let ser = 51_200; // 64 B at 10 Gb/s, ps
        let mut ids = vec![];
        for k in 0..3u64 {
            s.run_until(NOW + k * ser);
            let id = s.arena.alloc(Packet { size: 64, payload: 0, flags: flags::PFC, seq: 0, ..Packet::blank() });
            s.count_sent(id);
            s.transmit(p, id, 64);
            ids.push(id);
        }
        let port_p = &s.net.ports[p as usize];
        assert_eq!(port_p.pipe.len(), 3);
        assert_eq!(port_p.pipe.iter(&s.arena).collect::<Vec<_>>(), ids);
        let arrive = |k: u64| NOW + (k + 1) * ser + US;
        assert_eq!(s.arena.wire(ids[0]).next_t, arrive(1));
        assert_eq!(s.arena.wire(ids[1]).next_t, arrive(2));
        let events: Vec<u64> = s.eng.pending().filter(|(_, e)| matches!(e, Ev::Arrive(q) if *q == p)).map(|(t, _)| t).collect();
        assert_eq!(events, vec![arrive(0)]);
        s.run_until(arrive(2) + 1);
        assert!(s.net.ports[p as usize].pipe.is_empty());
        assert_eq!(s.net.ports[s.net.ports[p as usize].rev as usize].fc().frames_received, 3);
        assert_eq!(s.rec.meta.conservation.delivered_packets, s.rec.meta.conservation.sent_packets);
    }
}
