//! ACC: automatic ECN tuning with per-port Double-DQN agents (Yan et al., *ACC: Automatic ECN Tuning for
//! High-Speed Datacenter Networks*, SIGCOMM 2021; the design as reconstructed in `spec/acc.md`).
//!
//! `switch.controller = { kind = "acc", … }`: one agent per owned switch egress queue (default: the
//! lossless queues that run RED — the RDMA data class — on every switch port). Every `interval` (Δt,
//! 500 µs) each agent reads its queue's counters, builds the state of the last `history` samples
//! (queue length, sent and marked rates, the current RED setting: §2), picks one of the 1100 RED settings
//! of the grid ε-greedily (§3), applies it at once, and learns from the reward `w1·T + w2·D − w3·paused`
//! (§4) with Double DQN (§5), alone or sharing experience through a central model (§6).
//!
//! `mode = "centralized"` is C-ACC (§5.4, acc.md §8): one agent for every owned queue, deciding one
//! setting per port group (`central.rs`).
//!
//! The files: `nn.rs` (dense layers, Adam, Huber), `replay.rs`, `ddqn.rs` (the target, a training step,
//! the Q heads), `grid.rs` (the action space), `agent.rs` (the controller at its ticks), `central.rs` (the
//! centralized agent), `model.rs` (model files). Everything the agents draw comes from named streams of the scenario seed (`acc` for the
//! initial weights and the central trainer, `acc_agent` i for agent i), and the maths is single-threaded
//! f32 without fused operations: same scenario and seed ⇒ same weights and records, bit for bit.

pub mod agent;
pub mod central;
pub mod ddqn;
pub mod grid;
pub mod model;
pub mod nn;
pub mod replay;
pub mod train_state;

pub use agent::Acc;

use super::Owned;
use crate::aqm::Aqm;
use crate::config::{ConfigError, PortRef};
use crate::net::Net;
use crate::units::{Bytes, Dur, Size, Time, MS, US};
use ddqn::{Head, Hyper};
use grid::Grid;
use serde::Deserialize;

/// Centralized (one agent for the network: C-ACC of §5.4, `central.rs`) or distributed (one per queue).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Distributed,
    Centralized,
}

