//! The world: nodes, ports, hosts, connections and the event loop that moves packets between them.
//!
//! Per-packet path, with no allocation: a host's connection writes segments into an outbox → packets are
//! taken from the arena → (extra NIC delay) → the NIC port's queue → serialisation (integer picoseconds,
//! remainder carried per port) → the link's pipe, a FIFO with one heap entry per busy link → the next
//! node: a switch routes (ECMP), admits (shared buffer / port limit), runs the AQM and queues; a host
//! hands the packet to its connection.

use crate::aqm::{Aqm, QueueCtx, Verdict};
use crate::config::{
    AppliesTo, ConfigError, DelayCfg, DelayPer, Ecmp, NonEct, QueueSel, Scenario, SchedulerCfg, TransportCfg,
};
use crate::packet::{Arena, Ecn, Packet, PktId, ACK_BYTES, HEADER_BYTES};
use crate::records::{write_queue_row, FlowRow, LinkRow, QueueRow, Records, TraceRow};
use crate::rng::{self, mix64, Rng};
use crate::tcp::{Conn, Fire, Out, TcpParams};
use crate::topology::Topo;
use crate::units::{tx_time_floor, Time, SEC};
use crate::workload::{build_sources, HostInfo, NewFlow, Source, Tags};
use crate::queue::EventQueue;
use std::collections::VecDeque;
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// A port finished serialising; send the next packet.
    Wake(u32),
    /// The head of a port's pipe reaches the far node.
    Arrive(u32),
    /// A connection's retransmission timer. A slot reused by a later flow needs no generation check:
    /// the handler acts only if the slot's own pending entry is at this very time.
    Rto(u32),
    DelAck(u32),
    /// A traffic source's next flow starts.
    Flow(u32),
    /// A packet held by the extra NIC delay is released.
    Release(PktId),
    Sample,
    LinkSample,
    Trace,
}

struct Queue {
    fifo: VecDeque<PktId>,
    bytes: u64,
    aqm: Aqm,
    non_ect_drop: bool,
    deficit: u64,
    marks: u64,
    drops: u64,
    s_marks: u64,
    s_drops: u64,
}

impl Queue {
    /// Carry out an AQM verdict on a packet: mark CE (a Not-ECT packet passes or is dropped per
    /// `non_ect`), count it. Returns true when the packet must be dropped.
    #[inline]
    fn apply(&mut self, v: Verdict, pkt: &mut Packet) -> bool {
        let drop = match v {
            Verdict::Pass => false,
            Verdict::Mark if pkt.ecn != Ecn::NotEct => {
                pkt.ecn = Ecn::Ce;
                self.marks += 1;
                self.s_marks += 1;
                false
            }
            Verdict::Mark => self.non_ect_drop,
            Verdict::Drop => true,
        };
        if drop {
            self.drops += 1;
            self.s_drops += 1;
        }
        drop
    }
}

enum Sched {
    Sp,
    Dwrr { quantum: Vec<u64>, cur: usize, fresh: bool },
}

struct Port {
    node: u32,
    local: u32,
    peer: u32,
    rate: u64,
    delay: Time,
    loss: f64,
    queues: Vec<Queue>,
    sched: Sched,
    bytes: u64,
    pkts: u32,
    limit: u64,
    busy_until: Time,
    wake_pending: bool,
    /// Remainder of bits × 10¹² not yet turned into whole picoseconds.
    carry: u64,
    /// Exact picoseconds per byte when the rate divides 8·10¹² (every common rate); 0 otherwise.
    ps_per_byte: u64,
    pipe: VecDeque<(Time, PktId)>,
    tx_bytes: u64,
    tx_bytes_link_sample: u64,
    rng: Option<Rng>,
}

struct Node {
    is_host: bool,
    port0: u32,
    nports: u32,
    buffer: u64,
    used: u64,
    salt: u64,
    rng: Rng,
}

struct Slot {
    conn: Conn,
    src: u32,
    dst: u32,
    hash: u32,
    rhash: u32,
    prio: u8,
    delay_data: Time,
    delay_ack: Time,
    live: bool,
}

/// A scenario turned into a runnable simulation.
pub struct Sim {
    now: Time,
    /// Pending events, ordered by (time, insertion sequence): one entry per busy port, per busy link,
    /// per armed timer, per traffic source and per sampler.
    q: EventQueue<Ev>,
    arena: Arena,
    nodes: Vec<Node>,
    ports: Vec<Port>,
    n_hosts: u32,
    routes: Vec<(u32, u32)>,
    route_ports: Vec<u32>,
    ecmp_packet: bool,
    mtu: u32,
    alpha: f64,
    tcp: TcpParams,
    host_delay: Vec<Time>,
    /// PIAS demotion thresholds (bytes sent); empty when PIAS is off.
    pias: Vec<u64>,
    /// Extra host delay: the sampler (built once — a CDF file is read once), per flow or per host, and
    /// whether ACKs get it too.
    delay: Option<(DelaySampler, DelayPer, AppliesTo)>,
    delay_rng: Rng,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    sources: Vec<Source>,
    active_flows: u64,
    flow_slot: Vec<u32>,
    outbox: Vec<Out>,
    seed: u64,
    stop_time: Time,
    all_flows_done: bool,
    warmup: Time,
    // records
    pub rec: Records,
    tags: Tags,
    sample_ports: Vec<u32>,
    sample_interval: Option<Time>,
    link_interval: Option<Time>,
    sample_until: Time,
    /// Link samples count bytes since the previous one; the first (at `sample_from` > 0) only resets.
    link_primed: bool,
    busiest: Option<usize>,
    queue_stream: Option<std::io::BufWriter<std::fs::File>>,
    trace_flows: Vec<u32>,
    trace_tags: Vec<u16>,
    trace_interval: Time,
    pub events: u64,
    pub packet_hops: u64,
    config_hash: String,
    name: String,
}

