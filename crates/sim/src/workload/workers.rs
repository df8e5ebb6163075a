//! Flows served by workers at their sending host: each host has `workers` of them, and a worker starts
//! the host's next flow when its last one finishes. One worker runs a host's flows back to back (AC/DC's
//! sequential stride, `workloads.md` §9.2); two give the shuffle's "at most two transfers in parallel per
//! sender" (§9.3). A flow starts no earlier than its own `start`. Instead of a list, the flows may come
//! from a generator asked for a host's next flow when one of its workers is free (`closed_loop.rs`).
//! Workers have numbers (0 to `workers` − 1 per host): a flow carries its worker's (`NewFlow::worker`),
//! its finish frees that worker, and a generator is told which worker asks (a worker's persistent
//! connections are its own).

use super::NewFlow;
use crate::units::Time;
use std::collections::{BTreeMap, VecDeque};

/// Makes the next flow of host `src`'s worker `worker`, starting at `now`, or says there is none left.
pub type Generator = Box<dyn FnMut(u32, u32, Time) -> Option<NewFlow> + Send>;

pub struct Workers {
    /// Per sending host: the flows no worker has taken yet, in order.
    queues: Vec<VecDeque<NewFlow>>,
    /// Per host: its free workers (the last freed is taken first).
    free: Vec<Vec<u32>>,
    generator: Option<Generator>,
    /// Flows a worker has taken, by the time they may start (and the order they were taken in).
    ready: BTreeMap<(Time, u64), NewFlow>,
    taken: u64,
    last_start: Time,
}

impl Workers {
    /// `flows` in the order each host serves them; `n_hosts` hosts with `workers` workers each.
    pub fn new(flows: Vec<NewFlow>, n_hosts: u32, workers: u32) -> Workers {
        let mut queues = vec![VecDeque::new(); n_hosts as usize];
        for f in flows {
            queues[f.src as usize].push_back(f);
        }
        let free = vec![(0..workers).rev().collect(); n_hosts as usize];
        let mut w = Workers { queues, free, generator: None, ready: BTreeMap::new(), taken: 0, last_start: 0 };
        for h in 0..n_hosts {
            for _ in 0..workers {
                w.take(h, 0);
            }
        }
        w
    }

    /// Workers whose flows come from `generator`: `workers` per host of `hosts`, the first flows at `start`.
    pub fn generated(n_hosts: u32, hosts: &[u32], workers: u32, start: Time, generator: Generator) -> Workers {
        let queues = vec![VecDeque::new(); n_hosts as usize];
        let free = vec![(0..workers).rev().collect(); n_hosts as usize];
        let mut w = Workers { queues, free, generator: Some(generator), ready: BTreeMap::new(), taken: 0, last_start: 0 };
        for _ in 0..workers {
            for &h in hosts {
                w.take(h, start);
            }
        }
        w
    }

    /// A worker of host `h` is free at `now`: it takes the host's next flow, if any.
    fn take(&mut self, h: u32, now: Time) -> bool {
        let Some(worker) = self.free[h as usize].pop() else { return false };
        let next = match self.queues[h as usize].pop_front() {
            Some(f) => Some(f),
            None => self.generator.as_mut().and_then(|g| g(h, worker, now)),
        };
        let Some(mut f) = next else {
            self.free[h as usize].push(worker);
            return false;
        };
        f.worker = worker;
        f.start = f.start.max(now);
        self.last_start = self.last_start.max(f.start);
        self.ready.insert((f.start, self.taken), f);
        self.taken += 1;
        true
    }

    pub fn peek(&self) -> Option<Time> {
        self.ready.keys().next().map(|k| k.0)
    }

    pub fn pop(&mut self) -> NewFlow {
        self.ready.pop_first().expect("pop after peek").1
    }

    /// A flow of host `src`'s `worker` finished at `now`: the worker takes the next. True if one was taken.
    pub fn finished(&mut self, src: u32, worker: u32, now: Time) -> bool {
        self.free[src as usize].push(worker);
        self.take(src, now)
    }

    /// Every flow not started, in the order they would start (a run's end): the taken ones, then each
    /// host's queue at the flows' own start times, then what the generator has left, drawn host by host
    /// in turn as due when the last taken flow was.
    pub fn unstarted(&mut self) -> Vec<NewFlow> {
        let mut v: Vec<NewFlow> = std::mem::take(&mut self.ready).into_values().collect();
        v.extend(self.queues.iter_mut().flat_map(|q| q.drain(..)));
        if let Some(g) = self.generator.as_mut() {
            let n = self.queues.len() as u32;
            let (mut h, mut idle) = (0, 0);
            while idle < n {
                match g(h, 0, self.last_start) {
                    Some(f) => {
                        v.push(f);
                        idle = 0;
                    }
                    None => idle += 1,
                }
                h = (h + 1) % n;
            }
        }
        v
    }

    /// Flows not started yet.
    pub fn remaining(&self) -> u64 {
        (self.ready.len() + self.queues.iter().map(|q| q.len()).sum::<usize>()) as u64
    }

    /// Keep only the flows `keep` accepts (an entry's active window).
    pub fn retain(&mut self, keep: impl Fn(&NewFlow) -> bool) {
        self.ready.retain(|_, f| keep(f));
        for q in &mut self.queues {
            q.retain(&keep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Carrier;

    fn f(src: u32, dst: u32, start: Time) -> NewFlow {
        NewFlow { src, dst, size: 1000, start, tag: 0, prio: 0, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own }
    }

    #[test]
    fn one_worker_runs_a_hosts_flows_back_to_back_and_hosts_do_not_wait_for_each_other() {
        let mut w = Workers::new(vec![f(0, 1, 0), f(0, 2, 0), f(1, 2, 5), f(1, 0, 0)], 3, 1);
        // The first flow of each host is ready at its start; host 1's first is (1 → 2) at 5.
        assert_eq!(w.peek(), Some(0));
        assert_eq!((w.pop().dst, w.peek()), (1, Some(5)));
        assert_eq!(w.pop().src, 1);
        assert_eq!(w.peek(), None, "each host's second flow waits for its first");
        assert!(w.finished(1, 0, 40));
        assert_eq!((w.peek(), w.pop().dst), (Some(40), 0));
        assert!(w.finished(0, 0, 50));
        assert_eq!(w.pop().dst, 2);
        assert!(!w.finished(0, 0, 60) && !w.finished(2, 0, 60), "nothing left");
        assert_eq!(w.remaining(), 0);
    }

    #[test]
    fn two_workers_keep_two_flows_of_a_host_running() {
        let flows = (1..5).map(|d| f(0, d, 0)).collect();
        let mut w = Workers::new(flows, 5, 2);
        let (a, b) = (w.pop(), w.pop());
        assert_eq!((a.dst, b.dst, w.peek()), (1, 2, None));
        assert_eq!((a.worker, b.worker), (0, 1), "each flow names its worker");
        w.finished(0, b.worker, 7);
        let c = w.pop();
        assert_eq!((c.start, c.dst, c.worker, w.peek()), (7, 3, 1, None), "the freed worker took it");
        assert_eq!(w.remaining(), 1);
        let left = w.unstarted();
        assert_eq!(left.iter().map(|f| f.dst).collect::<Vec<_>>(), [4]);
    }
}
