//! InfiniBand congestion control end to end (`transport/rdma/ib_cc.rs`, `aqm/ib_fecn.rs`) over credit
//! flow control: the classic victim scenario — a hot spot's backlog fills the upstream switch's buffer and
//! blocks a flow that does not go there — without CC, with IB CC, and with IB CC + TCD.

use dcnlab_sim::{run_toml, Records};

const US: u64 = 1_000_000;

/// The hot spot h0 on s1 receives from h1, h2 (on s0) and h6, h7 (on s1), 3 MB each: 10 Gbps apiece on
/// its 40 Gbps link. The victim h4 (on s0) sends 3 MB to h5 (on s1) over the same s0 → s1 link, which at
/// 200 Gbps is never congested itself. Host links 40 Gbps, all 1 us; one VL of 32 KB. Without CC, s1's
/// buffer for its ingress from s0 fills with packets for h0 and s0 → s1 stops for credits, so the victim
/// goes at the hot flows' pace (head-of-line blocking); IB CC throttles the hot flows at their sources.
fn victim_at(core: u32, aqm: &str, transport: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dcnlab-ibcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("victim-{}.toml", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let link = |a: &str, b: &str, r: u32| format!("{{ a = \"{a}\", b = \"{b}\", rate = \"{r}Gbps\", delay = \"1us\" }}");
    let links = [
        link("s0", "s1", core),
        link("h1", "s0", 40),
        link("h2", "s0", 40),
        link("h4", "s0", 40),
        link("h0", "s1", 40),
        link("h5", "s1", 40),
        link("h6", "s1", 40),
        link("h7", "s1", 40),
        link("h3", "s0", 40),
    ];
    std::fs::write(&path, format!("hosts = 8\nswitches = 2\nlinks = [\n{}\n]\n", links.join(",\n"))).unwrap();
    format!(
        r#"
seed = 4
stop = {{ all_flows_done = true, max_time = "20ms" }}
[topology]
kind = "file"
path = "{}"
[switch]
mtu = 1000
aqm = {aqm}
credit = {{ vl_buffer = "32KB" }}
[host.transport]
kind = "rdma"
{transport}
[record]
trace_flows = [0]
trace_interval = "10us"
[[traffic]]
kind = "flows"
list = [{{ src = 1, dst = 0, size = "3MB", start = "0us" }}, {{ src = 2, dst = 0, size = "3MB", start = "0us" }},
        {{ src = 6, dst = 0, size = "3MB", start = "0us" }}, {{ src = 7, dst = 0, size = "3MB", start = "0us" }},
        {{ src = 4, dst = 5, size = "3MB", start = "20us" }}]
"#,
        path.display()
    )
}

fn victim(aqm: &str, transport: &str) -> String {
    victim_at(40, aqm, transport)
}

fn fct(r: &Records, dst: u32) -> f64 {
    let f = r.flows.iter().find(|f| f.dst == dst).unwrap();
    (f.finish.expect("finished") - f.start) as f64 / US as f64
}

const NO_MARKS: &str = "{ kind = \"droptail\" }";
const FECN: &str = "{ kind = \"ib_fecn\", threshold = \"4KB\" }";

#[test]
fn ib_cc_frees_the_victim_of_a_hot_spot() {
    let plain = run_toml(&victim(NO_MARKS, "cc = \"ib_cc\"")).unwrap();
    let cc = run_toml(&victim(FECN, "cc = \"ib_cc\"")).unwrap();
    for r in [&plain, &cc] {
        assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
        assert_eq!(r.meta.drops.total(), 0);
        assert_eq!(r.meta.flows_finished, 5);
    }
    // Without CC the hot flows' backlog fills s1's buffer for s0 and the victim crawls at about a hot
    // flow's pace, 10 Gbps (2.4 ms); alone it would take ~0.6 ms at 40 Gbps.
    let (v0, v1) = (fct(&plain, 5), fct(&cc, 5));
    assert!(v0 > 1_500.0, "victim without CC {v0:.0} us");
    assert!(v1 < 0.5 * v0, "victim with IB CC {v1:.0} us against {v0:.0} us without");
    // The price of the preset's defaults (a BECN per marked packet, +1 each, −1 per 102.4 us): CCTI
    // reaches ~90 within 100 us and takes ms to come down, so the hot spot's 12 MB (2.4 ms of payload at
    // 40 Gbps) take about 5.3 ms. Measured 2026-11-27: 5.38 ms.
    let hot_done = cc.flows.iter().filter(|f| f.dst == 0).map(|f| f.finish.unwrap()).max().unwrap() as f64 / US as f64;
    assert!(hot_done < 7_000.0, "hot flows done at {hot_done:.0} us");
    // Marks came from s1's port to h0 (FECN = CE) and the hot flows' CCTI rose (traced as alpha).
    assert_eq!(plain.flows.iter().map(|f| f.ce_marks as u64).sum::<u64>(), 0);
    assert!(cc.flows.iter().filter(|f| f.dst == 0).all(|f| f.ce_marks > 0));
    let ccti = cc.flow_trace.iter().map(|t| t.alpha).fold(0.0, f64::max);
    assert!(ccti >= 3.0 && plain.flow_trace.iter().all(|t| t.alpha == 0.0), "peak CCTI {ccti}");
    // And s0's port toward s1 waits far less for credits.
    let stall = |r: &Records| {
        let s0 = r.meta.node_names.iter().position(|x| x == "s0").unwrap() as u32;
        r.ports.iter().find(|p| p.node == s0 && p.port == 0).unwrap().credit_stall
    };
    assert!(stall(&cc) * 2 < stall(&plain), "s0 stalled {} us with CC, {} us without", stall(&cc) / US, stall(&plain) / US);
}

#[test]
fn ib_cc_with_tcd_marks_the_credit_stalled_port_undetermined_and_the_hot_spot_congested() {
    // A 200 Gbps s0 → s1 link is never congested by its three 40 Gbps senders: it only stops for
    // credits when s1's buffer fills. TCD (with IB CC's FECN as its CE marker) calls it undetermined
    // (UE), the hot spot's port congestion (CE); a UE BECN holds the source's CCTI.
    let tcd_aqm = "{ kind = \"tcd\", ce = { kind = \"ib_fecn\", threshold = \"16KB\" } }";
    let r = run_toml(&victim_at(200, tcd_aqm, "cc = \"ib_cc\"\ntcd = true")).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.flows_finished, 5);
    let port = |node: &str, p: u32| {
        let n = r.meta.node_names.iter().position(|x| x == node).unwrap() as u32;
        r.ports.iter().find(|x| x.node == n && x.port == p).unwrap().clone()
    };
    let (stalled, hot) = (port("s0", 0), port("s1", 1));
    assert!(stalled.credit_stall > 0 && stalled.ue_marks > 50 && stalled.ce_marks == 0, "s0 → s1: {stalled:?}");
    assert!(hot.ce_marks > 100 && hot.ue_marks == 0, "s1 → h0: {hot:?}");
    // The victim and the hot flows from s0 cross the stalled port (UE); h6 and h7 reach the hot spot
    // from s1 itself and never see UE.
    let flow = |src: u32| r.flows.iter().find(|f| f.src == src).unwrap();
    assert!(flow(4).ue_marks > 50, "victim {:?}", flow(4));
    assert!(flow(1).ue_marks > 0 && flow(2).ue_marks > 0);
    assert!(flow(6).ue_marks == 0 && flow(7).ue_marks == 0 && flow(6).ce_marks > 0);
}

