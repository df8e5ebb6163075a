//! Traffic made of jobs (`workload/jobs.rs`) through the whole simulator: storage IOs (`storage`) and
//! training iterations (`training`) on an idle fabric take exactly the time their messages' ideal FCTs
//! add up to (the closed forms of `workloads.md` §8 and §9.5), and more load gives more IOPS without
//! passing the links' capacity.

use dcnlab_sim::records::{FlowRow, JobRow, Records};
use dcnlab_sim::run_toml;

const US: u64 = 1_000_000; // ps
const MS: u64 = 1_000_000_000;

/// A star of `hosts` hosts at 25 Gb/s, 1 µs links, RDMA (DCQCN) over PFC as ACC's experiments use; data
/// on priority 1 behind RED (the storage test's vendor setting), control packets on 0.
fn scenario(hosts: u32, stop: &str, traffic: &str) -> String {
    with_aqm(hosts, stop, traffic, r#"{ kind = "red", kmin = "30KB", kmax = "270KB", pmax = 0.1, non_ect = "pass" }"#)
}

fn with_aqm(hosts: u32, stop: &str, traffic: &str, aqm: &str) -> String {
    format!(
        r#"
seed = 3
stop = {stop}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "25Gbps", delay = "1us" }}
[switch]
buffer = "16MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {aqm}]
pfc = {{ priorities = [0, 1] }}
[host]
transport = {{ kind = "rdma", cc = "dcqcn", preset = "dcqcn_hpcc", control_priority = 0 }}
[[traffic]]
priority = 1
{traffic}
"#
    )
}

/// The flows of each finished job, in the order they started (flows of a job are consecutive when the
/// entry runs one job at a time).
fn flows_of<'a>(r: &'a Records) -> Vec<(&'a JobRow, &'a [FlowRow])> {
    let mut i = 0;
    let mut out = Vec::new();
    for j in &r.jobs {
        out.push((j, &r.flows[i..i + j.flows as usize]));
        i += j.flows as usize;
    }
    out
}

#[test]
fn storage_iops_at_io_depth_one_is_one_over_the_sum_of_its_messages_ideal_fcts() {
    let traffic = r#"kind = "storage"
pattern = "video_streaming"
servers = [1, 2, 3]
clients = [0]
io_depth = 1"#;
    let r = run_toml(&scenario(4, "{ time = \"20ms\" }", traffic)).unwrap();
    let jobs = flows_of(&r);
    let done: Vec<_> = jobs.iter().filter(|(j, _)| j.finish.is_some()).collect();
    assert!(done.len() > 100, "{} IOs", done.len());
    let (mut sum_ideal, mut reads) = (0u64, 0usize);
    for (j, flows) in &done {
        // One message after the other, each as fast as alone on the network.
        assert_eq!(flows.len(), if j.kind == "read" { 2 } else { 3 });
        assert!(flows.iter().all(|f| f.size == 64 || f.size == 65536));
        let ideal: u64 = flows.iter().map(|f| f.ideal_fct).sum();
        let took = j.finish.unwrap() - j.start;
        assert!(took >= ideal && took - ideal < 200_000, "IO {}: {took} ps, messages alone {ideal} ps", j.job_id);
        sum_ideal += ideal;
        reads += (j.kind == "read") as usize;
    }
    // The next IO is issued as the previous completes: no gaps, so IOPS = 1 / mean IO time.
    for w in done.windows(2) {
        assert_eq!(w[1].0.start, w[0].0.finish.unwrap());
    }
    let window = done.last().unwrap().0.finish.unwrap() - done[0].0.start;
    let iops = done.len() as f64 / (window as f64 * 1e-12);
    let closed = done.len() as f64 / (sum_ideal as f64 * 1e-12);
    assert!((iops / closed - 1.0).abs() < 0.005, "IOPS {iops:.0}, closed form {closed:.0}");
    // The closed form by hand: a 64 KiB message at 25 Gb/s is ≥ 21 µs of serialisation; 2:8 read:write.
    let share = reads as f64 / done.len() as f64;
    assert!((share - 0.2).abs() < 0.06, "read share {share}");
    assert!(iops < 1.0 / ((2.0 - share) * 65536.0 * 8.0 / 25e9), "IOPS {iops:.0} beyond the serialisation bound");
}

#[test]
fn storage_iops_grows_with_io_depth_and_stays_under_the_client_link_capacity() {
    let run = |depth: u32| {
        let traffic = format!("kind = \"storage\"\npattern = \"file_backup\"\nservers = [4, 5, 6, 7]\nclients = [0, 1, 2, 3]\nio_depth = {depth}");
        let r = run_toml(&scenario(8, "{ time = \"10ms\" }", &traffic)).unwrap();
        // IOs finished in the last 5 ms, and the bytes the clients' links carried for them.
        let done: Vec<_> = r.jobs.iter().filter(|j| j.finish.is_some_and(|f| f >= 5 * MS)).collect();
        let iops = done.len() as f64 / 5e-3;
        let bytes: u64 = done.iter().map(|j| j.bytes).sum();
        (iops, bytes as f64 * 8.0 / 5e-3)
    };
    let (one, _) = run(1);
    let (eight, bps) = run(8);
    assert!(eight > 1.5 * one, "depth 8: {eight:.0} IOPS, depth 1: {one:.0}");
    // A block crosses a server's link once for a read and twice for a replicated write (in, then out to
    // the backup), 4 server links both ways: at most 8 × 25 Gb/s of IO payload.
    assert!(bps < 8.0 * 25e9, "{bps:.3e} bit/s of IO payload");
}

#[test]
fn a_training_iteration_on_an_idle_fabric_is_compute_plus_the_push_and_pull_phases() {
    let traffic = r#"kind = "training"
model = "resnet50"
compute = "1ms"
gradient = "500KB"
iterations = 3"#;
    // No marking: the seven pushes fill the PS's link under PFC, and DCQCN, never told of congestion,
    // keeps every sender at line rate — the phases are pure serialisation (the model's timing, not
    // DCQCN's reaction to a 7:1 incast, which the RED version of this scenario adds: +26 % on the push).
    let r = run_toml(&with_aqm(8, "{ all_flows_done = true, max_time = \"1s\" }", traffic, "{ kind = \"droptail\" }")).unwrap();
    assert_eq!(r.jobs.len(), 3);
    for (j, flows) in flows_of(&r) {
        let (pushes, pulls) = flows.split_at(7);
        assert!(pushes.iter().all(|f| f.dst == 0 && f.start == j.start + MS), "pushes after compute");
        let last_push = pushes.iter().map(|f| f.finish.unwrap()).max().unwrap();
        assert!(pulls.iter().all(|f| f.src == 0 && f.start == last_push), "the barrier");
        // Seven gradients share the PS's link: each phase is 7 × a gradient's serialisation (its ideal
        // FCT minus the path's latency), plus one path latency.
        let ideal = pushes[0].ideal_fct;
        let latency = 4 * US; // two 1 µs hops each way, store-and-forward of the last packet aside
        let phase = 7 * (ideal - latency) + latency;
        let expect = MS + 2 * phase;
        let took = j.finish.unwrap() - j.start;
        let err = took as f64 / expect as f64 - 1.0;
        assert!(err > -0.01 && err < 0.03, "iteration {took} ps, closed form {expect} ps ({err:+.3})");
    }
    // Successive iterations follow one another.
    assert_eq!(r.jobs[1].start, r.jobs[0].finish.unwrap());
}
