//! Transports: what turns a flow into segments and reacts to what comes back. Each is one type behind the
//! [`Transport`] trait, dispatched through the [`Connection`] enum (no `Box<dyn>` on the per-packet path);
//! a transport never touches packets in flight or the event queue — it writes what to send into an outbox
//! and keeps at most one deadline per timer. `tcp/` holds TCP with its congestion controls; rate-based
//! RDMA senders go beside it (`rdma/`: RoCE with DCQCN). A transport is chosen per `[[traffic]]` entry,
//! merged over `host.transport`.

pub mod rdma;
pub mod tcp;

use crate::config::ConfigError;
use crate::net::packet::{Packet, HEADER_BYTES};
use crate::units::Time;

pub use crate::engine::timer::{Fire, Timer};

/// What a connection asks its hosts to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// Sender → receiver: a segment (or a SYN when `len` = 0 and SYN is set).
    Seg { seq: u64, len: u32, flags: u16, ts: Time },
    /// Receiver → sender: an ACK (SYN-ACK when SYN is set).
    Ack { ack: u64, flags: u16, ts_echo: Time, win: u16 },
}

/// One sample of a connection's state for `flow_trace`.
#[derive(Clone, Copy, Debug)]
pub struct TraceSample {
    pub cwnd_bytes: f64,
    pub rate_bps: f64,
    pub alpha: f64,
    pub srtt: Time,
    pub delivered_bytes: u64,
}

/// Both ends of one flow. Hooks are called by the hosts (`host/mod.rs`).
pub trait Transport {
    /// The application hands the flow to the transport.
    fn start(&mut self, now: Time, out: &mut Vec<Out>);
    /// A packet of this flow reached its sender (ACKs, feedback).
    fn at_sender(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>);
    /// A packet carrying INT records (`net/int.rs`: an HPCC ACK or NACK) reached its sender; by default
    /// the records are ignored.
    fn at_sender_int(&mut self, now: Time, pkt: &Packet, _hops: &[crate::net::int::Hop], out: &mut Vec<Out>) {
        self.at_sender(now, pkt, out)
    }
    /// A packet of this flow reached its receiver. Returns true when the flow just completed.
    fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool;
    /// One of the sender's data packets left its host's NIC. Returns whether the connection may have done
    /// more than count it (sent, or changed a timer): only then does the host send `out` and look at the
    /// timers, which for most departures would cost more than the count itself.
    fn departed(&mut self, _payload: u32, _now: Time, _out: &mut Vec<Out>) -> bool {
        false
    }
    /// Timer `i` (0-based, fewer than [`MAX_TIMERS`]).
    fn timer(&mut self, i: usize) -> Option<&mut Timer>;
    /// Event-queue entries the timers need now (`Timer::needs_entry` of each, in timer order).
    fn due(&mut self) -> [Option<Time>; MAX_TIMERS];
    /// Timer `i` expired.
    fn on_timer(&mut self, i: usize, now: Time, out: &mut Vec<Out>);
    /// Both ends are done: the receiver holds every byte and the sender has every ACK it waits for.
    fn closed(&self) -> bool;
    /// (retransmitted segments, timeouts) so far.
    fn losses(&self) -> (u32, u32);
    fn trace(&self) -> TraceSample;
    /// Whether data packets carry ECT.
    fn ect(&self) -> bool;
    /// The application writes `bytes` more on this connection (a persistent connection's next message,
    /// `Resolved::appends`); the sender sends them when its window allows.
    fn append(&mut self, _bytes: u64, _now: Time, _out: &mut Vec<Out>) {
        unreachable!("the build refuses persistent connections on a transport that cannot append")
    }
    /// Payload bytes the receiver holds in order (a persistent connection's messages end at offsets of it).
    fn delivered(&self) -> u64 {
        self.trace().delivered_bytes
    }
    /// The application stops writing: the flow becomes what the sender has sent (at least one byte).
    /// Returns the flow's size now and whether the receiver has just become complete with it.
    fn end_data(&mut self, now: Time) -> (u64, bool);
    /// The RTT sample the last packet at the sender gave (0: none).
    fn last_rtt(&self) -> Time {
        0
    }
    /// Whether ACKs (and SYN-ACKs) carry ECT too.
    fn ect_control(&self) -> bool {
        false
    }
    /// The window-scale shift this end announces in its SYN or SYN-ACK (RFC 7323), and applies to the
    /// windows it advertises.
    fn wscale(&self) -> u8 {
        0
    }
    /// Header bytes on the wire added to a data segment's payload (TCP/IP: 40; RoCEv2: 44).
    fn header_bytes(&self) -> u32 {
        HEADER_BYTES
    }
    /// The priority (switch queue) of this connection's ACKs and other control packets; `None`: the
    /// flow's own priority (PIAS: 0).
    fn control_prio(&self) -> Option<u8> {
        None
    }
}

