//! The core's extension points, end to end: a transport per traffic entry, controllers, port pause
//! state and counters, NIC scheduling, the vSwitch slot, closed-loop and windowed traffic.

use dcnlab_sim::{run_toml, Records, Sim};

const MS: u64 = 1_000_000_000;

fn star(hosts: u32, switch: &str, host: &str, traffic: &str, record: &str, stop: &str) -> String {
    format!(
        r#"
seed = 5
stop = {stop}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "10Gbps", delay = "5us" }}
[switch]
{switch}
[host]
{host}
{traffic}
[record]
{record}
"#
    )
}

fn label<'a>(r: &'a Records, flow: usize) -> &'a str {
    &r.meta.transports[r.flows[flow].transport as usize]
}

#[test]
fn dctcp_takes_the_larger_share_from_reno_ecn_through_one_dctcp_marking_bottleneck() {
    // Two 20 MB flows into one 10 Gbps port marking above 30 KB. ECN* Reno halves its window once per
    // marked window; DCTCP cuts only by α/2 with α ≈ the marked fraction, so it keeps the larger window,
    // takes the larger share and finishes first.
    let traffic = r#"
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 2, size = "20MB" }]
[[traffic]]
kind = "flows"
list = [{ src = 1, dst = 2, size = "20MB" }]
transport = { cc = "reno", ecn = true }
"#;
    let text = star(
        3,
        "buffer = \"4MB\"\naqm = { kind = \"dctcp_red\", threshold = \"30KB\" }",
        "transport = { kind = \"tcp\", cc = \"dctcp\", min_rto = \"2ms\" }",
        traffic,
        "",
        "{ all_flows_done = true, max_time = \"1s\" }",
    );
    let r = run_toml(&text).unwrap();
    assert_eq!(label(&r, 0), "tcp:dctcp");
    assert_eq!(label(&r, 1), "tcp:reno+ecn");
    let (d, e) = (r.flows[0].fct().unwrap() as f64, r.flows[1].fct().unwrap() as f64);
    eprintln!("DCTCP {:.2} ms, Reno+ECN {:.2} ms", d / 1e9, e / 1e9);
    assert!(d < e, "DCTCP must finish first");
    // While both run, DCTCP delivers clearly more than half: at its finish Reno has sent well under 20 MB,
    // i.e. Reno's FCT exceeds DCTCP's by a visible margin (equal shares would finish together).
    assert!(e > 1.3 * d, "DCTCP {d}, Reno {e}");
    // Both together move 40 MB at line rate: the later finish is near 40 MB / 10 Gbps = 32 ms.
    assert!(e / 1e9 > 31.0 && e / 1e9 < 40.0, "{}", e / 1e9);
}

#[test]
fn a_traffic_transport_inherits_what_it_leaves_out_and_errors_name_its_path() {
    let mk = |over: &str| {
        star(
            3,
            "",
            "transport = { kind = \"tcp\", cc = \"dctcp\", min_rto = \"2ms\", max_rto = \"50ms\" }",
            &format!("[[traffic]]\nkind = \"flows\"\nlist = [{{ src = 0, dst = 2, size = \"20KB\" }}]\n{over}"),
            "",
            "{ time = \"10ms\" }",
        )
    };
    let r = run_toml(&mk("transport = { init_cwnd = 4 }")).unwrap();
    assert_eq!(label(&r, 0), "tcp:dctcp", "cc is inherited from host.transport");
    let e = Sim::from_toml(&mk("transport = { cc = \"cubik\" }")).err().unwrap();
    assert_eq!(e.field, "traffic[0].transport.cc", "{e}");
    let e = Sim::from_toml(&mk("transport = { init_cwd = 4 }")).err().unwrap();
    assert_eq!(e.field, "traffic[0].transport.init_cwd", "{e}");
    assert!(e.message.contains("init_cwnd"), "the message lists the keys: {e}");
    let e = Sim::from_toml(&mk("transport = { max_rto = \"1ms\" }")).err().unwrap();
    assert_eq!(e.field, "traffic[0].transport.max_rto", "{e}");
    let e = Sim::from_toml(&mk("transport = { cc = \"dctcp\", ecn = false }")).err().unwrap();
    assert_eq!(e.field, "traffic[0].transport.ecn", "{e}");
}

