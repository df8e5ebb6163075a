//! The vSwitch slot: a per-host shim between the host's transports and its NIC that sees every packet
//! they send and every packet the host receives (AC/DC lives here). A shim may rewrite a packet's
//! headers, change its size (an added option), drop it, hold it (and release it later), or inject a
//! packet of its own in either direction (a feedback ACK). `host.vswitch` absent means no shim at all —
//! the per-packet path then does not call one.
//!
//! Accounting: a packet from a transport counts as sent before its shim sees it; bytes a shim adds or
//! removes count as sent or taken back; a packet it injects counts as sent; one it drops as dropped
//! (reason `vswitch`); one it holds as in flight. A packet released toward the network gets its
//! connection's extra host delay, as any other.

pub mod acdc;

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
    /// The packet was for the shim itself (a feedback-only ACK): it counts as delivered.
    Consume,
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
    /// Packets the shim holds now (they count as in flight when a run ends).
    fn held(&self) -> Vec<PktId> {
        Vec::new()
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

/// What a shim file provides besides its hooks: how it is built from its config.
pub trait Build: Sized {
    type Cfg;
    /// Check every key (errors name `host.vswitch.<key>`) and build one host's shim; `mtu`: the switches'.
    fn build(cfg: &Self::Cfg, mtu: u32) -> Result<Self, ConfigError>;
}

impl Build for Identity {
    type Cfg = IdentityCfg;
    fn build(_: &IdentityCfg, _mtu: u32) -> Result<Identity, ConfigError> {
        Ok(Identity::default())
    }
}

/// The registry: one line per shim (`Variant = "kind" => module::Cfg, module::Shim`) makes it a `kind` of
/// `host.vswitch`, a variant of [`VSwitch`], and routes every hook to it.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $cfg:ty, $shim:ty );* $(;)?) => {
        kind_enum! {
            /// `host.vswitch`: the shim every host runs.
            #[derive(Debug, Clone)]
            pub enum VSwitchCfg {
                $( $variant = $kind ($cfg) ),*
            }
        }

        /// Every shim, by variant.
        pub enum VSwitch {
            $( $variant(Box<$shim>), )*
            /// A shim that uses every action (tests of the slot itself).
            #[cfg(test)]
            Script(tests::Script),
            /// AC/DC with its invariants checked on every packet (`acdc_tests.rs`).
            #[cfg(test)]
            Probe(Box<acdc::tests::Probe>),
        }

        impl VSwitch {
            pub fn new(cfg: &VSwitchCfg, mtu: u32) -> Result<VSwitch, ConfigError> {
                Ok(match cfg {
                    $( VSwitchCfg::$variant(c) => VSwitch::$variant(Box::new(<$shim as Build>::build(c, mtu)?)), )*
                })
            }
        }

        impl Shim for VSwitch {
            #[inline]
            fn egress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
                match self {
                    $( VSwitch::$variant(s) => s.egress(now, id, pkt, out), )*
                    #[cfg(test)]
                    VSwitch::Script(s) => s.egress(now, id, pkt, out),
                    #[cfg(test)]
                    VSwitch::Probe(s) => s.egress(now, id, pkt, out),
                }
            }
            #[inline]
            fn ingress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
                match self {
                    $( VSwitch::$variant(s) => s.ingress(now, id, pkt, out), )*
                    #[cfg(test)]
                    VSwitch::Script(s) => s.ingress(now, id, pkt, out),
                    #[cfg(test)]
                    VSwitch::Probe(s) => s.ingress(now, id, pkt, out),
                }
            }
            fn held(&self) -> Vec<PktId> {
                match self {
                    $( VSwitch::$variant(s) => s.held(), )*
                    #[cfg(test)]
                    VSwitch::Script(s) => s.held(),
                    #[cfg(test)]
                    VSwitch::Probe(s) => s.held(),
                }
            }
        }
    };
}

registry! {
    Identity = "identity" => IdentityCfg, Identity;
    Acdc = "acdc" => acdc::Cfg, acdc::AcDc;
}

impl VSwitch {
    /// What an AC/DC vSwitch did.
    pub fn acdc_stats(&self) -> Option<acdc::Stats> {
        match self {
            VSwitch::Acdc(a) => Some(a.stats),
            _ => None,
        }
    }

    /// (packets, bytes) seen leaving and arriving, for shims that count them.
    pub fn seen(&self) -> Option<Identity> {
        match self {
            VSwitch::Identity(i) => Some(**i),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Sim;

    /// Grows every data packet by 12 bytes (an added option), holds every 10th and lets it go with the
    /// next, drops every 50th arriving packet, and delivers every 40th arriving data packet twice (an
    /// injected copy).
    #[derive(Default)]
    pub struct Script {
        out_n: u64,
        in_n: u64,
        held: Option<PktId>,
        pub grown: u64,
    }

    impl Shim for Script {
        fn egress(&mut self, _now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
            self.out_n += 1;
            if pkt.payload > 0 {
                pkt.size += 12;
                self.grown += 1;
            }
            if let Some(h) = self.held.take() {
                out.release.push((Toward::Network, h));
            }
            if self.out_n % 10 == 0 {
                self.held = Some(id);
                return Action::Hold;
            }
            Action::Pass
        }
        fn ingress(&mut self, _now: Time, _id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
            self.in_n += 1;
            if self.in_n % 50 == 0 {
                return Action::Drop;
            }
            if pkt.payload > 0 && self.in_n % 40 == 0 {
                out.inject.push((Toward::Transport, *pkt));
            }
            Action::Pass
        }
        fn held(&self) -> Vec<PktId> {
            self.held.into_iter().collect()
        }
    }

    fn scenario(vswitch: &str) -> String {
        format!(
            r#"
seed = 3
stop = {{ all_flows_done = true, max_time = "2s" }}
[topology]
kind = "star"
hosts = 4
link = {{ rate = "10Gbps", delay = "5us" }}
[switch]
buffer = "2MB"
[host]
transport = {{ kind = "tcp", cc = "dctcp", min_rto = "1ms" }}
{vswitch}
[[traffic]]
kind = "flows"
list = [{{ src = 0, dst = 3, size = "2MB" }}, {{ src = 1, dst = 3, size = "300KB", start = "50us" }}, {{ src = 2, dst = 0, size = "1MB" }}]
"#
        )
    }

    #[test]
    fn a_shim_can_resize_hold_drop_and_inject_and_every_byte_is_accounted_for() {
        let plain = Sim::from_toml(&scenario("")).unwrap().run();
        let mut sim = Sim::from_toml(&scenario("vswitch = { kind = \"identity\" }")).unwrap();
        for h in sim.hosts.hosts.iter_mut() {
            h.vswitch = Some(VSwitch::Script(Script::default()));
        }
        sim.run_until(u64::MAX);
        let grown: u64 = sim.hosts.hosts.iter().map(|h| match &h.vswitch {
            Some(VSwitch::Script(s)) => s.grown,
            _ => 0,
        }).sum();
        let r = sim.run();
        let c = r.meta.conservation;
        assert!(c.holds(), "{c:?}");
        assert_eq!(r.meta.flows_finished, 3, "every flow completes despite the drops");
        assert!(r.meta.drops.vswitch > 0);
        assert!(r.flows.iter().any(|f| f.retransmits > 0), "a shim drop is recovered by TCP");
        assert!(grown > 2_000);
        // Grown packets are what went on the wire: more bytes sent than without the shim.
        assert!(c.sent_bytes >= plain.meta.conservation.sent_bytes + 12 * grown);
    }
}
