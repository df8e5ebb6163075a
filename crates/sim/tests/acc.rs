//! ACC's per-port Double-DQN agents (`switch.controller = { kind = "acc", … }`) through the whole
//! simulator: on a lossless DCQCN incast they change the RED setting of every switch port's data queue at
//! every interval, learn, save and reload their model, and the same seed gives the same records and the
//! same weights bit for bit.

use dcnlab_sim::control::acc::nn::{Acts, Mlp};
use dcnlab_sim::control::acc::Acc;
use dcnlab_sim::control::Controller;
use dcnlab_sim::records::Records;
use dcnlab_sim::{run_toml, Sim};

const MS: u64 = 1_000_000_000; // ps

/// Four RDMA (DCQCN) senders into host 4 of a 25 Gb/s star, lossless (PFC on priorities 0 and 1): ACKs
/// and CNPs in drop-tail queue 0, data in RED queue 1 (the DCQCN paper's 5 KB / 200 KB / 1 % to start).
/// `controller` is the `acc` table's keys after `kind`.
fn incast(controller: &str, seed: u64, stop_ms: u64) -> String {
    let flows: Vec<String> =
        (0..4).map(|i| format!("{{ src = {i}, dst = 4, size = \"inf\", start = \"{}us\", priority = 1 }}", i * 5)).collect();
    let ctl = if controller.is_empty() { String::new() } else { format!("controller = {{ kind = \"acc\"{controller} }}") };
    format!(
        r#"
seed = {seed}
stop = {{ time = "{stop_ms}ms" }}
[topology]
kind = "star"
hosts = 5
link = {{ rate = "25Gbps", delay = "1us" }}
[switch]
buffer = "2MB"
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01, non_ect = "pass" }}]
pfc = {{ priorities = [0, 1], xoff = "30KB" }}
{ctl}
[host]
transport = {{ kind = "rdma", cc = "dcqcn", control_priority = 0 }}
[[traffic]]
kind = "flows"
list = [{flows}]
"#,
        flows = flows.join(", ")
    )
}

/// The controller's ACC agents.
fn acc(sim: &Sim) -> &Acc {
    match sim.controllers().next().expect("a controller") {
        Controller::Acc(a) => a,
        _ => panic!("not acc"),
    }
}

fn bits(m: &Mlp) -> Vec<u32> {
    m.p.iter().map(|v| v.to_bits()).collect()
}

fn steps(r: &Records) -> Vec<(u64, u32, u32, u32, String)> {
    r.controller_steps.iter().map(|s| (s.time, s.node, s.port, s.queue, s.action.clone())).collect()
}

/// Learning from scratch, scaled to a 10 ms run: central training every 2 ms, uploads every 2 decisions,
/// training from the 4th transition on (the default waits for a batch, 32).
const SCRATCH: &str = ", training = \"from_scratch\", sync_period = \"2ms\", upload_every = 2, warmup = 4";

#[test]
fn agents_set_red_on_every_port_at_every_interval_and_a_seed_fixes_the_records() {
    let r = run_toml(&incast(SCRATCH, 1, 10)).unwrap();
    assert!(r.meta.failure.is_none(), "{:?}", r.meta.failure);
    assert_eq!(r.meta.drops.total(), 0, "lossless");
    // One agent per switch port (5), on the RED data queue only, deciding every 500 µs.
    let s = &r.controller_steps;
    assert!(s.iter().all(|x| x.queue == 1 && x.action.starts_with("red ")), "{:?}", &s[..3]);
    let ticks: std::collections::BTreeSet<u64> = s.iter().map(|x| x.time).collect();
    assert_eq!(ticks.iter().next(), Some(&(MS / 2)));
    assert!(ticks.iter().zip(ticks.iter().skip(1)).all(|(a, b)| b - a == MS / 2));
    assert!(ticks.len() >= 19, "{} ticks", ticks.len());
    assert_eq!(s.len(), 5 * ticks.len());
    // Exploring from scratch, the bottleneck's agent (port 4 of sw0) tries many grid settings.
    let mut at_bottleneck: Vec<&str> = s.iter().filter(|x| x.port == 4).map(|x| x.action.as_str()).collect();
    eprintln!("first bottleneck actions: {:?}", &at_bottleneck[..3]);
    at_bottleneck.sort();
    at_bottleneck.dedup();
    assert!(at_bottleneck.len() >= 10, "only {} distinct settings", at_bottleneck.len());
    // The same seed: the same decisions and the same run; another seed: other decisions.
    let again = run_toml(&incast(SCRATCH, 1, 10)).unwrap();
    assert_eq!(steps(&r), steps(&again));
    assert_eq!((r.meta.events, r.meta.packet_hops), (again.meta.events, again.meta.packet_hops));
    let key = |r: &Records| r.ports.iter().map(|p| (p.node, p.port, p.tx_bytes, p.ce_marks, p.pause_frames_sent)).collect::<Vec<_>>();
    assert_eq!(key(&r), key(&again));
    let other = run_toml(&incast(SCRATCH, 2, 10)).unwrap();
    assert_ne!(steps(&r), steps(&other));
}

