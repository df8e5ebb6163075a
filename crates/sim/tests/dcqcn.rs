//! RoCE with DCQCN (`transport = { kind = "rdma" }`) through the whole simulator: go-back-N under link
//! loss, convergence to a fair share behind one RED-marking bottleneck, determinism, bad input.

mod common;

use common::{jain, MS};
use dcnlab_sim::records::Records;
use dcnlab_sim::{run_toml, Sim};

/// `n` long-lived RDMA flows from hosts 0…n−1 to host n of a star (one switch): every link `rate`, 1 µs
/// delay. Two switch queues under strict priority: ACKs/NACKs/CNPs in queue 0 (drop-tail), data in
/// queue 1 with instantaneous RED `red` (`PAPER_RED`: the DCQCN paper's Kmin 5 KB, Kmax 200 KB, Pmax 1 %).
/// Delivered bytes are traced every `trace_ms`; the bottleneck queue is sampled every 100 µs.
fn incast(n: u32, rate: &str, transport: &str, red: &str, stop_ms: u64, trace_ms: u64, seed: u64) -> String {
    let flows: Vec<String> =
        (0..n).map(|i| format!("{{ src = {i}, dst = {n}, size = \"inf\", start = \"{}us\", priority = 1 }}", i * 3)).collect();
    let trace: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!(
        r#"
seed = {seed}
stop = {{ time = "{stop_ms}ms" }}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "{rate}", delay = "1us" }}
[switch]
port_buffer = "4MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "red", {red} }}]
[host]
transport = {transport}
[[traffic]]
kind = "flows"
list = [{flows}]
[record]
queue_sample_interval = "100us"
queues = [{{ node = "sw0", port = {n} }}]
trace_flows = [{trace}]
trace_interval = "{trace_ms}ms"
"#,
        hosts = n + 1,
        flows = flows.join(", "),
        trace = trace.join(", "),
    )
}

const PAPER_RED: &str = "kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01";
/// HPCC ns-3's `config.txt` values (100 KB / 400 KB / 20 % at 25 G) scaled to 40 G as its `run.py` does.
const HPCC_RED: &str = "kmin = \"160KB\", kmax = \"640KB\", pmax = 0.2";

/// Each traced flow's goodput (bits/s) between two trace times.
fn rates(r: &Records, n: u32, a_ms: u64, b_ms: u64) -> Vec<f64> {
    let at = |t: u64, f: u32| r.flow_trace.iter().find(|x| x.time == t * MS && x.flow_id == f).unwrap().delivered_bytes;
    (0..n).map(|f| (at(b_ms, f) - at(a_ms, f)) as f64 * 8.0 / ((b_ms - a_ms) as f64 / 1e3)).collect()
}


/// Goodput of a payload-full link: payload / wire bytes of a full packet (1456 + 44).
const PAYLOAD: f64 = 1456.0 / 1500.0;

/// `n` long-lived flows into one receiver at 40 Gb/s: over the last half of the run every flow has its
/// fair share (Jain ≥ 0.99), together they fill the link, and RED plus DCQCN keep the queue far below the
/// buffer (no drop).
fn converges(n: u32, transport: &str, red: &str, stop_ms: u64) {
    let text = incast(n, "40Gbps", transport, red, stop_ms, stop_ms / 2, 1);
    let r = run_toml(&text).unwrap();
    let x = rates(&r, n, stop_ms / 2, stop_ms);
    let total: f64 = x.iter().sum();
    let j = jain(&x);
    let qmax = r.queues.iter().filter(|q| q.time >= stop_ms / 2 * MS).map(|q| q.bytes).max().unwrap();
    let qmean = r.queues.iter().filter(|q| q.time >= stop_ms / 2 * MS).map(|q| q.bytes as f64).sum::<f64>()
        / r.queues.iter().filter(|q| q.time >= stop_ms / 2 * MS).count() as f64;
    let g: Vec<String> = x.iter().map(|v| format!("{:.2}", v / 1e9)).collect();
    eprintln!(
        "{n} flows {transport} RED {red}: Gb/s [{}], total {:.2} ({:.3} of payload line rate), Jain {j:.5}, queue mean {:.0} B max {qmax} B",
        g.join(", "),
        total / 1e9,
        total / (40e9 * PAYLOAD),
        qmean
    );
    assert!(j >= 0.99, "Jain {j} over the last half: {x:?}");
    assert!(total >= 0.9 * 40e9 * PAYLOAD, "total goodput {total}");
    assert!(qmax < 1_000_000, "queue up to {qmax} B");
    assert_eq!(r.meta.drops.port_buffer + r.meta.drops.aqm, 0);
}

