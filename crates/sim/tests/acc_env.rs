//! ACC's decisions from the host program (`control/env.rs`, behind `dcnlab.rl`): the run pauses at every
//! tick with the agents' states and rewards, and actions given there act at that instant. Replaying the
//! Rust agents' own choices reproduces their run bit for bit; actions out of range, too few actions or an
//! act with no decision awaited are errors; a learning controller cannot be handed over.

use dcnlab_sim::control::Controller;
use dcnlab_sim::records::Records;
use dcnlab_sim::Sim;

const MS: u64 = 1_000_000_000; // ps

/// Three RDMA (DCQCN) senders into host 3 of a 25 Gb/s star over PFC: ACKs and CNPs in drop-tail queue 0,
/// data in RED queue 1, ACC on every switch port's data queue with a frozen model from the seed.
fn scenario(acc: &str) -> String {
    let flows: Vec<String> =
        (0..3).map(|i| format!("{{ src = {i}, dst = 3, size = \"inf\", start = \"{}us\", priority = 1 }}", i * 7)).collect();
    format!(
        r#"
seed = 4
stop = {{ time = "6ms" }}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "25Gbps", delay = "1us" }}
[switch]
buffer = "2MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }}]
pfc = {{ priorities = [0, 1], xoff = "30KB" }}
controller = {{ kind = "acc"{acc} }}
[host]
transport = {{ kind = "rdma", cc = "dcqcn", control_priority = 0 }}
[[traffic]]
kind = "flows"
list = [{flows}]
"#,
        flows = flows.join(", ")
    )
}

const FROZEN: &str = ", training = \"none\", epsilon_start = 0.3, epsilon_end = 0.3";

/// Everything a run records that decisions change, but the exploration rate (the host has none).
fn key(r: &Records) -> (Vec<String>, Vec<(u64, u64, u64)>, Vec<(u32, u32, u64, u64, u64)>, u64) {
    let steps = r.controller_steps.iter().map(|s| format!("{} {} {} {} {} {} {}", s.time, s.node, s.port, s.queue, s.action, s.reward, s.features)).collect();
    let flows = r.flows.iter().map(|f| (f.flow_id as u64, f.ce_marks as u64, f.retransmits as u64)).collect();
    let ports = r.ports.iter().map(|p| (p.node, p.port, p.tx_bytes, p.ce_marks, p.pause_frames_sent)).collect();
    (steps, flows, ports, r.meta.events)
}

#[test]
fn replaying_the_agents_choices_from_the_host_gives_their_run_bit_for_bit() {
    // The agents' own run, tick by tick, keeping each tick's actions (ε = 0.3: some explored, some greedy).
    let mut own = Sim::from_toml(&scenario(FROZEN)).unwrap();
    let mut chosen: Vec<Vec<i64>> = Vec::new();
    for k in 1..=12 {
        own.run_until(k * MS / 2);
        let Controller::Acc(a) = own.controllers().next().unwrap() else { panic!("acc") };
        assert!(a.agents.iter().all(|g| g.decisions == k), "tick {k}");
        chosen.push(a.agents.iter().map(|g| g.last.action as i64).collect());
    }
    let own = own.finish(0.0, 0.0);
    let distinct: std::collections::BTreeSet<i64> = chosen.iter().flatten().copied().collect();
    assert!(distinct.len() >= 5, "the agents chose only {distinct:?}");

    let mut host = Sim::from_toml(&scenario(FROZEN)).unwrap();
    let shape = host.env_attach().unwrap();
    assert_eq!((shape.agents, shape.state_len, shape.actions, shape.interval), (4, 6 * 3, 1100, MS / 2));
    let mut k = 0;
    while host.env_next() {
        assert_eq!(host.now(), (k as u64 + 1) * MS / 2, "a decision at every tick and only there");
        let (states, rewards) = host.env_view().unwrap();
        assert_eq!((states.len(), rewards.len()), (4 * 18, 4));
        assert_eq!(rewards.iter().all(|r| r.is_nan()), k == 0, "no reward before the first action");
        host.env_act(&chosen[k]).unwrap();
        k += 1;
    }
    assert_eq!(k, 12);
    assert!(host.env_view().is_none() && host.env_act(&chosen[0]).is_err(), "nothing awaited after the end");
    let host = host.finish(0.0, 0.0);
    assert_eq!(key(&host), key(&own));
}

#[test]
fn keep_bad_actions_and_learning_controllers() {
    let mut sim = Sim::from_toml(&scenario(FROZEN)).unwrap();
    sim.env_attach().unwrap();
    assert!(sim.env_act(&[0, 0, 0, 0]).unwrap_err().contains("call next first"));
    assert!(sim.env_next());
    assert!(sim.env_act(&[0, 0, 0]).unwrap_err().contains("3 actions for 4 agents"));
    assert!(sim.env_act(&[0, 0, 1100, 0]).unwrap_err().contains("action 1100 of agent 2"));
    assert!(sim.env_act(&[0, -2, 0, 0]).unwrap_err().contains("action -2 of agent 1"));
    // −1 before any action keeps the scenario's RED (5 KB / 200 KB / 1 %): no change is made or logged.
    sim.env_act(&[-1, -1, -1, -1]).unwrap();
    assert!(sim.env_next());
    sim.env_act(&[1099, -1, -1, -1]).unwrap();
    assert!(sim.env_next());
    // −1 after an action keeps that action (re-applied, so logged again).
    sim.env_act(&[-1, -1, -1, -1]).unwrap();
    let r = sim.finish(0.0, 0.0);
    let rows: Vec<(u64, u32)> = r.controller_steps.iter().map(|s| (s.time / (MS / 2), s.port)).collect();
    assert_eq!(rows, vec![(2, 0), (3, 0)], "{:?}", r.controller_steps.iter().map(|s| &s.action).collect::<Vec<_>>());
    assert_eq!(r.controller_steps[0].action, r.controller_steps[1].action);

    let mut learning = Sim::from_toml(&scenario(", training = \"local\"")).unwrap();
    assert!(learning.env_attach().unwrap_err().contains("training = \"none\""));
    let mut started = Sim::from_toml(&scenario(FROZEN)).unwrap();
    started.run_until(MS / 10);
    assert!(started.env_attach().unwrap_err().contains("before the run starts"));
    let none = scenario(FROZEN).replace("controller = { kind = \"acc\", training = \"none\", epsilon_start = 0.3, epsilon_end = 0.3 }", "");
    assert!(Sim::from_toml(&none).unwrap().env_attach().unwrap_err().contains("no `switch.controller"));
}
