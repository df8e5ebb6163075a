//! `transport = { kind = "tcp", … }`: TCP's keys, defaults and checks, and the resolved [`TcpParams`].

use super::cc::CcCfg;
use crate::config::{ConfigError, DelAck};
use crate::net::packet::HEADER_BYTES;
use crate::units::{Bytes, Dur, Size, Time, MS, SEC};
use serde::Deserialize;

/// The largest `max_rto`: 2⁴⁸ − 1 ps (281 s), so that 16 doublings still fit in 64 bits.
const MAX_RTO: Time = (1 << 48) - 1;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    /// Congestion control: a name, `reno` (with `ecn = true`: ECN*), `dctcp`, …, or a table
    /// `{ kind = "<name>", … }` with the keys of that control's file (`cc/<name>.rs`).
    #[serde(default = "default_cc")]
    pub cc: CcCfg,
    /// ECN negotiated for the flow; DCTCP implies it.
    pub ecn: Option<bool>,
    #[serde(default = "default_min_rto")]
    pub min_rto: Dur,
    /// Ceiling of the retransmission timeout, backoff included (RFC 6298 §2.5 allows ≥ 60 s).
    #[serde(default = "default_max_rto")]
    pub max_rto: Dur,
    /// Initial window in segments.
    #[serde(default = "default_init_cwnd")]
    pub init_cwnd: u32,
    #[serde(default = "default_delack")]
    pub delayed_ack: DelAck,
    #[serde(default = "default_delack_timeout")]
    pub delayed_ack_timeout: Dur,
    /// Segment payload; default MTU − 40.
    pub mss: Option<Bytes>,
    /// Receive window advertised by the receiver (bytes, after window scaling).
    #[serde(default = "default_rwnd")]
    pub rwnd: Bytes,
    /// Window-scale shift the receiver advertises (0–14).
    #[serde(default = "default_wscale")]
    pub wscale: u8,
    /// Exchange SYN/SYN-ACK before the first byte.
    #[serde(default)]
    pub handshake: bool,
    /// With ECN: the SYN-ACK and pure ACKs are ECN-capable too (Linux's DCTCP sets ECT on the socket
    /// during the handshake, so every packet carries it); else they are Not-ECT as RFC 3168 has them. (The
    /// SYN of an ECN connection carries ECT either way, as Linux's DCTCP sends it.)
    #[serde(default)]
    pub ect_control: bool,
    /// DCTCP's alpha gain g (RFC 8257: 1/16).
    #[serde(default = "default_dctcp_g")]
    pub dctcp_g: f64,
    /// TCP Small Queues: the most data a connection keeps queued at its own host ("inf": off).
    #[serde(default = "default_tsq")]
    pub tsq_limit: Bytes,
    /// RFC 2861's congestion-window validation as Linux's `tcp_slow_start_after_idle` (default 1): data
    /// written to a connection that has had nothing in flight for longer than its RTO restarts from
    /// min(init_cwnd, cwnd), halved once per RTO idle. Only connections that are written to again after
    /// going idle see it (persistent connections, `closed_loop`).
    #[serde(default = "default_true")]
    pub slow_start_after_idle: bool,
}

