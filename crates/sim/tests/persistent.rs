//! Closed-loop messages over persistent connections (`workloads.md` §9.4, AC/DC's trace-driven test):
//! each thread of a host keeps one connection per destination and writes its messages to it, so the
//! connection's window carries over; each message is still its own flow row.

use std::sync::atomic::{AtomicUsize, Ordering};

use dcnlab_sim::records::{FlowRow, Records};
use dcnlab_sim::{run_toml, Sim};

/// A CDF file where every message is `size` bytes; a new file per call, as tests run in parallel
/// threads of one process and one must not read a file another is rewriting.
fn one_size(size: u64) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dcnlab-persistent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("size_{size}-{}.txt", N.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&p, format!("{size} 0\n{size} 1\n")).unwrap();
    p.to_str().unwrap().to_string()
}

/// Hosts 0 and 1 each run one thread that sends `messages` (of the entry) of 200 KB to the other, one at
/// a time, over an idle 10 Gbps star with 50 µs links (base RTT ≈ 200 µs, 250 KB in flight at line
/// rate); a small initial window (2 segments) makes the first message of a connection slow. The run goes
/// on after the last message so that every ACK arrives.
fn run(persistent: bool, vswitch: &str, messages: u32) -> Records {
    let sizes = one_size(200_000);
    run_toml(&format!(
        r#"
seed = 2
stop = {{ time = "100ms" }}
[topology]
kind = "star"
hosts = 3
link = {{ rate = "10Gbps", delay = "50us" }}
[switch]
buffer = "4MB"
aqm = {{ kind = "dctcp_red", threshold = "100KB" }}
[host]
transport = {{ kind = "tcp", cc = "dctcp", init_cwnd = 2, handshake = true, wscale = 7, rwnd = "8MB" }}
{vswitch}
[[traffic]]
kind = "closed_loop"
sizes = "{sizes}"
messages = {messages}
threads = 1
hosts = [0, 1]
persistent = {persistent}
"#
    ))
    .unwrap()
}

fn fct(f: &FlowRow) -> u64 {
    f.finish.unwrap() - f.start
}

/// Each host's messages in the order they were sent.
fn by_host(r: &Records, h: u32) -> Vec<&FlowRow> {
    let mut v: Vec<&FlowRow> = r.flows.iter().filter(|f| f.src == h).collect();
    v.sort_by_key(|f| f.start);
    v
}

#[test]
fn a_threads_messages_share_one_connection_and_its_window() {
    let p = run(true, "", 8);
    let own = run(false, "", 8);
    for r in [&p, &own] {
        assert_eq!((r.flows.len(), r.meta.flows_finished), (8, 8));
        assert!(r.meta.conservation.holds());
        assert!(r.flows.iter().all(|f| f.size == 200_000 && f.dst == 1 - f.src && f.retransmits == 0));
    }
    for h in 0..2 {
        let (m, o) = (by_host(&p, h), by_host(&own, h));
        assert_eq!((m.len(), o.len()), (4, 4), "host {h}");
        // One at a time: each message starts the moment the one before is delivered.
        for w in m.windows(2).chain(o.windows(2)) {
            assert_eq!(w[1].start, w[0].finish.unwrap());
        }
        // A connection per message: each starts from the initial window and pays the handshake, so all
        // take the same time; the first message of a persistent connection is that same message.
        let near = |a: u64, b: u64| (a as f64 - b as f64).abs() < 0.1 * b as f64;
        assert!(o.iter().all(|f| near(fct(f), fct(o[0])) && f.ideal_fct == o[0].ideal_fct), "host {h}");
        assert!(near(fct(m[0]), fct(o[0])) && m[0].ideal_fct == o[0].ideal_fct, "host {h}");
        // Later messages find the window the first one grew (and no handshake): far quicker.
        for f in &m[1..] {
            assert!((fct(f) as f64) < 0.6 * fct(m[0]) as f64, "host {h}: {} vs {}", fct(f), fct(m[0]));
            assert!(f.ideal_fct < m[0].ideal_fct && f.ideal_fct == m[1].ideal_fct, "no handshake in the ideal");
            assert!(fct(f) >= f.ideal_fct);
        }
    }
    // Fewer packets: one handshake per connection instead of one per message.
    assert!(p.meta.conservation.sent_packets < own.meta.conservation.sent_packets);
}

