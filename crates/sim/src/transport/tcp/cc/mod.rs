//! Congestion controls, one file each behind one enum (the shape of smoltcp's `congestion` module): a new
//! algorithm is one file, one variant and one name in [`CcName`]. Hooks the algorithm does not need keep
//! the Reno behaviour written in this file. Every hook that reacts to an ACK gets an [`AckInfo`]: the
//! time, the bytes it acknowledged and how many of them were ECN-marked, and the RTT samples.

pub mod dctcp;
pub mod reno;

use crate::units::Time;
use serde::Deserialize;

/// `cc = "…"` of a TCP transport.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcName {
    Reno,
    Dctcp,
}

impl CcName {
    pub fn name(self) -> &'static str {
        match self {
            CcName::Reno => "reno",
            CcName::Dctcp => "dctcp",
        }
    }
}

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

pub enum CongestionControl {
    Reno(reno::Reno),
    Dctcp(dctcp::Dctcp),
}

impl CongestionControl {
    pub fn new(name: CcName, dctcp_g: f64, snd_nxt: u64) -> Self {
        match name {
            CcName::Reno => CongestionControl::Reno(reno::Reno),
            CcName::Dctcp => CongestionControl::Dctcp(dctcp::Dctcp::new(dctcp_g, snd_nxt)),
        }
    }

    /// Every ACK, before any reaction: accounting (DCTCP's marked-byte fraction and alpha).
    #[inline]
    pub fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
        match self {
            CongestionControl::Reno(_) => {}
            CongestionControl::Dctcp(d) => d.on_ack(w, ack),
        }
    }

    /// Window growth on an ACK that advanced snd_una outside recovery and caused no reduction.
    #[inline]
    pub fn increase(&mut self, w: &mut Window, ack: &AckInfo) {
        match self {
            CongestionControl::Reno(_) | CongestionControl::Dctcp(_) => w.reno_increase(ack.acked),
        }
    }

    /// New ssthresh on an ECN-Echo (once per window).
    #[inline]
    pub fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        match self {
            CongestionControl::Reno(_) => reno::Reno::ssthresh_on_loss(w, w.cwnd),
            CongestionControl::Dctcp(d) => d.ssthresh_on_ece(w),
        }
    }

    /// New ssthresh on loss (fast retransmit or timeout), given the flight size.
    #[inline]
    pub fn ssthresh_on_loss(&mut self, w: &Window, flight: f64, _now: Time) -> f64 {
        match self {
            CongestionControl::Reno(_) | CongestionControl::Dctcp(_) => reno::Reno::ssthresh_on_loss(w, flight),
        }
    }

    /// Smallest cwnd a reduction may leave (bytes).
    #[inline]
    pub fn min_cwnd(&self, w: &Window) -> f64 {
        match self {
            CongestionControl::Reno(_) => w.mss,
            CongestionControl::Dctcp(_) => 2.0 * w.mss,
        }
    }

    /// DCTCP's alpha for traces; NaN for controls without one.
    pub fn alpha(&self) -> f64 {
        match self {
            CongestionControl::Dctcp(d) => d.alpha,
            _ => f64::NAN,
        }
    }
}
