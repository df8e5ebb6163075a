//! Building a run from a scenario: ports and switches from the topology, routes, hosts and their
//! transports, traffic, controllers and what to record.

use super::{Ev, Sim};
use crate::aqm::{Aqm, AqmCfg, NonEct};
use crate::config::{ConfigError, Ecmp, QueueSel, Scenario, SchedulerCfg};
use crate::control::Controllers;
use crate::engine::Engine;
use crate::host::delay::{DelayPer, DelaySampler};
use crate::host::nic::{FlowRr, Scheduling};
use crate::host::vswitch::{VSwitch, VSwitchCfg};
use crate::host::{Host, Hosts};
use crate::net::packet::Arena;
use crate::net::port::{Port, Queue, Sched};
use crate::net::pfc::{Ingress, Pfc, SwitchPfc};
use crate::net::switch::Switch;
use crate::net::topology::{host_distance, LinkSpec, Topo};
use crate::net::{Net, Owner};
use crate::records::{Recorder, Records};
use crate::rng::{self, mix64};
use crate::units::{Time, SEC};
use crate::workload::{self, HostInfo, Tags};
use std::io::Write;

/// The most flow record rows and connection slots reserved when a run is built.
const RESERVED_ROWS: u64 = 1 << 20;
const RESERVED_SLOTS: u64 = 1 << 16;

impl Sim {
    /// Build from TOML text (parse + validate + build). Errors name the field.
    pub fn from_toml(text: &str) -> Result<Sim, ConfigError> {
        let sc = Scenario::from_toml(text)?;
        let mut s = Sim::new(&sc)?;
        s.config_hash = crate::config::source::hash(text);
        Ok(s)
    }

    /// Build a scenario whose effective TOML text is `text` (for `meta.config_hash`; `config::source`
    /// makes both from the user's text and overrides, or from a mapping).
    pub fn from_scenario(sc: &Scenario, text: &str) -> Result<Sim, ConfigError> {
        let mut s = Sim::new(sc)?;
        s.config_hash = crate::config::source::hash(text);
        Ok(s)
    }

    pub fn new(sc: &Scenario) -> Result<Sim, ConfigError> {
        // Checked and counted before anything is built: what the engine's indexes cannot hold fails here.
        let est = super::estimate::Estimate::of(sc)?;
        let topo = Topo::build(&sc.topology)?;
        let (transports, transport_of) = sc.transports()?;
        workload::check_carriers(&sc.traffic, &transports, &transport_of)?;
        let net = build_net(sc, &topo)?;
        let n_hosts = topo.n_hosts;
        let hosts = build_hosts(sc, &net, transports)?;
        let host_rate: Vec<u64> = (0..n_hosts).map(|h| net.ports[net.nic(h) as usize].rate).collect();
        let info = HostInfo { n_hosts, host_rate, rack: topo.rack.clone(), rack_uplink: topo.rack_uplink.clone() };
        let mut tags = Tags::default();
        let work = workload::build(&sc.traffic, sc.seed, &info, sc.switch.mtu as u64, &mut tags, &transport_of)?;
        let obs = build_recorder(sc, &topo, &net, tags)?;
        let ctl = Controllers::build(&sc.switch.controller, &net, &topo.names, sc.record.controller_steps)?;
        // The timing wheel covers twice the longest link (an arrival is pushed one link delay plus a
        // serialisation ahead), or its whole 67 µs where hosts add their own delays.
        let longest = net.ports.iter().map(|p| p.delay).max().unwrap_or(0);
        let span = if sc.host.extra_delay.is_some() { Time::MAX } else { longest.saturating_mul(2) };
        let mut sim = Sim {
            eng: Engine::with_span(span),
            arena: Arena::new(),
            int: Default::default(),
            net,
            hosts,
            work,
            ctl,
            obs,
            rec: Records::default(),
            packet_hops: 0,
            seed: sc.seed,
            stop_time: sc.stop_time(),
            all_flows_done: sc.stop.all_flows_done,
            pause: false,
            watch: sc.stop.all_flows_done,
            failure: None,
            halted: Vec::new(),
            warmup: sc.warmup.map(|w| w.0).unwrap_or(0),
            config_hash: String::new(),
            interrupted: false,
            name: sc.name.clone(),
        };
        // One record row per flow and the connections the estimate counts open at once, reserved ahead:
        // grown by doubling, their earlier copies stay in the allocator's heap (benchmark 1's peak data
        // 2.91 → 2.42 MB, benchmark 2's 2.84 → 2.69 MB). Only pages written count in a run's memory; the
        // caps keep a run stopped early from reserving more address space than it may use.
        sim.rec.flows.reserve(sim.work.flows.min(RESERVED_ROWS) as usize);
        sim.hosts.slots.reserve(est.open_flows.min(sim.work.flows).min(RESERVED_SLOTS) as usize);
        sim.rec.meta.node_names = topo.names.clone();
        sim.rec.meta.transports = sim.hosts.transports.iter().map(|p| p.label()).collect();
        for i in 0..sim.work.sources.len() {
            if let Some(t) = sim.work.sources[i].peek() {
                sim.push(t, Ev::Flow(i as u32));
            }
        }
        let r = &sc.record;
        let from = r.sample_from.0;
        if let Some(i) = sim.obs.sample_interval {
            sim.push(from + i, Ev::Sample);
        }
        if let Some(i) = sim.obs.link_interval {
            sim.push(if from > 0 { from } else { i }, Ev::LinkSample);
        }
        if !sim.obs.trace_flows.is_empty() || !sim.obs.trace_tags.is_empty() {
            sim.push(0, Ev::Trace);
        }
        sim.start_controllers();
        Ok(sim)
    }

    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }
}

