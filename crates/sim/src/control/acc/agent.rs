//! The ACC controller at its ticks: per agent, observe (§2), reward the previous action (§4), store the
//! transition, act ε-greedily (§3, §5), train (§5, §6); then, in `shared`/`from_scratch`, the central
//! model's turn (§6).

use super::ddqn::{Head, Learner};
use super::nn::{flops, n_params, Acts, Mlp, F};
use super::replay::{NStep, Replay, Transition};
use super::central::{CentralAgent, Layout};
use super::{Meta, Params, Training, FEATURES};
use crate::aqm::{red, Aqm, AqmCfg, MarkAt, NonEct};
use crate::control::{Control, Tick};
use crate::net::port::QueueCounters;
use crate::rng::{self, Rng};
use crate::units::{Bytes, Size, Time, SEC};
use rand::RngCore;

/// The RED options of a queue that the agent keeps while it changes Kmin, Kmax and Pmax.
#[derive(Clone, Copy, Debug)]
pub struct Template {
    pub weight: Option<f64>,
    pub at_dequeue: bool,
    pub non_ect_drop: bool,
}

/// What one agent saw and did at its last decision (for inspection; see the report on records).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Step {
    pub features: [F; FEATURES],
    /// Reward of the previous action (none at the first decision).
    pub reward: Option<F>,
    pub epsilon: F,
    pub action: usize,
    pub explored: bool,
    /// Loss of the training step taken at this decision, if one was.
    pub loss: Option<F>,
}

pub struct Agent {
    template: Template,
    rng: Rng,
    /// The last `history` samples, oldest first (flat).
    state: Vec<F>,
    /// Whether the newest sample showed an idle queue (no bytes sent, none queued).
    idle: bool,
    prev_action: Option<usize>,
    learner: Option<Learner>,
    mem: Option<Replay>,
    /// `n_step`: the transitions waiting for their n-step return.
    nstep: NStep,
    /// Transitions stored since the last upload.
    fresh: usize,
    pub decisions: u64,
    pub last: Step,
}

impl Agent {
    /// The agent's online network (`None` with `training = "none"`: it uses the controller's).
    pub fn network(&self) -> Option<&Mlp> {
        self.learner.as_ref().map(|l| &l.online)
    }
}

/// The central model of `shared` and `from_scratch`.
struct Central {
    learner: Learner,
    mem: Replay,
    rng: Rng,
    next_sync: Time,
    /// Training steps taken and the sum of their losses (`meta.controller`).
    steps: u64,
    loss_sum: f64,
}

pub struct Acc {
    pub p: Params,
    /// The starting model (a file's, or He-uniform from the seed at the first tick).
    init: Option<Mlp>,
    templates: Vec<Template>,
    /// Built at the first tick (the seed comes with it).
    pub agents: Vec<Agent>,
    central: Option<Central>,
    /// `training = "none"`: the one frozen network every agent uses.
    frozen: Option<Mlp>,
    acts: Acts,
    idx: Vec<usize>,
    pub transitions_shared: u64,
    /// `save_model`: where the learnt model goes when the run ends.
    pub save_to: Option<String>,
    /// `train_state`: the central learner's state and memory to resume from (used at the first tick).
    pub resume: Option<super::train_state::TrainState>,
    /// `save_train_state`: where the central learner's state goes when the run ends.
    pub save_state_to: Option<String>,
    /// Decisions made by the host program (`dcnlab.rl`) instead of the agents' networks.
    external: Option<External>,
    /// `mode = "centralized"`: the one agent that decides for every queue (no per-queue agents then).
    pub central_agent: Option<CentralAgent>,
}

/// The host program decides: at each tick every agent observes and the run pauses (`awaiting`) until
/// `act_external` applies the host's actions at the same instant.
#[derive(Default)]
struct External {
    /// The steps observed at the tick awaiting its actions (`None`: a queue that no longer runs RED).
    steps: Vec<Option<Step>>,
    pending: bool,
}

