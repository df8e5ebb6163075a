//! Fabric and transport features: RTT variation, schedulers, ECMP, MTU, delayed ACK, receive window,
//! handshake, load definition, traffic patterns, shared-buffer admission, streamed queue samples.

use dcnlab_sim::{run_toml, Records};

fn star(hosts: u32, delay: &str, switch: &str, host: &str, traffic: &str, record: &str, stop: &str) -> Records {
    let text = format!(
        r#"
seed = 11
stop = {stop}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "10Gbps", delay = "{delay}" }}
[switch]
{switch}
[host]
{host}
{traffic}
[record]
{record}
"#
    );
    run_toml(&text).unwrap()
}

fn last_srtt_us(r: &Records, flow: u32) -> f64 {
    r.flow_trace.iter().filter(|t| t.flow_id == flow && t.srtt > 0).last().map(|t| t.srtt as f64 / 1e6).unwrap()
}

#[test]
fn extra_delay_makes_the_chosen_rtt_range() {
    // Base RTT 70 µs (4 × 17.5 µs of propagation); extra delay uniform 0–140 µs per flow on data packets:
    // RTTs spread over 70–210 µs. Flows run one at a time, so the RTT is the base plus the flow's delay.
    let n = 60;
    let flows: Vec<String> =
        (0..n).map(|i| format!("{{ src = {}, dst = 7, size = \"30KB\", start = \"{}ms\" }}", i % 7, i * 2)).collect();
    let trace: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let r = star(
        8,
        "17.5us",
        "buffer = \"4MB\"",
        "transport = { kind = \"tcp\", cc = \"dctcp\" }\nextra_delay = { kind = \"uniform\", min = \"0us\", max = \"140us\", per = \"flow\" }",
        &format!("[[traffic]]\nkind = \"flows\"\nlist = [{}]", flows.join(", ")),
        &format!("trace_flows = [{}]\ntrace_interval = \"5us\"", trace.join(", ")),
        "{ all_flows_done = true, max_time = \"1s\" }",
    );
    let rtts: Vec<f64> = (0..n).map(|f| last_srtt_us(&r, f)).collect();
    let lo = rtts.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = rtts.iter().cloned().fold(0.0, f64::max);
    eprintln!("RTT range {lo:.1}–{hi:.1} µs");
    assert!(lo >= 70.0 && lo < 85.0, "{lo}");
    // Above the propagation range: 2 × 1.2 µs of data serialisation, and the smoothed RTT also carries
    // the flow's own initial burst waiting at its NIC (up to 10 × 1.2 µs).
    assert!(hi > 190.0 && hi <= 225.0, "{hi}");
    for f in &r.flows {
        assert!(f.slowdown().unwrap() >= 1.0);
    }
}

#[test]
fn per_host_choice_delay_is_fixed_per_host() {
    let flows: Vec<String> =
        (0..12).map(|i| format!("{{ src = {}, dst = 3, size = \"1KB\", start = \"{}ms\" }}", i % 3, i)).collect();
    let r = star(
        4,
        "1us",
        "",
        "extra_delay = { kind = \"choice\", values = [\"10us\", \"50us\", \"90us\"], per = \"host\" }",
        &format!("[[traffic]]\nkind = \"flows\"\nlist = [{}]", flows.join(", ")),
        "",
        "{ all_flows_done = true, max_time = \"1s\" }",
    );
    for h in 0..3u32 {
        let fcts: Vec<u64> = r.flows.iter().filter(|f| f.src == h).map(|f| f.fct().unwrap()).collect();
        assert!(fcts.windows(2).all(|w| w[0] == w[1]), "host {h}: {fcts:?}");
        let extra = fcts[0] - (2_000_000 + 2 * 832_000); // 2 × 1 µs + 2 × ser(1040 B at 10 Gbps)
        assert!([10_000_000, 50_000_000, 90_000_000].contains(&extra), "host {h}: extra {extra}");
    }
}

