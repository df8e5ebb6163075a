//! C-ACC (`switch.controller = { kind = "acc", mode = "centralized" }`) through the whole simulator: one
//! agent over a leaf-spine's port groups (leaf-down, leaf-up, spine-down) gives every port of a group the
//! group's setting at every interval, the groups follow their own menus, the joint choices vary while it
//! explores, and a seed fixes the records.

use dcnlab_sim::control::acc::central::decode;
use dcnlab_sim::control::acc::nn::n_params;
use dcnlab_sim::control::acc::Acc;
use dcnlab_sim::control::Controller;
use dcnlab_sim::records::Records;
use dcnlab_sim::{run_toml, Sim};
use std::collections::{BTreeMap, BTreeSet};

const MS: u64 = 1_000_000_000; // ps
const HOSTS_PER_LEAF: u32 = 3;
const LEAVES: u32 = 2;
const SPINES: u32 = 2;

/// 2 leaves × 3 hosts at 25 Gb/s, 2 spines at 100 Gb/s, lossless DCQCN: hosts of leaf 0 send long flows to
/// leaf 1 and back, so leaf-down, leaf-up and spine-down ports all carry data. `ctl`: keys after `kind`.
fn fabric(ctl: &str, seed: u64, stop_ms: u64) -> String {
    let mut flows = Vec::new();
    for (k, (s, d)) in [(0, 3), (1, 3), (2, 4), (4, 0), (5, 1)].iter().enumerate() {
        flows.push(format!("{{ src = {s}, dst = {d}, size = \"inf\", start = \"{}us\", priority = 1 }}", k * 7));
    }
    format!(
        r#"
seed = {seed}
stop = {{ time = "{stop_ms}ms" }}
[topology]
kind = "leaf_spine"
leaves = {LEAVES}
spines = {SPINES}
hosts_per_leaf = {HOSTS_PER_LEAF}
host_link = {{ rate = "25Gbps", delay = "1us" }}
fabric_link = {{ rate = "100Gbps", delay = "1us" }}
[switch]
buffer = "4MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }}]
pfc = {{ priorities = [1] }}
controller = {{ kind = "acc", mode = "centralized"{ctl} }}
[host]
transport = {{ kind = "rdma", cc = "dcqcn", control_priority = 0 }}
[[traffic]]
kind = "flows"
list = [{flows}]
"#,
        flows = flows.join(", ")
    )
}

/// Learning from scratch (ε 1.0 → 0.05 over 2000 decisions: it explores throughout a short run).
const SCRATCH: &str = ", training = \"from_scratch\", warmup = 4";

fn acc(sim: &Sim) -> &Acc {
    match sim.controllers().next().expect("a controller") {
        Controller::Acc(a) => a,
        _ => panic!("not acc"),
    }
}

/// The group of a switch port of this leaf-spine, by the rule of `central.rs` (hosts are nodes 0–5, leaves
/// 6–7, spines 8–9): a leaf's first ports face its hosts, the rest the spines; a spine's face the leaves.
fn group(node: u32, port: u32) -> usize {
    let hosts = LEAVES * HOSTS_PER_LEAF;
    assert!(node >= hosts, "a switch");
    if node < hosts + LEAVES {
        if port < HOSTS_PER_LEAF {
            0
        } else {
            1
        }
    } else {
        2
    }
}

/// Per tick: each group's set of settings (the RED description) applied at that tick.
fn per_tick(r: &Records) -> BTreeMap<u64, [BTreeSet<String>; 3]> {
    let mut m: BTreeMap<u64, [BTreeSet<String>; 3]> = BTreeMap::new();
    for s in &r.controller_steps {
        m.entry(s.time).or_default()[group(s.node, s.port)].insert(s.action.clone());
    }
    m
}

fn steps(r: &Records) -> Vec<(u64, u32, u32, String)> {
    r.controller_steps.iter().map(|s| (s.time, s.node, s.port, s.action.clone())).collect()
}

