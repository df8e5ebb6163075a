//! `transport = { kind = "rdma", cc = "dcqcn"|"timely"|"hpcc", preset = "…", tcd = false, … }`: the RoCE
//! transport's keys, the DCQCN presets of `spec/transports.md` C1 (the TIMELY ones of C2 are in
//! `timely.rs`, HPCC's of C4 in `hpcc.rs`; Part D names), their checks, and the resolved [`RdmaParams`].

use super::dcqcn::{self, AlphaUpdate};
use super::{hpcc, timely};
use crate::net::int::{INT_HEADER_BYTES, MAX_HOPS};
use crate::config::ConfigError;
use crate::units::{Bytes, Dur, Rate, Size, Time, MS, US};
use serde::Deserialize;

/// RoCEv2 header bytes on a data packet, on the same footing as TCP's 40 (IP and transport headers, no
/// Ethernet framing): IPv4 20 + UDP 8 + InfiniBand BTH 12 + ICRC 4. ACKs, NACKs and CNPs are minimum
/// frames (`ACK_BYTES`, 64), as every control packet of the simulator.
pub const ROCE_HEADER_BYTES: u32 = 44;

/// The rate control of the queue pair. One variant per algorithm, each a file beside this one (IB CC to
/// come).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    #[default]
    Dcqcn,
    Timely,
    Hpcc,
    IbCc,
}

impl CcKind {
    pub fn name(self) -> &'static str {
        match self {
            CcKind::Dcqcn => "dcqcn",
            CcKind::Timely => "timely",
            CcKind::Hpcc => "hpcc",
            CcKind::IbCc => "ib_cc",
        }
    }
    /// The preset a `cc` gets when none is named.
    fn default_preset(self) -> Preset {
        match self {
            CcKind::Dcqcn => Preset::DcqcnPaper,
            CcKind::Timely => Preset::TimelyRef,
            CcKind::Hpcc => Preset::Hpcc,
            CcKind::IbCc => Preset::IbCc,
        }
    }
}

/// A named parameter set (C1's three columns, C2's two, C4's one).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// DCQCN paper as commonly cited (TCD's default): g = 1/256, N = 50 µs, K = 55 µs, T = 55 µs,
    /// BC = 10 MB, F = 5, R_AI = 40 Mb/s, R_HAI = 400 Mb/s (10·R_AI), R_min = 100 Mb/s.
    #[default]
    DcqcnPaper,
    /// `bobzhuyb/ns3-rdma` defaults: g = 1/16, N = 50 µs, K = 55 µs, T = 1500 µs, BC = 150 KB, F = 5,
    /// R_AI = 5 Mb/s, R_HAI = 50 Mb/s, R_min = 100 Mb/s; T and BC halve in hyper increase, R_T/8 reset.
    DcqcnNs3,
    /// HPCC ns-3's Mellanox-like DCQCN (ACC's default): g = 1/256, a CNP for every CE packet, K = 1 µs
    /// periodic α, rate cut checked every 4 µs, T = 300 µs, no byte counter, F = 1,
    /// R_AI = 5 Mb/s·C/25G, R_HAI = 50 Mb/s·C/25G, R_min = 100 Mb/s, rate unchanged and α = 1 at the
    /// first CNP.
    DcqcnHpcc,
    /// TIMELY, the authors' reference snippet (TCD's default; `timely::Spec::reference`).
    TimelyRef,
    /// TIMELY as HPCC's ns-3 runs it (`timely::Spec::hpcc`).
    TimelyHpcc,
    /// HPCC as its ns-3 ships it (`hpcc::Spec::preset`): η = 0.95, maxStage = 0, R_AI = 10 Mb/s·C/25G,
    /// R_min = 100 Mb/s, T = the topology's largest base RTT, fast react.
    Hpcc,
    /// InfiniBand CC (`ib_cc::Spec::preset`): CCTI increase 1, limit 127, min 0, timer 100 × 1.024 µs,
    /// linear CCT of 1/8 packet time per index, a BECN per FECN packet.
    IbCc,
}

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::DcqcnPaper => "dcqcn_paper",
            Preset::DcqcnNs3 => "dcqcn_ns3",
            Preset::DcqcnHpcc => "dcqcn_hpcc",
            Preset::TimelyRef => "timely_ref",
            Preset::TimelyHpcc => "timely_hpcc",
            Preset::Hpcc => "hpcc",
            Preset::IbCc => "ib_cc",
        }
    }
    /// The congestion control the preset is for.
    pub fn cc(self) -> CcKind {
        match self {
            Preset::DcqcnPaper | Preset::DcqcnNs3 | Preset::DcqcnHpcc => CcKind::Dcqcn,
            Preset::TimelyRef | Preset::TimelyHpcc => CcKind::Timely,
            Preset::Hpcc => CcKind::Hpcc,
            Preset::IbCc => CcKind::IbCc,
        }
    }
}