fn two_class(scheduler: &str) -> Vec<f64> {
    let r = star(
        3,
        "2us",
        &format!("buffer = \"4MB\"\nqueues = 2\nscheduler = {scheduler}\naqm = {{ kind = \"dctcp_red\", threshold = \"65KB\" }}"),
        "transport = { kind = \"tcp\", cc = \"dctcp\" }",
        "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 2, size = \"inf\", priority = 0 }, { src = 1, dst = 2, size = \"inf\", priority = 1 }]",
        "trace_flows = [0, 1]\ntrace_interval = \"10ms\"",
        "{ time = \"60ms\" }",
    );
    let at = |t: u64, f: u32| r.flow_trace.iter().find(|x| x.time == t && x.flow_id == f).unwrap().delivered_bytes;
    (0..2).map(|f| (at(60_000_000_000, f) - at(20_000_000_000, f)) as f64 * 8.0 / 0.04 / 1e9).collect()
}

#[test]
fn strict_priority_and_dwrr_shares() {
    let sp = two_class("{ kind = \"sp\" }");
    eprintln!("SP: {sp:?} Gbps");
    assert!(sp[0] > 9.0 && sp[1] < 0.5, "{sp:?}");
    let dwrr = two_class("{ kind = \"dwrr\", weights = [2, 1] }");
    eprintln!("DWRR 2:1: {dwrr:?} Gbps");
    let share = dwrr[0] / (dwrr[0] + dwrr[1]);
    assert!((share - 2.0 / 3.0).abs() < 0.02, "{share}");
    assert!(dwrr[0] + dwrr[1] > 9.3);
}

fn leaf_spine(ecmp: &str, flows: &str) -> Records {
    let text = format!(
        r#"
stop = {{ time = "20ms" }}
[topology]
kind = "leaf_spine"
spines = 4
leaves = 2
hosts_per_leaf = 8
host_link = {{ rate = "10Gbps", delay = "1us" }}
fabric_link = {{ rate = "10Gbps", delay = "1us" }}
[switch]
buffer = "4MB"
ecmp = "{ecmp}"
[host]
transport = {{ kind = "tcp", cc = "dctcp" }}
[[traffic]]
kind = "flows"
list = [{flows}]
[record]
link_sample_interval = "10ms"
queues = [{{ node = "leaf0", port = 8 }}, {{ node = "leaf0", port = 9 }}, {{ node = "leaf0", port = 10 }}, {{ node = "leaf0", port = 11 }}]
"#
    );
    run_toml(&text).unwrap()
}

fn uplink_bytes(r: &Records) -> Vec<u64> {
    (8..12).map(|p| r.links.iter().filter(|l| l.port == p).map(|l| l.tx_bytes).sum()).collect()
}

#[test]
fn ecmp_per_flow_and_per_packet() {
    // One long flow: per-flow ECMP keeps it on one uplink; per-packet spraying uses all four.
    let one = "{ src = 0, dst = 8, size = \"inf\" }";
    let f = uplink_bytes(&leaf_spine("flow", one));
    assert_eq!(f.iter().filter(|&&b| b > 1_000_000).count(), 1, "{f:?}");
    let p = uplink_bytes(&leaf_spine("packet", one));
    assert!(p.iter().all(|&b| b > 1_000_000), "{p:?}");
    let total: u64 = p.iter().sum();
    assert!(p.iter().all(|&b| (b as f64 / total as f64 - 0.25).abs() < 0.05), "{p:?}");
    // Many flows: per-flow ECMP spreads them over every uplink.
    let many: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = {}, size = \"inf\" }}", 8 + i)).collect();
    let m = uplink_bytes(&leaf_spine("flow", &many.join(", ")));
    assert!(m.iter().filter(|&&b| b > 0).count() >= 3, "{m:?}");
}

