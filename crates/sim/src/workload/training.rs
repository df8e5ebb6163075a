//! Distributed training (ACC §5.3.2; `workloads.md` §9.5): data-parallel iterations of a model on
//! `workers` workers. An iteration is a compute phase (`compute`, every worker at once), then the
//! gradient exchange, after which the next iteration's compute begins:
//!
//! - `sync = "ps"` (the paper's set-up: 7 workers and a parameter server): every worker pushes its
//!   gradient (`gradient` bytes) to the PS; the PS waits for all of them (the barrier), then sends the
//!   updated model (the same bytes) back to each worker; the iteration ends when the last worker holds it.
//! - `sync = "ring"` (ring all-reduce, for users): the gradient is cut into `workers` chunks; in each of
//!   2 (workers − 1) steps every worker sends one chunk to the next worker of the ring, and a worker sends
//!   its step s + 1 chunk as soon as it holds the chunk of step s (reduce-scatter, then all-gather). Each
//!   worker sends 2 (workers − 1) / workers × `gradient` bytes, as with the PS minus the PS's bottleneck.
//!
//! Each iteration is a row of the `jobs` table (`kind = "iteration"`) from the start of its compute
//! phase to the end of its exchange; training speed = workers × batch / iteration time.
//!
//! Models (`model`), per batch of 64 on one P100 [DEFAULT, rough public figures, `workloads.md` §9.5]:
//! `alexnet` — 60 ms compute, 61 M parameters × 4 B = 244 MB; `resnet50` — 150 ms, 25.6 M × 4 B =
//! 102.4 MB. `compute` and `gradient` override them (a reduced experiment scales both).

use super::jobs::{Ctl, Jobs, Model, Step};
use super::{HostSet, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur, Time, MS};
use serde::Deserialize;

/// The models of ACC's training test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Net {
    Alexnet,
    Resnet50,
}

impl Net {
    /// Compute time per iteration and gradient bytes.
    pub fn defaults(self) -> (Time, u64) {
        match self {
            Net::Alexnet => (60 * MS, 61_000_000 * 4),
            Net::Resnet50 => (150 * MS, 25_600_000 * 4),
        }
    }
}

/// How workers exchange gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sync {
    /// A parameter server with a barrier.
    #[default]
    Ps,
    /// Ring all-reduce.
    Ring,
}

/// `{ kind = "training", model, workers = 7, sync = "ps", hosts, iterations, compute, gradient, start,
/// tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub model: Net,
    #[serde(default = "default_workers")]
    pub workers: u32,
    #[serde(default)]
    pub sync: Sync,
    /// The hosts: with `sync = "ps"` the PS first, then the workers (default hosts 0 to `workers`); with
    /// `"ring"` the workers in ring order (default hosts 0 to `workers` − 1).
    pub hosts: Option<HostSet>,
    /// Iterations to run; absent: until the run stops.
    pub iterations: Option<u64>,
    /// Overrides the model's compute time per iteration.
    pub compute: Option<Dur>,
    /// Overrides the model's gradient (and model) bytes.
    pub gradient: Option<Bytes>,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

fn default_workers() -> u32 {
    7
}

