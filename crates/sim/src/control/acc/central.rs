//! C-ACC: one central agent for the whole network (paper §5.4, "centralized vs distributed"; the design
//! of spec/acc.md §8, all [DEFAULT] there). The paper's C-ACC shares one setting per switch layer and port
//! direction and samples its actions; here:
//!
//! - **Port groups** from the topology: a switch's *tier* is its distance from the hosts (a switch with
//!   a host-facing port is tier 0, "leaf"; one whose nearest neighbour is a leaf is tier 1, "spine"; then
//!   "core", then `tier3`…). A port faces *down* when its far end is a host or a switch of a lower tier,
//!   *up* otherwise (a switch of the same tier or higher). The groups are the non-empty (tier, direction)
//!   pairs among the owned queues, ordered by tier, down before up: on a leaf-spine `leaf-down`,
//!   `leaf-up`, `spine-down`; on a star `leaf-down` alone.
//! - **State**: per sample, for each group in that order, the mean then the maximum over its queues of
//!   each of the six per-queue features of the distributed agents (acc.md §2) — `2 · 6 · groups`
//!   numbers; the state is the last `history` samples, oldest first, as the distributed agents'.
//! - **Action**: each group picks one of `group_settings` (8) grid settings sampled for it at the first
//!   tick, uniformly without replacement from the 1100 of the grid (stream `acc_central` 1 of the seed, one
//!   group after the other, each group's sorted by grid index). A joint action is one choice per group,
//!   group 0 the most significant digit: `a = Σ c_g · S^(G−1−g)` — 8³ = 512 joint actions for 3 groups.
//!   Every queue of a group gets the group's setting at once (keeping its own RED options).
//! - **Reward**: the mean over the owned queues of the distributed agents' per-queue reward (§4).
//! - **Learning**: the same Double DQN, network sizes (hidden layers), hyper-parameters and exploration
//!   schedule as a distributed agent's, on its own replay memory of `replay` transitions (it is one agent:
//!   `local` and `shared` are the same; `from_scratch` sets the learning rate, ε and training frequency as
//!   for a distributed agent). A transition is not stored when every queue was idle before and after.
//!
//! Records: `controller_steps` has one row per owned queue per tick (the setting applied, as for the
//! distributed agents), each with the central agent's reward, ε and loss; the state sample (the group
//! means and maxima) is written on the tick's first row only.

use super::agent::Template;
use super::ddqn::Learner;
use super::nn::{Acts, Mlp, F};
use super::replay::{Replay, Transition};
use super::{Acc, Cfg, HeadKind, Params, Training, FEATURES};
use crate::aqm::Aqm;
use crate::config::ConfigError;
use crate::control::{Owned, Tick};
use crate::net::topology::host_distance;
use crate::net::{Net, Owner};
use crate::rng::{self, Rng};
use rand::RngCore;

/// Grid settings sampled per group (acc.md §8 [DEFAULT]).
pub const GROUP_SETTINGS: usize = 8;
/// The largest joint action space the agent accepts (its output layer).
pub const MAX_JOINT: usize = 1 << 16;

/// The port groups of the owned queues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Group names, in order (`leaf-down`, `leaf-up`, `spine-down`, …).
    pub names: Vec<String>,
    /// The group of each owned queue.
    pub of: Vec<usize>,
}

fn tier_name(t: u32) -> String {
    match t {
        0 => "leaf".into(),
        1 => "spine".into(),
        2 => "core".into(),
        t => format!("tier{t}"),
    }
}