#[test]
fn jumbo_frames_and_mss() {
    for mtu in [1500u64, 9000] {
        let r = star(
            2,
            "1us",
            &format!("mtu = {mtu}\nbuffer = \"4MB\""),
            "transport = { kind = \"tcp\", cc = \"dctcp\", init_cwnd = 10 }",
            "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"20MB\" }]",
            "",
            "{ all_flows_done = true, max_time = \"1s\" }",
        );
        let f = &r.flows[0];
        let mss = mtu - 40;
        let pkts = 20_000_000u64.div_ceil(mss);
        // Data packets on both hops plus one ACK per data packet on both hops.
        let c = r.meta.conservation;
        assert!(c.sent_packets >= 2 * pkts && c.sent_packets <= 2 * pkts + 10, "mtu {mtu}: {c:?}");
        assert!(f.slowdown().unwrap() < 1.1, "mtu {mtu}: {:?}", f.slowdown());
        let goodput = 20e6 * 8.0 / (f.fct().unwrap() as f64 / 1e12);
        let expect = 10e9 * mss as f64 / mtu as f64;
        assert!(goodput > 0.9 * expect && goodput <= expect, "mtu {mtu}: {goodput}");
    }
}

#[test]
fn delayed_ack_halves_the_acks() {
    let run = |d: &str| {
        star(
            2,
            "1us",
            "buffer = \"4MB\"",
            &format!("transport = {{ kind = \"tcp\", cc = \"reno\", delayed_ack = {d} }}"),
            "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"2920000B\" }]",
            "",
            "{ all_flows_done = true, max_time = \"1s\" }",
        )
    };
    let every = run("1").meta.conservation.sent_packets - 2000;
    let two = run("2").meta.conservation.sent_packets - 2000;
    assert_eq!(every, 2000);
    assert!(two >= 1000 && two < 1100, "{two}");
}

fn rwnd_flow(transport: &str) -> f64 {
    // RTT ≈ 100 µs; throughput ≈ min(10 Gbps, rwnd / RTT).
    let r = star(
        2,
        "25us",
        "buffer = \"4MB\"",
        &format!("transport = {transport}"),
        "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"inf\" }]",
        "trace_flows = [0]\ntrace_interval = \"10ms\"",
        "{ time = \"50ms\" }",
    );
    let at = |t: u64| r.flow_trace.iter().find(|x| x.time == t).unwrap().delivered_bytes;
    (at(50_000_000_000) - at(10_000_000_000)) as f64 * 8.0 / 0.04
}

#[test]
fn receive_window_and_window_scaling() {
    let full = rwnd_flow("{ kind = \"tcp\", cc = \"reno\", rwnd = \"4MB\" }");
    let small = rwnd_flow("{ kind = \"tcp\", cc = \"reno\", rwnd = \"64KB\", wscale = 0 }");
    // Without scaling a 4 MB window is clamped to the 16-bit field: 65535 B.
    let unscaled = rwnd_flow("{ kind = \"tcp\", cc = \"reno\", rwnd = \"4MB\", wscale = 0 }");
    eprintln!("full {:.2} Gbps, 64 KB {:.2} Gbps, 4 MB unscaled {:.2} Gbps", full / 1e9, small / 1e9, unscaled / 1e9);
    assert!(full > 9.0e9);
    let rtt = 100.0e-6 + 2.0 * 1.2e-6;
    assert!((small / (64_000.0 * 8.0 / rtt) - 1.0).abs() < 0.1, "{small}");
    assert!((unscaled / (65_535.0 * 8.0 / rtt) - 1.0).abs() < 0.1, "{unscaled}");
}

#[test]
fn handshake_adds_one_rtt_and_stays_ideal() {
    let run = |h: bool| {
        star(
            2,
            "5us",
            "",
            &format!("transport = {{ kind = \"tcp\", cc = \"reno\", handshake = {h} }}"),
            "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"5KB\" }]",
            "",
            "{ all_flows_done = true, max_time = \"1s\" }",
        )
    };
    let (a, b) = (run(false), run(true));
    let (fa, fb) = (&a.flows[0], &b.flows[0]);
    assert_eq!(fb.fct().unwrap(), fb.ideal_fct);
    let extra = fb.fct().unwrap() - fa.fct().unwrap();
    // SYN + SYN-ACK: 4 × 5 µs propagation + 4 × 51.2 ns serialisation of 64 B.
    assert_eq!(extra, 20_000_000 + 4 * 51_200);
}

