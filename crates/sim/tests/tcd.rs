//! TCD through the whole simulator: the victim-flow scenario of `spec/tcd.md` §7.1, reduced. Fifteen
//! burst senders A0–A14 (h0–h14) and the long flow F1 (S1 = h16 → R1 = h18) congest port P3 (T2 → R1);
//! PFC spreads the back-pressure to P2 (L0 → T2), which the victim flows S0 = h15 → R0 = h17 cross
//! without crossing P3. Switches T0 = s0, T1 = s1, T2 = s2, L0 = s3; every link 40 Gb/s, 1 µs.
//!
//! Placement: all fifteen burst senders sit under T2 itself, so P3 has sixteen inputs (a real incast)
//! while P2 carries only F1 and the victims and is not overloaded by itself; T2 pauses P2 when F1's
//! packets, queued at P3, fill the ingress share of the port P2 feeds (XOFF 40 KB). (§7.1's placement,
//! every burst sender behind L0, makes P2 the bottleneck — every burst byte crosses it — and P3 never
//! congested: a 40 Gb/s P2 cannot feed a 40 Gb/s P3 faster than it drains.)

use dcnlab_sim::aqm::tcd::Ternary;
use dcnlab_sim::records::{FlowRow, Records};
use dcnlab_sim::{run_toml, Sim};
use std::sync::atomic::{AtomicUsize, Ordering};

const US: u64 = 1_000_000;
const MS: u64 = 1_000 * US;
/// Bursts: every 200 µs from 1 ms to 2.8 ms, each sender 64 KB.
const BURST_FROM: u64 = MS;
const BURST_TO: u64 = 3 * MS;
const XOFF: &str = "40KB";
const LARGE: &str = "1200KB";
const VICTIM_FROM: u64 = 1_050 * US;
const VICTIM_TO: u64 = 2_900 * US;

fn topology() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dcnlab-tcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("victim-{}.toml", N.fetch_add(1, Ordering::Relaxed)));
    let mut links = Vec::new();
    let link = |a: String, b: &str| format!("{{ a = \"{a}\", b = \"{b}\", rate = \"40Gbps\", delay = \"1us\" }}");
    for h in 0..15 {
        links.push(link(format!("h{h}"), "s2"));
    }
    links.push(link("h15".into(), "s0"));
    links.push(link("h16".into(), "s1"));
    links.push(link("h17".into(), "s2"));
    links.push(link("h18".into(), "s2"));
    for s in ["s0", "s1", "s2"] {
        links.push(link(s.into(), "s3"));
    }
    for h in 19..23 {
        links.push(link(format!("h{h}"), "s3"));
    }
    std::fs::write(&path, format!("hosts = 23\nswitches = 4\nlinks = [\n{}\n]\n", links.join(",\n"))).unwrap();
    path.to_str().unwrap().to_string()
}

/// The scenario: `aqm` is the data queue's AQM, `transport` the RDMA transport's table. Victims, from S0
/// to R0 while the bursts last: an 8 KB flow every 40 µs and a 1.2 MB flow every 600 µs (17.6 Gb/s
/// offered; with F1's share of P3 and A8–A14's bursts, P2 carries about 38 Gb/s).
fn victim(aqm: &str, transport: &str, fairness: bool) -> String {
    victim_x(aqm, transport, fairness, XOFF)
}

