//! A queue's packets in arrival order, linked through the packets themselves (`Packet::next`): a queue
//! holds no memory of its own, and taking its head reads only the packet, which the port reads anyway,
//! where a ring buffer's entry was one more cache line to load first (`bench/README.md`).

use super::packet::{Arena, PktId};

#[derive(Clone, Copy, Debug, Default)]
pub struct PktFifo {
    head: PktId,
    tail: PktId,
    len: u32,
}

impl PktFifo {
    pub const fn new() -> Self {
        PktFifo { head: 0, tail: 0, len: 0 }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first packet, if any.
    #[inline(always)]
    pub fn front(&self) -> Option<PktId> {
        (self.len > 0).then_some(self.head)
    }

    /// Append packet `id` (which is in no other queue). The length bounds every walk, so the last
    /// packet's link is never read and needs no end mark.
    #[inline(always)]
    pub fn push_back(&mut self, id: PktId, arena: &mut Arena) {
        if self.len == 0 {
            self.head = id;
        } else {
            arena.get_mut(self.tail).next = id;
        }
        self.tail = id;
        self.len += 1;
    }

    /// Take the first packet, if any.
    #[inline(always)]
    pub fn pop_front(&mut self, arena: &Arena) -> Option<PktId> {
        if self.len == 0 {
            return None;
        }
        let id = self.head;
        self.len -= 1;
        if self.len > 0 {
            self.head = arena.get(id).next;
        }
        Some(id)
    }

    /// The packets, first to last.
    pub fn iter<'a>(&self, arena: &'a Arena) -> impl Iterator<Item = PktId> + 'a {
        let mut rest = *self;
        std::iter::from_fn(move || rest.pop_front(arena))
    }

    pub fn clear(&mut self) {
        *self = PktFifo::new();
    }
}

#[cfg(test)]
mod tests {
    use super::PktFifo;
    use crate::net::packet::{Arena, Packet};

    /// First in, first out, through interleaved pushes and pops, down to empty and up again; `iter`
    /// and `front` agree with a `VecDeque` at every step.
    #[test]
    fn keeps_arrival_order_like_a_deque() {
        let mut arena = Arena::new();
        let ids: Vec<u32> = (0..40).map(|i| arena.alloc(Packet { seq: i, ..Packet::blank() })).collect();
        let mut f = PktFifo::new();
        let mut want = std::collections::VecDeque::new();
        let mut next = ids.iter().copied();
        for step in 0..120u32 {
            // Pushes outrun pops for a while, then pops drain it to empty twice.
            let push = (step % 3 != 2 && step < 50) || (step >= 70 && step < 90 && step % 2 == 0);
            if push {
                if let Some(id) = next.next() {
                    f.push_back(id, &mut arena);
                    want.push_back(id);
                }
            } else {
                assert_eq!(f.pop_front(&arena), want.pop_front(), "step {step}");
            }
            assert_eq!(f.len(), want.len());
            assert_eq!(f.is_empty(), want.is_empty());
            assert_eq!(f.front(), want.front().copied());
            assert_eq!(f.iter(&arena).collect::<Vec<_>>(), want.iter().copied().collect::<Vec<_>>(), "step {step}");
        }
        assert!(f.is_empty() && f.pop_front(&arena).is_none());
        f.push_back(ids[0], &mut arena);
        f.clear();
        assert_eq!((f.len(), f.front()), (0, None));
    }
}