/// Ports per node in the order its links are listed, switches, and every route.
fn build_net(sc: &Scenario, topo: &Topo) -> Result<Net, ConfigError> {
    let sw = &sc.switch;
    let mtu = sw.mtu;
    let n_nodes = topo.n_nodes() as usize;
    let n_hosts = topo.n_hosts;
    let owner = |n: usize| if (n as u32) < n_hosts { Owner::Host(n as u32) } else { Owner::Switch(n as u32 - n_hosts) };
    let mut node_links: Vec<Vec<(u32, LinkSpec)>> = vec![vec![]; n_nodes];
    for &(a, b, l) in &topo.links {
        node_links[a as usize].push((b, l));
        node_links[b as usize].push((a, l));
    }
    let buffer = sw.buffer.map(|b| b.0.bytes(mtu as u64)).unwrap_or(u64::MAX);
    let port_limit = sw.port_buffer.map(|b| b.0.bytes(mtu as u64)).unwrap_or(u64::MAX);
    let mut switches = Vec::new();
    let mut node_ports = Vec::with_capacity(n_nodes);
    let mut ports: Vec<Port> = Vec::new();
    for (n, links) in node_links.iter().enumerate() {
        let own = owner(n);
        if let Owner::Switch(_) = own {
            switches.push(Switch {
                buffer,
                used: 0,
                salt: mix64(sc.seed ^ 0xECE0 ^ mix64(n as u64)),
                rng: rng::stream(sc.seed, "switch", n as u64),
                pfc: None,
            });
        }
        node_ports.push((ports.len() as u32, links.len() as u32));
        for (i, &(peer, l)) in links.iter().enumerate() {
            // Hosts get the same queues as switches (PIAS tags packets at the NIC too), drop-tail.
            let nq = sw.queues as usize;
            let queues = (0..nq)
                .map(|q| {
                    let cfg = match own {
                        Owner::Host(_) => AqmCfg::default(),
                        Owner::Switch(_) => sw.aqm.get(q),
                    };
                    Queue::new(Aqm::from_cfg(&cfg, mtu as u64), cfg.non_ect() == NonEct::Drop)
                })
                .collect();
            let sched = match (own, &sw.scheduler) {
                (Owner::Host(_), _) if sc.host.nic.scheduling == Scheduling::RoundRobin => Sched::FlowRr(Box::<FlowRr>::default()),
                (_, SchedulerCfg::Sp {}) => Sched::Sp,
                (_, SchedulerCfg::Dwrr { weights }) => Sched::Dwrr {
                    quantum: weights.iter().map(|&w| w as u64 * mtu as u64).collect(),
                    cur: 0,
                    fresh: true,
                },
            };
            let gid = ports.len() as u64;
            let direct = matches!(sched, Sched::Sp) && sw.credit.is_none();
            ports.push(Port {
                owner: own,
                node: n as u32,
                local: i as u32,
                peer,
                peer_owner: owner(peer as usize),
                rate: l.rate,
                delay: l.delay,
                loss: l.loss,
                queues,
                sched,
                direct,
                bytes: 0,
                pkts: 0,
                limit: if let Owner::Host(_) = own { u64::MAX } else { port_limit },
                busy_until: 0,
                wake_pending: false,
                carry: 0,
                ps_per_byte: if (8 * SEC) % l.rate == 0 { 8 * SEC / l.rate } else { 0 },
                pipe: Default::default(),
                tx_bytes: 0,
                tx_bytes_link_sample: 0,
                rng: (l.loss > 0.0).then(|| rng::stream(sc.seed, "link_loss", gid)),
                paused: 0,
                ctl: 0,
                rev: u32::MAX,
                fc: None,
            });
        }
    }
    // Routing: for each switch and destination host, every neighbour one hop closer.
    let adj = topo.adjacency();
    let n_sw = n_nodes - n_hosts as usize;
    let mut routes = vec![(0u32, 0u32); n_sw * n_hosts as usize];
    let mut route_ports = Vec::new();
    for d in 0..n_hosts {
        let dist = topo.dist_to(&adj, d);
        for s in n_hosts as usize..n_nodes {
            let start = route_ports.len() as u32;
            if dist[s] != u32::MAX {
                let (p0, np) = node_ports[s];
                for p in p0..p0 + np {
                    let peer = ports[p as usize].peer as usize;
                    if dist[peer] != u32::MAX && dist[peer] + 1 == dist[s] {
                        route_ports.push(p);
                    }
                }
            }
            routes[(s - n_hosts as usize) * n_hosts as usize + d as usize] = (start, route_ports.len() as u32 - start);
        }
    }
    if sw.ecmp == Ecmp::DModK {
        d_mod_k(&mut routes, &adj, n_hosts);
    }
    // Each link's two directions: the j-th link a node is on is its port j.
    let mut next: Vec<u32> = node_ports.iter().map(|&(p0, _)| p0).collect();
    for &(a, b, _) in &topo.links {
        let (pa, pb) = (next[a as usize], next[b as usize]);
        next[a as usize] += 1;
        next[b as usize] += 1;
        ports[pa as usize].rev = pb;
        ports[pb as usize].rev = pa;
    }
    let pfc = sw.pfc.as_ref().map(|c| Box::new(c.resolve(mtu, sc.record.pauses)));
    if let Some(pfc) = &pfc {
        lossless_buffers(pfc, &mut switches, &ports, &node_ports, n_hosts, topo, buffer)?;
    }
    let credit = sw.credit.as_ref().map(|c| Box::new(c.resolve(mtu)));
    if let Some(c) = &credit {
        for port in ports.iter_mut() {
            let n = port.queues.len();
            port.fc_mut().credits[..n].fill(c.blocks);
        }
    }
    let hot_routes = crate::net::hot_routes(&routes, &route_ports);
    let prefetch_below = if ports.len() >= crate::net::PREFETCH_PORTS { ports.len() as u32 } else { 0 };
    Ok(Net {
        ports: ports.into(),
        switches: switches.into(),
        n_hosts,
        node_ports,
        route_ports: route_ports.into(),
        hot_routes: hot_routes.into(),
        ecmp_packet: sw.ecmp == Ecmp::Packet,
        prefetch_below,
        mtu,
        alpha: sw.alpha,
        pfc,
        credit,
        deadlocks: Vec::new(),
    })
}

