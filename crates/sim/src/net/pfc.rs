//! Lossless priorities: the switch buffer's ingress accounting with reserved, shared and headroom regions
//! per (ingress port, priority) (`spec/aqm.md` §9), and PFC, IEEE 802.1Qbb (§10): a PAUSE frame goes to
//! the upstream neighbour when an (ingress port, priority) crosses XOFF and a RESUME (pause time 0) when it
//! drains below XON. Frames take link time and propagation and go ahead of queued data without
//! pre-empting the frame on the wire (`net/port.rs` sends a port's pending frames first). The upstream
//! port — a switch's or a host's NIC — stops that priority only: until a RESUME (`mode = "until_resume"`,
//! HPCC's ns-3) or for the frame's pause time, refreshed by the receiver at half of it while still above
//! XON (`mode = "timer"`, the standard's semantics). A drop in a lossless priority is a bug: the run fails
//! naming the port, priority and counts. Deadlock: a cycle of ports, each paused by the next and holding
//! packets that came from the one before, all paused for `deadlock_timeout` (`deadlock.rs`).
//!
//! Buffer model (HPCC ns-3's `switch-mmu.cc`, with the spec's headroom formula): the switch buffer `B`
//! keeps, per port and lossless priority, `reserve` bytes and a headroom; the rest is the shared pool that
//! lossy queues (egress dynamic threshold, `switch.alpha`) and lossless ingress counters draw from. An
//! arriving lossless packet is charged to its (ingress port, priority): first to the reserve, then to the
//! shared pool while the counter's shared part stays within XOFF, then to the headroom. XOFF is
//! `alpha × (free shared pool)` (`xoff = "dynamic"`) or a fixed size. PAUSE when the headroom is in use or
//! the shared part reaches XOFF; RESUME when the headroom is empty and the shared part is 0 or at least
//! `resume_offset` below XOFF (with a fixed `xon`: at or below it). Egress admission never drops a
//! lossless packet: PFC is what bounds it.

use crate::config::ConfigError;
use crate::units::{Bytes, Dur, Size, Time, SEC, US};
use serde::de::{self, Deserializer};
use serde::Deserialize;

/// `switch.pfc = { priorities = [3], xoff, xon, alpha, resume_offset, reserve, headroom, response_time,
/// mode, pause_time, deadlock_timeout, on_deadlock }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    /// The lossless priorities (queue indexes; each below `switch.queues`).
    pub priorities: Vec<u8>,
    /// XOFF of an (ingress port, priority)'s shared part: `"dynamic"` (alpha × free shared buffer) or a size.
    #[serde(default)]
    pub xoff: Xoff,
    /// With a fixed `xoff`: RESUME at or below this (default `xoff − resume_offset`).
    pub xon: Option<Bytes>,
    /// Dynamic XOFF's alpha (HPCC ns-3: 1/8, its `pfc_a_shift` of 3).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// RESUME once the shared part is this far below XOFF (HPCC ns-3: 3 KB).
    #[serde(default = "default_resume_offset")]
    pub resume_offset: Bytes,
    /// Guaranteed bytes per (ingress port, priority) before the shared pool (spec default 0; HPCC 4 KB).
    #[serde(default = "default_reserve")]
    pub reserve: Bytes,
    /// Headroom per (ingress port, priority): `"auto"` (2·C·d + 2·MTU + C·response_time) or a size.
    #[serde(default)]
    pub headroom: Headroom,
    /// The upstream's reaction time in the `"auto"` headroom.
    #[serde(default = "default_response")]
    pub response_time: Dur,
    #[serde(default)]
    pub mode: Mode,
    /// Pause time a PAUSE frame carries: quanta of 512 bit times (1–65535), or a time (turned into quanta
    /// at each link's rate, rounded up). Only `mode = "timer"` uses it.
    #[serde(default)]
    pub pause_time: PauseTime,
    /// A cycle of paused ports that lasts this long is a deadlock.
    #[serde(default = "default_deadlock_timeout")]
    pub deadlock_timeout: Dur,
    #[serde(default)]
    pub on_deadlock: OnDeadlock,
}

