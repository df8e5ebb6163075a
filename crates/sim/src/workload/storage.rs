//! Storage IO (ACC §5.3.1, Table 1; `workloads.md` §8): compute nodes (`clients`) run FIO-like jobs, each
//! keeping `io_depth` IOs outstanding against the storage nodes (`servers`): when an IO completes, its
//! job issues the next at once (closed loop). Each IO goes to a storage node drawn uniformly, is a read
//! with probability `read_fraction` (the pattern's read:write ratio), and moves a block drawn uniformly
//! over the power-of-two sizes of the pattern's range (OLTP: 512 B, 1 KiB, …, 64 KiB, each equally
//! likely). Its messages, each a flow, one after the other:
//!
//! - read:  client → server request (`control_size`), then server → client the block;
//! - write: client → server the block, then server → a second storage node its backup copy (drawn
//!   uniformly among the other servers; `replication = 1` leaves it out), then server → client an ack
//!   (`control_size`) once the copy is received.
//!
//! An IO completes when its last message is received: one row of the `jobs` table (`kind` = `read` or
//! `write`); IOPS = IOs completed in a window / its length. Each FIO job draws its IOs from its own
//! stream (derived from the entry's), so IO k of a job is the same IO whatever the network does to the
//! others (common random numbers across compared schemes).

use super::jobs::{Ctl, Jobs, Model, Step};
use super::{HostSet, Source};
use crate::config::kind::ConfigError;
use crate::rng::{self, Rng};
use crate::units::{Bytes, Dur, Size};
use rand::{Rng as _, RngCore};
use serde::Deserialize;
use std::collections::HashMap;

/// The six patterns of ACC's Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Oltp,
    Olap,
    Vdi,
    ExchangeServer,
    VideoStreaming,
    FileBackup,
}

const KIB: u64 = 1024;

impl Pattern {
    /// Read fraction (read:write of Table 1) and the block-size range, bytes (KB there are KiB: block
    /// sizes are powers of two).
    pub fn table(self) -> (f64, u64, u64) {
        match self {
            Pattern::Oltp => (0.5, 512, 64 * KIB),
            Pattern::Olap => (0.5, 256 * KIB, 4096 * KIB),
            Pattern::Vdi => (0.2, KIB, 64 * KIB),
            Pattern::ExchangeServer => (0.6, 32 * KIB, 512 * KIB),
            Pattern::VideoStreaming => (0.2, 64 * KIB, 64 * KIB),
            Pattern::FileBackup => (0.4, 16 * KIB, 64 * KIB),
        }
    }

    /// The power-of-two block sizes of the range.
    pub fn blocks(self) -> Vec<u64> {
        let (_, lo, hi) = self.table();
        (0..64).map(|i| 1u64 << i).filter(|&b| b >= lo && b <= hi).collect()
    }
}

/// `{ kind = "storage", pattern, servers, clients, io_depth = 16, numjobs = 1, ios, read_fraction,
/// replication = 2, control_size = "64B", start, tag, priority }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub pattern: Pattern,
    /// The storage nodes.
    pub servers: HostSet,
    /// The compute nodes that issue IOs (default: every host that is not a server).
    pub clients: Option<HostSet>,
    /// IOs each FIO job keeps outstanding.
    #[serde(default = "default_depth")]
    pub io_depth: u32,
    /// FIO jobs per client (FIO's `numjobs`).
    #[serde(default = "one")]
    pub numjobs: u32,
    /// IOs each FIO job issues in all (FIO's `number_ios`); absent: until the run stops.
    pub ios: Option<u64>,
    /// Overrides the pattern's read share.
    pub read_fraction: Option<f64>,
    /// Copies of written data: 2 sends each written block on to a second storage node before the ack.
    #[serde(default = "two")]
    pub replication: u32,
    /// A read's request and a write's ack.
    #[serde(default = "default_control")]
    pub control_size: Bytes,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    #[serde(default)]
    pub priority: u8,
}

fn default_depth() -> u32 {
    16
}
fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn default_control() -> Bytes {
    Bytes(Size::Bytes(64))
}