/// A rate as given, or scaled with the sender's line rate C (HPCC's `× C/25G`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateVal {
    Bps(u64),
    /// bps at a 25 Gb/s line rate, scaled by C/25G.
    Per25G(u64),
    /// bps at a 10 Gb/s line rate, scaled by C/10G (TIMELY's δ).
    Per10G(u64),
}

impl RateVal {
    pub fn at(self, line: u64) -> f64 {
        match self {
            RateVal::Bps(b) => b as f64,
            RateVal::Per25G(b) => b as f64 * (line as f64 / 25e9),
            RateVal::Per10G(b) => b as f64 * (line as f64 / 10e9),
        }
    }
}

/// DCQCN's parameters before the line rate is known (a preset with the user's overrides).
#[derive(Debug, Clone, Copy)]
pub struct DcqcnSpec {
    pub g: f64,
    pub cnp_interval: Time,
    pub alpha_timer: Time,
    pub alpha_update: AlphaUpdate,
    pub rate_decrease_interval: Time,
    pub rate_increase_timer: Time,
    pub byte_counter: Option<u64>,
    pub f: u32,
    pub rate_ai: RateVal,
    pub rate_hai: RateVal,
    pub rate_min: RateVal,
    pub clamp_target_rate: bool,
    pub target_rate_reset: bool,
    pub rate_on_first_cnp: Option<f64>,
    pub hyper_halving: bool,
}

impl DcqcnSpec {
    /// The preset's DCQCN parameters (a TIMELY or HPCC preset has none: DCQCN's paper values stand in,
    /// unused).
    pub fn preset(p: Preset) -> DcqcnSpec {
        let mbps = |m: u64| RateVal::Bps(m * 1_000_000);
        match p {
            Preset::DcqcnPaper | Preset::TimelyRef | Preset::TimelyHpcc | Preset::Hpcc | Preset::IbCc => DcqcnSpec {
                g: 1.0 / 256.0,
                cnp_interval: 50 * US,
                alpha_timer: 55 * US,
                alpha_update: AlphaUpdate::OnCnp,
                rate_decrease_interval: 0,
                rate_increase_timer: 55 * US,
                byte_counter: Some(10_000_000),
                f: 5,
                rate_ai: mbps(40),
                rate_hai: mbps(400),
                rate_min: mbps(100),
                clamp_target_rate: false,
                target_rate_reset: false,
                rate_on_first_cnp: None,
                hyper_halving: false,
            },
            Preset::DcqcnNs3 => DcqcnSpec {
                g: 1.0 / 16.0,
                cnp_interval: 50 * US,
                alpha_timer: 55 * US,
                alpha_update: AlphaUpdate::OnCnp,
                rate_decrease_interval: 0,
                rate_increase_timer: 1500 * US,
                byte_counter: Some(150_000),
                f: 5,
                rate_ai: mbps(5),
                rate_hai: mbps(50),
                rate_min: mbps(100),
                clamp_target_rate: false,
                target_rate_reset: true,
                rate_on_first_cnp: None,
                hyper_halving: true,
            },
            Preset::DcqcnHpcc => DcqcnSpec {
                g: 1.0 / 256.0,
                cnp_interval: 0,
                alpha_timer: US,
                alpha_update: AlphaUpdate::Periodic,
                rate_decrease_interval: 4 * US,
                rate_increase_timer: 300 * US,
                byte_counter: None,
                f: 1,
                rate_ai: RateVal::Per25G(5_000_000),
                rate_hai: RateVal::Per25G(50_000_000),
                rate_min: mbps(100),
                clamp_target_rate: false,
                target_rate_reset: false,
                rate_on_first_cnp: Some(1.0),
                hyper_halving: false,
            },
        }
    }

