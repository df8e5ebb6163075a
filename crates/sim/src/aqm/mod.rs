//! Active queue management. An AQM may act when a packet is enqueued (RED family: instantaneous or averaged
//! queue length) and when it is dequeued (sojourn-time AQMs). It answers pass / mark CE / drop; the port
//! glue turns a mark on a Not-ECT packet into pass or drop per `non_ect`. Buffer-overflow drops are the
//! buffer manager's, never the AQM's.
//!
//! Each AQM is one file holding its config (`Cfg`: keys, defaults, checks, implementing [`Config`]), its
//! parameters, state and decision functions, and its [`Hooks`]; adding one is that file plus one line in
//! the `registry!` below (see docs/extending.md). Parameters may change at run time (a controller, or [`crate::Sim::aqm_mut`]); a change applies
//! to the next decision and keeps the AQM's state.

pub mod codel;
pub mod dctcp_red;
pub mod droptail;
pub mod ecn_sharp;
pub mod ib_fecn;
pub mod pie;
pub mod np_ecn;
pub mod red;
pub mod tcd;
pub mod tcn;

use crate::config::{kind_enum, ConfigError};
use crate::rng::Rng;
use crate::units::{Size, Time};
use serde::{de, Deserialize, Deserializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Mark CE.
    Mark,
    /// Mark UE (TCD's "undetermined encountered"): an ECN-capable packet not already CE becomes UE.
    MarkUe,
    Drop,
}

/// What an AQM may see of its queue and port.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueCtx {
    pub now: Time,
    /// Bytes held by this queue (at enqueue: before the arriving packet; at dequeue: after removing it).
    pub queue_bytes: u64,
    pub queue_pkts: u32,
    pub port_bytes: u64,
    pub port_rate: u64,
    pub mtu: u32,
}

/// Hooks of an AQM, all with no-op defaults: an algorithm overrides the ones it needs.
pub trait Hooks {
    /// A packet arrives; `ctx.queue_bytes` excludes it.
    fn on_enqueue(&mut self, _ctx: &QueueCtx, _rng: &mut Rng) -> Verdict {
        Verdict::Pass
    }
    /// A packet leaves after `sojourn`; `ctx.queue_bytes` excludes it.
    fn on_dequeue(&mut self, _ctx: &QueueCtx, _sojourn: Time, _rng: &mut Rng) -> Verdict {
        Verdict::Pass
    }
    /// Whether `on_dequeue` or `on_empty` may do anything now. An AQM that only ever passes at dequeue and
    /// keeps no state there answers false, and the port then skips building the dequeue's context and
    /// both calls (benchmark 1, DCTCP marking at enqueue: 3.5 % of its instructions). The default is the safe
    /// answer; `aqm::tests::quiet_at_dequeue_means_it` checks every kind that answers false.
    fn acts_at_dequeue(&self) -> bool {
        true
    }
    /// The queue became empty.
    fn on_empty(&mut self, _now: Time) {}
    /// The port's link became free while every queue was empty.
    fn on_idle(&mut self) {}
    /// The queue's priority was paused (`true`) or resumed (PFC, credits), with this many bytes and
    /// packets queued. An AQM that needs the pause state (TCD) keeps it from these calls; the time is
    /// exact.
    fn on_pause(&mut self, _now: Time, _paused: bool, _queue_bytes: u64, _queue_pkts: u32) {}
    /// A controller's periodic tick reached this queue.
    fn on_tick(&mut self, _now: Time) {}
    /// The parameters were just changed.
    fn on_params(&mut self, _now: Time) {}
}

/// What a marking AQM does with a packet it would mark but that is not ECN-capable.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Forward it.
    #[default]
    Pass,
    /// Drop it (what WRED-with-ECN switches do).
    Drop,
}

/// Whether a queue-length AQM decides on the queue seen on arrival or the queue left behind at dequeue.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    #[default]
    Enqueue,
    Dequeue,
}

/// A threshold given as a time (`"200us"`) or a size (`"100KB"`, `"40pkt"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeOrSize {
    Time(Time),
    Size(Size),
}

impl TimeOrSize {
    /// Picoseconds, or bytes.
    pub fn value(&self, mtu: u64) -> u64 {
        match self {
            TimeOrSize::Time(t) => *t,
            TimeOrSize::Size(s) => s.bytes(mtu),
        }
    }
}

impl<'de> Deserialize<'de> for TimeOrSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)
            .map_err(|_| de::Error::custom("a time (\"200us\") or a size (\"100KB\") with its unit"))?;
        if let Ok(t) = crate::units::parse_time(&s) {
            return Ok(TimeOrSize::Time(t));
        }
        crate::units::parse_size(&s).map(TimeOrSize::Size).map_err(|_| {
            de::Error::custom(format!("`{s}` is neither a time (ps, ns, us, ms, s) nor a size (B, KB, MB, KiB, pkt)"))
        })
    }
}