// DCQCN converges slowly (g = 1/256: α moves by 0.4 % per CNP), so the runs are 200 ms long, 100 ms measured.
const PAPER: &str = "{ kind = \"rdma\", cc = \"dcqcn\", preset = \"dcqcn_paper\" }";
const HPCC: &str = "{ kind = \"rdma\", cc = \"dcqcn\", preset = \"dcqcn_hpcc\" }";

#[test]
fn two_flows_converge_to_a_fair_share_paper_preset() {
    converges(2, PAPER, PAPER_RED, 200);
}

#[test]
fn eight_flows_converge_to_a_fair_share_paper_preset() {
    converges(8, PAPER, PAPER_RED, 200);
}

#[test]
fn two_flows_converge_to_a_fair_share_hpcc_preset() {
    converges(2, HPCC, HPCC_RED, 200);
}

#[test]
fn eight_flows_converge_to_a_fair_share_hpcc_preset() {
    converges(8, HPCC, HPCC_RED, 200);
}

/// Every host of a 6-host star sends `size` to the next one (a ring), 40 Gb/s links with `loss` on each,
/// until every flow is done.
fn ring(loss: f64, size: &str, seed: u64) -> String {
    let flows: Vec<String> = (0..6).map(|i| format!("{{ src = {i}, dst = {}, size = \"{size}\", start = \"{}us\" }}", (i + 1) % 6, i)).collect();
    format!(
        r#"
seed = {seed}
stop = {{ all_flows_done = true, max_time = "1s" }}
[topology]
kind = "star"
hosts = 6
link = {{ rate = "40Gbps", delay = "1us", loss = {loss} }}
[switch]
port_buffer = "4MB"
aqm = {{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }}
[host]
transport = {{ kind = "rdma" }}
[[traffic]]
kind = "flows"
list = [{flows}]
"#,
        flows = flows.join(", ")
    )
}

#[test]
fn go_back_n_recovers_every_loss_and_nothing_is_resent_without_loss() {
    let lossy = run_toml(&ring(0.01, "2MB", 1)).unwrap();
    let (re, to): (u32, u32) = lossy.flows.iter().fold((0, 0), |(a, b), f| (a + f.retransmits, b + f.timeouts));
    eprintln!("loss 1 %: retransmits {re}, timeouts {to}, drops {:?}", lossy.meta.drops);
    assert!(lossy.flows.iter().all(|f| f.finish.is_some()), "every flow completes");
    assert!(lossy.meta.drops.link_loss > 0);
    assert!(re > 0);
    let clean = run_toml(&ring(0.0, "2MB", 1)).unwrap();
    assert!(clean.flows.iter().all(|f| f.finish.is_some()));
    assert!(clean.flows.iter().all(|f| f.retransmits == 0 && f.timeouts == 0));
}

#[test]
fn same_seed_same_flows_records() {
    let key = |r: &Records| r.flows.iter().map(|f| (f.flow_id, f.start, f.finish, f.retransmits, f.timeouts)).collect::<Vec<_>>();
    let a = run_toml(&ring(0.01, "1MB", 7)).unwrap();
    let b = run_toml(&ring(0.01, "1MB", 7)).unwrap();
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.meta.events, b.meta.events);
    let c = run_toml(&ring(0.01, "1MB", 8)).unwrap();
    assert_ne!(key(&a), key(&c), "another seed, other losses");
}

#[test]
fn a_flow_alone_takes_its_ideal_time_with_roce_headers() {
    // Paced at line rate, one packet in the NIC at a time: back to back on the wire, so the FCT is the
    // ideal pipeline's, computed with 44 header bytes (with TCP's 40 the ideal would be 0.27 % shorter).
    let text = r#"
stop = { all_flows_done = true, max_time = "1s" }
[topology]
kind = "star"
hosts = 2
link = { rate = "40Gbps", delay = "1us" }
[host]
transport = { kind = "rdma" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 1, size = "1MB", start = "0us" }]
"#;
    let r = run_toml(text).unwrap();
    let f = &r.flows[0];
    let slowdown = (f.finish.unwrap() - f.start) as f64 / f.ideal_fct as f64;
    eprintln!("fct {} ps, ideal {} ps, slowdown {slowdown}", f.finish.unwrap() - f.start, f.ideal_fct);
    assert!((1.0..1.0005).contains(&slowdown), "slowdown {slowdown}");
    assert_eq!(r.meta.transports, vec!["rdma:dcqcn(dcqcn_paper)".to_string()]);
}

