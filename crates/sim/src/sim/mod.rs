//! The composition root: a scenario built into the network, hosts, traffic and records, and the events
//! that move between them. Each event is handed to the part that owns it; a packet's path is one file per
//! step: `host/mod.rs` (the transport's segments become packets) → `host/vswitch.rs` → `net/port.rs` (the
//! host's NIC queue, then every switch port's queue and AQM) → `net/link.rs` (serialisation, the pipe) →
//! `net/switch.rs` (routing, buffer admission) → … → `host/mod.rs` (delivery to the transport).

mod build;
pub mod estimate;
#[cfg(test)]
mod estimate_tests;
mod sample;

use crate::aqm::Aqm;
use crate::engine::{self, Engine, Model};
use crate::host::Hosts;
use crate::net::packet::{Arena, PktId};
use crate::net::Net;
use crate::records::{Recorder, Records};
use crate::units::Time;
use crate::workload::Workload;

pub use crate::host::delay::DelaySampler;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A port finished serialising; send the next packet.
    Wake(u32),
    /// The head of a port's pipe reaches the far node.
    Arrive(u32),
    /// A transport timer of a connection slot (`timer` indexes the transport's timers). A slot reused by
    /// a later flow needs no generation check: the handler acts only if the slot's own pending entry is
    /// at this very time.
    Timer { slot: u32, timer: u8 },
    /// A traffic source's next flow starts.
    Flow(u32),
    /// A flow's application stops writing (`slot`, and the flow it must still hold).
    EndData { slot: u32, flow: u32 },
    /// A packet held by the extra NIC delay is released.
    Release(PktId),
    /// A controller's tick.
    Control(u32),
    Sample,
    LinkSample,
    Trace,
    /// A timer-mode PFC pause of a port's priority runs out (`net/lossless.rs`).
    PauseExpire { port: u32, prio: u8 },
    /// Timer-mode PFC: the PAUSE an ingress port sent is due to be sent again.
    PfcRefresh { port: u32, prio: u8 },
    /// A port's priority has been paused for `deadlock_timeout`: look for a cycle (`net/deadlock.rs`).
    DeadlockCheck { port: u32, prio: u8 },
    /// A host slower than its link has taken the packet at the head of its receive buffer (`host/rx.rs`).
    RxDone(u32),
    /// A lossless ingress counter of a switch drained below XON at a dequeue: send its RESUME now.
    PfcResume { switch: u32, port: u32, prio: u8 },
    /// InfiniBand credits for `blocks` of VL `vl` reach port `port` (`net/credit.rs`).
    Credit { port: u32, vl: u8, blocks: u32 },
    /// The run failed (`Sim::fail`): nothing more happens.
    Halt,
}

// A run may move to another thread (the Python front releases the GIL around one).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Sim>();
};

/// A scenario turned into a runnable simulation.
pub struct Sim {
    /// Time and pending events: one entry per busy port, per busy link, per armed timer, per traffic
    /// source, per controller and per sampler.
    pub(crate) eng: Engine<Ev>,
    pub(crate) arena: Arena,
    /// INT records of the packets that carry them (HPCC), by the index in their `TcpOpt::Int`.
    pub(crate) int: crate::net::int::IntArena,
    pub(crate) net: Net,
    pub(crate) hosts: Hosts,
    pub(crate) work: Workload,
    pub(crate) ctl: crate::control::Controllers,
    pub(crate) obs: Recorder,
    pub rec: Records,
    pub packet_hops: u64,
    seed: u64,
    stop_time: Time,
    all_flows_done: bool,
    /// A controller awaits the host program's decisions (`control/env.rs`): the run stops at the tick.
    pause: bool,
    /// `pause || (all_flows_done && no flow running)`: the one flag the loop reads per event, false
    /// while a run that stops when its flows are done has flows running (`flows_running`).
    watch: bool,
    /// Why the run failed (a lossless drop, a PFC deadlock with `on_deadlock = "fail"`) and when; it stops
    /// there (`Ev::Halt`).
    failure: Option<(Time, String)>,
    /// The events left when the run halted (packets held by the extra host delay are still in flight).
    pub(crate) halted: Vec<Ev>,
    warmup: Time,
    config_hash: String,
    /// Stopped by the user before its end (`interrupt`).
    interrupted: bool,
    name: String,
}