/// How the agents learn during the run (acc.md §6).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Training {
    /// Frozen model: inference only.
    None,
    /// Each agent learns alone from its own memory.
    Local,
    /// Each agent learns locally and uploads its transitions; a central model trained on all of them
    /// replaces the agents' networks every `sync_period`.
    #[default]
    Shared,
    /// As `shared`, but the agents take no training steps of their own: they infer, act and upload, and
    /// only the central model learns (the hybrid the paper's §6 names as the better design: inference and
    /// ECN updates decentralised, online training centralised). Local steps between pushes are what made
    /// `shared` break down at 288 hosts (experiments/acc/README.md, "The full `paper` sweep").
    Central,
    /// As `shared`, from random weights, with a larger learning rate and decaying exploration (the
    /// "aggressive version without offline training" of the paper's unseen-traffic experiment).
    FromScratch,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HeadKind {
    /// One Q-value per grid setting.
    #[default]
    Full,
    /// Kmin-level, Kmax-level and Pmax heads; Q is their sum.
    Branching,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum BranchingGreedy {
    /// The valid setting of highest Q.
    #[default]
    BestValid,
    /// Each head's argmax, an invalid pair swapped.
    Swap,
}

/// `switch.controller = { kind = "acc", … }`. Defaults from acc.md §2–§6 (all [DEFAULT] there: the paper
/// does not publish them).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    #[serde(default)]
    pub mode: Mode,
    /// Δt: the sampling and decision interval.
    #[serde(default = "d_interval")]
    pub interval: Dur,
    /// k: samples in a state.
    #[serde(default = "d_history")]
    pub history: usize,
    /// Threshold ladder (Kmin, Kmax levels); default 20, 40, 80, 160, 320, 640 KB, 1, 2, 5, 10 MB.
    pub levels: Option<Vec<Bytes>>,
    /// Marking probabilities; default 0.05, 0.10, …, 1.00.
    pub pmax_levels: Option<Vec<f64>>,
    #[serde(default)]
    pub head: HeadKind,
    /// `head = "branching"`: how the greedy action is read off the three heads — `"best_valid"` (default):
    /// the valid setting (Kmin ≤ Kmax) of highest Q; `"swap"`: each head's argmax, a Kmin above the Kmax
    /// swapped (acc.md §5's rule, and this simulator's before 2026-11-28; the swapped pair is not the
    /// maximum, see `ddqn.rs`).
    #[serde(default)]
    pub branching_greedy: BranchingGreedy,
    /// Hidden layer widths.
    #[serde(default = "d_hidden")]
    pub hidden: Vec<usize>,
    #[serde(default)]
    pub training: Training,
    /// A model file (`Acc::save_model`) to start from; default: He-uniform weights from the seed.
    pub model: Option<String>,
    /// Write the model the run has learnt here when it ends (the central one in `shared`, `central` and
    /// `from_scratch`, agent 0's in `local`): offline pre-training saves its result so.
    pub save_model: Option<String>,
    /// `shared`/`central`/`from_scratch`: a training-state file (`train_state.rs`: the central learner's target
    /// network, optimiser moments, step count and global replay memory) to resume from, beside `model`.
    /// Offline pre-training passes each episode the state the previous one saved, so that its episodes
    /// share one memory and one learner (acc.md §5–§6). Default: a fresh learner and an empty memory.
    pub train_state: Option<String>,
    /// `shared`/`central`/`from_scratch`: write the central learner's training state here when the run ends.
    pub save_train_state: Option<String>,
    #[serde(default = "d_gamma")]
    pub gamma: f64,
    /// n-step returns: each stored transition carries the discounted rewards of n consecutive intervals
    /// and the state n intervals on, and the target bootstraps with γ^n (default 1: one-step Double DQN,
    /// acc.md §5; distributed mode only).
    #[serde(default = "d_n_step")]
    pub n_step: usize,
    /// Adam's learning rate (default 1e-4; 1e-3 with `from_scratch`).
    pub lr: Option<f64>,
    #[serde(default = "d_batch")]
    pub batch: usize,
    /// Each agent's replay memory (transitions); the centralized agent's one memory.
    #[serde(default = "d_replay")]
    pub replay: usize,
    /// The central memory of `shared`, `central` and `from_scratch` (default 100 000; distributed mode only).
    pub global_replay: Option<usize>,
    /// Transitions a memory must hold before training (default 0; `batch` with `from_scratch`).
    pub warmup: Option<usize>,
    /// Decisions between an agent's training steps (default 4; 1 with `from_scratch`; never with `central`).
    pub train_every: Option<u64>,
    /// Training steps between target-network copies (C).
    #[serde(default = "d_target_sync")]
    pub target_sync: u64,
    /// ε decays linearly from `epsilon_start` to `epsilon_end` over `epsilon_decisions` of an agent's
    /// decisions (defaults: 0.01 throughout; none with `training = "none"`; 1.0 → 0.05 over 2000 with
    /// `from_scratch`).
    pub epsilon_start: Option<f64>,
    pub epsilon_end: Option<f64>,
    pub epsilon_decisions: Option<u64>,
    /// Global gradient norm limit.
    #[serde(default = "d_clip")]
    pub clip: f64,
    #[serde(default = "d_huber_delta")]
    pub huber_delta: f64,
    /// U: decisions between an agent's uploads of its new transitions (default 20; distributed only).
    pub upload_every: Option<u64>,
    /// P: time between central trainings (and pushes of the central model to every agent; default
    /// 100 ms; distributed only).
    pub sync_period: Option<Dur>,
    /// n: minibatches per central training (default 100; distributed only).
    pub sync_batches: Option<usize>,
    /// `mode = "centralized"`: grid settings sampled per port group (default 8 → 8^groups joint actions).
    pub group_settings: Option<usize>,
    /// Reward weights: throughput, delay, PFC pause penalty.
    #[serde(default = "d_half")]
    pub w1: f64,
    #[serde(default = "d_half")]
    pub w2: f64,
    #[serde(default)]
    pub w3: f64,
    /// The queue length at which the state's `qlen` feature reaches 1 (log scale).
    #[serde(default = "d_state_scale")]
    pub state_qlen_scale: Bytes,
    /// The queue length at which the reward's delay term reaches 0 (log scale).
    #[serde(default = "d_reward_scale")]
    pub reward_qlen_scale: Bytes,
    /// Switch ports the agents own (default: every switch port).
    pub ports: Option<Vec<PortRef>>,
    /// The queue of each port (default: the lossless queues that run RED; with no PFC, the RED queues).
    pub queue: Option<u32>,
}

