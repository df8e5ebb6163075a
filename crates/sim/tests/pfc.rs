//! Lossless priorities and PFC end to end (`net/pfc.rs`, `net/lossless.rs`, `net/deadlock.rs`): when a
//! PAUSE is sent and when it arrives, that only its priority stops, timer-mode refresh, deadlock cycles,
//! lossy and lossless traffic on one switch, the `ports` and `pauses` records, and bad input.

mod common;

use common::{incast, port_row, US};
use dcnlab_sim::{run_toml, Sim};

/// The shared star with TCP Reno.
fn star(hosts: u32, switch: &str, traffic: &str, stop: &str) -> String {
    common::star(hosts, switch, "kind = \"tcp\"\ncc = \"reno\"", traffic, stop)
}

#[test]
fn an_incast_into_a_lossless_priority_pauses_instead_of_dropping() {
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"20KB\" }";
    let text = star(9, sw, &incast(8, "1MB"), "{ all_flows_done = true, max_time = \"50ms\" }");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none());
    assert_eq!(r.meta.drops.total(), 0);
    assert!(r.meta.conservation.holds());
    assert_eq!(r.meta.flows_finished, 8);
    // Every sender was paused, and the switch sent the frames its senders received.
    let sent: u64 = r.ports.iter().map(|p| p.pause_frames_sent).sum();
    let received: u64 = r.ports.iter().map(|p| p.pause_frames_received).sum();
    assert!(sent > 16 && sent == received, "sent {sent}, received {received}");
    for h in 1..=8 {
        let p = port_row(&r, &format!("h{h}"), 0);
        assert!(p.paused > 0 && p.pause_frames_received > 0, "h{h}: {p:?}");
    }
    assert_eq!(r.pauses.len() as u64, sent + received);
    // The receiver's link stays busy: 8 MB at 10 Gbps is 6.4 ms of payload.
    let last = r.flows.iter().map(|f| f.finish.unwrap()).max().unwrap();
    assert!(last < 7_200 * US, "last finish {} us", last / US);
    // The same incast lossy, with the same buffer, drops.
    let lossy = run_toml(&star(9, "buffer = \"300KB\"", &incast(8, "1MB"), "{ all_flows_done = true, max_time = \"200ms\" }")).unwrap();
    assert!(lossy.meta.drops.buffer > 0);
}

#[test]
fn pause_is_sent_when_xoff_is_crossed_and_arrives_one_frame_time_and_link_delay_later() {
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"20KB\", reserve = \"0B\" }";
    let text = star(3, sw, &incast(2, "1MB"), "{ time = \"2ms\" }");
    let r = run_toml(&text).unwrap();
    let first = r.pauses.iter().find(|p| p.sent && p.pause).expect("a PAUSE");
    let node = r.meta.node_names[first.node as usize].clone();
    assert_eq!(node, "sw0");
    // Received by the host at the far end of that port: a 64 B frame at 10 Gbps (51.2 ns) plus the 1 us
    // link, plus at most one ACK (64 B) the port was sending when XOFF was crossed.
    let host = r.meta.node_names.iter().position(|x| *x == format!("h{}", first.port)).unwrap() as u32;
    let got = r.pauses.iter().find(|p| !p.sent && p.pause && p.node == host).unwrap();
    let lag = got.time - first.time;
    assert!((US + 51_200..=US + 102_400).contains(&lag), "PAUSE took {lag} ps");
    // At that instant the port's ingress counter has just reached XOFF: below it one packet earlier.
    let mut sim = Sim::from_toml(&text).unwrap();
    sim.run_until(first.time - 1);
    let (before, _, paused) = sim.ingress("sw0", first.port, 0).unwrap();
    // One arriving packet (≤ 1540 B on the wire) takes it over XOFF (a departure at the same instant may
    // take some back).
    assert!((20_000 - 1540..20_000).contains(&before) && !paused, "{before} B before");
    sim.run_until(first.time);
    let (_, hdrm, paused) = sim.ingress("sw0", first.port, 0).unwrap();
    assert!(paused && hdrm == 0);
    // While paused, the host sends at most the frame it had started, then nothing until the RESUME.
    let resume = r.pauses.iter().find(|p| !p.sent && !p.pause && p.node == host && p.time > got.time).unwrap();
    let mut sim = Sim::from_toml(&text).unwrap();
    sim.run_until(got.time);
    let tx0 = sim.queue_counters(&format!("h{}", first.port), 0, 0).unwrap().tx_pkts;
    sim.run_until(resume.time - 1);
    let tx1 = sim.queue_counters(&format!("h{}", first.port), 0, 0).unwrap().tx_pkts;
    assert!(tx1 - tx0 <= 1, "{} packets sent while paused", tx1 - tx0);
}

