//! The event queue's tests (`queue.rs`), a child module of it.

use super::*;
use rand::Rng;

/// Random pushes (many ties, many into the slot just popped) and pops, with a peek before about half
/// of the operations: the pop after a peek reuses what the peek found unless a push came at or before
/// its slot.
#[test]
fn pops_in_time_then_insertion_order() {
    // The largest wheel, and the smallest (where more pushes land beyond it, in the heap).
    for q in [EventQueue::new(), EventQueue::with_span(0)] {
        pops_in_order(q);
    }
}

/// Pop one entry into `popped`, and into `expect` what the reference says comes next: the smallest (time,
/// id) pending, taken out of it. Returns the popped entry's time.
fn pop_against(q: &mut EventQueue<u64>, reference: &mut Vec<(Time, u64)>, popped: &mut Vec<(Time, u64)>, expect: &mut Vec<(Time, u64)>) -> Time {
    let (t, e) = q.pop().unwrap();
    popped.push((t, e));
    let (i, _) = reference.iter().enumerate().min_by_key(|(_, x)| **x).unwrap();
    expect.push(reference.swap_remove(i));
    t
}

fn pops_in_order(mut q: EventQueue<u64>) {
    let mut rng = crate::rng::stream(1, "q", 0);
    let mut reference: Vec<(Time, u64)> = Vec::new();
    let mut now = 0;
    let mut id = 0u64;
    let mut popped = Vec::new();
    let mut expect = Vec::new();
    for k in 0..30_000 {
        if rng.gen_bool(0.5) {
            q.peek_near();
        }
        if k % 500 == 0 {
            // What is pending is what the reference holds: slots emptied by pops show nothing.
            let mut pending: Vec<(Time, u64)> = q.iter().map(|(t, e)| (t, *e)).collect();
            let mut want = reference.clone();
            pending.sort();
            want.sort();
            assert_eq!(pending, want);
        }
        if rng.gen_bool(0.55) || q.is_empty() {
            // Many ties on purpose.
            let t = now
                + [0, 0, 1, 5, 1000, 2047, 2048, rng.gen_range(0..1_000_000), rng.gen_range(0..40_000_000), rng.gen_range(0..200_000_000)]
                    [rng.gen_range(0..10)];
            q.push(t, id);
            reference.push((t, id));
            id += 1;
        } else {
            now = pop_against(&mut q, &mut reference, &mut popped, &mut expect);
        }
        assert_eq!(q.len(), reference.len());
    }
    assert_eq!(popped, expect);
}

/// The wheel covers the span asked for, rounded up to a power of two slots, within 2^14–2^16 slots
/// of 1.024 ns; an entry just inside it goes to the wheel, one just beyond to the heap.
#[test]
fn the_wheel_covers_the_span_asked_for() {
    let us = 1_000_000;
    let exactly = |slots: u64| slots << SHIFT;
    for (span, slots) in [
        (0, 1 << 14),
        (4 * us, 1 << 14),
        (exactly(1 << 14), 1 << 14),
        (exactly(1 << 14) + (1 << SHIFT), 1 << 15),
        (17 * us, 1 << 15),
        (34 * us, 1 << 16),
        (Time::MAX, 1 << 16),
    ] {
        let mut q = EventQueue::with_span(span);
        assert_eq!((q.mask + 1, q.bits.len()), (slots, slots as usize / 64), "span {span}");
        q.push((slots << SHIFT) - 1, 1u32);
        assert_eq!((q.in_wheel, q.far.len()), (1, 0));
        q.push(slots << SHIFT, 2);
        assert_eq!((q.in_wheel, q.far.len()), (1, 1));
        assert_eq!(q.pop(), Some(((slots << SHIFT) - 1, 1)));
        assert_eq!(q.pop(), Some((slots << SHIFT, 2)));
    }
}

