//! In-band network telemetry (INT) for HPCC (`spec/transports.md` C4): every switch egress appends, for a
//! data packet of an INT-enabled flow, the record of the port that sends it — the time, the port's
//! cumulative transmitted bytes, its queue and its link rate (HPCC ns-3 `SwitchNode::SwitchNotifyDequeue`:
//! the bytes before this packet, the queue after it left). The receiver copies the stack into its ACK
//! (or NACK), and the sender's rate control reads it there.
//!
//! A packet stays 88 bytes: the stacks live in this side arena, owned by the simulation, and a packet
//! names its stack by index in its option field (`TcpOpt::Int`). A stack is freed when its packet is
//! delivered (its records are copied into `scratch` first, where the receiver's ACK and the sender's rate
//! control read them) or dropped. Runs without INT never touch the arena: a switch hop tests the option's
//! tag, nothing more.
//!
//! Records are kept at full precision (ns-3 packs a hop into 8 bytes: time in 24 bits, bytes in 128-byte
//! units, queue in 80-byte units); on the wire a data packet carries ns-3's header size,
//! [`INT_HEADER_BYTES`].

use crate::units::Time;

/// Most switch hops a stack holds. A topology whose longest path crosses more switches is refused when
/// an INT transport is built (HPCC ns-3 holds 5: a fat tree's longest path).
pub const MAX_HOPS: usize = 8;

/// Bytes the INT header adds to a data packet on the wire: ns-3's `IntHeader::GetStaticSize()` in HPCC's
/// mode, 5 hops of 8 bytes and a 2-byte hop count.
pub const INT_HEADER_BYTES: u32 = 42;

/// One hop's record, taken as the packet starts its transmission at the port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hop {
    /// When the packet left the queue (ps).
    pub ts: Time,
    /// Bytes the port had sent before this packet (cumulative, every queue).
    pub tx_bytes: u64,
    /// Bytes queued at the port after this packet left (every queue).
    pub qlen: u64,
    /// The port's link rate (bps).
    pub rate: u64,
}

/// The records of one packet, first switch first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stack {
    n: u8,
    hops: [Hop; MAX_HOPS],
}

impl Stack {
    #[inline]
    pub fn hops(&self) -> &[Hop] {
        &self.hops[..self.n as usize]
    }

    /// Append a hop's record (a stack that is full keeps its records: the build refuses longer paths).
    #[inline]
    pub fn push(&mut self, h: Hop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = h;
            self.n += 1;
        }
    }

    /// A stack with these records (tests).
    pub fn of(hops: &[Hop]) -> Stack {
        let mut s = Stack::default();
        for &h in hops {
            s.push(h);
        }
        s
    }
}

/// Slab of stacks with a free list, like the packet arena.
#[derive(Default)]
pub struct IntArena {
    stacks: Vec<Stack>,
    free: Vec<u32>,
    /// The records of the last INT packet delivered (its stack is already freed).
    pub scratch: Stack,
}

impl IntArena {
    /// A stack holding `s`.
    pub fn alloc(&mut self, s: Stack) -> u32 {
        if let Some(i) = self.free.pop() {
            self.stacks[i as usize] = s;
            i
        } else {
            self.stacks.push(s);
            (self.stacks.len() - 1) as u32
        }
    }

    /// A stack holding the records of the packet just delivered (the receiver's ACK carries them back).
    pub fn alloc_scratch(&mut self) -> u32 {
        let s = self.scratch;
        self.alloc(s)
    }

    #[inline]
    pub fn push(&mut self, i: u32, h: Hop) {
        self.stacks[i as usize].push(h);
    }

    /// The packet holding stack `i` is delivered: keep its records in `scratch`, free the stack.
    #[inline]
    pub fn take(&mut self, i: u32) {
        self.scratch = self.stacks[i as usize];
        self.free.push(i);
    }

    /// The packet holding stack `i` is dropped.
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }

    /// Stacks in use (tests: every one is freed once its packet is gone).
    pub fn live(&self) -> usize {
        self.stacks.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_reused_and_delivery_keeps_the_records() {
        let mut a = IntArena::default();
        let h = |t| Hop { ts: t, tx_bytes: 10 * t, qlen: t, rate: 100 };
        let x = a.alloc(Stack::default());
        let y = a.alloc(Stack::default());
        a.push(x, h(1));
        a.push(x, h(2));
        a.push(y, h(3));
        assert_eq!(a.live(), 2);
        a.take(x);
        assert_eq!(a.scratch.hops(), &[h(1), h(2)]);
        let z = a.alloc_scratch();
        assert_eq!(z, x, "a freed stack is reused");
        a.free(y);
        a.take(z);
        assert_eq!(a.scratch.hops(), &[h(1), h(2)]);
        assert_eq!(a.live(), 0);
        let mut s = Stack::default();
        for t in 0..MAX_HOPS as u64 + 3 {
            s.push(h(t));
        }
        assert_eq!(s.hops().len(), MAX_HOPS);
    }
}
