//! Fuzzing the scenario parser, the checks and the flow-file readers (proptest): random edits of valid
//! scenarios — keys set to values from a pool of awkward numbers, units, types and strings — and random
//! flow files. Every case must end in `Ok` or a `ConfigError` naming a field, never a panic; the cases
//! that build also run a few hundred microseconds, which must not panic either. `make test` runs a few
//! hundred cases; `PROPTEST_CASES=20000 cargo test --release --test fuzz` runs a long session.

use dcnlab_sim::config::source::{apply, parse_value};
use dcnlab_sim::sim::estimate::Estimate;
use dcnlab_sim::{Scenario, Sim};
use proptest::prelude::*;

const BASES: [&str; 3] = [
    r#"
seed = 1
stop = { all_flows_done = true, max_time = "50ms" }
[topology]
kind = "star"
hosts = 6
link = { rate = "10Gbps", delay = "2us" }
[switch]
buffer = "1MB"
aqm = { kind = "dctcp_red", threshold = "30KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
extra_delay = { kind = "uniform", min = "0us", max = "20us", per = "flow" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.5
flows = 30
[record]
queue_sample_interval = "20us"
"#,
    r#"
stop = { time = "5ms" }
[topology]
kind = "leaf_spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "40Gbps", delay = "1us" }
[switch]
port_buffer = "200KB"
queues = 2
scheduler = { kind = "dwrr", weights = [2, 1] }
aqm = [{ kind = "ecn_sharp", ins_target = "100us", pst_target = "10us", pst_interval = "100us" }, { kind = "pie" }]
ecmp = "packet"
[host]
transport = { kind = "tcp", cc = "reno", ecn = true }
[[traffic]]
kind = "incast"
senders = [0, 1, 2, 3, 4, 5, 6]
receiver = 7
size = "20KB"
at = "100us"
repeat = 3
period = "1ms"
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 5, size = "200KB", start = "0us", priority = 1 }]
"#,
    r#"
seed = 9
stop = { all_flows_done = true, max_time = "20ms" }
[topology]
kind = "dumbbell"
left = 3
right = 3
host_link = { rate = "10Gbps", delay = "2us" }
bottleneck_link = { rate = "10Gbps", delay = "5us" }
[switch]
buffer = "500KB"
aqm = { kind = "codel", target = "20us", interval = "200us", mode = "drop" }
[host]
transport = { kind = "tcp", cc = "reno", handshake = true, delayed_ack = 2 }
[[traffic]]
kind = "permutation"
size = "100KB"
[[traffic]]
kind = "stride"
stride = 1
size = "50KB"
start = "1ms"
"#,
];

const KEYS: &[&str] = &[
    "seed", "stop", "stop.time", "stop.max_time", "stop.all_flows_done", "warmup", "name",
    "topology.kind", "topology.hosts", "topology.link.rate", "topology.link.delay", "topology.link.loss",
    "topology.spines", "topology.leaves", "topology.hosts_per_leaf", "topology.k", "topology.left",
    "switch.buffer", "switch.port_buffer", "switch.alpha", "switch.mtu", "switch.queues", "switch.ecmp",
    "switch.scheduler", "switch.aqm", "switch.aqm.kind", "switch.aqm.threshold", "switch.aqm.target",
    "switch.aqm.interval", "switch.aqm.kmin", "switch.aqm.kmax", "switch.aqm.pmax", "switch.aqm.0.ins_target",
    "switch.aqm.1.alpha", "switch.controller", "host.transport.cc", "host.transport.kind",
    "host.transport.init_cwnd", "host.transport.mss", "host.transport.min_rto", "host.transport.max_rto",
    "host.transport.delayed_ack", "host.transport.rwnd", "host.transport.tsq_limit", "host.extra_delay",
    "host.extra_delay.max", "host.nic", "host.vswitch", "host.pias", "traffic.0.kind", "traffic.0.load",
    "traffic.0.flows", "traffic.0.sizes", "traffic.0.src", "traffic.0.dst", "traffic.0.start",
    "traffic.0.senders", "traffic.0.size", "traffic.0.repeat", "traffic.0.at", "traffic.0.transport",
    "traffic.0.active", "traffic.0.max_in_flight", "traffic.0.priority", "traffic.1.list", "record.queues",
    "record.queue_sample_interval", "record.trace_flows", "record.trace_interval", "record.busiest",
];