fn default_cc() -> CcCfg {
    CcCfg::Reno(Default::default())
}
fn default_min_rto() -> Dur {
    Dur(5 * MS)
}
fn default_max_rto() -> Dur {
    Dur(60 * SEC)
}
fn default_init_cwnd() -> u32 {
    10
}
fn default_delack() -> DelAck {
    DelAck(1)
}
fn default_delack_timeout() -> Dur {
    Dur(MS)
}
fn default_rwnd() -> Bytes {
    Bytes(Size::Bytes(1 << 30))
}
fn default_wscale() -> u8 {
    14
}
fn default_tsq() -> Bytes {
    // Linux's tcp_limit_output_bytes before 5.x.
    Bytes(Size::Bytes(262_144))
}
fn default_true() -> bool {
    true
}
fn default_dctcp_g() -> f64 {
    1.0 / 16.0
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            cc: default_cc(),
            ecn: None,
            min_rto: default_min_rto(),
            max_rto: default_max_rto(),
            init_cwnd: default_init_cwnd(),
            delayed_ack: default_delack(),
            delayed_ack_timeout: default_delack_timeout(),
            mss: None,
            rwnd: default_rwnd(),
            wscale: default_wscale(),
            handshake: false,
            ect_control: false,
            dctcp_g: default_dctcp_g(),
            tsq_limit: default_tsq(),
            slow_start_after_idle: true,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct TcpParams {
    pub cc: CcCfg,
    pub ecn: bool,
    pub mss: u32,
    pub init_cwnd: u32,
    pub min_rto: Time,
    pub max_rto: Time,
    pub delack: u32,
    pub delack_timeout: Time,
    pub rwnd: u64,
    pub wscale: u8,
    pub handshake: bool,
    /// ECN-capable SYN-ACK and pure ACKs (with `ecn`).
    pub ect_control: bool,
    pub dctcp_g: f64,
    /// TCP Small Queues: most payload bytes a connection keeps queued at its own host (extra-delay line
    /// and NIC queue) before it waits for them to leave; `u64::MAX` turns it off.
    pub tsq_limit: u64,
    /// Restart the window after an idle period longer than the RTO (RFC 2861; Linux's default).
    pub slow_start_after_idle: bool,
}

impl crate::transport::Resolved for TcpParams {
    type Conn = super::Conn;
    fn connect(&self, flow: u32, size: u64, _line_rate: u64) -> super::Conn {
        super::Conn::new(flow, size, *self)
    }
    fn mss(&self) -> u32 {
        self.mss
    }
    fn handshake(&self) -> bool {
        self.handshake
    }
    fn established(&self) -> TcpParams {
        TcpParams { handshake: false, ..*self }
    }
    fn appends(&self) -> bool {
        true
    }
    /// `tcp:dctcp`, `tcp:reno+ecn`, `tcp:reno`.
    fn label(&self) -> String {
        let cc = self.cc.name();
        if self.ecn && !self.cc.needs_ecn() {
            format!("tcp:{cc}+ecn")
        } else {
            format!("tcp:{cc}")
        }
    }
}

impl crate::transport::Setup for Cfg {
    type Resolved = TcpParams;
    type Conn = super::Conn;
    /// Check every key and resolve units; `field` is the table's path for errors.
    fn resolve(&self, field: &str, mtu: u32) -> Result<TcpParams, ConfigError> {
        let f = |k: &str| format!("{field}.{k}");
        let ecn = match (self.cc, self.ecn) {
            (cc, Some(false)) if cc.needs_ecn() => {
                return Err(ConfigError::new(f("ecn"), format!("`{}` needs ECN; remove `ecn = false`", cc.name())))
            }
            (cc, _) if cc.needs_ecn() => true,
            (_, e) => e.unwrap_or(false),
        };
        if self.tsq_limit.0 != Size::Inf && self.tsq_limit.0.bytes(mtu as u64) < mtu as u64 {
            return Err(ConfigError::new(f("tsq_limit"), format!("must be at least one MTU ({mtu} B), or \"inf\" to turn it off")));
        }
        if self.init_cwnd == 0 {
            return Err(ConfigError::new(f("init_cwnd"), "must be at least 1 segment"));
        }
        if let Some(m) = self.mss {
            let b = m.0.bytes(mtu as u64);
            if m.0 == Size::Inf || b == 0 || b + HEADER_BYTES as u64 > mtu as u64 {
                return Err(ConfigError::new(f("mss"), format!("must be between 1 B and MTU − 40 = {} B", mtu - HEADER_BYTES)));
            }
        }
        self.cc.validate(&f("cc"))?;
        if self.wscale > 14 {
            return Err(ConfigError::new(f("wscale"), "window scale shift is 0–14 (RFC 7323)"));
        }
        if !(self.dctcp_g > 0.0 && self.dctcp_g <= 1.0) {
            return Err(ConfigError::new(f("dctcp_g"), "must be in (0, 1], e.g. 0.0625"));
        }
        if self.min_rto.0 == 0 {
            return Err(ConfigError::new(f("min_rto"), "must be greater than zero"));
        }
        if self.max_rto.0 < self.min_rto.0 {
            return Err(ConfigError::new(f("max_rto"), "must be at least min_rto"));
        }
        // The backoff doubles the RTO up to 16 times before capping it at max_rto (`current_rto`): the
        // doubled value must fit the 64-bit picosecond clock.
        if self.max_rto.0 > MAX_RTO {
            let msg = format!("must be at most {}s: the backoff doubles the timeout up to 16 times in a 64-bit picosecond clock", MAX_RTO / SEC);
            return Err(ConfigError::new(f("max_rto"), msg));
        }
        if self.rwnd.0 == Size::Inf || self.rwnd.0.bytes(mtu as u64) == 0 {
            return Err(ConfigError::new(f("rwnd"), "must be a finite positive size"));
        }
        // The receiver advertises rwnd >> wscale: below one unit of the scale that is a zero window, which
        // nothing would ever open.
        if self.rwnd.0.bytes(mtu as u64) < 1 << self.wscale {
            let msg = format!("must be at least 2^wscale = {} B, or the receiver advertises a zero window; lower `wscale`", 1u64 << self.wscale);
            return Err(ConfigError::new(f("rwnd"), msg));
        }
        Ok(TcpParams {
            cc: self.cc,
            ecn,
            mss: self.mss.map(|m| m.0.bytes(mtu as u64) as u32).unwrap_or(mtu - HEADER_BYTES),
            init_cwnd: self.init_cwnd,
            min_rto: self.min_rto.0,
            max_rto: self.max_rto.0,
            delack: self.delayed_ack.0,
            delack_timeout: self.delayed_ack_timeout.0,
            rwnd: self.rwnd.0.bytes(mtu as u64),
            wscale: self.wscale,
            handshake: self.handshake,
            ect_control: self.ect_control && ecn,
            dctcp_g: self.dctcp_g,
            tsq_limit: self.tsq_limit.0.bytes(mtu as u64),
            slow_start_after_idle: self.slow_start_after_idle,
        })
    }
}