fn hash_str(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Sim {
    /// Build from TOML text (parse + validate + build). Errors name the field.
    pub fn from_toml(text: &str) -> Result<Sim, ConfigError> {
        let sc = Scenario::from_toml(text)?;
        let mut s = Sim::new(&sc)?;
        s.config_hash = hash_str(text);
        Ok(s)
    }

    pub fn new(sc: &Scenario) -> Result<Sim, ConfigError> {
        sc.validate()?;
        let topo = Topo::build(&sc.topology)?;
        let sw = &sc.switch;
        let mtu = sw.mtu;
        let TransportCfg::Tcp {
            cc, ecn, min_rto, init_cwnd, delayed_ack, delayed_ack_timeout, mss, rwnd, wscale, handshake, dctcp_g, tsq_limit,
        } = sc.host.transport.clone();
        let ecn = match (cc, ecn) {
            (crate::config::CcName::Dctcp, Some(false)) => {
                return Err(ConfigError::new("host.transport.ecn", "DCTCP needs ECN; remove `ecn = false`"))
            }
            (crate::config::CcName::Dctcp, _) => true,
            (_, e) => e.unwrap_or(false),
        };
        let tcp = TcpParams {
            cc,
            ecn,
            mss: mss.map(|m| m.0.bytes(mtu as u64) as u32).unwrap_or(mtu - HEADER_BYTES),
            init_cwnd,
            min_rto: min_rto.0,
            max_rto: 60 * SEC,
            delack: delayed_ack.0,
            delack_timeout: delayed_ack_timeout.0,
            rwnd: rwnd.0.bytes(mtu as u64),
            wscale,
            handshake,
            dctcp_g,
            tsq_limit: tsq_limit.0.bytes(mtu as u64),
        };
        let n_nodes = topo.n_nodes() as usize;
        let n_hosts = topo.n_hosts;
        // Ports: per node, in the order its links are listed.
        let mut node_links: Vec<Vec<(u32, crate::topology::LinkSpec)>> = vec![vec![]; n_nodes];
        for &(a, b, l) in &topo.links {
            node_links[a as usize].push((b, l));
            node_links[b as usize].push((a, l));
        }
        let buffer = sw.buffer.map(|b| b.0.bytes(mtu as u64)).unwrap_or(u64::MAX);
        let port_limit = sw.port_buffer.map(|b| b.0.bytes(mtu as u64)).unwrap_or(u64::MAX);
        let mut nodes = Vec::with_capacity(n_nodes);
        let mut ports: Vec<Port> = Vec::new();
        for (n, links) in node_links.iter().enumerate() {
            let is_host = (n as u32) < n_hosts;
            nodes.push(Node {
                is_host,
                port0: ports.len() as u32,
                nports: links.len() as u32,
                buffer: if is_host { u64::MAX } else { buffer },
                used: 0,
                salt: mix64(sc.seed ^ 0xECE0 ^ mix64(n as u64)),
                rng: rng::stream(sc.seed, "switch", n as u64),
            });
            for (i, &(peer, l)) in links.iter().enumerate() {
                // Hosts get the same queues as switches (PIAS tags packets at the NIC too), drop-tail.
                let nq = sw.queues as usize;
                let queues = (0..nq)
                    .map(|q| {
                        let cfg = if is_host { crate::config::AqmCfg::Droptail {} } else { sw.aqm.get(q) };
                        Queue {
                            fifo: VecDeque::new(),
                            bytes: 0,
                            aqm: Aqm::from_cfg(&cfg, mtu as u64),
                            non_ect_drop: Aqm::non_ect(&cfg) == NonEct::Drop,
                            deficit: 0,
                            marks: 0,
                            drops: 0,
                            s_marks: 0,
                            s_drops: 0,
                        }
                    })
                    .collect();
                let sched = match &sw.scheduler {
                    SchedulerCfg::Sp {} => Sched::Sp,
                    SchedulerCfg::Dwrr { weights } => Sched::Dwrr {
                        quantum: weights.iter().map(|&w| w as u64 * mtu as u64).collect(),
                        cur: 0,
                        fresh: true,
                    },
                };
                let gid = ports.len() as u64;
                ports.push(Port {
                    node: n as u32,
                    local: i as u32,
                    peer,
                    rate: l.rate,
                    delay: l.delay,
                    loss: l.loss,
                    queues,
                    sched,
                    bytes: 0,
                    pkts: 0,
                    limit: if is_host { u64::MAX } else { port_limit },
                    busy_until: 0,
                    wake_pending: false,
                    carry: 0,
                    ps_per_byte: if (8 * SEC) % l.rate == 0 { 8 * SEC / l.rate } else { 0 },
                    pipe: VecDeque::new(),
                    tx_bytes: 0,
                    tx_bytes_link_sample: 0,
                    rng: (l.loss > 0.0).then(|| rng::stream(sc.seed, "link_loss", gid)),
                });
            }
        }
        // Routing: for each switch and destination host, every neighbour one hop closer.
        let mut adj = vec![vec![]; n_nodes];
        for &(a, b, _) in &topo.links {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        let n_sw = n_nodes - n_hosts as usize;
        let mut routes = vec![(0u32, 0u32); n_sw * n_hosts as usize];
        let mut route_ports = Vec::new();
        for d in 0..n_hosts {
            let dist = topo.dist_to(&adj, d);
            for s in n_hosts as usize..n_nodes {
                let start = route_ports.len() as u32;
                if dist[s] != u32::MAX {
                    let node = &nodes[s];
                    for p in node.port0..node.port0 + node.nports {
                        let peer = ports[p as usize].peer as usize;
                        if dist[peer] != u32::MAX && dist[peer] + 1 == dist[s] {
                            route_ports.push(p);
                        }
                    }
                }
                routes[(s - n_hosts as usize) * n_hosts as usize + d as usize] =
                    (start, route_ports.len() as u32 - start);
            }
        }
        // Extra host delay, drawn once per host.
        let mut delay_rng = rng::stream(sc.seed, "extra_delay", 0);
        let mut host_delay = vec![0; n_hosts as usize];
        let delay = match &sc.host.extra_delay {
            Some(d) => Some((DelaySampler::new(d)?, d.per(), d.applies_to())),
            None => None,
        };
        if let Some((sampler, DelayPer::Host, _)) = &delay {
            for h in host_delay.iter_mut() {
                *h = sampler.draw(&mut delay_rng);
            }
        }
        let host_rate: Vec<u64> = (0..n_hosts).map(|h| ports[nodes[h as usize].port0 as usize].rate).collect();
        let info = HostInfo { n_hosts, host_rate, rack: topo.rack.clone(), rack_uplink: topo.rack_uplink.clone() };
        let mut tags = Tags::default();
        let sources = build_sources(&sc.traffic, sc.seed, &info, mtu as u64, &mut tags)?;
        let mut trace_tags = Vec::new();
        for (i, t) in sc.record.trace_tags.iter().enumerate() {
            match tags.0.iter().position(|x| x == t) {
                Some(id) if !t.is_empty() => trace_tags.push(id as u16),
                _ => {
                    let known: Vec<&str> = tags.0.iter().filter(|x| !x.is_empty()).map(|x| x.as_str()).collect();
                    return Err(ConfigError::new(
                        format!("record.trace_tags[{i}]"),
                        format!("no traffic has the tag `{t}`; tags in this scenario: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") }),
                    ));
                }
            }
        }
        // Records selection.
        let r = &sc.record;
        let switch_ports: Vec<u32> =
            (0..ports.len() as u32).filter(|&p| !nodes[ports[p as usize].node as usize].is_host).collect();
        let (sample_ports, busiest) = match &r.queues {
            QueueSel::All => (switch_ports, None),
            QueueSel::Busiest => (switch_ports, Some(r.busiest as usize)),
            QueueSel::List(list) => {
                let mut v = Vec::new();
                for (i, pr) in list.iter().enumerate() {
                    let n = topo.names.iter().position(|x| *x == pr.node).ok_or_else(|| {
                        ConfigError::new(format!("record.queues[{i}].node"), format!("no node named `{}`", pr.node))
                    })?;
                    if pr.port >= nodes[n].nports {
                        return Err(ConfigError::new(
                            format!("record.queues[{i}].port"),
                            format!("node `{}` has ports 0–{}", pr.node, nodes[n].nports - 1),
                        ));
                    }
                    v.push(nodes[n].port0 + pr.port);
                }
                (v, None)
            }
        };
        let queue_stream = match &r.queue_stream {
            Some(p) => {
                let f = std::fs::File::create(p).map_err(|e| {
                    ConfigError::new("record.queue_stream", format!("cannot create `{p}`: {e}"))
                })?;
                let mut w = std::io::BufWriter::new(f);
                writeln!(w, "{}", crate::records::queue_header()).ok();
                Some(w)
            }
            None => None,
        };
        let mut sim = Sim {
            now: 0,
            q: EventQueue::new(),
            arena: Arena::new(),
            nodes,
            ports,
            n_hosts,
            routes,
            route_ports,
            ecmp_packet: sw.ecmp == Ecmp::Packet,
            mtu,
            alpha: sw.alpha,
            tcp,
            host_delay,
            pias: sc.host.pias.as_ref().map(|p| p.thresholds.iter().map(|b| b.0.bytes(mtu as u64)).collect()).unwrap_or_default(),
            delay,
            delay_rng,
            slots: Vec::new(),
            free_slots: Vec::new(),
            sources,
            active_flows: 0,
            flow_slot: Vec::new(),
            outbox: Vec::with_capacity(64),
            seed: sc.seed,
            stop_time: sc.stop_time(),
            all_flows_done: sc.stop.all_flows_done,
            warmup: sc.warmup.map(|w| w.0).unwrap_or(0),
            rec: Records::default(),
            tags,
            sample_ports,
            sample_interval: r.queue_sample_interval.map(|d| d.0),
            link_interval: r.link_sample_interval.or(r.queue_sample_interval).map(|d| d.0),
            sample_until: r.sample_until.map(|d| d.0).unwrap_or(Time::MAX),
            link_primed: r.sample_from.0 == 0,
            busiest,
            queue_stream,
            trace_flows: r.trace_flows.iter().map(|&f| f as u32).collect(),
            trace_tags,
            trace_interval: r.trace_interval.0,
            events: 0,
            packet_hops: 0,
            config_hash: String::new(),
            name: sc.name.clone(),
        };
        sim.rec.meta.node_names = topo.names.clone();
        for i in 0..sim.sources.len() {
            if let Some(t) = sim.sources[i].peek() {
                sim.push(t, Ev::Flow(i as u32));
            }
        }
        let from = r.sample_from.0;
        if let Some(i) = sim.sample_interval {
            sim.push(from + i, Ev::Sample);
        }
        if let Some(i) = sim.link_interval {
            sim.push(if from > 0 { from } else { i }, Ev::LinkSample);
        }
        if !sim.trace_flows.is_empty() || !sim.trace_tags.is_empty() {
            sim.push(0, Ev::Trace);
        }
        Ok(sim)
    }

    #[inline]
    fn push(&mut self, t: Time, ev: Ev) {
        self.q.push(t, ev);
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The AQM of one queue, to read its state or change its parameters between `run_until` steps (a
    /// change applies to the next decision). `node` is a node name (`sw0`, `leaf3`, …).
    pub fn aqm_mut(&mut self, node: &str, port: u32, queue: u32) -> Option<&mut Aqm> {
        let n = self.rec.meta.node_names.iter().position(|x| x == node)?;
        let nd = &self.nodes[n];
        if port >= nd.nports {
            return None;
        }
        self.ports[(nd.port0 + port) as usize].queues.get_mut(queue as usize).map(|q| &mut q.aqm)
    }

    pub fn stop_time(&self) -> Time {
        self.stop_time
    }

    pub fn flows_started(&self) -> u64 {
        self.rec.flows.len() as u64
    }

    pub fn flows_finished(&self) -> u64 {
        self.rec.flows.len() as u64 - self.active_flows
    }

    fn done(&self) -> bool {
        self.all_flows_done && self.active_flows == 0 && self.sources.iter().all(|s| s.peek().is_none())
    }

    /// Run until `limit` (or the end of the scenario). Returns true when the scenario is over.
    pub fn run_until(&mut self, limit: Time) -> bool {
        let limit = limit.min(self.stop_time);
        loop {
            if self.done() {
                return true;
            }
            let Some((t, ev)) = self.q.pop_before(limit) else {
                if self.q.is_empty() {
                    self.now = self.now.max(limit.min(self.stop_time));
                    return self.now >= self.stop_time || self.sources.iter().all(|s| s.peek().is_none());
                }
                self.now = limit;
                return limit >= self.stop_time;
            };
            self.now = t;
            self.events += 1;
            self.handle(ev);
        }
    }

    /// Run to the end and return the records.
    pub fn run(mut self) -> Records {
        let wall = std::time::Instant::now();
        let cpu0 = cpu_seconds();
        let _ = self.run_until(Time::MAX);
        self.finish(wall.elapsed().as_secs_f64(), cpu_seconds() - cpu0)
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Wake(p) => {
                let port = &mut self.ports[p as usize];
                port.wake_pending = false;
                if port.pkts > 0 {
                    self.start_tx(p);
                }
            }
            Ev::Arrive(p) => self.arrive(p),
            Ev::Rto(slot) => self.timer_fired(slot, true),
            Ev::DelAck(slot) => self.timer_fired(slot, false),
            Ev::Flow(i) => {
                let f = self.sources[i as usize].pop();
                self.start_flow(f);
                if let Some(t) = self.sources[i as usize].peek() {
                    self.push(t.max(self.now), Ev::Flow(i));
                }
            }
            Ev::Release(pkt) => {
                let src = self.arena.get(pkt).src;
                let port = self.nodes[src as usize].port0;
                self.enqueue(port, pkt);
            }
            Ev::Sample => {
                self.sample_queues();
                let i = self.sample_interval.unwrap();
                if self.now + i <= self.sample_until {
                    self.push(self.now + i, Ev::Sample);
                }
            }
            Ev::LinkSample => {
                self.sample_links();
                let i = self.link_interval.unwrap();
                if self.now + i <= self.sample_until {
                    self.push(self.now + i, Ev::LinkSample);
                }
            }
            Ev::Trace => {
                self.sample_traces();
                self.push(self.now + self.trace_interval, Ev::Trace);
            }
        }
    }

    // ------------------------------------------------------------------ flows

    fn start_flow(&mut self, f: NewFlow) {
        let flow_id = self.rec.flows.len() as u32;
        let hash = (mix64(self.seed ^ ((f.src as u64) << 32 | f.dst as u64) ^ mix64(flow_id as u64 + 1)) >> 32) as u32;
        let rhash = (mix64(hash as u64 ^ 0x5EED) >> 32) as u32;
        let (dd, da) = match &self.delay {
            None => (0, 0),
            Some((sampler, per, applies_to)) => {
                let (ds, dr) = match per {
                    DelayPer::Flow => {
                        let d = sampler.draw(&mut self.delay_rng);
                        (d, d)
                    }
                    DelayPer::Host => (self.host_delay[f.src as usize], self.host_delay[f.dst as usize]),
                };
                (ds, if *applies_to == AppliesTo::All { dr } else { 0 })
            }
        };
        let (ideal, standalone, base_rtt) = self.ideal_fct(f.src, f.dst, hash, rhash, f.size, dd, da);
        self.rec.flows.push(FlowRow {
            flow_id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            tag: f.tag,
            start: self.now,
            finish: None,
            ideal_fct: ideal,
            standalone_fct: standalone,
            base_rtt,
            retransmits: 0,
            timeouts: 0,
        });
        self.active_flows += 1;
        if self.trace_tags.contains(&f.tag) {
            self.trace_flows.push(flow_id);
        }
        let conn = Conn::new(flow_id, f.size, self.tcp);
        let slot = Slot { conn, src: f.src, dst: f.dst, hash, rhash, prio: f.prio, delay_data: dd, delay_ack: da, live: true };
        let sid = if let Some(s) = self.free_slots.pop() {
            self.slots[s as usize] = slot;
            s
        } else {
            self.slots.push(slot);
            (self.slots.len() - 1) as u32
        };
        self.set_flow_slot(flow_id, sid);
        let mut out = std::mem::take(&mut self.outbox);
        self.slots[sid as usize].conn.start(self.now, &mut out);
        self.flush(sid, &mut out);
        self.outbox = out;
    }

    fn set_flow_slot(&mut self, flow: u32, slot: u32) {
        if !self.trace_flows.is_empty() {
            if self.flow_slot.len() <= flow as usize {
                self.flow_slot.resize(flow as usize + 1, u32::MAX);
            }
            self.flow_slot[flow as usize] = slot;
        }
    }

    /// Ideal FCT: the flow alone on the empty network with an unlimited window, on its actual path, with
    /// the engine's own serialisation arithmetic (rounded down) and the flow's extra host delay. Also the
    /// flow's base RTT (a full segment out and its ACK back on the empty network, extra host delays
    /// included) and HPCC's standalone FCT: base RTT + wire bytes at the bottleneck rate.
    #[allow(clippy::too_many_arguments)]
    fn ideal_fct(&self, src: u32, dst: u32, hash: u32, rhash: u32, size: u64, dd: Time, da: Time) -> (Time, Time, Time) {
        let fwd = self.path(src, dst, hash);
        let mss = self.tcp.mss as u64;
        let back = self.path(dst, src, rhash);
        let mut t0 = dd;
        if self.tcp.handshake {
            t0 += fwd.iter().map(|&(r, d)| tx_time_floor(ACK_BYTES as u64, r) + d).sum::<Time>();
            t0 += da + back.iter().map(|&(r, d)| tx_time_floor(ACK_BYTES as u64, r) + d).sum::<Time>();
        }
        let prop: Time = fwd.iter().map(|&(_, d)| d).sum();
        let bottleneck = fwd.iter().map(|&(r, _)| r).min().unwrap_or(1);
        let base_rtt = 2 * prop
            + dd
            + da
            + fwd.iter().map(|&(r, _)| tx_time_floor(self.mtu as u64, r)).sum::<Time>()
            + back.iter().map(|&(r, _)| tx_time_floor(ACK_BYTES as u64, r)).sum::<Time>();
        if size == u64::MAX {
            return (Time::MAX, Time::MAX, base_rtt);
        }
        let n = size.div_ceil(mss);
        let wire_total = size + n * HEADER_BYTES as u64;
        let standalone = base_rtt + tx_time_floor(wire_total, bottleneck);
        // Store-and-forward pipeline: packet j leaves hop h at max(arrival, previous departure) + ser.
        let mut free = vec![0 as Time; fwd.len()];
        let mut last_arrival = 0;
        for j in 0..n {
            let payload = if j + 1 == n { size - j * mss } else { mss };
            let wire = (payload + HEADER_BYTES as u64).max(ACK_BYTES as u64);
            let mut t = t0;
            for (h, &(r, d)) in fwd.iter().enumerate() {
                let start = t.max(free[h]);
                free[h] = start + tx_time_floor(wire, r);
                t = free[h] + d;
            }
            last_arrival = t;
        }
        (last_arrival, standalone, base_rtt)
    }

    /// (rate, delay) of every link on the path of a packet with this hash.
    fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<(u64, Time)> {
        let mut v = Vec::new();
        let mut p = self.nodes[src as usize].port0;
        loop {
            let port = &self.ports[p as usize];
            v.push((port.rate, port.delay));
            if port.peer == dst {
                break;
            }
            p = self.route(port.peer, dst, hash);
        }
        v
    }

    #[inline]
    fn route(&self, node: u32, dst: u32, hash: u32) -> u32 {
        let (start, len) = self.routes[(node - self.n_hosts) as usize * self.n_hosts as usize + dst as usize];
        if len == 1 {
            return self.route_ports[start as usize];
        }
        // Multiply-shift maps the 32-bit mixed hash onto [0, len) without a division.
        let h = (mix64(hash as u64 ^ self.nodes[node as usize].salt) >> 32) as u32;
        let k = ((h as u64 * len as u64) >> 32) as u32;
        self.route_ports[(start + k) as usize]
    }

    fn flush(&mut self, sid: u32, out: &mut Vec<Out>) {
        let slot = &self.slots[sid as usize];
        let (src, dst, hash, rhash, prio, dd, da, flow) =
            (slot.src, slot.dst, slot.hash, slot.rhash, slot.prio, slot.delay_data, slot.delay_ack, slot.conn.flow);
        let ect = if self.tcp.ecn { Ecn::Ect } else { Ecn::NotEct };
        for o in out.drain(..) {
            let (pkt, from, delay) = match o {
                Out::Seg { seq, len, flags: f, ts } => (
                    Packet {
                        conn: sid,
                        flow,
                        seq,
                        ack: 0,
                        ts,
                        enq: 0,
                        src,
                        dst,
                        hash,
                        size: if len == 0 { ACK_BYTES } else { (len + HEADER_BYTES).max(ACK_BYTES) },
                        payload: len,
                        win: 0,
                        flags: f,
                        ecn: ect,
                        // PIAS: demote by the bytes the flow sent before this segment.
                        prio: if self.pias.is_empty() { prio } else { self.pias.iter().filter(|&&t| seq >= t).count() as u8 },
                    },
                    src,
                    dd,
                ),
                Out::Ack { ack, flags: f, ts_echo, win } => (
                    Packet {
                        conn: sid,
                        flow,
                        seq: 0,
                        ack,
                        ts: ts_echo,
                        enq: 0,
                        src: dst,
                        dst: src,
                        hash: rhash,
                        size: ACK_BYTES,
                        payload: 0,
                        win,
                        flags: f,
                        ecn: Ecn::NotEct,
                        prio: if self.pias.is_empty() { prio } else { 0 },
                    },
                    dst,
                    da,
                ),
            };
            let size = pkt.size as u64;
            let id = self.arena.alloc(pkt);
            self.rec.meta.conservation.sent_packets += 1;
            self.rec.meta.conservation.sent_bytes += size;
            if delay > 0 {
                self.push(self.now + delay, Ev::Release(id));
            } else {
                let port = self.nodes[from as usize].port0;
                self.enqueue(port, id);
            }
        }
        self.sync_timers(sid);
    }

    fn sync_timers(&mut self, sid: u32) {
        let c = &mut self.slots[sid as usize].conn;
        let rto = c.rto_timer.needs_entry();
        let delack = c.delack_timer.needs_entry();
        if let Some(t) = rto {
            self.push(t, Ev::Rto(sid));
        }
        if let Some(t) = delack {
            self.push(t, Ev::DelAck(sid));
        }
    }

    fn timer_fired(&mut self, sid: u32, rto: bool) {
        let now = self.now;
        let Some(slot) = self.slots.get_mut(sid as usize).filter(|s| s.live) else { return };
        let timer = if rto { &mut slot.conn.rto_timer } else { &mut slot.conn.delack_timer };
        match timer.fire(now) {
            Fire::Ignore => {}
            Fire::Rearm(t) => self.push(t, if rto { Ev::Rto(sid) } else { Ev::DelAck(sid) }),
            Fire::Expired => {
                let mut out = std::mem::take(&mut self.outbox);
                let c = &mut self.slots[sid as usize].conn;
                if rto {
                    c.on_rto(now, &mut out);
                } else {
                    c.on_delack(now, &mut out);
                }
                self.flush(sid, &mut out);
                self.outbox = out;
            }
        }
    }

    // ------------------------------------------------------------------ packets

    fn drop_pkt(&mut self, id: PktId) {
        let size = self.arena.get(id).size as u64;
        self.rec.meta.conservation.dropped_packets += 1;
        self.rec.meta.conservation.dropped_bytes += size;
        self.arena.free(id);
    }

    /// Admission, AQM at enqueue, then queue at `port`.
    fn enqueue(&mut self, p: u32, id: PktId) {
        let now = self.now;
        let mtu = self.mtu;
        let pkt = self.arena.get_mut(id);
        let size = pkt.size as u64;
        let port = &mut self.ports[p as usize];
        let qi = (pkt.prio as usize).min(port.queues.len() - 1);
        let node = &mut self.nodes[port.node as usize];
        if !node.is_host {
            if port.bytes + size > port.limit {
                port.queues[qi].drops += 1;
                port.queues[qi].s_drops += 1;
                self.rec.meta.drops.port_buffer += 1;
                self.drop_pkt(id);
                return;
            }
            if node.buffer != u64::MAX {
                let free = node.buffer.saturating_sub(node.used);
                // Dynamic threshold: a queue may grow to alpha × (free shared buffer).
                if size > free || (port.queues[qi].bytes + size) as f64 > self.alpha * free as f64 {
                    port.queues[qi].drops += 1;
                    port.queues[qi].s_drops += 1;
                    self.rec.meta.drops.buffer += 1;
                    self.drop_pkt(id);
                    return;
                }
            }
            let q = &mut port.queues[qi];
            let ctx = QueueCtx {
                now,
                queue_bytes: q.bytes,
                queue_pkts: q.fifo.len() as u32,
                port_bytes: port.bytes,
                port_rate: port.rate,
                mtu,
            };
            let v = q.aqm.on_enqueue(&ctx, &mut node.rng);
            if q.apply(v, pkt) {
                self.rec.meta.drops.aqm += 1;
                self.drop_pkt(id);
                return;
            }
            node.used += size;
        }
        pkt.enq = now;
        let q = &mut port.queues[qi];
        q.fifo.push_back(id);
        q.bytes += size;
        port.bytes += size;
        port.pkts += 1;
        if !port.wake_pending {
            if port.busy_until <= now {
                self.start_tx(p);
            } else {
                port.wake_pending = true;
                let t = port.busy_until;
                self.push(t, Ev::Wake(p));
            }
        }
    }

    /// Pick the next packet by the scheduler, run the dequeue-time AQM, serialise it onto the link.
    fn start_tx(&mut self, p: u32) {
        let now = self.now;
        let mtu = self.mtu;
        if self.ports[p as usize].busy_until < now && !self.nodes[self.ports[p as usize].node as usize].is_host {
            // The link went idle with every queue empty (CoDel leaves its dropping state).
            for q in self.ports[p as usize].queues.iter_mut() {
                q.aqm.on_idle();
            }
        }
        // The queue the scheduler picked; after a dequeue-time drop the same queue is asked again at the
        // same instant (RFC 8289's dequeue loop), then the scheduler if it ran dry.
        let mut picked: Option<usize> = None;
        loop {
            let port = &mut self.ports[p as usize];
            if port.pkts == 0 {
                return;
            }
            let qi = match picked.filter(|&q| !port.queues[q].fifo.is_empty()) {
                Some(q) => q,
                None => match &mut port.sched {
                    Sched::Sp => port.queues.iter().position(|q| !q.fifo.is_empty()).unwrap(),
                    Sched::Dwrr { quantum, cur, fresh } => loop {
                        let q = &mut port.queues[*cur];
                        if q.fifo.is_empty() {
                            q.deficit = 0;
                            *cur = (*cur + 1) % quantum.len();
                            *fresh = true;
                            continue;
                        }
                        if *fresh {
                            q.deficit += quantum[*cur];
                            *fresh = false;
                        }
                        let head = self.arena.get(*q.fifo.front().unwrap()).size as u64;
                        if q.deficit >= head {
                            q.deficit -= head;
                            let i = *cur;
                            if q.fifo.len() == 1 {
                                q.deficit = 0;
                                *cur = (*cur + 1) % quantum.len();
                                *fresh = true;
                            }
                            break i;
                        }
                        *cur = (*cur + 1) % quantum.len();
                        *fresh = true;
                    },
                },
            };
            picked = Some(qi);
            let q = &mut port.queues[qi];
            let id = q.fifo.pop_front().unwrap();
            let pkt = self.arena.get_mut(id);
            let size = pkt.size as u64;
            q.bytes -= size;
            port.bytes -= size;
            port.pkts -= 1;
            let node = &mut self.nodes[port.node as usize];
            if !node.is_host {
                node.used -= size;
                let ctx = QueueCtx {
                    now,
                    queue_bytes: q.bytes,
                    queue_pkts: q.fifo.len() as u32,
                    port_bytes: port.bytes,
                    port_rate: port.rate,
                    mtu,
                };
                let v = q.aqm.on_dequeue(&ctx, now - pkt.enq, &mut node.rng);
                if q.fifo.is_empty() {
                    q.aqm.on_empty(now);
                }
                if q.apply(v, pkt) {
                    self.rec.meta.drops.aqm += 1;
                    self.drop_pkt(id);
                    continue;
                }
            }
            let tsq = if node.is_host && pkt.payload > 0 && pkt.src == port.node {
                Some((pkt.conn, pkt.flow, pkt.payload))
            } else {
                None
            };
            // Serialisation in whole picoseconds; the remainder is carried so long-run rate is exact.
            let ser = if port.ps_per_byte != 0 {
                size * port.ps_per_byte
            } else {
                let bits_ps = size as u128 * 8 * SEC as u128 + port.carry as u128;
                port.carry = (bits_ps % port.rate as u128) as u64;
                (bits_ps / port.rate as u128) as Time
            };
            port.busy_until = now + ser;
            port.tx_bytes += size;
            self.packet_hops += 1;
            let arrive = port.busy_until + port.delay;
            port.pipe.push_back((arrive, id));
            let first = port.pipe.len() == 1;
            let more = port.pkts > 0;
            let until = port.busy_until;
            if more {
                port.wake_pending = true;
            }
            if first {
                self.push(arrive, Ev::Arrive(p));
            }
            if more {
                self.push(until, Ev::Wake(p));
            }
            if let Some((sid, flow, payload)) = tsq {
                self.host_departure(sid, flow, payload);
            }
            return;
        }
    }

    fn arrive(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, id) = port.pipe.pop_front().unwrap();
        if let Some(&(t, _)) = port.pipe.front() {
            self.push(t, Ev::Arrive(p));
        }
        let port = &mut self.ports[p as usize];
        if let Some(rng) = port.rng.as_mut() {
            if rng::unit(rng) < port.loss {
                self.rec.meta.drops.link_loss += 1;
                self.drop_pkt(id);
                return;
            }
        }
        let node = port.peer;
        if self.nodes[node as usize].is_host {
            self.host_receive(node, id);
        } else {
            let pkt = self.arena.get(id);
            let spray = self.ecmp_packet;
            let hash = if spray { self.nodes[node as usize].rng_u32() } else { pkt.hash };
            let out = self.route(node, pkt.dst, hash);
            self.enqueue(out, id);
        }
    }

    /// A data packet left its sender's NIC: TSQ accounting, and sending what it held back.
    fn host_departure(&mut self, sid: u32, flow: u32, payload: u32) {
        let Some(slot) = self.slots.get_mut(sid as usize).filter(|s| s.live && s.conn.flow == flow) else { return };
        let mut out = std::mem::take(&mut self.outbox);
        slot.conn.on_host_departure(payload, self.now, &mut out);
        self.flush(sid, &mut out);
        self.outbox = out;
    }

    fn host_receive(&mut self, host: u32, id: PktId) {
        let pkt = *self.arena.get(id);
        self.rec.meta.conservation.delivered_packets += 1;
        self.rec.meta.conservation.delivered_bytes += pkt.size as u64;
        self.arena.free(id);
        debug_assert_eq!(pkt.dst, host);
        let sid = pkt.conn;
        let Some(slot) = self.slots.get_mut(sid as usize) else { return };
        if !slot.live || slot.conn.flow != pkt.flow {
            return; // a late packet of a connection that has closed
        }
        let now = self.now;
        let mut out = std::mem::take(&mut self.outbox);
        if host == slot.dst {
            if slot.conn.on_data(now, &pkt, &mut out) {
                let f = &mut self.rec.flows[pkt.flow as usize];
                f.finish = Some(now);
                self.active_flows -= 1;
            }
            self.flush(sid, &mut out);
        } else {
            slot.conn.on_ack(now, &pkt, &mut out);
            self.flush(sid, &mut out);
            let slot = &mut self.slots[sid as usize];
            if slot.conn.sender_done() && slot.conn.finished_at.is_some() {
                let f = &mut self.rec.flows[pkt.flow as usize];
                f.retransmits = slot.conn.retransmits;
                f.timeouts = slot.conn.timeouts;
                slot.live = false;
                slot.conn.rto_timer.deadline = None;
                slot.conn.delack_timer.deadline = None;
                if (pkt.flow as usize) < self.flow_slot.len() {
                    self.flow_slot[pkt.flow as usize] = u32::MAX;
                }
                self.free_slots.push(sid);
            }
        }
        self.outbox = out;
    }

    // ------------------------------------------------------------------ records

    fn sample_queues(&mut self) {
        let now = self.now;
        for &p in &self.sample_ports {
            let port = &mut self.ports[p as usize];
            for (qi, q) in port.queues.iter_mut().enumerate() {
                let row = QueueRow {
                    time: now,
                    node: port.node,
                    port: port.local,
                    queue: qi as u32,
                    bytes: q.bytes,
                    packets: q.fifo.len() as u32,
                    marks: q.s_marks,
                    drops: q.s_drops,
                };
                q.s_marks = 0;
                q.s_drops = 0;
                match self.queue_stream.as_mut() {
                    Some(w) => {
                        write_queue_row(w, &row, &self.rec.meta.node_names).ok();
                    }
                    None => self.rec.queues.push(row),
                }
            }
        }
    }

    fn sample_links(&mut self) {
        let now = self.now;
        let interval = self.link_interval.unwrap();
        let primed = std::mem::replace(&mut self.link_primed, true);
        for &p in &self.sample_ports {
            let port = &mut self.ports[p as usize];
            let tx = port.tx_bytes - port.tx_bytes_link_sample;
            port.tx_bytes_link_sample = port.tx_bytes;
            if !primed {
                continue;
            }
            let util = tx as f64 * 8.0 * SEC as f64 / (port.rate as f64 * interval as f64);
            self.rec.links.push(LinkRow { time: now, node: port.node, port: port.local, tx_bytes: tx, utilization: util });
        }
    }

    fn sample_traces(&mut self) {
        for i in 0..self.trace_flows.len() {
            let f = self.trace_flows[i];
            let Some(&sid) = self.flow_slot.get(f as usize) else { continue };
            if sid == u32::MAX {
                continue;
            }
            let c = &self.slots[sid as usize].conn;
            self.rec.flow_trace.push(TraceRow {
                time: self.now,
                flow_id: f,
                cwnd_bytes: c.w.cwnd,
                rate_bps: c.rate_bps(),
                alpha: c.cc.alpha(),
                srtt: c.srtt,
                delivered_bytes: c.rcv_nxt,
            });
        }
    }

    /// Close the run: fill counters of unfinished flows, conservation, metadata.
    pub fn finish(mut self, wall_s: f64, cpu_s: f64) -> Records {
        for s in self.slots.iter().filter(|s| s.live) {
            let f = &mut self.rec.flows[s.conn.flow as usize];
            f.retransmits = s.conn.retransmits;
            f.timeouts = s.conn.timeouts;
        }
        let mut in_flight = (0u64, 0u64);
        for port in &self.ports {
            for q in &port.queues {
                for &id in &q.fifo {
                    in_flight.0 += 1;
                    in_flight.1 += self.arena.get(id).size as u64;
                }
            }
            for &(_, id) in &port.pipe {
                in_flight.0 += 1;
                in_flight.1 += self.arena.get(id).size as u64;
            }
        }
        // Packets held by the extra NIC delay are in flight too.
        for (_, e) in self.q.iter() {
            if let Ev::Release(id) = *e {
                in_flight.0 += 1;
                in_flight.1 += self.arena.get(id).size as u64;
            }
        }
        if let Some(n) = self.busiest {
            let mut tx: Vec<(u64, u32, u32)> =
                self.sample_ports.iter().map(|&p| (self.ports[p as usize].tx_bytes, self.ports[p as usize].node, self.ports[p as usize].local)).collect();
            tx.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            let keep: Vec<(u32, u32)> = tx.iter().take(n).map(|&(_, a, b)| (a, b)).collect();
            self.rec.queues.retain(|r| keep.contains(&(r.node, r.port)));
            self.rec.links.retain(|r| keep.contains(&(r.node, r.port)));
        }
        if let Some(w) = self.queue_stream.as_mut() {
            w.flush().ok();
        }
        let done = self.done();
        let m = &mut self.rec.meta;
        m.conservation.in_flight_packets = in_flight.0;
        m.conservation.in_flight_bytes = in_flight.1;
        m.name = self.name.clone();
        m.seed = self.seed;
        m.config_hash = self.config_hash.clone();
        m.version = env!("CARGO_PKG_VERSION").to_string();
        m.events = self.events;
        m.packet_hops = self.packet_hops;
        m.wall_s = wall_s;
        m.cpu_s = cpu_s;
        m.sim_time_us = self.now as f64 / 1e6;
        m.flows_total = self.rec.flows.len() as u64;
        m.flows_finished = self.rec.flows.iter().filter(|f| f.finish.is_some()).count() as u64;
        m.peak_rss_bytes = peak_rss_bytes();
        m.warmup_us = self.warmup as f64 / 1e6;
        m.marks = self.ports.iter().flat_map(|p| p.queues.iter()).map(|q| q.marks).sum();
        m.stop_reason = if done { "all_flows_done".into() } else { "time".into() };
        m.tags = if self.tags.0.is_empty() { vec![String::new()] } else { self.tags.0.clone() };
        self.rec
    }
}