    /// The RP's parameters at line rate `line` (bps).
    pub fn at(&self, line: u64) -> dcqcn::Params {
        dcqcn::Params {
            g: self.g,
            alpha_timer: self.alpha_timer,
            alpha_update: self.alpha_update,
            rate_decrease_interval: self.rate_decrease_interval,
            rate_increase_timer: self.rate_increase_timer,
            byte_counter: self.byte_counter,
            f: self.f,
            rate_ai: self.rate_ai.at(line),
            rate_hai: self.rate_hai.at(line),
            rate_min: self.rate_min.at(line).min(line as f64),
            line_rate: line as f64,
            clamp_target_rate: self.clamp_target_rate,
            target_rate_reset: self.target_rate_reset,
            rate_on_first_cnp: self.rate_on_first_cnp,
            hyper_halving: self.hyper_halving,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlphaUpdateKey {
    OnCnp,
    Periodic,
}

/// The keys. Every DCQCN parameter left out comes from `preset`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    /// The rate control: `dcqcn`, `timely` or `hpcc`.
    #[serde(default)]
    pub cc: CcKind,
    /// A parameter set of `cc` (default: `dcqcn_paper`, `timely_ref`, `hpcc`).
    pub preset: Option<Preset>,
    /// The TCD variant (`spec/tcd.md` §6): the sender reacts to UE (undetermined) feedback apart from CE.
    pub tcd: Option<bool>,
    // --- DCQCN ---
    /// EWMA gain of α, in (0, 1].
    pub g: Option<f64>,
    /// NP: at most one CNP per flow per this interval ("0us": one per CE-marked packet).
    pub cnp_interval: Option<Dur>,
    /// K: alpha period.
    pub alpha_timer: Option<Dur>,
    pub alpha_update: Option<AlphaUpdateKey>,
    /// "0us": cut on each CNP; else check this often whether a CNP came (HPCC: 4 µs).
    pub rate_decrease_interval: Option<Dur>,
    /// T.
    pub rate_increase_timer: Option<Dur>,
    /// BC; "inf": no byte counter (timer only).
    pub byte_counter: Option<Bytes>,
    /// F: fast-recovery steps.
    pub f: Option<u32>,
    pub rate_ai: Option<Rate>,
    pub rate_hai: Option<Rate>,
    pub rate_min: Option<Rate>,
    pub clamp_target_rate: Option<bool>,
    pub target_rate_reset: Option<bool>,
    /// At the first CNP: α ← 1 and R_T = R_C ← this fraction of R_C, in (0, 1].
    pub rate_on_first_cnp: Option<f64>,
    pub hyper_halving: Option<bool>,
    // --- TIMELY ---
    /// a: EWMA weight of the newest RTT difference, in (0, 1].
    pub ewma: Option<f64>,
    pub t_low: Option<Dur>,
    pub t_high: Option<Dur>,
    /// β: multiplicative-decrease factor (TCD's default 1.6).
    pub beta: Option<f64>,
    /// The fixed minimum RTT that normalises the gradient.
    pub min_rtt: Option<Dur>,
    /// Negative gradients (per completion) or increases (per RTT) in a row before hyper increase.
    pub hai_thresh: Option<u32>,
    // --- HPCC ---
    /// η: the target utilisation, in (0, 1].
    pub eta: Option<f64>,
    /// maxStage: additive-increase stages before a multiplicative update (0: always multiplicative).
    pub max_stage: Option<u32>,
    /// T: the base RTT HPCC normalises by (default: the topology's largest base RTT).
    pub base_rtt: Option<Dur>,
    /// Update the rate on every ACK, not only once per RTT.
    pub fast_react: Option<bool>,
    // --- IB CC ---
    /// CCTI added per BECN.
    pub ccti_increase: Option<u32>,
    /// The CCT's last index.
    pub ccti_limit: Option<u32>,
    /// CCTI never decreases below this.
    pub ccti_min: Option<u32>,
    /// Decrement period, in units of 1.024 µs.
    pub ccti_timer: Option<u32>,
    /// At most one BECN per flow per this interval (default 0: one per FECN-marked packet).
    pub becn_interval: Option<Dur>,
    // --- all ---
    /// Payload bytes per packet; default MTU − 44 (RoCEv2 headers).
    pub mss: Option<Bytes>,
    /// The receiver ACKs every this many in-order packets (and the last one); default 1.
    pub ack_interval: Option<u32>,
    /// At most one NACK per flow per this interval for the same expected sequence (HPCC ns-3: 500 µs).
    pub nack_interval: Option<Dur>,
    /// Retransmission timeout for a lost tail: go back to the first unacknowledged byte after this long
    /// without progress (default 1 ms).
    pub rto: Option<Dur>,
    /// Switch queue / priority of ACKs, NACKs and CNPs (0 is the highest under strict priority).
    pub control_priority: Option<u8>,
    /// Most bytes in flight per queue pair ("inf": no window, pure rate control).
    pub window: Option<Bytes>,
}

/// The resolved transport: what every connection of a traffic entry shares.
#[derive(Clone, Copy, Debug)]
pub struct RdmaParams {
    pub cc: CcKind,
    pub preset: Preset,
    /// Whether any rate-control key overrides the preset (the label shows it).
    pub custom: bool,
    pub tcd: bool,
    pub dcqcn: DcqcnSpec,
    pub timely: timely::Spec,
    pub hpcc: hpcc::Spec,
    pub ib_cc: super::ib_cc::Spec,
    pub mss: u32,
    pub ack_interval: u32,
    pub nack_interval: Time,
    pub rto: Time,
    pub control_priority: u8,
    pub window: u64,
}

impl crate::transport::Resolved for RdmaParams {
    type Conn = super::Conn;
    fn connect(&self, flow: u32, size: u64, line_rate: u64) -> super::Conn {
        super::Conn::new(flow, size, *self, line_rate)
    }
    fn mss(&self) -> u32 {
        self.mss
    }
    fn handshake(&self) -> bool {
        false
    }
    /// `rdma:dcqcn(dcqcn_paper)`; `+tcd` for the TCD variant, `+custom` when keys override the preset.
    fn label(&self) -> String {
        let tcd = if self.tcd { "+tcd" } else { "" };
        let custom = if self.custom { "+custom" } else { "" };
        format!("rdma:{}({}){tcd}{custom}", self.cc.name(), self.preset.name())
    }
    fn header_bytes(&self) -> u32 {
        self.data_header_bytes()
    }
    /// The NIC paces a queue pair one packet at a time: RTT variation goes on its ACKs.
    fn delay_on_data(&self) -> bool {
        false
    }
    fn check_line_rate(&self, field: &str, slowest: u64) -> Result<(), ConfigError> {
        let min = match self.cc {
            CcKind::Dcqcn => self.dcqcn.rate_min.at(slowest),
            CcKind::Timely => self.timely.rate_min.at(slowest),
            CcKind::Hpcc => self.hpcc.rate_min.at(slowest),
            CcKind::IbCc => return Ok(()), // its slowest rate is a fraction of the line rate
        };
        if min > slowest as f64 {
            let msg = format!("{} exceeds the slowest host link ({slowest} bps); lower it", fmt_rate(min));
            return Err(ConfigError::new(format!("{field}.rate_min"), msg));
        }
        Ok(())
    }
    /// HPCC: T from the topology unless given (`GLOBAL_T`), and every path within the INT stack.
    fn at_topology(&mut self, field: &str, paths: &mut dyn FnMut() -> (Time, u32)) -> Result<(), ConfigError> {
        if self.cc != CcKind::Hpcc {
            return Ok(());
        }
        let (rtt, hops) = paths();
        if hops as usize > MAX_HOPS {
            let msg = format!("HPCC's INT records at most {MAX_HOPS} switch hops; a path of this topology crosses {hops} switches");
            return Err(ConfigError::new(format!("{field}.cc"), msg));
        }
        self.hpcc.base_rtt.get_or_insert(rtt.max(1));
        Ok(())
    }
}

impl RdmaParams {
    /// Header bytes of a data packet: RoCEv2's, and with HPCC the INT header's.
    pub fn data_header_bytes(&self) -> u32 {
        match self.cc {
            CcKind::Hpcc => ROCE_HEADER_BYTES + INT_HEADER_BYTES,
            _ => ROCE_HEADER_BYTES,
        }
    }
}

fn fmt_rate(bps: f64) -> String {
    format!("{} bps", bps as u64)
}

impl crate::transport::Setup for Cfg {
    type Resolved = RdmaParams;
    type Conn = super::Conn;
    fn resolve(&self, field: &str, mtu: u32) -> Result<RdmaParams, ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let err = |k: &str, m: &str| Err(ConfigError::new(f(k), m.to_string()));
        let preset = self.preset.unwrap_or(self.cc.default_preset());
        if preset.cc() != self.cc {
            let msg = format!("`{}` is a {} preset; cc is `{}` (its presets: {})", preset.name(), preset.cc().name(), self.cc.name(), presets_of(self.cc));
            return Err(ConfigError::new(f("preset"), msg));
        }
        self.keys_match_cc(field)?;
        let tcd = self.tcd.unwrap_or(false);
        let mut d = DcqcnSpec::preset(preset);
        if let Some(g) = self.g {
            if !(g > 0.0 && g <= 1.0) {
                return err("g", "must be in (0, 1], e.g. 0.00390625 (1/256)");
            }
            d.g = g;
        }
        let dur = |v: Option<Dur>, k: &str, zero_ok: bool, into: &mut Time| -> Result<(), ConfigError> {
            if let Some(Dur(t)) = v {
                if t == 0 && !zero_ok {
                    return Err(ConfigError::new(f(k), "must be greater than zero, e.g. \"55us\""));
                }
                *into = t;
            }
            Ok(())
        };
        dur(self.cnp_interval, "cnp_interval", true, &mut d.cnp_interval)?;
        dur(self.alpha_timer, "alpha_timer", false, &mut d.alpha_timer)?;
        dur(self.rate_decrease_interval, "rate_decrease_interval", true, &mut d.rate_decrease_interval)?;
        dur(self.rate_increase_timer, "rate_increase_timer", false, &mut d.rate_increase_timer)?;
        if let Some(a) = self.alpha_update {
            d.alpha_update = match a {
                AlphaUpdateKey::OnCnp => AlphaUpdate::OnCnp,
                AlphaUpdateKey::Periodic => AlphaUpdate::Periodic,
            };
        }
        if let Some(Bytes(b)) = self.byte_counter {
            d.byte_counter = match b {
                Size::Inf => None,
                s if s.bytes(mtu as u64) == 0 => return err("byte_counter", "must be a positive size, or \"inf\" for timer-only increase"),
                s => Some(s.bytes(mtu as u64)),
            };
        }
        if let Some(v) = self.f {
            if v == 0 {
                return err("f", "must be at least 1 fast-recovery step");
            }
            d.f = v;
        }
        // Rates given as keys are absolute (a preset's may scale with the line rate); zero and negative
        // rates are refused by the `Rate` unit itself, with this key's path.
        for (v, into) in [(self.rate_ai, &mut d.rate_ai), (self.rate_hai, &mut d.rate_hai), (self.rate_min, &mut d.rate_min)] {
            if let Some(Rate(r)) = v {
                *into = RateVal::Bps(r);
            }
        }
        let t = match self.cc {
            CcKind::Timely => self.timely_keys(field, preset, tcd)?,
            _ => timely::Spec::reference(), // unused
        };
        let ib = self.ib_cc_keys(field)?;
        if tcd && self.cc == CcKind::Hpcc {
            return err("tcd", "has no HPCC variant (TCD is for dcqcn, timely and ib_cc)");
        }
        let h = self.hpcc_keys(field)?;
        if let Some(x) = self.rate_on_first_cnp {
            if !(x > 0.0 && x <= 1.0) {
                return err("rate_on_first_cnp", "must be a fraction of the current rate in (0, 1] (1.0: unchanged)");
            }
            d.rate_on_first_cnp = Some(x);
        }
        d.clamp_target_rate = self.clamp_target_rate.unwrap_or(d.clamp_target_rate);
        d.target_rate_reset = self.target_rate_reset.unwrap_or(d.target_rate_reset);
        d.hyper_halving = self.hyper_halving.unwrap_or(d.hyper_halving);
        let custom = self.ewma.is_some()
            || self.t_low.is_some()
            || self.t_high.is_some()
            || self.beta.is_some()
            || self.min_rtt.is_some()
            || self.hai_thresh.is_some()
            || self.eta.is_some()
            || self.max_stage.is_some()
            || self.base_rtt.is_some()
            || self.fast_react.is_some()
            || self.ccti_increase.is_some()
            || self.ccti_limit.is_some()
            || self.ccti_min.is_some()
            || self.ccti_timer.is_some()
            || self.becn_interval.is_some()
            || self.g.is_some()
            || self.cnp_interval.is_some()
            || self.alpha_timer.is_some()
            || self.alpha_update.is_some()
            || self.rate_decrease_interval.is_some()
            || self.rate_increase_timer.is_some()
            || self.byte_counter.is_some()
            || self.f.is_some()
            || self.rate_ai.is_some()
            || self.rate_hai.is_some()
            || self.rate_min.is_some()
            || self.clamp_target_rate.is_some()
            || self.target_rate_reset.is_some()
            || self.rate_on_first_cnp.is_some()
            || self.hyper_halving.is_some();
        // The data packet's headers: RoCEv2's, and HPCC's INT header.
        let hdr = ROCE_HEADER_BYTES + if self.cc == CcKind::Hpcc { INT_HEADER_BYTES } else { 0 };
        let max_mss = mtu.saturating_sub(hdr);
        let mss = match self.mss {
            None => max_mss,
            Some(Bytes(m)) => {
                let b = m.bytes(mtu as u64);
                if m == Size::Inf || b == 0 || b > max_mss as u64 {
                    let msg = format!("must be between 1 B and MTU − {hdr} = {max_mss} B");
                    return Err(ConfigError::new(f("mss"), msg));
                }
                b as u32
            }
        };
        let ack_interval = self.ack_interval.unwrap_or(1);
        if ack_interval == 0 {
            return err("ack_interval", "must be at least 1 packet per ACK");
        }
        let nack_interval = self.nack_interval.map_or(500 * US, |d| d.0);
        let rto = self.rto.map_or(MS, |d| d.0);
        if rto == 0 {
            return err("rto", "must be greater than zero, e.g. \"1ms\"");
        }
        let control_priority = self.control_priority.unwrap_or(0);
        if control_priority > 7 {
            return err("control_priority", "must be a priority 0–7 (0 is the highest under strict priority)");
        }
        let window = match self.window {
            None => u64::MAX,
            Some(Bytes(Size::Inf)) => u64::MAX,
            Some(Bytes(w)) if w.bytes(mtu as u64) < mss as u64 => {
                return Err(ConfigError::new(f("window"), format!("must hold at least one packet ({mss} B), or \"inf\"")))
            }
            Some(Bytes(w)) => w.bytes(mtu as u64),
        };
        if self.cc == CcKind::Hpcc && self.window.is_some() {
            return err("window", "is HPCC's own W with cc = \"hpcc\" (VAR_WIN): remove the key");
        }
        Ok(RdmaParams { cc: self.cc, preset, custom, tcd, dcqcn: d, timely: t, hpcc: h, ib_cc: ib, mss, ack_interval, nack_interval, rto, control_priority, window })
    }
}

/// The presets of a congestion control, for errors.
fn presets_of(cc: CcKind) -> &'static str {
    match cc {
        CcKind::Dcqcn => "dcqcn_paper, dcqcn_ns3, dcqcn_hpcc",
        CcKind::Timely => "timely_ref, timely_hpcc",
        CcKind::Hpcc => "hpcc",
        CcKind::IbCc => "ib_cc",
    }
}

