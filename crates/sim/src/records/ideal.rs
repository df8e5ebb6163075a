//! Ideal FCT (conventions.md): the flow alone on the empty network, by the engine's own arithmetic, in a
//! time that does not depend on the flow's size (a closed form, not a walk over its packets).
//!
//! Per-flow ECMP: every packet takes the flow's hashed path, and the ideal is exactly the arrival of the
//! last packet of a store-and-forward pipeline over that path. Per-packet ECMP (spraying) on a pair of
//! hosts with more than one path: packets may travel different paths at once, so no one path's
//! pipeline is a lower bound (a flow sprayed over four slow fabric links outruns one of them). The ideal
//! is then a bound that every schedule meets: the sender's link and the receiver's link (one each, every
//! packet crosses both) serialise every packet, and between them each packet takes the least latency
//! of any path it may take, as if the fabric were free and infinitely parallel.

use crate::net::packet::ACK_BYTES;
use crate::net::Owner;
use crate::sim::Sim;
use crate::transport::Params;
use crate::units::{tx_time_floor, Time};

/// Wire sizes of a flow of `size` bytes cut into `mss`-byte segments with `hdr` header bytes each:
/// (packets, full packet, last packet).
fn wires(size: u64, mss: u64, hdr: u64) -> (u64, u64, u64) {
    let n = size.div_ceil(mss);
    let wire = |payload: u64| (payload + hdr).max(ACK_BYTES as u64);
    (n, wire(mss), wire(size - n.saturating_sub(1) * mss))
}

fn clamp(t: u128) -> Time {
    t.min(Time::MAX as u128) as Time
}

/// Arrival of the last of `n` packets (n − 1 of `full` wire bytes, then one of `last`) sent at time 0
/// into a store-and-forward pipeline over `path` (rate, delay per hop), each hop serving in order.
///
/// Packet j leaves hop h at D(j, h) = max(D(j, h−1) + d(h−1), D(j−1, h)) + s(j, h): the heaviest
/// monotone walk through the (packet, hop) grid. A walk to the last packet enters its row at some hop k
/// after n − 2 extra full packets spent at the slowest of hops 1…k, so (delays are on every walk)
///   D(n−1, H) + d(H) = Σd + max_k [ Σ_{i≤k} s_i + (n − 2)·max_{i≤k} s_i + Σ_{i≥k} s'_i ]   (n ≥ 2)
/// with s the full packet's and s' the last packet's serialisation, rounded down as in `tx_time_floor`.
pub fn pipeline(path: &[(u64, Time)], n: u64, full: u64, last: u64) -> Time {
    if n == 0 {
        return 0;
    }
    let delays: u128 = path.iter().map(|&(_, d)| d as u128).sum();
    let s: Vec<u128> = path.iter().map(|&(r, _)| tx_time_floor(full, r) as u128).collect();
    let l: Vec<u128> = path.iter().map(|&(r, _)| tx_time_floor(last, r) as u128).collect();
    if n == 1 {
        return clamp(delays + l.iter().sum::<u128>());
    }
    let mut suffix: u128 = l.iter().sum();
    let (mut prefix, mut slowest, mut best) = (0u128, 0u128, 0u128);
    for k in 0..path.len() {
        prefix += s[k];
        slowest = slowest.max(s[k]);
        best = best.max(prefix + (n as u128 - 2) * slowest + suffix);
        suffix -= l[k];
    }
    clamp(delays + best)
}

/// The sprayed flow's bound (see the module comment). The sender's link `first` and the receiver's link
/// `last_hop` are (rate, delay); `mid` is the least latency from the far end of the sender's link to the
/// receiver's last switch, per wire size (full, last packet). Packet j reaches the last switch no sooner
/// than r_j = (its end of serialisation at the sender) + d₀ + mid; that switch's link to the receiver then
/// serves them one at a time, so it finishes no sooner than max over jobs x of r_x + (the serialisation
/// of every packet released at or after r_x) — the makespan of a single server with release times,
/// whatever the order. Full packets' releases rise by s₀ each, so the maximum over them is at the ends of
/// the two runs (released before or after the last packet).
pub fn spray_bound(first: (u64, Time), last_hop: (u64, Time), mid: (Time, Time), n: u64, full: u64, last: u64) -> Time {
    if n == 0 {
        return 0;
    }
    let ser = |w: u64, r: u64| tx_time_floor(w, r) as u128;
    let (s0, s0l) = (ser(full, first.0), ser(last, first.0));
    let (p, pl) = (ser(full, last_hop.0), ser(last, last_hop.0));
    let cf = first.1 as u128 + mid.0 as u128;
    let m = (n - 1) as u128; // full packets: r_k = (k + 1)·s₀ + cf, k < m
    let rs = m * s0 + s0l + first.1 as u128 + mid.1 as u128;
    let r = |k: u128| (k + 1) * s0 + cf;
    // Full packets released no later than the last one: k < kk.
    let kk = if m == 0 || rs < r(0) {
        0
    } else if s0 == 0 {
        m
    } else {
        ((rs - cf) / s0).min(m)
    };
    let mut c = rs + pl + (m - kk) * p;
    for k in [0, kk.saturating_sub(1), kk, m.saturating_sub(1)] {
        if k < m {
            let with_last = if r(k) <= rs { pl } else { 0 };
            c = c.max(r(k) + (m - k) * p + with_last);
        }
    }
    clamp(c + last_hop.1 as u128)
}