fn d_interval() -> Dur {
    Dur(500 * US)
}
fn d_history() -> usize {
    3
}
fn d_hidden() -> Vec<usize> {
    vec![20, 40, 40, 20]
}
fn d_gamma() -> f64 {
    0.9
}
fn d_n_step() -> usize {
    1
}
fn d_batch() -> usize {
    32
}
fn d_replay() -> usize {
    10_000
}
fn d_global_replay() -> usize {
    100_000
}
fn d_target_sync() -> u64 {
    500
}
fn d_clip() -> f64 {
    10.0
}
fn d_huber_delta() -> f64 {
    1.0
}
fn d_upload_every() -> u64 {
    20
}
fn d_sync_period() -> Dur {
    Dur(100 * MS)
}
fn d_sync_batches() -> usize {
    100
}
fn d_half() -> f64 {
    0.5
}
fn d_state_scale() -> Bytes {
    Bytes(Size::Bytes(10_000_000))
}
fn d_reward_scale() -> Bytes {
    Bytes(Size::Bytes(1_000_000))
}

/// Features per sample: qlen, txRate, txRate_m, Kmin, Kmax, Pmax.
pub const FEATURES: usize = 6;

/// The keys resolved to engine units, every default filled in.
#[derive(Clone, Debug)]
pub struct Params {
    pub interval: Time,
    pub history: usize,
    pub grid: Grid,
    pub head: Head,
    /// `[inputs, hidden…, outputs]`.
    pub sizes: Vec<usize>,
    pub training: Training,
    pub hyper: Hyper,
    pub replay: usize,
    pub global_replay: usize,
    pub warmup: usize,
    pub train_every: u64,
    pub eps: (f64, f64, u64),
    pub upload_every: u64,
    pub sync_period: Time,
    pub sync_batches: usize,
    pub w: (f64, f64, f64),
    pub state_qlen_scale: u64,
    pub reward_qlen_scale: u64,
    pub mode: Mode,
    /// `mode = "centralized"`: settings per port group.
    pub group_settings: usize,
}

impl Params {
    /// ε after `n` decisions: linear from start to end over the decay, then flat.
    pub fn epsilon(&self, n: u64) -> f64 {
        let (a, b, d) = self.eps;
        if d == 0 || n >= d {
            b
        } else {
            b + (a - b) * (1.0 - n as f64 / d as f64)
        }
    }
}

/// Metadata for the run's summary (acc.md §9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub agents: usize,
    /// Parameters of one network.
    pub params: usize,
    /// Bytes of one model (f32 parameters); an agent that learns holds two (online and target).
    pub model_bytes: usize,
    /// Floating-point operations of one decision (one forward pass).
    pub flops_per_decision: u64,
    pub transitions_stored: u64,
    pub transitions_shared: u64,
}