impl Cfg {
    /// A key of one rate control given with another is a mistake the user must hear of.
    fn keys_match_cc(&self, field: &str) -> Result<(), ConfigError> {
        let dcqcn = [
            ("g", self.g.is_some()),
            ("cnp_interval", self.cnp_interval.is_some()),
            ("alpha_timer", self.alpha_timer.is_some()),
            ("alpha_update", self.alpha_update.is_some()),
            ("rate_decrease_interval", self.rate_decrease_interval.is_some()),
            ("rate_increase_timer", self.rate_increase_timer.is_some()),
            ("byte_counter", self.byte_counter.is_some()),
            ("f", self.f.is_some()),
            ("clamp_target_rate", self.clamp_target_rate.is_some()),
            ("target_rate_reset", self.target_rate_reset.is_some()),
            ("rate_on_first_cnp", self.rate_on_first_cnp.is_some()),
            ("hyper_halving", self.hyper_halving.is_some()),
        ];
        let timely = [
            ("ewma", self.ewma.is_some()),
            ("t_low", self.t_low.is_some()),
            ("t_high", self.t_high.is_some()),
            ("beta", self.beta.is_some()),
            ("min_rtt", self.min_rtt.is_some()),
            ("hai_thresh", self.hai_thresh.is_some()),
        ];
        let ib_cc = [
            ("ccti_increase", self.ccti_increase.is_some()),
            ("ccti_limit", self.ccti_limit.is_some()),
            ("ccti_min", self.ccti_min.is_some()),
            ("ccti_timer", self.ccti_timer.is_some()),
            ("becn_interval", self.becn_interval.is_some()),
        ];
        let hpcc = [
            ("eta", self.eta.is_some()),
            ("max_stage", self.max_stage.is_some()),
            ("base_rtt", self.base_rtt.is_some()),
            ("fast_react", self.fast_react.is_some()),
        ];
        // R_HAI is DCQCN's and TIMELY's; R_AI and R_min are every control's.
        let both = [("rate_hai", self.rate_hai.is_some())];
        // R_AI and R_min are not IB CC's (its rate is the CCT's).
        let rates = [("rate_ai", self.rate_ai.is_some()), ("rate_min", self.rate_min.is_some())];
        let groups: [(&str, &[(&str, bool)], &[CcKind]); 6] = [
            ("dcqcn", &dcqcn, &[CcKind::Dcqcn]),
            ("timely", &timely, &[CcKind::Timely]),
            ("hpcc", &hpcc, &[CcKind::Hpcc]),
            ("dcqcn\" or \"timely", &both, &[CcKind::Dcqcn, CcKind::Timely]),
            ("ib_cc", &ib_cc, &[CcKind::IbCc]),
            ("dcqcn\", \"timely\" or \"hpcc", &rates, &[CcKind::Dcqcn, CcKind::Timely, CcKind::Hpcc]),
        ];
        for (other, keys, owners) in groups {
            if owners.contains(&self.cc) {
                continue;
            }
            if let Some((k, _)) = keys.iter().find(|(_, given)| *given) {
                let msg = format!("is a key of cc = \"{other}\"; this transport's cc is \"{}\" (set cc, or remove the key)", self.cc.name());
                return Err(ConfigError::new(format!("{field}.{k}"), msg));
            }
        }
        Ok(())
    }

