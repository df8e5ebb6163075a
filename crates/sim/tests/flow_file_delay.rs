//! A flow file's `extra_delay` column: each flow waits its own delay at the sending host, for the packets
//! `host.extra_delay.applies_to` names (the sender's by default; `"all"`: ACKs too; `"payload"`: data
//! segments only, not the SYN). On an idle star, with the handshake on, a one-segment flow crosses the
//! sender's delay twice (SYN, then the data) and the receiver's once (SYN-ACK) before its last byte arrives;
//! so its FCT grows by 2 × the delay for the sender's packets, 3 × when ACKs get it too, 1 × for data
//! segments only, and not at all when it is ignored.

use dcnlab_sim::{run_toml, Records};
use std::sync::atomic::{AtomicUsize, Ordering};

const US: u64 = 1_000_000;

/// Flows 0→1, 2→3, 4→5, 6→7 (disjoint ports on a star: no flow sees another) with these
/// `extra_delay` cells, under `host_delay` (a `host.extra_delay` line or nothing).
fn run(delays: &[&str], host_delay: &str) -> Records {
    let dir = std::env::temp_dir().join(format!("dcnlab-flowdelay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    static N: AtomicUsize = AtomicUsize::new(0);
    let file = dir.join(format!("flows-{}.csv", N.fetch_add(1, Ordering::Relaxed)));
    let mut csv = String::from("# src and dst after the delay, to show the columns are found by name\nextra_delay,size,start,src,dst\n");
    for (i, d) in delays.iter().enumerate() {
        csv += &format!("{d},1000,10,{},{}\n", 2 * i, 2 * i + 1);
    }
    std::fs::write(&file, csv).unwrap();
    let text = format!(
        r#"
stop = {{ all_flows_done = true, max_time = "1s" }}
[topology]
kind = "star"
hosts = 8
link = {{ rate = "10Gbps", delay = "1us" }}
[host]
transport = {{ kind = "tcp", cc = "dctcp", handshake = true }}
{host_delay}
[[traffic]]
kind = "file"
path = "{}"
"#,
        file.display()
    );
    let r = run_toml(&text).unwrap();
    assert_eq!(r.flows.len(), delays.len());
    r
}

/// FCT of the flow from host `src` (flows are recorded in start order; equal starts keep the file's).
fn fct(r: &Records, src: u32) -> u64 {
    let f = r.flows.iter().find(|f| f.src == src).unwrap();
    f.fct().expect("flow finished")
}

#[test]
fn file_delay_delays_the_flows_data_only() {
    let r = run(&["0", "100us", "", "0.5"], "");
    let base = fct(&r, 0);
    // SYN and data wait 100 µs each; the SYN-ACK does not.
    assert_eq!(fct(&r, 2) - base, 200 * US);
    // An empty cell with no host.extra_delay: no delay at all.
    assert_eq!(fct(&r, 4), base);
    // Plain numbers are microseconds: 2 × 0.5 µs.
    assert_eq!(fct(&r, 6) - base, US);
    // The base RTT seen by the flow grows by the one-way delay.
    assert_eq!(r.flows[1].base_rtt - r.flows[0].base_rtt, 100 * US);
}

#[test]
fn file_delay_replaces_the_host_draw() {
    // host.extra_delay for data only: the file's value replaces it; an empty cell keeps the draw.
    let data = "extra_delay = { kind = \"constant\", value = \"30us\", per = \"flow\", applies_to = \"data\" }";
    let r = run(&["0", "100us", ""], data);
    assert_eq!(fct(&r, 2) - fct(&r, 0), 200 * US);
    assert_eq!(fct(&r, 4) - fct(&r, 0), 60 * US);
    // applies_to = "all": the flow's ACKs wait its file delay too (SYN, SYN-ACK and data: 3 ×).
    let all = "extra_delay = { kind = \"constant\", value = \"30us\", per = \"flow\", applies_to = \"all\" }";
    let r = run(&["0", "100us", ""], all);
    assert_eq!(fct(&r, 2) - fct(&r, 0), 300 * US);
    assert_eq!(fct(&r, 4) - fct(&r, 0), 90 * US);
    // applies_to = "payload": only data segments wait, not the SYN (1 ×).
    let payload = "extra_delay = { kind = \"constant\", value = \"30us\", per = \"flow\", applies_to = \"payload\" }";
    let r = run(&["0", "100us", ""], payload);
    assert_eq!(fct(&r, 2) - fct(&r, 0), 100 * US);
    assert_eq!(fct(&r, 4) - fct(&r, 0), 30 * US);
    for f in &r.flows {
        assert_eq!(f.fct(), Some(f.ideal_fct), "a lone flow is ideal");
    }
}

#[test]
fn flows_without_a_file_delay_draw_as_before() {
    // A per-flow draw is made for every flow, so giving one flow a delay of its own leaves the others'
    // draws (and so their FCTs) unchanged.
    let draw = "extra_delay = { kind = \"uniform\", min = \"1us\", max = \"200us\", per = \"flow\" }";
    let a = run(&["", "", "", ""], draw);
    let b = run(&["", "50us", "", ""], draw);
    for src in [0, 4, 6] {
        assert_eq!(fct(&a, src), fct(&b, src), "flow from host {src}");
    }
    // And the flow with its own delay gets exactly that one, whatever it drew.
    let alone = run(&["0"], "");
    assert_eq!(fct(&b, 2) - fct(&alone, 0), 100 * US);
}
