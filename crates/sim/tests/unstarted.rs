//! Flows the scenario defines but the run never started (it stopped before their start time, or a
//! closed-loop entry was still waiting) are rows of `flows`: unfinished, with their endpoints, size and
//! the start time their traffic gave them, and they count in `meta.flows_total`.

use dcnlab_sim::run_toml;

fn scenario(stop: &str, traffic: &str) -> String {
    format!(
        r#"
stop = {stop}
[topology]
kind = "star"
hosts = 6
link = {{ rate = "10Gbps", delay = "2us" }}
[switch]
buffer = "2MB"
[host]
transport = {{ kind = "tcp", cc = "dctcp" }}
{traffic}
"#
    )
}

type Key = (u32, u32, u64, u64);

fn keys(r: &dcnlab_sim::Records) -> Vec<Key> {
    let mut v: Vec<Key> = r.flows.iter().map(|f| (f.src, f.dst, f.size, f.start)).collect();
    v.sort();
    v
}

#[test]
fn a_listed_flow_after_the_stop_is_an_unfinished_row() {
    let traffic = r#"[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 1, size = "20KB", start = "10us" }, { src = 2, dst = 3, size = "5MB", start = "3ms" }]"#;
    let r = run_toml(&scenario(r#"{ time = "1ms" }"#, traffic)).unwrap();
    assert_eq!(r.flows.len(), 2);
    assert_eq!(r.meta.flows_total, 2);
    assert_eq!(r.meta.flows_finished, 1);
    let f = &r.flows[1];
    assert_eq!((f.flow_id, f.src, f.dst, f.size, f.start, f.finish), (1, 2, 3, 5_000_000, 3_000_000_000, None));
    assert!(f.ideal_fct > 4_000_000_000, "its ideal FCT is computed as for any flow: {}", f.ideal_fct);
}

/// The Poisson rows of a run cut short are the very flows a run to the end starts: the same draws.
#[test]
fn poisson_flows_cut_by_the_stop_are_the_flows_a_full_run_starts() {
    let traffic = "[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.4\nflows = 60\nsrc = \"0-4\"\ndst = 5";
    let full = run_toml(&scenario(r#"{ all_flows_done = true, max_time = "5s" }"#, traffic)).unwrap();
    let cut = run_toml(&scenario(r#"{ time = "2ms" }"#, traffic)).unwrap();
    assert_eq!(full.meta.flows_finished, 60);
    assert_eq!(cut.meta.flows_total, 60);
    assert!(cut.meta.flows_finished < 30, "the cut run must leave flows out: {}", cut.meta.flows_finished);
    assert!(cut.flows.iter().any(|f| f.start > 2_000_000_000), "flows after the stop are listed");
    assert_eq!(keys(&cut), keys(&full));
    // Flow ids follow start order.
    assert!(cut.flows.windows(2).all(|w| w[0].flow_id + 1 == w[1].flow_id && w[0].start <= w[1].start));
    for f in cut.flows.iter().filter(|f| f.start > 2_000_000_000) {
        assert_eq!(f.finish, None);
    }
}

/// An entry's `active.stop` bounds what the scenario defines: no row starts at or after it.
#[test]
fn nothing_is_listed_beyond_an_entrys_active_window() {
    let traffic = "[[traffic]]\nkind = \"poisson\"\nsizes = \"web_search\"\nload = 0.4\nflows = 1000\nsrc = \"0-4\"\ndst = 5\nactive = { stop = \"3ms\" }";
    let r = run_toml(&scenario(r#"{ time = "1ms" }"#, traffic)).unwrap();
    assert!(r.flows.len() < 1000 && r.flows.len() > r.meta.flows_finished as usize);
    assert!(r.flows.iter().all(|f| f.start < 3_000_000_000));
    assert!(r.flows.iter().any(|f| f.start > 1_000_000_000));
    assert_eq!(r.meta.flows_total, r.flows.len() as u64);
}

#[test]
fn incast_bursts_after_the_stop_and_closed_loop_waiters_are_listed() {
    let traffic = "[[traffic]]\nkind = \"incast\"\nsenders = \"0-3\"\nreceiver = 5\nsize = \"10KB\"\nat = \"10us\"\nrepeat = 5\nperiod = \"1ms\"";
    let r = run_toml(&scenario(r#"{ time = "2.5ms" }"#, traffic)).unwrap();
    assert_eq!(r.meta.flows_total, 20);
    assert_eq!(r.meta.flows_finished, 12);
    assert_eq!(r.flows.iter().filter(|f| f.start == 4_010_000_000).count(), 4);
    // One flow at a time: the rest wait for it, and the run ends first.
    let traffic = "[[traffic]]\nkind = \"flows\"\nmax_in_flight = 1\nlist = [{ src = 0, dst = 1, size = \"50MB\" }, { src = 0, dst = 1, size = \"1KB\" }, { src = 2, dst = 1, size = \"1KB\" }]";
    let r = run_toml(&scenario(r#"{ time = "1ms" }"#, traffic)).unwrap();
    assert_eq!(r.meta.flows_total, 3);
    assert_eq!(r.meta.flows_finished, 0);
    assert_eq!(keys(&r), vec![(0, 1, 1000, 0), (0, 1, 50_000_000, 0), (2, 1, 1000, 0)]);
    assert_eq!(r.meta.stop_reason, "time");
}

/// A run that ends because every flow finished lists no extra row.
#[test]
fn a_complete_run_has_no_extra_rows() {
    let traffic = "[[traffic]]\nkind = \"incast\"\nsenders = \"0-3\"\nreceiver = 5\nsize = \"10KB\"\nat = \"10us\"\nrepeat = 3\nperiod = \"1ms\"";
    let r = run_toml(&scenario(r#"{ all_flows_done = true, max_time = "1s" }"#, traffic)).unwrap();
    assert_eq!((r.meta.flows_total, r.meta.flows_finished), (12, 12));
    assert_eq!(r.meta.stop_reason, "all_flows_done");
}

/// A run that stops when its flows are done ends at the last flow's finish, no later: also when the count
/// of running flows falls to 0 and rises again before then (flows that start after the first has
/// finished).
#[test]
fn a_run_that_stops_when_its_flows_are_done_ends_at_the_last_finish() {
    let traffic = r#"[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 1, size = "30KB", start = "0s" }, { src = 2, dst = 3, size = "30KB", start = "5ms" }, { src = 4, dst = 5, size = "1MB", start = "5ms" }]
"#;
    let mut sim = dcnlab_sim::Sim::from_toml(&scenario(r#"{ all_flows_done = true, max_time = "1s" }"#, traffic)).unwrap();
    assert!(sim.run_until(u64::MAX));
    let end = sim.now();
    let r = sim.run();
    let finishes: Vec<u64> = r.flows.iter().map(|f| f.finish.unwrap()).collect();
    assert!(finishes[0] < 5_000_000_000, "the first flow ends before the others start: {finishes:?}");
    assert_eq!(end, *finishes.iter().max().unwrap());
}
