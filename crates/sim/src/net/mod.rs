//! The network: links, ports and switches. A port belongs to a host (its NIC) or to a switch; the
//! [`Owner`] type says which, so the code that differs (admission and AQM at switches, TCP Small Queues
//! at hosts) matches on it rather than on a flag.

pub mod credit;
pub mod deadlock;
pub mod fifo;
pub mod int;
pub mod link;
pub mod lossless;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod switch;
#[cfg(test)]
pub(crate) mod test_ring;
pub mod topology;

use crate::idvec::IdVec;
use crate::units::Time;
use port::Port;
use switch::Switch;

/// Who owns a port, or where a link leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Host number (= node number).
    Host(u32),
    /// Switch index (node number − host count).
    Switch(u32),
}

/// `Net::hot_routes`: the set is the ports first, first + 1, … (count in the low bits).
pub const RUN: u32 = 1 << 31;

/// `Net::hot_routes` from `routes`: each set that is a run of consecutive port numbers as (first, count |
/// `RUN`).
pub fn hot_routes(routes: &[(u32, u32)], route_ports: &[u32]) -> Vec<(u32, u32)> {
    routes
        .iter()
        .map(|&(start, len)| {
            let set = &route_ports[start as usize..(start + len) as usize];
            match set.first() {
                Some(&a) if set.iter().enumerate().all(|(i, &p)| p == a + i as u32) => (a, len | RUN),
                _ => (start, len),
            }
        })
        .collect()
}

/// Ports, switches and routes.
pub struct Net {
    /// Every port of every node; a node's ports are contiguous, in the order its links are listed.
    pub ports: IdVec<Port>,
    pub switches: IdVec<Switch>,
    pub n_hosts: u32,
    /// First port and port count of every node (hosts first).
    pub node_ports: Vec<(u32, u32)>,
    /// The route sets' ports, set after set (each set: every neighbour one hop closer to a destination).
    pub route_ports: IdVec<u32>,
    /// Per (switch, destination host), the set as the packet path reads it (`route`): where the set is a
    /// run of consecutive port numbers (one port, or a switch's up-links), (first port, count | `RUN`), so
    /// the port is found without a second, dependent load; else (start, count) of its range of
    /// `route_ports`. [`Net::route_set`] lists a set's ports either way.
    pub hot_routes: IdVec<(u32, u32)>,
    /// Spraying (`switch.ecmp = "packet"`): each switch draws a packet's port when it arrives. Otherwise
    /// (per-flow ECMP, lossy or lossless) a data packet's port at the next switch is a function of
    /// (switch, destination, hash), found when it is queued to be sent there (`Packet::hop`) and carried
    /// on the wire (`link::Wire`); PFC frames are not routed.
    pub ecmp_packet: bool,
    /// Ports numbered below this are prefetched before the next event or a link's arrival reads them
    /// (`engine::prefetch_lines`): every port where the network has at least [`PREFETCH_PORTS`] of them,
    /// none where fewer. A network that small keeps its ports in the first-level cache, where a prefetch
    /// is pure cost (the incast of `bench/`: −2.0 % instructions per packet-hop, ~1.7 % less time; the
    /// arrival's prefetch of its packet stays: made conditional too, it cost benchmark 1 1.3 % more
    /// instructions). A bound rather than a flag: a link's arrival compares the next port with it in
    /// place of the index check it made anyway, so the fabrics run no more instructions than before.
    pub prefetch_below: u32,
    pub mtu: u32,
    /// Dynamic-threshold alpha of the shared buffer.
    pub alpha: f64,
    /// Lossless priorities and PFC (`switch.pfc`); `None` = every priority is lossy.
    pub pfc: Option<Box<pfc::Pfc>>,
    /// InfiniBand credit flow control (`switch.credit`); `None` = no credits (PFC or lossy).
    pub credit: Option<Box<credit::Credit>>,
    /// Deadlock cycles already recorded (`on_deadlock = "record"`), as sorted port lists.
    pub deadlocks: Vec<Vec<u32>>,
}

