//! The event queue: one priority queue ordered by (time, insertion sequence), holding small `Copy` events.
//!
//! Near events — a packet finishing serialisation, a packet reaching the end of a link — go into a
//! timing wheel of 1.024 ns slots that covers the next 16.8–67 µs (as the scenario's links need:
//! `EventQueue::with_span`); a bitmap finds the next non-empty slot. A wheel that searches past its
//! cursor's bitmap word often (sparse) or takes many out-of-order pushes (crowded) looks at its event
//! rate and takes the slot width that puts about two slots between consecutive events, 1.024 to 262 ns,
//! over the same span (`EventQueue::adapt`): a sparse run's pops then scan a few bitmap words and its
//! slot tails stay in the first-level cache (benchmark 3, the incast, −12 % instructions, −10 % time);
//! the fabrics, hundreds of events per µs, keep 1.024 ns.
//! Each slot's entries are a list kept sorted by (time, sequence) in one pool of nodes, so a pop takes
//! the list's head. Slots this narrow hold about one entry each on a busy fabric (benchmark 1 pops ~400
//! events per µs), so few pushes land out of order: against 8.192 ns slots the fabrics ran 11–12 %
//! faster and the sparse incast 2–3 % slower (bench/README.md, 2026-11-29 (evening)). A push lands at the list's tail
//! whenever its time is not earlier than the tail's, which is every tie (the newest sequence goes last)
//! and most pushes; an earlier one walks from the head, at most SCAN entries, and otherwise waits in the
//! heap — so a crowded slot (thousands of hosts starting at one instant) costs O(1) or O(log n) per
//! entry, not the O(k) per pop of scanning an unsorted slot. Far events (retransmission timers, flow
//! arrivals, samples) go into a binary heap. A pop takes the smaller head of the two (the heap's, when it
//! is the smaller, moved to the head of its wheel slot first, so that every pop ends the same way), so the
//! order is exactly (time, sequence) and runs stay deterministic. On benchmark 1 this costs a fraction of a binary
//! heap holding everything (measured with callgrind: see README); a radix heap was tried too and was
//! slower, because entries cluster within a few µs of "now". No slot width helps a crowded slot: its
//! entries share one time (measured: bench/README.md).

use crate::idvec::IdVec;
use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of the slot width in picoseconds: the narrowest (every wheel starts there) and the widest.
const SHIFT: u32 = 10;
const MAX_SHIFT: u32 = 18;
/// The most entries of a slot an out-of-order push walks past; one that would go further waits in the
/// heap.
const SCAN: u32 = 16;
/// log2 of the span in picoseconds the wheel covers, at the least and at the most (16.8 and 67 µs;
/// `EventQueue::with_span`): 2^14 to 2^16 slots of the narrowest width, fewer of a wider one.
const MIN_SPAN_BITS: u32 = 24;
const MAX_SPAN_BITS: u32 = 26;
/// The wheel looks at its event rate every PROBES searches past the cursor's bitmap word or
/// out-of-order pushes (a sparse or a crowded wheel makes many of them, a well-fitted one few), over at
/// least MIN_EVENTS events, and wants GAP_SLOTS slots between consecutive events (`EventQueue::adapt`).
const PROBES: u32 = 1024;
const MIN_EVENTS: u64 = 4096;
const GAP_SLOTS: u64 = 2;
/// Below this many wheel entries the peek searches the whole wheel (see `peek_near`).
const SPARSE: usize = 32;

#[derive(Clone, Copy, Debug)]
struct Item<E> {
    t: Time,
    seq: u64,
    ev: E,
}

impl<E> Item<E> {
    #[inline]
    fn key(&self) -> (Time, u64) {
        (self.t, self.seq)
    }
}

// The wheel's nodes stay 32 bytes for the engine's 12-byte events.
const _: () = assert!(std::mem::size_of::<Node<[u32; 3]>>() == 32);

impl<E> PartialEq for Item<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
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
        o.key().cmp(&self.key())
    }
}

const NIL: u32 = u32::MAX;

/// A wheel entry: its key, its event and the next entry of its slot's list, in 32 bytes for a 12-byte
/// event (one node per half cache line).
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    t: Time,
    seq: u64,
    next: u32,
    ev: E,
}