#[test]
fn only_the_paused_priority_stops() {
    // h1 sends a lossy flow (priority 0) and a lossless one (priority 1) to h0; h2 sends another lossless
    // one. The port to h0 shares its link 1:1 between the priorities (DWRR), so PFC pauses priority 1 at
    // h1 and h2 — and h1's lossy flow keeps its half of the link through those pauses.
    let sw = "buffer = \"2MB\"\nqueues = 2\nscheduler = { kind = \"dwrr\", weights = [1, 1] }\npfc = { priorities = [1], xoff = \"20KB\" }";
    let traffic = r#"
[[traffic]]
kind = "flows"
list = [{ src = 1, dst = 0, size = "2MB", priority = 0 }, { src = 1, dst = 0, size = "4MB", priority = 1 }, { src = 2, dst = 0, size = "4MB", priority = 1 }]
"#;
    let r = run_toml(&star(3, sw, traffic, "{ all_flows_done = true, max_time = \"50ms\" }")).unwrap();
    assert!(r.meta.failure.is_none());
    assert_eq!(r.meta.flows_finished, 3);
    let h1 = port_row(&r, "h1", 0);
    assert!(h1.paused > 1_000 * US, "h1 paused {} us", h1.paused / US);
    // 2 MB at 5 Gbps is 3.2 ms; a whole-port pause would have stopped it for the ~ms h1 was paused.
    let lossy = r.flows[0].fct().unwrap();
    assert!(lossy < 3_700 * US, "lossy flow {} us", lossy / US);
    let n1 = r.meta.node_names.iter().position(|x| x == "h1").unwrap() as u32;
    assert!(r.pauses.iter().filter(|p| p.node == n1).all(|p| p.priority == 1));
}

#[test]
fn timer_mode_refreshes_the_pause_at_half_its_time() {
    // 20 us at 10 Gbps is 390.625 quanta of 512 bit times, rounded up to 391: a 20.0192 us pause, sent
    // again every 10.0096 us while the counter stays above XON.
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"20KB\", mode = \"timer\", pause_time = \"20us\" }";
    let r = run_toml(&star(9, sw, &incast(8, "1MB"), "{ all_flows_done = true, max_time = \"50ms\" }")).unwrap();
    assert!(r.meta.failure.is_none());
    assert_eq!(r.meta.drops.total(), 0);
    assert_eq!(r.meta.flows_finished, 8);
    let mut gaps = 0;
    let sent: Vec<_> = r.pauses.iter().filter(|p| p.sent).collect();
    for port in 1..=8u32 {
        let mine: Vec<_> = sent.iter().filter(|p| p.port == port).collect();
        for w in mine.windows(2) {
            if w[0].pause && w[1].pause {
                assert_eq!(w[1].time - w[0].time, 10_009_600, "port {port}");
                gaps += 1;
            }
        }
    }
    assert!(gaps > 0, "no PAUSE was refreshed");
}