impl Cfg {
    fn read_fraction(&self) -> f64 {
        self.read_fraction.unwrap_or(self.pattern.table().0)
    }
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.io_depth == 0 || self.io_depth > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.io_depth"), "IOs outstanding per job: 1 to 65536"));
        }
        if self.numjobs == 0 || self.numjobs > 1 << 16 {
            return Err(ConfigError::new(format!("{field}.numjobs"), "FIO jobs per client: 1 to 65536"));
        }
        if self.ios == Some(0) {
            return Err(ConfigError::new(format!("{field}.ios"), "must be at least 1 (leave it out to run until the run stops)"));
        }
        if self.read_fraction.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
            return Err(ConfigError::new(format!("{field}.read_fraction"), "a fraction of IOs: 0 (all writes) to 1 (all reads)"));
        }
        if !matches!(self.replication, 1 | 2) {
            return Err(ConfigError::new(format!("{field}.replication"), "1 (no backup copy) or 2 (one backup copy on another storage node)"));
        }
        super::check_size(&self.control_size, &format!("{field}.control_size"))?;
        if self.servers.0.is_empty() {
            return Err(ConfigError::new(format!("{field}.servers"), "name at least one storage node"));
        }
        if self.replication == 2 && self.servers.0.len() < 2 && self.read_fraction() < 1.0 {
            return Err(ConfigError::new(format!("{field}.servers"), "writes with `replication = 2` need at least 2 storage nodes (or set `replication = 1`)"));
        }
        if let Some(c) = &self.clients {
            if let Some(h) = c.0.iter().find(|h| self.servers.0.contains(h)) {
                return Err(ConfigError::new(format!("{field}.clients"), format!("host {h} is both a client and a server; a host is one or the other")));
            }
        }
        Ok(())
    }

    fn flow_count(&self, n_hosts: u64) -> Option<u64> {
        let clients = self.clients.as_ref().map_or(n_hosts.saturating_sub(self.servers.0.len() as u64), |c| c.0.len() as u64);
        // At most three messages per IO (a replicated write).
        self.ios.map(|n| clients * self.numjobs as u64 * n * 3)
    }

    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let servers = b.hosts.members(&Some(self.servers.clone()), &format!("{field}.servers"))?;
        let clients = match &self.clients {
            Some(c) => b.hosts.members(&Some(c.clone()), &format!("{field}.clients"))?,
            None => (0..b.hosts.n_hosts).filter(|h| !servers.contains(h)).collect(),
        };
        if clients.is_empty() {
            return Err(ConfigError::new(format!("{field}.clients"), "no host is left to be a client; name the servers so that some hosts are not"));
        }
        let base = b.rng.next_u64();
        let mut jobs = Vec::new();
        for &c in &clients {
            for _ in 0..self.numjobs {
                jobs.push(Fio { rng: rng::stream(base, "storage", jobs.len() as u64), client: c, left: self.ios });
            }
        }
        let model = Storage {
            jobs,
            servers,
            read: self.read_fraction(),
            blocks: self.pattern.blocks(),
            depth: self.io_depth,
            replicate: self.replication == 2,
            control: self.control_size.0.bytes(b.mtu),
            ios: HashMap::new(),
        };
        let tag = b.tags.id(&self.tag);
        Ok(Source::Jobs(Jobs::new(Box::new(model), self.start.0, tag, self.priority)))
    }
}

/// One FIO job: its client, its own stream, the IOs it has left to issue (`None`: no limit).
struct Fio {
    rng: Rng,
    client: u32,
    left: Option<u64>,
}

/// An IO in progress.
#[derive(Debug, Clone, Copy)]
struct Io {
    fio: u32,
    read: bool,
    server: u32,
    backup: u32,
    block: u64,
}

/// The messages of an IO (`Step::step`).
const REQUEST: u32 = 0;
const READ_DATA: u32 = 1;
const WRITE_DATA: u32 = 2;
const COPY: u32 = 3;
const ACK: u32 = 4;

struct Storage {
    jobs: Vec<Fio>,
    servers: Vec<u32>,
    read: f64,
    blocks: Vec<u64>,
    depth: u32,
    replicate: bool,
    control: u64,
    /// IOs in progress, by job id (looked up, never iterated).
    ios: HashMap<u32, Io>,
}