#[test]
fn the_agents_settings_reach_the_queue() {
    // Always the last grid setting (10 MB / 10 MB / 1.0: a threshold no queue here reaches) vs the static
    // 5 KB RED: with ACC's setting nothing is ever marked after the first decision.
    let text = incast(", training = \"none\", head = \"branching\", levels = [\"10MB\"], pmax_levels = [1.0]", 1, 10);
    let mut sim = Sim::from_toml(&text).unwrap();
    sim.run_until(MS / 2 + 1);
    let marks_then = sim.queue_counters("sw0", 4, 1).unwrap().marks;
    sim.run_until(10 * MS);
    let marks_end = sim.queue_counters("sw0", 4, 1).unwrap().marks;
    let r = sim.run();
    assert!(r.controller_steps.iter().all(|s| s.action.contains("kmin: 10000000, kmax: 10000000, pmax: 1.0")));
    assert_eq!(marks_end, marks_then, "marks after ACC set a 10 MB threshold");
    let static_red = run_toml(&incast("", 1, 10)).unwrap();
    let static_marks: u64 = static_red.ports.iter().map(|p| p.ce_marks).sum();
    assert!(static_marks > 100, "the static 5 KB threshold marks ({static_marks})");
}

#[test]
fn training_is_bit_identical_for_a_seed_and_changes_the_weights() {
    let run = |seed: u64| {
        let mut sim = Sim::from_toml(&incast(SCRATCH, seed, 10)).unwrap();
        sim.run_until(10 * MS);
        let a = acc(&sim);
        let meta = a.meta();
        let shared = bits(a.model(0).unwrap());
        let local: Vec<Vec<u32>> = a.agents.iter().map(|g| bits(g.network().unwrap())).collect();
        let sizes = a.p.sizes.clone();
        (shared, local, meta, sizes)
    };
    let (w1, l1, meta, sizes) = run(1);
    let (w2, l2, meta2, _) = run(1);
    assert!(w1 == w2, "same seed, same weights bit for bit");
    assert!(l1 == l2, "every agent's own network too");
    assert_eq!(l1.len(), 5);
    assert_eq!(meta, meta2);
    // One transition per interval after the first, all at the bottleneck: the four queues towards the
    // senders carry no data (idle before and after: not stored). Uploads every 2 decisions: the 20th sends
    // the last.
    assert_eq!((meta.transitions_stored, meta.transitions_shared), (19, 19), "{meta:?}");
    // The central model trained (sync every 2 ms): it is no longer the seed's initial network.
    let init = Mlp::he_uniform(&sizes, &mut dcnlab_sim::rng::stream(1, "acc", 0));
    assert!(w1 != bits(&init), "the central model never trained");
    assert!(l1.iter().all(|w| *w != bits(&init)), "an agent's network is still the initial one");
    let (w3, _, _, _) = run(3);
    assert!(w1 != w3, "another seed, other weights");
}