/// What an AQM file's `Cfg` provides: its checks, the algorithm it builds, and what happens to a
/// packet the algorithm would mark that is not ECN-capable.
pub trait Config {
    type Algo;
    /// Check the keys; `field` is the table's path for errors.
    fn validate(&self, _field: &str, _mtu: u64) -> Result<(), ConfigError> {
        Ok(())
    }
    fn build(&self, mtu: u64) -> Self::Algo;
    fn non_ect(&self) -> NonEct;
    /// Whether the algorithm itself drops packets (a drop mode), besides Not-ECT ones per `non_ect`.
    fn drops(&self) -> bool {
        false
    }
}

/// The registry: one line per AQM (`Variant = "kind" => module::Type`) makes its config a `kind` of
/// `switch.aqm` ([`AqmCfg`]), its type a variant of [`Aqm`], and routes every hook to it. Every AQM type
/// keeps its parameters in a `pub params` field (`Debug`): a parameter change replaces that field and
/// keeps the state, and `controller_steps` shows it.
macro_rules! registry {
    ($( $variant:ident = $kind:literal => $module:ident :: $algo:ident ),* $(,)?) => {
        kind_enum! {
            /// `switch.aqm`: one AQM kind with its keys.
            #[derive(Debug, Clone)]
            pub enum AqmCfg {
                $( $variant = $kind ($module::Cfg) ),*
            }
        }

        /// Every AQM, by variant. (`repr(u8)`: a one-byte tag at the front is read by every packet's
        /// enqueue and dequeue; Rust's own layout stored it in a niche of one variant's fields, which each
        /// match decoded first.)
        #[derive(Debug)]
        #[repr(u8)]
        pub enum Aqm {
            $( $variant($module::$algo) ),*
        }

        impl AqmCfg {
            /// Check the keys; `field` is the table's path for errors.
            pub fn validate(&self, field: &str, mtu: u64) -> Result<(), ConfigError> {
                match self {
                    $( AqmCfg::$variant(c) => c.validate(field, mtu), )*
                }
            }

            /// What the AQM does with a Not-ECT packet it would mark.
            pub fn non_ect(&self) -> NonEct {
                match self {
                    $( AqmCfg::$variant(c) => c.non_ect(), )*
                }
            }

            /// Whether the AQM may drop a packet (a drop mode, or `non_ect = "drop"`): not for a
            /// lossless queue.
            pub fn may_drop(&self) -> bool {
                match self {
                    $( AqmCfg::$variant(c) => c.drops() || c.non_ect() == NonEct::Drop, )*
                }
            }
        }

        impl Aqm {
            pub fn from_cfg(cfg: &AqmCfg, mtu: u64) -> Aqm {
                match cfg {
                    $( AqmCfg::$variant(c) => Aqm::$variant(c.build(mtu)), )*
                }
            }

            /// The `kind` of this AQM.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Aqm::$variant(_) => $kind, )*
                }
            }

            /// Take the parameters of `cfg` (of this AQM's kind), keeping the running state.
            pub fn set_params(&mut self, cfg: &AqmCfg, mtu: u64, now: Time) -> Result<(), String> {
                match (&mut *self, Aqm::from_cfg(cfg, mtu)) {
                    $( (Aqm::$variant(a), Aqm::$variant(b)) => a.params = b.params, )*
                    #[allow(unreachable_patterns)]
                    (_, b) => {
                        return Err(format!(
                            "the queue runs `{}`; a parameter change must keep the kind, not `{}`",
                            self.kind(),
                            b.kind()
                        ))
                    }
                }
                self.on_params(now);
                Ok(())
            }

            /// The parameters, as text (controller records).
            pub fn describe(&self) -> String {
                match self {
                    $( Aqm::$variant(a) => format!("{} {:?}", $kind, a.params).trim_end().to_string(), )*
                }
            }
        }

        impl Hooks for Aqm {
            // Always inlined: the lossless path calls these too, and a third call site must not cost the
            // per-packet path its inlining.
            // Each arm takes its own copy of the context: an arm whose hook is not inlined needs it in
            // memory, and one shared copy made the context be written to the stack before the match on
            // every packet, for DCTCP too, which reads one field (six stores per switch arrival).
            #[inline(always)]
            fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
                match self {
                    $( Aqm::$variant(a) => {
                        let ctx = *ctx;
                        Hooks::on_enqueue(a, &ctx, rng)
                    } )*
                }
            }
            #[inline(always)]
            fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, rng: &mut Rng) -> Verdict {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_dequeue(a, ctx, sojourn, rng), )*
                }
            }
            #[inline(always)]
            fn acts_at_dequeue(&self) -> bool {
                match self {
                    $( Aqm::$variant(a) => Hooks::acts_at_dequeue(a), )*
                }
            }
            #[inline]
            fn on_empty(&mut self, now: Time) {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_empty(a, now), )*
                }
            }
            #[inline]
            fn on_idle(&mut self) {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_idle(a), )*
                }
            }
            fn on_pause(&mut self, now: Time, paused: bool, queue_bytes: u64, queue_pkts: u32) {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_pause(a, now, paused, queue_bytes, queue_pkts), )*
                }
            }
            fn on_tick(&mut self, now: Time) {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_tick(a, now), )*
                }
            }
            fn on_params(&mut self, now: Time) {
                match self {
                    $( Aqm::$variant(a) => Hooks::on_params(a, now), )*
                }
            }
        }
    };
}