#[test]
fn load_is_the_receiver_link_utilisation_for_7_to_1() {
    // 7 senders → 1 receiver at load 0.5: the receiver's link is half busy with payload
    // (plus 40 B of header per 1460 B segment on the wire).
    let r = star(
        8,
        "1us",
        "buffer = \"4MB\"\naqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
        "transport = { kind = \"tcp\", cc = \"dctcp\" }",
        "[[traffic]]\nkind = \"poisson\"\nsizes = \"storage\"\nload = 0.5\nflows = 30000\nsrc = \"0-6\"\ndst = 7",
        "queues = [{ node = \"sw0\", port = 7 }]\nlink_sample_interval = \"1ms\"",
        "{ all_flows_done = true, max_time = \"2s\" }",
    );
    let end = r.flows.iter().map(|f| f.start).max().unwrap();
    let u: Vec<f64> = r.links.iter().filter(|l| l.time <= end).map(|l| l.utilization).collect();
    let mean = u.iter().sum::<f64>() / u.len() as f64;
    let expect = 0.5 * 1500.0 / 1460.0;
    eprintln!("receiver link utilisation {mean:.4}, expected ≈ {expect:.4}");
    assert!((mean / expect - 1.0).abs() < 0.06, "{mean}");
}

#[test]
fn stride_permutation_and_incast_patterns() {
    let pat = |t: &str| {
        star(8, "1us", "", "", t, "", "{ all_flows_done = true, max_time = \"1s\" }").flows
    };
    let s = pat("[[traffic]]\nkind = \"stride\"\nstride = 3\nsize = \"10KB\"");
    assert_eq!(s.len(), 8);
    assert!(s.iter().all(|f| f.dst == (f.src + 3) % 8));
    let p = pat("[[traffic]]\nkind = \"permutation\"\nsize = \"10KB\"");
    let mut srcs: Vec<u32> = p.iter().map(|f| f.src).collect();
    let mut dsts: Vec<u32> = p.iter().map(|f| f.dst).collect();
    srcs.sort();
    dsts.sort();
    assert_eq!(srcs, (0..8).collect::<Vec<_>>());
    assert_eq!(dsts, (0..8).collect::<Vec<_>>());
    assert!(p.iter().all(|f| f.src != f.dst));
    let i = pat("[[traffic]]\nkind = \"incast\"\nsenders = [0, 1, \"2-4\"]\nreceiver = 7\nsize = \"20KB\"\nat = \"1ms\"\nrepeat = 3\nperiod = \"5ms\"\ntag = \"query\"");
    assert_eq!(i.len(), 15);
    assert!(i.iter().all(|f| f.dst == 7 && f.tag == 1));
    let starts: Vec<u64> = i.iter().map(|f| f.start).collect();
    assert_eq!(starts.iter().filter(|&&t| t == 6_000_000_000).count(), 5);
}

#[test]
fn dynamic_threshold_caps_one_queue_at_alpha_share() {
    // One congested queue under DT with alpha = 1 settles at B/2 of a 1 MB shared buffer.
    let r = star(
        9,
        "1us",
        "buffer = \"1MB\"\nalpha = 1.0",
        "transport = { kind = \"tcp\", cc = \"reno\" }",
        "[[traffic]]\nkind = \"incast\"\nsenders = \"0-7\"\nreceiver = 8\nsize = \"2MB\"\nat = \"0us\"",
        "queue_sample_interval = \"5us\"\nqueues = [{ node = \"sw0\", port = 8 }]",
        "{ all_flows_done = true, max_time = \"1s\" }",
    );
    let max = r.queues.iter().map(|q| q.bytes).max().unwrap();
    eprintln!("max queue {max} B, drops {:?}", r.meta.drops);
    assert!(max <= 500_000 && max > 480_000, "{max}");
    assert!(r.meta.drops.buffer > 0);
}

