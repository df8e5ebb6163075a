//! The engine: simulated time, the event queue and the loop. It knows nothing of packets, switches or
//! transports: a [`Model`] owns its state, names its own event type and handles each event it is given;
//! the engine only keeps time and order — (time, insertion sequence), so every run is deterministic.

pub mod queue;
pub mod timer;

use crate::units::Time;
use queue::EventQueue;

/// Time and pending events of one run.
pub struct Engine<E: Copy> {
    now: Time,
    q: EventQueue<E>,
    /// Events popped so far (the benchmark's "events").
    pub events: u64,
}

impl<E: Copy> Default for Engine<E> {
    fn default() -> Self {
        Engine { now: 0, q: EventQueue::new(), events: 0 }
    }
}

impl<E: Copy> Engine<E> {
    /// An engine whose timing wheel covers at least `span` ahead (`EventQueue::with_span`).
    pub fn with_span(span: Time) -> Self {
        Engine { now: 0, q: EventQueue::with_span(span), events: 0 }
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `ev` at `t` (≥ now); events at equal times run in the order they were scheduled.
    #[inline]
    pub fn schedule(&mut self, t: Time, ev: E) {
        self.q.push(t, ev);
    }

    /// The timing wheel's number of slots (`EventQueue::with_span`).
    #[cfg(test)]
    pub(crate) fn wheel_slots(&self) -> u64 {
        self.q.wheel_slots()
    }

    /// Take every pending event out, in no particular order (a run that halts).
    pub fn take_all(&mut self) -> Vec<E> {
        self.q.take_all()
    }

    /// Every pending event with its time, in no particular order (conservation counts at the end).
    pub fn pending(&self) -> impl Iterator<Item = (Time, &E)> {
        self.q.iter()
    }
}

/// Start loading the cache lines of `*x` (a hint: no effect on results; a no-op off x86-64).
#[inline(always)]
pub fn prefetch_lines<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = x as *const T as *const i8;
        let mut off = 0;
        while off < std::mem::size_of::<T>() {
            // SAFETY: a prefetch never faults and reads nothing the program sees; the addresses lie in `*x`.
            unsafe { _mm_prefetch(p.add(off), _MM_HINT_T0) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// What the engine runs: a model with its own event type.
pub trait Model {
    type Event: Copy;
    fn engine(&mut self) -> &mut Engine<Self::Event>;
    /// Handle one event; `self.engine().now()` is its time.
    fn handle(&mut self, ev: Self::Event);
    /// The model has finished early (e.g. every flow is done).
    fn done(&self) -> bool;
    /// With no event left before the stop time: whether the run is over (nothing more can arrive).
    fn exhausted(&self) -> bool;
    /// Ask the CPU to start loading what `next`, probably the event after the one about to be handled,
    /// will read (it may never run next; nothing may depend on this being called).
    #[inline(always)]
    fn prefetch(&self, _next: &Self::Event) {}
}

/// Run `m` until `limit` or `stop`, whichever is earlier. Returns true when the run is over.
pub fn run_until<M: Model>(m: &mut M, limit: Time, stop: Time) -> bool {
    let limit = limit.min(stop);
    loop {
        if m.done() {
            return true;
        }
        let e = m.engine();
        let Some((t, ev)) = e.q.pop_before(limit) else {
            if e.q.is_empty() {
                e.now = e.now.max(limit.min(stop));
                let over = e.now >= stop;
                return over || m.exhausted();
            }
            e.now = limit;
            return limit >= stop;
        };
        e.now = t;
        e.events += 1;
        if let Some(next) = e.q.peek_near() {
            let next = *next;
            m.prefetch(&next);
        }
        m.handle(ev);
    }
}
