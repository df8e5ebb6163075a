//! Transports: what turns a flow into segments and reacts to what comes back. Each is one type behind the
//! [`Transport`] trait, dispatched through the [`Connection`] enum (no `Box<dyn>` on the per-packet path);
//! a transport never touches packets in flight or the event queue — it writes what to send into an outbox
//! and keeps at most one deadline per timer. `tcp/` holds TCP with its congestion controls; rate-based
//! RDMA senders go beside it. A transport is chosen per `[[traffic]]` entry, merged over `host.transport`.

pub mod tcp;

use crate::config::ConfigError;
use crate::net::packet::Packet;
use crate::units::Time;

pub use crate::engine::timer::{Fire, Timer};

/// What a connection asks its hosts to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// Sender → receiver: a segment (or a SYN when `len` = 0 and SYN is set).
    Seg { seq: u64, len: u32, flags: u8, ts: Time },
    /// Receiver → sender: an ACK (SYN-ACK when SYN is set).
    Ack { ack: u64, flags: u8, ts_echo: Time, win: u16 },
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
    /// A packet of this flow reached its receiver. Returns true when the flow just completed.
    fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool;
    /// One of the sender's data packets left its host's NIC.
    fn departed(&mut self, _payload: u32, _now: Time, _out: &mut Vec<Out>) {}
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
}

/// Most timers a transport keeps per connection.
pub const MAX_TIMERS: usize = 2;

/// Every transport, by variant.
pub enum Connection {
    Tcp(tcp::Conn),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Connection::Tcp($c) => $e,
        }
    };
}

impl Connection {
    pub fn new(flow: u32, size: u64, p: &Params) -> Connection {
        match p {
            Params::Tcp(p) => Connection::Tcp(tcp::Conn::new(flow, size, *p)),
        }
    }
}

impl Transport for Connection {
    #[inline]
    fn start(&mut self, now: Time, out: &mut Vec<Out>) {
        each!(self, c => c.start(now, out))
    }
    #[inline]
    fn at_sender(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
        each!(self, c => c.at_sender(now, pkt, out))
    }
    #[inline]
    fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
        each!(self, c => c.at_receiver(now, pkt, out))
    }
    #[inline]
    fn departed(&mut self, payload: u32, now: Time, out: &mut Vec<Out>) {
        each!(self, c => c.departed(payload, now, out))
    }
    #[inline]
    fn timer(&mut self, i: usize) -> Option<&mut Timer> {
        each!(self, c => c.timer(i))
    }
    #[inline]
    fn due(&mut self) -> [Option<Time>; MAX_TIMERS] {
        each!(self, c => c.due())
    }
    #[inline]
    fn on_timer(&mut self, i: usize, now: Time, out: &mut Vec<Out>) {
        each!(self, c => c.on_timer(i, now, out))
    }
    #[inline]
    fn closed(&self) -> bool {
        each!(self, c => c.closed())
    }
    fn losses(&self) -> (u32, u32) {
        each!(self, c => c.losses())
    }
    fn trace(&self) -> TraceSample {
        each!(self, c => c.trace())
    }
    #[inline]
    fn ect(&self) -> bool {
        each!(self, c => c.ect())
    }
}

/// A transport's resolved parameters (units turned into bytes and picoseconds, defaults applied).
#[derive(Clone, Copy, Debug)]
pub enum Params {
    Tcp(tcp::TcpParams),
}

impl Params {
    /// Payload bytes per full segment.
    pub fn mss(&self) -> u32 {
        match self {
            Params::Tcp(p) => p.mss,
        }
    }
    /// Whether a handshake precedes the first byte.
    pub fn handshake(&self) -> bool {
        match self {
            Params::Tcp(p) => p.handshake,
        }
    }
    /// The name the `flows` record's `transport` column shows: kind, congestion control and options.
    pub fn label(&self) -> String {
        match self {
            Params::Tcp(p) => p.label(),
        }
    }
}

crate::config::kind_enum! {
    /// `host.transport` and `[[traffic]] transport`: the transport and its parameters.
    #[derive(Debug, Clone)]
    pub enum TransportCfg {
        Tcp = "tcp" (tcp::Cfg),
    }
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg::Tcp(tcp::Cfg::default())
    }
}

impl TransportCfg {
    /// Check and resolve; `field` is where the table came from (`host.transport`, `traffic[2].transport`).
    pub fn resolve(&self, field: &str, mtu: u32) -> Result<Params, ConfigError> {
        match self {
            TransportCfg::Tcp(c) => c.resolve(field, mtu).map(Params::Tcp),
        }
    }
}