/// Awkward values, as TOML text (the command line's rule: TOML syntax, else a bare string).
const VALUES: &[&str] = &[
    "0", "1", "-1", "2", "7", "255", "65536", "4294967296", "9223372036854775807", "-9223372036854775808",
    "0.0", "-0.5", "0.5", "1.0", "1.5", "1e300", "nan", "inf", "-inf", "true", "false", "[]", "[0]",
    "[1, 0]", "[-1]", "{}", "{ kind = \"red\" }", "{ kind = \"nope\" }", "{ kind = \"dctcp_red\" }",
    "{ kind = \"sp\" }", "{ kind = \"dwrr\", weights = [0] }", "{ start = \"1ms\", stop = \"0ms\" }",
    "\"\"", "abc", "\"0us\"", "\"1ps\"", "\"5us\"", "\"-5us\"", "\"1e9s\"", "\"18446744073709551615ps\"",
    "\"99999999999999pkt\"", "\"0pkt\"", "\"1B\"", "\"0B\"", "\"10Gbps\"", "\"0Gbps\"", "\"1bps\"",
    "\"1000000Tbps\"", "\"inf\"", "\"web_search\"", "\"no_such_cdf\"", "\"0-3\"", "\"3-0\"", "\"0-99\"",
    "\"tcp\"", "\"dctcp\"", "\"cubic\"", "\"flow\"", "\"packet\"", "\"all\"", "\"busiest\"", "\"😀\"",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(VALUES).prop_map(str::to_string),
        1 => "[ -~]{0,12}",
        1 => (0u64..2_000_000).prop_map(|n| n.to_string()),
        1 => ((0u64..100_000), proptest::sample::select(&["ps", "ns", "us", "ms", "s", "B", "KB", "pkt", "Gbps", "x"][..]))
            .prop_map(|(n, u)| format!("\"{n}{u}\"")),
    ]
}

/// A value of the right type for the key, near or past its valid range (so that edits get past parsing
/// and reach the checks, the build and the run).
fn plausible(key: &str) -> BoxedStrategy<String> {
    let last = key.rsplit('.').next().unwrap_or(key);
    let unit = |units: &'static [&'static str]| {
        ((0u64..3000), proptest::sample::select(units)).prop_map(|(n, u)| format!("\"{n}{u}\"")).boxed()
    };
    match last {
        "rate" => unit(&["Mbps", "Gbps"]),
        "delay" | "time" | "max_time" | "warmup" | "target" | "interval" | "start" | "at" | "min_rto" | "max_rto"
        | "queue_sample_interval" | "trace_interval" | "ins_target" | "period" => unit(&["ns", "us", "ms"]),
        "buffer" | "port_buffer" | "threshold" | "size" | "mss" | "kmin" | "kmax" | "rwnd" | "tsq_limit" => {
            unit(&["B", "KB", "pkt"])
        }
        "load" | "alpha" | "pmax" | "loss" => (-0.5f64..1.5).prop_map(|x| format!("{x:.3}")).boxed(),
        _ => (0u64..20).prop_map(|n| n.to_string()).boxed(),
    }
}

fn edits() -> impl Strategy<Value = Vec<(String, String)>> {
    let edit = proptest::sample::select(KEYS).prop_flat_map(|k| {
        let v = prop_oneof![1 => value(), 2 => plausible(k)];
        (Just(k.to_string()), v)
    });
    proptest::collection::vec(edit, 1..4)
}

/// Parse, check and, when the scenario is small enough to run here, build it and run a short while.
fn exercise(text: &str) {
    let Ok(sc) = Scenario::from_toml(text) else { return };
    if sc.validate().is_err() {
        return;
    }
    // What the CLI does first: count what the scenario will hold, refuse what the engine cannot (errors,
    // not panics). Only scenarios of modest size are then built and run here.
    let Ok(est) = Estimate::of(&sc) else { return };
    if est.bytes > 300_000_000 || est.hosts > 500 || est.flows > 20_000 || est.events > 50_000_000 {
        return;
    }
    if let Ok(mut sim) = Sim::new(&sc) {
        let _ = sim.run_until(300_000_000); // 300 µs
        let _ = sim.finish(0.0, 0.0);
    }
}

/// 1000 cases per property by default (seconds); `PROPTEST_CASES=N` for a longer session.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn edited_scenarios_never_panic(base in 0usize..BASES.len(), edits in edits()) {
        let ov: Vec<_> = edits.iter().map(|(k, v)| (k.clone(), parse_value(v))).collect();
        if let Ok(text) = apply(BASES[base], &ov) {
            exercise(&text);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[ -~\n]{0,200}") {
        let _ = Scenario::from_toml(&text);
    }

    #[test]
    fn flow_files_never_panic(lines in proptest::collection::vec(
        prop_oneof![
            "[0-9]{1,3},[0-9]{1,3},[0-9]{1,6}(KB|B|)?,[0-9.]{1,6}(us|ms|)?(,[a-z]{0,5})?",
            "[ -~]{0,30}",
            "[0-9]{1,20} [0-9]{1,3} [0-9] [0-9]{1,5} [0-9]{1,9} [0-9.]{1,8}",
        ], 0..12), hpcc in any::<bool>(), header in any::<bool>()) {
        let dir = std::env::temp_dir().join(format!("dcnlab-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("flows-{}.txt", lines.len()));
        let mut body = String::new();
        if header && !hpcc {
            body.push_str("src,dst,size,start,tag\n");
        }
        if hpcc {
            body.push_str(&format!("{}\n", lines.len()));
        }
        body.push_str(&lines.join("\n"));
        std::fs::write(&path, &body).unwrap();
        let text = format!(
            "stop = {{ time = \"1ms\" }}\n[topology]\nkind = \"star\"\nhosts = 8\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[[traffic]]\nkind = \"file\"\npath = {:?}\nformat = \"{}\"\n",
            path.to_string_lossy(), if hpcc { "hpcc" } else { "dcnlab" });
        exercise(&text);
    }
}