/// The fewest ports (256 bytes each, and a queue of 256 bytes for each) at which prefetching pays: 64
/// ports' state is 32 KB, two thirds of a 48 KB first-level data cache.
pub const PREFETCH_PORTS: usize = 64;

impl Net {
    /// Node number of an owner.
    #[inline]
    pub fn node_id(&self, o: Owner) -> u32 {
        match o {
            Owner::Host(h) => h,
            Owner::Switch(s) => self.n_hosts + s,
        }
    }

    /// The NIC port of host `h`.
    #[inline]
    pub fn nic(&self, h: u32) -> u32 {
        self.node_ports[h as usize].0
    }

    /// Global port index of `node`'s local port `port`, by node name.
    pub fn port_of(&self, names: &[String], node: &str, port: u32) -> Option<u32> {
        let n = names.iter().position(|x| x == node)?;
        let (p0, np) = self.node_ports[n];
        (port < np).then_some(p0 + port)
    }

    /// The ports of the route set at switch `s` toward host `dst`, in order.
    pub fn route_set(&self, s: u32, dst: u32) -> impl Iterator<Item = u32> + '_ {
        let (start, len) = self.hot_routes[s as usize * self.n_hosts as usize + dst as usize];
        let count = len & !RUN;
        let (run, listed) = if len & RUN != 0 { (start..start + count, &[][..]) } else { (0..0, &self.route_ports[start as usize..(start + count) as usize]) };
        run.chain(listed.iter().copied())
    }

    /// The longest round trip between two hosts on the empty network, as the `flows` table's base RTT
    /// counts it (a full packet out, a minimum frame back: serialisation and propagation per hop), over
    /// every route a packet may take, and the most switches a path crosses. The round trip is the
    /// longest way out plus the longest way back (the same pair on a fabric whose links are the same
    /// both ways, and never less than the true longest). HPCC's `T` (`GLOBAL_T`) and its INT capacity.
    pub fn longest_paths(&self) -> (Time, u32) {
        use crate::units::tx_time_floor;
        let n_hosts = self.n_hosts as usize;
        let n_nodes = self.node_ports.len();
        let key = |o: Owner| match o {
            Owner::Host(h) => h as usize,
            Owner::Switch(s) => n_hosts + s as usize,
        };
        // (out with an MTU, back with a minimum frame, switches) from every node to `dst`.
        fn to(net: &Net, n: usize, dst: usize, memo: &mut [Option<(Time, Time, u32)>], key: &dyn Fn(Owner) -> usize) -> (Time, Time, u32) {
            if let Some(v) = memo[n] {
                return v;
            }
            let n_hosts = net.n_hosts as usize;
            let ports: Vec<u32> = if n < n_hosts { vec![net.node_ports[n].0] } else { net.route_set((n - n_hosts) as u32, dst as u32).collect() };
            let mut best = (0, 0, 0);
            for p in ports {
                let port = &net.ports[p as usize];
                let next = key(port.peer_owner);
                let (a, b, h) = if next == dst { (0, 0, 0) } else { to(net, next, dst, memo, key) };
                let mtu = tx_time_floor(net.mtu as u64, port.rate) + port.delay + a;
                let ack = tx_time_floor(packet::ACK_BYTES as u64, port.rate) + port.delay + b;
                let hops = h + (n >= n_hosts) as u32;
                best = (best.0.max(mtu), best.1.max(ack), best.2.max(hops));
            }
            memo[n] = Some(best);
            best
        }
        let (mut out, mut back, mut hops) = (0, 0, 0);
        let mut memo = vec![None; n_nodes];
        for dst in 0..n_hosts {
            memo.iter_mut().for_each(|m| *m = None);
            for src in (0..n_hosts).filter(|&s| s != dst) {
                let (a, b, h) = to(self, src, dst, &mut memo, &key);
                (out, back, hops) = (out.max(a), back.max(b), hops.max(h));
            }
        }
        (out + back, hops)
    }

    /// Every switch port, in order.
    pub fn switch_ports(&self) -> Vec<u32> {
        (0..self.ports.len() as u32).filter(|&p| matches!(self.ports[p as usize].owner, Owner::Switch(_))).collect()
    }
}