impl Model for Sim {
    type Event = Ev;

    #[inline]
    fn engine(&mut self) -> &mut Engine<Ev> {
        &mut self.eng
    }

    #[inline(always)]
    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Wake(p) => self.wake(p),
            Ev::Arrive(p) => self.arrive(p),
            Ev::Timer { slot, timer } => self.timer_fired(slot, timer),
            Ev::Flow(i) => self.next_flow(i),
            Ev::EndData { slot, flow } => self.end_data(slot, flow),
            Ev::Release(pkt) => self.nic_release(pkt),
            Ev::Control(i) => self.control_tick(i),
            Ev::Sample => self.sample_queues(),
            Ev::LinkSample => self.sample_links(),
            Ev::Trace => self.sample_traces(),
            Ev::PauseExpire { port, prio } => self.pause_expired(port, prio),
            Ev::PfcRefresh { port, prio } => self.pfc_refresh(port, prio),
            Ev::DeadlockCheck { port, prio } => self.deadlock_check(port, prio),
            Ev::RxDone(h) => self.rx_done(h),
            Ev::PfcResume { switch, port, prio } => self.send_resume(switch, port, prio),
            Ev::Credit { port, vl, blocks } => self.credit_arrive(port, vl, blocks),
            Ev::Halt => self.halt(),
        }
    }

    #[inline]
    fn done(&self) -> bool {
        self.watch && (self.pause || (self.all_flows_done && self.work.active_flows == 0 && self.work.exhausted()))
    }

    fn exhausted(&self) -> bool {
        self.work.exhausted()
    }

    /// The next event's port: most events are a packet reaching the end of a link or a port free to send,
    /// and their first loads are the port's fields, usually not in the cache. A network too small to
    /// prefetch (`Net::prefetch_below` 0) returns before reading the event's kind, the last of the peek's
    /// chain of dependent loads, on which the test of the kind waited (the incast: 0.9 % fewer
    /// instructions; with `Port::direct` before it, 3.4 % faster than 7bc3aaf over 31 interleaved runs).
    #[inline(always)]
    fn prefetch(&self, next: &Ev) {
        if self.net.prefetch_below == 0 {
            return;
        }
        if let Ev::Arrive(p) | Ev::Wake(p) = *next {
            // (Every port is below the bound here.)
            crate::engine::prefetch_lines(&self.net.ports[p as usize]);
        }
    }
}

impl Sim {
    /// INT stacks held by packets in flight (`net/int.rs`; every one is freed once its packet is gone).
    pub fn int_stacks_live(&self) -> usize {
        self.int.live()
    }

    /// Whether the run stopped at a tick awaiting the host program's decisions.
    pub fn paused(&self) -> bool {
        self.pause
    }

    pub(crate) fn set_pause(&mut self, on: bool) {
        self.pause = on;
        self.set_watch();
    }

    /// One flow more (`started`) or one fewer running.
    #[inline]
    pub(crate) fn flows_running(&mut self, started: bool) {
        if started {
            self.work.active_flows += 1;
        } else {
            self.work.active_flows -= 1;
        }
        self.set_watch();
    }

    fn set_watch(&mut self) {
        self.watch = self.pause || (self.all_flows_done && self.work.active_flows == 0);
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.eng.now()
    }

    #[inline]
    pub(crate) fn push(&mut self, t: Time, ev: Ev) {
        self.eng.schedule(t, ev);
    }

    /// The AQM of one queue, to read its state or change its parameters between `run_until` steps (a
    /// change applies to the next decision). `node` is a node name (`sw0`, `leaf3`, …).
    pub fn aqm_mut(&mut self, node: &str, port: u32, queue: u32) -> Option<&mut Aqm> {
        let p = self.net.port_of(&self.rec.meta.node_names, node, port)?;
        self.net.ports[p as usize].queues.get_mut(queue as usize).map(|q| &mut q.aqm)
    }

    /// The port of `node` whose link leads to `peer` (both by name), numbered within `node`; the first
    /// such port if there are parallel links.
    pub fn port_to(&self, node: &str, peer: &str) -> Option<u32> {
        let names = &self.rec.meta.node_names;
        let (n, m) = (names.iter().position(|x| x == node)?, names.iter().position(|x| x == peer)? as u32);
        let (p0, np) = self.net.node_ports[n];
        (0..np).find(|&i| self.net.ports[(p0 + i) as usize].peer == m)
    }