impl Cfg {
    /// Check every key and fill in the defaults; errors name `{field}.<key>`.
    pub fn resolve(&self, field: &str, mtu: u64) -> Result<Params, ConfigError> {
        let err = |k: &str, m: String| ConfigError::new(format!("{field}.{k}"), m);
        if self.mode == Mode::Centralized {
            central::refuse_distributed_keys(self, field)?;
        } else if self.group_settings.is_some() {
            return Err(err("group_settings", "only mode = \"centralized\" samples settings per port group: remove it, or set mode".into()));
        }
        let interval = self.interval.0;
        if interval == 0 {
            return Err(err("interval", "must be positive, e.g. \"500us\"".into()));
        }
        if !(1..=64).contains(&self.history) {
            return Err(err("history", format!("{} samples: give 1 to 64 (default 3)", self.history)));
        }
        let levels = match &self.levels {
            None => grid::LEVELS.to_vec(),
            Some(v) => {
                if let Some(k) = v.iter().position(|b| b.0 == Size::Inf) {
                    return Err(err(&format!("levels[{k}]"), "a threshold must be finite".into()));
                }
                v.iter().map(|b| b.0.bytes(mtu)).collect()
            }
        };
        let pmax = self.pmax_levels.clone().unwrap_or_else(grid::default_pmax);
        let grid = Grid::new(levels, pmax).map_err(|(k, m)| err(k, m))?;
        if grid.len() > u32::MAX as usize {
            return Err(err("levels", "too many settings".into()));
        }
        // A grid smaller than the default menu is sampled whole.
        let group_settings = self.group_settings.unwrap_or(central::GROUP_SETTINGS.min(grid.len()));
        if group_settings == 0 || group_settings > grid.len() {
            return Err(err("group_settings", format!("{group_settings}: give 1 to {} (the grid's settings; default 8)", grid.len())));
        }
        let head = match self.head {
            HeadKind::Full => Head::Full { actions: grid.len() },
            HeadKind::Branching => Head::Branching { grid: grid.clone(), swap: self.branching_greedy == BranchingGreedy::Swap },
        };
        if self.branching_greedy != BranchingGreedy::BestValid && self.head != HeadKind::Branching {
            return Err(err("branching_greedy", "only head = \"branching\" has three heads to read: remove it, or set head".into()));
        }
        if self.hidden.len() > 16 || self.hidden.iter().any(|&h| h == 0 || h > 4096) {
            return Err(err("hidden", "give up to 16 layer widths, each 1 to 4096 (default [20, 40, 40, 20])".into()));
        }
        let mut sizes = vec![FEATURES * self.history];
        sizes.extend(&self.hidden);
        sizes.push(head.outputs());
        let scratch = self.training == Training::FromScratch;
        let unit = |k: &str, v: f64, lo_open: bool, hi: f64| {
            let ok = v.is_finite() && (if lo_open { v > 0.0 } else { v >= 0.0 }) && v <= hi;
            if ok {
                Ok(())
            } else {
                let lo = if lo_open { "(0" } else { "[0" };
                Err(err(k, format!("{v} is out of range: give a number in {lo}, {hi}]")))
            }
        };
        if !(self.gamma >= 0.0 && self.gamma < 1.0) {
            return Err(err("gamma", format!("{} is out of range: the discount must be in [0, 1)", self.gamma)));
        }
        if !(1..=64).contains(&self.n_step) {
            return Err(err("n_step", format!("{}: give 1 to 64 intervals (default 1)", self.n_step)));
        }
        if self.n_step != 1 && self.mode == Mode::Centralized {
            return Err(err("n_step", "n-step returns are for the distributed agents; the centralized agent learns one-step (remove it)".into()));
        }
        let lr = self.lr.unwrap_or(if scratch { 1e-3 } else { 1e-4 });
        unit("lr", lr, true, 1.0)?;
        unit("clip", self.clip, true, f64::MAX)?;
        unit("huber_delta", self.huber_delta, true, f64::MAX)?;
        let global_replay = self.global_replay.unwrap_or_else(d_global_replay);
        let sync_batches = self.sync_batches.unwrap_or_else(d_sync_batches);
        let upload_every = self.upload_every.unwrap_or_else(d_upload_every);
        let sync_period = self.sync_period.unwrap_or_else(d_sync_period).0;
        for (k, v) in [("batch", self.batch), ("replay", self.replay), ("global_replay", global_replay), ("sync_batches", sync_batches)] {
            if v == 0 {
                return Err(err(k, "must be at least 1".into()));
            }
        }
        if self.training == Training::Central && self.train_every.is_some() {
            return Err(err("train_every", "training = \"central\" agents take no steps of their own: remove it, or use training = \"shared\"".into()));
        }
        if self.training == Training::Central && self.mode == Mode::Centralized {
            return Err(err("training", "\"central\" splits learning from the distributed agents; the centralized agent learns itself: use \"shared\"".into()));
        }
        // `central`: never the agents' turn (a decision count never reaches a multiple of u64::MAX).
        let train_every = self.train_every.unwrap_or(match (scratch, self.training) {
            (_, Training::Central) => u64::MAX,
            (true, _) => 1,
            _ => 4,
        });
        for (k, v) in [("train_every", train_every), ("target_sync", self.target_sync), ("upload_every", upload_every)] {
            if v == 0 {
                return Err(err(k, "must be at least 1".into()));
            }
        }
        if sync_period == 0 {
            return Err(err("sync_period", "must be positive, e.g. \"100ms\"".into()));
        }
        let (e0, e1, ed) = match self.training {
            Training::FromScratch => (1.0, 0.05, 2000),
            Training::None => (0.0, 0.0, 0),
            _ => (0.01, 0.01, 0),
        };
        let eps = (self.epsilon_start.unwrap_or(e0), self.epsilon_end.unwrap_or(e1), self.epsilon_decisions.unwrap_or(ed));
        unit("epsilon_start", eps.0, false, 1.0)?;
        unit("epsilon_end", eps.1, false, 1.0)?;
        for (k, v) in [("w1", self.w1), ("w2", self.w2), ("w3", self.w3)] {
            if !v.is_finite() {
                return Err(err(k, "must be a finite number".into()));
            }
        }
        let scale = |k: &str, b: Bytes| match b.0 {
            Size::Inf => Err(err(k, "must be a finite size, e.g. \"1MB\"".into())),
            s if s.bytes(mtu) == 0 => Err(err(k, "must be positive".into())),
            s => Ok(s.bytes(mtu)),
        };
        let central_learner = matches!(self.training, Training::Shared | Training::Central | Training::FromScratch);
        for (k, given) in [("train_state", self.train_state.is_some()), ("save_train_state", self.save_train_state.is_some())] {
            if given && !central_learner {
                return Err(err(k, "only `shared`, `central` and `from_scratch` have a central learner whose state it holds: set training, or remove the key".into()));
            }
        }
        if self.model.is_some() && scratch {
            return Err(err("model", "from_scratch starts from random weights: remove `model`, or use training = \"shared\"".into()));
        }
        Ok(Params {
            interval,
            history: self.history,
            grid,
            head,
            sizes,
            training: self.training,
            hyper: Hyper {
                gamma: self.gamma as f32,
                lr: lr as f32,
                batch: self.batch,
                clip: self.clip as f32,
                huber_delta: self.huber_delta as f32,
                target_sync: self.target_sync,
                n_step: self.n_step,
            },
            replay: self.replay,
            global_replay,
            warmup: self.warmup.unwrap_or(if scratch { self.batch } else { 0 }),
            train_every,
            eps,
            upload_every,
            sync_period,
            sync_batches,
            w: (self.w1, self.w2, self.w3),
            state_qlen_scale: scale("state_qlen_scale", self.state_qlen_scale)?,
            reward_qlen_scale: scale("reward_qlen_scale", self.reward_qlen_scale)?,
            mode: self.mode,
            group_settings,
        })
    }

