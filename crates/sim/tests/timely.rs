//! TIMELY (`transport = { kind = "rdma", cc = "timely" }`) through the whole simulator: two flows behind
//! one bottleneck converge to a fair share with the queue bounded by TIMELY's delay targets; the RTT
//! samples are real round trips.

use dcnlab_sim::records::Records;
use dcnlab_sim::run_toml;

const US: u64 = 1_000_000;
const MS: u64 = 1_000 * US;

/// Two long-lived flows h0 → h2 and h1 → h2 on a 10 Gb/s star (1 µs links), the second starting 1 ms
/// later; delivered bytes traced every ms.
fn two_flows(preset: &str) -> Records {
    run_toml(&format!(
        r#"
seed = 1
stop = {{ time = "30ms" }}
[topology]
kind = "star"
hosts = 3
link = {{ rate = "10Gbps", delay = "1us" }}
[switch]
port_buffer = "4MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "droptail" }}]
[host]
transport = {{ kind = "rdma", cc = "timely", preset = "{preset}" }}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 2, size = "inf", priority = 1 }}, {{ src = 1, dst = 2, size = "inf", start = "1ms", priority = 1 }}]
[record]
trace_flows = [0, 1]
trace_interval = "1ms"
queue_sample_interval = "50us"
queues = [{{ node = "sw0", port = 2 }}]
rtt_samples = true
"#
    ))
    .unwrap()
}

fn delivered(r: &Records, flow: u32, t: u64) -> f64 {
    r.flow_trace.iter().filter(|x| x.flow_id == flow && x.time <= t).last().unwrap().delivered_bytes as f64
}

#[test]
fn two_timely_flows_share_the_bottleneck() {
    for preset in ["timely_ref", "timely_hpcc"] {
        let r = two_flows(preset);
        assert!(r.meta.conservation.holds());
        assert_eq!(r.meta.drops.buffer, 0, "{preset}: TIMELY keeps the queue within the buffer");
        // Over the last 15 ms each flow gets 40–60 % and together ≥ 80 % of the 10 Gb/s link (HPCC's
        // per-RTT variant oscillates around its targets: 86 % measured; the reference one 98 %).
        let (a, b) = (delivered(&r, 0, 30 * MS) - delivered(&r, 0, 15 * MS), delivered(&r, 1, 30 * MS) - delivered(&r, 1, 15 * MS));
        let link = 10e9 / 8.0 * 0.015;
        eprintln!("{preset}: {:.2} and {:.2} of the link", a / link, b / link);
        assert!((a + b) / link > 0.8, "{preset}: {}", (a + b) / link);
        assert!((a / (a + b) - 0.5).abs() < 0.1, "{preset}: shares {a} {b}");
        // The RTT samples: at least the base RTT, and the queue they see is what TIMELY aims at (below
        // T_high + the base RTT).
        let rtts: Vec<u64> = r.rtt_samples.iter().filter(|s| s.time > 15 * MS).map(|s| s.rtt).collect();
        assert!(!rtts.is_empty());
        let base = r.flows[0].base_rtt;
        let t_high = if preset == "timely_ref" { MS } else { 500 * US };
        assert!(rtts.iter().all(|&x| x >= base * 9 / 10), "{preset}: an RTT below the base RTT {base}");
        let max_q = r.queues.iter().filter(|q| q.time > 15 * MS).map(|q| q.bytes).max().unwrap();
        eprintln!("{preset}: max queue {max_q} B, median RTT {} us", { let mut v = rtts.clone(); v.sort(); v[v.len() / 2] / US });
        assert!((max_q as f64) < 10e9 / 8.0 * (t_high as f64 / 1e12), "{preset}: queue {max_q}");
    }
}

#[test]
fn keys_of_the_other_rate_control_are_refused_by_name() {
    let base = |t: &str| format!("stop = {{ time = \"1ms\" }}\n[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[host]\ntransport = {t}\n[[traffic]]\nkind = \"flows\"\nlist = [{{ src = 0, dst = 1, size = \"1MB\" }}]\n");
    let err = |t: &str| match dcnlab_sim::Sim::from_toml(&base(t)) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {t}"),
    };
    let e = err(r#"{ kind = "rdma", cc = "timely", preset = "dcqcn_hpcc" }"#);
    assert!(e.contains("host.transport.preset") && e.contains("timely_ref"), "{e}");
    let e = err(r#"{ kind = "rdma", cc = "timely", g = 0.1 }"#);
    assert!(e.contains("host.transport.g") && e.contains("dcqcn"), "{e}");
    let e = err(r#"{ kind = "rdma", cc = "dcqcn", t_high = "1ms" }"#);
    assert!(e.contains("host.transport.t_high"), "{e}");
    let e = err(r#"{ kind = "rdma", cc = "timely", t_low = "2ms" }"#);
    assert!(e.contains("host.transport.t_high"), "{e}");
    let e = err(r#"{ kind = "rdma", cc = "timely", ewma = 0 }"#);
    assert!(e.contains("host.transport.ewma"), "{e}");
    let e = err(r#"{ kind = "rdma", cc = "timely", min_rtt = "0us" }"#);
    assert!(e.contains("host.transport.min_rtt"), "{e}");
    assert!(dcnlab_sim::Sim::from_toml(&base(r#"{ kind = "rdma", cc = "timely", tcd = true, preset = "timely_hpcc" }"#)).is_ok());
}