    /// The run's controllers (`switch.controller`), to read their state between `run_until` steps (an
    /// ACC controller's models and metadata).
    pub fn controllers(&self) -> impl Iterator<Item = &crate::control::Controller> {
        self.ctl.list.iter().map(|i| &i.ctl)
    }

    /// Cumulative counters of one queue (`node` by name).
    pub fn queue_counters(&self, node: &str, port: u32, queue: u32) -> Option<crate::net::port::QueueCounters> {
        let p = self.net.port_of(&self.rec.meta.node_names, node, port)?;
        self.net.ports[p as usize].queues.get(queue as usize).map(|q| q.count)
    }

    /// Pause (`on`) or resume priority `prio` of a port, as a PFC PAUSE or a lack of credits would; false
    /// if there is no such port or priority.
    pub fn pause(&mut self, node: &str, port: u32, prio: u8, on: bool) -> bool {
        let Some(p) = self.net.port_of(&self.rec.meta.node_names, node, port) else { return false };
        if prio as usize >= self.net.ports[p as usize].queues.len() {
            return false;
        }
        self.set_paused(p, prio, on);
        true
    }

    /// What host `h`'s vSwitch has seen, for shims that count (none: no shim).
    pub fn vswitch_seen(&self, h: u32) -> Option<crate::host::vswitch::Identity> {
        self.hosts.hosts.get(h as usize)?.vswitch.as_ref()?.seen()
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.eng.events
    }

    pub fn stop_time(&self) -> Time {
        self.stop_time
    }

    pub fn flows_started(&self) -> u64 {
        self.rec.flows.len() as u64
    }

    pub fn flows_finished(&self) -> u64 {
        self.rec.flows.len() as u64 - self.work.active_flows
    }

    /// Run until `limit` (or the end of the scenario). Returns true when the scenario is over.
    pub fn run_until(&mut self, limit: Time) -> bool {
        if self.failure.is_some() {
            return true;
        }
        let stop = self.stop_time;
        engine::run_until(self, limit, stop) || self.failure.is_some()
    }

    /// Stop the run: something happened that makes its results wrong (`meta.failure` says what). The
    /// first failure is kept; the run halts once the event being handled is done (`Ev::Halt` takes every
    /// event left out of the queue), so the engine's loop needs no test of its own.
    #[cold]
    pub(crate) fn fail(&mut self, msg: String) {
        if self.failure.is_none() {
            let now = self.now();
            self.failure = Some((now, msg));
            self.push(now, Ev::Halt);
        }
    }

    #[cold]
    fn halt(&mut self) {
        let left = self.eng.take_all();
        self.halted.extend(left);
    }

    /// Why the run failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_ref().map(|f| f.1.as_str())
    }

    /// Mark the run as stopped by the user: `finish` then records what happened so far with
    /// `meta.interrupted` set and `stop_reason = "interrupted"`.
    pub fn interrupt(&mut self) {
        self.interrupted = true;
    }

    /// Run to the end and return the records.
    pub fn run(mut self) -> Records {
        let wall = std::time::Instant::now();
        let cpu0 = cpu_seconds();
        let _ = self.run_until(Time::MAX);
        self.finish(wall.elapsed().as_secs_f64(), cpu_seconds() - cpu0)
    }

    /// A traffic entry's next flow is due (or one of its flows finished while it waited).
    fn next_flow(&mut self, i: u32) {
        let now = self.now();
        let e = &mut self.work.sources[i as usize];
        if e.peek().is_none_or(|t| t > now) {
            return; // a second event for one flow (a worker took a flow while the entry's next was later)
        }
        if !e.may_start() {
            return; // closed loop: it starts when one of the entry's flows finishes
        }
        let f = e.pop();
        self.start_flow(f);
        if let Some(t) = self.work.sources[i as usize].peek() {
            self.push(t.max(now), Ev::Flow(i));
        }
    }
}

/// User + system CPU time of this process.
pub fn cpu_seconds() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Peak resident set size of this process.
pub fn peak_rss_bytes() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

// Events stay 12 bytes: the event queue holds one per busy port, link and timer.
const _: () = assert!(std::mem::size_of::<Ev>() == 12);
