//! RoCE with DCQCN (`transport = { kind = "rdma" }`) through the whole simulator: go-back-N under link
//! loss, convergence to a fair share behind one RED-marking bottleneck, determinism, bad input.

use dcnlab_sim::records::Records;
use dcnlab_sim::{run_toml, Sim};

const MS: u64 = 1_000_000_000; // ps

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

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
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

#[test]
fn smoke() {
    let text = incast(2, "40Gbps", "{ kind = \"rdma\" }", PAPER_RED, 20, 1, 1);
    let r = run_toml(&text).unwrap();
    for t in 1..=20 {
        let row: Vec<String> = r.flow_trace.iter().filter(|x| x.time == t * MS).map(|x| format!("{:.2}G a={:.3} d={}", x.rate_bps / 1e9, x.alpha, x.delivered_bytes)).collect();
        eprintln!("{t} ms: {}", row.join(" | "));
    }
    let rt = rates(&r, 2, 10, 20);
    eprintln!("rates {rt:?} jain {}", jain(&rt));
    let qmax = r.queues.iter().map(|q| q.bytes).max().unwrap();
    eprintln!("queue max {qmax}, drops {:?}", r.meta.drops);
    let _ = Sim::from_toml(&text).unwrap();
}