#[test]
fn bad_ib_cc_keys_name_the_field() {
    let err = |t: &str| dcnlab_sim::Sim::from_toml(&victim(FECN, t)).err().expect("an error").to_string();
    // ccti_limit is 1 to 16383, checked on its own (0 would also trip ccti_min's "below ccti_limit").
    assert!(err("cc = \"ib_cc\"\nccti_limit = 0").contains("must be 1 to 16383"));
    assert!(err("cc = \"ib_cc\"\nccti_limit = 16384").contains("must be 1 to 16383"));
    for ok in ["ccti_limit = 16383", "ccti_limit = 1", "ccti_timer = 65535", "ccti_timer = 1"] {
        assert!(dcnlab_sim::Sim::from_toml(&victim(FECN, &format!("cc = \"ib_cc\"\n{ok}"))).is_ok(), "{ok}");
    }
    assert!(err("cc = \"ib_cc\"\nccti_min = 200").contains("ccti_min"));
    assert!(err("cc = \"ib_cc\"\nccti_timer = 70000").contains("ccti_timer"));
    assert!(err("cc = \"ib_cc\"\nccti_timer = 0").contains("ccti_timer"));
    assert!(err("cc = \"ib_cc\"\ng = 0.5").contains("cc = \\\"dcqcn\\\"") || err("cc = \"ib_cc\"\ng = 0.5").contains(".g"));
    assert!(err("cc = \"dcqcn\"\nccti_limit = 10").contains("ccti_limit"));
    assert!(err("cc = \"ib_cc\"\npreset = \"dcqcn_paper\"").contains("preset"));
    assert!(err("cc = \"ib_cc\"\nrate_ai = \"10Mbps\"").contains("rate_ai"));
}