impl Storage {
    /// FIO job `f` issues its next IO now, if it has one left.
    fn issue(&mut self, f: u32, c: &mut Ctl) {
        let fio = &mut self.jobs[f as usize];
        if fio.left == Some(0) {
            return;
        }
        fio.left = fio.left.map(|n| n - 1);
        // Always the same four draws per IO, in this order.
        let read = rng::unit(&mut fio.rng) < self.read;
        let block = self.blocks[fio.rng.gen_range(0..self.blocks.len())];
        let s = fio.rng.gen_range(0..self.servers.len());
        let server = self.servers[s];
        let backup = match self.servers.len() {
            1 => server,
            n => self.servers[(s + 1 + fio.rng.gen_range(0..n - 1)) % n],
        };
        let client = fio.client;
        let job = c.open(if read { "read" } else { "write" });
        self.ios.insert(job, Io { fio: f, read, server, backup, block });
        let first = if read { Step { job, step: REQUEST, src: client, dst: server, size: self.control } } else { Step { job, step: WRITE_DATA, src: client, dst: server, size: block } };
        c.send(first, 0);
    }
}

impl Model for Storage {
    fn start(&mut self, c: &mut Ctl) {
        for f in 0..self.jobs.len() as u32 {
            for _ in 0..self.depth {
                self.issue(f, c);
            }
        }
    }

