//! The `schedule` controller: AQM parameter changes at given times — a threshold lowered mid-run, a
//! workload phase with other settings. `switch.controller = { kind = "schedule", changes = [{ at =
//! "10ms", aqm = { kind = "dctcp_red", threshold = "20KB" } }], ports = [{ node, port }], queue = 0 }`;
//! `ports` (default: every switch port) and `queue` (default: every queue) choose what it owns, and a
//! change may name its own `queue`.

use super::{Control, Owned, Tick};
use crate::aqm::AqmCfg;
use crate::config::{ConfigError, PortRef};
use crate::net::Net;
use crate::units::{Dur, Time};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub at: Dur,
    /// The new parameters; the kind must be the one the queues run.
    pub aqm: AqmCfg,
    /// Only this queue of each owned port.
    pub queue: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub changes: Vec<Change>,
    pub ports: Option<Vec<PortRef>>,
    pub queue: Option<u32>,
}

pub struct Schedule {
    /// Changes in time order (stable for equal times).
    changes: Vec<Change>,
    next: usize,
}

impl super::ControlCfg for Cfg {
    type Ctl = Schedule;

    /// One controller for every owned queue of the network.
    fn instances(&self, field: &str, net: &Net, names: &[String]) -> Result<Vec<(Schedule, Vec<Owned>)>, ConfigError> {
        let owned = super::owned_queues(net, names, &self.ports, self.queue, field)?;
        let ctl = self.build(field, net, &owned)?;
        Ok(vec![(ctl, owned)])
    }
}

impl Cfg {
    fn build(&self, field: &str, net: &Net, owned: &[Owned]) -> Result<Schedule, ConfigError> {
        if self.changes.is_empty() {
            return Err(ConfigError::new(format!("{field}.changes"), "give at least one change: [{ at = \"…\", aqm = { … } }]"));
        }
        for (i, c) in self.changes.iter().enumerate() {
            let f = format!("{field}.changes[{i}]");
            c.aqm.validate(&format!("{f}.aqm"), net.mtu as u64)?;
            for o in owned.iter().filter(|o| c.queue.map_or(true, |q| q == o.queue)) {
                let have = net.ports[o.port as usize].queues[o.queue as usize].aqm.kind();
                if have != c.aqm.kind() {
                    return Err(ConfigError::new(
                        format!("{f}.aqm.kind"),
                        format!("the queues run `{have}`; a controller changes parameters, not the kind (use kind = \"{have}\")"),
                    ));
                }
            }
        }
        let mut changes = self.changes.clone();
        changes.sort_by_key(|c| c.at.0);
        Ok(Schedule { changes, next: 0 })
    }
}

impl Control for Schedule {
    fn next_tick(&self, _now: Option<Time>) -> Option<Time> {
        self.changes.get(self.next).map(|c| c.at.0)
    }

    fn on_tick(&mut self, tick: &mut Tick) {
        while let Some(c) = self.changes.get(self.next).filter(|c| c.at.0 <= tick.now) {
            for i in 0..tick.len() {
                if c.queue.map_or(true, |q| q == tick.owned[i].queue) {
                    // Kinds were checked when the run was built.
                    tick.set_aqm(i, &c.aqm).expect("controller change of a checked kind");
                }
            }
            self.next += 1;
        }
    }
}