#[test]
fn queue_samples_stream_to_csv() {
    let p = std::env::temp_dir().join(format!("dcnlab-stream-{}.csv", std::process::id()));
    let r = star(
        4,
        "1us",
        "buffer = \"1MB\"",
        "",
        "[[traffic]]\nkind = \"incast\"\nsenders = \"0-2\"\nreceiver = 3\nsize = \"100KB\"\nat = \"0us\"",
        &format!("queue_sample_interval = \"10us\"\nqueues = \"all\"\nqueue_stream = \"{}\"", p.display()),
        "{ time = \"2ms\" }",
    );
    assert!(r.queues.is_empty(), "streamed rows are not held in memory");
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "time_us,node,port,queue,bytes,packets,marks,drops");
    assert_eq!(lines.len() - 1, 200 * 4);
    assert!(lines.iter().any(|l| l.starts_with("10,sw0,3,0,") && !l.ends_with(",0,0,0,0")));
}

/// Extra delay of each flow, read off its ideal FCT against the same flow with no extra delay.
fn drawn_delays_us(extra_delay: &str, n: usize) -> Vec<f64> {
    let flows: Vec<String> =
        (0..n).map(|i| format!("{{ src = 0, dst = 1, size = \"1KB\", start = \"{}us\" }}", i * 500)).collect();
    let traffic = format!("[[traffic]]\nkind = \"flows\"\nlist = [{}]", flows.join(", "));
    let stop = "{ all_flows_done = true, max_time = \"1s\" }";
    let base = star(2, "1us", "", "", &traffic, "", stop).flows[0].ideal_fct;
    let r = star(2, "1us", "", &format!("extra_delay = {extra_delay}"), &traffic, "", stop);
    r.flows.iter().map(|f| (f.ideal_fct - base) as f64 / 1e6).collect()
}

