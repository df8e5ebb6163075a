//! A switch: output-queued, with a shared buffer under the dynamic-threshold admission rule of commodity
//! chips and/or a static limit per egress port, and ECMP routing by a seeded five-tuple hash (per flow)
//! or per packet (spraying). Every route is precomputed: for each destination host, the ports one hop
//! closer.

use super::packet::{flags, PktId};
use crate::aqm::Hooks;
use crate::rng::{mix64, Rng};
use crate::sim::Sim;
use crate::units::Time;

pub struct Switch {
    /// Shared buffer (bytes; `u64::MAX` = unlimited) and what is in use. With PFC, the shared pool: the
    /// buffer less every lossless reserve and headroom (`net/pfc.rs`); lossless bytes in reserve or
    /// headroom are not in `used`.
    pub buffer: u64,
    pub used: u64,
    /// Per-switch ECMP salt, so that switches at different tiers split differently.
    pub salt: u64,
    /// The AQMs' and spraying's random stream.
    pub rng: Rng,
    /// Ingress accounting of the lossless priorities (`switch.pfc`).
    pub pfc: Option<super::pfc::SwitchPfc>,
}

impl Switch {
    #[inline]
    pub(crate) fn rng_u32(&mut self) -> u32 {
        use rand::RngCore;
        self.rng.next_u32()
    }
}

impl Sim {
    /// A packet arrives at switch `s` over the link of port `from` (the upstream's): route it, admit it
    /// to the egress queue, run the AQM's enqueue decision, queue it. PFC frames and lossless priorities
    /// take their own path (`net/lossless.rs`). `hop`: the egress port if the sender found it
    /// (`link::Wire`), else `NO_HOP`.
    #[inline]
    pub(crate) fn switch_receive(&mut self, s: u32, id: PktId, from: u32, hop: u32) {
        if self.net.pfc.is_some() && self.switch_receive_pfc(s, id, from, hop) {
            return;
        }
        if self.net.credit.is_some() {
            return self.switch_receive_credit(s, id, from, hop);
        }
        let p = self.egress(s, id, hop);
        let now = self.now();
        let mtu = self.net.mtu;
        let pkt = self.arena.get_mut(id);
        let size = pkt.size as u64;
        let port = &mut self.net.ports[p as usize];
        let qi = port.queue_for(pkt.prio);
        let sw = &mut self.net.switches[s as usize];
        if port.bytes + size > port.limit {
            port.queues[qi].count_drop();
            self.rec.meta.drops.port_buffer += 1;
            self.drop_pkt(id);
            return;
        }
        if sw.buffer != u64::MAX {
            let free = sw.buffer.saturating_sub(sw.used);
            // Dynamic threshold: a queue may grow to alpha × (free shared buffer).
            if size > free || (port.queues[qi].bytes + size) as f64 > self.net.alpha * free as f64 {
                port.queues[qi].count_drop();
                self.rec.meta.drops.buffer += 1;
                self.drop_pkt(id);
                return;
            }
        }
        let ctx = port.ctx(qi, now, mtu);
        let q = &mut port.queues[qi];
        let v = q.aqm.on_enqueue(&ctx, &mut sw.rng);
        if q.apply(v, pkt) {
            self.rec.meta.drops.aqm += 1;
            self.drop_pkt(id);
            return;
        }
        sw.used += size;
        self.port_push(p, qi, id);
    }

    /// With PFC: a frame is consumed, a lossless packet takes the lossless path (true: done here); a lossy
    /// one goes on with `switch_receive` (false).
    #[cold]
    fn switch_receive_pfc(&mut self, s: u32, id: PktId, from: u32, hop: u32) -> bool {
        let pkt = self.arena.get(id);
        if pkt.flags & flags::PFC != 0 {
            self.frame_arrived(self.net.ports[from as usize].rev, id);
            return true;
        }
        if !self.net.pfc.as_deref().unwrap().is_lossless(pkt.prio) {
            return false;
        }
        let p = self.egress(s, id, hop);
        let pkt = self.arena.get(id);
        let qi = self.net.ports[p as usize].queue_for(pkt.prio);
        let inp = self.net.ports[self.net.ports[from as usize].rev as usize].local;
        self.lossless_enqueue(s, inp, id, p, qi);
        true
    }

    /// The port packet `id` leaves switch `s` by: `hop` if its sender found it (`link::Wire`), else routed
    /// now (spraying draws from the switch's stream here).
    #[inline(always)]
    pub(crate) fn egress(&mut self, s: u32, id: PktId, hop: u32) -> u32 {
        if hop != super::link::NO_HOP {
            return hop;
        }
        let pkt = self.arena.get(id);
        let hash = if self.net.ecmp_packet { self.net.switches[s as usize].rng_u32() } else { pkt.hash };
        self.route(s, pkt.dst, hash)
    }