fn victim_x(aqm: &str, transport: &str, fairness: bool, xoff: &str) -> String {
    let mut flows = vec!["{ src = 16, dst = 18, size = \"inf\", start = \"0us\", priority = 1, tag = \"f1\" }".to_string()];
    let mut t = BURST_FROM;
    while t < BURST_TO {
        for a in 0..15 {
            flows.push(format!("{{ src = {a}, dst = 18, size = \"64KB\", start = \"{}us\", priority = 1, tag = \"burst\" }}", t / US));
        }
        t += 200 * US;
    }
    let mut v = VICTIM_FROM;
    while v < VICTIM_TO {
        flows.push(format!("{{ src = 15, dst = 17, size = \"8KB\", start = \"{}us\", priority = 1, tag = \"victim\" }}", v / US));
        if (v - VICTIM_FROM) % (600 * US) == 0 {
            flows.push(format!("{{ src = 15, dst = 17, size = \"{LARGE}\", start = \"{}us\", priority = 1, tag = \"victim\" }}", v / US));
        }
        v += 40 * US;
    }
    if fairness {
        for b in 19..23 {
            flows.push(format!("{{ src = {b}, dst = 17, size = \"inf\", start = \"{}us\", priority = 1, tag = \"b\" }}", BURST_FROM / US));
        }
    }
    format!(
        r#"
seed = 3
stop = {{ time = "6ms" }}
[topology]
kind = "file"
path = "{}"
[switch]
buffer = "12MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {aqm}]
pfc = {{ priorities = [1], xoff = "{xoff}" }}
[host]
transport = {transport}
[[traffic]]
kind = "flows"
list = [{}]
[record]
trace_flows = [0]
trace_interval = "100us"
"#,
        topology(),
        flows.join(",\n")
    )
}

const TCD: &str = r#"{ kind = "tcd" }"#;
const RED: &str = r#"{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass", mark_at = "dequeue" }"#;
const NP_ECN: &str = r#"{ kind = "np_ecn" }"#;
const DCQCN_TCD: &str = r#"{ kind = "rdma", cc = "dcqcn", tcd = true }"#;
const DCQCN: &str = r#"{ kind = "rdma", cc = "dcqcn" }"#;

fn port(text: &str, node: &str, peer: &str) -> u32 {
    Sim::from_toml(text).unwrap().port_to(node, peer).unwrap()
}

fn tagged<'a>(r: &'a Records, tag: &str) -> Vec<&'a FlowRow> {
    r.flows.iter().filter(|f| r.tag_name(f.tag) == tag).collect()
}

/// The state of (node, port, queue 1) at `t` from `port_states`.
fn state_at(r: &Records, node: u32, port: u32, t: u64) -> Ternary {
    r.port_states
        .iter()
        .filter(|s| s.node == node && s.port == port && s.queue == 1 && s.time <= t)
        .last()
        .map_or(Ternary::NonCongestion, |s| s.state)
}

/// Time (ps) (node, port) spent in `state` within [from, to).
fn time_in(r: &Records, node: u32, port: u32, state: Ternary, from: u64, to: u64) -> u64 {
    let mut total = 0;
    let mut cur = state_at(r, node, port, from);
    let mut since = from;
    for s in r.port_states.iter().filter(|s| s.node == node && s.port == port && s.queue == 1 && s.time > from && s.time < to) {
        if cur == state {
            total += s.time - since;
        }
        cur = s.state;
        since = s.time;
    }
    if cur == state {
        total += to - since;
    }
    total
}