pub struct EventQueue<E: Copy> {
    /// Each slot's entries form a circular list in `pool`, sorted by (time, sequence); `tails[s]` is the
    /// slot's last entry (left as it was when the slot empties: the bitmap says which slots hold entries)
    /// and its `next` the first, so both ends are one step away.
    /// (`IdVec`s: a masked slot number is below the length, so release builds skip the check.)
    tails: IdVec<u32>,
    pool: IdVec<Node<E>>,
    free: u32,
    /// Bit i set ⇔ slot i holds entries.
    bits: IdVec<u64>,
    /// The number of slots (a power of two covering 2^MIN_SPAN_BITS to 2^MAX_SPAN_BITS ps), less one.
    mask: u64,
    /// log2 of the slot width (SHIFT to MAX_SHIFT; `adapt`).
    shift: u32,
    /// The span asked for (`with_span`), which every geometry covers as far as its limits allow.
    span: Time,
    /// Absolute slot number (time >> shift) of the last entry popped; every wheel entry lies in
    /// [cur, cur + slots).
    cur: u64,
    /// Searches and out-of-order pushes left before the next look at the event rate, and the time and
    /// sequence number of the last look (`adapt`).
    probes: u32,
    probe_t: Time,
    probe_seq: u64,
    in_wheel: usize,
    far: BinaryHeap<Item<E>>,
    /// The time of the heap's earliest entry (`Time::MAX` when it is empty), so that a pop compares the
    /// wheel's head with a field rather than the heap's top entry.
    far_t: Time,
    seq: u64,
    /// What the last `peek_near` found — its slot's absolute number + 1 (0: nothing), head and tail — so
    /// that the next pop need not search again. A push at or before that slot forgets it.
    peek_end: u64,
    peek_head: u32,
    peek_tail: u32,
}

impl<E: Copy> EventQueue<E> {
    /// A wheel of the most slots (67 µs).
    pub fn new() -> Self {
        Self::with_span(Time::MAX)
    }

    /// A wheel that covers at least `span` ahead of now (at least 16.8 µs, at most 67 µs): events
    /// further out wait in the heap. Its slot tails take 4 bytes a slot, 64–256 KB at the narrowest
    /// width it starts with (less once `adapt` widens the slots), all of it touched as the cursor sweeps
    /// round, so a scenario that pushes nothing far ahead asks for less.
    pub fn with_span(span: Time) -> Self {
        let slots = Self::slots_for(span, SHIFT);
        EventQueue {
            tails: vec![NIL; slots].into(),
            pool: IdVec::with_capacity(4096),
            free: NIL,
            bits: vec![0; slots / 64].into(),
            mask: slots as u64 - 1,
            shift: SHIFT,
            span,
            cur: 0,
            probes: PROBES,
            probe_t: 0,
            probe_seq: 0,
            in_wheel: 0,
            far: BinaryHeap::with_capacity(1024),
            far_t: Time::MAX,
            seq: 0,
            peek_end: 0,
            peek_head: NIL,
            peek_tail: NIL,
        }
    }

    /// The number of slots of width 2^shift ps that covers `span`, within 2^MIN_SPAN_BITS to
    /// 2^MAX_SPAN_BITS ps (a power of two, at least one bitmap word).
    fn slots_for(span: Time, shift: u32) -> usize {
        let span = span.clamp(1 << MIN_SPAN_BITS, 1 << MAX_SPAN_BITS);
        let need = span.div_ceil(1 << shift);
        1usize << (u64::BITS - (need - 1).leading_zeros()).max(6)
    }

    /// The wheel's number of slots.
    #[cfg(test)]
    pub(crate) fn wheel_slots(&self) -> u64 {
        self.mask + 1
    }

    /// log2 of the wheel's slot width in picoseconds.
    #[cfg(test)]
    pub(crate) fn slot_shift(&self) -> u32 {
        self.shift
    }