/// Raw per-interval quantities behind the features and the reward.
pub(super) struct Sample {
    pub(super) features: [F; FEATURES],
    qlen: u64,
    util: f64,
    paused: f64,
}

impl Acc {
    pub fn new(p: Params, init: Option<Mlp>, templates: Vec<Template>) -> Acc {
        let (agents, central, frozen, acts, idx) = (Vec::new(), None, None, Acts::default(), Vec::new());
        Acc { p, init, templates, agents, central, frozen, acts, idx, transitions_shared: 0, save_to: None, resume: None, save_state_to: None, external: None, central_agent: None }
    }

    /// Decide through one centralized agent over these port groups (`central.rs`) instead of one agent
    /// per queue; `p.sizes` and `p.head` must already be the central network's.
    pub fn make_central(&mut self, layout: Layout) {
        self.central_agent = Some(CentralAgent::new(layout));
    }

    /// Let the host program make every decision (`dcnlab.rl`): the agents observe and are rewarded as
    /// ever, but choose nothing and learn nothing. Refused for a controller that learns during the run.
    pub fn make_external(&mut self) -> Result<(), String> {
        if self.central_agent.is_some() {
            return Err("the environment drives the distributed agents; use mode = \"distributed\"".into());
        }
        if self.p.training != Training::None {
            return Err("the agents would learn beside the host program's decisions; set `training = \"none\"`".into());
        }
        self.external = Some(External::default());
        Ok(())
    }

    /// At a tick awaiting the host's actions: each agent's state (`history` samples, oldest first;
    /// flat, agent by agent) and the reward of its previous action (NaN before its first).
    pub fn external_view(&self) -> Option<(Vec<F>, Vec<F>)> {
        let ex = self.external.as_ref().filter(|e| e.pending)?;
        let states = self.agents.iter().flat_map(|a| a.state.iter().copied()).collect();
        let rewards = ex.steps.iter().map(|s| s.and_then(|s| s.reward).unwrap_or(F::NAN)).collect();
        Some((states, rewards))
    }

    /// The host's actions for the tick awaiting them, one per agent: a grid index, or −1 to keep the
    /// agent's previous setting (the scenario's own before its first action).
    pub fn act_external(&mut self, tick: &mut Tick, actions: &[i64]) -> Result<(), String> {
        let n = self.p.grid.len();
        let ex = self.external.as_mut().filter(|e| e.pending).ok_or("no decision is awaited")?;
        if actions.len() != ex.steps.len() {
            return Err(format!("{} actions for {} agents", actions.len(), ex.steps.len()));
        }
        if let Some((i, a)) = actions.iter().enumerate().find(|(_, &a)| a < -1 || a >= n as i64) {
            return Err(format!("action {a} of agent {i} is outside 0..{n} (or −1 to keep the setting)"));
        }
        ex.pending = false;
        let steps = std::mem::take(&mut ex.steps);
        for (i, (step, &a)) in steps.into_iter().zip(actions).enumerate() {
            let chosen = if a >= 0 { Some(a as usize) } else { self.agents[i].prev_action };
            if let (Some(step), Some(a)) = (step, chosen) {
                self.act(i, a, step, tick);
            }
        }
        Ok(())
    }

    /// Parameter count, model size and cost per decision (acc.md §9).
    pub fn meta(&self) -> Meta {
        let s = &self.p.sizes;
        if let Some(c) = &self.central_agent {
            return Meta {
                agents: 1,
                params: n_params(s),
                model_bytes: 4 * n_params(s),
                flops_per_decision: flops(s),
                transitions_stored: c.stored(),
                transitions_shared: 0,
            };
        }
        Meta {
            agents: self.templates.len(),
            params: n_params(s),
            model_bytes: 4 * n_params(s),
            flops_per_decision: flops(s),
            transitions_stored: self.agents.iter().filter_map(|a| a.mem.as_ref()).map(|m| m.pushed).sum(),
            transitions_shared: self.transitions_shared,
        }
    }

