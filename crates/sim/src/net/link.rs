//! A link direction: the sending port serialises a packet (integer picoseconds, remainder carried), then
//! the packet travels the propagation delay in the port's pipe — a FIFO with one event-queue entry for
//! its head, so the event queue holds one entry per busy link, not one per packet in flight. Random loss
//! is applied when a packet reaches the far end.

use super::packet::PktId;
use super::Owner;
use crate::rng;
use crate::sim::{Ev, Sim};
use crate::units::Time;

/// A packet on the wire: when it reaches the far end, and — where the far end is a switch that routes it
/// by its flow's hash — the port it will leave that switch by, found when it was sent so that its arrival
/// can start loading that port and the packet at once (`NO_HOP` otherwise: the switch routes it then).
#[derive(Clone, Copy, Debug)]
pub struct Flight {
    pub t: Time,
    pub id: PktId,
    pub hop: u32,
}

pub const NO_HOP: u32 = u32::MAX;

impl Sim {
    /// Put packet `id` (`size` bytes) on the wire of port `p`, which is free now; `routed`: the far switch
    /// routes it (data, not a PFC frame).
    #[inline(always)]
    pub(crate) fn transmit(&mut self, p: u32, id: PktId, size: u64, routed: bool) {
        let now = self.now();
        let port = &mut self.net.ports[p as usize];
        let ser = port.serialise(size);
        port.busy_until = now + ser;
        port.tx_bytes += size;
        self.packet_hops += 1;
        let arrive = port.busy_until + port.delay;
        let hop = match port.peer_owner {
            // Per-flow ECMP is a function of (switch, destination, hash), fixed for the run.
            Owner::Switch(s) if routed && !self.net.ecmp_packet => {
                let pkt = self.arena.get(id);
                self.route(s, pkt.dst, pkt.hash)
            }
            _ => NO_HOP,
        };
        let port = &mut self.net.ports[p as usize];
        port.pipe.push_back(Flight { t: arrive, id, hop });
        let first = port.pipe.len() == 1;
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
        let port = &mut self.net.ports[p as usize];
        let Flight { id, hop, .. } = port.pipe.pop_front().unwrap();
        crate::engine::prefetch_lines(self.arena.get(id));
        if let Some(next) = self.net.ports.get(hop as usize) {
            crate::engine::prefetch_lines(next);
        }
        let port = &mut self.net.ports[p as usize];
        if let Some(&Flight { t, .. }) = port.pipe.front() {
            self.push(t, Ev::Arrive(p));
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
