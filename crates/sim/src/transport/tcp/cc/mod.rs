//! Congestion controls, one file each behind one enum (the shape of smoltcp's `congestion` module): a new
//! algorithm is one file implementing [`Cc`] and one line in the `registry!` below. Hooks the algorithm
//! does not override keep the Reno behaviour written in this file. Every hook that reacts to an ACK gets an [`AckInfo`]: the
//! time, the bytes it acknowledged and how many of them were ECN-marked, and the RTT samples.

pub mod dctcp;
pub mod reno;

use super::TcpParams;
use crate::units::Time;
use serde::Deserialize;

/// The window state a congestion control may read and change (bytes).
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}

impl Window {
    /// Slow start per RFC 5681 (cwnd += min(acked, MSS)), congestion avoidance += MSS²/cwnd per ACK.
    #[inline]
    pub fn reno_increase(&mut self, newly_acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += (newly_acked as f64).min(self.mss);
        } else {
            self.cwnd += self.mss * self.mss / self.cwnd;
        }
    }
}

/// RTT estimates at the sender (ps): the sample this ACK gave (0 when it gave none), the smoothed RTT of
/// RFC 6298 and the smallest sample of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rtt {
    pub latest: Time,
    pub srtt: Time,
    pub min: Time,
}

/// What one ACK tells the congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: Time,
    /// Bytes newly acknowledged (0 for a duplicate ACK).
    pub acked: u64,
    /// Of those, bytes the receiver reported as CE-marked (all of them when the ACK carries ECN-Echo).
    pub marked: u64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    pub rtt: Rtt,
}

/// What a congestion-control file provides. Every hook defaults to Reno's behaviour, so an algorithm
/// overrides only what it changes (smoltcp's `Controller` shape).
pub trait Cc: Sized {
    /// The receiver echoes CE exactly, ACK by ACK (DCTCP, RFC 8257 §3.2), instead of latching ECN-Echo
    /// until CWR (RFC 3168).
    const ACCURATE_ECN: bool = false;
    /// The algorithm needs ECN: `ecn = false` is a config error and ECN is on by default.
    const NEEDS_ECN: bool = false;
    /// A new connection's state (`snd_nxt` is where the first window ends).
    fn build(p: &TcpParams, snd_nxt: u64) -> Self;
    /// Every ACK, before any reaction: accounting (DCTCP's marked-byte fraction and alpha).
    fn on_ack(&mut self, _w: &Window, _ack: &AckInfo) {}
    /// Window growth on an ACK that advanced snd_una outside recovery and caused no reduction.
    fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        w.reno_increase(ack.acked)
    }
    /// New ssthresh on an ECN-Echo (once per window).
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        reno::Reno::ssthresh_on_loss(w, w.cwnd)
    }
    /// New ssthresh on loss (fast retransmit or timeout), given the flight size.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: f64, _now: Time) -> f64 {
        reno::Reno::ssthresh_on_loss(w, flight)
    }
    /// Smallest cwnd a reduction may leave (bytes).
    fn min_cwnd(&self, w: &Window) -> f64 {
        w.mss
    }
    /// DCTCP's alpha for traces; NaN for controls without one.
    fn alpha(&self) -> f64 {
        f64::NAN
    }
}

/// The registry: one line per congestion control (`Variant = "name" => module::Type`) makes it a value of
/// `cc = "…"` ([`CcName`]), a variant of [`CongestionControl`], and routes every hook to it.
macro_rules! registry {
    ($( $variant:ident = $name:literal => $module:ident :: $ty:ident ),* $(,)?) => {
        /// `cc = "…"` of a TCP transport.
        #[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
        pub enum CcName {
            $( #[serde(rename = $name)] $variant ),*
        }

        impl CcName {
            pub fn name(self) -> &'static str {
                match self {
                    $( CcName::$variant => $name, )*
                }
            }
            /// See [`Cc::ACCURATE_ECN`].
            #[inline]
            pub fn accurate_ecn(self) -> bool {
                match self {
                    $( CcName::$variant => <$module::$ty as Cc>::ACCURATE_ECN, )*
                }
            }
            /// See [`Cc::NEEDS_ECN`].
            pub fn needs_ecn(self) -> bool {
                match self {
                    $( CcName::$variant => <$module::$ty as Cc>::NEEDS_ECN, )*
                }
            }
        }

        /// Every congestion control, by variant.
        pub enum CongestionControl {
            $( $variant($module::$ty) ),*
        }

        impl CongestionControl {
            pub fn new(p: &TcpParams, snd_nxt: u64) -> Self {
                match p.cc {
                    $( CcName::$variant => CongestionControl::$variant(<$module::$ty as Cc>::build(p, snd_nxt)), )*
                }
            }
            #[inline]
            pub fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
                match self {
                    $( CongestionControl::$variant(c) => c.on_ack(w, ack), )*
                }
            }
            #[inline]
            pub fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
                match self {
                    $( CongestionControl::$variant(c) => c.increase(w, ack), )*
                }
            }
            #[inline]
            pub fn ssthresh_on_ece(&mut self, w: &Window, now: Time) -> f64 {
                match self {
                    $( CongestionControl::$variant(c) => c.ssthresh_on_ece(w, now), )*
                }
            }
            #[inline]
            pub fn ssthresh_on_loss(&mut self, w: &Window, flight: f64, now: Time) -> f64 {
                match self {
                    $( CongestionControl::$variant(c) => c.ssthresh_on_loss(w, flight, now), )*
                }
            }
            #[inline]
            pub fn min_cwnd(&self, w: &Window) -> f64 {
                match self {
                    $( CongestionControl::$variant(c) => c.min_cwnd(w), )*
                }
            }
            pub fn alpha(&self) -> f64 {
                match self {
                    $( CongestionControl::$variant(c) => c.alpha(), )*
                }
            }
        }
    };
}

registry! {
    Reno = "reno" => reno::Reno,
    Dctcp = "dctcp" => dctcp::Dctcp,
}
