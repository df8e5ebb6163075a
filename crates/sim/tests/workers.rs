//! Traffic served by workers at the sending hosts: AC/DC's sequential stride and shuffle
//! (`workloads.md` §9.2–9.3) through the whole simulator.

use dcnlab_sim::records::{FlowRow, Records};
use dcnlab_sim::run_toml;

const MS: u64 = 1_000_000_000;

fn star(traffic: &str) -> Records {
    star_until(r#"{ all_flows_done = true, max_time = "10s" }"#, traffic)
}

fn star_until(stop: &str, traffic: &str) -> Records {
    run_toml(&format!(
        r#"
seed = 4
stop = {stop}
[topology]
kind = "star"
hosts = 17
link = {{ rate = "10Gbps", delay = "2us" }}
[switch]
buffer = "9MB"
aqm = {{ kind = "dctcp_red", threshold = "100KB" }}
[host]
transport = {{ kind = "tcp", cc = "dctcp" }}
{traffic}
"#
    ))
    .unwrap()
}

/// Most flows of one sender running at once, from the flows' start and finish times.
fn most_at_once(flows: &[FlowRow], src: u32) -> usize {
    let mut ev: Vec<(u64, i32)> = vec![];
    for f in flows.iter().filter(|f| f.src == src) {
        ev.push((f.start, 1));
        ev.push((f.finish.unwrap(), -1));
    }
    ev.sort(); // a finish before a start at the same time: −1 < 1
    let (mut n, mut most) = (0i32, 0i32);
    for (_, d) in ev {
        n += d;
        most = most.max(n);
    }
    most as usize
}

/// §9.2: host i sends to (i + 1 … i + 4) mod 17 one after the other — the next starts the moment the
/// last one finishes — while 16 KB messages go to (i + 8) mod 17 every 100 ms.
#[test]
fn a_sequential_stride_runs_each_hosts_transfers_back_to_back() {
    let r = star(
        r#"
[[traffic]]
kind = "stride"
strides = [1, 2, 3, 4]
size = "2MB"
sequential = true
tag = "background"
[[traffic]]
kind = "stride"
stride = 8
size = "16KB"
repeat = 3
period = "100ms"
tag = "mice"
"#,
    );
    assert_eq!(r.meta.flows_finished, 17 * 4 + 17 * 3);
    let bg: Vec<FlowRow> = r.flows.iter().filter(|f| f.tag == 1).cloned().collect();
    for h in 0..17 {
        let mut mine: Vec<&FlowRow> = bg.iter().filter(|f| f.src == h).collect();
        mine.sort_by_key(|f| f.start);
        let dsts: Vec<u32> = mine.iter().map(|f| f.dst).collect();
        assert_eq!(dsts, (1..=4).map(|k| (h + k) % 17).collect::<Vec<_>>(), "host {h} in the list's order");
        for w in mine.windows(2) {
            assert_eq!(w[1].start, w[0].finish.unwrap(), "host {h}: the next transfer starts as the last ends");
        }
        assert_eq!(most_at_once(&bg, h), 1);
    }
    let mice: Vec<&FlowRow> = r.flows.iter().filter(|f| f.tag == 2).collect();
    let mut starts: Vec<u64> = mice.iter().map(|f| f.start / MS).collect();
    starts.dedup();
    assert_eq!(starts, [0, 100, 200]);
    assert!(mice.iter().all(|f| f.dst == (f.src + 8) % 17));
}

/// §9.3: every host sends to every other in a random order, at most two at once.
#[test]
fn a_shuffle_sends_to_every_other_host_two_at_a_time() {
    let r = star("[[traffic]]\nkind = \"shuffle\"\nsize = \"500KB\"\n");
    assert_eq!(r.meta.flows_finished, 17 * 16);
    let mut orders = vec![];
    for h in 0..17 {
        let mut mine: Vec<&FlowRow> = r.flows.iter().filter(|f| f.src == h).collect();
        let mut dsts: Vec<u32> = mine.iter().map(|f| f.dst).collect();
        dsts.sort();
        assert_eq!(dsts, (0..17).filter(|&d| d != h).collect::<Vec<_>>());
        assert_eq!(most_at_once(&r.flows, h), 2, "host {h}");
        mine.sort_by_key(|f| (f.start, f.flow_id));
        orders.push(mine.iter().map(|f| f.dst).collect::<Vec<_>>());
    }
    // Random orders: not every host goes in the same (ascending) order.
    assert!(orders.iter().filter(|o| o.windows(2).all(|w| w[0] < w[1])).count() < 3);
    // `parallel = 1`: one at a time.
    let one = star("[[traffic]]\nkind = \"shuffle\"\nsize = \"500KB\"\nparallel = 1\nhosts = \"0-4\"\n");
    assert_eq!(one.meta.flows_finished, 5 * 4);
    assert!((0..5).all(|h| most_at_once(&one.flows, h) == 1));
}

/// AC/DC's convergence test (Fig. 14) adds long-lived flows one by one and removes them again: a listed
/// flow's `stop` ends it with what it has sent by then. The stopped flows finish within an RTT or so of
/// their stop, with their size and ideal FCT what they sent; the flow left alone takes the whole link.
#[test]
fn stopped_flows_end_with_what_they_sent_and_leave_the_link_to_the_rest() {
    let r = run_toml(
        r#"
seed = 1
stop = { time = "50ms" }
[topology]
kind = "dumbbell"
left = 3
right = 1
host_link = { rate = "100Gbps", delay = "2us" }
bottleneck_link = { rate = "10Gbps", delay = "5us" }
[switch]
buffer = "9MB"
aqm = { kind = "dctcp_red", threshold = "100KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 3, size = "inf", stop = "40ms" }, { src = 1, dst = 3, size = "inf", start = "10ms", stop = "30ms" }, { src = 2, dst = 3, size = "inf", start = "20ms" }]
[record]
trace_flows = [2]
trace_interval = "2ms"
"#,
    )
    .unwrap();
    for (i, stop) in [(0usize, 40u64), (1, 30)] {
        let f = &r.flows[i];
        let fin = f.finish.expect("a stopped flow finishes");
        assert!(fin >= stop * MS && fin < stop * MS + MS / 2, "flow {i} finished at {fin}");
        assert!(f.size < u64::MAX && f.size > 5_000_000, "flow {i}: {} B", f.size);
        assert!(f.ideal_fct < fin - f.start, "flow {i}: ideal {} for {} B", f.ideal_fct, f.size);
    }
    // Flow 1 ran 20 ms beside one or two others: about a third to a half of 10 Gbps.
    let gbps = r.flows[1].size as f64 * 8.0 / 20e-3 / 1e9;
    assert!((2.5..=5.5).contains(&gbps), "{gbps}");
    assert!(r.flows[2].finish.is_none());
    let at = |t: u64| r.flow_trace.iter().find(|x| x.time == t * MS).unwrap().delivered_bytes;
    let alone = (at(50) - at(42)) as f64 * 8.0 / 8e-3 / 1e9;
    assert!(alone > 9.5, "flow 2 alone: {alone} Gbps");
    assert!(r.meta.conservation.holds());
}

/// §9.4: every host runs `threads` loops of draw a size, pick another host, send, wait for delivery. So a
/// host never has more than `threads` messages out, each new one starts the moment one of its own is
/// delivered, and the run ends after `messages`; a run cut short still lists every message the entry
/// defines (the ones never sent as unstarted rows).
#[test]
fn closed_loop_threads_send_one_message_at_a_time_each() {
    let traffic = "[[traffic]]\nkind = \"closed_loop\"\nsizes = \"web_search\"\nmessages = 300\nthreads = 3\nhosts = \"0-7\"\nstart = \"1ms\"\n";
    let r = star(traffic);
    assert_eq!(r.meta.flows_finished, 300);
    for h in 0..8 {
        let mine: Vec<&FlowRow> = r.flows.iter().filter(|f| f.src == h).collect();
        assert!(!mine.is_empty() && mine.iter().all(|f| f.dst != h && f.dst < 8));
        assert_eq!(most_at_once(&r.flows, h), 3, "host {h}");
        let finishes: Vec<u64> = mine.iter().map(|f| f.finish.unwrap()).collect();
        let first = mine.iter().filter(|f| f.start == MS).count();
        assert_eq!(first, 3, "host {h}: three threads start at 1 ms");
        assert!(mine.iter().filter(|f| f.start > MS).all(|f| finishes.contains(&f.start)), "host {h}: a message starts as one is delivered");
    }
    assert!(r.flows.iter().all(|f| f.src < 8));
    let short = star_until(r#"{ time = "3ms" }"#, traffic);
    assert_eq!(short.flows.len(), 300);
    assert!(short.meta.flows_finished < 300);
}
