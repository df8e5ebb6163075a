//! InfiniBand credit flow control end to end (`net/credit.rs`): a lossless incast that stalls on credits
//! instead of dropping, a receiver buffer that fills to its VL buffer and no further, one VL stalled while
//! another sends, credits conserved over random fabrics, D-mod-k routes, and bad input.

mod common;

use common::{incast, port_row, US};
use dcnlab_sim::{run_toml, Sim};
use proptest::prelude::*;

/// The shared star with 1000 B packets and DCQCN.
fn star(hosts: u32, switch: &str, traffic: &str, stop: &str) -> String {
    let transport = "kind = \"rdma\"\ncc = \"dcqcn\"\npreset = \"dcqcn_paper\"";
    common::star(hosts, &format!("mtu = 1000\n{switch}"), transport, traffic, stop)
}

const IB: &str = "credit = { vl_buffer = \"64KB\" }";

#[test]
fn an_incast_stalls_on_credits_instead_of_dropping() {
    let text = star(9, IB, &incast(8, "1MB"), "{ all_flows_done = true, max_time = \"50ms\" }");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.drops.total(), 0);
    assert!(r.meta.conservation.holds());
    assert_eq!(r.meta.flows_finished, 8);
    // Every sender's NIC waited for credits; none was PFC-paused; no frame was sent.
    for h in 1..=8 {
        let p = port_row(&r, &format!("h{h}"), 0);
        assert!(p.credit_stall > 100 * US, "h{h}: {p:?}");
        assert_eq!((p.paused, p.pause_frames_sent, p.pause_frames_received), (0, 0, 0), "h{h}");
    }
    // The receiver takes every packet at once, so the switch's port toward it never waits.
    assert_eq!(port_row(&r, "sw0", 0).credit_stall, 0);
    // The receiver's link stays busy: 8 MB of payload (plus RoCE headers) at 10 Gbps is about 7 ms.
    let last = r.flows.iter().map(|f| f.finish.unwrap()).max().unwrap();
    assert!(last < 7_500 * US, "last finish {} us", last / US);
    // The same incast without credits and with a 300 KB buffer drops.
    let lossy = run_toml(&star(9, "buffer = \"300KB\"", &incast(8, "1MB"), "{ time = \"5ms\" }")).unwrap();
    assert!(lossy.meta.drops.buffer > 0);
}

/// h1 → s0 → s1 → h0 where s1's link to h0 is 100× slower: s1's buffer for its ingress from s0 is the
/// only place the flow can wait (h2 hangs off s1 for the second VL's flow). Switch ports are numbered in
/// link order: s0 port 1 faces s1, s1 port 1 faces h0.
fn chain(vl_buffer: &str, extra: &str) -> String {
    chain_with(vl_buffer, "", extra)
}

fn chain_with(vl_buffer: &str, switch: &str, extra: &str) -> String {
    // A new file per call: tests run in parallel threads of one process.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dcnlab-credit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("chain-{}.toml", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let links = [
        "{ a = \"h1\", b = \"s0\", rate = \"100Gbps\", delay = \"1us\" }",
        "{ a = \"s0\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\" }",
        "{ a = \"s1\", b = \"h0\", rate = \"1Gbps\", delay = \"1us\" }",
        "{ a = \"s1\", b = \"h2\", rate = \"100Gbps\", delay = \"1us\" }",
    ];
    std::fs::write(&path, format!("hosts = 3\nswitches = 2\nlinks = [\n{}\n]\n", links.join(",\n"))).unwrap();
    format!(
        r#"
seed = 1
stop = {{ time = "3ms" }}
[topology]
kind = "file"
path = "{}"
[switch]
mtu = 1000
queues = 2
credit = {{ vl_buffer = "{vl_buffer}", vls = 2 }}
{switch}
[host.transport]
kind = "rdma"
cc = "dcqcn"
preset = "dcqcn_paper"
[record]
queue_sample_interval = "2us"
queues = [{{ node = "s1", port = 1 }}, {{ node = "s0", port = 1 }}]
[[traffic]]
kind = "flows"
list = [{{ src = 1, dst = 0, size = "20MB", start = "0us" }}]
{extra}
"#,
        path.display()
    )
}

