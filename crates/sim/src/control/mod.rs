//! Controllers: code that wakes up at exact times while the run goes on, reads the counters of the port
//! queues it owns (what changed since its last tick) and may change their AQM's parameters. One
//! controller may own one port (a per-port agent) or every port of the network (a central one). A
//! controller is not an AQM kind: it changes the parameters of the AQM a queue already has.
//!
//! Adding one is a file here (its `Cfg` implementing [`ControlCfg`], its state and [`Control`] impl) and
//! one line in the `registry!` below.

pub mod acc;
pub mod env;
pub mod schedule;

use crate::aqm::{Aqm, AqmCfg, Hooks};
use crate::config::{kind_enum, ConfigError, PortRef};
use crate::net::port::{Port, QueueCounters};
use crate::net::Net;
use crate::records::ControlRow;
use crate::sim::{Ev, Sim};
use crate::units::Time;

/// A queue a controller owns and its counters at the controller's last tick.
pub struct Owned {
    pub port: u32,
    pub queue: u32,
    last: QueueCounters,
}

/// What a controller sees at a tick.
pub struct Tick<'a> {
    pub now: Time,
    ports: &'a mut [Port],
    owned: &'a mut [Owned],
    mtu: u64,
    seed: u64,
    /// `controller_steps`, or `None` with `record.controller_steps = false` (no row is built).
    log: Option<&'a mut Vec<ControlRow>>,
}

impl Tick<'_> {
    /// How many queues the controller owns.
    pub fn len(&self) -> usize {
        self.owned.len()
    }

    pub fn is_empty(&self) -> bool {
        self.owned.is_empty()
    }

    /// Counters of owned queue `i` since the previous tick (paused time up to now).
    pub fn counters(&self, i: usize) -> QueueCounters {
        let o = &self.owned[i];
        let port = &self.ports[o.port as usize];
        let mut c = port.queues[o.queue as usize].count;
        if port.paused & (1 << o.queue) != 0 {
            c.paused_ps += self.now - port.fc().paused_since[o.queue as usize];
        }
        QueueCounters {
            tx_pkts: c.tx_pkts - o.last.tx_pkts,
            tx_bytes: c.tx_bytes - o.last.tx_bytes,
            marks: c.marks - o.last.marks,
            marked_bytes: c.marked_bytes - o.last.marked_bytes,
            ue_marks: c.ue_marks - o.last.ue_marks,
            drops: c.drops - o.last.drops,
            paused_ps: c.paused_ps - o.last.paused_ps,
        }
    }

    /// Bytes queued now at owned queue `i`, and its port's rate.
    pub fn queue_bytes(&self, i: usize) -> (u64, u64) {
        let o = &self.owned[i];
        let port = &self.ports[o.port as usize];
        (port.queues[o.queue as usize].bytes, port.rate)
    }

    /// The AQM of owned queue `i` (its current parameters: `params` of the variant).
    pub fn aqm(&self, i: usize) -> &Aqm {
        let o = &self.owned[i];
        &self.ports[o.port as usize].queues[o.queue as usize].aqm
    }

    /// The scenario's seed, for a controller's own named streams (`crate::rng::stream`).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Give owned queue `i`'s AQM the parameters of `cfg` (same kind), recorded in `controller_steps`.
    pub fn set_aqm(&mut self, i: usize, cfg: &AqmCfg) -> Result<(), String> {
        let o = &self.owned[i];
        let port = &mut self.ports[o.port as usize];
        let q = &mut port.queues[o.queue as usize];
        q.aqm.set_params(cfg, self.mtu, self.now)?;
        q.deq = q.aqm.acts_at_dequeue();
        q.non_ect_drop = cfg.non_ect() == crate::aqm::NonEct::Drop;
        let Some(log) = self.log.as_deref_mut() else { return Ok(()) };
        log.push(ControlRow {
            time: self.now,
            node: port.node,
            port: port.local,
            queue: o.queue,
            action: q.aqm.describe(),
            reward: f64::NAN,
            epsilon: f64::NAN,
            loss: f64::NAN,
            features: String::new(),
        });
        Ok(())
    }

    /// The `controller_steps` row of the change just made (`set_aqm`), for a controller to add its
    /// reward, exploration rate, loss and state; `None` when the run keeps no rows.
    pub fn last_step(&mut self) -> Option<&mut ControlRow> {
        self.log.as_deref_mut().and_then(|l| l.last_mut())
    }
}

