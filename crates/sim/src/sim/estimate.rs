//! What a scenario will hold, counted from its config before anything is built: hosts, switches, ports,
//! routes, flows, samples, packets and events, and the bytes they take (from `size_of` of the real
//! types). `Sim::new` refuses what the engine's 32-bit indexes cannot hold and what would take hours to
//! route; the front ends (the `dcnlab` CLI, `dcnlab-sim`) compare the bytes with the memory the machine
//! has before they run anything. Every count is computed in 128 bits, so no input wraps it.

use super::Ev;
use crate::config::{ConfigError, QueueSel, Scenario, SchedulerCfg, Topology, TopologyFile};
use crate::host::{Host, Slot};
use crate::net::packet::Packet;
use crate::net::port::{FlowCtl, Port, Queue};
use crate::net::switch::Switch;
use crate::net::topology::LinkSpec;
use crate::records::{Column, FlowRow, LinkRow, QueueRow, TraceRow, Ty, TABLES};
use crate::transport::MAX_TIMERS;
use crate::units::{Time, MS, SEC};
use crate::workload::{Cdf, NewFlow, TrafficKind, MAX_FLOWS};
use std::mem::size_of;

/// Routing searches from every host over every node and link: more steps than this is hours of set-up.
pub const MAX_ROUTING_STEPS: u128 = 1 << 40;
/// The process itself (code, allocator, stacks) before the scenario's structures, measured on an empty run.
const PROCESS_BYTES: u128 = 4 << 20;

/// The counts and bytes of one scenario (see the module comment).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    pub hosts: u64,
    pub switches: u64,
    pub links: u64,
    pub ports: u64,
    /// Next hops kept over every (switch, destination host).
    pub route_next_hops: u64,
    /// Steps of the routing searches (one per host over every node and link).
    pub routing_steps: u64,
    /// Flows the traffic defines.
    pub flows: u64,
    /// Connections open at once (an incast burst, a closed-loop limit, 16 per Poisson sender).
    pub open_flows: u64,
    pub queue_samples: u64,
    pub link_samples: u64,
    pub trace_samples: u64,
    /// Packets alive at once (buffers full, links full), at least the arena's first block.
    pub packets: u64,
    /// Pending events at once.
    pub events: u64,
    /// The simulated time the samples cover: the stop time, or for `all_flows_done` the expected end.
    pub duration: Time,
    /// Bytes by structure, largest first.
    pub parts: Vec<(&'static str, u64)>,
    /// Every part added up.
    pub bytes: u64,
}

fn sat(v: u128) -> u64 {
    v.min(u64::MAX as u128) as u64
}

/// A vector grown by pushing holds the next power of two.
fn grown(n: u128) -> u128 {
    if n <= 4 {
        4
    } else {
        n.checked_next_power_of_two().unwrap_or(n)
    }
}

/// The shape of a topology: hosts, switches, links, (switch, host) next hops, the host link's rate and
/// every link's bandwidth-delay product.
struct Shape {
    hosts: u128,
    switches: u128,
    links: u128,
    next_hops: u128,
    host_rate: Option<u64>,
    /// (rate × delay) summed over every link, in bit·ps.
    bdp: u128,
}