#[test]
fn a_receiver_buffer_fills_to_its_vl_buffer_and_no_further() {
    // Data packets are one MTU, 1000 B = 16 blocks of 64 B: a 16 KB VL buffer (250 blocks) holds 15 of
    // them, a 64 KB one (1000 blocks) 62.
    for (buf, packets) in [("16KB", 15u64), ("64KB", 62)] {
        let r = run_toml(&chain(buf, "")).unwrap();
        assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
        assert_eq!(r.meta.drops.total(), 0);
        let s1 = r.meta.node_names.iter().position(|x| x == "s1").unwrap() as u32;
        let s0 = r.meta.node_names.iter().position(|x| x == "s0").unwrap() as u32;
        // s1's egress toward h0 (its port 1) holds only what came in from s0: exactly as many packets as
        // the VL buffer's blocks allow, once the credits run out.
        let held = r.queues.iter().filter(|q| q.node == s1 && q.port == 1).map(|q| q.bytes).max().unwrap();
        assert_eq!(held, packets * 1000, "{buf}: s1 held {held} B");
        // Then s0's port toward s1 runs out of credits and waits; the backlog moves to s0 and to h1.
        let stalled = port_row(&r, "s0", 1);
        assert!(stalled.credit_stall > 2_000 * US, "{stalled:?}");
        let s0_held = r.queues.iter().filter(|q| q.node == s0 && q.port == 1).map(|q| q.bytes).max().unwrap();
        assert!(s0_held <= packets * 1000, "s0 held {s0_held} B");
    }
}

#[test]
fn a_vl_without_credits_stops_only_itself() {
    // VL 0 (priority 0) stalls behind the 1 Gbps link; a priority-1 flow from h1 to h2 shares h1's NIC
    // and the s0 → s1 link and finishes at nearly its share of 100 Gbps.
    // Under strict priority and under DWRR (whose deficits must not be spent on a VL that cannot send).
    let other = "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 2, size = \"10MB\", start = \"100us\", priority = 1 }]\n";
    for sched in ["", "scheduler = { kind = \"dwrr\", weights = [1, 1] }"] {
        let r = run_toml(&chain_with("64KB", sched, other)).unwrap();
        assert_eq!(r.meta.drops.total(), 0);
        let f = r.flows.iter().find(|f| f.dst == 2).unwrap();
        let fct = f.finish.expect("the VL 1 flow finishes") - f.start;
        // 10 MB at 100 Gbps is 0.8 ms; it shares the NIC with VL 0, which sends at h0's 1 Gbps.
        assert!(fct < 1_000 * US, "{sched}: VL 1 flow took {} us", fct / US);
        // Without credits on VL 0 it would have waited: VL 0 itself stalled the whole run.
        assert!(port_row(&r, "s0", 1).credit_stall > 2_000 * US);
    }
}

#[test]
fn the_credit_loop_bounds_a_flow_to_its_vl_buffer_per_round_trip() {
    // Two hosts on one switch, 100 Gbps links of 10 us. A 4 KB VL buffer is 62 blocks: three 1000 B packets
    // (16 blocks each). A packet's credits come back one link delay after the next node takes it, so each
    // hop lets 3 packets through per 2 × 10 us + one serialisation (80 ns): about 1.2 Gbps, whatever the
    // line rate. Credits returned at once (no delay) would double that; credits in bytes rather than
    // blocks (4 packets) would raise it by a third. A buffer of exactly three packets' blocks (48 blocks,
    // 3072 B) lets the same three through: a packet goes when its blocks equal the credits left (a gate
    // that wanted one block more would hold the third packet and send two per round trip).
    // The same on VL 1 of two: a VL other than 0 goes OFF and back ON at every credit round trip.
    for (vl_buffer, vls) in [("4KB", 1), ("3072B", 1), ("4KB", 2)] {
        let sw = format!("queues = {vls}\ncredit = {{ vl_buffer = \"{vl_buffer}\", vls = {vls} }}");
        let prio = vls - 1;
        let flow = format!("[[traffic]]\nkind = \"flows\"\nlist = [{{ src = 1, dst = 0, size = \"956KB\", start = \"0us\", priority = {prio} }}]\n");
        let text = star(2, &sw, &flow, "{ all_flows_done = true, max_time = \"50ms\" }")
            .replace("10Gbps\", delay = \"1us", "100Gbps\", delay = \"10us");
        let r = run_toml(&text).unwrap();
        let f = &r.flows[0];
        let fct = (f.finish.unwrap() - f.start) as f64;
        // 956 KB = 1000 packets of 956 B payload.
        let expect = 1000.0 / 3.0 * (20.0 * US as f64 + 80_000.0);
        let (got, bound) = (fct / US as f64, expect / US as f64);
        assert!((fct / expect - 1.0).abs() < 0.03, "{vl_buffer}, VL {prio}: FCT {got:.0} us, credit-loop bound {bound:.0} us");
        assert!(port_row(&r, "h1", 0).credit_stall > fct as u64 / 2);
    }
}