    /// The model the run has learnt: the central one (`shared`, `from_scratch`), else agent `agent`'s
    /// online network (`local`), else the frozen one. `None` before the first tick.
    pub fn model(&self, agent: usize) -> Option<&Mlp> {
        if let Some(c) = &self.central_agent {
            return c.network();
        }
        if let Some(c) = &self.central {
            return Some(&c.learner.online);
        }
        if let Some(m) = &self.frozen {
            return Some(m);
        }
        self.agents.get(agent).and_then(|a| a.learner.as_ref()).map(|l| &l.online)
    }

    /// Write `model(agent)` to `path` (see `model.rs`).
    pub fn save_model(&self, path: &str, agent: usize) -> Result<(), String> {
        let m = self.model(agent).ok_or("no model yet: the agents start at their first tick")?;
        super::model::save(path, m, &self.p)
    }

    /// Build the agents and networks (at the first tick: the seed comes with the tick).
    fn start(&mut self, seed: u64) {
        let p = &self.p;
        let init = self.init.take().unwrap_or_else(|| Mlp::he_uniform(&p.sizes, &mut rng::stream(seed, "acc", 0)));
        let learns = p.training != Training::None;
        let dim = p.sizes[0];
        self.agents = (0..self.templates.len())
            .map(|i| Agent {
                template: self.templates[i],
                rng: rng::stream(seed, "acc_agent", i as u64),
                state: vec![0.0; dim],
                idle: true,
                prev_action: None,
                learner: learns.then(|| Learner::new(init.clone(), p.hyper.lr)),
                mem: learns.then(|| Replay::new(dim, p.replay)),
                nstep: NStep::new(p.hyper.n_step, p.hyper.gamma),
                fresh: 0,
                decisions: 0,
                last: Step::default(),
            })
            .collect();
        if matches!(p.training, Training::Shared | Training::Central | Training::FromScratch) {
            let mut learner = Learner::new(init.clone(), p.hyper.lr);
            let mem = match self.resume.take() {
                Some(st) => st.restore(&mut learner),
                None => Replay::new(dim, p.global_replay),
            };
            self.central = Some(Central {
                learner,
                mem,
                rng: rng::stream(seed, "acc", 1),
                next_sync: p.sync_period,
                steps: 0,
                loss_sum: 0.0,
            });
        }
        if !learns {
            self.frozen = Some(init);
        }
    }

    pub(super) fn red_cfg(t: &Template, a: usize, p: &Params) -> AqmCfg {
        let s = p.grid.setting(a);
        AqmCfg::Red(red::Cfg {
            kmin: Bytes(Size::Bytes(s.kmin)),
            kmax: Bytes(Size::Bytes(s.kmax)),
            pmax: s.pmax,
            average: t.weight,
            non_ect: Some(if t.non_ect_drop { NonEct::Drop } else { NonEct::Pass }),
            mark_at: if t.at_dequeue { MarkAt::Dequeue } else { MarkAt::Enqueue },
        })
    }
}

impl Params {
    /// The six features of a queue over the interval just ended (acc.md §2) and the raw values the
    /// reward uses.
    pub(super) fn observe(&self, c: &QueueCounters, qlen: u64, rate: u64, red: &red::Params) -> Sample {
        let p = self;
        let dt = p.interval as f64 / SEC as f64;
        let log_scale = |q: u64, top: u64| libm::log2(1.0 + q as f64 / 1000.0) / libm::log2(1.0 + top as f64 / 1000.0);
        let util = c.tx_bytes as f64 * 8.0 / dt / rate as f64;
        let marked = c.marked_bytes as f64 * 8.0 / dt / rate as f64;
        let top = (p.grid.levels.len() - 1).max(1) as f64;
        let features = [
            log_scale(qlen, p.state_qlen_scale) as F,
            util as F,
            marked as F,
            (p.grid.level_position(red.kmin) / top) as F,
            (p.grid.level_position(red.kmax) / top) as F,
            red.pmax as F,
        ];
        Sample { features, qlen, util, paused: c.paused_ps as f64 / p.interval as f64 }
    }