#[test]
fn the_incast_port_is_congested_and_the_paused_port_undetermined() {
    let text = victim(TCD, DCQCN_TCD, false);
    let r = run_toml(&text).unwrap();
    assert!(r.meta.conservation.holds());
    assert_eq!(r.meta.drops.buffer + r.meta.drops.aqm, 0, "lossless");
    // Nodes: h0–h22 are 0–22, s0–s3 are 23–26.
    let (t2, l0) = (25, 26);
    let p3 = port(&text, "s2", "h18");
    let p2 = port(&text, "s3", "s2");
    // PFC reached P2: T2 paused it.
    let paused_p2 = r.ports.iter().find(|p| p.node == l0 && p.port == p2).unwrap();
    assert!(paused_p2.paused > 100 * US, "P2 paused {} ps", paused_p2.paused);
    // While the bursts last P3 is mostly in congestion, P2 mostly undetermined.
    let span = BURST_TO - BURST_FROM;
    let p3_cong = time_in(&r, t2, p3, Ternary::Congestion, BURST_FROM + 100 * US, BURST_TO) as f64 / (span - 100 * US) as f64;
    let p2_und = time_in(&r, l0, p2, Ternary::Undetermined, BURST_FROM + 100 * US, BURST_TO) as f64 / (span - 100 * US) as f64;
    eprintln!("P3 congestion {p3_cong:.2}, P2 undetermined {p2_und:.2}");
    assert!(p3_cong > 0.8, "{p3_cong}");
    assert!(p2_und > 0.5, "{p2_und}");
    // Long after the bursts (and the backlog) P2 is no longer undetermined.
    assert_ne!(state_at(&r, l0, p2, 6 * MS - 1), Ternary::Undetermined);
    // Victims' marks are nearly all UE; F1 sees CE.
    let victims = tagged(&r, "victim");
    let (ce, ue): (u32, u32) = victims.iter().fold((0, 0), |a, f| (a.0 + f.ce_marks, a.1 + f.ue_marks));
    eprintln!("victim marks: CE {ce}, UE {ue}");
    assert!(ue > 100 && ue as f64 >= 0.9 * (ce + ue) as f64, "CE {ce} UE {ue}");
    let f1 = tagged(&r, "f1")[0];
    assert!(f1.ce_marks > 0, "F1 CE {}", f1.ce_marks);
    // Ports agree with flows: P2 marked UE, P3 marked CE.
    let p3_row = r.ports.iter().find(|p| p.node == t2 && p.port == p3).unwrap();
    assert!(paused_p2.ue_marks > 0 && p3_row.ce_marks > 0 && p3_row.ue_marks == 0);
}

#[test]
fn np_ecn_spares_the_packets_a_pause_held() {
    // A larger XOFF lets P2's queue grow past RED's Kmin while it is paused: RED marks the victims there,
    // NP-ECN does not (the packets queued at a RESUME leave unmarked); F1 is marked at P3 by both.
    let red = run_toml(&victim_x(RED, DCQCN, false, "100KB")).unwrap();
    let np = run_toml(&victim_x(NP_ECN, DCQCN, false, "100KB")).unwrap();
    let ce = |r: &Records, tag: &str| tagged(r, tag).iter().map(|f| f.ce_marks).sum::<u32>();
    let (vr, vn, fr, fn_) = (ce(&red, "victim"), ce(&np, "victim"), ce(&red, "f1"), ce(&np, "f1"));
    eprintln!("victims CE: RED {vr}, NP-ECN {vn}; F1 CE: RED {fr}, NP-ECN {fn_}");
    assert!(vr >= 50 && vn * 4 <= vr, "{vn} {vr}");
    assert!((fn_ as f64 - fr as f64).abs() <= 0.2 * fr as f64, "{fn_} {fr}");
    assert_eq!(np.ports.iter().map(|p| p.ue_marks).sum::<u64>(), 0, "NP-ECN never marks UE");
    assert!(np.port_states.is_empty() && red.port_states.is_empty());
}

#[test]
fn timely_tcd_victims_are_echoed_ue_and_finish() {
    // TIMELY+TCD in the same scenario: the victims' ACKs echo UE, F1's echo CE.
    let r = run_toml(&victim(TCD, r#"{ kind = "rdma", cc = "timely", tcd = true }"#, false)).unwrap();
    assert!(r.meta.conservation.holds());
    let v = tagged(&r, "victim");
    let (ce, ue): (u32, u32) = v.iter().fold((0, 0), |a, f| (a.0 + f.ce_marks, a.1 + f.ue_marks));
    eprintln!("TIMELY+TCD victims: CE {ce}, UE {ue}; finished {}/{}", v.iter().filter(|f| f.finish.is_some()).count(), v.len());
    assert!(ue > 100 && ue as f64 >= 0.9 * (ce + ue) as f64, "{ce} {ue}");
    assert!(v.iter().all(|f| f.finish.is_some()));
}

#[test]
fn tcd_runs_are_deterministic() {
    let text = victim(TCD, DCQCN_TCD, false);
    let a = run_toml(&text).unwrap();
    let b = run_toml(&text).unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.port_states, b.port_states);
}
