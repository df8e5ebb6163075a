//! Topologies: star, dumbbell, leaf-spine, fat-tree and an explicit file. Hosts are numbered from 0 in the
//! order the topology lists them (dumbbell: left then right; leaf-spine and fat-tree: rack by rack); node
//! ids are host ids first, then switches. Routing is shortest-path with every equal-cost next hop kept
//! (ECMP), hosts never forward.

use crate::config::{ConfigError, LinkCfg, Topology, TopologyFile};
use crate::units::Time;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub rate: u64,
    pub delay: Time,
    pub loss: f64,
}

pub struct Topo {
    pub n_hosts: u32,
    pub names: Vec<String>,
    /// Undirected links (a, b, spec), each full duplex.
    pub links: Vec<(u32, u32, LinkSpec)>,
    pub rack: Vec<Option<u32>>,
    pub rack_uplink: Vec<u64>,
}

fn spec(l: &LinkCfg, field: &str) -> Result<LinkSpec, ConfigError> {
    if !(0.0..1.0).contains(&l.loss) {
        return Err(ConfigError::new(format!("{field}.loss"), "loss is a probability in [0, 1)"));
    }
    Ok(LinkSpec { rate: l.rate.0, delay: l.delay.0, loss: l.loss })
}

fn positive(v: u32, field: &str, min: u32) -> Result<(), ConfigError> {
    if v < min {
        return Err(ConfigError::new(field, format!("must be at least {min}")));
    }
    Ok(())
}

impl Topo {
    pub fn n_nodes(&self) -> u32 {
        self.names.len() as u32
    }