    /// The queues the agents own: `queue` of the chosen ports, or by default every lossless queue (PFC
    /// priority) that runs RED — with no PFC, every RED queue. Each must run RED.
    fn owned(&self, field: &str, net: &Net, names: &[String]) -> Result<Vec<Owned>, ConfigError> {
        let Some(&first) = net.switch_ports().first() else {
            return Err(ConfigError::new(field, "the topology has no switch port for an agent"));
        };
        let kind_of = |q: u32| net.ports[first as usize].queues.get(q as usize).map(|x| x.aqm.kind());
        let nq = net.ports[first as usize].queues.len() as u32;
        let lossless = |q: u32| net.pfc.as_ref().is_none_or(|p| p.lossless & (1 << q) != 0);
        let queues: Vec<u32> = match self.queue {
            Some(q) => vec![q],
            None => {
                let v: Vec<u32> = (0..nq).filter(|&q| lossless(q) && kind_of(q) == Some("red")).collect();
                if v.is_empty() {
                    let which = if net.pfc.is_some() { "lossless queue (switch.pfc.priorities)" } else { "queue" };
                    return Err(ConfigError::new(
                        "switch.aqm.kind",
                        format!("ACC tunes RED and no {which} runs it: give that class aqm kind = \"red\" (or name the queue with {field}.queue)"),
                    ));
                }
                v
            }
        };
        let mut owned = Vec::new();
        for q in queues {
            owned.extend(super::owned_queues(net, names, &self.ports, Some(q), field)?);
        }
        for o in &owned {
            let have = net.ports[o.port as usize].queues[o.queue as usize].aqm.kind();
            if have != "red" {
                return Err(ConfigError::new(
                    "switch.aqm.kind",
                    format!("ACC tunes RED (kmin, kmax, pmax) but queue {} runs `{have}`: use kind = \"red\" for it", o.queue),
                ));
            }
        }
        Ok(owned)
    }
}