impl Layout {
    /// Group the owned queues by their switch's tier and their port's direction.
    pub fn of(net: &Net, names: &[String], owned: &[Owned], p: &Params, field: &str) -> Result<Layout, ConfigError> {
        let ns = net.switches.len();
        let nh = net.n_hosts as usize;
        let dist = host_distance(nh + ns, nh, |n| {
            let (p0, np) = net.node_ports[n];
            net.ports[p0 as usize..(p0 + np) as usize].iter().map(|p| p.peer as usize)
        });
        // A switch touching a host is at distance 1, tier 0.
        let tier: Vec<u32> = dist[nh..].iter().map(|&d| if d == u32::MAX { d } else { d - 1 }).collect();
        let mut keys = Vec::with_capacity(owned.len());
        for o in owned {
            let port = &net.ports[o.port as usize];
            let Owner::Switch(s) = port.owner else { unreachable!("controllers own switch ports") };
            let own = tier[s as usize];
            if own == u32::MAX {
                let name = names.get(port.node as usize).map_or("?", |n| n.as_str());
                return Err(ConfigError::new(format!("{field}.mode"), format!("switch `{name}` reaches no host, so it has no tier for the centralized agent's port groups; leave it out with `ports`")));
            }
            let down = match port.peer_owner {
                Owner::Host(_) => true,
                Owner::Switch(o) => tier[o as usize] < own,
            };
            keys.push((own, !down));
        }
        let mut order = keys.clone();
        order.sort();
        order.dedup();
        let names = order.iter().map(|&(t, up)| format!("{}-{}", tier_name(t), if up { "up" } else { "down" })).collect();
        let of = keys.iter().map(|k| order.binary_search(k).expect("a key of the list")).collect();
        let l = Layout { names, of };
        let g = l.names.len() as u32;
        let joint = (p.group_settings as u128).checked_pow(g).unwrap_or(u128::MAX);
        if joint > MAX_JOINT as u128 {
            return Err(ConfigError::new(
                format!("{field}.group_settings"),
                format!(
                    "{} settings in each of {g} port groups ({}) make {joint} joint actions, more than the {MAX_JOINT} the agent takes: lower group_settings or own fewer port groups (`ports`)",
                    p.group_settings,
                    l.names.join(", ")
                ),
            ));
        }
        Ok(l)
    }

    /// `settings ^ groups`.
    pub fn joint_actions(&self, settings: usize) -> usize {
        settings.pow(self.names.len() as u32)
    }
}

/// The keys a centralized agent has no use for are refused, naming the key (`Cfg::resolve`).
pub(super) fn refuse_distributed_keys(c: &Cfg, field: &str) -> Result<(), ConfigError> {
    // One agent: nothing to upload, no central model apart from it, one head over joint actions.
    let given = [
        ("global_replay", c.global_replay.is_some()),
        ("upload_every", c.upload_every.is_some()),
        ("sync_period", c.sync_period.is_some()),
        ("sync_batches", c.sync_batches.is_some()),
        ("model", c.model.is_some()),
        ("save_model", c.save_model.is_some()),
        ("train_state", c.train_state.is_some()),
        ("save_train_state", c.save_train_state.is_some()),
        ("head", c.head != HeadKind::Full),
    ];
    let Some((k, _)) = given.iter().find(|(_, g)| *g) else { return Ok(()) };
    let why = match *k {
        "train_state" | "save_train_state" => "training-state files hold the central learner of distributed `shared`/`from_scratch`",
        "model" | "save_model" => "model files hold distributed agents' networks; the centralized agent starts from the seed",
        "head" => "the centralized agent has one Q-value per joint action (head = \"full\")",
        _ => "the centralized agent is one agent and shares with no one (it learns from its own memory of `replay` transitions)",
    };
    Err(ConfigError::new(format!("{field}.{k}"), format!("not used with mode = \"centralized\": {why}; remove `{k}`")))
}

/// Each group's choice in joint action `a`: `a = Σ c_g · S^(G−1−g)` (group 0 the most significant digit).
pub fn decode(a: usize, settings: usize, groups: usize) -> Vec<usize> {
    let mut c = vec![0; groups];
    let mut rest = a;
    for g in (0..groups).rev() {
        c[g] = rest % settings;
        rest /= settings;
    }
    c
}

/// The joint action of one choice per group (the inverse of `decode`).
pub fn encode(choices: &[usize], settings: usize) -> usize {
    choices.iter().fold(0, |a, &c| a * settings + c)
}