impl Node {
    #[inline]
    fn rng_u32(&mut self) -> u32 {
        use rand::RngCore;
        self.rng.next_u32()
    }
}

/// Draws extra host delays.
pub struct DelaySampler {
    kind: DelayKind,
}

enum DelayKind {
    Constant(Time),
    Uniform(Time, Time),
    Lognormal { median: f64, sigma: f64, min: Time, max: Time },
    Choice(Vec<Time>, Vec<f64>),
    Cdf(Vec<(f64, f64)>),
}

impl DelaySampler {
    pub fn new(cfg: &DelayCfg) -> Result<DelaySampler, ConfigError> {
        let kind = match cfg {
            DelayCfg::Constant { value, .. } => DelayKind::Constant(value.0),
            DelayCfg::Uniform { min, max, .. } => DelayKind::Uniform(min.0, max.0),
            DelayCfg::Lognormal { median, sigma, min, max, .. } => {
                DelayKind::Lognormal { median: median.0 as f64, sigma: *sigma, min: min.0, max: max.0 }
            }
            DelayCfg::Choice { values, weights, .. } => {
                let w = weights.clone().unwrap_or_else(|| vec![1.0; values.len()]);
                let total: f64 = w.iter().sum();
                let mut acc = 0.0;
                let cum = w.iter().map(|x| {
                    acc += x / total;
                    acc
                });
                DelayKind::Choice(values.iter().map(|v| v.0).collect(), cum.collect())
            }
            DelayCfg::Cdf { path, .. } => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError::new("host.extra_delay.path", format!("cannot read delay CDF `{path}`: {e}"))
                })?;
                let cdf = crate::workload::Cdf::parse(path, &text)
                    .map_err(|e| ConfigError::new("host.extra_delay.path", format!("delay CDF `{path}`: {e}")))?;
                DelayKind::Cdf(cdf.points)
            }
        };
        Ok(DelaySampler { kind })
    }

    pub fn draw(&self, r: &mut Rng) -> Time {
        use rand::Rng as _;
        match &self.kind {
            DelayKind::Constant(v) => *v,
            DelayKind::Uniform(a, b) => {
                if a == b {
                    *a
                } else {
                    r.gen_range(*a..=*b)
                }
            }
            DelayKind::Lognormal { median, sigma, min, max } => {
                // Box–Muller with libm so draws match across machines.
                let u1 = 1.0 - rng::unit(r);
                let u2 = rng::unit(r);
                let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2);
                let v = median * libm::exp(sigma * z);
                (v.max(0.0) as Time).clamp(*min, *max)
            }
            DelayKind::Choice(v, cum) => {
                let u = rng::unit(r);
                let i = cum.iter().position(|&c| u < c).unwrap_or(v.len() - 1);
                v[i]
            }
            DelayKind::Cdf(points) => {
                // Values in microseconds, linear interpolation.
                let u = rng::unit(r);
                let i = points[1..].iter().position(|p| u <= p.1).map(|i| i + 1).unwrap_or(points.len() - 1);
                let (x0, f0) = points[i - 1];
                let (x1, f1) = points[i];
                let x = if f1 > f0 { x0 + (x1 - x0) * (u - f0) / (f1 - f0) } else { x1 };
                (x * 1e6) as Time
            }
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
