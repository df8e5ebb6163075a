//! Jobs: traffic whose flows depend on each other. A job (a storage IO, a training iteration) is a set of
//! flows that a model releases in steps: a flow's completion may release the job's next flows — from its
//! destination, or from a third host — now or after a delay (a compute phase), and after a barrier (the
//! model counts the completions it waits for). A model is told which of its flows finished (`Step`)
//! and answers through a [`Ctl`]: `send` releases a flow, `open` and `close` begin and end a job, which
//! is a row of the `jobs` table (start, finish, flows, bytes). `storage.rs` and `training.rs` are models.
//!
//! The engine sees a source like the others: `peek` / `pop` hand over released flows in start order, and
//! `finished` is told of each of its flows' completions by the flow's handle, which the flow carries in
//! `NewFlow::worker` (a jobs flow has no worker: it always goes on its own connection). Everything a
//! model draws comes from the entry's traffic stream, so compared schemes release the same jobs.

use super::{Carrier, NewFlow};
use crate::records::JobRow;
use crate::units::Time;
use std::collections::BTreeMap;

/// One flow of a job as its model sees it: which job, which of the job's steps (the model's own number),
/// from where to where, how many bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub job: u32,
    pub step: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
}

/// A job model: what flows a run's jobs send and when.
pub trait Model: Send {
    /// The entry becomes active at `c.now()`: open the first jobs and release their first flows.
    fn start(&mut self, c: &mut Ctl);
    /// Flow `done` (released by this model) finished at `c.now()`: its receiver holds its last byte.
    fn done(&mut self, done: Step, c: &mut Ctl);
}

/// What a model may do when it is called: release flows, open and close jobs.
pub struct Ctl<'a> {
    now: Time,
    entry: u32,
    book: &'a mut Book,
    rows: &'a mut Vec<JobRow>,
    /// The earliest start of the flows released in this call.
    earliest: Option<Time>,
}

impl Ctl<'_> {
    pub fn now(&self) -> Time {
        self.now
    }

    /// A new job of kind `kind` (the `jobs.kind` column) begins now; returns its id (`jobs.job_id`).
    pub fn open(&mut self, kind: &'static str) -> u32 {
        self.rows.push(JobRow { job_id: self.rows.len() as u32, entry: self.entry, kind, start: self.now, finish: None, flows: 0, bytes: 0 });
        (self.rows.len() - 1) as u32
    }

    /// Release flow `s` of its job, to start `after` from now.
    pub fn send(&mut self, s: Step, after: Time) {
        let start = self.now + after;
        let row = &mut self.rows[s.job as usize];
        row.flows += 1;
        row.bytes += s.size;
        let handle = match self.book.free.pop() {
            Some(h) => {
                self.book.steps[h as usize] = s;
                h
            }
            None => {
                self.book.steps.push(s);
                (self.book.steps.len() - 1) as u32
            }
        };
        let b = &mut *self.book;
        let f = NewFlow {
            src: s.src,
            dst: s.dst,
            size: s.size,
            start,
            tag: b.tag,
            prio: b.prio,
            transport: 0,
            entry: 0,
            extra_delay: None,
            stop: None,
            worker: handle,
            carrier: Carrier::Own,
        };
        b.ready.insert((start, b.seq), f);
        b.seq += 1;
        self.earliest = Some(self.earliest.map_or(start, |t| t.min(start)));
    }

    /// Job `job` completes now.
    pub fn close(&mut self, job: u32) {
        self.rows[job as usize].finish = Some(self.now);
    }
}

/// The released flows and the steps their handles name.
struct Book {
    tag: u16,
    prio: u8,
    /// Released flows by the time they may start (and the order they were released in).
    ready: BTreeMap<(Time, u64), NewFlow>,
    seq: u64,
    /// The step of each handle; handles of finished flows are reused.
    steps: Vec<Step>,
    free: Vec<u32>,
}

/// A traffic entry whose flows a job model releases.
pub struct Jobs {
    model: Box<dyn Model>,
    /// When the model starts (the entry's `start`, or its `active.start` if later).
    pub start: Time,
    book: Book,
}

impl Jobs {
    pub fn new(model: Box<dyn Model>, start: Time, tag: u16, prio: u8) -> Jobs {
        let book = Book { tag, prio, ready: BTreeMap::new(), seq: 0, steps: Vec::new(), free: Vec::new() };
        Jobs { model, start, book }
    }

    /// The model starts: its first flows are released. `entry` is the traffic entry, `rows` the run's
    /// `jobs` table.
    pub fn begin(&mut self, entry: u32, rows: &mut Vec<JobRow>) {
        let mut c = Ctl { now: self.start, entry, book: &mut self.book, rows, earliest: None };
        self.model.start(&mut c);
    }

    pub fn peek(&self) -> Option<Time> {
        self.book.ready.keys().next().map(|k| k.0)
    }