registry! {
    Droptail = "droptail" => droptail::DropTail,
    DctcpRed = "dctcp_red" => dctcp_red::DctcpRed,
    Red = "red" => red::Red,
    Tcn = "tcn" => tcn::Tcn,
    Codel = "codel" => codel::Codel,
    EcnSharp = "ecn_sharp" => ecn_sharp::EcnSharp,
    Pie = "pie" => pie::Pie,
    Tcd = "tcd" => tcd::Tcd,
    NpEcn = "np_ecn" => np_ecn::NpEcn,
    IbFecn = "ib_fecn" => ib_fecn::IbFecn,
}

impl Default for AqmCfg {
    fn default() -> Self {
        AqmCfg::Droptail(droptail::Cfg {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    /// Every kind from a small config (its keys, and whether it has `mark_at`: then once more marking at
    /// dequeue), with the config's text.
    fn every_aqm() -> Vec<(String, Aqm)> {
        let kinds: [(&str, &[&str], bool); 10] = [
            ("droptail", &[], false),
            ("dctcp_red", &[r#"threshold = "30KB""#], true),
            ("red", &[r#"kmin = "5KB""#, r#"kmax = "200KB""#, "pmax = 0.5"], true),
            ("tcn", &[r#"threshold = "70us""#], false),
            ("codel", &[r#"target = "20us""#, r#"interval = "200us""#], false),
            ("ecn_sharp", &[r#"ins_target = "100us""#, r#"pst_target = "10us""#, r#"pst_interval = "100us""#], false),
            ("pie", &[], false),
            ("tcd", &[], false),
            ("np_ecn", &[], false),
            ("ib_fecn", &[], false),
        ];
        let mut srcs = vec![];
        for (kind, keys, mark_at) in kinds {
            let src = std::iter::once(format!("kind = \"{kind}\"")).chain(keys.iter().map(|k| k.to_string())).collect::<Vec<_>>().join("\n");
            let dequeue = mark_at.then(|| format!("{src}\nmark_at = \"dequeue\""));
            srcs.push(src);
            srcs.extend(dequeue);
        }
        srcs.into_iter()
            .map(|src| {
                let cfg: AqmCfg = toml::from_str(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
                let aqm = Aqm::from_cfg(&cfg, 1500);
                (src, aqm)
            })
            .collect()
    }

    /// An AQM that says it does nothing at dequeue (so the port skips the call) passes every packet there
    /// and keeps its state, over queues up to 4 MB and sojourns up to 10 ms; and the kinds that say so are
    /// exactly those that need nothing there (a kind that answered true without need would only be slower,
    /// one that answered false with need would mark or drop less: both fail here).
    #[test]
    fn quiet_at_dequeue_means_it() {
        let aqms = every_aqm();
        for k in AqmCfg::KINDS {
            assert!(aqms.iter().any(|(_, a)| a.kind() == *k), "`{k}` is missing from the test");
        }
        let mut rng = crate::rng::stream(1, "aqm", 0);
        let mut quiet = vec![];
        for (src, mut a) in aqms {
            if a.acts_at_dequeue() {
                continue;
            }
            quiet.push(src.replace('\n', " "));
            for step in 0..200u64 {
                let q = step * 20_000;
                let ctx = QueueCtx { now: step * 10 * US, queue_bytes: q, queue_pkts: (q / 1500) as u32, port_bytes: q, port_rate: 10_000_000_000, mtu: 1500 };
                a.on_enqueue(&ctx, &mut rng);
                let before = format!("{a:?}");
                assert_eq!(a.on_dequeue(&ctx, step * 50 * US, &mut rng), Verdict::Pass, "{src}");
                a.on_empty(ctx.now);
                assert_eq!(format!("{a:?}"), before, "{src}: its dequeue changed its state");
            }
        }
        assert_eq!(quiet, [r#"kind = "droptail""#, r#"kind = "dctcp_red" threshold = "30KB""#, r#"kind = "ib_fecn""#]);
    }
}