impl Cfg {
    fn n_hosts(&self) -> usize {
        self.workers as usize + (self.sync == Sync::Ps) as usize
    }
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let min = if self.sync == Sync::Ring { 2 } else { 1 };
        if self.workers < min || self.workers > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.workers"), format!("{min} to 65536 workers (a ring needs 2)")));
        }
        if self.iterations == Some(0) {
            return Err(ConfigError::new(format!("{field}.iterations"), "must be at least 1 (leave it out to run until the run stops)"));
        }
        if let Some(g) = &self.gradient {
            super::check_size(g, &format!("{field}.gradient"))?;
        }
        if let Some(h) = &self.hosts {
            if h.0.len() != self.n_hosts() {
                let what = if self.sync == Sync::Ps { "the PS then the workers" } else { "the workers in ring order" };
                return Err(ConfigError::new(format!("{field}.hosts"), format!("lists {} hosts; name {} ({what}), or leave it out", h.0.len(), self.n_hosts())));
            }
            let mut seen = h.0.clone();
            seen.sort();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(ConfigError::new(format!("{field}.hosts"), format!("host {} is listed twice; each takes one role", w[0])));
            }
        }
        Ok(())
    }

    fn flow_count(&self, _n_hosts: u64) -> Option<u64> {
        let w = self.workers as u64;
        let per = if self.sync == Sync::Ps { 2 * w } else { 2 * (w - 1) * w };
        self.iterations.map(|i| i * per)
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let hosts = match &self.hosts {
            Some(h) => b.hosts.members(&Some(h.clone()), &format!("{field}.hosts"))?,
            None => {
                let n = self.n_hosts() as u32;
                if n > b.hosts.n_hosts {
                    return Err(ConfigError::new(format!("{field}.workers"), format!("needs {n} hosts, the topology has {}", b.hosts.n_hosts)));
                }
                (0..n).collect()
            }
        };
        let (compute, gradient) = self.model.defaults();
        let model = Training {
            sync: self.sync,
            hosts,
            workers: self.workers,
            compute: self.compute.map_or(compute, |c| c.0),
            gradient: self.gradient.map_or(gradient, |g| g.0.bytes(b.mtu)),
            left: self.iterations,
            done: 0,
        };
        let tag = b.tags.id(&self.tag);
        Ok(Source::Jobs(Jobs::new(Box::new(model), self.start.0, tag, self.priority)))
    }
}

struct Training {
    sync: Sync,
    hosts: Vec<u32>,
    workers: u32,
    compute: Time,
    gradient: u64,
    /// Iterations left to begin (`None`: no limit).
    left: Option<u64>,
    /// Flows of the current phase received so far (the barrier's count).
    done: u32,
}

impl Training {
    /// A new iteration: compute, then the first flows of the exchange.
    fn iterate(&mut self, c: &mut Ctl) {
        if self.left == Some(0) {
            return;
        }
        self.left = self.left.map(|n| n - 1);
        self.done = 0;
        let job = c.open("iteration");
        let w = self.workers;
        for i in 0..w {
            let s = match self.sync {
                // Worker i (host i + 1) pushes to the PS (host 0): step i.
                Sync::Ps => Step { job, step: i, src: self.hosts[i as usize + 1], dst: self.hosts[0], size: self.gradient },
                // Step 0 of the ring: worker i sends to i + 1; step number s · w + i.
                Sync::Ring => Step { job, step: i, src: self.hosts[i as usize], dst: self.hosts[((i + 1) % w) as usize], size: self.chunk() },
            };
            c.send(s, self.compute);
        }
    }

    fn chunk(&self) -> u64 {
        self.gradient.div_ceil(self.workers as u64)
    }
}

impl Model for Training {
    fn start(&mut self, c: &mut Ctl) {
        self.iterate(c);
    }