    fn done(&mut self, d: Step, c: &mut Ctl) {
        let io = self.ios[&d.job];
        let client = self.jobs[io.fio as usize].client;
        let next = match d.step {
            REQUEST => Some(Step { step: READ_DATA, src: io.server, dst: client, size: io.block, ..d }),
            WRITE_DATA if self.replicate => Some(Step { step: COPY, src: io.server, dst: io.backup, size: io.block, ..d }),
            WRITE_DATA | COPY => Some(Step { step: ACK, src: io.server, dst: client, size: self.control, ..d }),
            _ => None,
        };
        debug_assert!(io.read == (d.step == REQUEST || d.step == READ_DATA));
        match next {
            Some(s) => c.send(s, 0),
            None => {
                c.close(d.job);
                self.ios.remove(&d.job);
                self.issue(io.fio, c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::workload::jobs::tests::drive;
    use crate::workload::{Build, HostInfo, Kind, NewFlow, Tags};

    fn cfg(text: &str) -> Cfg {
        toml::from_str(text).unwrap()
    }

    fn jobs(c: &Cfg, n_hosts: u32) -> Jobs {
        let hosts = HostInfo { n_hosts, host_rate: vec![25_000_000_000; n_hosts as usize], rack: vec![None; n_hosts as usize], rack_uplink: vec![] };
        let mut tags = Tags::default();
        let mut b = Build { rng: rng::stream(7, "traffic", 0), hosts: &hosts, mtu: 1000, tags: &mut tags };
        c.validate("traffic[0]").unwrap();
        match c.build("traffic[0]", &mut b).unwrap() {
            Source::Jobs(j) => j,
            _ => unreachable!(),
        }
    }

    /// Every flow takes time proportional to its bytes (1 ps per byte + 1 µs).
    fn fct(f: &NewFlow) -> Time {
        f.size + 1_000_000
    }

    #[test]
    fn block_sizes_are_the_powers_of_two_of_the_range_drawn_evenly() {
        assert_eq!(Pattern::Oltp.blocks(), [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]);
        assert_eq!(Pattern::VideoStreaming.blocks(), [65536]);
        assert_eq!(Pattern::Olap.blocks().len(), 5, "256 KiB … 4 MiB");
        let c = cfg("pattern = \"oltp\"\nservers = [4, 5]\nclients = [0, 1]\nio_depth = 8\nreplication = 1");
        let (rows, log) = drive(&mut jobs(&c, 6), 20_000_000_000, fct);
        // The block of each IO is its data message (read: the second, write: the first).
        let mut count = HashMap::new();
        for (f, _) in &log {
            if f.size != 64 {
                *count.entry(f.size).or_insert(0u32) += 1;
            }
        }
        let n: u32 = count.values().sum();
        assert!(n > 20_000, "{n} IOs");
        assert_eq!(count.len(), 8, "every size of the range, none other: {count:?}");
        for (size, k) in count {
            let share = k as f64 / n as f64;
            assert!((share - 0.125).abs() < 0.01, "{size} B: {share}");
        }
        assert!(rows.len() as u32 >= n);
    }

    #[test]
    fn read_share_follows_the_pattern() {
        for (p, want) in [("vdi", 0.2), ("exchange_server", 0.6), ("file_backup", 0.4)] {
            let c = cfg(&format!("pattern = \"{p}\"\nservers = [3, 4, 5]\nio_depth = 4"));
            let (rows, _) = drive(&mut jobs(&c, 6), 20_000_000_000, fct);
            let done: Vec<_> = rows.iter().filter(|r| r.finish.is_some()).collect();
            let reads = done.iter().filter(|r| r.kind == "read").count() as f64 / done.len() as f64;
            assert!(done.len() > 5000 && (reads - want).abs() < 0.02, "{p}: {reads} of {} IOs", done.len());
        }
    }

    #[test]
    fn each_job_keeps_io_depth_ios_outstanding() {
        let c = cfg("pattern = \"file_backup\"\nservers = [2, 3]\nclients = [0, 1]\nio_depth = 5\nnumjobs = 2");
        let until = 5_000_000_000;
        let (rows, _) = drive(&mut jobs(&c, 4), until, fct);
        // At every IO's start, the IOs open at that moment (issued, not completed) number 4 jobs × 5.
        for r in &rows {
            let t = r.start;
            let open = rows.iter().filter(|o| o.start <= t && o.finish.is_none_or(|f| f > t)).count();
            assert_eq!(open, 20, "at {t}");
        }
        // An IO starts exactly when one completes (after the first 20).
        let mut finishes: Vec<Time> = rows.iter().filter_map(|r| r.finish).collect();
        finishes.sort();
        let mut starts: Vec<Time> = rows.iter().skip(20).map(|r| r.start).collect();
        starts.sort();
        assert_eq!(starts[..], finishes[..starts.len()]);
    }

    #[test]
    fn a_write_is_data_then_a_copy_to_another_server_then_an_ack_and_a_read_is_request_then_data() {
        let c = cfg("pattern = \"olap\"\nservers = [1, 2, 3]\nclients = [0]\nio_depth = 1\nios = 400");
        let (rows, log) = drive(&mut jobs(&c, 4), Time::MAX, fct);
        assert_eq!(rows.iter().filter(|r| r.finish.is_some()).count(), 400, "ios = 400, then the job stops");
        let mut i = 0;
        for r in &rows {
            let flows = &log[i..i + r.flows as usize];
            i += r.flows as usize;
            let f: Vec<_> = flows.iter().map(|(f, _)| (f.src, f.dst, f.size)).collect();
            if r.kind == "read" {
                let (_, s, _) = f[0];
                assert_eq!((f.len(), f[0], f[1].0, f[1].1), (2, (0, s, 64), s, 0), "{f:?}");
                assert_eq!(r.bytes, 64 + f[1].2);
            } else {
                let (_, s, block) = f[0];
                assert_eq!(f.len(), 3, "{f:?}");
                assert!(f[1].0 == s && f[1].1 != s && f[1].1 != 0 && f[1].2 == block, "the copy goes from the server to another server: {f:?}");
                assert_eq!(f[2], (s, 0, 64), "{f:?}");
            }
            // The messages follow one another: each starts when the previous is received.
            for w in flows.windows(2) {
                assert_eq!(w[1].0.start, w[0].1);
            }
            assert_eq!(r.finish, Some(flows.last().unwrap().1));
        }
        let reads = rows.iter().filter(|r| r.kind == "read").count();
        assert!((150..250).contains(&reads), "OLAP is 5:5: {reads} reads of 400");
    }

    #[test]
    fn bad_keys_name_the_field_and_the_fix() {
        let e = toml::from_str::<Cfg>("pattern = \"oltpp\"\nservers = [1]").unwrap_err().to_string();
        for name in ["oltp", "olap", "vdi", "exchange_server", "video_streaming", "file_backup"] {
            assert!(e.contains(name), "{e}");
        }
        let bad = |text: &str, field: &str| {
            let e = cfg(text).validate("traffic[0]").unwrap_err();
            assert_eq!(e.field, field, "{}", e.message);
        };
        bad("pattern = \"vdi\"\nservers = [1, 2]\nio_depth = 0", "traffic[0].io_depth");
        bad("pattern = \"vdi\"\nservers = [1, 2]\nread_fraction = 1.5", "traffic[0].read_fraction");
        bad("pattern = \"vdi\"\nservers = [1]", "traffic[0].servers");
        bad("pattern = \"vdi\"\nservers = [1, 2]\nclients = [0, 1]", "traffic[0].clients");
        bad("pattern = \"vdi\"\nservers = [1, 2]\nreplication = 3", "traffic[0].replication");
        bad("pattern = \"vdi\"\nservers = [1, 2]\nios = 0", "traffic[0].ios");
    }
}
