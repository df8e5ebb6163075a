//! The ideal FCT's closed forms against a packet-by-packet walk (the code the closed form replaced).

use super::ideal::{pipeline, spray_bound};
use crate::net::packet::{ACK_BYTES, HEADER_BYTES};
use crate::sim::Sim;
use crate::units::{tx_time_floor, Time, SEC};
use rand::{Rng, SeedableRng};

/// The walk the ideal FCT used before its closed form: packet j leaves hop h at max(arrival, previous
/// departure) + serialisation. Kept verbatim as the reference.
fn pipeline_walk(fwd: &[(u64, Time)], t0: Time, size: u64, mss: u64) -> Time {
    let n = size.div_ceil(mss);
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
    last_arrival
}

fn wires(size: u64, mss: u64) -> (u64, u64, u64) {
    let n = size.div_ceil(mss);
    let w = |p: u64| (p + HEADER_BYTES as u64).max(ACK_BYTES as u64);
    (n, w(mss), w(size - n.saturating_sub(1) * mss))
}

/// Rates that divide 8·10¹² bits·ps exactly and rates that leave a remainder.
const RATES: &[u64] = &[1_000_000, 100_000_000, 1_000_000_000, 2_500_000_000, 7_000_000_000, 10_000_000_000, 25_000_000_000, 40_000_000_000, 100_000_000_000, 400_000_000_000];

fn random_rate(rng: &mut impl Rng) -> u64 {
    if rng.gen_bool(0.7) {
        RATES[rng.gen_range(0..RATES.len())]
    } else {
        rng.gen_range(1_000_000..500_000_000_000)
    }
}

/// Sizes spread evenly in log scale from 1 B to `max`.
fn random_size(rng: &mut impl Rng, max: f64) -> u64 {
    libm::exp(rng.gen_range(0.0..libm::log(max))) as u64 + rng.gen_range(0..2)
}

#[test]
fn closed_form_equals_the_walk_on_random_paths() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(12);
    for case in 0..3000 {
        let hops = rng.gen_range(1..=7);
        let path: Vec<(u64, Time)> = (0..hops).map(|_| (random_rate(&mut rng), rng.gen_range(0..200_000_000))).collect();
        let mss = rng.gen_range(1..=8960);
        // Sizes up to hundreds of MB while the walk stays short enough (≤ 400 000 packets).
        let size = random_size(&mut rng, (400_000.0 * mss as f64).min(5e8)).max(1);
        let t0 = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..SEC) };
        let (n, full, last) = wires(size, mss);
        let want = pipeline_walk(&path, t0, size, mss);
        assert_eq!(t0 + pipeline(&path, n, full, last), want, "case {case}: {path:?} size {size} mss {mss}");
    }
}

#[test]
fn closed_form_edge_cases() {
    let p = [(10_000_000_000, 1_000_000), (40_000_000_000, 2_000_000), (10_000_000_000, 1_000_000)];
    for (size, mss) in [(1, 1460), (1460, 1460), (1461, 1460), (2920, 1460), (24, 1460), (100, 1), (64, 24)] {
        let (n, full, last) = wires(size, mss);
        assert_eq!(pipeline(&p, n, full, last), pipeline_walk(&p, 0, size, mss), "size {size} mss {mss}");
    }
    assert_eq!(pipeline(&p, 0, 1500, 1500), 0);
    // A 1 TB flow: no walk, no overflow.
    let (n, full, last) = wires(1_000_000_000_000, 1460);
    let t = pipeline(&p, n, full, last);
    assert!(t > 800 * SEC && t < 900 * SEC, "{t}");
    // Beyond the clock: saturates instead of wrapping.
    let (n, full, last) = wires(u64::MAX - 1, 1);
    assert_eq!(pipeline(&[(1, 0)], n, full, last), Time::MAX);
}

/// The spraying bound with a free fabric is never above the pipeline of any one path with the same
/// first and last links (it drops the fabric's queueing and lets the last link serve in release order),
/// and equals it when there is no fabric between them.
#[test]
fn spray_bound_is_below_every_single_path() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for case in 0..2000 {
        let hops = rng.gen_range(2..=6);
        let path: Vec<(u64, Time)> = (0..hops).map(|_| (random_rate(&mut rng), rng.gen_range(0..50_000_000))).collect();
        let mss = rng.gen_range(1..=8960);
        let size = random_size(&mut rng, 1e8).max(1);
        let (n, full, last) = wires(size, mss);
        let mid = |w: u64| path[1..hops - 1].iter().map(|&(r, d)| tx_time_floor(w, r) + d).sum::<Time>();
        let b = spray_bound(path[0], path[hops - 1], (mid(full), mid(last)), n, full, last);
        let p = pipeline(&path, n, full, last);
        assert!(b <= p, "case {case}: bound {b} > pipeline {p}");
        if hops == 2 {
            assert_eq!(b, p, "case {case}");
        }
    }
}

