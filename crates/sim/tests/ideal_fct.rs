//! Ideal FCT and slowdown = 1 for a lone small flow on every topology kind; slowdown ≥ 1 always.

use dcnlab_sim::run_toml;

fn lone_flow(topology: &str, src: u32, dst: u32, size: &str, extra: &str) -> dcnlab_sim::Records {
    let text = format!(
        r#"
stop = {{ all_flows_done = true, max_time = "1s" }}
{topology}
[switch]
buffer = "4MB"
[host]
transport = {{ kind = "tcp", cc = "dctcp", init_cwnd = 10 }}
{extra}
[[traffic]]
kind = "flows"
list = [{{ src = {src}, dst = {dst}, size = "{size}", start = "10us" }}]
"#
    );
    run_toml(&text).unwrap()
}

const TOPOLOGIES: &[(&str, u32, u32)] = &[
    ("[topology]\nkind = \"star\"\nhosts = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }", 0, 3),
    (
        "[topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\nhost_link = { rate = \"10Gbps\", delay = \"2us\" }\nbottleneck_link = { rate = \"1Gbps\", delay = \"5us\" }",
        1,
        2,
    ),
    (
        "[topology]\nkind = \"leaf_spine\"\nspines = 2\nleaves = 3\nhosts_per_leaf = 4\nhost_link = { rate = \"25Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"3us\" }",
        0,
        11,
    ),
    ("[topology]\nkind = \"fat_tree\"\nk = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }", 0, 15),
];

#[test]
fn lone_small_flow_has_slowdown_one_on_every_topology() {
    for (topo, s, d) in TOPOLOGIES {
        // 10 segments fit in the initial window.
        let r = lone_flow(topo, *s, *d, "14600B", "");
        let f = &r.flows[0];
        assert!(f.finish.is_some(), "{topo}");
        assert_eq!(f.fct().unwrap(), f.ideal_fct, "{topo}: fct {:?} ideal {}", f.fct(), f.ideal_fct);
        assert_eq!(f.slowdown().unwrap(), 1.0);
    }
}

#[test]
fn lone_small_flow_on_file_topology() {
    let dir = std::env::temp_dir().join(format!("dcnlab-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.toml");
    std::fs::write(
        &p,
        r#"
hosts = 3
switches = 2
links = [
  { a = "h0", b = "s0", rate = "10Gbps", delay = "1us" },
  { a = "h1", b = "s0", rate = "10Gbps", delay = "1us" },
  { a = "s0", b = "s1", rate = "40Gbps", delay = "10us" },
  { a = "h2", b = "s1", rate = "10Gbps", delay = "1us" },
]
"#,
    )
    .unwrap();
    let topo = format!("[topology]\nkind = \"file\"\npath = \"{}\"", p.display());
    let r = lone_flow(&topo, 0, 2, "5000B", "");
    let f = &r.flows[0];
    assert_eq!(f.fct().unwrap(), f.ideal_fct);
    // 3 hops store-and-forward of one 4 × … packet train: the ideal is at least the propagation sum.
    assert!(f.ideal_fct > 12_000_000);
}

#[test]
fn extra_delay_is_part_of_ideal_and_released_on_time() {
    let topo = TOPOLOGIES[0].0;
    let base = lone_flow(topo, 0, 3, "14600B", "");
    let delayed = lone_flow(topo, 0, 3, "14600B", "extra_delay = { kind = \"constant\", value = \"100us\" }");
    let (b, d) = (&base.flows[0], &delayed.flows[0]);
    assert_eq!(d.fct().unwrap(), d.ideal_fct, "held packets must leave exactly on time");
    assert_eq!(d.ideal_fct, b.ideal_fct + 100_000_000);
}

#[test]
fn extra_delay_with_handshake_is_in_the_ideal() {
    // The SYN and the data both wait the sender's delay, the SYN-ACK the receiver's when ACKs get it;
    // with "payload" only the data waits.
    for (applies_to, waits) in [("data", 2), ("all", 3), ("payload", 1)] {
        let text = format!(
            r#"
stop = {{ all_flows_done = true, max_time = "1s" }}
{}
[host]
transport = {{ kind = "tcp", cc = "dctcp", handshake = true }}
extra_delay = {{ kind = "constant", value = "100us", applies_to = "{applies_to}" }}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 3, size = "14600B", start = "10us" }}]
"#,
            TOPOLOGIES[0].0
        );
        let d = run_toml(&text).unwrap();
        let plain = run_toml(&text.replace("value = \"100us\"", "value = \"0us\"")).unwrap();
        let (d, plain) = (&d.flows[0], &plain.flows[0]);
        assert_eq!(d.fct().unwrap(), d.ideal_fct, "{applies_to}: a lone flow is ideal");
        assert_eq!(d.ideal_fct - plain.ideal_fct, waits * 100_000_000, "{applies_to}");
    }
}

#[test]
fn slowdown_never_below_one_for_large_flows() {
    for (topo, s, d) in TOPOLOGIES {
        let r = lone_flow(topo, *s, *d, "3MB", "");
        let f = &r.flows[0];
        let sd = f.slowdown().unwrap();
        assert!(sd >= 1.0, "{topo}: {sd}");
        // Slow start costs a few RTTs, not more.
        assert!(sd < 3.0, "{topo}: {sd}");
    }
}