    pub fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A node made by `make` from its own index (a slot's only entry is its own `next`), written once.
    #[inline(always)]
    fn alloc_with(&mut self, make: impl FnOnce(u32) -> Node<E>) -> u32 {
        if self.free != NIL {
            let n = self.free;
            let slot = &mut self.pool[n as usize];
            self.free = slot.next;
            *slot = make(n);
            n
        } else {
            let n = self.pool.len() as u32;
            self.pool.push(make(n));
            n
        }
    }

    #[inline(always)]
    fn alloc(&mut self, node: Node<E>) -> u32 {
        self.alloc_with(|_| node)
    }

    /// Schedule `ev` at `t` (never before the last popped time).
    #[inline(always)]
    pub fn push(&mut self, t: Time, ev: E) {
        self.seq += 1;
        self.put(t, self.seq, ev);
    }

    /// Place an entry of sequence `seq` (the wheel, or the heap beyond its span).
    #[inline(always)]
    fn put(&mut self, t: Time, seq: u64, ev: E) {
        let abs = t >> self.shift;
        debug_assert!(abs >= self.cur, "event scheduled in the past");
        if abs < self.peek_end {
            self.peek_end = 0;
        }
        if abs > self.cur + self.mask {
            return self.push_far(Item { t, seq, ev });
        }
        let s = (abs & self.mask) as usize;
        // Whether the slot is empty comes from the bitmap (2–8 KB, read by every pop), not from its tail (the
        // 64–256 KB array, whose line is often cold): an empty slot's tail is then only written.
        let word = &mut self.bits[s >> 6];
        if *word & (1 << (s & 63)) == 0 {
            *word |= 1 << (s & 63);
            let n = self.alloc_with(|n| Node { t, seq, next: n, ev });
            self.tails[s] = n;
        } else {
            let tail = self.tails[s];
            let last = &self.pool[tail as usize];
            if last.t > t {
                return self.insert(s, Node { t, seq, next: NIL, ev });
            }
            // The usual case, and every tie: the newest sequence goes last.
            let first = last.next;
            let n = self.alloc(Node { t, seq, next: first, ev });
            self.pool[tail as usize].next = n;
            self.tails[s] = n;
        }
        self.in_wheel += 1;
    }

    #[inline(never)]
    fn push_far(&mut self, it: Item<E>) {
        self.far_t = self.far_t.min(it.t);
        self.far.push(it);
    }

    /// Put `node` into slot `s` before its first later entry, walking at most SCAN entries; in a slot
    /// more crowded than that (a synchronised start, a large incast) it waits in the heap instead, which
    /// the pop compares with the wheel's head anyway. So no push costs more than SCAN steps and a pop
    /// none, where a scan of the slot at each pop cost O(k²) to drain k entries.
    #[inline(never)]
    fn insert(&mut self, s: usize, mut node: Node<E>) {
        self.probes -= 1;
        if self.probes == 0 && self.adapt() {
            return self.put(node.t, node.seq, node.ev);
        }
        let mut prev = self.tails[s];
        let mut n = self.pool[prev as usize].next;
        for _ in 0..SCAN {
            // The tail is later than `node`, so the walk stops at the tail at the latest.
            if self.pool[n as usize].t > node.t {
                node.next = n;
                let m = self.alloc(node);
                self.pool[prev as usize].next = m;
                self.in_wheel += 1;
                return;
            }
            prev = n;
            n = self.pool[n as usize].next;
        }
        self.push_far(Item { t: node.t, seq: node.seq, ev: node.ev });
    }

    /// The first non-empty slot at or after the cursor, in wheel order (a search past the cursor's word
    /// is a probe of the event rate: `next_slot_wrapped`).
    #[inline]
    fn next_slot(&mut self) -> Option<usize> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (self.cur & self.mask) as usize;
        let (w0, b0) = (start >> 6, start & 63);
        let first = self.bits[w0] & (!0u64 << b0);
        if first != 0 {
            return Some((w0 << 6) | first.trailing_zeros() as usize);
        }
        self.next_slot_wrapped(w0, b0)
    }