    /// The egress port at switch `s` toward host `dst` for a packet with this hash.
    #[inline(always)]
    pub(crate) fn route(&self, s: u32, dst: u32, hash: u32) -> u32 {
        let n = &self.net;
        let (start, len) = n.hot_routes[s as usize * n.n_hosts as usize + dst as usize];
        if len == 1 | super::RUN {
            return start;
        }
        // Multiply-shift maps the 32-bit mixed hash onto [0, count) without a division. (A one-port set is
        // always a run, taken above.)
        let count = len & !super::RUN;
        let h = (mix64(hash as u64 ^ n.switches[s as usize].salt) >> 32) as u32;
        let k = ((h as u64 * count as u64) >> 32) as u32;
        if len & super::RUN != 0 {
            start + k
        } else {
            n.route_ports[(start + k) as usize]
        }
    }

    /// (rate, delay) of every link on the path of a packet from host `src` to host `dst` with this hash.
    pub(crate) fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<(u64, Time)> {
        let mut v = Vec::new();
        let mut p = self.net.nic(src);
        loop {
            let port = &self.net.ports[p as usize];
            v.push((port.rate, port.delay));
            match port.peer_owner {
                super::Owner::Host(h) if h == dst => break,
                super::Owner::Host(_) => panic!("route from {src} to {dst} reached another host"),
                super::Owner::Switch(s) => p = self.route(s, dst, hash),
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use crate::net::{hot_routes, RUN};
    use crate::rng::mix64;
    use crate::config::Scenario;
    use crate::net::topology::Topo;
    use crate::sim::Sim;

    #[test]
    fn runs_of_consecutive_ports_are_stored_as_first_and_count() {
        let routes = [(0, 1), (1, 3), (4, 2), (6, 0)];
        let ports = [7, 3, 4, 5, 9, 2];
        assert_eq!(hot_routes(&routes, &ports), vec![(7, 1 | RUN), (3, 3 | RUN), (4, 2), (6, 0)]);
        assert_eq!(hot_routes(&[(0, 2)], &[4, 6]), vec![(0, 2)], "a gap is not a run");
    }

    /// The route sets are every neighbour one hop closer to the destination (by the topology's hop
    /// distances, `Topo::dist_to`; D-mod-k keeps one of them), and the packet path's table picks, for every switch,
    /// destination and hash, the set's port the multiply-shift gives — on a fat-tree and a leaf-spine
    /// (runs of up-links), each with D-mod-k too (single ports).
    #[test]
    fn route_picks_what_the_route_sets_give() {
        for topo in [
            "kind = \"fat_tree\"\nk = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }",
            "kind = \"leaf_spine\"\nleaves = 3\nspines = 3\nhosts_per_leaf = 2\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"40Gbps\", delay = \"1us\" }",
        ] {
            for ecmp in ["", "ecmp = \"d_mod_k\""] {
                let text = format!("seed = 1\nstop = {{ time = \"1us\" }}\n[topology]\n{topo}\n[switch]\n{ecmp}\n");
                let sim = Sim::from_toml(&text).unwrap();
                let topo = Topo::build(&Scenario::from_toml(&text).unwrap().topology).unwrap();
                let adj = topo.adjacency();
                let n = &sim.net;
                let peer = |p: u32| n.node_id(n.ports[p as usize].peer_owner) as usize;
                let mut runs = 0;
                for dst in 0..n.n_hosts {
                    let dist = topo.dist_to(&adj, dst);
                    for s in 0..n.switches.len() as u32 {
                        let node = (n.n_hosts + s) as usize;
                        let set: Vec<u32> = n.route_set(s, dst).collect();
                        let (p0, np) = n.node_ports[node];
                        let closer: Vec<u32> = (p0..p0 + np).filter(|&p| dist[peer(p)] + 1 == dist[node]).collect();
                        if ecmp.is_empty() {
                            assert_eq!(set, closer, "{text} s{s} d{dst}");
                        } else {
                            assert!(set.len() == 1 && closer.contains(&set[0]), "{text} s{s} d{dst}: {set:?} of {closer:?}");
                        }
                        runs += (n.hot_routes[(s * n.n_hosts + dst) as usize].1 & RUN != 0) as u32;
                        for hash in [0u32, 1, 0x9e37_79b9, u32::MAX] {
                            let h = (mix64(hash as u64 ^ n.switches[s as usize].salt) >> 32) as u32;
                            let k = ((h as u64 * set.len() as u64) >> 32) as usize;
                            assert_eq!(sim.route(s, dst, hash), set[k], "{text} s{s} d{dst}");
                        }
                    }
                }
                assert!(runs > 0, "{text}");
            }
        }
    }
}
