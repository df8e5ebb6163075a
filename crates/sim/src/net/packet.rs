//! Packets live in an arena and travel by index; events never own heap data.

use crate::idvec::IdVec;
use crate::units::Time;

pub type PktId = u32;

/// TCP/IP header bytes added to every segment's payload on the wire (IPv4 20 + TCP 20).
pub const HEADER_BYTES: u32 = 40;
/// Wire size of a pure ACK or control packet (minimum Ethernet frame).
pub const ACK_BYTES: u32 = 64;

pub mod flags {
    pub const ACK: u16 = 1;
    pub const SYN: u16 = 2;
    pub const ECE: u16 = 4;
    pub const CWR: u16 = 8;
    pub const FIN: u16 = 16;
    /// Carries data (payload > 0).
    pub const DATA: u16 = 32;
    /// A reserved header bit AC/DC sets on a data segment it made ECN-capable: its guest sent it Not-ECT
    /// (`host/vswitch/acdc.rs`; the first author's thesis keeps the guest's ECN capability this way).
    pub const ACDC_ECT: u16 = 64;
    /// An ACK made by a receiving vSwitch only to carry its feedback option; the sending vSwitch reads it
    /// and consumes it, and no guest sees it.
    pub const FEEDBACK_ONLY: u16 = 128;
    /// RDMA (`transport/rdma/`): a negative acknowledgement (the receiver saw a gap; go back to `ack`).
    pub const NACK: u16 = 256;
    /// RDMA: a congestion notification packet (DCQCN's notification point to its reaction point).
    pub const CNP: u16 = 512;
    /// A PFC frame (IEEE 802.1Qbb) between two neighbours: never routed, never paused, consumed by the
    /// port that receives it (`net/pfc.rs`).
    pub const PFC: u16 = 1024;
    /// TCD's UE feedback: on a CNP, the cause is UE, not CE (DCQCN+TCD); on an ACK, the data packet it
    /// acknowledges carried UE (TIMELY's echo; CE is echoed with ECE).
    pub const UE: u16 = 2048;
    /// HPCC: the packet carries INT records (`opt` is `TcpOpt::Int`); a data packet collects one per switch
    /// it leaves, an ACK or NACK brings its data packet's back (`net/int.rs`).
    pub const INT: u16 = 4096;
}

/// TCP options a segment carries besides the timestamp (which every segment has: `Packet::ts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TcpOpt {
    #[default]
    None,
    /// The window-scale shift of the SYN's or SYN-ACK's sender (RFC 7323 §2): the peer scales this end's
    /// advertised windows by it.
    WScale(u8),
    /// AC/DC's feedback from the receiving vSwitch: the flow's payload bytes and CE-marked payload bytes it
    /// has received, cumulative, modulo 2^32.
    AcdcFeedback { total: u32, ce: u32 },
    /// INT: the index of the packet's stack of per-hop records in the simulation's side arena
    /// (`net/int.rs`); its bytes are the transport's header bytes.
    Int(u32),
}

impl TcpOpt {
    /// Bytes the option takes in the TCP header (padded to 4).
    pub fn bytes(self) -> u32 {
        match self {
            TcpOpt::None => 0,
            TcpOpt::WScale(_) => 4,
            TcpOpt::AcdcFeedback { .. } => 12,
            TcpOpt::Int(_) => 0,
        }
    }
}

/// IP ECN codepoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    NotEct = 0,
    Ect = 1,
    /// TCD's "undetermined encountered" (`spec/tcd.md` §5a: ECT(1) re-purposed): crossed a port in the
    /// undetermined state and no congestion port. CE wins over it.
    Ue = 2,
    Ce = 3,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Connection slot and the flow id it must belong to (slots are reused).
    pub conn: u32,
    pub flow: u32,
    pub seq: u64,
    pub ack: u64,
    /// Sender timestamp, echoed in ACKs for RTT samples (RFC 7323 style).
    pub ts: Time,
    /// When the packet entered its current queue (sojourn-time AQMs).
    pub enq: Time,
    pub src: u32,
    pub dst: u32,
    /// Per-flow ECMP hash.
    pub hash: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub payload: u32,
    /// Advertised receive window (scaled by the connection's window-scale shift).
    pub win: u16,
    pub flags: u16,
    pub ecn: Ecn,
    /// Traffic class → queue index at every port.
    pub prio: u8,
    /// At a switch: the local index of the port it came in by (ingress accounting for PFC).
    pub in_port: u16,
    /// Options beyond the timestamp; their bytes are in `size` (none but AC/DC's and the SYN's window scale).
    pub opt: TcpOpt,
    /// The packet after it in the queue it waits in (`net/fifo.rs`); meaningless outside a queue.
    pub next: PktId,
    /// While it waits in a port's queue: the port it will leave the next switch by, found when it was
    /// queued (`Sim::port_push`; `link::NO_HOP` where the next node is a host, or spraying draws the
    /// port there), so that sending it reads the packet it is sending, not the route table.
    pub hop: u32,
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }

    /// Test helper: a full-size data packet of flow 0 from host 0 to host 1, Not-ECT, priority 0, every
    /// other field 0 — for `Packet { field, ..Packet::blank() }`.
    #[cfg(test)]
    pub(crate) fn blank() -> Packet {
        Packet {
            conn: 0,
            flow: 0,
            seq: 0,
            ack: 0,
            ts: 0,
            enq: 0,
            src: 0,
            dst: 1,
            hash: 0,
            size: 1500,
            payload: 1460,
            win: 0,
            flags: flags::DATA,
            ecn: Ecn::NotEct,
            prio: 0,
            in_port: 0,
            opt: TcpOpt::None,
            next: 0,
            hop: super::link::NO_HOP,
        }
    }
}

/// Slab of packets with a free list; ids stay valid until freed. Beside each slot, its packet's place on
/// the wire (`net/link.rs`).
pub struct Arena {
    slots: IdVec<Packet>,
    wires: IdVec<super::link::Wire>,
    free: Vec<PktId>,
    pub live: u64,
    pub peak_live: u64,
}

impl Arena {
    pub fn new() -> Self {
        Arena {
            slots: IdVec::with_capacity(1 << 14),
            wires: IdVec::with_capacity(1 << 14),
            free: Vec::with_capacity(1 << 14),
            live: 0,
            peak_live: 0,
        }
    }
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        if self.live > self.peak_live {
            self.peak_live = self.live;
        }
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            self.wires.push(Default::default());
            (self.slots.len() - 1) as PktId
        }
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Where packet `id` is on the wire (meaningful while it is in a link's pipe).
    #[inline(always)]
    pub fn wire(&self, id: PktId) -> &super::link::Wire {
        &self.wires[id as usize]
    }
    #[inline(always)]
    pub fn wire_mut(&mut self, id: PktId) -> &mut super::link::Wire {
        &mut self.wires[id as usize]
    }
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

// A packet stays 88 bytes (80 and the queue's link): the arena is the engine's largest working set.
const _: () = assert!(std::mem::size_of::<Packet>() == 88);
