//! PIE (RFC 8033) end to end: long-lived TCP flows into one 10 Gbps port with a large buffer. PIE holds the
//! queue delay near its target and keeps the link busy; drop-tail with the same buffer fills it.
//!
//! With the RFC's α and β per second and a 20 µs target, p moves slowly against µs-scale errors: after the
//! slow-start overshoot the mean delay falls from ~60 µs (10–50 ms) to ~35 µs (250–300 ms), so the run is
//! 300 ms and the check covers its second half.

use dcnlab_sim::{run_toml, Records};

const MS: u64 = 1_000_000_000;
const STOP_MS: u64 = 300;
/// Bytes per second at 10 Gbps.
const RATE_BPS: f64 = 10e9 / 8.0;

fn run(aqm: &str, transport: &str) -> Records {
    let text = format!(
        r#"
seed = 3
stop = {{ time = "{STOP_MS}ms" }}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "10Gbps", delay = "5us" }}
[switch]
port_buffer = "2MB"
aqm = {aqm}
[host]
transport = {transport}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 3, size = "inf" }}, {{ src = 1, dst = 3, size = "inf", start = "1ms" }}, {{ src = 2, dst = 3, size = "inf", start = "2ms" }}]
[record]
queue_sample_interval = "10us"
link_sample_interval = "1ms"
queues = [{{ node = "sw0", port = 3 }}]
trace_flows = [0, 1, 2]
trace_interval = "{half}ms"
"#,
        half = STOP_MS / 2
    );
    let r = run_toml(&text).unwrap();
    assert!(r.meta.conservation.holds());
    r
}

/// Mean queue delay (bytes / 10 Gbps, in µs) over the second half of the run.
fn mean_delay_us(r: &Records) -> f64 {
    let v: Vec<f64> = r.queues.iter().filter(|q| q.time > STOP_MS / 2 * MS).map(|q| q.bytes as f64).collect();
    assert!(v.len() > 1000, "{}", v.len());
    v.iter().sum::<f64>() / v.len() as f64 / RATE_BPS * 1e6
}

/// Utilisation of the receiver's link over the second half, from the bytes the flows delivered.
fn utilisation(r: &Records) -> f64 {
    let at = |t: u64| -> u64 {
        r.flow_trace.iter().filter(|x| x.time == t).map(|x| x.delivered_bytes).sum()
    };
    let (a, b) = (at(STOP_MS / 2 * MS), at(STOP_MS * MS));
    assert!(a > 0 && b > a, "{a} {b}");
    // Delivered payload against the link's payload capacity (1460 of every 1500 bytes on the wire).
    (b - a) as f64 / (RATE_BPS * (STOP_MS / 2) as f64 * 1e-3 * 1460.0 / 1500.0)
}

fn drops_marks(r: &Records) -> (u64, u64) {
    let h = r.queues.iter().filter(|q| q.time > STOP_MS / 2 * MS);
    h.fold((0, 0), |(d, m), q| (d + q.drops as u64, m + q.marks as u64))
}

fn check(name: &str, pie: &Records, tail: &Records) {
    let (dp, dt) = (mean_delay_us(pie), mean_delay_us(tail));
    let (up, ut) = (utilisation(pie), utilisation(tail));
    eprintln!(
        "{name}: PIE mean queue delay {dp:.1} µs, util {up:.3}, (drops, marks) {:?}; drop-tail {dt:.1} µs, util {ut:.3}",
        drops_marks(pie)
    );
    // Target 20 µs: PIE holds the mean within [0.5×, 3×] of it.
    assert!((10.0..=60.0).contains(&dp), "{name}: PIE mean delay {dp} µs");
    // Drop-tail fills the 2 MB buffer (1.6 ms): far above PIE.
    assert!(dt > 10.0 * dp && dt > 500.0, "{name}: drop-tail {dt} µs vs PIE {dp} µs");
    assert!(up >= 0.9, "{name}: PIE utilisation {up}");
}

#[test]
fn pie_ecn_holds_the_queue_near_target_with_reno_ecn() {
    let t = "{ kind = \"tcp\", cc = \"reno\", ecn = true, min_rto = \"1ms\" }";
    let pie = run("{ kind = \"pie\" }", t);
    let tail = run("{ kind = \"droptail\" }", t);
    assert!(drops_marks(&pie).1 > 0, "ECN mode marks");
    check("reno+ecn", &pie, &tail);
}

#[test]
fn pie_drop_mode_holds_the_queue_near_target_with_reno() {
    let t = "{ kind = \"tcp\", cc = \"reno\", min_rto = \"1ms\" }";
    let pie = run("{ kind = \"pie\", mode = \"drop\" }", t);
    let tail = run("{ kind = \"droptail\" }", t);
    check("reno drop", &pie, &tail);
}
