//! Where a user's number meets the engine's integers: every number too large for them is one clear
//! error naming the field and the fix, before anything is built — never a wrap, a panic or an abort.

use dcnlab_sim::Sim;

const BASE: &str = r#"
stop = { time = "1ms" }
[topology]
kind = "star"
hosts = 17
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "1MB"
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 1, size = "100KB", start = "10us" }]
"#;

fn replaced(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

/// The error a scenario fails with, quickly (nothing is built before the checks).
fn err(text: &str) -> (String, String) {
    let t = std::time::Instant::now();
    let e = match Sim::from_toml(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    };
    assert!(t.elapsed().as_secs_f64() < 2.0, "the check must come before building: {:?}", t.elapsed());
    (e.field.clone(), e.to_string())
}

fn topology(t: &str) -> String {
    let (a, b) = (BASE.find("[topology]").unwrap(), BASE.find("[switch]").unwrap());
    format!("{}{t}\n{}", &BASE[..a], &BASE[b..])
}

#[test]
fn sizes_in_packets_that_overflow_bytes() {
    let (f, m) = err(&replaced("buffer = \"1MB\"", "buffer = \"99999999999999pkt\""));
    assert_eq!(f, "switch.buffer");
    assert!(m.contains("at most 1000000000000 packets"), "{m}");
    let (f, _) = err(&replaced("buffer = \"1MB\"", "buffer = \"1MB\"\nport_buffer = \"99999999999999999999999pkt\""));
    assert_eq!(f, "switch.port_buffer");
    let (f, m) = err(&replaced("size = \"100KB\"", "size = \"18446744073709551615B\""));
    assert_eq!(f, "traffic[0].list[0].size");
    assert!(m.contains("\"inf\""), "{m}");
    // The largest accepted count × the largest MTU fits: a run with it starts.
    Sim::from_toml(&replaced("buffer = \"1MB\"", "buffer = \"1000000000000pkt\"\nmtu = 65000")).unwrap();
}

#[test]
fn flow_ids_are_32_bit() {
    let poisson = |n: u64| format!("[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = {n}\n");
    let (a, _) = BASE.split_once("[[traffic]]").unwrap();
    let (f, m) = err(&format!("{a}{}", poisson(5_000_000_000)));
    assert_eq!(f, "traffic[0].flows");
    assert!(m.contains("5000000000 flows") && m.contains("4294967296"), "{m}");
    // Each entry alone fits; together they do not: the entry that crosses the limit is named.
    let (f, _) = err(&format!("{a}{}{}", poisson(3_000_000_000), poisson(2_000_000_000)));
    assert_eq!(f, "traffic[1].flows");
    // Exactly 2^32 flows have ids 0 … 2^32 − 1.
    Sim::from_toml(&format!("{a}{}", poisson(1 << 32))).unwrap();
    let (f, m) = err(&format!("{BASE}[record]\ntrace_flows = [3, 4294967296]\n"));
    assert_eq!(f, "record.trace_flows[1]");
    assert!(m.contains("32-bit"), "{m}");
}

#[test]
fn incast_repeat_past_the_clock_or_the_flow_ids() {
    let incast = |repeat: u64, period: &str| {
        let (a, _) = BASE.split_once("[[traffic]]").unwrap();
        format!("{a}[[traffic]]\nkind = \"incast\"\nsenders = \"0-15\"\nreceiver = 16\nsize = \"10KB\"\nat = \"0us\"\nrepeat = {repeat}\nperiod = \"{period}\"\n")
    };
    // 2·10⁹ bursts 10 ms apart: the last is past the clock.
    let (f, m) = err(&incast(2_000_000_000, "10ms"));
    assert_eq!(f, "traffic[0].repeat");
    assert!(m.contains("clock"), "{m}");
    // 1 µs apart the times fit, but 16 × 2·10⁹ flows are more than the flow ids.
    let (f, m) = err(&incast(2_000_000_000, "1us"));
    assert_eq!(f, "traffic[0].repeat");
    assert!(m.contains("32000000000 flows"), "{m}");
}

#[test]
fn topologies_too_large_for_the_engine() {
    // 65 536 × 65 537 hosts is more than 2^32: named with the true count, not a wrapped one.
    let ls = "[topology]\nkind = \"leaf_spine\"\nspines = 2\nleaves = 65536\nhosts_per_leaf = 65537\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"10Gbps\", delay = \"1us\" }";
    let (f, m) = err(&topology(ls));
    assert_eq!(f, "topology.hosts_per_leaf");
    assert!(m.contains("4295098370 nodes"), "{m}");
    // 2·10⁸ hosts on one switch: routing them is 10¹⁷ steps.
    let (f, m) = err(&topology("[topology]\nkind = \"star\"\nhosts = 200000000\nlink = { rate = \"10Gbps\", delay = \"1us\" }"));
    assert_eq!(f, "topology.hosts");
    assert!(m.contains("use fewer hosts"), "{m}");
    // A 64-ary fat-tree keeps 8.6·10⁹ next hops, past the 32-bit route table.
    let (f, m) = err(&topology("[topology]\nkind = \"fat_tree\"\nk = 64\nlink = { rate = \"10Gbps\", delay = \"1us\" }"));
    assert_eq!(f, "topology.k");
    assert!(m.contains("8590000128"), "{m}");
    let db = "[topology]\nkind = \"dumbbell\"\nleft = 4294967295\nright = 4294967295\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck_link = { rate = \"10Gbps\", delay = \"1us\" }";
    let (f, _) = err(&topology(db));
    assert_eq!(f, "topology.left");
}

#[test]
fn times_past_the_clock() {
    let (f, m) = err(&replaced("time = \"1ms\"", "time = \"20000000s\""));
    assert_eq!(f, "stop.time");
    assert!(m.contains("at most 4611686s"), "{m}");
    let (f, m) = err(&replaced("cc = \"dctcp\"", "cc = \"dctcp\", max_rto = \"300s\""));
    assert_eq!(f, "host.transport.max_rto");
    assert!(m.contains("at most 281s"), "{m}");
    let (f, _) = err(&replaced("[host]", "[host]\nextra_delay = { kind = \"constant\", value = \"10000000s\" }"));
    assert_eq!(f, "host.extra_delay.value");
    let dir = std::env::temp_dir().join(format!("dcnlab-overflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cdf = dir.join("delay.txt");
    std::fs::write(&cdf, "0 0\n1e20 1\n").unwrap();
    let (f, m) = err(&replaced("[host]", &format!("[host]\nextra_delay = {{ kind = \"cdf\", path = \"{}\" }}", cdf.display())));
    assert_eq!(f, "host.extra_delay.path");
    assert!(m.contains("clock"), "{m}");
}

/// The largest delay and stop time the clock takes: `now` + the delay is computed without wrapping, the
/// held packets stay in flight, the run ends at its stop time.
#[test]
fn the_largest_times_run() {
    let text = replaced("[host]", "[host]\nextra_delay = { kind = \"constant\", value = \"4611686s\" }")
        .replace("time = \"1ms\"", "time = \"4611686s\"");
    let r = Sim::from_toml(&text).unwrap().run();
    assert_eq!(r.meta.sim_time_us, 4_611_686e6);
    assert_eq!(r.meta.flows_finished, 0);
    assert!(r.meta.conservation.holds() && r.meta.conservation.in_flight_packets > 0);
}