fn ring_scenario(dir: &std::path::Path, on_deadlock: &str) -> String {
    // Five switches in a ring, a host on each; host i sends to host i+2, two hops clockwise (the only
    // shortest path). Each ring link carries one flow's first hop and another's second: a cyclic buffer
    // dependency that small XOFF thresholds turn into a deadlock.
    let n = 5;
    let mut links = vec![];
    for i in 0..n {
        links.push(format!("{{ a = \"h{i}\", b = \"s{i}\", rate = \"10Gbps\", delay = \"1us\" }}"));
        links.push(format!("{{ a = \"s{i}\", b = \"s{}\", rate = \"10Gbps\", delay = \"1us\" }}", (i + 1) % n));
    }
    // A new file per call: tests run in parallel threads of one process.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let path = dir.join(format!("ring5-{}.toml", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    std::fs::write(&path, format!("hosts = {n}\nswitches = {n}\nlinks = [\n{}\n]\n", links.join(",\n"))).unwrap();
    let flows: Vec<String> = (0..n).map(|i| format!("{{ src = {i}, dst = {}, size = \"10MB\" }}", (i + 2) % n)).collect();
    format!(
        r#"
seed = 1
stop = {{ time = "5ms" }}
[topology]
kind = "file"
path = "{}"
[switch]
buffer = "1MB"
pfc = {{ priorities = [0], xoff = "20KB", deadlock_timeout = "500us", on_deadlock = "{on_deadlock}" }}
[host.transport]
kind = "tcp"
cc = "reno"
[[traffic]]
kind = "flows"
list = [{}]
"#,
        path.display(),
        flows.join(", ")
    )
}