    /// r = w1·T + w2·D − w3·paused, T = min(1, utilisation), D = max(0, 1 − log2(1 + q/1KB)/log2(1 +
    /// scale/1KB)) (acc.md §4), from the sample at the end of the interval the action governed.
    pub(super) fn reward(&self, s: &Sample) -> F {
        let (w1, w2, w3) = self.w;
        let t = s.util.min(1.0);
        let d = (1.0 - libm::log2(1.0 + s.qlen as f64 / 1000.0) / libm::log2(1.0 + self.reward_qlen_scale as f64 / 1000.0)).max(0.0);
        (w1 * t + w2 * d - w3 * s.paused.min(1.0)) as F
    }
}

impl Acc {

    /// One agent's decision at a tick: observe, choose ε-greedily, act.
    fn decide(&mut self, i: usize, tick: &mut Tick) {
        let Some(step) = self.observe_queue(i, tick) else { return };
        // ε-greedy: one uniform draw per decision whatever the outcome, so the stream's use does not
        // depend on the network.
        let p = &self.p;
        let ag = &mut self.agents[i];
        let eps = p.epsilon(ag.decisions);
        let explore = rng::unit(&mut ag.rng) < eps;
        let n_actions = p.grid.len();
        let a = if explore {
            ((ag.rng.next_u64() as u128 * n_actions as u128) >> 64) as usize
        } else {
            let q = match (&mut ag.learner, &self.frozen) {
                (Some(l), _) => l.q_values(&ag.state),
                (None, Some(m)) => {
                    m.forward(&ag.state, &mut self.acts);
                    self.acts.out()
                }
                (None, None) => unreachable!("an agent has a network"),
            };
            p.head.greedy(q)
        };
        self.act(i, a, Step { epsilon: eps as F, explored: explore, ..step }, tick);
    }

    /// Agent `i` at a tick, before it acts: the sample of the interval just ended becomes the newest part
    /// of its state (s_{t+1}), the previous action gets its reward, and the transition goes to memory.
    /// `None` for a queue that no longer runs RED.
    fn observe_queue(&mut self, i: usize, tick: &mut Tick) -> Option<Step> {
        let c = tick.counters(i);
        let (qlen, rate) = tick.queue_bytes(i);
        let Aqm::Red(red) = tick.aqm(i) else { return None };
        let sample = self.p.observe(&c, qlen, rate, &red.params);
        let reward = self.p.reward(&sample);
        let p = &self.p;
        let k = FEATURES;
        let ag = &mut self.agents[i];
        let idle_now = c.tx_bytes == 0 && qlen == 0;
        let mut step = Step { features: sample.features, ..Step::default() };
        // s_{t+1}: drop the oldest sample, append this one (the first fills the whole history).
        let s_prev = ag.state.clone();
        if ag.prev_action.is_none() {
            for h in 0..p.history {
                ag.state[h * k..(h + 1) * k].copy_from_slice(&sample.features);
            }
        } else {
            ag.state.copy_within(k.., 0);
            let n = ag.state.len();
            ag.state[n - k..].copy_from_slice(&sample.features);
        }
        if let Some(a) = ag.prev_action {
            step.reward = Some(reward);
            // An idle queue before and after carries no signal: not stored (acc.md §5), and with n-step
            // returns it breaks the sequence.
            if let Some(mem) = ag.mem.as_mut() {
                if ag.idle && idle_now {
                    ag.nstep.clear();
                } else if ag.nstep.push(Transition { s: &s_prev, a, r: reward, s2: &ag.state }, mem) {
                    ag.fresh += 1;
                }
            }
        }
        ag.idle = idle_now;
        Some(step)
    }