fn default_alpha() -> f64 {
    0.125
}
fn default_resume_offset() -> Bytes {
    Bytes(Size::Bytes(3_000))
}
fn default_reserve() -> Bytes {
    Bytes(Size::Bytes(0))
}
fn default_response() -> Dur {
    Dur(US)
}
fn default_deadlock_timeout() -> Dur {
    Dur(US * 1000)
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Xoff {
    #[default]
    Dynamic,
    Fixed(Size),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Headroom {
    #[default]
    Auto,
    Fixed(Size),
}

/// Pause time in quanta or as a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseTime {
    Quanta(u32),
    Time(Time),
}

impl Default for PauseTime {
    fn default() -> Self {
        PauseTime::Quanta(65535)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Paused until a RESUME frame arrives (HPCC ns-3's `qbb-net-device.cc`).
    #[default]
    UntilResume,
    /// Paused for the frame's pause time; the receiver refreshes it at half of it (IEEE 802.1Qbb).
    Timer,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDeadlock {
    /// Stop the run with exit 3 and the cycle in the message.
    #[default]
    Fail,
    /// Write the cycle to `meta.deadlocks` and go on.
    Record,
}

/// `"dynamic"`/`"auto"` or a size.
fn word_or_size<'de, D: Deserializer<'de>>(d: D, word: &str) -> Result<Option<Size>, D::Error> {
    let s = String::deserialize(d).map_err(|_| de::Error::custom(format!("\"{word}\" or a size such as \"100KB\"")))?;
    if s == word {
        return Ok(None);
    }
    crate::units::parse_size(&s).map(Some).map_err(|e| de::Error::custom(format!("\"{word}\" or a size: {e}")))
}

impl<'de> Deserialize<'de> for Xoff {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(word_or_size(d, "dynamic")?.map_or(Xoff::Dynamic, Xoff::Fixed))
    }
}

impl<'de> Deserialize<'de> for Headroom {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(word_or_size(d, "auto")?.map_or(Headroom::Auto, Headroom::Fixed))
    }
}

impl<'de> Deserialize<'de> for PauseTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        let bad = || de::Error::custom("quanta of 512 bit times (1 to 65535) or a time such as \"50us\"");
        match v {
            toml::Value::Integer(q) if (1..=65535).contains(&q) => Ok(PauseTime::Quanta(q as u32)),
            toml::Value::String(s) => match crate::units::parse_time(&s) {
                Ok(t) if t > 0 => Ok(PauseTime::Time(t)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

/// What the switches and hosts of a run need of `switch.pfc`, resolved.
#[derive(Debug, Clone)]
pub struct Pfc {
    /// Bit k set ⇔ priority k is lossless.
    pub lossless: u8,
    /// Index of each lossless priority among them (255: lossy).
    pub index: [u8; 8],
    pub n: usize,
    pub mode: Mode,
    pub pause_time: PauseTime,
    pub deadlock_timeout: Time,
    pub on_deadlock: OnDeadlock,
    pub xoff: Option<u64>,
    pub alpha: f64,
    pub resume_offset: u64,
    pub reserve: u64,
    pub headroom: Headroom,
    pub response_time: Time,
    pub mtu: u64,
    /// Record every frame in the `pauses` table.
    pub record: bool,
}

impl PfcCfg {
    /// Check the keys against the switch they configure.
    pub fn validate(&self, sw: &crate::config::SwitchCfg) -> Result<(), ConfigError> {
        let mtu = sw.mtu as u64;
        if self.priorities.is_empty() {
            return Err(ConfigError::new("switch.pfc.priorities", "name at least one lossless priority, e.g. [3]"));
        }
        for (i, &p) in self.priorities.iter().enumerate() {
            if p as u32 >= sw.queues {
                let msg = format!("priority {p} has no queue: the switch has {} (0–{}); raise switch.queues", sw.queues, sw.queues - 1);
                return Err(ConfigError::new(format!("switch.pfc.priorities[{i}]"), msg));
            }
            if self.priorities[..i].contains(&p) {
                return Err(ConfigError::new(format!("switch.pfc.priorities[{i}]"), format!("priority {p} is listed twice")));
            }
        }
        let finite = |field: &str, s: Size| -> Result<u64, ConfigError> {
            match s {
                Size::Inf => Err(ConfigError::new(field, "must be a finite size such as \"100KB\"")),
                s => Ok(s.bytes(mtu)),
            }
        };
        match self.xoff {
            Xoff::Dynamic => {
                if sw.buffer.is_none() {
                    let msg = "xoff = \"dynamic\" is a share of the switch buffer: set switch.buffer (e.g. \"12MB\"), or give xoff a size";
                    return Err(ConfigError::new("switch.pfc.xoff", msg));
                }
                if self.xon.is_some() {
                    return Err(ConfigError::new("switch.pfc.xon", "xon goes with a fixed xoff; with xoff = \"dynamic\" use resume_offset"));
                }
            }
            Xoff::Fixed(s) => {
                let x = finite("switch.pfc.xoff", s)?;
                if x < mtu {
                    return Err(ConfigError::new("switch.pfc.xoff", format!("must be at least one MTU ({mtu} B)")));
                }
                if let Some(on) = self.xon {
                    if finite("switch.pfc.xon", on.0)? >= x {
                        return Err(ConfigError::new("switch.pfc.xon", "must be below xoff"));
                    }
                }
            }
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(ConfigError::new("switch.pfc.alpha", "must be a positive number (e.g. 0.125)"));
        }
        finite("switch.pfc.resume_offset", self.resume_offset.0)?;
        finite("switch.pfc.reserve", self.reserve.0)?;
        if let Headroom::Fixed(h) = self.headroom {
            if finite("switch.pfc.headroom", h)? < 2 * mtu {
                let msg = format!("must hold at least two MTUs ({} B), or write \"auto\"", 2 * mtu);
                return Err(ConfigError::new("switch.pfc.headroom", msg));
            }
        }
        if self.deadlock_timeout.0 == 0 {
            return Err(ConfigError::new("switch.pfc.deadlock_timeout", "must be greater than zero"));
        }
        if self.mode == Mode::UntilResume && self.pause_time != PauseTime::default() {
            return Err(ConfigError::new("switch.pfc.pause_time", "only mode = \"timer\" uses a pause time"));
        }
        for q in self.priorities.iter().map(|&p| p as usize) {
            let aqm = sw.aqm.get(q);
            if aqm.may_drop() {
                let field = if sw.aqm.len().is_some() { format!("switch.aqm[{q}]") } else { "switch.aqm".into() };
                let msg = format!("queue {q} is lossless (switch.pfc): its AQM must only mark (non_ect = \"pass\", mode = \"ecn\")");
                return Err(ConfigError::new(field, msg));
            }
        }
        Ok(())
    }

    pub fn resolve(&self, mtu: u32, record: bool) -> Pfc {
        let mut index = [255u8; 8];
        let mut lossless = 0u8;
        for (i, &p) in self.priorities.iter().enumerate() {
            index[p as usize] = i as u8;
            lossless |= 1 << p;
        }
        let mtu = mtu as u64;
        let xoff = match self.xoff {
            Xoff::Dynamic => None,
            Xoff::Fixed(s) => Some(s.bytes(mtu)),
        };
        let resume_offset = match (xoff, self.xon) {
            (Some(x), Some(on)) => x - on.0.bytes(mtu),
            _ => self.resume_offset.0.bytes(mtu),
        };
        Pfc {
            lossless,
            index,
            n: self.priorities.len(),
            mode: self.mode,
            pause_time: self.pause_time,
            deadlock_timeout: self.deadlock_timeout.0,
            on_deadlock: self.on_deadlock,
            xoff,
            alpha: self.alpha,
            resume_offset,
            reserve: self.reserve.0.bytes(mtu),
            headroom: self.headroom,
            response_time: self.response_time.0,
            mtu,
            record,
        }
    }
}

impl Pfc {
    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless & (1 << (prio & 7)) != 0
    }

    /// Headroom of an ingress port whose link runs at `rate` with propagation `delay`: `aqm.md` §10's
    /// 2·C·d/8 + 2·MTU + C·t_response/8 under `"auto"`.
    pub fn headroom_of(&self, rate: u64, delay: Time) -> u64 {
        match self.headroom {
            Headroom::Fixed(s) => s.bytes(self.mtu),
            Headroom::Auto => {
                let bytes = |t: Time| (rate as u128 * t as u128).div_ceil(8 * SEC as u128) as u64;
                2 * bytes(delay) + 2 * self.mtu + bytes(self.response_time)
            }
        }
    }

    /// The pause time, in quanta, of a frame sent on a link at `rate`.
    pub fn quanta(&self, rate: u64) -> u64 {
        match self.pause_time {
            PauseTime::Quanta(q) => q as u64,
            PauseTime::Time(t) => ((rate as u128 * t as u128).div_ceil(512 * SEC as u128) as u64).clamp(1, 65535),
        }
    }
}

/// Ingress accounting of one (ingress port, lossless priority) at a switch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ingress {
    /// Bytes charged to the reserve and the shared pool.
    pub bytes: u64,
    /// Bytes charged to the headroom.
    pub hdrm: u64,
    /// A PAUSE is in force upstream (sent, no RESUME since).
    pub paused: bool,
    /// When the pending refresh of a timer-mode PAUSE is due (0: none).
    pub refresh_at: Time,
    /// The headroom of the ingress port (beside its counters: admission reads both).
    pub cap: u64,
}

/// A switch's lossless state (held in the switch, not boxed: every lossless packet reads it).
#[derive(Clone, Debug)]
pub struct SwitchPfc {
    /// Per (local port × lossless priority).
    pub ingress: Vec<Ingress>,
    pub n: usize,
}

impl SwitchPfc {
    #[inline]
    pub fn at(&mut self, port: u32, pi: u8) -> &mut Ingress {
        &mut self.ingress[port as usize * self.n + pi as usize]
    }
}

/// What an ingress counter's shared part is.
#[inline]
pub fn shared(bytes: u64, reserve: u64) -> u64 {
    bytes.saturating_sub(reserve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_to_the_spec_values() {
        // aqm.md §9–10 and HPCC's ns-3: dynamic XOFF at 1/8 of the free pool, RESUME 3 KB below it, no
        // reserve, "auto" headroom with 1 µs of reaction, until-resume pauses, a 1 ms deadlock timeout.
        let c: PfcCfg = toml::from_str("priorities = [0, 3]").unwrap();
        let p = c.resolve(1500, false);
        assert_eq!((p.lossless, p.n, p.index[3]), (0b1001, 2, 1));
        assert_eq!(p.xoff, None);
        assert_eq!(p.alpha, 0.125);
        assert_eq!((p.resume_offset, p.reserve), (3_000, 0));
        assert_eq!(p.headroom, Headroom::Auto);
        assert_eq!(p.response_time, US);
        assert_eq!((p.mode, p.pause_time, p.on_deadlock), (Mode::UntilResume, PauseTime::Quanta(65535), OnDeadlock::Fail));
        assert_eq!(p.deadlock_timeout, 1_000 * US);
        // A fixed xon is a resume offset below the fixed xoff.
        let c: PfcCfg = toml::from_str("priorities = [0]\nxoff = \"20KB\"\nxon = \"12KB\"").unwrap();
        assert_eq!(c.resolve(1500, false).resume_offset, 8_000);
    }
}