    /// `next_slot` past the cursor's own word, counted as a probe of the event rate (`adapt`); if that
    /// makes the wheel anew, the search starts again from its cursor.
    #[inline(never)]
    fn next_slot_wrapped(&mut self, w0: usize, b0: usize) -> Option<usize> {
        self.probes -= 1;
        if self.probes == 0 && self.adapt() {
            return self.next_slot();
        }
        // From the word after the cursor's (`w0`) round to the cursor's slot (`b0`).
        let words = self.bits.len();
        for k in 1..=words {
            let w = (w0 + k) & (words - 1);
            let m = if k == words { self.bits[w] & !(!0u64 << b0) } else { self.bits[w] };
            if m != 0 {
                return Some((w << 6) | m.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Remove and return the earliest entry if its time is ≤ `limit`; otherwise leave everything as is.
    #[inline]
    pub fn pop_before(&mut self, limit: Time) -> Option<(Time, E)> {
        // The wheel's earliest is the head of the first non-empty slot (found by the peek, if no push came
        // before it since).
        let (mut s, mut tail, mut n) = if self.peek_end != 0 {
            (((self.peek_end - 1) & self.mask) as usize, self.peek_tail, self.peek_head)
        } else {
            match self.next_slot() {
                Some(s) => {
                    let tail = self.tails[s];
                    (s, tail, self.pool[tail as usize].next)
                }
                None => self.far_to_wheel(limit)?,
            }
        };
        self.peek_end = 0;
        let mut head = &self.pool[n as usize];
        if head.t > self.far_t || (head.t == self.far_t && self.far.peek().is_some_and(|f| f.seq < head.seq)) {
            (s, tail, n) = self.far_to_wheel(limit)?;
            head = &self.pool[n as usize];
        }
        let (t, next) = (head.t, head.next);
        if t > limit {
            return None;
        }
        if n == tail {
            // (The tail of an empty slot is not read: its bit says it is empty.)
            self.bits[s >> 6] &= !(1 << (s & 63));
        } else {
            self.pool[tail as usize].next = next;
        }
        self.pool[n as usize].next = self.free;
        self.free = n;
        self.in_wheel -= 1;
        self.cur = t >> self.shift;
        // Read last, from the freed node (nothing has been pushed since): the event is not carried
        // through the branches above, which spilled it to the stack and copied it (the heap's entries
        // reach here through the wheel for this reason).
        Some((t, self.pool[n as usize].ev))
    }

    /// The wheel's earliest entry if it lies within the cursor's 64 slots, or anywhere in a wheel of fewer
    /// than SPARSE entries (the heap is not looked at), without removing it: a hint for the model to fetch
    /// the next event's state ahead ([`super::Model::prefetch`]), not an order. What it found is kept for
    /// the next pop, which then starts from the entry the peek loaded instead of searching the bitmap and
    /// the slot's list again: the pop's chain of dependent loads was the engine's longest wait (shortened
    /// benchmark 1 −6 %, leaf-spine −7 %, at equal instructions). On a busy wheel whose next entry lies
    /// further out, a search here is often wasted, because the event handled next pushes an earlier one
    /// (searching the whole wheel always: incast −4 %, leaf-spine +1.5 %); a sparse wheel (the incast's
    /// few dozen entries) has little to push before it (below 32 entries: incast −6 %, the others
    /// unchanged; below 64 the leaf-spine lost 1 %).
    #[inline]
    pub fn peek_near(&mut self) -> Option<&E> {
        let start = (self.cur & self.mask) as usize;
        let word = self.bits[start >> 6] & (!0u64 << (start & 63));
        let (s, start) = if word != 0 {
            ((start & !63) | word.trailing_zeros() as usize, start)
        } else if self.in_wheel != 0 && self.in_wheel < SPARSE {
            let s = self.next_slot_wrapped(start >> 6, start & 63)?;
            // (The search may have made the wheel anew, with a cursor of its own.)
            (s, (self.cur & self.mask) as usize)
        } else {
            return None;
        };
        let tail = self.tails[s];
        let head = self.pool[tail as usize].next;
        // The slot's absolute number: the cursor's, plus how far the slot lies past it.
        let ahead = s.wrapping_sub(start) & self.mask as usize;
        self.peek_end = self.cur + ahead as u64 + 1;
        self.peek_head = head;
        self.peek_tail = tail;
        Some(&self.pool[head as usize].ev)
    }

    /// The heap's earliest entry, which is the global minimum, if its time is ≤ `limit`: moved to the head
    /// of its wheel slot, with the cursor at that slot (every wheel entry is later, so all still lie
    /// within the wheel's span of it), for the pop to take as (slot, tail, head). None leaves everything
    /// as is.
    #[cold]
    #[inline(never)]
    fn far_to_wheel(&mut self, limit: Time) -> Option<(usize, u32, u32)> {
        if self.far.peek().is_none_or(|f| f.t > limit) {
            return None;
        }
        let it = self.far.pop().unwrap();
        self.far_t = self.far.peek().map_or(Time::MAX, |f| f.t);
        self.cur = it.t >> self.shift;
        let s = (self.cur & self.mask) as usize;
        let word = &mut self.bits[s >> 6];
        self.in_wheel += 1;
        if *word & (1 << (s & 63)) == 0 {
            *word |= 1 << (s & 63);
            let n = self.alloc_with(|n| Node { t: it.t, seq: it.seq, next: n, ev: it.ev });
            self.tails[s] = n;
            Some((s, n, n))
        } else {
            let tail = self.tails[s];
            let first = self.pool[tail as usize].next;
            let n = self.alloc(Node { t: it.t, seq: it.seq, next: first, ev: it.ev });
            self.pool[tail as usize].next = n;
            Some((s, tail, n))
        }
    }

    /// A look at the event rate, every PROBES probes: the slot width that the events since the last
    /// look (at least MIN_EVENTS of them) ask for — about GAP_SLOTS slots between consecutive events, so
    /// that a pop's bitmap search rarely leaves its word while a slot still holds few entries — and the
    /// wheel made anew at that width (true) if it is narrower than the present one, or wider by a factor
    /// 4 or more: a rate near a boundary then settles on the narrower width instead of flipping the
    /// wheel back and forth. Busy fabrics (hundreds of events per µs) end at the narrowest; a sparse
    /// run such as benchmark 3's incast (~4 events per µs) gets slots 64 times as wide, whose tails fit
    /// the first-level cache and whose pops scan a few bitmap words, not dozens. Only the geometry changes:
    /// the order is (time, sequence) in every geometry. The probes are the out-of-line searches and
    /// pushes, so that a wheel that fits its events pays nothing per event for this.
    #[cold]
    #[inline(never)]
    fn adapt(&mut self) -> bool {
        self.probes = PROBES;
        let events = self.seq - self.probe_seq;
        if events < MIN_EVENTS {
            return false;
        }
        let now = self.cur << self.shift;
        let gap = now.saturating_sub(self.probe_t) / events;
        self.probe_t = now;
        self.probe_seq = self.seq;
        let want = gap / GAP_SLOTS;
        let shift = if want == 0 { SHIFT } else { (u64::BITS - 1 - want.leading_zeros()).clamp(SHIFT, MAX_SHIFT) };
        // Wider only by a factor 4 or more, narrower at once: a crowded wheel costs more than a sparse one.
        if shift < self.shift + 2 && shift >= self.shift {
            return false;
        }
        self.regear(shift);
        true
    }

    /// Make the wheel anew with slots 2^shift ps wide, its cursor at the present cursor's time: every
    /// entry keeps its time and sequence; those beyond the new wheel's span wait in the heap.
    #[cold]
    fn regear(&mut self, shift: u32) {
        let now = self.cur << self.shift;
        // Slot by slot from the cursor: each slot's list is sorted and the slots follow in time, so the
        // entries come out in (time, sequence) order and each goes in at its new slot's tail.
        let start = self.cur & self.mask;
        let live: Vec<Node<E>> =
            (0..=self.mask).flat_map(|k| self.slot_entries(((start + k) & self.mask) as usize)).copied().collect();
        debug_assert_eq!(live.len(), self.in_wheel);
        let slots = Self::slots_for(self.span, shift);
        self.shift = shift;
        self.mask = slots as u64 - 1;
        self.tails = vec![NIL; slots].into();
        self.bits = vec![0; slots / 64].into();
        self.pool.clear();
        self.free = NIL;
        self.in_wheel = 0;
        self.cur = now >> shift;
        self.peek_end = 0;
        for n in live {
            self.put(n.t, n.seq, n.ev);
        }
    }

    /// Remove and return the earliest entry.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_before(Time::MAX)
    }

    /// Take every pending entry out (in no particular order), leaving the queue empty.
    #[cold]
    pub fn take_all(&mut self) -> Vec<E> {
        let all: Vec<E> = self.iter().map(|(_, e)| *e).collect();
        self.tails.iter_mut().for_each(|t| *t = NIL);
        self.bits.iter_mut().for_each(|b| *b = 0);
        self.pool.clear();
        self.free = NIL;
        self.in_wheel = 0;
        self.far.clear();
        self.far_t = Time::MAX;
        self.peek_end = 0;
        all
    }

    /// Every pending entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Time, &E)> {
        let wheel = (0..self.tails.len()).flat_map(|s| self.slot_entries(s)).map(|n| (n.t, &n.ev));
        wheel.chain(self.far.iter().map(|it| (it.t, &it.ev)))
    }

    /// Slot `s`'s entries, first to last (its list's order: by time, then sequence).
    fn slot_entries(&self, s: usize) -> impl Iterator<Item = &Node<E>> {
        let tail = self.tails[s];
        let mut n = tail;
        let mut done = self.bits[s >> 6] & (1 << (s & 63)) == 0;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            n = self.pool[n as usize].next;
            done = n == tail;
            Some(&self.pool[n as usize])
        })
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