/// D-mod-k: keep one port of every multi-port route. A switch's tier is its distance from the nearest host
/// less one (edge switches 0); its up ports lead to the tier above. A switch at tier t takes, toward host d,
/// the port (d / D_t) mod k of its k equal-cost ports, where D_0 = 1 and D_t = D_{t−1} × (up ports of a
/// switch at tier t − 1): on a k-ary fat-tree the edge picks by d mod k/2 and the aggregation by
/// (d / (k/2)) mod k/2, the textbook rule; on a leaf-spine the leaf picks spine d mod spines. Routes with
/// one port are kept as they are.
fn d_mod_k(routes: &mut [(u32, u32)], adj: &[Vec<u32>], n_hosts: u32) {
    let n_nodes = adj.len();
    let tier = host_distance(n_nodes, n_hosts as usize, |n| adj[n].iter().map(|&m| m as usize));
    // Hosts are tier 0 in `tier`, so a switch's own tier is tier − 1; order switches by it.
    let up = |s: usize| adj[s].iter().filter(|&&m| m >= n_hosts && tier[m as usize] > tier[s]).count() as u64;
    let mut order: Vec<usize> = (n_hosts as usize..n_nodes).filter(|&s| tier[s] != u32::MAX).collect();
    order.sort_by_key(|&s| tier[s]);
    let mut div = vec![1u64; n_nodes];
    for &s in &order {
        let below = adj[s].iter().map(|&m| m as usize).filter(|&m| m >= n_hosts as usize && tier[m] + 1 == tier[s]);
        div[s] = below.map(|c| div[c].saturating_mul(up(c).max(1))).max().unwrap_or(1);
    }
    let n_sw = n_nodes - n_hosts as usize;
    for s in 0..n_sw {
        for d in 0..n_hosts as usize {
            let r = &mut routes[s * n_hosts as usize + d];
            if r.1 > 1 {
                let k = (d as u64 / div[n_hosts as usize + s]) % r.1 as u64;
                *r = (r.0 + k as u32, 1);
            }
        }
    }
}