#[test]
fn every_port_of_a_group_gets_the_groups_setting_and_groups_choose_apart() {
    let r = run_toml(&fabric(SCRATCH, 1, 12)).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    let ports_per_tick = (LEAVES * (HOSTS_PER_LEAF + SPINES) + SPINES * LEAVES) as usize;
    let ticks = per_tick(&r);
    assert!(ticks.len() >= 23, "{} ticks", ticks.len());
    assert_eq!(r.controller_steps.len(), ports_per_tick * ticks.len(), "one row per port per tick");
    assert!(ticks.keys().zip(ticks.keys().skip(1)).all(|(a, b)| b - a == MS / 2));
    // Within a tick, every port of a group carries one setting.
    for (t, g) in &ticks {
        for (k, set) in g.iter().enumerate() {
            assert_eq!(set.len(), 1, "tick {t}: group {k} has settings {set:?}");
        }
    }
    // Each group draws from its own menu of 8, and exploring it uses several of them.
    let mut used: [BTreeSet<String>; 3] = Default::default();
    for g in ticks.values() {
        for k in 0..3 {
            used[k].extend(g[k].iter().cloned());
        }
    }
    for (k, u) in used.iter().enumerate() {
        assert!((3..=8).contains(&u.len()), "group {k} used {} settings", u.len());
    }
    // The groups choose apart: a tick where all three settings differ, and the combinations vary.
    let combos: BTreeSet<[String; 3]> =
        ticks.values().map(|g| [0, 1, 2].map(|k| g[k].iter().next().unwrap().clone())).collect();
    assert!(combos.iter().any(|c| c[0] != c[1] && c[1] != c[2] && c[0] != c[2]));
    assert!(combos.len() >= ticks.len() / 2, "{} combinations in {} ticks", combos.len(), ticks.len());
    // One reward per tick (the mean over ports), the same on each of its rows; NaN at the first tick.
    let mut by_t: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for s in &r.controller_steps {
        by_t.entry(s.time).or_default().insert(s.reward.to_bits());
    }
    assert!(by_t.values().all(|v| v.len() == 1));
    assert!(r.controller_steps[0].reward.is_nan() && r.controller_steps.last().unwrap().reward.is_finite());
    // The state sample (3 groups × mean and max of 6 features) on the tick's first row only.
    let with_state: Vec<_> = r.controller_steps.iter().filter(|s| !s.features.is_empty()).collect();
    assert_eq!(with_state.len(), ticks.len());
    assert!(with_state.iter().all(|s| s.features.split(' ').filter_map(|f| f.parse::<f32>().ok()).count() == 36));
    // The meta reports one agent, its network (108 inputs → 20 → 40 → 40 → 20 → 512) and its training.
    let m = &r.meta.controller;
    let params = n_params(&[108, 20, 40, 40, 20, 512]) as f64;
    assert_eq!((m["acc_agents"], m["acc_groups"], m["acc_joint_actions"], m["acc_params"]), (1.0, 3.0, 512.0, params));
    assert_eq!(m["acc_flops_per_decision"], 2.0 * (108.0 * 20.0 + 800.0 + 1600.0 + 800.0 + 20.0 * 512.0));
    assert!(m["acc_transitions_stored"] >= 20.0 && m["acc_train_steps"] >= 15.0, "{m:?}");
}

