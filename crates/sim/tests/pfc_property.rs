//! Property: on random lossless scenarios (topologies, link rates and delays, buffers, fixed or dynamic
//! XOFF, both pause modes, reserves, incasts and Poisson traffic, Reno, DCTCP or RoCE with DCQCN) nothing
//! is ever dropped
//! and packets and bytes are conserved — the "auto" headroom absorbs what is in flight when PAUSE lands.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn link() -> impl Strategy<Value = String> {
    (prop_oneof![Just("10Gbps"), Just("25Gbps"), Just("40Gbps"), Just("100Gbps")], 1u32..50)
        .prop_map(|(r, d)| format!("{{ rate = \"{r}\", delay = \"{}ns\" }}", d * 100))
}

fn topology() -> impl Strategy<Value = (String, u32)> {
    prop_oneof![
        (3u32..12, link()).prop_map(|(h, l)| (format!("kind = \"star\"\nhosts = {h}\nlink = {l}"), h)),
        (1u32..4, 2u32..5, 2u32..5, link(), link()).prop_map(|(s, l, h, a, b)| (
            format!("kind = \"leaf_spine\"\nspines = {s}\nleaves = {l}\nhosts_per_leaf = {h}\nhost_link = {a}\nfabric_link = {b}"),
            l * h
        )),
        (1u32..6, 1u32..6, link(), link()).prop_map(|(l, r, a, b)| (
            format!("kind = \"dumbbell\"\nleft = {l}\nright = {r}\nhost_link = {a}\nbottleneck_link = {b}"),
            l + r
        )),
    ]
}

fn pfc() -> impl Strategy<Value = String> {
    let xoff = prop_oneof![Just("\"dynamic\"".to_string()), (3u32..200).prop_map(|k| format!("\"{k}KB\""))];
    let mode = prop_oneof![Just("mode = \"until_resume\"".to_string()), (1u32..65535).prop_map(|q| format!("mode = \"timer\", pause_time = {q}"))];
    (xoff, mode, 0u32..8).prop_map(|(x, m, r)| format!("pfc = {{ priorities = [0], xoff = {x}, {m}, reserve = \"{r}KB\" }}"))
}

proptest! {
    #![proptest_config(Config { cases: 64, failure_persistence: None, rng_seed: RngSeed::Fixed(20_261_124), ..Config::default() })]

    #[test]
    fn lossless_runs_drop_nothing_and_conserve_packets(
        (topo, hosts) in topology(),
        pfc in pfc(),
        buffer_kb in 300u32..4000,
        sender in 0u32..3,
        incast_size in 1u32..400,
        senders in 1u32..12,
        load in 1u32..9,
        seed in 0u64..1000,
    ) {
        let senders: Vec<String> = (1..hosts.min(senders + 1)).map(|h| h.to_string()).collect();
        let (transport, aqm) = match sender {
            0 => ("{ kind = \"tcp\", cc = \"reno\" }", ""),
            1 => ("{ kind = \"tcp\", cc = \"dctcp\" }", "aqm = { kind = \"dctcp_red\", threshold = \"30KB\" }"),
            _ => ("{ kind = \"rdma\", cc = \"dcqcn\" }", "aqm = { kind = \"red\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01, non_ect = \"pass\" }"),
        };
        let text = format!(r#"
seed = {seed}
stop = {{ time = "2ms" }}
[topology]
{topo}
[switch]
buffer = "{buffer_kb}KB"
{aqm}
{pfc}
[host]
transport = {transport}
[[traffic]]
kind = "incast"
senders = [{}]
receiver = 0
size = "{incast_size}KB"
at = "10us"
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.{load}
flows = 60
"#, senders.join(", "));
        let r = match dcnlab_sim::run_toml(&text) {
            Ok(r) => r,
            // A buffer too small for every port's headroom is refused up front, naming it.
            Err(e) => { prop_assert!(e.to_string().contains("no shared pool"), "{e}\n{text}"); return Ok(()); }
        };
        prop_assert!(r.meta.failure.is_none(), "{:?}\n{text}", r.meta.failure);
        prop_assert_eq!(r.meta.drops.total(), 0, "{}", text);
        prop_assert!(r.meta.conservation.holds(), "{:?}\n{}", r.meta.conservation, text);
    }
}
