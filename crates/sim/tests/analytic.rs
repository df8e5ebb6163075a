//! Analytical checks: DCTCP's queue oscillation and utilisation (Alizadeh, Javanmard, Prabhakar,
//! "Analysis of DCTCP", SIGMETRICS 2011), fairness, and Reno's square-root law.

use dcnlab_sim::run_toml;

const PKT: f64 = 1500.0; // on-wire bytes of a full segment (MTU 1500)

struct Dumbbell {
    q_p01: f64,
    q_p99: f64,
    util: f64,
    jain: f64,
    rates: Vec<f64>,
}

/// N long-lived flows over a 10 Gbps bottleneck with base RTT ≈ `rtt_us`.
fn dctcp_dumbbell(n: u32, k_pkts: u32, rtt_us: u32, seed: u64) -> Dumbbell {
    let hop = rtt_us as f64 / 4.0; // one-way = host link + bottleneck + host link ≈ rtt/2
    let flows: Vec<String> = (0..n)
        .map(|i| format!("{{ src = {i}, dst = {n}, size = \"inf\", start = \"{}us\" }}", i * 7))
        .collect();
    let trace: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let text = format!(
        r#"
seed = {seed}
stop = {{ time = "300ms" }}
[topology]
kind = "dumbbell"
left = {n}
right = 1
host_link = {{ rate = "100Gbps", delay = "{h}ns" }}
bottleneck_link = {{ rate = "10Gbps", delay = "{b}ns" }}
[switch]
buffer = "20MB"
aqm = {{ kind = "dctcp_red", threshold = "{k_pkts}pkt" }}
[host]
transport = {{ kind = "tcp", cc = "dctcp", min_rto = "10ms" }}
[[traffic]]
kind = "flows"
list = [{flows}]
[record]
queue_sample_interval = "2us"
link_sample_interval = "1ms"
queues = [{{ node = "left", port = {n} }}]
trace_flows = [{trace}]
trace_interval = "50ms"
"#,
        h = (hop * 1000.0) as u64 / 2,
        b = (hop * 1000.0) as u64,
        flows = flows.join(", "),
        trace = trace.join(", "),
    );
    let r = run_toml(&text).unwrap();
    let warm = 100_000_000_000u64; // 100 ms in ps
    let mut q: Vec<f64> = r.queues.iter().filter(|s| s.time > warm).map(|s| s.bytes as f64 / PKT).collect();
    q.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| q[((q.len() - 1) as f64 * p) as usize];
    let util: Vec<f64> = r.links.iter().filter(|l| l.time > warm).map(|l| l.utilization).collect();
    let util = util.iter().sum::<f64>() / util.len() as f64;
    // Per-flow goodput between 100 ms and 300 ms from delivered bytes.
    let at = |t: u64, f: u32| r.flow_trace.iter().find(|x| x.time == t && x.flow_id == f).unwrap().delivered_bytes;
    let rates: Vec<f64> = (0..n).map(|f| (at(300_000_000_000, f) - at(100_000_000_000, f)) as f64 * 8.0 / 0.2).collect();
    let s: f64 = rates.iter().sum();
    let s2: f64 = rates.iter().map(|x| x * x).sum();
    Dumbbell { q_p01: pct(0.01), q_p99: pct(0.99), util, jain: s * s / (n as f64 * s2), rates }
}

#[test]
fn dctcp_queue_oscillation_matches_model() {
    // C·RTT at 10 Gbps, 100 µs ≈ 83 packets; K = 20 ≥ C·RTT/7 ≈ 12.
    let (k, rtt) = (20.0, 100.0);
    let bdp = 10e9 * rtt * 1e-6 / 8.0 / PKT;
    for n in [2u32, 10] {
        let d = dctcp_dumbbell(n, k as u32, rtt as u32, 1);
        let nf = n as f64;
        let qmax = k + nf;
        let a = 0.5 * (2.0 * nf * (bdp + k)).sqrt();
        let qmin = qmax - a;
        eprintln!(
            "N={n}: queue p1={:.1} p99={:.1} pkts; model Qmin={qmin:.1} Qmax={qmax:.1} (A={a:.1}); util={:.4}; jain={:.4}; rates={:?}",
            d.q_p01, d.q_p99, d.util, d.jain, d.rates
        );
        // Tolerance: the fluid model ignores packet granularity and per-window sampling; we accept the
        // peak within ±30% of K + N and the measured amplitude within a factor 0.5–1.6 of A.
        assert!((d.q_p99 - qmax).abs() <= 0.3 * qmax, "N={n}: peak {} vs K+N {}", d.q_p99, qmax);
        let amp = d.q_p99 - d.q_p01;
        assert!(amp >= 0.5 * a && amp <= 1.6 * a, "N={n}: amplitude {amp} vs A {a}");
        assert!(d.util > 0.99, "N={n}: utilisation {}", d.util);
        assert!(d.jain >= 0.99, "N={n}: Jain {}", d.jain);
    }
}

#[test]
fn dctcp_full_utilisation_needs_k_above_bdp_over_7() {
    // RTT 200 µs: C·RTT ≈ 167 packets, C·RTT/7 ≈ 24. With K = 30 the model's Qmin = K + N − A ≈ 18 > 0:
    // the queue never drains and the link stays busy. With K = 2, Qmin ≈ −9: the queue empties every
    // cycle and the link idles for part of it.
    let good = dctcp_dumbbell(2, 30, 200, 2);
    let bad = dctcp_dumbbell(2, 2, 200, 2);
    eprintln!(
        "K=30: util {:.4}, queue p1 {:.1}; K=2: util {:.4}, queue p1 {:.1}",
        good.util, good.q_p01, bad.util, bad.q_p01
    );
    assert!(good.util > 0.999 && good.q_p01 > 0.0);
    assert!(bad.q_p01 == 0.0, "the queue must drain with K below C·RTT/7");
    assert!(bad.util < 0.995 && bad.util < good.util);
}

/// One Reno flow on a path with random loss p, no congestion: throughput vs MSS·√(3/2)/(RTT·√p).
#[test]
fn reno_square_root_law() {
    for (p, seed) in [(0.0005f64, 1u64), (0.002, 2)] {
        let text = format!(
            r#"
seed = {seed}
stop = {{ time = "4s" }}
[topology]
kind = "dumbbell"
left = 1
right = 1
host_link = {{ rate = "100Gbps", delay = "1us" }}
bottleneck_link = {{ rate = "100Gbps", delay = "48us", loss = {p} }}
[switch]
buffer = "50MB"
[host]
transport = {{ kind = "tcp", cc = "reno", min_rto = "20ms" }}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 1, size = "inf" }}]
[record]
trace_flows = [0]
trace_interval = "500ms"
"#
        );
        let r = run_toml(&text).unwrap();
        let at = |t: u64| r.flow_trace.iter().find(|x| x.time == t).unwrap().delivered_bytes;
        let thr = (at(4_000_000_000_000) - at(500_000_000_000)) as f64 * 8.0 / 3.5;
        let rtt = 100e-6;
        let mss = 1460.0 * 8.0;
        let model = mss * (1.5f64).sqrt() / (rtt * p.sqrt());
        eprintln!("p={p}: throughput {:.3} Gbps, model {:.3} Gbps, ratio {:.3}", thr / 1e9, model / 1e9, thr / model);
        // The square-root law is a periodic-loss approximation; random losses and NewReno's recovery
        // put real throughput within about ±30% of it.
        assert!((thr / model - 1.0).abs() < 0.3, "p={p}: ratio {}", thr / model);
    }
}