fn shape(t: &Topology) -> Result<Shape, ConfigError> {
    let bd = |r: u64, d: Time| r as u128 * d as u128;
    Ok(match t {
        Topology::Star { hosts, link } => {
            let h = *hosts as u128;
            let bdp = h * bd(link.rate.0, link.delay.0);
            Shape { hosts: h, switches: 1, links: h, next_hops: h, host_rate: Some(link.rate.0), bdp }
        }
        Topology::Dumbbell { left, right, host_link, bottleneck_link: b } => {
            let h = *left as u128 + *right as u128;
            let bdp = h * bd(host_link.rate.0, host_link.delay.0) + bd(b.rate.0, b.delay.0);
            Shape { hosts: h, switches: 2, links: h + 1, next_hops: 2 * h, host_rate: Some(host_link.rate.0), bdp }
        }
        Topology::LeafSpine { spines, leaves, hosts_per_leaf, host_link, fabric_link: f } => {
            let (s, l, k) = (*spines as u128, *leaves as u128, *hosts_per_leaf as u128);
            let h = l * k;
            // A leaf: one next hop to its own hosts, every spine toward the others; a spine: one.
            let next_hops = l * (k + h.saturating_sub(k) * s) + s * h;
            let bdp = h * bd(host_link.rate.0, host_link.delay.0) + l * s * bd(f.rate.0, f.delay.0);
            Shape { hosts: h, switches: l + s, links: h + l * s, next_hops, host_rate: Some(host_link.rate.0), bdp }
        }
        Topology::FatTree { k, link } => {
            let (k, half) = (*k as u128, *k as u128 / 2);
            let h = k * half * half;
            let (edges, aggs, cores) = (k * half, k * half, half * half);
            // Edge: one next hop to its rack, k/2 up otherwise; aggregation: one down into its pod, k/2
            // up otherwise; core: one.
            let next_hops = edges * (half + (h - half) * half) + aggs * (half * half + (h - half * half) * half) + cores * h;
            let links = h + 2 * k * half * half;
            let bdp = links * bd(link.rate.0, link.delay.0);
            Shape { hosts: h, switches: edges + aggs + cores, links, next_hops, host_rate: Some(link.rate.0), bdp }
        }
        Topology::File { path } => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| ConfigError::new("topology.path", format!("cannot read topology file `{path}`: {e}")))?;
            let f: TopologyFile = toml::from_str(&text)
                .map_err(|e| ConfigError::new("topology.path", format!("topology file `{path}`: {}", e.message())))?;
            let (h, links) = (f.hosts as u128, f.links.len() as u128);
            let bdp = f.links.iter().map(|l| bd(l.rate.0, l.delay.0)).sum();
            // At most every switch port toward every host.
            let next_hops = 2 * links * h;
            Shape { hosts: h, switches: f.switches as u128, links, next_hops, host_rate: None, bdp }
        }
    })
}

/// The field a topology too large for the engine is fixed in.
fn topology_field(t: &Topology) -> &'static str {
    match t {
        Topology::Star { .. } => "topology.hosts",
        Topology::Dumbbell { .. } => "topology.left",
        Topology::LeafSpine { .. } => "topology.hosts_per_leaf",
        Topology::FatTree { .. } => "topology.k",
        Topology::File { .. } => "topology.path",
    }
}

/// The entry's field that sets its flow count.
fn count_field(kind: &TrafficKind) -> &'static str {
    match kind {
        TrafficKind::Poisson(_) => "flows",
        TrafficKind::Incast(_) => "repeat",
        TrafficKind::Flows(_) => "list",
        TrafficKind::File(_) => "path",
        TrafficKind::Stride(_) | TrafficKind::Permutation(_) => "kind",
        TrafficKind::Shuffle(_) => "hosts",
        TrafficKind::ClosedLoop(_) => "messages",
        TrafficKind::Storage(_) => "ios",
        TrafficKind::Training(_) => "iterations",
    }
}

/// Data lines of a flow file (a header or HPCC's count line counted too: an estimate).
fn file_rows(path: &str) -> u128 {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else { return 0 };
    std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        })
        .count() as u128
}

