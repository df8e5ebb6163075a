//! Congestion controls, one file each behind one enum (the shape of smoltcp's `congestion` module): a new
//! algorithm is one file implementing [`Cc`] and one line in the `registry!` below. Hooks the algorithm
//! does not override keep the Reno behaviour written in this file. Every hook that reacts to an ACK gets an [`AckInfo`]: the
//! time, the bytes it acknowledged and how many of them were ECN-marked, and the RTT samples.
//!
//! A control's own keys live in its file ([`Cc::Cfg`]) and are given with its name as a `kind`-tagged
//! table, as every other algorithm choice of a scenario: `cc = "cubic"` takes its defaults,
//! `cc = { kind = "cubic", beta = 0.8 }` sets keys (errors name `….cc.beta`).

pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod illinois;
pub mod reno;
pub mod vegas;

use super::TcpParams;
use crate::config::kind::{de_variant, take_kind, PATH_MARK};
use crate::config::ConfigError;
use crate::units::Time;
use serde::{de, Deserialize, Deserializer};

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

/// The keys of a control that has none of its own (`cc = { kind = "reno" }` takes no other key).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoKeys {}

/// What a congestion-control file provides. Every hook defaults to Reno's behaviour, so an algorithm
/// overrides only what it changes (smoltcp's `Controller` shape).
pub trait Cc: Sized {
    /// The algorithm's keys, `cc = { kind = "<name>", … }` (serde, `deny_unknown_fields`, every key with a
    /// default; `cc = "<name>"` takes them all). They are dimensionless (segments, fractions), so they are
    /// also the parameters a connection is built from.
    type Cfg: Copy + std::fmt::Debug + Default + de::DeserializeOwned;
    /// The receiver echoes CE exactly, ACK by ACK (DCTCP, RFC 8257 §3.2), instead of latching ECN-Echo
    /// until CWR (RFC 3168).
    const ACCURATE_ECN: bool = false;
    /// The algorithm needs ECN: `ecn = false` is a config error and ECN is on by default.
    const NEEDS_ECN: bool = false;
    /// Check the keys; `field` is the `cc` table's path for errors (`host.transport.cc`).
    fn validate(_cfg: &Self::Cfg, _field: &str) -> Result<(), ConfigError> {
        Ok(())
    }
    /// A new connection's state (`snd_nxt` is where the first window ends).
    fn build(p: &TcpParams, cfg: &Self::Cfg, snd_nxt: u64) -> Self;
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
    /// The retransmission timer expired: called after `ssthresh_on_loss`, with the window as it was
    /// (cwnd falls to one MSS next).
    fn on_timeout(&mut self, _w: &Window, _now: Time) {}
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
/// `cc = …` ([`CcCfg`], with the keys of its `Cfg`), a variant of [`CongestionControl`], and routes every
/// hook to it.
macro_rules! registry {
    ($( $variant:ident = $name:literal => $module:ident :: $ty:ident ),* $(,)?) => {
        /// `cc = "…"` or `cc = { kind = "…", … }` of a TCP transport: the control and its keys.
        #[derive(Debug, Clone, Copy)]
        pub enum CcCfg {
            $( $variant(<$module::$ty as Cc>::Cfg) ),*
        }

        impl CcCfg {
            /// Every congestion control's name.
            pub const NAMES: &'static [&'static str] = &[$($name),*];
            pub fn name(&self) -> &'static str {
                match self {
                    $( CcCfg::$variant(_) => $name, )*
                }
            }
            /// See [`Cc::ACCURATE_ECN`].
            #[inline]
            pub fn accurate_ecn(&self) -> bool {
                match self {
                    $( CcCfg::$variant(_) => <$module::$ty as Cc>::ACCURATE_ECN, )*
                }
            }
            /// See [`Cc::NEEDS_ECN`].
            pub fn needs_ecn(&self) -> bool {
                match self {
                    $( CcCfg::$variant(_) => <$module::$ty as Cc>::NEEDS_ECN, )*
                }
            }
            /// Check the keys; `field` is the `cc` key's path.
            pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
                match self {
                    $( CcCfg::$variant(c) => <$module::$ty as Cc>::validate(c, field), )*
                }
            }
        }

        impl<'de> Deserialize<'de> for CcCfg {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let unknown = |other: &str| format!("unknown congestion control `{other}`; use one of {}", Self::NAMES.join(", "));
                match toml::Value::deserialize(d)? {
                    toml::Value::String(s) => match s.as_str() {
                        $( $name => Ok(CcCfg::$variant(Default::default())), )*
                        other => Err(de::Error::custom(unknown(other))),
                    },
                    toml::Value::Table(mut t) => {
                        let kind: String = take_kind(&mut t, Self::NAMES)?;
                        match kind.as_str() {
                            $( $name => Ok(CcCfg::$variant(de_variant(t)?)), )*
                            other => Err(de::Error::custom(format!("{PATH_MARK}kind{PATH_MARK}{}", unknown(other)))),
                        }
                    }
                    _ => Err(de::Error::custom(format!(
                        "a congestion control's name (one of {}), or a table {{ kind = \"cubic\", … }} with its keys",
                        Self::NAMES.join(", ")
                    ))),
                }
            }
        }

        /// Every congestion control, by variant.
        pub enum CongestionControl {
            $( $variant($module::$ty) ),*
        }

        impl CongestionControl {
            pub fn new(p: &TcpParams, snd_nxt: u64) -> Self {
                match &p.cc {
                    $( CcCfg::$variant(c) => CongestionControl::$variant(<$module::$ty as Cc>::build(p, c, snd_nxt)), )*
                }
            }
            #[inline]
            pub fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
                match self {
                    $( CongestionControl::$variant(c) => c.on_ack(w, ack), )*
                }
            }
            #[inline(always)]
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
            pub fn on_timeout(&mut self, w: &Window, now: Time) {
                match self {
                    $( CongestionControl::$variant(c) => c.on_timeout(w, now), )*
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
    Cubic = "cubic" => cubic::Cubic,
    Vegas = "vegas" => vegas::Vegas,
    Illinois = "illinois" => illinois::Illinois,
    HighSpeed = "highspeed" => highspeed::HighSpeed,
}