/// Every switch's lossless ingress counters and headrooms, and its shared pool: the buffer less every
/// (port, lossless priority)'s reserve and headroom.
fn lossless_buffers(
    pfc: &Pfc,
    switches: &mut [Switch],
    ports: &[Port],
    node_ports: &[(u32, u32)],
    n_hosts: u32,
    topo: &Topo,
    buffer: u64,
) -> Result<(), ConfigError> {
    for (s, sw) in switches.iter_mut().enumerate() {
        let (p0, np) = node_ports[n_hosts as usize + s];
        let headroom: Vec<u64> = (p0..p0 + np).map(|p| pfc.headroom_of(ports[p as usize].rate, ports[p as usize].delay)).collect();
        let kept: u64 = headroom.iter().map(|h| (h + pfc.reserve) * pfc.n as u64).sum();
        if buffer != u64::MAX {
            if kept >= buffer {
                let msg = format!(
                    "{}'s lossless reserve and headroom take {kept} B of its {buffer} B buffer ({np} ports × {} lossless priorities), leaving no shared pool; raise switch.buffer or lower switch.pfc.headroom / reserve",
                    topo.names[n_hosts as usize + s],
                    pfc.n
                );
                return Err(ConfigError::new("switch.buffer", msg));
            }
            sw.buffer = buffer - kept;
        }
        let ingress = headroom.iter().flat_map(|&cap| std::iter::repeat_n(Ingress { cap, ..Default::default() }, pfc.n)).collect();
        sw.pfc = Some(SwitchPfc { ingress, n: pfc.n });
    }
    Ok(())
}

