//! Incast with drop-tail vs DCTCP-RED; determinism and conservation on a leaf-spine web-search run.

use dcnlab_sim::run_toml;

fn incast(cc: &str, aqm: &str) -> dcnlab_sim::Records {
    // 40 → 1 into a 100-packet port buffer, 10 queries 100 ms apart, 64 KB per sender. The initial window
    // is 2 segments (the DCTCP paper's era): with 10, the first window alone (400 packets) overflows any
    // 100-packet buffer before any AQM can act.
    let text = format!(
        r#"
stop = {{ all_flows_done = true, max_time = "5s" }}
[topology]
kind = "star"
hosts = 41
link = {{ rate = "10Gbps", delay = "5us" }}
[switch]
port_buffer = "100pkt"
aqm = {aqm}
[host]
transport = {{ kind = "tcp", cc = "{cc}", min_rto = "10ms", init_cwnd = 2 }}
[[traffic]]
kind = "incast"
senders = "0-39"
receiver = 40
size = "64KB"
at = "1ms"
repeat = 10
period = "100ms"
"#
    );
    run_toml(&text).unwrap()
}

#[test]
fn incast_drops_and_timeouts_with_droptail_far_fewer_with_dctcp_red() {
    let dt = incast("reno", "{ kind = \"droptail\" }");
    let dc = incast("dctcp", "{ kind = \"dctcp_red\", threshold = \"20pkt\" }");
    let to = |r: &dcnlab_sim::Records| r.flows.iter().map(|f| f.timeouts as u64).sum::<u64>();
    let (d1, d2) = (dt.meta.drops.total(), dc.meta.drops.total());
    let (t1, t2) = (to(&dt), to(&dc));
    eprintln!("drop-tail: {d1} drops, {t1} timeouts; DCTCP-RED: {d2} drops, {t2} timeouts");
    assert!(d1 > 500 && t1 >= 10, "drop-tail must overflow and time out");
    assert!(d2 * 10 <= d1 && t2 * 10 <= t1, "DCTCP-RED must have far fewer drops and timeouts");
    assert!(dt.flows.iter().chain(dc.flows.iter()).all(|f| f.finish.is_some()));
    assert!(dt.meta.conservation.holds() && dc.meta.conservation.holds());
}

fn leaf_spine(seed: u64, aqm: &str) -> String {
    format!(
        r#"
name = "determinism"
seed = {seed}
stop = {{ all_flows_done = true, max_time = "3s" }}
[topology]
kind = "leaf_spine"
spines = 4
leaves = 4
hosts_per_leaf = 8
host_link = {{ rate = "10Gbps", delay = "1us" }}
fabric_link = {{ rate = "40Gbps", delay = "1us" }}
[switch]
buffer = "2MB"
aqm = {aqm}
[host]
transport = {{ kind = "tcp", cc = "dctcp", min_rto = "5ms" }}
extra_delay = {{ kind = "uniform", min = "0us", max = "20us", per = "flow" }}
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.6
flows = 2500
[record]
queue_sample_interval = "100us"
queues = "all"
trace_flows = [0, 5, 17]
"#
    )
}

#[test]
fn same_seed_same_records_and_conservation() {
    let text = leaf_spine(7, "{ kind = \"dctcp_red\", threshold = \"65KB\" }");
    let a = run_toml(&text).unwrap();
    let b = run_toml(&text).unwrap();
    assert_eq!(a.flows.len(), 2500);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.queues, b.queues);
    assert_eq!(a.links, b.links);
    assert_eq!(a.flow_trace.len(), b.flow_trace.len());
    for (x, y) in a.flow_trace.iter().zip(&b.flow_trace) {
        assert_eq!(format!("{x:?}"), format!("{y:?}"));
    }
    assert_eq!(a.meta.events, b.meta.events);
    assert_eq!(a.meta.packet_hops, b.meta.packet_hops);
    assert_eq!(a.meta.drops, b.meta.drops);
    assert!(a.meta.conservation.holds(), "{:?}", a.meta.conservation);
    // Every receiver holds its last byte; what can still be in flight are the last pure ACKs (64 B each).
    let c = a.meta.conservation;
    assert_eq!(c.in_flight_bytes, 64 * c.in_flight_packets, "only ACKs may be in flight: {c:?}");
    assert_eq!(a.meta.flows_finished, 2500);
    for f in &a.flows {
        assert!(f.slowdown().unwrap() >= 1.0, "flow {} slowdown {:?}", f.flow_id, f.slowdown());
    }
    // A different seed gives different flows.
    let c = run_toml(&leaf_spine(8, "{ kind = \"dctcp_red\", threshold = \"65KB\" }")).unwrap();
    assert_ne!(a.flows[0..50], c.flows[0..50]);
}

#[test]
fn traffic_is_identical_across_aqms() {
    // Common random numbers: only the AQM differs, so the generated flows (src, dst, size, start) match.
    let a = run_toml(&leaf_spine(3, "{ kind = \"dctcp_red\", threshold = \"65KB\" }")).unwrap();
    let b = run_toml(&leaf_spine(3, "{ kind = \"dctcp_red\", threshold = \"20KB\" }")).unwrap();
    let key = |r: &dcnlab_sim::Records| r.flows.iter().map(|f| (f.src, f.dst, f.size, f.start, f.ideal_fct)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b));
    assert_ne!(
        a.flows.iter().map(|f| f.finish).collect::<Vec<_>>(),
        b.flows.iter().map(|f| f.finish).collect::<Vec<_>>()
    );
}

#[test]
fn conservation_with_drops_and_loss_mid_run() {
    // Stop at a fixed time with drops (small buffers) and random loss: sent = delivered + dropped + in flight.
    let text = r#"
stop = { time = "30ms" }
[topology]
kind = "fat_tree"
k = 4
link = { rate = "10Gbps", delay = "2us", loss = 0.001 }
[switch]
port_buffer = "30pkt"
[host]
transport = { kind = "tcp", cc = "reno", min_rto = "1ms" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.8
flows = 100000
"#;
    let r = run_toml(text).unwrap();
    let c = r.meta.conservation;
    assert!(c.holds(), "{c:?}");
    assert!(c.in_flight_packets > 0);
    assert!(r.meta.drops.port_buffer > 0 && r.meta.drops.link_loss > 0, "{:?}", r.meta.drops);
    assert_eq!(r.meta.drops.total(), c.dropped_packets);
    assert!(r.flows.iter().any(|f| f.finish.is_none()));
}