#[test]
fn a_cyclic_buffer_dependency_deadlocks_and_is_found() {
    let dir = std::env::temp_dir().join(format!("dcnlab-pfc-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = run_toml(&ring_scenario(&dir, "fail")).unwrap();
    let msg = r.meta.failure.clone().expect("the deadlock fails the run");
    assert_eq!(r.meta.stop_reason, "failed");
    assert!(msg.contains("PFC deadlock") && msg.contains("priority 0"), "{msg}");
    for s in 0..5 {
        assert!(msg.contains(&format!("s{s} port")), "{msg}");
    }
    // Found within the timeout of the cycle's last pause, and the run stopped there.
    assert!(r.meta.sim_time_us < 5_000.0);
    // Recorded instead: once, and the run goes on to its stop time (nothing moves any more).
    let r = run_toml(&ring_scenario(&dir, "record")).unwrap();
    assert!(r.meta.failure.is_none());
    assert_eq!(r.meta.deadlocks.len(), 1, "{:?}", r.meta.deadlocks);
    assert_eq!(r.meta.stop_reason, "time");
    assert_eq!(r.meta.flows_finished, 0);
    // On another priority (1 of 2 queues) the same ring deadlocks there, and is found there.
    let text = ring_scenario(&dir, "fail")
        .replace("buffer = \"1MB\"", "buffer = \"1MB\"\nqueues = 2")
        .replace("priorities = [0]", "priorities = [1]")
        .replace("size = \"10MB\" }", "size = \"10MB\", priority = 1 }");
    let r = run_toml(&text).unwrap();
    let msg = r.meta.failure.clone().expect("the deadlock on priority 1 fails the run");
    assert!(msg.contains("priority 1 paused around the cycle"), "{msg}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_tree_under_heavy_pausing_has_no_deadlock() {
    // Up-down routing cannot deadlock: a leaf-spine incast pausing for milliseconds finds no cycle.
    let text = r#"
seed = 2
stop = { all_flows_done = true, max_time = "100ms" }
[topology]
kind = "leaf_spine"
spines = 2
leaves = 3
hosts_per_leaf = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "500KB"
pfc = { priorities = [0], xoff = "10KB", deadlock_timeout = "100us" }
[host.transport]
kind = "tcp"
cc = "reno"
[[traffic]]
kind = "incast"
senders = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
receiver = 11
size = "500KB"
at = "0us"
[[traffic]]
kind = "incast"
senders = [4, 5, 6, 7, 8, 9, 10, 11]
receiver = 0
size = "500KB"
at = "0us"
"#;
    let r = run_toml(text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.flows_finished, 19);
    let paused: u64 = r.ports.iter().map(|p| p.paused).sum();
    assert!(paused > 1_000 * US);
}

#[test]
fn lossy_and_lossless_priorities_share_a_switch() {
    // TCP in lossy priority 0 with a small buffer share drops; TCP in lossless priority 1 on the same
    // ports never does.
    let sw = "buffer = \"200KB\"\nqueues = 2\nscheduler = { kind = \"dwrr\", weights = [1, 1] }\npfc = { priorities = [1], xoff = \"10KB\" }";
    let traffic = r#"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6]
receiver = 0
size = "1MB"
at = "0us"
priority = 0
tag = "lossy"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6]
receiver = 0
size = "1MB"
at = "0us"
priority = 1
tag = "lossless"
"#;
    let r = run_toml(&star(7, sw, traffic, "{ all_flows_done = true, max_time = \"500ms\" }")).unwrap();
    assert!(r.meta.failure.is_none());
    assert_eq!(r.meta.flows_finished, 12);
    assert!(r.meta.drops.buffer > 0, "the lossy priority drops");
    // Flows of the lossless entry never retransmit; the lossy ones do.
    let retx = |tag: &str| r.flows.iter().filter(|f| r.tag_name(f.tag) == tag).map(|f| f.retransmits).sum::<u32>();
    assert_eq!(retx("lossless"), 0);
    assert!(retx("lossy") > 0);
    let sw0 = port_row(&r, "sw0", 0);
    assert!(sw0.drops > 0 && sw0.pause_frames_sent == 0);
}

#[test]
fn bad_pfc_input_names_the_field() {
    let cases = [
        ("buffer = \"1MB\"\npfc = { priorities = [3] }", "switch.pfc.priorities[0]", "raise switch.queues"),
        ("pfc = { priorities = [0] }", "switch.pfc.xoff", "set switch.buffer"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], xoff = \"dynamic\", xon = \"5KB\" }", "switch.pfc.xon", "resume_offset"),
        ("pfc = { priorities = [0], xoff = \"20KB\", xon = \"30KB\" }", "switch.pfc.xon", "below xoff"),
        ("pfc = { priorities = [0], xoff = \"20\" }", "switch.pfc.xoff", "no unit"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], headroom = \"1KB\" }", "switch.pfc.headroom", "two MTUs"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], headroom = \"2999B\" }", "switch.pfc.headroom", "(3000 B)"),
        ("pfc = { priorities = [0], xoff = \"1499B\" }", "switch.pfc.xoff", "one MTU (1500 B)"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], alpha = 0.0 }", "switch.pfc.alpha", "positive"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], alpha = inf }", "switch.pfc.alpha", "positive"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], mode = \"timer\", pause_time = \"0us\" }", "switch.pfc.pause_time", "512 bit times"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], mode = \"timer\", pause_time = 70000 }", "switch.pfc.pause_time", "65535"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], pause_time = 100 }", "switch.pfc.pause_time", "timer"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], mode = \"sometimes\" }", "switch.pfc.mode", "until_resume"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], on_deadlock = \"ignore\" }", "switch.pfc.on_deadlock", "fail"),
        ("buffer = \"1MB\"\npfc = { priorities = [0], xofff = \"1KB\" }", "switch.pfc", "xofff"),
        ("buffer = \"1MB\"\naqm = { kind = \"codel\", target = \"10us\", interval = \"100us\", mode = \"drop\" }\npfc = { priorities = [0] }", "switch.aqm", "lossless"),
        ("buffer = \"1MB\"\naqm = { kind = \"red\", kmin = \"10KB\", kmax = \"50KB\", pmax = 0.1, non_ect = \"drop\" }\npfc = { priorities = [0] }", "switch.aqm", "only mark"),
        ("buffer = \"15KB\"\npfc = { priorities = [0], xoff = \"10KB\" }", "switch.buffer", "no shared pool"),
    ];
    for (sw, field, hint) in cases {
        let text = star(3, sw, &incast(2, "10KB"), "{ time = \"1ms\" }");
        let e = match Sim::from_toml(&text) {
            Ok(_) => panic!("accepted: {sw}"),
            Err(e) => e,
        };
        let s = e.to_string();
        assert!(s.contains(field) && s.contains(hint), "{sw}\n→ {s}");
    }
    // The bounds themselves are accepted: an XOFF of one MTU, a headroom of two.
    for sw in ["pfc = { priorities = [0], xoff = \"1500B\" }", "buffer = \"1MB\"\npfc = { priorities = [0], headroom = \"3000B\" }"] {
        if let Err(e) = Sim::from_toml(&star(3, sw, &incast(2, "10KB"), "{ time = \"1ms\" }")) {
            panic!("refused: {sw}\n→ {e}");
        }
    }
    let rr = star(3, "buffer = \"1MB\"\npfc = { priorities = [0] }", &incast(2, "10KB"), "{ time = \"1ms\" }")
        .replace("[host.transport]", "[host.nic]\nscheduling = \"round_robin\"\n[host.transport]");
    let e = Sim::from_toml(&rr).err().expect("refused").to_string();
    assert!(e.contains("host.nic.scheduling"), "{e}");
}