#[test]
fn a_priority_above_the_vls_travels_and_is_credited_on_the_last_vl() {
    // One VL; the flow asks for priority 3. It is queued on VL 0 at every hop, and its credits must come
    // back to VL 0: returned to a VL that does not exist, VL 0 would run dry after 64 KB and the flow stop.
    let flow = "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 0, size = \"1MB\", start = \"0us\", priority = 3 }]\n";
    let mut sim = Sim::from_toml(&star(2, IB, flow, "{ all_flows_done = true, max_time = \"20ms\" }")).unwrap();
    sim.run_until(500 * US);
    assert_eq!(sim.credit_audit(), Some(Ok(())));
    let r = sim.run();
    assert_eq!(r.meta.flows_finished, 1, "the flow on priority 3 finishes");
}

#[test]
fn credits_are_audited_mid_run_and_a_run_without_credits_has_no_audit() {
    let mut sim = Sim::from_toml(&chain("64KB", "")).unwrap();
    for t in [5 * US, 50 * US, 500 * US, 2_000 * US] {
        sim.run_until(t);
        assert_eq!(sim.credit_audit(), Some(Ok(())), "at {t} ps");
    }
    let lossy = Sim::from_toml(&star(3, "", &incast(2, "100KB"), "{ time = \"1ms\" }")).unwrap();
    assert_eq!(lossy.credit_audit(), None);
}

#[test]
fn d_mod_k_routes_by_destination() {
    // k = 4 fat-tree (16 hosts, 4 per pod, 2 per edge): an edge switch goes up to aggregation (d mod 2),
    // the aggregation to core ((d / 2) mod 2). Each destination's flows from every other pod take one
    // core switch, and the four destinations of a residue class share it.
    let text = |ecmp: &str| {
        let list: Vec<String> =
            (0..16u32).map(|d| format!("{{ src = {}, dst = {d}, size = \"200KB\", start = \"0us\" }}", (d + 4) % 16)).collect();
        format!(
            "seed = 2\nstop = {{ all_flows_done = true, max_time = \"10ms\" }}\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink = {{ rate = \"40Gbps\", delay = \"1us\" }}\n\
             [switch]\nmtu = 1000\necmp = \"{ecmp}\"\ncredit = {{ vl_buffer = \"64KB\" }}\n[host.transport]\nkind = \"rdma\"\ncc = \"dcqcn\"\n\
             [[traffic]]\nkind = \"flows\"\nlist = [{}]\n",
            list.join(", ")
        )
    };
    let r = run_toml(&text("d_mod_k")).unwrap();
    assert_eq!(r.meta.flows_finished, 16);
    // Bytes each core switch sent: with D-mod-k every core carries exactly 4 of the 16 flows.
    let cores: Vec<u64> = (0..4)
        .map(|c| {
            let n = r.meta.node_names.iter().position(|x| *x == format!("core{c}")).unwrap() as u32;
            r.ports.iter().filter(|p| p.node == n).map(|p| p.tx_bytes).sum()
        })
        .collect();
    let min = *cores.iter().min().unwrap();
    let max = *cores.iter().max().unwrap();
    assert!(min > 0 && max - min < max / 50, "core bytes {cores:?}");
    // Deterministic by destination: another seed gives the same core loads.
    let again = run_toml(&text("d_mod_k").replace("seed = 2", "seed = 9")).unwrap();
    let again: Vec<u64> = (0..4)
        .map(|c| {
            let n = again.meta.node_names.iter().position(|x| *x == format!("core{c}")).unwrap() as u32;
            again.ports.iter().filter(|p| p.node == n).map(|p| p.tx_bytes).sum()
        })
        .collect();
    assert_eq!(cores, again);
}

