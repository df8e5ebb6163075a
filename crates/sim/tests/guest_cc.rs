//! The guest congestion controls of AC/DC (CUBIC, Vegas, Illinois, HighSpeed) through the whole simulator:
//! what each one's definition predicts on a single bottleneck.

use dcnlab_sim::records::Records;
use dcnlab_sim::run_toml;

const PKT: f64 = 1500.0; // bytes on the wire of a full segment (MTU 1500)
const MS: u64 = 1_000_000_000; // ps

/// `n` long-lived flows of one transport from the left of a dumbbell to its one right host: 100 Gbps host
/// links, a 10 Gbps bottleneck, base RTT ≈ 100 µs (C·RTT ≈ 83 packets), a drop-tail bottleneck port of
/// `buffer` packets, no marking. The bottleneck queue is sampled every 10 µs, delivered bytes every 10 ms.
fn dumbbell(n: u32, transport: &str, buffer: u32, stop_ms: u64) -> Records {
    let flows: Vec<String> =
        (0..n).map(|i| format!("{{ src = {i}, dst = {n}, size = \"inf\", start = \"{}us\" }}", i * 7)).collect();
    let trace: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let text = format!(
        r#"
seed = 1
stop = {{ time = "{stop_ms}ms" }}
[topology]
kind = "dumbbell"
left = {n}
right = 1
host_link = {{ rate = "100Gbps", delay = "12500ns" }}
bottleneck_link = {{ rate = "10Gbps", delay = "25us" }}
[switch]
port_buffer = "{buffer}pkt"
[host]
transport = {transport}
[[traffic]]
kind = "flows"
list = [{flows}]
[record]
queue_sample_interval = "10us"
link_sample_interval = "1ms"
queues = [{{ node = "left", port = {n} }}]
trace_flows = [{trace}]
trace_interval = "10ms"
"#,
        flows = flows.join(", "),
        trace = trace.join(", "),
    );
    run_toml(&text).unwrap()
}

/// Mean bottleneck queue (packets) from `from_ms` on.
fn mean_queue(r: &Records, from_ms: u64) -> f64 {
    let q: Vec<f64> = r.queues.iter().filter(|s| s.time >= from_ms * MS).map(|s| s.bytes as f64 / PKT).collect();
    let (lo, hi) = q.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    eprintln!("  queue from {from_ms} ms: {} samples, min {lo:.2}, max {hi:.2} packets", q.len());
    q.iter().sum::<f64>() / q.len() as f64
}

/// Goodput of each flow (bits/s) between two trace times.
fn rates(r: &Records, n: u32, a_ms: u64, b_ms: u64) -> Vec<f64> {
    let at = |t: u64, f: u32| r.flow_trace.iter().find(|x| x.time == t * MS && x.flow_id == f).unwrap().delivered_bytes;
    (0..n).map(|f| (at(b_ms, f) - at(a_ms, f)) as f64 * 8.0 / ((b_ms - a_ms) as f64 / 1e3)).collect()
}

#[test]
fn vegas_holds_between_alpha_and_beta_packets_queued_where_reno_fills_the_buffer() {
    // 60–120 ms: Reno's SACK-less recovery from its slow-start overshoot is over by 60 ms.
    let vegas = dumbbell(1, "{ kind = \"tcp\", cc = \"vegas\" }", 200, 120);
    let reno = dumbbell(1, "{ kind = \"tcp\", cc = \"reno\" }", 200, 120);
    let (qv, qr) = (mean_queue(&vegas, 60), mean_queue(&reno, 60));
    // Payload goodput over the line rate (1460/1500 = 0.973 is a full link).
    let util = |r: &Records| rates(r, 1, 60, 120)[0] / 10e9;
    eprintln!("mean queue 60–120 ms: vegas {qv:.2} pkts (goodput {:.3} of line), reno {qr:.1} pkts ({:.3})", util(&vegas), util(&reno));
    // diff = cwnd·(rtt − baseRTT)/rtt is exactly the flow's own bytes queued at the bottleneck, so B4 holds it in
    // [α, β] = [2, 4] packets. The margin of one packet either side: cwnd moves by one MSS once per RTT, and
    // the sampled queue excludes the packet on the wire, which the RTT samples include.
    assert!((1.0..=5.0).contains(&qv), "Vegas mean queue {qv} packets");
    // A full link: a queue that never empties.
    assert!(util(&vegas) > 0.95, "Vegas goodput {}", util(&vegas));
    // Reno fills the 200-packet buffer until it drops: its mean queue is tens of packets.
    assert!(qr > 50.0, "Reno mean queue {qr}");
    // Vegas with α = β = 10 holds about ten packets instead.
    let v10 = dumbbell(1, "{ kind = \"tcp\", cc = { kind = \"vegas\", alpha = 10, beta = 10 } }", 200, 120);
    let q10 = mean_queue(&v10, 60);
    eprintln!("vegas alpha = beta = 10: {q10:.2} pkts");
    assert!((9.0..=11.0).contains(&q10), "Vegas(10, 10) mean queue {q10}");
}