/// The vSwitch sees one connection: AC/DC keeps the state it learned from the handshake (the window
/// scale) for every later message, so it still writes its window into their ACKs. If each message's
/// packets carried a new id, the vSwitch would meet them without a handshake and leave them alone.
#[test]
fn acdc_keeps_one_state_per_persistent_connection() {
    let r = run(true, r#"vswitch = { kind = "acdc" }"#, 8);
    let own = run(false, r#"vswitch = { kind = "acdc" }"#, 8);
    for r in [&r, &own] {
        assert_eq!(r.meta.flows_finished, 8);
        assert!(r.meta.conservation.holds());
    }
    // A connection per message: every message has its handshake, so AC/DC handles them all.
    let (a, b) = (r.meta.acdc.unwrap().rwnd_rewrites, own.meta.acdc.unwrap().rwnd_rewrites);
    let segments: u64 = r.flows.iter().map(|f| f.size.div_ceil(1460)).sum();
    // Every data segment is acknowledged at once (no delayed ACKs) and AC/DC writes its window into every
    // ACK (its DCTCP window is far below the guests' 8 MB).
    assert!(a >= segments && b >= segments, "persistent {a}, per message {b}, {segments} segments");
}

#[test]
fn persistent_runs_are_deterministic() {
    let traffic = |persistent: bool| {
        format!(
            r#"
seed = 9
stop = {{ all_flows_done = true, max_time = "2s" }}
[topology]
kind = "star"
hosts = 8
link = {{ rate = "10Gbps", delay = "2us" }}
[switch]
buffer = "2MB"
aqm = {{ kind = "dctcp_red", threshold = "65KB" }}
[host]
transport = {{ kind = "tcp", cc = "cubic", handshake = true }}
[[traffic]]
kind = "closed_loop"
sizes = "web_search"
messages = 200
threads = 3
persistent = {persistent}
"#
        )
    };
    let a = run_toml(&traffic(true)).unwrap();
    let b = run_toml(&traffic(true)).unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.meta.flows_finished, 200);
    assert!(a.meta.conservation.holds());
    let c = run_toml(&traffic(false)).unwrap();
    assert_eq!(c.meta.flows_finished, 200);
    assert_ne!(a.flows, c.flows);
}

#[test]
fn persistent_must_be_a_boolean() {
    let text = "stop = { time = \"1ms\" }\n[topology]\nkind = \"star\"\nhosts = 3\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n[[traffic]]\nkind = \"closed_loop\"\nsizes = \"web_search\"\nmessages = 5\npersistent = \"yes\"";
    let e = Sim::from_toml(text).err().expect("a string is not a boolean");
    assert_eq!(e.field, "traffic[0].persistent", "{e}");
    Sim::from_toml(&text.replace("\"yes\"", "false")).unwrap();
    let e = Sim::from_toml(&text.replace("\"yes\"", "false\nopening_tag = \"open\"")).err().expect("nothing to open");
    assert_eq!(e.field, "traffic[0].opening_tag", "{e}");
}

/// `opening_tag` marks exactly the messages that opened their connection: one per (host, thread,
/// destination) used, each the first of its thread to that destination.
#[test]
fn the_opening_tag_marks_each_connections_first_message() {
    let text = r#"
seed = 5
stop = { all_flows_done = true, max_time = "2s" }
[topology]
kind = "star"
hosts = 4
link = { rate = "10Gbps", delay = "2us" }
[host]
transport = { kind = "tcp", cc = "dctcp", handshake = true }
[[traffic]]
kind = "closed_loop"
sizes = "data_mining"
messages = 300
threads = 2
tag = "msg"
opening_tag = "open"
"#;
    let r = run_toml(text).unwrap();
    assert_eq!(r.meta.flows_finished, 300);
    let tag = |name: &str| r.meta.tags.iter().position(|t| t == name).unwrap() as u16;
    let (msg, open) = (tag("msg"), tag("open"));
    let opened = r.flows.iter().filter(|f| f.tag == open).count();
    // 4 hosts × 2 threads × 3 destinations at most, and with 300 messages every one is used.
    assert_eq!(opened, 24);
    assert!(r.flows.iter().all(|f| f.tag == msg || f.tag == open));
    // Each (host, destination) pair's first message opened a connection.
    for s in 0..4 {
        for d in (0..4).filter(|&d| d != s) {
            let first = r.flows.iter().filter(|f| f.src == s && f.dst == d).min_by_key(|f| (f.start, f.flow_id)).unwrap();
            assert_eq!(first.tag, open, "{s} → {d}");
        }
    }
}
