//! The vSwitch slot: a per-host shim between the host's transports and its NIC that sees every packet
//! they send and every packet the host receives (AC/DC lives here). A shim may rewrite a packet's
//! headers, change its size (an added option), drop it, hold it (and release it later), or inject a
//! packet of its own in either direction (a feedback ACK). `host.vswitch` absent means no shim at all —
//! the per-packet path then does not call one.

use crate::config::{kind_enum, ConfigError};
use crate::net::packet::{Packet, PktId};
use crate::units::Time;
use serde::Deserialize;

/// What a shim does with the packet it was shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Pass,
    Drop,
    /// The shim keeps the packet id and hands it back later through [`ShimOut::release`].
    Hold,
}

/// Where a packet a shim injects or releases goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toward {
    /// Out through the NIC.
    Network,
    /// Up to the host's transport.
    Transport,
}

/// Packets a shim emits while handling one packet.
#[derive(Default)]
pub struct ShimOut {
    /// New packets (the host allocates them and counts them as sent).
    pub inject: Vec<(Toward, Packet)>,
    /// Held packets it lets go.
    pub release: Vec<(Toward, PktId)>,
}

/// Hooks of a vSwitch; every one has a pass-through default.
pub trait Shim {
    /// A packet from one of the host's transports, before the NIC.
    fn egress(&mut self, _now: Time, _id: PktId, _pkt: &mut Packet, _out: &mut ShimOut) -> Action {
        Action::Pass
    }
    /// A packet that arrived at the host, before its transport.
    fn ingress(&mut self, _now: Time, _id: PktId, _pkt: &mut Packet, _out: &mut ShimOut) -> Action {
        Action::Pass
    }
}

/// The identity shim: passes everything and counts what it saw (a check that the slot sees every
/// packet, and a baseline for a shim's cost).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub egress_packets: u64,
    pub egress_bytes: u64,
    pub ingress_packets: u64,
    pub ingress_bytes: u64,
}

impl Shim for Identity {
    fn egress(&mut self, _now: Time, _id: PktId, pkt: &mut Packet, _out: &mut ShimOut) -> Action {
        self.egress_packets += 1;
        self.egress_bytes += pkt.size as u64;
        Action::Pass
    }
    fn ingress(&mut self, _now: Time, _id: PktId, pkt: &mut Packet, _out: &mut ShimOut) -> Action {
        self.ingress_packets += 1;
        self.ingress_bytes += pkt.size as u64;
        Action::Pass
    }
}

/// `host.vswitch = { kind = "identity" }`: no keys.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct IdentityCfg {}

kind_enum! {
    /// `host.vswitch`: the shim every host runs.
    #[derive(Debug, Clone)]
    pub enum VSwitchCfg {
        Identity = "identity" (IdentityCfg),
    }
}

/// Every shim, by variant.
pub enum VSwitch {
    Identity(Identity),
}

impl VSwitch {
    pub fn new(cfg: &VSwitchCfg) -> Result<VSwitch, ConfigError> {
        Ok(match cfg {
            VSwitchCfg::Identity(_) => VSwitch::Identity(Identity::default()),
        })
    }

    /// (packets, bytes) seen leaving and arriving, for shims that count them.
    pub fn seen(&self) -> Option<Identity> {
        match self {
            VSwitch::Identity(i) => Some(*i),
        }
    }
}

impl Shim for VSwitch {
    #[inline]
    fn egress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
        match self {
            VSwitch::Identity(s) => s.egress(now, id, pkt, out),
        }
    }
    #[inline]
    fn ingress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
        match self {
            VSwitch::Identity(s) => s.ingress(now, id, pkt, out),
        }
    }
}