    /// HPCC's keys over its preset (the preset itself when `cc` is another control: unused).
    fn hpcc_keys(&self, field: &str) -> Result<hpcc::Spec, ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let mut h = hpcc::Spec::preset();
        if self.cc != CcKind::Hpcc {
            return Ok(h);
        }
        for (v, into) in [(self.rate_ai, &mut h.rate_ai), (self.rate_min, &mut h.rate_min)] {
            if let Some(Rate(r)) = v {
                *into = RateVal::Bps(r);
            }
        }
        if let Some(e) = self.eta {
            if !(e > 0.0 && e <= 1.0) {
                return Err(ConfigError::new(f("eta"), "must be a target utilisation in (0, 1], e.g. 0.95"));
            }
            h.eta = e;
        }
        if let Some(m) = self.max_stage {
            h.max_stage = m;
        }
        if let Some(Dur(t)) = self.base_rtt {
            if t == 0 {
                return Err(ConfigError::new(f("base_rtt"), "must be greater than zero, e.g. \"8us\" (or leave it out: the topology's largest base RTT)"));
            }
            h.base_rtt = Some(t);
        }
        h.fast_react = self.fast_react.unwrap_or(h.fast_react);
        Ok(h)
    }

    /// TIMELY's keys over its preset.
    fn timely_keys(&self, field: &str, preset: Preset, tcd: bool) -> Result<timely::Spec, ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let mut t = match preset {
            Preset::TimelyHpcc => timely::Spec::hpcc(),
            _ => timely::Spec::reference(),
        };
        for (v, into) in [(self.rate_ai, &mut t.rate_ai), (self.rate_hai, &mut t.rate_hai), (self.rate_min, &mut t.rate_min)] {
            if let Some(Rate(r)) = v {
                *into = RateVal::Bps(r);
            }
        }
        if let Some(a) = self.ewma {
            if !(a > 0.0 && a <= 1.0) {
                return Err(ConfigError::new(f("ewma"), "must be in (0, 1], e.g. 0.02 (the reference) or 0.875 (HPCC's ns-3)"));
            }
            t.ewma = a;
        }
        t.t_low = self.t_low.map_or(t.t_low, |d| d.0);
        t.t_high = self.t_high.map_or(t.t_high, |d| d.0);
        if t.t_high <= t.t_low {
            return Err(ConfigError::new(f("t_high"), "must be above t_low"));
        }
        t.tcd = tcd;
        if tcd {
            t.beta = timely::TCD_BETA;
        }
        if let Some(b) = self.beta {
            if !(b > 0.0 && b.is_finite()) {
                return Err(ConfigError::new(f("beta"), "must be a positive factor, e.g. 0.8 (1.6 with TCD)"));
            }
            t.beta = b;
        }
        if let Some(Dur(m)) = self.min_rtt {
            if m == 0 {
                return Err(ConfigError::new(f("min_rtt"), "must be greater than zero, e.g. \"20us\""));
            }
            t.min_rtt = m;
        }
        if let Some(h) = self.hai_thresh {
            t.hai_thresh = h;
        }
        Ok(t)
    }
}
