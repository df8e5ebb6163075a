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
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `ev` at `t` (≥ now); events at equal times run in the order they were scheduled.
    #[inline]
    pub fn schedule(&mut self, t: Time, ev: E) {
        self.q.push(t, ev);
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
        m.handle(ev);
    }
}