    pub fn pop(&mut self) -> NewFlow {
        self.book.ready.pop_first().expect("pop after peek").1
    }

    /// The flow with handle `handle` finished at `now`: the model releases what follows. Returns the
    /// earliest start of the flows it released, if any (the engine's next look at this entry).
    pub fn finished(&mut self, handle: u32, now: Time, entry: u32, rows: &mut Vec<JobRow>) -> Option<Time> {
        let s = self.book.steps[handle as usize];
        self.book.free.push(handle);
        let mut c = Ctl { now, entry, book: &mut self.book, rows, earliest: None };
        self.model.done(s, &mut c);
        c.earliest
    }

    /// Released flows that have not started (a run's end), in start order; what the model would release
    /// later is not defined by the scenario and is left out.
    pub fn unstarted(&mut self) -> Vec<NewFlow> {
        std::mem::take(&mut self.book.ready).into_values().collect()
    }

    /// Released flows not started yet.
    pub fn remaining(&self) -> u64 {
        self.book.ready.len() as u64
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Drives a model as the engine would on an idle network where every flow takes `fct(step)`:
    /// returns the job rows and the flows in start order (with their finish times) until `until`.
    pub(crate) fn drive(j: &mut Jobs, until: Time, fct: impl Fn(&NewFlow) -> Time) -> (Vec<JobRow>, Vec<(NewFlow, Time)>) {
        let mut rows = Vec::new();
        j.begin(0, &mut rows);
        // Running flows by finish time.
        let mut running: BTreeMap<(Time, u64), NewFlow> = BTreeMap::new();
        let (mut log, mut n) = (Vec::new(), 0u64);
        loop {
            let next_start = j.peek();
            let next_end = running.keys().next().map(|k| k.0);
            match (next_start, next_end) {
                (Some(s), e) if e.is_none_or(|e| s <= e) && s < until => {
                    let f = j.pop();
                    let end = s + fct(&f);
                    running.insert((end, n), f);
                    log.push((f, end));
                    n += 1;
                }
                (_, Some(e)) if e < until => {
                    let (_, f) = running.pop_first().unwrap();
                    j.finished(f.worker, e, 0, &mut rows);
                }
                _ => return (rows, log),
            }
        }
    }

    /// A chain of three flows per job (0 → 1, 1 → 2 after a gap, 2 → 0), `depth` jobs at once.
    struct Chain {
        depth: u32,
        gap: Time,
    }

    impl Model for Chain {
        fn start(&mut self, c: &mut Ctl) {
            for _ in 0..self.depth {
                let job = c.open("chain");
                c.send(Step { job, step: 0, src: 0, dst: 1, size: 100 }, 0);
            }
        }
        fn done(&mut self, d: Step, c: &mut Ctl) {
            match d.step {
                0 => c.send(Step { step: 1, src: 1, dst: 2, ..d }, self.gap),
                1 => c.send(Step { step: 2, src: 2, dst: 0, size: 10, ..d }, 0),
                _ => {
                    c.close(d.job);
                    let job = c.open("chain");
                    c.send(Step { job, step: 0, src: 0, dst: 1, size: 100 }, 0);
                }
            }
        }
    }

    #[test]
    fn a_completion_releases_the_next_step_from_its_destination_after_the_gap() {
        let mut j = Jobs::new(Box::new(Chain { depth: 1, gap: 7 }), 5, 0, 0);
        let (rows, log) = drive(&mut j, 200, |f| f.size);
        // Job 0: 0 → 1 at 5 (ends 105), 1 → 2 at 112 (ends 212) — past `until`.
        assert_eq!(log.iter().map(|(f, _)| (f.src, f.dst, f.start)).collect::<Vec<_>>(), [(0, 1, 5), (1, 2, 112)]);
        assert_eq!((rows.len(), rows[0].flows, rows[0].bytes, rows[0].finish), (1, 2, 200, None));
        let (rows, log) = drive(&mut Jobs::new(Box::new(Chain { depth: 1, gap: 7 }), 0, 0, 0), 1000, |f| f.size);
        // Each job takes 100 + 7 + 100 + 10 = 217; the next opens when the last step ends.
        assert_eq!(rows[0].finish, Some(217));
        assert_eq!((rows[1].start, rows[1].finish), (217, Some(434)));
        assert_eq!(log[3].0.start, 217);
    }

    #[test]
    fn handles_are_reused_and_name_the_right_job() {
        let mut j = Jobs::new(Box::new(Chain { depth: 3, gap: 0 }), 0, 0, 0);
        let (rows, log) = drive(&mut j, 10_000, |f| f.size + f.src as Time);
        assert!(rows.iter().all(|r| r.finish.is_none_or(|f| f - r.start == 100 + 101 + 12)), "every job's flows ran in sequence");
        let max_handle = log.iter().map(|(f, _)| f.worker).max().unwrap();
        assert!(max_handle < 3, "three flows run at once: three handles suffice, got {max_handle}");
    }
}