/// When the last flow of an entry is expected to start (ps), if its config tells.
fn last_start(kind: &TrafficKind, host_rate: Option<u64>, hosts: u128) -> Option<u128> {
    match kind {
        TrafficKind::Poisson(c) => {
            // λ = load × capacity / (8 × mean size), capacity = the smaller side's host links.
            let mean = Cdf::load(&c.sizes, "").ok()?.mean();
            let n = |s: &Option<crate::workload::HostSet>| s.as_ref().map_or(hosts, |s| s.0.len() as u128);
            let cap = host_rate? as f64 * n(&c.src).min(n(&c.dst)) as f64;
            let gap = 8.0 * mean / (c.load * cap) * SEC as f64;
            Some(c.start.0 as u128 + (c.flows as f64 * gap).min(u64::MAX as f64) as u128)
        }
        TrafficKind::Incast(c) => Some(c.at.0 as u128 + (c.repeat as u128).saturating_sub(1) * c.period.map_or(0, |p| p.0) as u128),
        TrafficKind::Stride(c) => {
            let periodic = (c.repeat as u128).saturating_sub(1) * c.period.map_or(0, |p| p.0) as u128;
            let strides = c.strides.as_ref().map_or(1, |v| v.len()) as u128;
            // Sequential: a host's transfers back to back at its link rate.
            let back_to_back = if c.sequential { c.size.0.bytes(1500).min(u64::MAX / 2) as u128 * strides * 8 * SEC as u128 / host_rate? as u128 } else { 0 };
            Some(c.start.0 as u128 + periodic.max(back_to_back))
        }
        TrafficKind::Permutation(c) => Some(c.start.0 as u128),
        // Every host's link busy with the messages.
        TrafficKind::ClosedLoop(c) => {
            let mean = Cdf::load(&c.sizes, "").ok()?.mean();
            let m = c.hosts.as_ref().map_or(hosts, |h| h.0.len() as u128).max(1);
            Some(c.start.0 as u128 + (c.messages as f64 * mean * 8.0 * SEC as f64 / (m as f64 * host_rate? as f64)).min(1e30) as u128)
        }
        // A sender's transfers, back to back at its link rate.
        TrafficKind::Shuffle(c) => {
            let m = c.hosts.as_ref().map_or(hosts, |h| h.0.len() as u128);
            let bytes = c.size.0.bytes(1500).min(u64::MAX / 2) as u128 * m.saturating_sub(1);
            Some(c.start.0 as u128 + bytes * 8 * SEC as u128 / host_rate? as u128)
        }
        TrafficKind::Flows(c) => Some(c.list.iter().map(|f| f.start.0 as u128).max().unwrap_or(0)),
        TrafficKind::File(_) => None,
        // Jobs run until the run stops unless they are counted; when they end depends on the network.
        TrafficKind::Storage(_) | TrafficKind::Training(_) => None,
    }
}

/// Flows of an entry that carry one of `tags` (a file's rows all count: their tags are in the file).
fn tagged(t: &crate::workload::Traffic, tags: &[String], hosts: u64) -> u128 {
    let has = |tag: &Option<String>| tag.as_ref().is_some_and(|x| tags.contains(x));
    let all = || t.flow_count(hosts).unwrap_or(0) as u128;
    match &t.kind {
        _ if tags.is_empty() => 0,
        TrafficKind::Flows(c) => c.list.iter().filter(|f| has(&f.tag)).count() as u128,
        TrafficKind::File(c) => file_rows(&c.path),
        TrafficKind::Poisson(c) if has(&c.tag) => all(),
        TrafficKind::Incast(c) if has(&c.tag) => all(),
        TrafficKind::Stride(c) if has(&c.tag) => all(),
        TrafficKind::Permutation(c) if has(&c.tag) => all(),
        _ => 0,
    }
}

/// Bytes a table's row takes once turned into column arrays for Python (8 per number, a `String` per text).
fn column_bytes(table: &str) -> u128 {
    let t = TABLES.iter().find(|t| t.name == table).unwrap();
    let cell = |c: &&Column| if c.ty == Ty::Str { (size_of::<String>() + 32) as u128 } else { 8 };
    t.columns().iter().map(cell).sum()
}

impl Estimate {
    /// Check a scenario's config, count it, and refuse what the engine cannot hold (see [`Self::limits`]).
    pub fn of(sc: &Scenario) -> Result<Estimate, ConfigError> {
        let e = Estimate::count(sc)?;
        e.limits(sc)?;
        Ok(e)
    }