#[test]
fn lognormal_and_cdf_delays() {
    let mut v = drawn_delays_us(
        "{ kind = \"lognormal\", median = \"50us\", sigma = 0.6, min = \"30us\", max = \"120us\", per = \"flow\" }",
        400,
    );
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert!(v[0] >= 30.0 && v[399] <= 120.0, "{} {}", v[0], v[399]);
    assert_eq!(v[0], 30.0, "the clamp is reached");
    assert!((v[200] / 50.0 - 1.0).abs() < 0.1, "median {}", v[200]);
    let dir = std::env::temp_dir().join(format!("dcnlab-delaycdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("d.txt");
    std::fs::write(&p, "# delay_us cdf\n20 0\n100 1\n").unwrap();
    let v = drawn_delays_us(&format!("{{ kind = \"cdf\", path = \"{}\", per = \"flow\" }}", p.display()), 400);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!(v.iter().all(|&d| (20.0..=100.0).contains(&d)));
    assert!((mean - 60.0).abs() < 4.0, "{mean}");
}

#[test]
fn aqm_parameters_change_at_run_time() {
    use dcnlab_sim::aqm::Aqm;
    let text = r#"
stop = { time = "40ms" }
[topology]
kind = "star"
hosts = 3
link = { rate = "10Gbps", delay = "5us" }
[switch]
buffer = "4MB"
aqm = { kind = "dctcp_red", threshold = "100KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 2, size = "inf" }, { src = 1, dst = 2, size = "inf" }]
[record]
queue_sample_interval = "10us"
queues = [{ node = "sw0", port = 2 }]
"#;
    let mut sim = dcnlab_sim::Sim::from_toml(text).unwrap();
    sim.run_until(20_000_000_000);
    match sim.aqm_mut("sw0", 2, 0).unwrap() {
        Aqm::DctcpRed(a) => a.params.threshold = 20_000,
        _ => unreachable!(),
    }
    assert!(sim.aqm_mut("sw0", 9, 0).is_none());
    sim.run_until(u64::MAX);
    let r = sim.run();
    let avg = |a: u64, b: u64| {
        let v: Vec<f64> = r.queues.iter().filter(|q| q.time > a && q.time <= b).map(|q| q.bytes as f64).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (before, after) = (avg(10_000_000_000, 20_000_000_000), avg(30_000_000_000, 40_000_000_000));
    eprintln!("mean queue {before:.0} B with K = 100 KB, {after:.0} B with K = 20 KB");
    assert!(before > 90_000.0 && after < 30_000.0);
}

#[test]
fn pias_puts_short_flows_ahead_of_long_ones() {
    let run = |pias: bool| {
        let host = if pias {
            "transport = { kind = \"tcp\", cc = \"dctcp\" }\npias = { thresholds = [\"100KB\"] }"
        } else {
            "transport = { kind = \"tcp\", cc = \"dctcp\" }"
        };
        star(
            3,
            "5us",
            "buffer = \"4MB\"\nqueues = 2\naqm = { kind = \"dctcp_red\", threshold = \"100KB\" }",
            host,
            "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 2, size = \"inf\" }, { src = 1, dst = 2, size = \"50KB\", start = \"20ms\" }]",
            "",
            "{ time = \"40ms\" }",
        )
    };
    let (plain, pias) = (run(false), run(true));
    let sd = |r: &Records| r.flows[1].slowdown().unwrap();
    eprintln!("short-flow slowdown: FIFO {:.2}, PIAS {:.2}", sd(&plain), sd(&pias));
    // Behind the long flow's ~100 KB standing queue in FIFO; in PIAS's top queue it sees almost none.
    assert!(sd(&plain) > 1.5);
    assert!(sd(&pias) < 1.3);
}

#[test]
fn tcp_small_queues_bound_the_senders_own_queue() {
    // One long flow whose bottleneck is its own NIC (nothing downstream is slower): no mark or drop ever
    // reaches it. With TSQ it keeps at most 256 KB at its host; a short flow from the same host then
    // waits ~0.2 ms behind it, not the unbounded backlog of a window that keeps growing.
    let run = |tsq: &str| {
        star(
            3,
            "5us",
            "buffer = \"4MB\"\naqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
            &format!("transport = {{ kind = \"tcp\", cc = \"dctcp\", tsq_limit = \"{tsq}\" }}"),
            "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 0, dst = 2, size = \"inf\" }, { src = 0, dst = 1, size = \"10KB\", start = \"30ms\" }]",
            "queue_sample_interval = \"100us\"\nqueues = [{ node = \"h0\", port = 0 }]\ntrace_flows = [0]\ntrace_interval = \"10ms\"",
            "{ time = \"40ms\" }",
        )
    };
    let (on, off) = (run("256KB"), run("inf"));
    let max_q = |r: &Records| r.queues.iter().map(|q| q.bytes).max().unwrap();
    let short = |r: &Records| r.flows[1].fct().map(|t| t as f64 / 1e6).unwrap_or(f64::INFINITY);
    let gbps = |r: &Records| {
        let at = |t: u64| r.flow_trace.iter().find(|x| x.time == t).unwrap().delivered_bytes;
        (at(40_000_000_000) - at(10_000_000_000)) as f64 * 8.0 / 0.03 / 1e9
    };
    eprintln!(
        "TSQ on: host queue ≤ {} B, short flow {:.0} µs, long flow {:.2} Gbps; off: ≤ {} B, {:.0} µs",
        max_q(&on), short(&on), gbps(&on), max_q(&off), short(&off)
    );
    // 256 KiB of payload is ≤ 180 segments of 1500 B on the wire; the 10 KB flow's 7 packets join it.
    assert!(max_q(&on) <= 180 * 1500 + 10_280 && max_q(&off) > 2_000_000, "{} {}", max_q(&on), max_q(&off));
    assert!(short(&on) < 400.0 && short(&off) > 2.0 * short(&on));
    assert!(gbps(&on) > 9.5, "TSQ must not cost throughput");
}

#[test]
fn query_incast_deals_n_flows_over_the_senders_with_uniform_sizes() {
    let run = |seed: u32| {
        run_toml(&format!(
            r#"
seed = {seed}
stop = {{ all_flows_done = true, max_time = "1s" }}
[topology]
kind = "star"
hosts = 5
link = {{ rate = "10Gbps", delay = "5us" }}
[[traffic]]
kind = "incast"
senders = "0-3"
receiver = 4
size = "3KB"
size_max = "60KB"
flows = 10
at = "100us"
tag = "query"
"#
        ))
        .unwrap()
    };
    let r = run(1);
    assert_eq!(r.flows.len(), 10);
    // Round-robin over 4 senders: 3, 3, 2, 2 flows.
    let per: Vec<usize> = (0..4).map(|s| r.flows.iter().filter(|f| f.src == s).count()).collect();
    assert_eq!(per, vec![3, 3, 2, 2]);
    assert!(r.flows.iter().all(|f| (3000..=60000).contains(&f.size) && f.start == 100_000_000 && f.finish.is_some()));
    let sizes: Vec<u64> = r.flows.iter().map(|f| f.size).collect();
    let distinct: std::collections::BTreeSet<u64> = sizes.iter().copied().collect();
    assert!(distinct.len() >= 9, "sizes must be drawn, not fixed: {sizes:?}");
    // Same seed, same sizes; another seed, other sizes.
    assert_eq!(run(1).flows.iter().map(|f| f.size).collect::<Vec<_>>(), sizes);
    assert_ne!(run(2).flows.iter().map(|f| f.size).collect::<Vec<_>>(), sizes);
}

#[test]
fn samples_only_inside_the_sample_window() {
    let r = star(
        3,
        "1us",
        "",
        "",
        r#"[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 2, size = "inf" }, { src = 1, dst = 2, size = "inf" }]"#,
        "queue_sample_interval = \"10us\"\nqueues = [{ node = \"sw0\", port = 2 }]\nsample_from = \"1ms\"\nsample_until = \"2ms\"",
        "{ time = \"3ms\" }",
    );
    let t: Vec<u64> = r.queues.iter().map(|q| q.time).collect();
    assert_eq!(t.len(), 100, "1 ms / 10 µs samples in (1 ms, 2 ms]");
    assert_eq!((t[0], *t.last().unwrap()), (1_010_000_000, 2_000_000_000));
    // Link samples: the one at 1 ms only resets the byte counter, so every recorded interval is busy.
    assert_eq!(r.links.len(), 100);
    // (8.3 packets per 10 µs: single samples read 0.96 or 1.08.)
    assert!(r.links.iter().all(|l| l.time > 1_000_000_000 && l.utilization > 0.9 && l.utilization < 1.1), "{:?}", &r.links[..3]);
    let mean = r.links.iter().map(|l| l.utilization).sum::<f64>() / 100.0;
    assert!((mean - 1.0).abs() < 0.01, "{mean}");
}

#[test]
fn trace_tags_follow_flows_whose_ids_are_not_known_in_advance() {
    let text = |tag: &str| {
        format!(
            r#"
stop = {{ time = "20ms" }}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "10Gbps", delay = "2us" }}
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.3
flows = 50
src = "0-1"
dst = 3
[[traffic]]
kind = "flows"
list = [{{ src = 2, dst = 3, size = "inf", start = "5ms", tag = "long" }}]
[record]
trace_tags = ["{tag}"]
trace_interval = "1ms"
"#
        )
    };
    let r = run_toml(&text("long")).unwrap();
    let long = r.flows.iter().find(|f| f.size == u64::MAX).unwrap().flow_id;
    assert!(long > 0, "Poisson flows started first");
    let ids: std::collections::BTreeSet<u32> = r.flow_trace.iter().map(|t| t.flow_id).collect();
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), vec![long]);
    assert!(r.flow_trace.len() >= 14, "{}", r.flow_trace.len());
    let e = dcnlab_sim::Sim::from_toml(&text("lnog")).err().unwrap();
    assert_eq!(e.field, "record.trace_tags[0]");
    assert!(e.to_string().contains("long"), "{e}");
}
