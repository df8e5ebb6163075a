//! RoCE with DCQCN (`transport = { kind = "rdma" }`) through the whole simulator: go-back-N under link
//! loss, convergence to a fair share behind one RED-marking bottleneck, determinism, bad input.

use dcnlab_sim::records::Records;
use dcnlab_sim::{run_toml, Sim};

const MS: u64 = 1_000_000_000; // ps

/// `n` long-lived RDMA flows from hosts 0…n−1 to host n of a star (one switch): every link `rate`, 1 µs
/// delay. Two switch queues under strict priority: ACKs/NACKs/CNPs in queue 0 (drop-tail), data in
/// queue 1 with the DCQCN paper's instantaneous RED (Kmin 5 KB, Kmax 200 KB, Pmax 1 %). Delivered
/// bytes are traced every `trace_ms`; the bottleneck queue is sampled every 100 µs.
fn incast(n: u32, rate: &str, transport: &str, stop_ms: u64, trace_ms: u64, seed: u64) -> String {
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
aqm = [{{ kind = "droptail" }}, {{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01 }}]
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

#[test]
fn smoke() {
    let text = incast(2, "40Gbps", "{ kind = \"rdma\" }", 20, 1, 1);
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