    /// Agent `i` applies grid setting `a` at once, trains locally if it is its turn, and logs the step.
    fn act(&mut self, i: usize, a: usize, mut step: Step, tick: &mut Tick) {
        let p = &self.p;
        let ag = &mut self.agents[i];
        tick.set_aqm(i, &Self::red_cfg(&ag.template, a, p)).expect("ACC sets RED on a RED queue");
        ag.prev_action = Some(a);
        ag.decisions += 1;
        step.action = a;
        // Train locally every `train_every` decisions once the memory holds `warmup` transitions.
        if let (Some(l), Some(mem)) = (ag.learner.as_mut(), ag.mem.as_ref()) {
            if ag.decisions % p.train_every == 0 && mem.len() >= p.warmup.max(1) {
                mem.sample(&mut ag.rng, p.hyper.batch, &mut self.idx);
                step.loss = Some(l.train(mem, &self.idx, &p.head, &p.hyper));
            }
        }
        if let Some(row) = tick.last_step() {
            row.reward = step.reward.map_or(f64::NAN, |r| r as f64);
            row.epsilon = step.epsilon as f64;
            row.loss = step.loss.map_or(f64::NAN, |l| l as f64);
            let newest = &ag.state[ag.state.len() - FEATURES..];
            row.features = newest.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(" ");
        }
        ag.last = step;
    }

    /// `shared`/`from_scratch`: uploads every U decisions, central training and the push every P.
    fn share(&mut self, now: Time) {
        let Some(c) = self.central.as_mut() else { return };
        let p = &self.p;
        for ag in self.agents.iter_mut() {
            if ag.decisions % p.upload_every == 0 && ag.fresh > 0 {
                let mem = ag.mem.as_ref().expect("a learning agent has a memory");
                for t in mem.newest(ag.fresh) {
                    c.mem.push(t);
                    self.transitions_shared += 1;
                }
                ag.fresh = 0;
            }
        }
        if now < c.next_sync {
            return;
        }
        while c.next_sync <= now {
            c.next_sync += p.sync_period;
        }
        if c.mem.len() < p.warmup.max(1) {
            return;
        }
        for _ in 0..p.sync_batches {
            c.mem.sample(&mut c.rng, p.hyper.batch, &mut self.idx);
            c.loss_sum += c.learner.train(&c.mem, &self.idx, &p.head, &p.hyper) as f64;
            c.steps += 1;
        }
        for ag in self.agents.iter_mut() {
            ag.learner.as_mut().expect("a learning agent").set_weights(&c.learner.online);
        }
    }

    /// The head, for callers that evaluate a model (`model()`) themselves.
    pub fn head(&self) -> &Head {
        &self.p.head
    }
}

impl Control for Acc {
    fn next_tick(&self, now: Option<Time>) -> Option<Time> {
        Some(now.unwrap_or(0) + self.p.interval)
    }

    fn on_tick(&mut self, tick: &mut Tick) {
        if let Some(c) = self.central_agent.as_mut() {
            c.on_tick(&self.p, &self.templates, tick);
            return;
        }
        if self.agents.is_empty() && !self.templates.is_empty() {
            self.start(tick.seed());
        }
        if self.external.is_some() {
            let steps = (0..tick.len()).map(|i| self.observe_queue(i, tick)).collect();
            self.external = Some(External { steps, pending: true });
            return;
        }
        for i in 0..tick.len() {
            self.decide(i, tick);
        }
        self.share(tick.now);
    }

    fn awaiting(&self) -> bool {
        self.external.as_ref().is_some_and(|e| e.pending)
    }

    /// `save_model`: the learnt model to its file.
    fn on_end(&mut self) -> Result<(), String> {
        if let Some(path) = &self.save_to {
            self.save_model(path, 0).map_err(|e| format!("save_model `{path}`: {e}"))?;
        }
        if let Some(path) = &self.save_state_to {
            let c = self.central.as_ref().ok_or("save_train_state: no central learner yet (the agents start at their first tick)")?;
            super::train_state::save(path, &c.learner, &c.mem).map_err(|e| format!("save_train_state `{path}`: {e}"))?;
        }
        Ok(())
    }