    pub fn build(cfg: &Topology) -> Result<Topo, ConfigError> {
        let mut t = Topo { n_hosts: 0, names: vec![], links: vec![], rack: vec![], rack_uplink: vec![] };
        match cfg {
            Topology::Star { hosts, link } => {
                positive(*hosts, "topology.hosts", 2)?;
                let l = spec(link, "topology.link")?;
                t.hosts(*hosts);
                let sw = t.switch("sw0");
                for h in 0..*hosts {
                    t.links.push((h, sw, l));
                    t.rack.push(None);
                }
            }
            Topology::Dumbbell { left, right, host_link, bottleneck_link } => {
                positive(*left, "topology.left", 1)?;
                positive(*right, "topology.right", 1)?;
                let hl = spec(host_link, "topology.host_link")?;
                let bl = spec(bottleneck_link, "topology.bottleneck_link")?;
                let n = left.checked_add(*right).ok_or_else(|| ConfigError::new("topology.right", "left + right is more than 2^32 hosts"))?;
                t.hosts(n);
                let a = t.switch("left");
                let b = t.switch("right");
                for h in 0..n {
                    t.links.push((h, if h < *left { a } else { b }, hl));
                    t.rack.push(None);
                }
                t.links.push((a, b, bl));
            }
            Topology::LeafSpine { spines, leaves, hosts_per_leaf, host_link, fabric_link } => {
                positive(*spines, "topology.spines", 1)?;
                positive(*leaves, "topology.leaves", 1)?;
                positive(*hosts_per_leaf, "topology.hosts_per_leaf", 1)?;
                let Some(n) = leaves.checked_mul(*hosts_per_leaf) else {
                    let msg = format!("{leaves} leaves × {hosts_per_leaf} hosts per leaf is more than {} hosts; use fewer", u32::MAX);
                    return Err(ConfigError::new("topology.hosts_per_leaf", msg));
                };
                if n < 2 {
                    return Err(ConfigError::new("topology.hosts_per_leaf", "the fabric needs at least 2 hosts"));
                }
                let hl = spec(host_link, "topology.host_link")?;
                let fl = spec(fabric_link, "topology.fabric_link")?;
                t.hosts(n);
                let leaf0 = t.n_nodes();
                for i in 0..*leaves {
                    t.switch(&format!("leaf{i}"));
                }
                let spine0 = t.n_nodes();
                for j in 0..*spines {
                    t.switch(&format!("spine{j}"));
                }
                for i in 0..*leaves {
                    for k in 0..*hosts_per_leaf {
                        t.links.push((i * hosts_per_leaf + k, leaf0 + i, hl));
                        t.rack.push(Some(i));
                    }
                    for j in 0..*spines {
                        t.links.push((leaf0 + i, spine0 + j, fl));
                    }
                    t.rack_uplink.push((*spines as u64).saturating_mul(fl.rate));
                }
            }
            Topology::FatTree { k, link } => {
                if *k < 2 || k % 2 != 0 || *k > 64 {
                    return Err(ConfigError::new("topology.k", "k must be even, between 2 and 64"));
                }
                let l = spec(link, "topology.link")?;
                let h = k / 2;
                t.hosts(k * h * h);
                let edge0 = t.n_nodes();
                for i in 0..k * h {
                    t.switch(&format!("edge{i}"));
                }
                let agg0 = t.n_nodes();
                for i in 0..k * h {
                    t.switch(&format!("agg{i}"));
                }
                let core0 = t.n_nodes();
                for i in 0..h * h {
                    t.switch(&format!("core{i}"));
                }
                for pod in 0..*k {
                    for e in 0..h {
                        let edge = pod * h + e;
                        for x in 0..h {
                            t.links.push((edge * h + x, edge0 + edge, l));
                            t.rack.push(Some(edge));
                        }
                        for a in 0..h {
                            t.links.push((edge0 + edge, agg0 + pod * h + a, l));
                        }
                        t.rack_uplink.push(h as u64 * l.rate);
                    }
                    for a in 0..h {
                        for c in 0..h {
                            t.links.push((agg0 + pod * h + a, core0 + a * h + c, l));
                        }
                    }
                }
            }
            Topology::File { path } => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| ConfigError::new("topology.path", format!("cannot read topology file `{path}`: {e}")))?;
                let f: TopologyFile = toml::from_str(&text)
                    .map_err(|e| ConfigError::new("topology.path", format!("topology file `{path}`: {}", e.message())))?;
                positive(f.hosts, "topology file: hosts", 2)?;
                t.hosts(f.hosts);
                for j in 0..f.switches {
                    t.switch(&format!("s{j}"));
                }
                for _ in 0..f.hosts {
                    t.rack.push(None);
                }
                let node = |s: &str| -> Result<u32, ConfigError> {
                    let bad = || {
                        ConfigError::new(
                            "topology.path",
                            format!("topology file `{path}`: unknown node `{s}` (hosts h0–h{}, switches s0–s{})", f.hosts - 1, f.switches.max(1) - 1),
                        )
                    };
                    let (kind, num) = s.split_at(1.min(s.len()));
                    let n: u32 = num.parse().map_err(|_| bad())?;
                    match kind {
                        "h" if n < f.hosts => Ok(n),
                        "s" if n < f.switches => Ok(f.hosts + n),
                        _ => Err(bad()),
                    }
                };
                for (i, l) in f.links.iter().enumerate() {
                    let (a, b) = (node(&l.a)?, node(&l.b)?);
                    if a == b {
                        return Err(ConfigError::new("topology.path", format!("link {i} connects `{}` to itself", l.a)));
                    }
                    let s = spec(&LinkCfg { rate: l.rate, delay: l.delay, loss: l.loss }, &format!("topology file: links[{i}]"))?;
                    t.links.push((a, b, s));
                }
                let mut deg = vec![0u32; f.hosts as usize];
                for &(a, b, _) in &t.links {
                    for n in [a, b] {
                        if n < f.hosts {
                            deg[n as usize] += 1;
                        }
                    }
                }
                if let Some(h) = deg.iter().position(|&d| d != 1) {
                    return Err(ConfigError::new(
                        "topology.path",
                        format!("topology file `{path}`: host h{h} has {} links; every host has exactly one NIC link", deg[h]),
                    ));
                }
            }
        }
        t.check_connected()?;
        Ok(t)
    }

    fn hosts(&mut self, n: u32) {
        self.n_hosts = n;
        for i in 0..n {
            self.names.push(format!("h{i}"));
        }
    }

    fn switch(&mut self, name: &str) -> u32 {
        self.names.push(name.into());
        self.n_nodes() - 1
    }

    /// Each node's neighbours, in the order the links are listed.
    pub(crate) fn adjacency(&self) -> Vec<Vec<u32>> {
        let mut adj = vec![vec![]; self.n_nodes() as usize];
        for &(a, b, _) in &self.links {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        adj
    }

    /// Hop distance from every node to host `dst`, never passing through another host.
    pub fn dist_to(&self, adj: &[Vec<u32>], dst: u32) -> Vec<u32> {
        let mut d = vec![u32::MAX; self.n_nodes() as usize];
        d[dst as usize] = 0;
        let mut q = VecDeque::from([dst]);
        while let Some(n) = q.pop_front() {
            if n != dst && n < self.n_hosts {
                continue;
            }
            for &m in &adj[n as usize] {
                if d[m as usize] == u32::MAX {
                    d[m as usize] = d[n as usize] + 1;
                    q.push_back(m);
                }
            }
        }
        d
    }

    fn check_connected(&self) -> Result<(), ConfigError> {
        let adj = self.adjacency();
        let d = self.dist_to(&adj, 0);
        if let Some(h) = (0..self.n_hosts).find(|&h| d[h as usize] == u32::MAX) {
            return Err(ConfigError::new("topology", format!("impossible topology: host h{h} cannot reach host h0")));
        }
        Ok(())
    }
}

/// Each node's distance in links from the nearest host: hosts 0, the switches they attach to 1, and so on
/// (`u32::MAX` where no host is reachable). D-mod-k routing and C-ACC's port groups take a switch's tier
/// from it. `neighbours(n)` lists the nodes node `n` links to; nodes are the hosts, then the switches.
pub fn host_distance<I: IntoIterator<Item = usize>>(n_nodes: usize, n_hosts: usize, neighbours: impl Fn(usize) -> I) -> Vec<u32> {
    let mut dist = vec![u32::MAX; n_nodes];
    dist[..n_hosts].fill(0);
    let mut q: VecDeque<usize> = (0..n_hosts).collect();
    while let Some(n) = q.pop_front() {
        for m in neighbours(n) {
            if dist[m] == u32::MAX {
                dist[m] = dist[n] + 1;
                q.push_back(m);
            }
        }
    }
    dist
}
