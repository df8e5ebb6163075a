//! The estimate's counts against what building and running the same scenario makes.

use super::estimate::{Estimate, MAX_ROUTING_STEPS};
use super::Sim;
use crate::config::Scenario;

fn scenario(topology: &str, traffic: &str, record: &str, stop: &str) -> String {
    format!(
        "stop = {stop}\n[topology]\n{topology}\n[switch]\nbuffer = \"1MB\"\n[host]\ntransport = {{ kind = \"tcp\", cc = \"dctcp\" }}\n{traffic}\n[record]\n{record}\n"
    )
}

const TOPOLOGIES: &[&str] = &[
    "kind = \"star\"\nhosts = 9\nlink = { rate = \"10Gbps\", delay = \"1us\" }",
    "kind = \"dumbbell\"\nleft = 3\nright = 4\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck_link = { rate = \"10Gbps\", delay = \"1us\" }",
    "kind = \"leaf_spine\"\nspines = 3\nleaves = 4\nhosts_per_leaf = 5\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"40Gbps\", delay = \"1us\" }",
    "kind = \"leaf_spine\"\nspines = 2\nleaves = 1\nhosts_per_leaf = 5\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"40Gbps\", delay = \"1us\" }",
    "kind = \"fat_tree\"\nk = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }",
    "kind = \"fat_tree\"\nk = 8\nlink = { rate = \"10Gbps\", delay = \"1us\" }",
];

/// Hosts, switches, ports and every next hop of the route table, counted in closed form, are exactly
/// what building makes (catches a wrong next-hop formula for any topology kind).
#[test]
fn topology_counts_are_exact() {
    for t in TOPOLOGIES {
        let text = scenario(t, "", "", "{ time = \"1ms\" }");
        let e = Estimate::count(&Scenario::from_toml(&text).unwrap()).unwrap();
        let s = Sim::from_toml(&text).unwrap();
        assert_eq!(e.hosts, s.net.n_hosts as u64, "{t}");
        assert_eq!(e.switches, s.net.switches.len() as u64, "{t}");
        assert_eq!(e.ports, s.net.ports.len() as u64, "{t}");
        assert_eq!(e.route_next_hops, s.net.route_ports.len() as u64, "{t}");
    }
}

/// Flows counted from the config equal the rows of a complete run, for every traffic kind; queue and
/// link samples equal the rows a run of the stop time records.
#[test]
fn flow_and_sample_counts_match_a_run() {
    let dir = std::env::temp_dir().join(format!("dcnlab-estimate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flows.csv");
    std::fs::write(&file, "src,dst,size,start\n0,1,5KB,10\n# a comment\n\n2,3,7KB,20\n4,5,1KB,30\n").unwrap();
    let traffic = format!(
        "[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.3\nflows = 40\n\
         [[traffic]]\nkind = \"incast\"\nsenders = \"0-5\"\nreceiver = 8\nsize = \"5KB\"\nat = \"50us\"\nflows = 9\nrepeat = 3\nperiod = \"200us\"\n\
         [[traffic]]\nkind = \"stride\"\nstride = 2\nsize = \"3KB\"\n\
         [[traffic]]\nkind = \"permutation\"\nsize = \"3KB\"\n\
         [[traffic]]\nkind = \"flows\"\nlist = [{{ src = 1, dst = 2, size = \"1KB\" }}]\n\
         [[traffic]]\nkind = \"file\"\npath = \"{}\"\n",
        file.display()
    );
    let text = scenario(TOPOLOGIES[0], &traffic, "", "{ all_flows_done = true, max_time = \"1s\" }");
    let e = Estimate::count(&Scenario::from_toml(&text).unwrap()).unwrap();
    let r = Sim::from_toml(&text).unwrap().run();
    // The file's header line counts as a row in the estimate (it does not parse the file).
    assert_eq!(e.flows, r.meta.flows_total + 1);
    assert_eq!(r.meta.flows_total, 40 + 27 + 9 + 9 + 1 + 3);

    let record = "queue_sample_interval = \"10us\"\nqueues = \"all\"\nlink_sample_interval = \"25us\"\nsample_from = \"100us\"";
    let text = scenario(TOPOLOGIES[2], "", record, "{ time = \"1ms\" }");
    let e = Estimate::count(&Scenario::from_toml(&text).unwrap()).unwrap();
    let r = Sim::from_toml(&text).unwrap().run();
    assert_eq!(e.queue_samples, r.queues.len() as u64);
    // The first link sample (at sample_from) only sets the baseline, so both are (1 ms − 100 µs) / interval.
    assert_eq!(e.link_samples, r.links.len() as u64);
}

/// The cases that must be refused before anything is built are counted in closed form, at once.
#[test]
fn huge_scenarios_are_counted_without_building() {
    let t = std::time::Instant::now();
    let star = scenario("kind = \"star\"\nhosts = 200000000\nlink = { rate = \"10Gbps\", delay = \"1us\" }", "", "", "{ time = \"1ms\" }");
    let sc = Scenario::from_toml(&star).unwrap();
    let e = Estimate::count(&sc).unwrap();
    assert_eq!(e.ports, 400_000_000);
    assert!(e.bytes > 50 << 30, "{}", e.describe());
    assert!(e.limits(&sc).is_err());
    assert!(e.routing_steps as u128 > MAX_ROUTING_STEPS);

    let fine = scenario(TOPOLOGIES[1], "", "queue_sample_interval = \"1ps\"\nqueues = \"all\"", "{ time = \"10s\" }");
    let e = Estimate::count(&Scenario::from_toml(&fine).unwrap()).unwrap();
    // A dumbbell's switch ports: 3 + 1 and 4 + 1.
    assert_eq!(e.queue_samples, 10_000_000_000_000 * 9);
    assert!(e.bytes > 1 << 50, "{}", e.describe());

    let incast = "[[traffic]]\nkind = \"incast\"\nsenders = \"0-7\"\nreceiver = 8\nsize = \"1KB\"\nat = \"0us\"\nrepeat = 2000000000\nperiod = \"1us\"";
    let sc = Scenario::from_toml(&scenario(TOPOLOGIES[0], incast, "", "{ time = \"1ms\" }")).unwrap();
    let e = Estimate::count(&sc).unwrap();
    assert_eq!(e.flows, 16_000_000_000);
    assert!(e.bytes > 1 << 40, "{}", e.describe());
    assert_eq!(e.limits(&sc).unwrap_err().field, "traffic[0].repeat");

    let ft = |k: u32| scenario(&format!("kind = \"fat_tree\"\nk = {k}\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}"), "", "", "{ time = \"1ms\" }");
    let sc = Scenario::from_toml(&ft(64)).unwrap();
    let e = Estimate::count(&sc).unwrap();
    assert_eq!(e.route_next_hops, 8_590_000_128);
    assert_eq!(e.limits(&sc).unwrap_err().field, "topology.k");
    // A 48-ary fat-tree fits the indexes but holds gigabytes of routes.
    let sc = Scenario::from_toml(&ft(48)).unwrap();
    let e = Estimate::count(&sc).unwrap();
    assert!(e.limits(&sc).is_ok());
    assert!(e.bytes > 6 << 30, "{}", e.describe());
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
}