    /// Check a scenario's config (`Scenario::validate`) and count it; errors only for a bad config.
    /// Nothing here trusts a number to be small: counts are 128-bit, then saturated.
    pub fn count(sc: &Scenario) -> Result<Estimate, ConfigError> {
        sc.validate()?;
        let sh = shape(&sc.topology)?;
        let (h, s) = (sh.hosts, sh.switches);
        let nodes = h + s;
        let ports = 2 * sh.links;
        let switch_ports = ports.saturating_sub(h);
        let mtu = sc.switch.mtu.max(1) as u128;
        let queues = sc.switch.queues.clamp(1, 8) as u128;

        // Flows: defined, waiting in lists, open at once.
        let (mut flows, mut listed, mut open) = (0u128, 0u128, 0u128);
        let mut last: Option<u128> = Some(0);
        for t in &sc.traffic {
            let n = match &t.kind {
                TrafficKind::File(c) => file_rows(&c.path),
                _ => t.flow_count(sat(h)).unwrap_or(0) as u128,
            };
            flows += n;
            let at_once = match &t.kind {
                TrafficKind::Poisson(c) => {
                    let senders = c.src.as_ref().map_or(h, |v| v.0.len() as u128);
                    (16 * senders).min(n)
                }
                TrafficKind::Incast(c) => c.flows.map_or(c.senders.0.len() as u128, |f| f as u128).min(n),
                TrafficKind::File(_) => (16 * h).min(n),
                // Each FIO job's outstanding IOs; every worker's flow of a phase.
                TrafficKind::Storage(c) => {
                    let clients = c.clients.as_ref().map_or(h.saturating_sub(c.servers.0.len() as u128), |v| v.0.len() as u128);
                    clients * c.numjobs as u128 * c.io_depth as u128
                }
                TrafficKind::Training(c) => c.workers as u128,
                _ => n,
            };
            open += t.max_in_flight.map_or(at_once, |m| at_once.min(m as u128));
            // Poisson arrivals and incast bursts are made as they come due; the other kinds list theirs.
            if !matches!(t.kind, TrafficKind::Poisson(_) | TrafficKind::Incast(_)) {
                listed += n;
            }
            let stop = t.active.and_then(|a| a.stop).map(|d| d.0 as u128);
            last = match (last, last_start(&t.kind, sh.host_rate, h)) {
                (Some(a), Some(b)) => Some(a.max(stop.map_or(b, |s| b.min(s)))),
                _ => None,
            };
        }

        // How long the samples run: the stop time, or the expected end with an allowance for the last
        // flows to finish (a quarter more, and 10 ms), capped by max_time.
        let cap = sc.stop_time() as u128;
        let duration = match (sc.stop.time, last) {
            (None, Some(l)) if sc.stop.all_flows_done => cap.min(l + l / 4 + 10 * MS as u128),
            _ => cap,
        };
        let r = &sc.record;
        let window = duration.min(r.sample_until.map_or(u128::MAX, |u| u.0 as u128)).saturating_sub(r.sample_from.0 as u128);
        let sampled = match &r.queues {
            QueueSel::All | QueueSel::Busiest => switch_ports,
            QueueSel::List(v) => v.len() as u128,
        };
        let every = |i: Option<Time>| i.filter(|&i| i > 0).map_or(0, |i| window / i as u128);
        let queue_samples = if r.queue_stream.is_some() { 0 } else { every(r.queue_sample_interval.map(|d| d.0)) * sampled * queues };
        let link_samples = every(r.link_sample_interval.or(r.queue_sample_interval).map(|d| d.0)) * sampled;
        let traced = r.trace_flows.len() as u128 + sc.traffic.iter().map(|t| tagged(t, &r.trace_tags, sat(h))).sum::<u128>();
        let trace_samples = traced.min(flows) * (duration / (r.trace_interval.0.max(1) as u128));
        // At most one RTT sample per full segment a traced flow's host link can carry.
        let per_flow = sh.host_rate.map_or(0, |rate| rate as u128 * duration / (8 * mtu * SEC as u128));
        let rtt_samples = if r.rtt_samples { traced.min(flows) * per_flow } else { 0 };
        // ACC agents write a row per owned queue and interval (at most one per switch port and queue).
        let steps = match &sc.switch.controller {
            Some(crate::control::ControllerCfg::Acc(c)) if r.controller_steps => switch_ports * queues * (duration / c.interval.0.max(1) as u128),
            _ => 0,
        };

        // Packets: the switches' buffers full plus every link's pipe full; with no buffer limit, a
        // thousand packets per open flow.
        let buffered = |b: Option<crate::units::Bytes>, of: u128| b.map(|b| b.0.bytes(mtu as u64) as u128 * of / mtu);
        let in_buffers = match (buffered(sc.switch.buffer, s), buffered(sc.switch.port_buffer, switch_ports)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => 1000 * open,
        };
        let in_pipes = 2 * sh.bdp / (8 * mtu * SEC as u128);
        let packets = (in_buffers + in_pipes).max(1 << 14);
        let held = if sc.host.extra_delay.is_some() { packets } else { 0 };
        let events = 2 * ports + open * MAX_TIMERS as u128 + sc.traffic.len() as u128 + 8 + held;

        // Each port's state, its `ports` record row, and with PFC its ingress counters; its flow-control
        // state where the fabric has PFC or credits (a port makes it on first use).
        let lossless = sc.switch.pfc.as_ref().map_or(0, |p| p.priorities.len()) as u128;
        let flow_ctl = if sc.switch.pfc.is_some() || sc.switch.credit.is_some() { size_of::<FlowCtl>() } else { 0 };
        let port = (size_of::<Port>() + flow_ctl + size_of::<crate::records::PortRow>()) as u128
            + lossless * size_of::<crate::net::pfc::Ingress>() as u128
            + queues * size_of::<Queue>() as u128
            + if matches!(sc.switch.scheduler, SchedulerCfg::Dwrr { .. }) { queues * 8 } else { 0 };
        let name = (size_of::<String>() + 32) as u128;
        let building = sh.links * size_of::<(u32, u32, LinkSpec)>() as u128
            + ports * size_of::<(u32, LinkSpec)>() as u128
            + nodes * (2 * size_of::<Vec<u32>>() as u128)
            + ports * 4;
        let event = size_of::<(Time, u64, Ev, u32)>() as u128;
        let python = flows * column_bytes("flows")
            + queue_samples * column_bytes("queues")
            + link_samples * column_bytes("links")
            + trace_samples * column_bytes("flow_trace")
            + rtt_samples * column_bytes("rtt_samples")
            + steps * (column_bytes("controller_steps") + 160)
            + ports * column_bytes("ports");
        let mut parts: Vec<(&'static str, u128)> = vec![
            ("ports", ports * port),
            ("switches", s * size_of::<Switch>() as u128),
            ("hosts", h * (size_of::<Host>() + 16) as u128),
            ("node names", 2 * nodes * name + nodes * 8),
            ("topology while building", building),
            ("routes", s * h * 16),
            ("route next hops", grown(sh.next_hops) * 4),
            ("flow records", grown(flows) * size_of::<FlowRow>() as u128),
            ("flows waiting to start", grown(listed) * size_of::<NewFlow>() as u128),
            ("connections", grown(open) * size_of::<Slot>() as u128),
            ("queue samples", grown(queue_samples) * size_of::<QueueRow>() as u128),
            ("link samples", grown(link_samples) * size_of::<LinkRow>() as u128),
            ("trace samples", grown(trace_samples) * size_of::<TraceRow>() as u128),
            ("RTT samples", grown(rtt_samples) * size_of::<crate::records::RttRow>() as u128),
            // The row, its action and feature strings (about 140 characters for ACC's 18 features).
            ("controller steps", grown(steps) * (size_of::<crate::records::ControlRow>() + 160) as u128),
            ("packets", grown(packets) * (size_of::<Packet>() + size_of::<crate::net::link::Wire>() + 4) as u128),
            ("events", grown(events.max(4096)) * event + (1 << 13) * 4 + 1024 * 24),
            ("tables handed to Python", python),
            ("process", PROCESS_BYTES),
        ];
        parts.sort_by(|a, b| b.1.cmp(&a.1));
        let bytes = parts.iter().map(|p| p.1).sum();
        let steps = h * (nodes + ports);
        Ok(Estimate {
            hosts: sat(h),
            switches: sat(s),
            links: sat(sh.links),
            ports: sat(ports),
            route_next_hops: sat(sh.next_hops),
            routing_steps: sat(steps),
            flows: sat(flows),
            open_flows: sat(open),
            queue_samples: sat(queue_samples),
            link_samples: sat(link_samples),
            trace_samples: sat(trace_samples),
            packets: sat(packets),
            events: sat(events),
            duration: sat(duration),
            parts: parts.into_iter().map(|(n, b)| (n, sat(b))).collect(),
            bytes: sat(bytes),
        })
    }