/// A sparse stretch (pops ~100 ns to µs apart) widens the slots, a busy one after it (pops ~1 ps
/// apart, out of order) narrows them again, and through both the pops come in (time, sequence)
/// order, with ties, peeks, entries beyond the wheel's span and pushes into the slot just popped;
/// every geometry covers at least 16.8 µs.
#[test]
fn the_slot_width_follows_the_event_rate_and_the_order_holds() {
    let mut rng = crate::rng::stream(3, "q", 0);
    let mut q = EventQueue::with_span(10_000_000);
    let mut reference = std::collections::BTreeSet::new();
    let (mut now, mut id) = (0, 0u64);
    let mut shifts = vec![q.slot_shift()];
    // (pops, the largest gap ahead of now for a new entry, ps; how far ahead one in six goes; how
    // many entries are pending)
    for (pops, spread, far, pending) in [(100_000, 4_000_000u64, 90_000_000, 40), (100_000, 40, 30, 200)] {
        for k in 0..pops {
            while reference.len() < pending && k + pending < pops {
                let t = now + [0, 0, 1, rng.gen_range(0..spread), rng.gen_range(0..spread), far][rng.gen_range(0..6)];
                q.push(t, id);
                reference.insert((t, id));
                id += 1;
            }
            if rng.gen_bool(0.5) {
                q.peek_near();
            }
            // The stretch ends with the queue drained.
            let Some((t, e)) = q.pop() else { break };
            assert_eq!(Some((t, e)), reference.pop_first(), "pop {id}");
            now = t;
            assert!((q.mask + 1) << q.shift >= 1 << MIN_SPAN_BITS);
        }
        assert!(reference.is_empty() && q.is_empty());
        shifts.push(q.slot_shift());
    }
    // Widened by the sparse stretch, back to the narrowest by the busy one.
    assert!(shifts[1] >= SHIFT + 4 && shifts[2] == SHIFT, "{shifts:?}");
}

#[test]
fn pop_before_leaves_later_entries() {
    let mut q = EventQueue::new();
    q.push(5_000, 1u32);
    q.push(100_000_000_000, 2);
    assert_eq!(q.pop_before(4_999), None);
    // Something earlier can still be scheduled after a refused pop.
    q.push(4_000, 3);
    assert_eq!(q.pop_before(10_000), Some((4_000, 3)));
    assert_eq!(q.pop_before(10_000), Some((5_000, 1)));
    assert_eq!(q.pop_before(10_000), None);
    q.push(60_000, 4);
    assert_eq!(q.pop(), Some((60_000, 4)));
    assert_eq!(q.pop(), Some((100_000_000_000, 2)));
    assert!(q.is_empty());
}

/// Many entries in one slot — in time order, reversed, shuffled, all at one time — pop in (time,
/// sequence) order, with pops and pushes interleaved; far more than SCAN, so out-of-order ones walk
/// the slot or wait in the heap. Some entries are pushed while the slot is beyond the
/// wheel's horizon (they wait in the heap) and tie with later ones that land in the wheel.
#[test]
fn crowded_slot_pops_in_time_then_insertion_order() {
    let mut rng = crate::rng::stream(2, "q", 0);
    let base: Time = 100_000 << SHIFT; // a slot boundary beyond the horizon seen from time 0
    let width = 1u64 << SHIFT;
    for pattern in 0..4 {
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u64)> = Vec::new();
        let mut id = 0u64;
        let mut now = 0;
        let push = |q: &mut EventQueue<u64>, reference: &mut Vec<(Time, u64)>, i: u64, now: Time, rng: &mut crate::rng::Rng| {
            let off = match pattern {
                0 => i % width,                                // in time order
                1 => width - 1 - i % width,                    // reversed
                2 => [0, 0, 7, width / 2 - 1, width / 2, width - 1][rng.gen_range(0..6)], // shuffled, many ties
                _ => 100,                                      // all at one time
            };
            let t = (base + off).max(now);
            q.push(t, i);
            reference.push((t, i));
        };
        for _ in 0..300 {
            push(&mut q, &mut reference, id, now, &mut rng);
            id += 1;
        }
        let mut popped = Vec::new();
        let mut expect = Vec::new();
        while !reference.is_empty() {
            if rng.gen_bool(0.5) {
                q.peek_near();
            }
            if id < 3000 && rng.gen_bool(0.5) {
                push(&mut q, &mut reference, id, now, &mut rng);
                id += 1;
            } else {
                now = pop_against(&mut q, &mut reference, &mut popped, &mut expect);
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.iter().count(), reference.len());
        }
        assert_eq!(popped, expect, "pattern {pattern}");
        assert!(q.pop().is_none());
    }
}