#[test]
fn a_saved_model_reloads_and_drives_the_same_decisions() {
    let mut sim = Sim::from_toml(&incast(SCRATCH, 5, 6)).unwrap();
    sim.run_until(6 * MS);
    let path = std::env::temp_dir().join(format!("dcnlab-acc-e2e-{}.model", std::process::id()));
    let path = path.to_str().unwrap().to_string();
    acc(&sim).save_model(&path, 0).unwrap();
    let saved = acc(&sim).model(0).unwrap().clone();
    // Frozen (ε = 0, greedy): the decisions are the model's.
    let frozen = format!(", training = \"none\", model = \"{path}\"");
    let mut a = Sim::from_toml(&incast(&frozen, 9, 5)).unwrap();
    a.run_until(MS);
    let loaded = acc(&a).model(0).unwrap().clone();
    assert_eq!(bits(&loaded), bits(&saved));
    let x: Vec<f32> = (0..loaded.inputs()).map(|k| k as f32 / 10.0).collect();
    let (mut p, mut q) = (Acts::default(), Acts::default());
    saved.forward(&x, &mut p);
    loaded.forward(&x, &mut q);
    assert_eq!(p.out().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), q.out().iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    let ra = a.run();
    let rb = run_toml(&incast(&frozen, 9, 5)).unwrap();
    assert_eq!(steps(&ra), steps(&rb));
    // Without the model (He-uniform from the seed) the greedy choices differ.
    let rc = run_toml(&incast(", training = \"none\"", 9, 5)).unwrap();
    assert_ne!(steps(&ra), steps(&rc));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn meta_counts_the_default_network() {
    let sim = Sim::from_toml(&incast(", training = \"shared\"", 1, 1)).unwrap();
    let m = acc(&sim).meta();
    // 18 inputs (3 samples × 6 features) → 20 → 40 → 40 → 20 → 1100.
    assert_eq!((m.agents, m.params, m.model_bytes, m.flops_per_decision), (5, 26_780, 107_120, 51_120));
    let sim = Sim::from_toml(&incast(", head = \"branching\"", 1, 1)).unwrap();
    let m = acc(&sim).meta();
    assert_eq!((m.params, m.flops_per_decision), (26_780 - 21 * 1060, 2 * (360 + 800 + 1600 + 800 + 800)));
}

#[test]
fn bad_input_names_the_field() {
    let field = |ctl: &str| Sim::from_toml(&incast(ctl, 1, 1)).err().expect("an error").field;
    assert_eq!(field(", gama = 0.9"), "switch.controller.gama");
    assert_eq!(field(", gamma = 1.5"), "switch.controller.gamma");
    assert_eq!(field(", interval = 500"), "switch.controller.interval");
    assert_eq!(field(", training = \"offline\""), "switch.controller.training");
    assert_eq!(field(", queue = 0"), "switch.aqm.kind");
    assert_eq!(field(", queue = 2"), "switch.controller.queue");
    assert_eq!(field(", ports = [{ node = \"h0\", port = 0 }]"), "switch.controller.ports[0].node");
    assert_eq!(field(", model = \"/nonexistent/acc.model\""), "switch.controller.model");
    // A data queue that does not run RED.
    let text = incast("", 1, 1).replace("{ kind = \"red\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01, non_ect = \"pass\" }", "{ kind = \"dctcp_red\", threshold = \"20KB\" }")
        .replace("[switch]", "[switch]\ncontroller = { kind = \"acc\" }");
    let e = Sim::from_toml(&text).err().unwrap();
    assert_eq!(e.field, "switch.aqm.kind", "{e}");
    eprintln!("{e}");
}

#[test]
fn steps_record_reward_epsilon_loss_and_state_and_meta_reports_the_model() {
    let dir = std::env::temp_dir().join(format!("dcnlab-acc-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("end.model");
    let ctl = format!("{SCRATCH}, save_model = \"{}\"", path.display());
    let r = run_toml(&incast(&ctl, 5, 6)).unwrap();
    assert_eq!(r.meta.failure, None);
    let s = &r.controller_steps;
    // 5 ports × 12 ticks; rewards from each agent's second decision on, ε recorded every time, a loss
    // where a training step ran, the newest sample of 6 features.
    assert_eq!(s.len(), 60);
    assert_eq!(s.iter().filter(|x| x.reward.is_nan()).count(), 5);
    assert!(s.iter().all(|x| (0.0..=1.0).contains(&x.epsilon)));
    assert!(s.iter().any(|x| x.loss.is_finite()) && s.iter().any(|x| x.loss.is_nan()));
    assert!(s.iter().all(|x| x.features.split(' ').filter_map(|f| f.parse::<f32>().ok()).count() == 6));
    let m = &r.meta.controller;
    assert_eq!((m["acc_agents"], m["acc_params"], m["acc_model_bytes"], m["acc_flops_per_decision"]), (5.0, 26_780.0, 107_120.0, 51_120.0));
    assert!(m["acc_transitions_stored"] > 0.0 && m["controller_tick_s"] > 0.0);
    // The central model trains n = 100 minibatches at each sync (every 2 ms of the 6 ms run); its mean loss.
    let steps = m["acc_central_steps"];
    assert!(steps >= 200.0 && steps % 100.0 == 0.0, "{steps} central steps");
    assert!(m["acc_central_loss"].is_finite() && m["acc_central_loss"] > 0.0);
    // The model written at the end is the run's, and a run loads it.
    let frozen = format!(", training = \"none\", model = \"{}\"", path.display());
    let mut again = Sim::from_toml(&incast(&ctl, 5, 6)).unwrap();
    again.run_until(6 * MS);
    let live = acc(&again).model(0).unwrap().clone();
    let mut loaded = Sim::from_toml(&incast(&frozen, 9, 1)).unwrap();
    loaded.run_until(MS);
    assert_eq!(bits(acc(&loaded).model(0).unwrap()), bits(&live));
    // A folder that does not exist is refused before the run.
    let e = Sim::from_toml(&incast(", save_model = \"/nonexistent/dir/m.model\"", 1, 1)).err().unwrap();
    assert_eq!(e.field, "switch.controller.save_model");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn record_controller_steps_false_keeps_no_rows_and_changes_nothing_else() {
    let run = |keep: bool| {
        let mut toml = incast(SCRATCH, 2, 6);
        if !keep {
            toml.push_str("[record]\ncontroller_steps = false\n");
        }
        let mut sim = Sim::from_toml(&toml).unwrap();
        sim.run_until(6 * MS);
        let w = bits(acc(&sim).model(0).unwrap());
        (w, acc(&sim).meta(), sim.finish(0.0, 0.0))
    };
    let (w_on, meta_on, on) = run(true);
    let (w_off, meta_off, off) = run(false);
    assert!(on.controller_steps.len() >= 5 * 11, "{} rows", on.controller_steps.len());
    assert!(off.controller_steps.is_empty(), "{} rows kept", off.controller_steps.len());
    // The agents decide and learn the same without their rows: same weights, counts and flows.
    assert!(w_on == w_off);
    assert_eq!(meta_on, meta_off);
    let fl = |r: &Records| r.flows.iter().map(|f| (f.flow_id, f.ce_marks, f.retransmits)).collect::<Vec<_>>();
    assert_eq!(fl(&on), fl(&off));
}

#[test]
fn training_state_paths_are_relative_to_the_scenario_file_as_the_model_is() {
    // `train_state` and `save_train_state` name files beside the scenario, as `model` and `save_model` do.
    let dir = std::env::temp_dir().join(format!("dcnlab-acc-paths-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let file = dir.join("scenario.toml");
    let write = |keys: &str| std::fs::write(&file, incast(&format!("{SCRATCH}{keys}"), 1, 1)).unwrap();
    // A state file missing beside the scenario: the error names it there.
    write(", train_state = \"st.state\"");
    let e = Sim::new(&dcnlab_sim::Scenario::from_file(file.to_str().unwrap()).unwrap()).err().unwrap();
    assert_eq!(e.field, "switch.controller.train_state");
    assert!(e.message.contains(dir.join("st.state").to_str().unwrap()), "{}", e.message);
    // A folder that exists only beside the scenario is accepted, and the state lands there.
    write(", save_train_state = \"sub/st.state\"");
    let sim = Sim::new(&dcnlab_sim::Scenario::from_file(file.to_str().unwrap()).unwrap()).unwrap();
    let _ = sim.run();
    assert!(dir.join("sub/st.state").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn central_training_leaves_learning_to_the_central_model() {
    // `training = "central"`: the agents record no loss of their own (they never train), the central model
    // still learns and is pushed to every agent, and the run is `shared` without the agents' steps, bit for
    // bit; `shared` itself has agents' losses.
    let keys = ", sync_period = \"2ms\", upload_every = 2, warmup = 4";
    let run = |ctl: &str| {
        let mut sim = Sim::from_toml(&incast(&format!("{ctl}{keys}"), 4, 10)).unwrap();
        sim.run_until(10 * MS);
        let a = acc(&sim);
        let nets: Vec<Vec<u32>> = a.agents.iter().map(|g| bits(g.network().unwrap())).collect();
        let central = bits(a.model(0).unwrap());
        let sizes = a.p.sizes.clone();
        (sim.run(), nets, central, sizes)
    };
    let (r, nets, central, sizes) = run(", training = \"central\"");
    assert!(r.controller_steps.iter().all(|s| s.loss.is_nan()), "an agent trained itself");
    assert!(r.meta.controller["acc_central_steps"] >= 400.0);
    let init = Mlp::he_uniform(&sizes, &mut dcnlab_sim::rng::stream(4, "acc", 0));
    assert!(central != bits(&init), "the central model never trained");
    assert!(nets.iter().all(|w| *w == central), "the last push did not reach every agent");
    let (same, ..) = run(", training = \"shared\", train_every = 4611686018427387904");
    assert_eq!(steps(&r), steps(&same));
    let (shared, ..) = run(", training = \"shared\"");
    assert!(shared.controller_steps.iter().any(|s| s.loss.is_finite()));
}
