//! The network: links, ports and switches. A port belongs to a host (its NIC) or to a switch; the
//! [`Owner`] type says which, so the code that differs (admission and AQM at switches, TCP Small Queues
//! at hosts) matches on it rather than on a flag.

pub mod deadlock;
pub mod link;
pub mod lossless;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod switch;
pub mod topology;

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

/// Ports, switches and routes.
pub struct Net {
    /// Every port of every node; a node's ports are contiguous, in the order its links are listed.
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub n_hosts: u32,
    /// First port and port count of every node (hosts first).
    pub node_ports: Vec<(u32, u32)>,
    /// Per (switch, destination host): a range of `route_ports` (every neighbour one hop closer).
    pub routes: Vec<(u32, u32)>,
    pub route_ports: Vec<u32>,
    pub ecmp_packet: bool,
    pub mtu: u32,
    /// Dynamic-threshold alpha of the shared buffer.
    pub alpha: f64,
    /// Lossless priorities and PFC (`switch.pfc`); `None` = every priority is lossy.
    pub pfc: Option<Box<pfc::Pfc>>,
    /// Deadlock cycles already recorded (`on_deadlock = "record"`), as sorted port lists.
    pub deadlocks: Vec<Vec<u32>>,
}

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

    /// Every switch port, in order.
    pub fn switch_ports(&self) -> Vec<u32> {
        (0..self.ports.len() as u32).filter(|&p| matches!(self.ports[p as usize].owner, Owner::Switch(_))).collect()
    }
}