impl Sim {
    /// Ideal FCT: the flow alone on the empty network with an unlimited window, with the engine's own
    /// serialisation arithmetic (rounded down) and the flow's extra host delays `[data, SYN, ACK]`
    /// (`host/mod.rs` `Slot`) — on its hashed path, or under spraying the bound of the module comment.
    /// Also the flow's base RTT (a full segment out and its ACK back on the empty network, on the hashed
    /// paths, extra host delays included) and HPCC's standalone FCT: base RTT + wire bytes at the hashed
    /// path's bottleneck rate.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ideal_fct(&self, src: u32, dst: u32, hash: u32, rhash: u32, size: u64, delay: [Time; 3], tp: &Params) -> (Time, Time, Time) {
        let mut fwd = self.path(src, dst, hash);
        let mss = tp.mss() as u64;
        let mut back = self.path(dst, src, rhash);
        // A host slower than its link takes each packet up at its receive rate: one more store-and-forward
        // stage with no propagation (`host/rx.rs`). Under spraying the bound below leaves it out (still a
        // lower bound).
        let spraying = self.net.ecmp_packet;
        if let (Some(rx), false) = (&self.hosts.rx, spraying) {
            fwd.push((rx.rate, 0));
            back.push((rx.rate, 0));
        }
        let [dd, dc, da] = delay;
        let prop: Time = fwd.iter().map(|&(_, d)| d).sum();
        let bottleneck = fwd.iter().map(|&(r, _)| r).min().unwrap_or(1);
        let base_rtt = 2 * prop
            + dd
            + da
            + fwd.iter().map(|&(r, _)| tx_time_floor(self.net.mtu as u64, r)).sum::<Time>()
            + back.iter().map(|&(r, _)| tx_time_floor(ACK_BYTES as u64, r)).sum::<Time>();
        if size == u64::MAX {
            return (Time::MAX, Time::MAX, base_rtt);
        }
        // The transport's own header bytes (TCP/IP 40, RoCEv2 44).
        let hdr = tp.header_bytes() as u64;
        let (n, full, last) = wires(size, mss, hdr);
        let wire_total = size.saturating_add(n.saturating_mul(hdr));
        let standalone = base_rtt.saturating_add(tx_time_floor(wire_total, bottleneck));
        let ack = ACK_BYTES as u64;
        let spray = if self.net.ecmp_packet { self.least_latency(src, dst, [full, last, ack]) } else { None };
        let ideal = match spray {
            None => {
                let mut t0 = dd;
                if tp.handshake() {
                    t0 += dc + fwd.iter().map(|&(r, d)| tx_time_floor(ack, r) + d).sum::<Time>();
                    t0 += da + back.iter().map(|&(r, d)| tx_time_floor(ack, r) + d).sum::<Time>();
                }
                if n == 0 {
                    0
                } else {
                    t0.saturating_add(pipeline(&fwd, n, full, last))
                }
            }
            Some([lf, ll, lack]) => {
                let mut t0 = dd;
                if tp.handshake() {
                    let back_ack = match self.least_latency(dst, src, [ack]) {
                        Some([b]) => b,
                        None => back.iter().map(|&(r, d)| tx_time_floor(ack, r) + d).sum(),
                    };
                    t0 += dc + lack + da + back_ack;
                }
                let first = fwd[0];
                let end = *fwd.last().unwrap();
                // The first and last links are on every path: what is left is the fabric between them.
                let mid = |lat: Time, w: u64| lat - tx_time_floor(w, first.0) - first.1 - tx_time_floor(w, end.0) - end.1;
                t0.saturating_add(spray_bound(first, end, (mid(lf, full), mid(ll, last)), n, full, last))
            }
        };
        (ideal, standalone, base_rtt)
    }

    /// Under spraying, the least latency (serialisation of `wires[i]` bytes plus propagation, every hop)
    /// from host `src` to host `dst` over every path a packet may take; `None` when there is only one
    /// path (the hashed path is then exact). Paths are walked layer by layer (every next hop is one hop
    /// closer), keeping the least latency per switch.
    fn least_latency<const K: usize>(&self, src: u32, dst: u32, wires: [u64; K]) -> Option<[Time; K]> {
        let net = &self.net;
        let hop = |p: u32, lat: [Time; K]| {
            let port = &net.ports[p as usize];
            let mut out = lat;
            for (o, &w) in out.iter_mut().zip(&wires) {
                *o = o.saturating_add(tx_time_floor(w, port.rate) + port.delay);
            }
            (port.peer_owner, out)
        };
        let mut layer = vec![hop(net.nic(src), [0; K])];
        let mut best = [Time::MAX; K];
        let mut many = false;
        while !layer.is_empty() {
            let mut next: Vec<(u32, [Time; K])> = Vec::new();
            for (owner, lat) in layer {
                match owner {
                    Owner::Host(_) => {
                        for (b, l) in best.iter_mut().zip(lat) {
                            *b = (*b).min(l);
                        }
                    }
                    Owner::Switch(s) => {
                        let set: Vec<u32> = net.route_set(s, dst).collect();
                        many |= set.len() > 1;
                        for p in set {
                            let (o, l) = hop(p, lat);
                            let key = match o {
                                Owner::Host(h) => h,
                                Owner::Switch(s) => net.n_hosts + s,
                            };
                            next.push((key, l));
                        }
                    }
                }
            }
            next.sort_unstable_by_key(|e| e.0);
            let mut merged: Vec<(u32, [Time; K])> = Vec::with_capacity(next.len());
            for (key, l) in next {
                match merged.last_mut() {
                    Some((k, m)) if *k == key => m.iter_mut().zip(l).for_each(|(a, b)| *a = (*a).min(b)),
                    _ => merged.push((key, l)),
                }
            }
            layer = merged
                .into_iter()
                .map(|(key, l)| (if key < net.n_hosts { Owner::Host(key) } else { Owner::Switch(key - net.n_hosts) }, l))
                .collect();
        }
        many.then_some(best)
    }
}