/// A controller's behaviour.
pub trait Control {
    /// The first tick, or the tick after one at `now`; `None`: no more ticks.
    fn next_tick(&self, now: Option<Time>) -> Option<Time>;
    fn on_tick(&mut self, tick: &mut Tick);
    /// The tick just handled left its decisions to the host program (`dcnlab.rl`): the run pauses there
    /// until they come (`Sim::env_act`).
    fn awaiting(&self) -> bool {
        false
    }
    /// The run ends: write what the controller keeps (a model file); an error fails the run.
    fn on_end(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Figures for `meta.controller` (name → value).
    fn report(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// What a controller file's `Cfg` provides: the instances it makes over the built network, each with the
/// queues it owns (one for the whole network, or one per port for per-port agents).
pub trait ControlCfg {
    type Ctl: Control;
    fn instances(&self, field: &str, net: &Net, names: &[String]) -> Result<Vec<(Self::Ctl, Vec<Owned>)>, ConfigError>;
}

/// The registry: one line per controller (`Variant = "kind" => module::Type`) makes its `Cfg` a `kind` of
/// `switch.controller` and routes ticks to it.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $module:ident :: $ty:ident ),* $(,)?) => {
        kind_enum! {
            /// `switch.controller`.
            #[derive(Debug, Clone)]
            pub enum ControllerCfg {
                $( $variant = $kind ($module::Cfg) ),*
            }
        }

        /// Every controller, by variant.
        pub enum Controller {
            $( $variant($module::$ty) ),*
        }

        impl Control for Controller {
            fn next_tick(&self, now: Option<Time>) -> Option<Time> {
                match self {
                    $( Controller::$variant(c) => c.next_tick(now), )*
                }
            }
            fn on_tick(&mut self, tick: &mut Tick) {
                match self {
                    $( Controller::$variant(c) => c.on_tick(tick), )*
                }
            }
            fn awaiting(&self) -> bool {
                match self {
                    $( Controller::$variant(c) => c.awaiting(), )*
                }
            }
            fn on_end(&mut self) -> Result<(), String> {
                match self {
                    $( Controller::$variant(c) => c.on_end(), )*
                }
            }
            fn report(&self) -> Vec<(&'static str, f64)> {
                match self {
                    $( Controller::$variant(c) => c.report(), )*
                }
            }
        }

        impl ControllerCfg {
            fn instances(&self, field: &str, net: &Net, names: &[String]) -> Result<Vec<Instance>, ConfigError> {
                Ok(match self {
                    $( ControllerCfg::$variant(c) => c
                        .instances(field, net, names)?
                        .into_iter()
                        .map(|(ctl, owned)| Instance { ctl: Controller::$variant(ctl), owned })
                        .collect(), )*
                })
            }
        }
    };
}

registry! {
    Schedule = "schedule" => schedule::Schedule,
    Acc = "acc" => acc::Acc,
}

/// A controller and the queues it owns.
pub struct Instance {
    pub ctl: Controller,
    pub owned: Vec<Owned>,
}

#[derive(Default)]
pub struct Controllers {
    pub list: Vec<Instance>,
    /// Wall seconds spent in controller ticks (`meta.controller.controller_tick_s`).
    pub tick_s: f64,
    /// `record.controller_steps`: keep the rows the ticks write.
    pub keep_steps: bool,
}

/// The queues a controller owns: the listed switch ports (or every switch port), queue `queue` (or every
/// queue) of each.
pub fn owned_queues(net: &Net, names: &[String], ports: &Option<Vec<PortRef>>, queue: Option<u32>, field: &str) -> Result<Vec<Owned>, ConfigError> {
    let list: Vec<u32> = match ports {
        None => net.switch_ports(),
        Some(v) => {
            let mut out = Vec::new();
            for (i, pr) in v.iter().enumerate() {
                let p = net.port_of(names, &pr.node, pr.port).ok_or_else(|| {
                    ConfigError::new(format!("{field}.ports[{i}]"), format!("no port {} at a node named `{}`", pr.port, pr.node))
                })?;
                if !matches!(net.ports[p as usize].owner, crate::net::Owner::Switch(_)) {
                    return Err(ConfigError::new(format!("{field}.ports[{i}].node"), "controllers own switch ports; this is a host"));
                }
                out.push(p);
            }
            out
        }
    };
    let mut owned = Vec::new();
    for p in list {
        let nq = net.ports[p as usize].queues.len() as u32;
        if let Some(q) = queue {
            if q >= nq {
                return Err(ConfigError::new(format!("{field}.queue"), format!("ports have queues 0–{}", nq - 1)));
            }
        }
        for q in (0..nq).filter(|&q| queue.map_or(true, |x| x == q)) {
            owned.push(Owned { port: p, queue: q, last: QueueCounters::default() });
        }
    }
    Ok(owned)
}

impl Controllers {
    /// Build the scenario's controller (if any) over the built network.
    pub fn build(cfg: &Option<ControllerCfg>, net: &Net, names: &[String], keep_steps: bool) -> Result<Controllers, ConfigError> {
        let field = "switch.controller";
        let Some(cfg) = cfg else { return Ok(Controllers::default()) };
        Ok(Controllers { list: cfg.instances(field, net, names)?, tick_s: 0.0, keep_steps })
    }
}

impl Sim {
    /// Schedule every controller's first tick.
    pub(crate) fn start_controllers(&mut self) {
        for i in 0..self.ctl.list.len() {
            if let Some(t) = self.ctl.list[i].ctl.next_tick(None) {
                self.push(t, Ev::Control(i as u32));
            }
        }
    }