/// One flow of each loss-based control on the 200-packet drop-tail bottleneck. Its window saws between
/// W_max = C·RTT + buffer ≈ 283 packets, where a drop comes, and (1 − b)·W_max, so the queue's floor is
/// (1 − b)·W_max − C·RTT with b the control's decrease at W_max: Reno ½, CUBIC 1 − β = 0.3, HighSpeed
/// b(283) = 98/256 (table row 221–347), Illinois β_max = ½ (a full buffer is delay ≥ 8·dm/10).
#[test]
fn each_loss_based_controls_decrease_sets_the_queues_floor() {
    let bdp = 10e9 * 100e-6 / 8.0 / PKT;
    let w_max = bdp + 200.0;
    for (cc, b) in [("reno", 0.5), ("cubic", 0.3), ("highspeed", 98.0 / 256.0), ("illinois", 0.5)] {
        let r = dumbbell(1, &format!("{{ kind = \"tcp\", cc = \"{cc}\" }}"), 200, 300);
        let floor = r.queues.iter().filter(|s| s.time >= 100 * MS).map(|s| s.bytes as f64 / PKT).fold(f64::MAX, f64::min);
        let want = (1.0 - b) * w_max - bdp;
        let util = rates(&r, 1, 100, 300)[0] / 10e9;
        eprintln!("{cc}: queue floor {floor:.1} packets (predicted {want:.1}), goodput {util:.3} of line");
        // ±3 packets: the window also holds the packets being serialised on each hop, and the floor is
        // read from samples 10 µs (8 packet times) apart.
        assert!((floor - want).abs() <= 3.0, "{cc}: floor {floor} vs {want}");
        assert!(util > 0.97, "{cc}: goodput {util}"); // 1460/1500 = 0.973 is a full link
    }
}

/// Two flows of one control share the bottleneck: the link stays full and Jain's index ≥ 0.9 over
/// 100–300 ms (measured: 0.94–1.00). Two Vegas flows keep between 2α and 2β packets queued in all.
#[test]
fn two_flows_of_each_guest_control_fill_and_share_the_bottleneck() {
    for cc in ["cubic", "vegas", "illinois", "highspeed"] {
        let r = dumbbell(2, &format!("{{ kind = \"tcp\", cc = \"{cc}\" }}"), 200, 300);
        let v = rates(&r, 2, 100, 300);
        let (s, s2) = (v[0] + v[1], v[0] * v[0] + v[1] * v[1]);
        let jain = s * s / (2.0 * s2);
        eprintln!("{cc}: rates {:.2} and {:.2} Gbps, Jain {jain:.3}", v[0] / 1e9, v[1] / 1e9);
        assert!(s / 10e9 > 0.96, "{cc}: total {s}");
        assert!(jain >= 0.9, "{cc}: Jain {jain}");
        if cc == "vegas" {
            let q = mean_queue(&r, 100);
            assert!((3.0..=9.0).contains(&q), "two Vegas flows: mean queue {q}");
        }
    }
}

/// AC/DC enforces its window through the receive window, in bytes and below one MSS (`spec/acdc.md` §6):
/// a guest must then send segments of that size (RFC 1122's sender-side silly-window avoidance) or stall.
#[test]
fn a_receive_window_below_one_mss_still_carries_the_flow_in_short_segments() {
    let run = |rwnd: &str| {
        run_toml(&format!(
            r#"
stop = {{ all_flows_done = true, max_time = "1s" }}
[topology]
kind = "star"
hosts = 2
link = {{ rate = "10Gbps", delay = "1us" }}
[host]
transport = {{ kind = "tcp", cc = "cubic", rwnd = "{rwnd}", wscale = 0 }}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 1, size = "20000B", start = "0us" }}]
"#
        ))
        .unwrap()
    };
    let small = run("500B");
    let f = &small.flows[0];
    assert!(f.finish.is_some(), "a 500-byte window must not stall the flow");
    // 40 segments of 500 bytes + 40 B of headers (a full-MSS sender would send 14 of 1460 and overrun the
    // window), and 40 ACKs of 64 B.
    let c = &small.meta.conservation;
    assert_eq!((c.sent_packets, c.sent_bytes), (80, 40 * 540 + 40 * 64), "{c:?}");
    assert_eq!(f.retransmits, 0);
    // Stop-and-wait at one 500-byte segment per RTT (≈ 4.9 µs here): about 40 RTTs.
    let fct = f.fct().unwrap() as f64 / 1e6;
    eprintln!("FCT {fct} µs, base RTT {} µs", f.base_rtt as f64 / 1e6);
    assert!(fct > 40.0 * 4.0 && fct < 40.0 * 8.0, "FCT {fct} µs");
    // With a window of one MSS or more the segments are full again.
    let c = run("64KB").meta.conservation;
    assert_eq!(c.sent_packets, 14 + 14, "{c:?}");
}