fn build_hosts(sc: &Scenario, net: &Net, mut transports: Vec<crate::transport::Params>) -> Result<Hosts, ConfigError> {
    let mtu = sc.switch.mtu as u64;
    if let Some(VSwitchCfg::Acdc(_)) = &sc.host.vswitch {
        // AC/DC scales the windows it writes by the shift each receiver announced in its SYN-ACK.
        let overrides = sc.traffic.iter().enumerate().filter(|(_, t)| t.transport.is_some());
        let fields = std::iter::once("host.transport".to_string()).chain(overrides.map(|(i, _)| format!("traffic[{i}].transport")));
        for (p, field) in transports.iter().zip(fields) {
            if !p.handshake() {
                let msg = "AC/DC (`host.vswitch.kind = \"acdc\"`) learns each connection's window scale from its SYN exchange: set `handshake = true`";
                return Err(ConfigError::new(format!("{field}.handshake"), msg));
            }
        }
    }
    // Rate-based transports (RDMA) check their rates against the host links they will start at.
    let slowest = (0..net.n_hosts).map(|h| net.ports[net.nic(h) as usize].rate).min().unwrap_or(u64::MAX);
    let overrides = sc.traffic.iter().enumerate().filter(|(_, t)| t.transport.is_some());
    let fields = std::iter::once("host.transport".to_string()).chain(overrides.map(|(i, _)| format!("traffic[{i}].transport")));
    let mut paths = None;
    for (p, field) in transports.iter_mut().zip(fields) {
        p.check_line_rate(&field, slowest)?;
        p.at_topology(&field, &mut || *paths.get_or_insert_with(|| net.longest_paths()))?;
    }
    // Extra host delay, drawn once per host.
    let mut delay_rng = rng::stream(sc.seed, "extra_delay", 0);
    let delay = match &sc.host.extra_delay {
        Some(d) => Some((DelaySampler::new(d)?, d.per(), d.applies_to())),
        None => None,
    };
    let mut hosts = Vec::with_capacity(net.n_hosts as usize);
    for _ in 0..net.n_hosts {
        let d = match &delay {
            Some((sampler, DelayPer::Host, _)) => sampler.draw(&mut delay_rng),
            _ => 0,
        };
        let vswitch = match &sc.host.vswitch {
            Some(c) => Some(VSwitch::new(c, sc.switch.mtu)?),
            None => None,
        };
        hosts.push(Host { delay: d, vswitch });
    }
    Ok(Hosts {
        hosts: hosts.into(),
        transports,
        pias: sc.host.pias.as_ref().map(|p| p.thresholds.iter().map(|b| b.0.bytes(mtu)).collect()).unwrap_or_default(),
        delay,
        delay_rng,
        slots: Default::default(),
        free_slots: Vec::new(),
        flow_slot: Vec::new(),
        outbox: Vec::with_capacity(64),
        shim_out: Default::default(),
        shims: sc.host.vswitch.is_some(),
        rx: rx_path(sc, net)?,
        slow_rx: net.pfc.is_some() || net.credit.is_some() || sc.host.nic.rx_rate.is_some() || sc.host.vswitch.is_some(),
        persistent: Default::default(),
    })
}

/// Receive buffers of hosts slower than their links (`host.nic.rx_rate`), with XOFF at the buffer less
/// the NIC link's PFC headroom.
fn rx_path(sc: &Scenario, net: &Net) -> Result<Option<crate::host::rx::RxPath>, ConfigError> {
    let nic = &sc.host.nic;
    let Some(rate) = nic.rx_rate else { return Ok(None) };
    let mtu = sc.switch.mtu as u64;
    let capacity = nic.rx_capacity(mtu);
    let (mut xoff, mut xon) = (u64::MAX, u64::MAX);
    if let Some(pfc) = &net.pfc {
        // The most headroom any host's link needs.
        let headroom = (0..net.n_hosts).map(|h| {
            let p = &net.ports[net.nic(h) as usize];
            pfc.headroom_of(p.rate, p.delay)
        });
        let headroom = headroom.max().unwrap_or(0);
        if capacity < headroom + mtu {
            let msg = format!("with PFC the receive buffer needs the link's headroom ({headroom} B) and one MTU above it: at least {} B", headroom + mtu);
            return Err(ConfigError::new("host.nic.rx_buffer", msg));
        }
        xoff = capacity - headroom;
        xon = xoff.saturating_sub(pfc.resume_offset);
    }
    let hosts = (0..net.n_hosts).map(|_| Default::default()).collect();
    Ok(Some(crate::host::rx::RxPath { rate: rate.0, capacity, xoff, xon, hosts }))
}