/// Most timers a transport keeps per connection.
pub const MAX_TIMERS: usize = 2;

/// What a transport file provides besides its connection type: its config resolved into parameters, and
/// what the hosts need to know of those parameters.
pub trait Setup: Sized {
    type Resolved: Copy + std::fmt::Debug;
    type Conn: Transport;
    /// Check every key and resolve units; `field` is the table's path for errors.
    fn resolve(&self, field: &str, mtu: u32) -> Result<Self::Resolved, ConfigError>;
}

/// Resolved parameters of one transport.
pub trait Resolved {
    type Conn: Transport;
    /// A new connection for `flow` of `size` payload bytes (`u64::MAX`: long-lived), sent from a host
    /// whose NIC runs at `line_rate` bps (rate-based senders start at it and scale parameters with it).
    fn connect(&self, flow: u32, size: u64, line_rate: u64) -> Self::Conn;
    /// Payload bytes per full segment (ideal FCT).
    fn mss(&self) -> u32;
    /// Whether a handshake precedes the first byte (ideal FCT).
    fn handshake(&self) -> bool;
    /// The name the `flows` record's `transport` column shows: kind, congestion control and options.
    fn label(&self) -> String;
    /// Header bytes added to each data segment's payload (ideal FCT).
    fn header_bytes(&self) -> u32 {
        HEADER_BYTES
    }
    /// Whether `host.extra_delay` holds the sender's data (true: a host-stack sender such as TCP, behind
    /// which netem sits), or the receiver's ACKs instead (false: a sender paced by its NIC, one packet
    /// at a time, which a delay ahead of the NIC would throttle to one packet per delay).
    fn delay_on_data(&self) -> bool {
        true
    }
    /// Check parameters against the slowest host link of the run (`field`: the table's path).
    fn check_line_rate(&self, _field: &str, _slowest: u64) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Settle what depends on the network (`field`: the table's path): `paths` gives the longest base
    /// RTT between two hosts and the most switches a path crosses (`Net::longest_paths`, computed once
    /// and only when a transport asks). HPCC takes its T from it and checks its INT capacity.
    fn at_topology(&mut self, _field: &str, _paths: &mut dyn FnMut() -> (Time, u32)) -> Result<(), ConfigError> {
        Ok(())
    }
    /// These parameters on a connection that is already open (the ideal FCT of a persistent connection's
    /// later messages: no handshake).
    fn established(&self) -> Self
    where
        Self: Copy,
    {
        *self
    }
    /// Whether a connection accepts more data after it started ([`Transport::append`]): persistent
    /// connections need it.
    fn appends(&self) -> bool {
        false
    }
}

/// The registry: one line per transport (`Variant = "kind" => module::Cfg, Params, Conn`) makes it a
/// `kind` of `host.transport` / `[[traffic]] transport`, a variant of [`Params`] and [`Connection`], and
/// routes every hook to it.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $cfg:ty, $params:ty, $conn:ty );* $(;)?) => {
        crate::config::kind_enum! {
            /// `host.transport` and `[[traffic]] transport`: the transport and its parameters.
            #[derive(Debug, Clone)]
            pub enum TransportCfg {
                $( $variant = $kind ($cfg) ),*
            }
        }

        /// A transport's resolved parameters (units turned into bytes and picoseconds, defaults applied).
        #[derive(Clone, Copy, Debug)]
        pub enum Params {
            $( $variant($params) ),*
        }

        /// Every transport's connection, by variant.
        pub enum Connection {
            $( $variant($conn) ),*
        }

        impl TransportCfg {
            /// Check and resolve; `field` is where the table came from (`host.transport`, `traffic[2].transport`).
            pub fn resolve(&self, field: &str, mtu: u32) -> Result<Params, ConfigError> {
                match self {
                    $( TransportCfg::$variant(c) => c.resolve(field, mtu).map(Params::$variant), )*
                }
            }
        }

