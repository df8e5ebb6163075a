//! The event queue: one priority queue ordered by (time, insertion sequence), holding small `Copy` events.
//!
//! A binary heap of 24-byte entries. (A radix heap on the same key was tried and measured slower on
//! benchmark 1: entries cluster within a few microseconds of "now", so its buckets stay large and each
//! pop rescans them.)

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Item<E> {
    t: Time,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Item<E> {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t && self.seq == o.seq
    }
}
impl<E> Eq for Item<E> {}
impl<E> PartialOrd for Item<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Item<E> {
    // BinaryHeap is a max-heap: reverse to pop the smallest (time, sequence) first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.t.cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}

pub struct EventQueue<E: Copy> {
    heap: BinaryHeap<Item<E>>,
    seq: u64,
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0 }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `ev` at `t`.
    #[inline]
    pub fn push(&mut self, t: Time, ev: E) {
        self.seq += 1;
        self.heap.push(Item { t, seq: self.seq, ev });
    }

    /// Time of the earliest entry.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|i| i.t)
    }

    /// Remove and return the earliest entry.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|i| (i.t, i.ev))
    }

    /// Every pending entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Time, &E)> {
        self.heap.iter().map(|it| (it.t, &it.ev))
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut rng = crate::rng::stream(1, "q", 0);
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u64)> = Vec::new();
        let mut now = 0;
        let mut id = 0u64;
        let mut popped = Vec::new();
        let mut expect = Vec::new();
        for _ in 0..30_000 {
            if rng.gen_bool(0.55) || q.is_empty() {
                // Many ties on purpose.
                let t = now + [0, 0, 1, 5, 1000, rng.gen_range(0..1_000_000)][rng.gen_range(0..6)];
                q.push(t, id);
                reference.push((t, id));
                id += 1;
            } else {
                let (t, e) = q.pop().unwrap();
                now = t;
                popped.push((t, e));
                // The reference: smallest (t, id) pending.
                let (i, _) = reference.iter().enumerate().min_by_key(|(_, x)| **x).unwrap();
                expect.push(reference.swap_remove(i));
            }
            assert_eq!(q.len(), reference.len());
        }
        assert_eq!(popped, expect);
    }
}