    /// What the engine cannot hold whatever the memory: node, port and next-hop indexes are 32-bit,
    /// flow ids are 32-bit, and routing must finish in reasonable time. (Counts saturate at 2⁶⁴ − 1,
    /// far past every limit here.)
    pub fn limits(&self, sc: &Scenario) -> Result<(), ConfigError> {
        let u32_max = u32::MAX as u64;
        let field = topology_field(&sc.topology);
        let nodes = self.hosts.saturating_add(self.switches);
        let what = |n: u64, of: &str| format!("the topology has {n} {of}, more than the engine's 32-bit indexes hold ({u32_max}); make it smaller");
        if nodes > u32_max {
            return Err(ConfigError::new(field, what(nodes, "nodes")));
        }
        if self.ports > u32_max {
            return Err(ConfigError::new(field, what(self.ports, "ports")));
        }
        if self.route_next_hops > u32_max {
            return Err(ConfigError::new(field, what(self.route_next_hops, "routing next hops (switches × hosts × equal-cost ports)")));
        }
        if self.routing_steps as u128 > MAX_ROUTING_STEPS {
            let msg = format!(
                "routing {} hosts over {nodes} nodes takes {} steps (one search per host), more than {MAX_ROUTING_STEPS} (hours of set-up); use fewer hosts",
                self.hosts, self.routing_steps
            );
            return Err(ConfigError::new(field, msg));
        }
        let mut total = 0u128;
        for (i, t) in sc.traffic.iter().enumerate() {
            total += t.flow_count(self.hosts).unwrap_or(0) as u128;
            if total > MAX_FLOWS as u128 {
                return Err(crate::workload::too_many_flows(&format!("traffic[{i}].{}", count_field(&t.kind)), sat(total)));
            }
        }
        Ok(())
    }

    /// One line per count and per part, for people.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} hosts, {} switches, {} ports, {} flows ({} open at once), {} queue / {} link / {} trace samples over {:.3} s, {} packets and {} events at once: {}",
            self.hosts,
            self.switches,
            self.ports,
            self.flows,
            self.open_flows,
            self.queue_samples,
            self.link_samples,
            self.trace_samples,
            self.duration as f64 / SEC as f64,
            self.packets,
            self.events,
            human(self.bytes)
        );
        for (n, b) in self.parts.iter().filter(|p| p.1 > 0) {
            s.push_str(&format!("\n  {n}: {}", human(*b)));
        }
        s
    }
}

/// Bytes with a binary unit.
pub fn human(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// The memory this machine has for a new run: `MemAvailable` of `/proc/meminfo`; `None` where there is
/// no such file (the check is then skipped).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}