#[test]
fn bad_credit_input_names_the_field() {
    let err = |sw: &str| Sim::from_toml(&star(3, sw, &incast(2, "10KB"), "{ time = \"1ms\" }")).err().expect("an error").to_string();
    assert!(err("credit = { vl_buffer = \"64KB\", vls = 2 }").contains("switch.credit.vls"));
    assert!(err("credit = { vl_buffer = \"64KB\" }\nbuffer = \"1MB\"").contains("switch.buffer"));
    assert!(err("credit = { vl_buffer = \"64KB\", typo = 1 }").contains("typo"));
    // The buffer must hold one MTU's blocks: 1000 B packets are 16 blocks, 1024 B, and no byte less.
    assert!(err("credit = { vl_buffer = \"1023B\" }").contains("switch.credit.vl_buffer"));
    assert!(Sim::from_toml(&star(3, "credit = { vl_buffer = \"1024B\" }", &incast(2, "10KB"), "{ time = \"1ms\" }")).is_ok());
    let rr = star(3, IB, &incast(2, "10KB"), "{ time = \"1ms\" }") + "[host.nic]\nscheduling = \"round_robin\"\n";
    assert!(Sim::from_toml(&rr).err().unwrap().to_string().contains("host.nic.scheduling"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random credit-controlled fabrics and incasts: no drop, bytes conserved, and every credit accounted
    /// for at several instants and at the end.
    #[test]
    fn credits_are_conserved_on_random_fabrics(
        senders in 2u32..10,
        size_kb in 4u64..400,
        vl_kb in 2u64..128,
        leaf_spine in any::<bool>(),
        cc in 0usize..3,
    ) {
        let cc = ["cc = \"dcqcn\"", "cc = \"dcqcn\"\ntcd = true", "cc = \"timely\""][cc];
        let topo = if leaf_spine {
            "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 6\nhost_link = { rate = \"25Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"25Gbps\", delay = \"1us\" }".to_string()
        } else {
            "kind = \"star\"\nhosts = 12\nlink = { rate = \"25Gbps\", delay = \"1us\" }".to_string()
        };
        let senders: Vec<String> = (1..=senders).map(|h| h.to_string()).collect();
        let aqm = if cc.contains("tcd") { "aqm = { kind = \"tcd\" }\n" } else { "aqm = { kind = \"red\", kmin = \"5KB\", kmax = \"50KB\", pmax = 0.1, non_ect = \"pass\" }\n" };
        let text = format!(
            "seed = 5\nstop = {{ all_flows_done = true, max_time = \"20ms\" }}\n[topology]\n{topo}\n[switch]\nmtu = 1000\n{aqm}credit = {{ vl_buffer = \"{vl_kb}KB\" }}\n\
             [host.transport]\nkind = \"rdma\"\n{cc}\n[[traffic]]\nkind = \"incast\"\nsenders = [{}]\nreceiver = 0\nsize = \"{size_kb}KB\"\nat = \"0us\"\n",
            senders.join(", ")
        );
        let mut sim = Sim::from_toml(&text).unwrap();
        for t in [3 * US, 30 * US, 300 * US] {
            sim.run_until(t);
            prop_assert_eq!(sim.credit_audit(), Some(Ok(())));
        }
        sim.run_until(20_000 * US);
        prop_assert_eq!(sim.credit_audit(), Some(Ok(())));
        let r = sim.run();
        prop_assert!(r.meta.failure.is_none());
        prop_assert_eq!(r.meta.drops.total(), 0);
        prop_assert!(r.meta.conservation.holds());
    }
}

#[test]
fn a_dequeue_drop_in_a_credit_fabric_fails_the_run_naming_the_packets_priority() {
    // Priority 2 on one-queue switches (VL 0): a controller switches CoDel to drop mode, and its first
    // drop at dequeue fails the run, naming the packet's priority and the queue's counts.
    let sw = "credit = { vl_buffer = \"64KB\" }\naqm = { kind = \"codel\", target = \"10us\", interval = \"100us\", non_ect = \"pass\" }\n\
              controller = { kind = \"schedule\", changes = [{ at = \"1ms\", aqm = { kind = \"codel\", target = \"1us\", interval = \"20us\", mode = \"drop\" } }] }";
    let flows = "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 0, size = \"10MB\", priority = 2 }, { src = 2, dst = 0, size = \"10MB\", priority = 2 }]\n";
    let text = common::star(3, sw, "kind = \"tcp\"\ncc = \"reno\"", flows, "{ time = \"5ms\" }");
    let r = run_toml(&text).unwrap();
    let msg = r.meta.failure.clone().expect("the drop fails the run");
    assert!(msg.contains("a lossless packet was dropped at sw0 port 0 priority 2 (its AQM dropped it at dequeue; 1 drops,"), "{msg}");
    assert_eq!(r.meta.drops.aqm, 1);
}