/// One state sample: per group, the mean then the maximum over its queues of each feature
/// (`[g0 mean f0…f5, g0 max f0…f5, g1 mean …]`). A group with no queue in `samples` gives zeros.
pub fn summarise(samples: &[[F; FEATURES]], of: &[usize], groups: usize) -> Vec<F> {
    let mut sum = vec![0.0f64; groups * FEATURES];
    let mut max = vec![F::NEG_INFINITY; groups * FEATURES];
    let mut n = vec![0usize; groups];
    for (s, &g) in samples.iter().zip(of) {
        n[g] += 1;
        for f in 0..FEATURES {
            sum[g * FEATURES + f] += s[f] as f64;
            max[g * FEATURES + f] = max[g * FEATURES + f].max(s[f]);
        }
    }
    let mut out = Vec::with_capacity(2 * FEATURES * groups);
    for g in 0..groups {
        let k = n[g].max(1) as f64;
        out.extend((0..FEATURES).map(|f| (sum[g * FEATURES + f] / k) as F));
        out.extend((0..FEATURES).map(|f| if n[g] == 0 { 0.0 } else { max[g * FEATURES + f] }));
    }
    out
}

/// `group_settings` distinct grid actions per group, uniform without replacement, each group's sorted.
pub fn sample_menus(grid_len: usize, settings: usize, groups: usize, rng: &mut Rng) -> Vec<Vec<usize>> {
    (0..groups)
        .map(|_| {
            let mut m: Vec<usize> = Vec::with_capacity(settings);
            while m.len() < settings {
                let a = ((rng.next_u64() as u128 * grid_len as u128) >> 64) as usize;
                if !m.contains(&a) {
                    m.push(a);
                }
            }
            m.sort_unstable();
            m
        })
        .collect()
}

/// What the central agent saw and did at its last decision.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CentralStep {
    /// The newest state sample (group means and maxima).
    pub sample: Vec<F>,
    pub reward: Option<F>,
    pub epsilon: F,
    pub action: usize,
    pub explored: bool,
    pub loss: Option<F>,
}

/// The centralized agent.
pub struct CentralAgent {
    pub layout: Layout,
    /// Each group's sampled grid actions (empty before the first tick).
    pub menus: Vec<Vec<usize>>,
    state: Vec<F>,
    idle: bool,
    prev_action: Option<usize>,
    learner: Option<Learner>,
    frozen: Option<Mlp>,
    mem: Option<Replay>,
    rng: Option<Rng>,
    acts: Acts,
    idx: Vec<usize>,
    pub decisions: u64,
    /// Training steps taken and the sum of their losses (`meta.controller`).
    pub train_steps: u64,
    pub loss_sum: f64,
    pub last: CentralStep,
}

impl CentralAgent {
    pub fn new(layout: Layout) -> CentralAgent {
        CentralAgent {
            layout,
            menus: Vec::new(),
            state: Vec::new(),
            idle: true,
            prev_action: None,
            learner: None,
            frozen: None,
            mem: None,
            rng: None,
            acts: Acts::default(),
            idx: Vec::new(),
            decisions: 0,
            train_steps: 0,
            loss_sum: 0.0,
            last: CentralStep::default(),
        }
    }

    /// The agent's network (`None` before the first tick).
    pub fn network(&self) -> Option<&Mlp> {
        self.learner.as_ref().map(|l| &l.online).or(self.frozen.as_ref())
    }

    /// Transitions stored in its memory.
    pub fn stored(&self) -> u64 {
        self.mem.as_ref().map_or(0, |m| m.pushed)
    }

    /// The grid action each owned queue gets under joint action `a`.
    pub fn settings_of(&self, a: usize, settings: usize) -> Vec<usize> {
        let c = decode(a, settings, self.layout.names.len());
        self.layout.of.iter().map(|&g| self.menus[g][c[g]]).collect()
    }