#[test]
fn records_are_deterministic_and_lossy_runs_report_ports() {
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"dynamic\", mode = \"timer\" }";
    let text = star(9, sw, &incast(8, "300KB"), "{ all_flows_done = true, max_time = \"50ms\" }");
    let (a, b) = (run_toml(&text).unwrap(), run_toml(&text).unwrap());
    assert_eq!(a.pauses, b.pauses);
    assert_eq!(a.ports, b.ports);
    assert_eq!(a.flows.iter().map(|f| f.finish).collect::<Vec<_>>(), b.flows.iter().map(|f| f.finish).collect::<Vec<_>>());
    // Without PFC: a row per port, no frames.
    let r = run_toml(&star(3, "", &incast(2, "100KB"), "{ time = \"1ms\" }")).unwrap();
    assert_eq!(r.ports.len(), 6);
    assert!(r.ports.iter().all(|p| p.pause_frames_sent == 0 && p.paused == 0));
    assert!(r.pauses.is_empty());
    assert!(port_row(&r, "sw0", 0).tx_bytes > 0);
}

#[test]
fn a_host_slower_than_its_link_pauses_the_switch_instead_of_dropping() {
    // h0 takes packets up at 5 Gbps from a 10 Gbps link: its receive buffer fills and it sends PAUSE to
    // the switch, which then holds the two senders back in turn.
    let sw = "buffer = \"2MB\"\npfc = { priorities = [0], xoff = \"30KB\" }";
    let traffic = incast(2, "2MB");
    let text = star(3, sw, &traffic, "{ all_flows_done = true, max_time = \"50ms\" }")
        .replace("[host.transport]", "[host.nic]\nrx_rate = \"5Gbps\"\nrx_buffer = \"100KB\"\n[host.transport]");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.drops.total(), 0);
    assert!(r.meta.conservation.holds());
    let h0 = port_row(&r, "h0", 0);
    let sw_to_h0 = port_row(&r, "sw0", 0);
    assert!(h0.pause_frames_sent > 0 && sw_to_h0.pause_frames_received == h0.pause_frames_sent, "{h0:?} {sw_to_h0:?}");
    assert!(sw_to_h0.paused > 1_000 * US);
    // 4 MB of payload (plus headers) through a 5 Gbps host: about 6.6 ms, not the 3.3 ms of the link.
    let last = r.flows.iter().map(|f| f.finish.unwrap()).max().unwrap();
    assert!((6_500 * US..7_300 * US).contains(&last), "last finish {} us", last / US);
    // The ideal counts the host's receive rate: no flow beats it.
    assert!(r.flows.iter().all(|f| f.slowdown().unwrap() >= 1.0));
    // Without PFC the same host drops what its buffer cannot hold.
    let lossy = text.replace("\npfc = { priorities = [0], xoff = \"30KB\" }", "");
    let r = run_toml(&lossy).unwrap();
    assert!(r.meta.drops.nic_rx > 0, "{:?}", r.meta.drops);
    // One flow alone on an idle network takes exactly its ideal time through the slow host.
    let one = star(2, "", &incast(1, "300KB"), "{ all_flows_done = true, max_time = \"50ms\" }")
        .replace("[host.transport]", "[host.nic]\nrx_rate = \"4Gbps\"\n[host.transport]")
        .replace("cc = \"reno\"", "cc = \"reno\"\ninit_cwnd = 1000");
    let r = run_toml(&one).unwrap();
    assert_eq!(r.flows[0].fct(), Some(r.flows[0].ideal_fct));
    let bad = [
        ("[host.nic]\nrx_buffer = \"100KB\"\n", "host.nic.rx_buffer", "rx_rate"),
        ("[host.nic]\nrx_rate = \"5Gbps\"\nrx_buffer = \"5KB\"\n", "host.nic.rx_buffer", "headroom"),
    ];
    for (nic, field, hint) in bad {
        let t = star(3, sw, &traffic, "{ time = \"1ms\" }").replace("[host.transport]", &format!("{nic}[host.transport]"));
        let e = Sim::from_toml(&t).err().expect("refused").to_string();
        assert!(e.contains(field) && e.contains(hint), "{e}");
    }
}

