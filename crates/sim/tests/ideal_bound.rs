//! Property: the ideal FCT is a lower bound. Random small scenarios (every built-in topology kind, per-flow
//! and per-packet ECMP, Reno and DCTCP, several AQMs, buffers, extra host delays, random flows) run to
//! completion, and every finished flow's FCT is at least its ideal FCT — compared as integers of
//! picoseconds, so no tolerance is needed (fct ≥ ideal > 0 makes the f64 slowdown ≥ 1 exactly: both
//! conversions and the division round monotonically and 1.0 is exact).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const RATES: &[&str] = &["1Gbps", "7Gbps", "10Gbps", "25Gbps", "40Gbps", "100Gbps"];

fn link() -> impl Strategy<Value = String> {
    (0..RATES.len(), 1u32..20_000).prop_map(|(r, d)| format!("{{ rate = \"{}\", delay = \"{}ns\" }}", RATES[r], d))
}

/// A topology table and its host count.
fn topology() -> impl Strategy<Value = (String, u32)> {
    prop_oneof![
        (3u32..7, link()).prop_map(|(h, l)| (format!("kind = \"star\"\nhosts = {h}\nlink = {l}"), h)),
        (1u32..4, 1u32..4, link(), link()).prop_map(|(a, b, h, f)| {
            (format!("kind = \"dumbbell\"\nleft = {a}\nright = {b}\nhost_link = {h}\nbottleneck_link = {f}"), a + b)
        }),
        (1u32..4, 2u32..4, 1u32..4, link(), link()).prop_map(|(s, l, k, h, f)| {
            let t = format!("kind = \"leaf_spine\"\nspines = {s}\nleaves = {l}\nhosts_per_leaf = {k}\nhost_link = {h}\nfabric_link = {f}");
            (t, l * k)
        }),
        link().prop_map(|l| (format!("kind = \"fat_tree\"\nk = 4\nlink = {l}"), 16)),
    ]
}

fn aqm() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("{ kind = \"droptail\" }"),
        Just("{ kind = \"dctcp_red\", threshold = \"30KB\" }"),
        Just("{ kind = \"red\", kmin = \"20KB\", kmax = \"60KB\", pmax = 0.2 }"),
        Just("{ kind = \"tcn\", threshold = \"20us\" }"),
        Just("{ kind = \"codel\", target = \"10us\", interval = \"100us\" }"),
    ]
}

fn extra_delay() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("extra_delay = { kind = \"constant\", value = \"7us\" }"),
        Just("extra_delay = { kind = \"uniform\", min = \"0us\", max = \"40us\", per = \"flow\", applies_to = \"all\" }"),
    ]
}

/// Flows as (src, dst offset, size in bytes, start in ns); endpoints are taken modulo the host count.
fn flows() -> impl Strategy<Value = Vec<(u32, u32, u64, u64)>> {
    let size = prop_oneof![1u64..3000, 3000u64..200_000, 200_000u64..3_000_000];
    prop::collection::vec((0u32..64, 1u32..64, size, 0u64..300_000), 1..7)
}

fn scenario(
    (topo, n): &(String, u32),
    packet: bool,
    cc: &str,
    aqm: &str,
    buffer: Option<u32>,
    delay: &str,
    init_cwnd: u32,
    list: &[(u32, u32, u64, u64)],
) -> String {
    let flows: Vec<String> = list
        .iter()
        .map(|&(s, off, size, start)| {
            let (src, dst) = (s % n, (s % n + 1 + off % (n - 1)) % n);
            format!("{{ src = {src}, dst = {dst}, size = \"{size}B\", start = \"{start}ns\" }}")
        })
        .collect();
    let buffer = buffer.map(|b| format!("buffer = \"{b}KB\"")).unwrap_or_default();
    format!(
        "seed = {seed}\nstop = {{ all_flows_done = true, max_time = \"2s\" }}\n[topology]\n{topo}\n[switch]\n{buffer}\necmp = \"{ecmp}\"\naqm = {aqm}\n\
         [host]\ntransport = {{ kind = \"tcp\", cc = \"{cc}\", init_cwnd = {init_cwnd}, min_rto = \"1ms\" }}\n{delay}\n\
         [[traffic]]\nkind = \"flows\"\nlist = [{}]\n",
        flows.join(", "),
        seed = list.len() as u64 * 7 + init_cwnd as u64,
        ecmp = if packet { "packet" } else { "flow" },
    )
}

proptest! {
    #![proptest_config(Config { cases: 96, failure_persistence: None, rng_seed: RngSeed::Fixed(20_251_123), ..Config::default() })]

    #[test]
    fn every_finished_flow_is_no_faster_than_its_ideal(
        topo in topology(),
        packet in any::<bool>(),
        cc in prop_oneof![Just("reno"), Just("dctcp")],
        aqm in aqm(),
        buffer in prop::option::of(100u32..4000),
        delay in extra_delay(),
        init_cwnd in 1u32..40,
        list in flows(),
    ) {
        let text = scenario(&topo, packet, cc, aqm, buffer, delay, init_cwnd, &list);
        let r = dcnlab_sim::run_toml(&text).unwrap();
        for f in &r.flows {
            if let Some(fct) = f.fct() {
                prop_assert!(fct >= f.ideal_fct, "flow {} ({} B, {}→{}): fct {} < ideal {}\n{}", f.flow_id, f.size, f.src, f.dst, fct, f.ideal_fct, text);
                prop_assert!(f.slowdown().unwrap() >= 1.0);
            }
        }
    }
}