/// A small scenario's `Sim`, to ask it for ideal FCTs.
fn sim(topology: &str, ecmp: &str, mtu: u32, extra: &str) -> Sim {
    let text = format!(
        "stop = {{ time = \"1ms\" }}\n{topology}\n[switch]\nmtu = {mtu}\necmp = \"{ecmp}\"\n[host]\ntransport = {{ kind = \"tcp\" }}\n{extra}\n"
    );
    Sim::from_toml(&text).unwrap()
}

const TOPOLOGIES: &[&str] = &[
    "[topology]\nkind = \"star\"\nhosts = 5\nlink = { rate = \"10Gbps\", delay = \"1us\" }",
    "[topology]\nkind = \"dumbbell\"\nleft = 3\nright = 2\nhost_link = { rate = \"25Gbps\", delay = \"2us\" }\nbottleneck_link = { rate = \"7Gbps\", delay = \"5us\" }",
    "[topology]\nkind = \"leaf_spine\"\nspines = 3\nleaves = 3\nhosts_per_leaf = 3\nhost_link = { rate = \"40Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"10Gbps\", delay = \"3us\" }",
    "[topology]\nkind = \"fat_tree\"\nk = 4\nlink = { rate = \"10Gbps\", delay = \"1.5us\" }",
];

/// Through the `Sim` (paths from the routes, MSS from the MTU, extra delays, handshake): per-flow ECMP
/// gives exactly the walk on the hashed path; spraying never more, and exactly it where one path exists.
#[test]
fn sim_ideal_equals_the_walk_with_per_flow_ecmp() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    for topo in TOPOLOGIES {
        for mtu in [1500, 9000, 576] {
            let flow = sim(topo, "flow", mtu, "");
            let spray = sim(topo, "packet", mtu, "");
            let tp = flow.hosts.transports[0];
            let n_hosts = flow.net.n_hosts;
            for _ in 0..150 {
                let src = rng.gen_range(0..n_hosts);
                let dst = (src + rng.gen_range(1..n_hosts)) % n_hosts;
                let (hash, rhash) = (rng.gen::<u32>(), rng.gen::<u32>());
                let size = random_size(&mut rng, 3e8);
                let (dd, da) = if rng.gen_bool(0.5) { (0, 0) } else { (rng.gen_range(0..SEC / 1000), rng.gen_range(0..SEC / 1000)) };
                let (ideal, _, _) = flow.ideal_fct(src, dst, hash, rhash, size, [dd, dd, da], &tp);
                let fwd = flow.path(src, dst, hash);
                let back = flow.path(dst, src, rhash);
                let ack = |p: &[(u64, Time)]| p.iter().map(|&(r, d)| tx_time_floor(ACK_BYTES as u64, r) + d).sum::<Time>();
                // The SYN waits the sender's delay too (`applies_to` data or all).
                let t0 = dd + if tp.handshake() { dd + ack(&fwd) + da + ack(&back) } else { 0 };
                assert_eq!(ideal, pipeline_walk(&fwd, t0, size, tp.mss() as u64), "{topo} mtu {mtu} {src}→{dst} size {size}");
                let (sprayed, _, _) = spray.ideal_fct(src, dst, hash, rhash, size, [dd, dd, da], &tp);
                assert!(sprayed <= ideal, "{topo}: spraying {sprayed} > one path {ideal}");
                if fwd.len() <= 2 {
                    assert_eq!(sprayed, ideal, "{topo}: one path only");
                }
            }
        }
    }
}

/// Under spraying the ideal takes the fabric as infinitely parallel: on a leaf-spine whose fabric links
/// are 4× slower than the host links, a large flow's ideal is paced by the host links, not by one
/// fabric link (which the hashed path's pipeline would charge).
#[test]
fn spraying_ideal_is_paced_by_the_host_links() {
    let topo = TOPOLOGIES[2];
    let flow = sim(topo, "flow", 1500, "");
    let spray = sim(topo, "packet", 1500, "");
    let tp = flow.hosts.transports[0];
    let size = 10_000_000;
    let (one_path, _, _) = flow.ideal_fct(0, 8, 1, 2, size, [0; 3], &tp);
    let (sprayed, _, _) = spray.ideal_fct(0, 8, 1, 2, size, [0; 3], &tp);
    let host_link = tx_time_floor(size + size.div_ceil(1460) * 40, 40_000_000_000);
    let fabric_link = tx_time_floor(size + size.div_ceil(1460) * 40, 10_000_000_000);
    assert!(one_path > fabric_link && one_path < fabric_link + fabric_link / 100, "{one_path}");
    assert!(sprayed > host_link && sprayed < host_link + host_link / 50, "{sprayed} vs {host_link}");
}
