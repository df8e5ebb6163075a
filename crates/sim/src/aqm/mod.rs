//! Active queue management. An AQM may act when a packet is enqueued (RED family: instantaneous or averaged
//! queue length) and when it is dequeued (sojourn-time AQMs). It answers pass / mark CE / drop; the port
//! glue turns a mark on a Not-ECT packet into pass or drop per `non_ect`. Buffer-overflow drops are the
//! buffer manager's, never the AQM's. Parameters may change at run time; a change applies to the next
//! decision.

pub mod codel;
pub mod dctcp_red;
pub mod droptail;
pub mod ecn_sharp;
pub mod red;
pub mod tcn;

use crate::config::{AqmCfg, CodelMode, ControlLawCfg, DivisionCfg, MarkAt, NonEct, SharpSignal, TimeOrSize};
use crate::rng::Rng;
use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Mark,
    Drop,
}

/// What an AQM may see of its queue and port.
#[derive(Clone, Copy, Debug)]
pub struct QueueCtx {
    pub now: Time,
    /// Bytes held by this queue (at enqueue: before the arriving packet; at dequeue: after removing it).
    pub queue_bytes: u64,
    pub queue_pkts: u32,
    pub port_bytes: u64,
    pub port_rate: u64,
    pub mtu: u32,
}

pub enum Aqm {
    DropTail(droptail::DropTail),
    DctcpRed(dctcp_red::DctcpRed),
    Red(red::Red),
    Tcn(tcn::Tcn),
    Codel(codel::Codel),
    EcnSharp(ecn_sharp::EcnSharp),
}

impl Aqm {
    pub fn from_cfg(cfg: &AqmCfg, mtu: u64) -> Aqm {
        match cfg {
            AqmCfg::Droptail {} => Aqm::DropTail(droptail::DropTail),
            AqmCfg::DctcpRed { threshold, mark_at, .. } => Aqm::DctcpRed(dctcp_red::DctcpRed::new(dctcp_red::Params {
                threshold: threshold.0.bytes(mtu),
                at_dequeue: *mark_at == MarkAt::Dequeue,
            })),
            AqmCfg::Red { kmin, kmax, pmax, average, mark_at, .. } => Aqm::Red(red::Red::new(red::Params {
                kmin: kmin.0.bytes(mtu),
                kmax: kmax.0.bytes(mtu),
                pmax: *pmax,
                weight: *average,
                at_dequeue: *mark_at == MarkAt::Dequeue,
            })),
            AqmCfg::Tcn { threshold, .. } => Aqm::Tcn(tcn::Tcn::new(tcn::Params { threshold: threshold.0 })),
            AqmCfg::Codel { target, interval, mode, .. } => Aqm::Codel(codel::Codel::new(codel::Params {
                target: target.0,
                interval: interval.0,
                mode: match mode {
                    CodelMode::Drop => codel::Mode::Drop,
                    CodelMode::Ecn => codel::Mode::Ecn,
                },
            })),
            AqmCfg::EcnSharp { ins_target, pst_target, pst_interval, ins_max, ins_pmax, signal, control_law, division, .. } => {
                let v = |x: &TimeOrSize| match x {
                    TimeOrSize::Time(t) => *t,
                    TimeOrSize::Size(s) => s.bytes(mtu),
                };
                Aqm::EcnSharp(ecn_sharp::EcnSharp::new(ecn_sharp::Params {
                    ins_target: v(ins_target),
                    pst_target: v(pst_target),
                    pst_interval: pst_interval.0,
                    ins_ramp: match (ins_max, ins_pmax) {
                        (Some(m), Some(p)) => Some((v(m), *p)),
                        _ => None,
                    },
                    signal: match signal {
                        SharpSignal::Sojourn => ecn_sharp::Signal::Sojourn,
                        SharpSignal::Queue => ecn_sharp::Signal::Queue,
                    },
                    control_law: match control_law {
                        ControlLawCfg::Linear => ecn_sharp::ControlLaw::Linear,
                        ControlLawCfg::Sqrt => ecn_sharp::ControlLaw::Sqrt,
                    },
                    division: match division {
                        DivisionCfg::Exact => ecn_sharp::Division::Exact,
                        DivisionCfg::Tofino => ecn_sharp::Division::Tofino,
                    },
                }))
            }
        }
    }

    /// What a marking AQM does with a Not-ECT packet it would mark.
    pub fn non_ect(cfg: &AqmCfg) -> NonEct {
        match cfg {
            AqmCfg::Droptail {} => NonEct::Pass,
            AqmCfg::DctcpRed { non_ect, .. } => *non_ect,
            // RED is drop-capable: by default it drops what it cannot mark (aqm.md, common conventions).
            AqmCfg::Red { non_ect, .. } => non_ect.unwrap_or(NonEct::Drop),
            AqmCfg::Codel { non_ect, .. } => non_ect.unwrap_or(NonEct::Drop),
            AqmCfg::Tcn { non_ect, .. } | AqmCfg::EcnSharp { non_ect, .. } => *non_ect,
        }
    }

    #[inline]
    pub fn on_enqueue(&mut self, ctx: &QueueCtx, rng: &mut Rng) -> Verdict {
        match self {
            Aqm::DropTail(_) => Verdict::Pass,
            Aqm::DctcpRed(a) => a.on_enqueue(ctx),
            Aqm::Red(a) => a.on_enqueue(ctx, rng),
            Aqm::Tcn(_) | Aqm::Codel(_) | Aqm::EcnSharp(_) => Verdict::Pass,
        }
    }

    #[inline]
    pub fn on_enqueue_any(&self) -> bool {
        matches!(self, Aqm::DctcpRed(_) | Aqm::Red(_))
    }

    #[inline]
    pub fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, rng: &mut Rng) -> Verdict {
        match self {
            Aqm::DropTail(_) => Verdict::Pass,
            Aqm::DctcpRed(a) => a.on_dequeue(ctx),
            Aqm::Red(a) => a.on_dequeue(ctx, rng),
            Aqm::Tcn(a) => a.on_dequeue(sojourn),
            Aqm::Codel(a) => a.on_dequeue(ctx, sojourn),
            Aqm::EcnSharp(a) => a.on_dequeue(ctx, sojourn, rng),
        }
    }

    /// The port's link became free while every queue was empty.
    #[inline]
    pub fn on_idle(&mut self) {
        if let Aqm::Codel(a) = self {
            a.on_idle()
        }
    }

    /// Called when the queue becomes empty (RED's idle-time decay).
    #[inline]
    pub fn on_empty(&mut self, now: Time) {
        if let Aqm::Red(a) = self {
            a.on_empty(now)
        }
    }
}