fn build_recorder(sc: &Scenario, topo: &Topo, net: &Net, tags: Tags) -> Result<Recorder, ConfigError> {
    let r = &sc.record;
    let mut trace_tags = Vec::new();
    for (i, t) in r.trace_tags.iter().enumerate() {
        match tags.0.iter().position(|x| x == t) {
            Some(id) if !t.is_empty() => trace_tags.push(id as u16),
            _ => {
                let known: Vec<&str> = tags.0.iter().filter(|x| !x.is_empty()).map(|x| x.as_str()).collect();
                return Err(ConfigError::new(
                    format!("record.trace_tags[{i}]"),
                    format!(
                        "no traffic has the tag `{t}`; tags in this scenario: {}",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                ));
            }
        }
    }
    let (sample_ports, busiest) = match &r.queues {
        QueueSel::All => (net.switch_ports(), None),
        QueueSel::Busiest => (net.switch_ports(), Some(r.busiest as usize)),
        QueueSel::List(list) => {
            let mut v = Vec::new();
            for (i, pr) in list.iter().enumerate() {
                let n = topo.names.iter().position(|x| *x == pr.node).ok_or_else(|| {
                    ConfigError::new(format!("record.queues[{i}].node"), format!("no node named `{}`", pr.node))
                })?;
                let (p0, np) = net.node_ports[n];
                if pr.port >= np {
                    return Err(ConfigError::new(format!("record.queues[{i}].port"), format!("node `{}` has ports 0–{}", pr.node, np - 1)));
                }
                v.push(p0 + pr.port);
            }
            (v, None)
        }
    };
    let queue_stream = match &r.queue_stream {
        Some(p) => {
            let f = std::fs::File::create(p)
                .map_err(|e| ConfigError::new("record.queue_stream", format!("cannot create `{p}`: {e}")))?;
            let mut w = std::io::BufWriter::new(f);
            writeln!(w, "{}", crate::records::queue_header()).ok();
            Some(w)
        }
        None => None,
    };
    Ok(Recorder {
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
        rtt_samples: r.rtt_samples,
        rtt_traced: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::Sim;

    /// The wheel covers twice the longest link, in 2^14 to 2^16 slots of 1.024 ns, and all of its 67 µs
    /// where hosts add their own delays.
    #[test]
    fn the_wheel_covers_twice_the_longest_link() {
        let sim = |link: &str, host: &str| {
            let text = format!(
                "seed = 1\nstop = {{ time = \"1us\" }}\n[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ rate = \"10Gbps\", delay = \"{link}\" }}\n{host}"
            );
            Sim::from_toml(&text).unwrap().eng.wheel_slots()
        };
        assert_eq!(sim("1us", ""), 1 << 14);
        assert_eq!(sim("8us", ""), 1 << 14); // 16 µs: 15625 slots
        assert_eq!(sim("9us", ""), 1 << 15); // 18 µs: 17578 slots
        assert_eq!(sim("20us", ""), 1 << 16);
        assert_eq!(sim("1us", "[host]\nextra_delay = { kind = \"constant\", value = \"2us\" }"), 1 << 16);
    }

    /// Prefetching is for networks of at least `PREFETCH_PORTS` ports, and then covers every port: a
    /// 32-host star has 64, a 31-host star 62.
    #[test]
    fn only_a_network_of_64_ports_or_more_prefetches() {
        let below = |hosts: u32| {
            let text = format!("seed = 1\nstop = {{ time = \"1us\" }}\n[topology]\nkind = \"star\"\nhosts = {hosts}\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n");
            let sim = Sim::from_toml(&text).unwrap();
            (sim.net.prefetch_below, sim.net.ports.len() as u32)
        };
        assert_eq!(below(31), (0, 62));
        assert_eq!(below(32), (64, 64));
    }

    /// A run reserves one flow record row per flow its traffic will start and a connection slot per
    /// connection the estimate counts open at once (grown by doubling, they would leave their earlier
    /// copies in the allocator's heap), within `RESERVED_ROWS` and the flows there are.
    #[test]
    fn a_run_reserves_a_record_row_per_flow() {
        let rows = |flows: u64| {
            let text = format!(
                "seed = 1\nstop = {{ time = \"1us\" }}\n[topology]\nkind = \"star\"\nhosts = 4\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
                 [[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = {flows}\n"
            );
            let sim = Sim::from_toml(&text).unwrap();
            assert_eq!(sim.work.flows, flows);
            (sim.rec.flows.capacity() as u64, sim.hosts.slots.capacity() as u64)
        };
        // The estimate counts 16 connections open at once per Poisson sender: 64 for 4 hosts.
        let (r, s) = rows(3000);
        assert!((3000..3100).contains(&r) && (64..100).contains(&s), "{r} rows, {s} slots");
        let (r, s) = rows(3 << 20);
        assert!((super::RESERVED_ROWS..super::RESERVED_ROWS + 100).contains(&r) && (64..100).contains(&s), "{r} rows, {s} slots");
        let (r, s) = rows(10);
        assert!((10..20).contains(&r) && (10..20).contains(&s), "{r} rows, {s} slots");
    }
}