impl super::ControlCfg for Cfg {
    type Ctl = Acc;

    /// One controller holding every agent (they tick together; `shared` training needs them in one place).
    fn instances(&self, field: &str, net: &Net, names: &[String]) -> Result<Vec<(Acc, Vec<Owned>)>, ConfigError> {
        let mut p = self.resolve(field, net.mtu as u64)?;
        let owned = self.owned(field, net, names)?;
        // C-ACC: the port groups come from the topology; the network's input and head follow from them.
        let layout = match p.mode {
            Mode::Distributed => None,
            Mode::Centralized => Some(central::Layout::of(net, names, &owned, &p, field)?),
        };
        if let Some(l) = &layout {
            let joint = l.joint_actions(p.group_settings);
            p.sizes = vec![2 * FEATURES * l.names.len() * p.history];
            p.sizes.extend(&self.hidden);
            p.sizes.push(joint);
            p.head = Head::Full { actions: joint };
        }
        let init = match &self.model {
            None => None,
            Some(path) => Some(model::load(path, &p).map_err(|m| ConfigError::new(format!("{field}.model"), m))?),
        };
        // Each agent keeps the queue's own RED options (averaging, mark point, non-ECT handling).
        let templates = owned
            .iter()
            .map(|o| {
                let q = &net.ports[o.port as usize].queues[o.queue as usize];
                let Aqm::Red(r) = &q.aqm else { unreachable!("checked in owned()") };
                agent::Template { weight: r.params.weight, at_dequeue: r.params.at_dequeue, non_ect_drop: q.non_ect_drop }
            })
            .collect();
        if let Some(path) = &self.save_model {
            let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                return Err(ConfigError::new(format!("{field}.save_model"), format!("the folder of `{path}` does not exist; create it or name another path")));
            }
        }
        if let Some(path) = &self.save_train_state {
            let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                return Err(ConfigError::new(format!("{field}.save_train_state"), format!("the folder of `{path}` does not exist; create it or name another path")));
            }
        }
        let resume = match &self.train_state {
            None => None,
            Some(path) => Some(
                train_state::load(path, nn::n_params(&p.sizes), p.sizes[0], p.global_replay)
                    .map_err(|m| ConfigError::new(format!("{field}.train_state"), m))?,
            ),
        };
        let mut acc = Acc::new(p, init, templates);
        acc.save_to = self.save_model.clone();
        acc.resume = resume;
        acc.save_state_to = self.save_train_state.clone();
        if let Some(l) = layout {
            acc.make_central(l);
        }
        Ok(vec![(acc, owned)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &str) -> Result<Params, ConfigError> {
        let c: Cfg = toml::from_str(extra).map_err(|e| ConfigError::new("parse", e.to_string()))?;
        c.resolve("switch.controller", 1500)
    }

    #[test]
    fn defaults_follow_acc_md() {
        let p = cfg("").unwrap();
        assert_eq!(p.interval, 500 * US);
        assert_eq!(p.sizes, vec![18, 20, 40, 40, 20, 1100]);
        assert_eq!(p.training, Training::Shared);
        assert_eq!((p.hyper.gamma, p.hyper.lr, p.hyper.batch, p.hyper.target_sync), (0.9, 1e-4, 32, 500));
        assert_eq!((p.hyper.n_step, p.hyper.bootstrap()), (1, 0.9));
        assert_eq!((p.train_every, p.warmup, p.replay, p.global_replay), (4, 0, 10_000, 100_000));
        assert_eq!((p.upload_every, p.sync_period, p.sync_batches), (20, 100 * MS, 100));
        assert_eq!(p.epsilon(0), 0.01);
        let s = cfg("training = \"from_scratch\"").unwrap();
        assert_eq!((s.hyper.lr, s.train_every, s.warmup), (1e-3, 1, 32));
        assert_eq!((s.epsilon(0), s.epsilon(1000), s.epsilon(2000), s.epsilon(9999)), (1.0, 0.525, 0.05, 0.05));
        let c = cfg("mode = \"centralized\"").unwrap();
        assert_eq!((c.mode, c.group_settings), (Mode::Centralized, 8));
        let b = cfg("head = \"branching\"\nhistory = 2").unwrap();
        assert_eq!(b.sizes, vec![12, 20, 40, 40, 20, 40]);
    }

    #[test]
    fn bad_keys_name_the_field() {
        let field = |t: &str| cfg(t).unwrap_err().field;
        assert_eq!(field("gamma = 1.0"), "switch.controller.gamma");
        assert_eq!(field("lr = 0.0"), "switch.controller.lr");
        assert_eq!(field("interval = \"0us\""), "switch.controller.interval");
        assert_eq!(field("history = 0"), "switch.controller.history");
        assert_eq!(field("levels = [\"40KB\", \"20KB\"]"), "switch.controller.levels");
        assert_eq!(field("levels = [\"20KB\", \"inf\"]"), "switch.controller.levels[1]");
        assert_eq!(field("pmax_levels = [0.5, 2.0]"), "switch.controller.pmax_levels");
        assert_eq!(field("epsilon_start = 1.5"), "switch.controller.epsilon_start");
        assert_eq!(field("hidden = [20, 0]"), "switch.controller.hidden");
        assert_eq!(field("mode = \"centralized\"\nsync_period = \"10ms\""), "switch.controller.sync_period");
        assert_eq!(field("mode = \"centralized\"\nhead = \"branching\""), "switch.controller.head");
        assert_eq!(field("mode = \"centralized\"\nmodel = \"m.bin\""), "switch.controller.model");
        assert_eq!(field("mode = \"centralized\"\ngroup_settings = 0"), "switch.controller.group_settings");
        assert_eq!(field("group_settings = 8"), "switch.controller.group_settings");
        assert_eq!(field("training = \"from_scratch\"\nmodel = \"m.bin\""), "switch.controller.model");
        assert_eq!(field("reward_qlen_scale = \"0B\""), "switch.controller.reward_qlen_scale");
        assert_eq!(field("batch = 0"), "switch.controller.batch");
        assert_eq!(field("n_step = 0"), "switch.controller.n_step");
        assert_eq!(field("branching_greedy = \"swap\""), "switch.controller.branching_greedy");
        assert_eq!(field("mode = \"centralized\"\nn_step = 3"), "switch.controller.n_step");
        assert_eq!(field("training = \"none\"\ntrain_state = \"s.bin\""), "switch.controller.train_state");
        assert_eq!(field("training = \"local\"\nsave_train_state = \"s.bin\""), "switch.controller.save_train_state");
        assert_eq!(field("mode = \"centralized\"\nsave_train_state = \"s.bin\""), "switch.controller.save_train_state");
        assert_eq!(field("training = \"central\"\ntrain_every = 4"), "switch.controller.train_every");
        assert_eq!(field("mode = \"centralized\"\ntraining = \"central\""), "switch.controller.training");
    }

    #[test]
    fn central_agents_never_train_themselves() {
        // `central`: the agents' turn never comes (decisions % train_every == 0 only at u64::MAX); the central
        // learner is there (it may resume a training state); `shared` keeps the agents' steps every 4.
        let c = cfg("training = \"central\"").unwrap();
        assert_eq!((c.training, c.train_every, c.hyper.lr), (Training::Central, u64::MAX, 1e-4));
        assert!((1..100_000u64).all(|d| d % c.train_every != 0));
        assert!(cfg("training = \"central\"\ntrain_state = \"s.bin\"").is_ok());
        assert_eq!(cfg("training = \"shared\"").unwrap().train_every, 4);
    }
}