/// Mean queue bytes in samples with time in (a, b].
fn mean_queue(r: &Records, a: u64, b: u64) -> f64 {
    let v: Vec<f64> = r.queues.iter().filter(|q| q.time > a && q.time <= b).map(|q| q.bytes as f64).collect();
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

fn long_flows(controller: &str) -> String {
    star(
        3,
        &format!("buffer = \"4MB\"\naqm = {{ kind = \"dctcp_red\", threshold = \"200KB\" }}\n{controller}"),
        "transport = { kind = \"tcp\", cc = \"dctcp\" }",
        "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 2, size = \"inf\" }, { src = 1, dst = 2, size = \"inf\" }]",
        "queue_sample_interval = \"10us\"\nqueues = [{ node = \"sw0\", port = 2 }]",
        "{ time = \"40ms\" }",
    )
}

#[test]
fn schedule_controller_lowers_the_marking_threshold_mid_run() {
    let ctl = "controller = { kind = \"schedule\", changes = [{ at = \"20ms\", aqm = { kind = \"dctcp_red\", threshold = \"20KB\" } }] }";
    let r = run_toml(&long_flows(ctl)).unwrap();
    let (before, after) = (mean_queue(&r, 10 * MS, 20 * MS), mean_queue(&r, 25 * MS, 40 * MS));
    eprintln!("queue before {before:.0} B, after {after:.0} B");
    // DCTCP holds the queue near K: ~200 KB before, ~20 KB (plus a little oscillation) after.
    assert!(before > 150_000.0 && before < 260_000.0, "{before}");
    assert!(after > 10_000.0 && after < 50_000.0, "{after}");
    // Without the controller the queue stays where it was.
    let r0 = run_toml(&long_flows("")).unwrap();
    assert!(mean_queue(&r0, 25 * MS, 40 * MS) > 150_000.0);
    // Every switch port's one queue got the change, at exactly 20 ms, and it is recorded.
    assert_eq!(r.controller_steps.len(), 3);
    assert!(r.controller_steps.iter().all(|s| s.time == 20 * MS && s.action.contains("threshold: 20000")));
}

#[test]
fn controller_checks_name_the_field() {
    let bad_kind = "controller = { kind = \"schedule\", changes = [{ at = \"1ms\", aqm = { kind = \"red\", kmin = \"1KB\", kmax = \"2KB\", pmax = 0.1 } }] }";
    let e = Sim::from_toml(&long_flows(bad_kind)).err().unwrap();
    assert_eq!(e.field, "switch.controller.changes[0].aqm.kind", "{e}");
    let bad_param = "controller = { kind = \"schedule\", changes = [{ at = \"1ms\", aqm = { kind = \"dctcp_red\", threshold = \"inf\" } }] }";
    let e = Sim::from_toml(&long_flows(bad_param)).err().unwrap();
    assert_eq!(e.field, "switch.controller.changes[0].aqm.threshold", "{e}");
    let bad_port = "controller = { kind = \"schedule\", ports = [{ node = \"sw0\", port = 7 }], changes = [{ at = \"1ms\", aqm = { kind = \"dctcp_red\", threshold = \"20KB\" } }] }";
    let e = Sim::from_toml(&long_flows(bad_port)).err().unwrap();
    assert_eq!(e.field, "switch.controller.ports[0]", "{e}");
}

#[test]
fn a_paused_priority_sends_nothing_and_its_paused_time_is_counted() {
    let text = long_flows("");
    let mut sim = Sim::from_toml(&text).unwrap();
    sim.run_until(10 * MS);
    let c0 = sim.queue_counters("sw0", 2, 0).unwrap();
    assert!(sim.pause("sw0", 2, 0, true));
    sim.run_until(12 * MS);
    let c1 = sim.queue_counters("sw0", 2, 0).unwrap();
    // At most the packet on the wire when the pause came finishes.
    assert!(c1.tx_pkts - c0.tx_pkts <= 1, "{c0:?} {c1:?}");
    assert!(sim.pause("sw0", 2, 0, false));
    sim.run_until(14 * MS);
    let c2 = sim.queue_counters("sw0", 2, 0).unwrap();
    assert_eq!(c2.paused_ps, 2 * MS);
    // 2 ms at 10 Gbps after the resume: about 2.5 MB sent.
    let sent = (c2.tx_bytes - c1.tx_bytes) as f64;
    assert!(sent > 2.3e6 && sent < 2.6e6, "{sent}");
    assert!(!sim.pause("sw0", 9, 0, true) && !sim.pause("sw0", 2, 3, true));
    let r = sim.run();
    // The queue grew during the pause (the senders kept their windows in flight).
    let during = mean_queue(&r, 11 * MS, 12 * MS);
    let before = mean_queue(&r, 8 * MS, 10 * MS);
    assert!(during > before, "{before} {during}");
    assert!(r.meta.conservation.holds());
}

fn nic(scheduling: &str) -> Records {
    // Host 0 starts a long flow to host 1 (TSQ off, so its whole window waits at the NIC), then a 30 KB
    // flow to host 2.
    run_toml(&star(
        3,
        "buffer = \"4MB\"",
        &format!("transport = {{ kind = \"tcp\", cc = \"dctcp\", tsq_limit = \"inf\", init_cwnd = 200 }}\nnic = {{ scheduling = \"{scheduling}\" }}"),
        "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"inf\" }, { src = 0, dst = 2, size = \"30KB\", start = \"100us\" }]",
        "",
        "{ time = \"5ms\" }",
    ))
    .unwrap()
}

#[test]
fn round_robin_nic_lets_a_short_flow_past_a_long_flows_backlog() {
    let (fifo, rr) = (nic("fifo"), nic("round_robin"));
    let f = fifo.flows[1].slowdown().unwrap();
    let r = rr.flows[1].slowdown().unwrap();
    eprintln!("short flow slowdown: fifo {f:.2}, round robin {r:.2}");
    // FIFO: behind up to 200 × 1.5 KB of the long flow (~240 µs); round robin: every other packet.
    assert!(f > 4.0, "{f}");
    assert!(r < 2.5, "{r}");
    assert!(fifo.meta.conservation.holds() && rr.meta.conservation.holds());
}

#[test]
fn identity_vswitch_sees_every_packet_and_changes_nothing() {
    let mk = |vs: &str| {
        star(
            4,
            "buffer = \"1MB\"\naqm = { kind = \"dctcp_red\", threshold = \"30KB\" }",
            &format!("transport = {{ kind = \"tcp\", cc = \"dctcp\" }}\n{vs}"),
            "[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.6\nflows = 60",
            "",
            "{ all_flows_done = true, max_time = \"1s\" }",
        )
    };
    let plain = run_toml(&mk("")).unwrap();
    let mut sim = Sim::from_toml(&mk("vswitch = { kind = \"identity\" }")).unwrap();
    assert!(sim.vswitch_seen(0).is_some());
    sim.run_until(u64::MAX);
    let seen: Vec<_> = (0..4).map(|h| sim.vswitch_seen(h).unwrap()).collect();
    let shim = sim.run();
    assert_eq!(plain.flows, shim.flows);
    let c = shim.meta.conservation;
    assert_eq!(seen.iter().map(|s| s.egress_packets).sum::<u64>(), c.sent_packets);
    assert_eq!(seen.iter().map(|s| s.egress_bytes).sum::<u64>(), c.sent_bytes);
    assert_eq!(seen.iter().map(|s| s.ingress_packets).sum::<u64>(), c.delivered_packets);
    assert_eq!(seen.iter().map(|s| s.ingress_bytes).sum::<u64>(), c.delivered_bytes);
    assert!(c.holds());
    let e = Sim::from_toml(&mk("vswitch = { kind = \"acdcc\" }")).err().unwrap();
    assert_eq!(e.field, "host.vswitch.kind", "{e}");
}

#[test]
fn max_in_flight_one_runs_an_entrys_flows_back_to_back() {
    let list: Vec<String> = (0..5).map(|_| "{ src = 0, dst = 1, size = \"200KB\" }".to_string()).collect();
    let traffic = format!("[[traffic]]\nkind = \"flows\"\nmax_in_flight = 1\nlist = [{}]", list.join(", "));
    let r = run_toml(&star(2, "", "transport = { kind = \"tcp\", cc = \"dctcp\" }", &traffic, "", "{ all_flows_done = true, max_time = \"1s\" }")).unwrap();
    assert_eq!(r.flows.len(), 5);
    for w in r.flows.windows(2) {
        // The next flow starts the instant the previous one completes.
        assert_eq!(w[1].start, w[0].finish.unwrap());
    }
    // With no limit all five start at 0.
    let open = traffic.replace("max_in_flight = 1\n", "");
    let r = run_toml(&star(2, "", "transport = { kind = \"tcp\", cc = \"dctcp\" }", &open, "", "{ all_flows_done = true, max_time = \"1s\" }")).unwrap();
    assert!(r.flows.iter().all(|f| f.start == 0));
}

#[test]
fn active_window_bounds_when_an_entry_generates() {
    let traffic = "[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.3\nflows = 100000\nactive = { start = \"10ms\", stop = \"30ms\" }";
    let r = run_toml(&star(8, "", "transport = { kind = \"tcp\", cc = \"dctcp\" }", traffic, "", "{ time = \"50ms\" }")).unwrap();
    assert!(!r.flows.is_empty());
    assert!(r.flows.iter().all(|f| f.start >= 10 * MS && f.start < 30 * MS));
    // 0.3 × 80 Gbps / 8 / 1.71 MB mean ≈ 1.75 flows per ms → ~35 flows in 20 ms.
    assert!(r.flows.len() > 15 && r.flows.len() < 70, "{}", r.flows.len());
    let bad = traffic.replace("stop = \"30ms\"", "stop = \"5ms\"");
    let e = Sim::from_toml(&star(8, "", "", &bad, "", "{ time = \"50ms\" }")).err().unwrap();
    assert_eq!(e.field, "traffic[0].active.stop", "{e}");
}

/// `ect_control = true` makes a DCTCP connection's pure ACKs ECN-capable (Linux's DCTCP sends every
/// packet ECT). Hosts 2 and 3 fill the port toward host 0 past K; the ACKs of host 0's own flow to host 1
/// cross that port. With `non_ect = "drop"` the switch drops them while they are Not-ECT, and marks them
/// instead once they are ECT.
#[test]
fn ect_control_keeps_acks_from_a_marking_switchs_not_ect_drops() {
    let run = |ect_control: bool| {
        dcnlab_sim::run_toml(&format!(
            r#"
seed = 2
stop = {{ time = "20ms" }}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "10Gbps", delay = "2us" }}
[switch]
buffer = "4MB"
aqm = {{ kind = "dctcp_red", threshold = "30KB", non_ect = "drop" }}
[host]
transport = {{ kind = "tcp", cc = "dctcp", ect_control = {ect_control} }}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 1, size = "inf" }}, {{ src = 2, dst = 0, size = "inf" }}, {{ src = 3, dst = 0, size = "inf" }}]
"#
        ))
        .unwrap()
    };
    let (off, on) = (run(false), run(true));
    eprintln!("ACK drops: {} without, {} with ect_control", off.meta.drops.aqm, on.meta.drops.aqm);
    assert!(off.meta.drops.aqm > 100, "{:?}", off.meta.drops);
    assert_eq!(on.meta.drops.total(), 0);
    assert!(on.meta.marks > 0);
}