    fn report(&self) -> Vec<(&'static str, f64)> {
        let m = self.meta();
        let mut out = vec![
            ("acc_agents", m.agents as f64),
            ("acc_params", m.params as f64),
            ("acc_model_bytes", m.model_bytes as f64),
            ("acc_flops_per_decision", m.flops_per_decision as f64),
            ("acc_transitions_stored", m.transitions_stored as f64),
            ("acc_transitions_shared", m.transitions_shared as f64),
        ];
        if let Some(c) = &self.central_agent {
            out.push(("acc_groups", c.layout.names.len() as f64));
            out.push(("acc_joint_actions", self.p.head.outputs() as f64));
            out.push(("acc_decisions", c.decisions as f64));
            if c.train_steps > 0 {
                out.push(("acc_train_steps", c.train_steps as f64));
                out.push(("acc_train_loss", c.loss_sum / c.train_steps as f64));
            }
        }
        if let Some(c) = self.central.as_ref().filter(|c| c.steps > 0) {
            out.push(("acc_central_steps", c.steps as f64));
            out.push(("acc_central_loss", c.loss_sum / c.steps as f64));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(keys: &str) -> Acc {
        let c: super::super::Cfg = toml::from_str(keys).unwrap();
        Acc::new(c.resolve("switch.controller", 1500).unwrap(), None, vec![])
    }

    fn sample(util: f64, qlen: u64, paused: f64) -> Sample {
        Sample { features: [0.0; FEATURES], qlen, util, paused }
    }

    #[test]
    fn reward_by_hand_on_both_sides_of_its_clamps() {
        let a = acc("");
        // Full link, empty queue: w1·1 + w2·1.
        assert_eq!(a.p.reward(&sample(1.0, 0, 0.0)), 1.0);
        // Utilisation above 1 (a burst drained from the queue) counts as 1.
        assert_eq!(a.p.reward(&sample(1.3, 0, 0.0)), 1.0);
        // At the delay scale (1 MB) D = 0, and beyond it D stays 0 (not negative).
        assert_eq!(a.p.reward(&sample(0.5, 1_000_000, 0.0)), 0.25);
        assert_eq!(a.p.reward(&sample(0.5, 4_000_000, 0.0)), 0.25);
        // Log scale: 31 KB is log2(32)/log2(1001) = 5/9.967 of the way: D ≈ 0.4984 (a linear D: 0.969).
        let d = 1.0 - 5.0 / libm::log2(1001.0);
        assert!((a.p.reward(&sample(0.0, 31_000, 0.0)) as f64 - 0.5 * d).abs() < 1e-7);
        // The PFC penalty: w3 · paused fraction.
        let b = acc("w1 = 1.0\nw2 = 0.0\nw3 = 0.25");
        assert_eq!(b.p.reward(&sample(0.8, 0, 0.5)), 0.8 - 0.125);
    }

    #[test]
    fn features_by_hand() {
        let a = acc("");
        // 25 Gb/s for 500 µs is 1 562 500 bytes: a full interval; a tenth of it marked.
        let c = QueueCounters { tx_bytes: 1_562_500, marked_bytes: 156_250, ..QueueCounters::default() };
        let red = red::Params { kmin: 20_000, kmax: 640_000, pmax: 0.2, weight: None, at_dequeue: false };
        let s = a.p.observe(&c, 10_000_000, 25_000_000_000, &red);
        assert_eq!(s.features, [1.0, 1.0, 0.1, 0.0, 5.0 / 9.0, 0.2]);
        let s = a.p.observe(&QueueCounters::default(), 0, 25_000_000_000, &red);
        assert_eq!(s.features[..3], [0.0, 0.0, 0.0]);
        // 1 KB queued: log2(2)/log2(10 001).
        let s = a.p.observe(&QueueCounters::default(), 1000, 25_000_000_000, &red);
        assert_eq!(s.features[0], (1.0 / libm::log2(10_001.0)) as F);
    }
}