    /// Menus, network, memory and streams from the seed (at the first tick).
    fn start(&mut self, p: &Params, seed: u64) {
        self.menus = sample_menus(p.grid.len(), p.group_settings, self.layout.names.len(), &mut rng::stream(seed, "acc_central", 1));
        let init = Mlp::he_uniform(&p.sizes, &mut rng::stream(seed, "acc", 0));
        self.state = vec![0.0; p.sizes[0]];
        if p.training == Training::None {
            self.frozen = Some(init);
        } else {
            self.learner = Some(Learner::new(init, p.hyper.lr));
            self.mem = Some(Replay::new(p.sizes[0], p.replay));
        }
        self.rng = Some(rng::stream(seed, "acc_central", 0));
    }

    /// One decision: observe every queue, reward the previous joint action, store, choose ε-greedily,
    /// train, and give every queue its group's setting.
    pub fn on_tick(&mut self, p: &Params, templates: &[Template], tick: &mut Tick) {
        if self.rng.is_none() {
            self.start(p, tick.seed());
        }
        let n = tick.len();
        let mut feats = Vec::with_capacity(n);
        let mut rsum = 0.0f64;
        let mut idle_now = true;
        for i in 0..n {
            let c = tick.counters(i);
            let (qlen, rate) = tick.queue_bytes(i);
            let Aqm::Red(red) = tick.aqm(i) else { unreachable!("ACC owns RED queues and a change keeps the kind") };
            let s = p.observe(&c, qlen, rate, &red.params);
            rsum += p.reward(&s) as f64;
            idle_now &= c.tx_bytes == 0 && qlen == 0;
            feats.push(s.features);
        }
        let reward = (rsum / n.max(1) as f64) as F;
        let sample = summarise(&feats, &self.layout.of, self.layout.names.len());
        // s_{t+1}: drop the oldest sample, append this one (the first fills the whole history).
        let k = sample.len();
        let s_prev = self.state.clone();
        if self.prev_action.is_none() {
            for h in 0..p.history {
                self.state[h * k..(h + 1) * k].copy_from_slice(&sample);
            }
        } else {
            self.state.copy_within(k.., 0);
            let len = self.state.len();
            self.state[len - k..].copy_from_slice(&sample);
        }
        let mut step = CentralStep { sample, ..CentralStep::default() };
        if let Some(a) = self.prev_action {
            step.reward = Some(reward);
            if let (Some(mem), false) = (self.mem.as_mut(), self.idle && idle_now) {
                mem.push(Transition { s: &s_prev, a, r: reward, s2: &self.state });
            }
        }
        self.idle = idle_now;
        // ε-greedy: one uniform draw per decision whatever the outcome (as the distributed agents).
        let rng = self.rng.as_mut().expect("started");
        let eps = p.epsilon(self.decisions);
        let explore = rng::unit(rng) < eps;
        let joint = p.head.outputs();
        let a = if explore {
            ((rng.next_u64() as u128 * joint as u128) >> 64) as usize
        } else {
            let q = match (&mut self.learner, &self.frozen) {
                (Some(l), _) => l.q_values(&self.state),
                (None, Some(m)) => {
                    m.forward(&self.state, &mut self.acts);
                    self.acts.out()
                }
                (None, None) => unreachable!("the agent has a network"),
            };
            p.head.greedy(q)
        };
        self.prev_action = Some(a);
        self.decisions += 1;
        if let (Some(l), Some(mem)) = (self.learner.as_mut(), self.mem.as_ref()) {
            if self.decisions % p.train_every == 0 && mem.len() >= p.warmup.max(1) {
                mem.sample(rng, p.hyper.batch, &mut self.idx);
                let loss = l.train(mem, &self.idx, &p.head, &p.hyper);
                self.train_steps += 1;
                self.loss_sum += loss as f64;
                step.loss = Some(loss);
            }
        }
        step.action = a;
        step.epsilon = eps as F;
        step.explored = explore;
        for (i, grid_a) in self.settings_of(a, p.group_settings).into_iter().enumerate() {
            tick.set_aqm(i, &Acc::red_cfg(&templates[i], grid_a, p)).expect("ACC sets RED on a RED queue");
            if let Some(row) = tick.last_step() {
                row.reward = step.reward.map_or(f64::NAN, |r| r as f64);
                row.epsilon = eps;
                row.loss = step.loss.map_or(f64::NAN, |l| l as f64);
                if i == 0 {
                    row.features = step.sample.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(" ");
                }
            }
        }
        self.last = step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joint_actions_decode_to_every_combination_of_the_three_groups() {
        let mut seen = std::collections::BTreeSet::new();
        for a in 0..512 {
            let c = decode(a, 8, 3);
            assert!(c.iter().all(|&x| x < 8));
            assert_eq!(encode(&c, 8), a);
            seen.insert(c);
        }
        assert_eq!(seen.len(), 512);
        // Group 0 is the most significant digit: 1·64 + 2·8 + 7.
        assert_eq!(decode(87, 8, 3), vec![1, 2, 7]);
        assert_eq!(decode(511, 8, 3), vec![7, 7, 7]);
    }

    /// A layout by hand: queues 0, 1 in group 0 (leaf-down), 2 in group 1, 3, 4 in group 2.
    fn central(menus: Vec<Vec<usize>>) -> CentralAgent {
        let names = ["leaf-down", "leaf-up", "spine-down"].map(String::from).to_vec();
        let mut c = CentralAgent::new(Layout { names, of: vec![0, 0, 1, 2, 2] });
        c.menus = menus;
        c
    }

    #[test]
    fn each_queue_gets_its_groups_choice() {
        let menus: Vec<Vec<usize>> = (0..3).map(|g| (0..8).map(|k| 100 * g + k).collect()).collect();
        let c = central(menus);
        for a in 0..512 {
            let ch = decode(a, 8, 3);
            let want = vec![ch[0], ch[0], 100 + ch[1], 200 + ch[2], 200 + ch[2]];
            assert_eq!(c.settings_of(a, 8), want, "joint action {a}");
        }
    }

    #[test]
    fn the_state_sample_by_hand() {
        // Two groups: queues 0 and 2 in group 0, queue 1 in group 1; group 2 has none.
        let s = [[0.2, 1.0, 0.0, 0.0, 0.5, 0.01], [0.9, 0.5, 0.25, 1.0, 1.0, 1.0], [0.4, 0.0, 0.5, 0.5, 0.5, 0.03]];
        let v = summarise(&s, &[0, 1, 0], 3);
        assert_eq!(v.len(), 36);
        // Group 0: mean of queues 0 and 2, then their maxima.
        let mean0: Vec<F> = (0..6).map(|f| ((s[0][f] as f64 + s[2][f] as f64) / 2.0) as F).collect();
        assert_eq!(&v[..6], &mean0[..]);
        assert_eq!(&v[..6], &[0.3, 0.5, 0.25, 0.25, 0.5, 0.02][..]);
        assert_eq!(&v[6..12], &[0.4, 1.0, 0.5, 0.5, 0.5, 0.03][..]);
        // Group 1: one queue, mean = max = its features.
        assert_eq!(&v[12..18], &s[1][..]);
        assert_eq!(&v[18..24], &s[1][..]);
        // Group 2 is empty: zeros.
        assert_eq!(&v[24..], &[0.0; 12][..]);
    }

    #[test]
    fn menus_are_distinct_sorted_and_fixed_by_the_seed() {
        let m = sample_menus(1100, 8, 3, &mut rng::stream(7, "acc_central", 1));
        assert_eq!(m.len(), 3);
        for g in &m {
            assert_eq!(g.len(), 8);
            assert!(g.windows(2).all(|w| w[0] < w[1]) && g[7] < 1100);
        }
        assert_eq!(m, sample_menus(1100, 8, 3, &mut rng::stream(7, "acc_central", 1)));
        assert_ne!(m, sample_menus(1100, 8, 3, &mut rng::stream(8, "acc_central", 1)));
        // All of a small grid when it asks for every setting.
        assert_eq!(sample_menus(6, 6, 1, &mut rng::stream(7, "x", 0)), vec![vec![0, 1, 2, 3, 4, 5]]);
    }
}