#[test]
fn the_layout_and_the_applied_settings_follow_the_decoded_joint_action() {
    let mut sim = Sim::from_toml(&fabric(SCRATCH, 3, 4)).unwrap();
    // Between ticks: the last decision was at 3 ms.
    sim.run_until(3 * MS + MS / 4);
    let a = acc(&sim);
    let c = a.central_agent.as_ref().expect("centralized");
    assert_eq!(c.layout.names, vec!["leaf-down", "leaf-up", "spine-down"]);
    assert!(c.menus.len() == 3 && c.menus.iter().all(|m| m.len() == 8));
    // The last decision's joint action, decoded: every port's queue runs its group's menu entry.
    let choice = decode(c.last.action, 8, 3);
    let want: Vec<String> = (0..3)
        .map(|k| {
            let s = a.p.grid.setting(c.menus[k][choice[k]]);
            format!("kmin: {}, kmax: {}, pmax: {:?}", s.kmin, s.kmax, s.pmax)
        })
        .collect();
    let r = sim.run();
    let last: Vec<_> = r.controller_steps.iter().filter(|s| s.time == 3 * MS).collect();
    assert_eq!(last.len(), 14);
    for s in last {
        let w = &want[group(s.node, s.port)];
        assert!(s.action.contains(w.as_str()), "port {}:{} runs `{}`, want `{w}`", s.node, s.port, s.action);
    }
}

#[test]
fn a_seed_fixes_the_records_and_another_changes_them() {
    let a = run_toml(&fabric(SCRATCH, 5, 6)).unwrap();
    let b = run_toml(&fabric(SCRATCH, 5, 6)).unwrap();
    assert_eq!(steps(&a), steps(&b));
    let bits = |r: &Records| r.controller_steps.iter().map(|s| (s.reward.to_bits(), s.loss.to_bits(), s.features.clone())).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
    assert_eq!((a.meta.events, a.meta.packet_hops), (b.meta.events, b.meta.packet_hops));
    let c = run_toml(&fabric(SCRATCH, 6, 6)).unwrap();
    assert_ne!(steps(&a), steps(&c));
    // The weights after training, bit for bit.
    let w = |seed| {
        let mut sim = Sim::from_toml(&fabric(SCRATCH, seed, 6)).unwrap();
        sim.run_until(6 * MS);
        acc(&sim).model(0).unwrap().p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    assert!(w(5) == w(5));
}

#[test]
fn a_star_is_one_group_and_a_fat_tree_five() {
    let star = fabric(SCRATCH, 1, 1).replace(
        "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 3\nhost_link = { rate = \"25Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }",
        "kind = \"star\"\nhosts = 6\nlink = { rate = \"25Gbps\", delay = \"1us\" }",
    );
    let sim = Sim::from_toml(&star).unwrap();
    let a = acc(&sim);
    assert_eq!(a.central_agent.as_ref().unwrap().layout.names, vec!["leaf-down"]);
    assert_eq!(a.p.sizes, vec![36, 20, 40, 40, 20, 8]);
    let ft = fabric(SCRATCH, 1, 1).replace(
        "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 3\nhost_link = { rate = \"25Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }",
        "kind = \"fat_tree\"\nk = 4\nlink = { rate = \"25Gbps\", delay = \"1us\" }",
    );
    let sim = Sim::from_toml(&ft).unwrap();
    let names = &acc(&sim).central_agent.as_ref().unwrap().layout.names;
    assert_eq!(names, &vec!["leaf-down", "leaf-up", "spine-down", "spine-up", "core-down"]);
    // 10 settings in 5 groups: 100 000 joint actions, more than the agent takes.
    let e = Sim::from_toml(&ft.replace("mode = \"centralized\"", "mode = \"centralized\", group_settings = 10")).err().unwrap();
    assert_eq!(e.field, "switch.controller.group_settings", "{e}");
}

#[test]
fn bad_input_names_the_field() {
    let field = |ctl: &str| Sim::from_toml(&fabric(ctl, 1, 1)).err().expect("an error").field;
    assert_eq!(field(", sync_period = \"10ms\""), "switch.controller.sync_period");
    assert_eq!(field(", upload_every = 5"), "switch.controller.upload_every");
    assert_eq!(field(", head = \"branching\""), "switch.controller.head");
    assert_eq!(field(", save_model = \"x.model\""), "switch.controller.save_model");
    assert_eq!(field(", group_settings = 2000"), "switch.controller.group_settings");
    let e = Sim::from_toml(&fabric(", sync_batches = 3", 1, 1)).err().unwrap();
    eprintln!("{e}");
    assert!(e.to_string().contains("centralized"));
}