#[test]
fn a_slow_host_pauses_only_its_lossless_priority_and_refreshes_in_timer_mode() {
    // The slow host above, with its flows in priority 1 of 2 (lossless) and timer-mode PFC: every PAUSE it
    // sends is for priority 1, and while its buffer stays above XON it sends it again every half pause
    // time (20 us at 10 Gbps: 391 quanta, refreshed every 10.0096 us).
    let sw = "buffer = \"2MB\"\nqueues = 2\npfc = { priorities = [1], xoff = \"30KB\", mode = \"timer\", pause_time = \"20us\" }";
    let traffic = incast(2, "2MB").replace("at = \"0us\"\n", "at = \"0us\"\npriority = 1\n");
    let text = star(3, sw, &traffic, "{ all_flows_done = true, max_time = \"50ms\" }")
        .replace("[host.transport]", "[host.nic]\nrx_rate = \"5Gbps\"\nrx_buffer = \"100KB\"\n[host.transport]");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!((r.meta.drops.total(), r.meta.flows_finished), (0, 2));
    let h0 = r.meta.node_names.iter().position(|n| n == "h0").unwrap() as u32;
    let mine: Vec<_> = r.pauses.iter().filter(|p| p.sent && p.node == h0).collect();
    assert!(mine.len() > 2, "{}", mine.len());
    assert!(mine.iter().all(|p| p.priority == 1), "a PAUSE for another priority");
    let refreshes = mine.windows(2).filter(|w| w[0].pause && w[1].pause).inspect(|w| assert_eq!(w[1].time - w[0].time, 10_009_600)).count();
    eprintln!("h0 sent {} frames, {refreshes} refreshes", mine.len());
    assert!(refreshes > 0, "no PAUSE was refreshed");
}