        impl Params {
            pub fn mss(&self) -> u32 {
                match self {
                    $( Params::$variant(p) => p.mss(), )*
                }
            }
            pub fn handshake(&self) -> bool {
                match self {
                    $( Params::$variant(p) => p.handshake(), )*
                }
            }
            pub fn label(&self) -> String {
                match self {
                    $( Params::$variant(p) => p.label(), )*
                }
            }
            pub fn header_bytes(&self) -> u32 {
                match self {
                    $( Params::$variant(p) => p.header_bytes(), )*
                }
            }
            pub fn delay_on_data(&self) -> bool {
                match self {
                    $( Params::$variant(p) => p.delay_on_data(), )*
                }
            }
            pub fn check_line_rate(&self, field: &str, slowest: u64) -> Result<(), ConfigError> {
                match self {
                    $( Params::$variant(p) => p.check_line_rate(field, slowest), )*
                }
            }
            pub fn at_topology(&mut self, field: &str, paths: &mut dyn FnMut() -> (Time, u32)) -> Result<(), ConfigError> {
                match self {
                    $( Params::$variant(p) => p.at_topology(field, paths), )*
                }
            }
            pub fn established(&self) -> Params {
                match self {
                    $( Params::$variant(p) => Params::$variant(p.established()), )*
                }
            }
            pub fn appends(&self) -> bool {
                match self {
                    $( Params::$variant(p) => p.appends(), )*
                }
            }
        }

        impl Connection {
            pub fn new(flow: u32, size: u64, p: &Params, line_rate: u64) -> Connection {
                match p {
                    $( Params::$variant(p) => Connection::$variant(p.connect(flow, size, line_rate)), )*
                }
            }
        }

        impl Transport for Connection {
            #[inline]
            fn start(&mut self, now: Time, out: &mut Vec<Out>) {
                match self { $( Connection::$variant(c) => c.start(now, out), )* }
            }
            #[inline]
            fn at_sender(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
                match self { $( Connection::$variant(c) => c.at_sender(now, pkt, out), )* }
            }
            fn at_sender_int(&mut self, now: Time, pkt: &Packet, hops: &[crate::net::int::Hop], out: &mut Vec<Out>) {
                match self { $( Connection::$variant(c) => c.at_sender_int(now, pkt, hops, out), )* }
            }
            #[inline]
            fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
                match self { $( Connection::$variant(c) => c.at_receiver(now, pkt, out), )* }
            }
            #[inline]
            fn departed(&mut self, payload: u32, now: Time, out: &mut Vec<Out>) -> bool {
                match self { $( Connection::$variant(c) => c.departed(payload, now, out), )* }
            }
            #[inline]
            fn timer(&mut self, i: usize) -> Option<&mut Timer> {
                match self { $( Connection::$variant(c) => c.timer(i), )* }
            }
            #[inline]
            fn due(&mut self) -> [Option<Time>; MAX_TIMERS] {
                match self { $( Connection::$variant(c) => c.due(), )* }
            }
            #[inline]
            fn on_timer(&mut self, i: usize, now: Time, out: &mut Vec<Out>) {
                match self { $( Connection::$variant(c) => c.on_timer(i, now, out), )* }
            }
            #[inline]
            fn closed(&self) -> bool {
                match self { $( Connection::$variant(c) => c.closed(), )* }
            }
            fn losses(&self) -> (u32, u32) {
                match self { $( Connection::$variant(c) => c.losses(), )* }
            }
            fn trace(&self) -> TraceSample {
                match self { $( Connection::$variant(c) => c.trace(), )* }
            }
            #[inline]
            fn ect(&self) -> bool {
                match self { $( Connection::$variant(c) => c.ect(), )* }
            }
            fn end_data(&mut self, now: Time) -> (u64, bool) {
                match self { $( Connection::$variant(c) => c.end_data(now), )* }
            }
            fn append(&mut self, bytes: u64, now: Time, out: &mut Vec<Out>) {
                match self { $( Connection::$variant(c) => c.append(bytes, now, out), )* }
            }
            #[inline]
            fn delivered(&self) -> u64 {
                match self { $( Connection::$variant(c) => c.delivered(), )* }
            }
            #[inline]
            fn last_rtt(&self) -> Time {
                match self { $( Connection::$variant(c) => c.last_rtt(), )* }
            }
            #[inline]
            fn ect_control(&self) -> bool {
                match self { $( Connection::$variant(c) => c.ect_control(), )* }
            }
            #[inline]
            fn wscale(&self) -> u8 {
                match self { $( Connection::$variant(c) => c.wscale(), )* }
            }
            #[inline]
            fn header_bytes(&self) -> u32 {
                match self { $( Connection::$variant(c) => c.header_bytes(), )* }
            }
            #[inline]
            fn control_prio(&self) -> Option<u8> {
                match self { $( Connection::$variant(c) => c.control_prio(), )* }
            }
        }
    };
}

registry! {
    Tcp = "tcp" => tcp::Cfg, tcp::TcpParams, tcp::Conn;
    Rdma = "rdma" => rdma::Cfg, rdma::RdmaParams, rdma::Conn;
}


impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg::Tcp(tcp::Cfg::default())
    }
}