    #[cold]
    pub(crate) fn control_tick(&mut self, i: u32) {
        let started = std::time::Instant::now();
        self.control_tick_timed(i);
        self.ctl.tick_s += started.elapsed().as_secs_f64();
    }

    /// The run ends: each controller writes what it keeps (an error fails the run) and reports its
    /// figures into `meta.controller`.
    pub(crate) fn end_controllers(&mut self) {
        let mut failure = None;
        for inst in self.ctl.list.iter_mut() {
            if let Err(e) = inst.ctl.on_end() {
                failure.get_or_insert(format!("switch.controller: {e}"));
            }
            for (k, v) in inst.ctl.report() {
                *self.rec.meta.controller.entry(k.to_string()).or_insert(0.0) += v;
            }
        }
        if !self.ctl.list.is_empty() {
            self.rec.meta.controller.insert("controller_tick_s".into(), self.ctl.tick_s);
        }
        if let Some(f) = failure {
            self.rec.meta.failure.get_or_insert(f);
        }
    }

    fn control_tick_timed(&mut self, i: u32) {
        let awaiting = self.with_tick(i, |ctl, tick| {
            ctl.on_tick(tick);
            ctl.awaiting()
        });
        if awaiting {
            self.set_pause(true);
            return;
        }
        self.end_tick(i);
    }

    /// `f` with controller `i` and a tick over its queues at `now`.
    pub(crate) fn with_tick<R>(&mut self, i: u32, f: impl FnOnce(&mut Controller, &mut Tick) -> R) -> R {
        let now = self.now();
        let seed = self.seed();
        let inst = &mut self.ctl.list[i as usize];
        let mut tick = Tick {
            now,
            ports: &mut self.net.ports,
            owned: &mut inst.owned,
            mtu: self.net.mtu as u64,
            seed,
            log: if self.ctl.keep_steps { Some(&mut self.rec.controller_steps) } else { None },
        };
        f(&mut inst.ctl, &mut tick)
    }

    /// After a controller's decisions at `now`: the counters its next interval starts from, the AQMs'
    /// own tick, and its next tick.
    pub(crate) fn end_tick(&mut self, i: u32) {
        let now = self.now();
        let inst = &mut self.ctl.list[i as usize];
        for o in inst.owned.iter_mut() {
            let port = &mut self.net.ports[o.port as usize];
            let mut c = port.queues[o.queue as usize].count;
            if port.paused & (1 << o.queue) != 0 {
                c.paused_ps += now - port.fc().paused_since[o.queue as usize];
            }
            o.last = c;
            port.queues[o.queue as usize].aqm.on_tick(now);
        }
        if let Some(t) = inst.ctl.next_tick(Some(now)) {
            self.push(t, Ev::Control(i));
        }
    }
}
