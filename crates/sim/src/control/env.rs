//! Decisions from the host program (`dcnlab.rl`, a Gymnasium environment): the ACC agents observe and are
//! rewarded at each tick exactly as in a run of their own, the run pauses at the tick, and the host's
//! actions are applied at that same instant before any other event. Simulated time and decisions can
//! therefore never drift apart, and replaying the agents' own choices gives their records bit for bit.

use crate::control::acc::Acc;
use crate::control::Controller;
use crate::sim::Sim;
use crate::units::Time;

/// What the host sees of the agents: their count, the length of each state and the number of actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvShape {
    pub agents: usize,
    pub state_len: usize,
    pub actions: usize,
    /// Δt, the decision interval (ps).
    pub interval: Time,
}

impl Sim {
    fn acc_instance(&self) -> Result<usize, String> {
        let found: Vec<usize> = (0..self.ctl.list.len()).filter(|&i| matches!(self.ctl.list[i].ctl, Controller::Acc(_))).collect();
        match found[..] {
            [i] => Ok(i),
            [] => Err("the scenario has no `switch.controller = { kind = \"acc\", … }`".into()),
            _ => Err("the scenario has more than one ACC controller".into()),
        }
    }

    fn acc(&mut self, i: usize) -> &mut Acc {
        match &mut self.ctl.list[i].ctl {
            Controller::Acc(a) => a,
            _ => unreachable!("acc_instance found an ACC controller"),
        }
    }

    /// Hand the ACC controller's decisions to the host program (before the run starts).
    pub fn env_attach(&mut self) -> Result<EnvShape, String> {
        if self.now() > 0 || self.eng.events > 0 {
            return Err("attach the host program before the run starts".into());
        }
        let i = self.acc_instance()?;
        let agents = self.ctl.list[i].owned.len();
        let acc = self.acc(i);
        acc.make_external()?;
        Ok(EnvShape { agents, state_len: acc.p.sizes[0], actions: acc.p.grid.len(), interval: acc.p.interval })
    }

    /// Run to the next decision. True: one awaits (`env_view`, then `env_act`); false: the run is over.
    pub fn env_next(&mut self) -> bool {
        self.run_until(Time::MAX);
        self.paused()
    }

    /// The agents' states (flat, agent by agent) and the rewards of their previous actions (NaN before
    /// the first) at the decision awaited.
    pub fn env_view(&mut self) -> Option<(Vec<f32>, Vec<f32>)> {
        let i = self.acc_instance().ok()?;
        self.acc(i).external_view()
    }

    /// Apply the host's actions (a grid index per agent, or −1 to keep its setting) at the decision's
    /// instant and let the run go on from there.
    pub fn env_act(&mut self, actions: &[i64]) -> Result<(), String> {
        let i = self.acc_instance()?;
        if !self.paused() {
            return Err("no decision is awaited: call next first".into());
        }
        self.with_tick(i as u32, |ctl, tick| match ctl {
            Controller::Acc(acc) => acc.act_external(tick, actions),
            _ => unreachable!("acc_instance found an ACC controller"),
        })?;
        self.set_pause(false);
        self.end_tick(i as u32);
        Ok(())
    }
}