    fn done(&mut self, d: Step, c: &mut Ctl) {
        let w = self.workers;
        self.done += 1;
        match self.sync {
            Sync::Ps if d.step < w => {
                // The barrier: the PS sends the model back once it holds every gradient.
                if self.done == w {
                    self.done = 0;
                    for i in 0..w {
                        c.send(Step { step: w + i, src: self.hosts[0], dst: self.hosts[i as usize + 1], ..d }, 0);
                    }
                }
            }
            Sync::Ring if d.step / w + 1 < 2 * (w - 1) => {
                // The receiver forwards the next chunk as soon as it holds this one.
                let (s, i) = (d.step / w, d.step % w);
                let j = (i + 1) % w;
                c.send(Step { step: (s + 1) * w + j, src: self.hosts[j as usize], dst: self.hosts[((j + 1) % w) as usize], ..d }, 0);
                self.done -= 1;
            }
            // The last flows of the iteration (the PS's model to each worker; the ring's last step).
            _ => {
                if self.done == w {
                    c.close(d.job);
                    self.iterate(c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;
    use crate::workload::jobs::tests::drive;
    use crate::workload::{Build, HostInfo, Kind, NewFlow, Tags};

    fn jobs(text: &str, n_hosts: u32) -> Jobs {
        let c: Cfg = toml::from_str(text).unwrap();
        c.validate("traffic[0]").unwrap();
        let hosts = HostInfo { n_hosts, host_rate: vec![25_000_000_000; n_hosts as usize], rack: vec![None; n_hosts as usize], rack_uplink: vec![] };
        let mut tags = Tags::default();
        let mut b = Build { rng: rng::stream(7, "traffic", 0), hosts: &hosts, mtu: 1000, tags: &mut tags };
        match c.build("traffic[0]", &mut b).unwrap() {
            Source::Jobs(j) => j,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_ps_sends_the_model_back_only_after_the_last_of_seven_pushes() {
        // Pushes from worker i take 10 + i µs: the last (worker 7, host 7) ends at compute + 16 µs.
        let fct = |f: &NewFlow| if f.dst == 0 { (10 + f.src as Time - 1) * 1_000_000 } else { 5_000_000 };
        let mut j = jobs("model = \"alexnet\"\ncompute = \"1ms\"\ngradient = \"1MB\"\niterations = 2", 8);
        let (rows, log) = drive(&mut j, Time::MAX, fct);
        assert_eq!(log.len(), 28);
        let pushes = &log[..7];
        assert!(pushes.iter().all(|(f, _)| f.dst == 0 && f.start == MS && f.size == 1_000_000));
        let last_push = pushes.iter().map(|p| p.1).max().unwrap();
        assert_eq!(last_push, MS + 16_000_000);
        for (f, _) in &log[7..14] {
            assert_eq!((f.src, f.start), (0, last_push), "a pull starts when the last push ends, not before");
        }
        // Iteration = compute + slowest push + pull; the second begins when the first ends.
        assert_eq!((rows[0].start, rows[0].finish), (0, Some(MS + 16_000_000 + 5_000_000)));
        assert_eq!(rows[1].start, rows[0].finish.unwrap());
        assert_eq!(log[14].0.start, rows[0].finish.unwrap() + MS, "the next pushes wait for the compute phase");
        assert_eq!((rows.len(), rows[0].flows, rows[0].bytes), (2, 14, 14_000_000));
    }

    #[test]
    fn the_ring_forwards_each_chunk_once_received_for_two_times_n_minus_one_steps() {
        let mut j = jobs("model = \"resnet50\"\nsync = \"ring\"\nworkers = 4\ncompute = \"0s\"\ngradient = \"4000B\"\niterations = 1", 4);
        let (rows, log) = drive(&mut j, Time::MAX, |f| 1000 + f.src as Time);
        assert_eq!(log.len(), 2 * 3 * 4, "2 (n − 1) steps of n chunks");
        assert!(log.iter().all(|(f, _)| f.size == 1000 && f.dst == (f.src + 1) % 4));
        // Each worker sends 2 (n − 1) chunks; the iteration ends with the last chunk of the last step.
        for h in 0..4 {
            assert_eq!(log.iter().filter(|(f, _)| f.src == h).count(), 6);
        }
        let last = log.iter().map(|x| x.1).max().unwrap();
        assert_eq!(rows[0].finish, Some(last));
        assert_eq!(rows[0].bytes, 24_000);
    }

    #[test]
    fn bad_keys_name_the_field() {
        let e = toml::from_str::<Cfg>("model = \"vgg\"").unwrap_err().to_string();
        assert!(e.contains("alexnet") && e.contains("resnet50"), "{e}");
        let bad = |text: &str, field: &str| {
            let c: Cfg = toml::from_str(text).unwrap();
            assert_eq!(c.validate("traffic[0]").unwrap_err().field, field);
        };
        bad("model = \"alexnet\"\nhosts = [0, 1]", "traffic[0].hosts");
        bad("model = \"alexnet\"\nworkers = 1\nsync = \"ring\"", "traffic[0].workers");
        bad("model = \"alexnet\"\niterations = 0", "traffic[0].iterations");
        bad("model = \"alexnet\"\nworkers = 2\nhosts = [0, 1, 1]", "traffic[0].hosts");
    }
}