/// The field and message of the error a transport table gives on a 10 Gb/s star.
fn bad_text(transport: &str) -> String {
    format!(
        r#"
stop = {{ time = "1ms" }}
[topology]
kind = "star"
hosts = 2
link = {{ rate = "10Gbps", delay = "1us" }}
[host]
transport = {transport}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 1, size = "1MB", start = "0us" }}]
"#
    )
}

fn bad(transport: &str) -> (String, String) {
    let text = bad_text(transport);
    match Sim::from_toml(&text) {
        Ok(_) => panic!("accepted {transport}"),
        Err(e) => {
            eprintln!("{transport}: {e}");
            (e.field.clone(), e.to_string())
        }
    }
}

#[test]
fn bad_input_names_the_field() {
    let (f, m) = bad(r#"{ kind = "rdma", preset = "dcqcn_fast" }"#);
    assert_eq!(f, "host.transport.preset");
    assert!(m.contains("dcqcn_paper") && m.contains("dcqcn_hpcc"), "{m}");
    let (f, m) = bad(r#"{ kind = "rdma", cc = "timelyy" }"#);
    assert_eq!(f, "host.transport.cc");
    assert!(m.contains("dcqcn"), "{m}");
    let (f, m) = bad(r#"{ kind = "rdma", rate_aii = "40Mbps" }"#);
    assert_eq!(f, "host.transport.rate_aii");
    assert!(m.contains("rate_ai"), "{m}");
    for (key, v) in [("rate_ai", "\"0Mbps\""), ("rate_hai", "\"-5Mbps\""), ("rate_min", "100"), ("cnp_interval", "\"50\"")] {
        let (f, _) = bad(&format!("{{ kind = \"rdma\", {key} = {v} }}"));
        assert_eq!(f, format!("host.transport.{key}"));
    }
    for g in ["0.0", "1.5", "-0.1"] {
        let (f, m) = bad(&format!("{{ kind = \"rdma\", g = {g} }}"));
        assert_eq!(f, "host.transport.g");
        assert!(m.contains("(0, 1]"), "{m}");
    }
    let (f, m) = bad(r#"{ kind = "rdma", rate_min = "20Gbps" }"#);
    assert_eq!(f, "host.transport.rate_min");
    assert!(m.contains("20000000000 bps exceeds the slowest host link (10000000000 bps)"), "{m}");
    // A rate_min equal to the slowest link is allowed; durations other than zero are taken as given.
    let ok = |t: &str| Sim::from_toml(&bad_text(t)).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(ok(r#"{ kind = "rdma", rate_min = "10Gbps" }"#), Ok(()));
    assert_eq!(ok(r#"{ kind = "rdma", rate_increase_timer = "100us", cnp_interval = "0us" }"#), Ok(()));
    for (key, v) in [("f", "0"), ("alpha_timer", "\"0us\""), ("rate_increase_timer", "\"0us\""), ("byte_counter", "\"0B\""),
        ("rate_on_first_cnp", "1.5"), ("rate_on_first_cnp", "0.0"), ("mss", "\"1500B\""), ("ack_interval", "0"), ("rto", "\"0us\""),
        ("control_priority", "8"), ("window", "\"100B\"")] {
        let (f, _) = bad(&format!("{{ kind = \"rdma\", {key} = {v} }}"));
        assert_eq!(f, format!("host.transport.{key}"));
    }
    // A traffic entry's own transport is named as such.
    let text = r#"
stop = { time = "1ms" }
[topology]
kind = "star"
hosts = 2
link = { rate = "10Gbps", delay = "1us" }
[[traffic]]
kind = "flows"
transport = { kind = "rdma", g = 2.0 }
list = [{ src = 0, dst = 1, size = "1MB", start = "0us" }]
"#;
    assert_eq!(Sim::from_toml(text).err().unwrap().field, "traffic[0].transport.g");
}

/// Eight DCQCN flows into one port of a lossless fabric whose XOFF (30 KB) sits far below RED's Kmax:
/// PFC pauses the senders' links as well as DCQCN cutting their rates; nothing is dropped, and the flows
/// still share the link fairly.
#[test]
fn dcqcn_over_pfc_converges_without_a_drop() {
    let n = 8;
    let text = incast(n, "40Gbps", PAPER, PAPER_RED, 200, 100, 1)
        .replace("port_buffer = \"4MB\"", "buffer = \"2MB\"\npfc = { priorities = [0, 1], xoff = \"30KB\" }")
        .replace("{ kind = \"red\", kmin", "{ kind = \"red\", non_ect = \"pass\", kmin");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.drops.total(), 0);
    let frames: u64 = r.ports.iter().map(|p| p.pause_frames_sent).sum();
    assert!(frames > 10, "PFC never paused ({frames} frames)");
    let x = rates(&r, n, 100, 200);
    let total: f64 = x.iter().sum();
    eprintln!("DCQCN over PFC: Jain {:.5}, total {:.2} Gb/s, {frames} PFC frames", jain(&x), total / 1e9);
    assert!(jain(&x) >= 0.99, "{x:?}");
    assert!(total >= 0.9 * 40e9 * PAYLOAD, "total goodput {total}");
}

/// TCP in a lossy priority and DCQCN in a lossless one share a 10 Gb/s port (DWRR, equal weights; RDMA's
/// ACKs and CNPs in lossless queue 0, its data in lossless queue 1, TCP in lossy queue 2). The small
/// shared buffer drops TCP packets; the lossless class loses none and never retransmits, and both classes
/// get their share of the link.
#[test]
fn tcp_lossy_and_dcqcn_lossless_share_a_link() {
    let text = r#"
seed = 4
stop = { all_flows_done = true, max_time = "200ms" }
[topology]
kind = "star"
hosts = 5
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "400KB"
queues = 3
scheduler = { kind = "dwrr", weights = [1, 1, 1] }
aqm = [{ kind = "droptail" }, { kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }, { kind = "droptail" }]
pfc = { priorities = [0, 1], xoff = "20KB" }
[host]
transport = { kind = "tcp", cc = "cubic" }
[[traffic]]
kind = "flows"
list = [{ src = 1, dst = 0, size = "10MB", priority = 1, tag = "rdma" }, { src = 2, dst = 0, size = "10MB", priority = 1, tag = "rdma" }]
transport = { kind = "rdma", cc = "dcqcn", control_priority = 0 }
[[traffic]]
kind = "flows"
list = [{ src = 3, dst = 0, size = "10MB", priority = 2, tag = "tcp" }, { src = 4, dst = 0, size = "10MB", priority = 2, tag = "tcp" }]
"#;
    let r = run_toml(text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.flows_finished, 4);
    assert!(r.meta.drops.buffer > 0, "TCP's class should drop: {:?}", r.meta.drops);
    let by = |tag: &str| r.flows.iter().filter(|f| r.tag_name(f.tag) == tag).collect::<Vec<_>>();
    assert!(by("rdma").iter().all(|f| f.retransmits == 0));
    assert!(by("tcp").iter().map(|f| f.retransmits).sum::<u32>() > 0);
    // Drops happen only at queue 2 (TCP's), never at the lossless queues.
    let sw_to_h0 = r.ports.iter().find(|p| r.meta.node_names[p.node as usize] == "sw0" && p.port == 0).unwrap();
    assert!(sw_to_h0.drops > 0);
    // While both classes send, each gets about half of the link: 20 MB of each take ~2 × 16 ms; neither
    // class finishes before the other has had a real share.
    let done = |tag: &str| by(tag).iter().map(|f| f.finish.unwrap()).max().unwrap();
    let (rd, tc) = (done("rdma") as f64 / MS as f64, done("tcp") as f64 / MS as f64);
    eprintln!("RDMA done at {rd:.1} ms, TCP at {tc:.1} ms, drops {:?}", r.meta.drops);
    assert!(rd > 20.0 && tc > 20.0, "one class starved the other: RDMA {rd:.1} ms, TCP {tc:.1} ms");
}