#[test]
fn a_ring_whose_pauses_are_short_is_not_a_deadlock() {
    // The same ring and traffic pattern with DCQCN keeping the queues near RED's 5–50 KB: PFC still
    // pauses now and then (XOFF 30 KB), every ring port holds packets that came from the one before, but
    // no port stays paused for the 50 us timeout — so there is no deadlock to report.
    let dir = std::env::temp_dir().join(format!("dcnlab-pfc-ring-short-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = ring_scenario(&dir, "fail")
        .replace("size = \"10MB\"", "size = \"inf\"")
        .replace("stop = { time = \"5ms\" }", "stop = { time = \"10ms\" }")
        .replace("buffer = \"1MB\"", "buffer = \"2MB\"\naqm = { kind = \"red\", kmin = \"5KB\", kmax = \"50KB\", pmax = 0.1, non_ect = \"pass\" }")
        .replace("xoff = \"20KB\", deadlock_timeout = \"500us\"", "xoff = \"30KB\", deadlock_timeout = \"50us\"")
        .replace("kind = \"tcp\"\ncc = \"reno\"", "kind = \"rdma\"\ncc = \"dcqcn\"");
    let r = run_toml(&text).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert!(r.meta.deadlocks.is_empty());
    let frames: u64 = r.ports.iter().map(|p| p.pause_frames_sent).sum();
    assert!(frames > 10, "{frames} PFC frames: the checks must have run");
    assert_eq!(r.meta.stop_reason, "time");
}

/// Hosts 1 and 2 each send 1 MB to host 0, half a packet time apart (so no two packets arrive at the
/// same instant).
const TWO_SENDERS: &str =
    "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 0, size = \"1MB\" }, { src = 2, dst = 0, size = \"1MB\", start = \"0.5us\" }]\n";

#[test]
fn dynamic_xoff_is_alpha_times_the_free_shared_pool() {
    // A 300 KB buffer, three ports of 6750 B "auto" headroom each (2 × 1250 B on the 1 us wire, two
    // 1500 B MTUs, 1250 B of 1 us response at 10 Gbps): a 279,750 B shared pool. Two senders' counters
    // are the only shared bytes, so XOFF = alpha × (279,750 − both counters); with alpha = 1/2 the first
    // PAUSE goes out when one counter reaches it.
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"dynamic\", alpha = 0.5 }";
    let text = star(3, sw, TWO_SENDERS, "{ time = \"2ms\" }");
    let r = run_toml(&text).unwrap();
    let first = r.pauses.iter().find(|p| p.sent && p.pause).expect("a PAUSE");
    // Just before it: XOFF is exactly alpha × the free pool, the pausing port is below it, and one more
    // packet (≤ 1540 B on the wire) takes it over.
    let mut sim = Sim::from_toml(&text).unwrap();
    sim.run_until(first.time - 1);
    let ((a, _, pa), x) = sim.ingress_and_xoff("sw0", 1, 0).unwrap();
    let ((b, _, pb), _) = sim.ingress_and_xoff("sw0", 2, 0).unwrap();
    assert_eq!(x, (0.5 * (279_750 - a - b) as f64) as u64, "counters {a} and {b} B");
    let mine = if first.port == 1 { a } else { b };
    assert!(!pa && !pb && mine < x && mine + 1540 >= x, "{mine} B against XOFF {x} B");
    assert!(x > 50_000 && x < 140_000, "XOFF {x} B");
}

#[test]
fn bytes_past_xoff_go_to_the_headroom_and_a_headroom_too_small_fails_the_run() {
    // Two senders into one receiver: each ingress counter grows at 5 Gb/s. Once it passes the static
    // XOFF, what is still in flight (the PAUSE takes a frame time and the 1 us wire) lands in the
    // headroom, not in the shared pool — which has room for it, so only the region rule keeps it out.
    let sw = "buffer = \"300KB\"\npfc = { priorities = [0], xoff = \"20KB\" }";
    let text = star(3, sw, TWO_SENDERS, "{ time = \"2ms\" }");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none() && r.meta.drops.total() == 0);
    let first = r.pauses.iter().find(|p| p.sent && p.pause).expect("a PAUSE");
    let mut sim = Sim::from_toml(&text).unwrap();
    let (mut top_bytes, mut top_hdrm, mut x) = (0, 0, 0);
    for k in 0..40 {
        sim.run_until(first.time + k * 100_000);
        let ((b, h, _), xo) = sim.ingress_and_xoff("sw0", first.port, 0).unwrap();
        (top_bytes, top_hdrm, x) = (top_bytes.max(b), top_hdrm.max(h), xo);
    }
    assert_eq!(x, 20_000);
    assert!(top_hdrm > 0, "nothing reached the headroom");
    assert!(top_bytes < x + 1540, "the counter passed XOFF by {} B", top_bytes - x);
    // A headroom of two MTUs cannot hold what a 10 us wire has in flight: the run fails on the first
    // lossless drop, naming the switch, port and priority, with that one drop counted.
    let tight = text
        .replace("xoff = \"20KB\" }", "xoff = \"20KB\", headroom = \"3KB\" }")
        .replace("delay = \"1us\"", "delay = \"10us\"");
    let r = run_toml(&tight).unwrap();
    let msg = r.meta.failure.clone().expect("a lossless drop fails the run");
    assert!(msg.contains("a lossless packet was dropped: sw0 port") && msg.contains("priority 0"), "{msg}");
    assert!(msg.contains("of 3000 B headroom"), "{msg}");
    assert_eq!(r.meta.drops.buffer, 1);
    assert_eq!(r.meta.stop_reason, "failed");
}

#[test]
fn a_controller_that_makes_a_lossless_queue_drop_fails_the_run_at_its_first_drop() {
    // Validation admits only marking AQMs on lossless queues; a controller can still switch one to drop
    // Not-ECT packets (TCP Reno without ECN here). The first drop fails the run, naming where it was.
    let sw = "buffer = \"1MB\"\naqm = { kind = \"red\", kmin = \"5KB\", kmax = \"50KB\", pmax = 0.1, non_ect = \"pass\" }\n\
              pfc = { priorities = [0], xoff = \"200KB\" }\n\
              controller = { kind = \"schedule\", changes = [{ at = \"1ms\", aqm = { kind = \"red\", kmin = \"5KB\", kmax = \"10KB\", pmax = 1.0, non_ect = \"drop\" } }] }";
    let flows = "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 0, size = \"10MB\" }, { src = 2, dst = 0, size = \"10MB\" }]\n";
    let r = run_toml(&star(3, sw, flows, "{ time = \"5ms\" }")).unwrap();
    let msg = r.meta.failure.clone().expect("the drop fails the run");
    assert!(msg.contains("a lossless packet was dropped at sw0 port 0 priority 0 (its AQM dropped it; 1 drops,"), "{msg}");
    assert_eq!(r.meta.drops.aqm, 1);
    assert!(r.meta.sim_time_us > 1_000.0 && r.meta.sim_time_us < 1_100.0, "{}", r.meta.sim_time_us);
}

#[test]
fn two_lossless_priorities_keep_a_counter_each_per_ingress_port() {
    // Both priorities lossless: h1 sends on priority 1, h2 on priority 0, both to h0. Each ingress port's
    // counter for its own priority crosses XOFF, so sw0 pauses h1 on priority 1 and h2 on priority 0 —
    // and nothing else (a counter charged to another port or priority would pause the wrong sender).
    let sw = "buffer = \"2MB\"\nqueues = 2\nscheduler = { kind = \"dwrr\", weights = [1, 1] }\npfc = { priorities = [0, 1], xoff = \"20KB\" }";
    let traffic = "[[traffic]]\nkind = \"flows\"\nlist = [{ src = 1, dst = 0, size = \"2MB\", priority = 1 }, { src = 2, dst = 0, size = \"2MB\", priority = 0 }]\n";
    let text = star(3, sw, traffic, "{ all_flows_done = true, max_time = \"50ms\" }");
    let r = run_toml(&text).unwrap();
    assert!(r.meta.failure.is_none() && r.meta.drops.total() == 0);
    assert_eq!(r.meta.flows_finished, 2);
    let sim = Sim::from_toml(&text).unwrap();
    let sw0 = r.meta.node_names.iter().position(|x| x == "sw0").unwrap() as u32;
    let to = |h: &str| sim.port_to("sw0", h).unwrap();
    let sent: Vec<(u32, u8)> = r.pauses.iter().filter(|p| p.sent && p.pause && p.node == sw0).map(|p| (p.port, p.priority)).collect();
    assert!(sent.contains(&(to("h1"), 1)) && sent.contains(&(to("h2"), 0)), "{sent:?}");
    assert!(sent.iter().all(|&s| s == (to("h1"), 1) || s == (to("h2"), 0)), "{sent:?}");
}
