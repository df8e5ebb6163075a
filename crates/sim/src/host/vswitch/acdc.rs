//! AC/DC TCP (He, Rozner, Agarwal, Gu, Felter, Carter, Akella, "AC/DC TCP: Virtual Congestion Control
//! Enforcement for Datacenter Networks", SIGCOMM 2016): each host's vSwitch runs DCTCP for every connection
//! of its guests, whatever their own congestion control, and enforces DCTCP's window by lowering the
//! receive window of the ACKs it hands to the sending guest. As `spec/acdc.md` §0 (the first author's
//! thesis) and §3–8 give it; the sending and the receiving end each run their half:
//!
//! ```text
//! sender's vSwitch, guest → network    data: snd_nxt ← max(snd_nxt, seq + len); ECT on a Not-ECT segment (and the
//!                                       reserved bit saying so); police (optional); a resend of snd_una outside
//!                                       recovery without 3 duplicate ACKs is a guest timeout:
//!                                       ssthresh ← max(cwnd/2, rwnd_min), cwnd ← 1 MSS
//! receiver's vSwitch, network → guest  data: total += len, ce += len if CE; the guest never sees CE
//!                                       (Not-ECT again where the reserved bit says so, else ECT)
//! receiver's vSwitch, guest → network  ACK: option (total, ce), cumulative mod 2^32; where the option would take
//!                                       the segment past the MTU, a separate feedback-only ACK carries it
//! sender's vSwitch, network → guest    SYN-ACK: the receiver's window scale. ACK: read and strip the option
//!                                       (consume a feedback-only ACK), then, with Δtotal, Δce since the last:
//!   acked += Δtotal; ce_acked += Δce
//!   ack > snd_una:   newly ← ack − snd_una; snd_una ← ack; dupacks ← 0; recovery ends once ack ≥ recover
//!                    snd_una ≥ win_end: α ← (1 − g)·α + g·ce_acked/acked; acked, ce_acked ← 0; win_end ← snd_nxt
//!                    Δce > 0 outside CWR: cwnd ← max(cwnd·(1 − α·(1 − β/2)), rwnd_min); ssthresh ← cwnd; CWR
//!                    else if Δce = 0 and snd_nxt − snd_una + MSS ≥ cwnd with snd_una before this ACK
//!                    (no congestion, window-limited): cwnd += newly below ssthresh, MSS·newly/cwnd above
//!                    CWR ends once snd_una ≥ the snd_nxt of the cut (one cut per window of data)
//!   ack = snd_una, no data, data outstanding: dupacks += 1; the third outside recovery:
//!                    ssthresh ← max(cwnd/2, rwnd_min); cwnd ← ssthresh; recovery until ack ≥ snd_nxt
//!   RWND field ← min(RWND field, ⌈max(cwnd, rwnd_min) / 2^wscale⌉)
//! ```
//!
//! Growth only on ACKs that report no CE follows §0 ("Reno slow start and congestion avoidance while there
//! is no congestion"; Linux does not grow in CWR either); §5's reconstruction would also grow on marked
//! ACKs after the cut, which under marks on every ACK adds an MSS per RTT to every flow and undoes the
//! byte-sized floor: 47 senders into one 10G port (9 KB MTU) then queue 792 KB, as DCTCP's 802 KB, instead
//! of 268 KB (`crates/sim/tests/acdc.rs`).
//!
//! β is the flow's priority (§7: 1 is DCTCP's cut, 0 cuts by all of α). The window is in bytes and may go
//! below one MSS (`rwnd_min`, default 1460 B; `"2mss"` gives DCTCP's floor): the guests' TCP sends short
//! segments then (RFC 1122 silly-window avoidance, `transport/tcp`). Our TCP never puts an ACK on a data
//! segment, so the ACKs' option always fits; the feedback-only ACK is there for segments that carry both.
//! Per-flow state is keyed by the flow (both ends of a connection share the id, as the five-tuple would
//! give them; a persistent connection's packets all carry its first message's id, so its messages share
//! one state) and is forgotten after `idle_timeout` without a packet (a flow seen again after that has no
//! window scale — the handshake is long gone — and is counted but no longer enforced). Scenarios with AC/DC need the
//! handshake (the window scale comes from it); the build says so otherwise.

use super::{Action, ShimOut, Toward};
use crate::config::ConfigError;
use crate::net::packet::{flags, Ecn, Packet, PktId, TcpOpt, ACK_BYTES, HEADER_BYTES};
use crate::units::{parse_size, parse_time, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// `host.vswitch = { kind = "acdc", … }`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cfg {
    /// The smallest window AC/DC enforces: a size (`"1460B"`) or a number of MSS (`"2mss"`).
    pub rwnd_min: String,
    /// AC/DC's initial window (segments).
    pub init_cwnd: u32,
    /// Payload bytes per full segment; default MTU − 40.
    pub mss: Option<u32>,
    /// DCTCP's estimation gain g and initial α.
    pub g: f64,
    pub alpha_init: f64,
    /// β, the flow's priority in the cut (§7), for every flow...
    pub beta: f64,
    /// ...or per traffic class: flows of `priority = i` take entry i (those beyond the list take `beta`).
    pub beta_by_priority: Vec<f64>,
    /// Drop a guest's segment past the window last advertised to it, plus `police_slack` (§8).
    pub police: bool,
    pub police_slack: String,
    /// Forget a flow after this long without a packet.
    pub idle_timeout: String,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg {
            rwnd_min: "1460B".into(),
            init_cwnd: 10,
            mss: None,
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            beta: 1.0,
            beta_by_priority: Vec::new(),
            police: false,
            police_slack: "1mss".into(),
            idle_timeout: "1s".into(),
        }
    }
}

/// Resolved parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub rwnd_min: u64,
    pub mss: u64,
    pub iw: f64,
    pub g: f64,
    pub alpha_init: f64,
    /// β by priority; `beta` beyond.
    pub betas: Vec<f64>,
    pub beta: f64,
    /// Policing slack in bytes, when policing is on.
    pub police: Option<u64>,
    pub idle: Time,
    pub mtu: u32,
}

/// `"2mss"` → 2·mss; otherwise a size.
fn parse_window(s: &str, mss: u64, mtu: u32) -> Result<u64, String> {
    if let Some(n) = s.trim().strip_suffix("mss") {
        let n: f64 = n.trim().parse().map_err(|_| format!("`{s}`: write a number of MSS such as \"2mss\", or a size"))?;
        if !(n.is_finite() && n >= 0.0 && n <= 1e6) {
            return Err(format!("`{s}`: the number of MSS must be 0–1e6"));
        }
        return Ok((n * mss as f64).round() as u64);
    }
    let size = parse_size(s).map_err(|e| format!("{e}; or a number of MSS such as \"2mss\""))?;
    Ok(size.bytes(mtu as u64))
}

impl Cfg {
    pub fn resolve(&self, mtu: u32) -> Result<Params, ConfigError> {
        let f = |k: &str| format!("host.vswitch.{k}");
        let mss = self.mss.unwrap_or(mtu.saturating_sub(HEADER_BYTES)) as u64;
        if mss == 0 || mss + HEADER_BYTES as u64 > mtu as u64 {
            return Err(ConfigError::new(f("mss"), format!("must be 1 to MTU − 40 = {} bytes", mtu.saturating_sub(HEADER_BYTES))));
        }
        let rwnd_min = parse_window(&self.rwnd_min, mss, mtu).map_err(|e| ConfigError::new(f("rwnd_min"), e))?;
        if rwnd_min == 0 || rwnd_min > u32::MAX as u64 {
            return Err(ConfigError::new(f("rwnd_min"), "must be 1 B to 4 GB (a zero window would stop every flow)"));
        }
        if self.init_cwnd == 0 || self.init_cwnd > 1_000_000 {
            return Err(ConfigError::new(f("init_cwnd"), "must be 1 to 1000000 segments"));
        }
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ConfigError::new(f("g"), "DCTCP's gain must be in (0, 1] (default 1/16)"));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(ConfigError::new(f("alpha_init"), "α is a fraction: 0–1 (default 1)"));
        }
        if !(0.0..=1.0).contains(&self.beta) {
            return Err(ConfigError::new(f("beta"), "β is 0–1: 1 cuts as DCTCP, 0 by all of α"));
        }
        if let Some(i) = self.beta_by_priority.iter().position(|b| !(0.0..=1.0).contains(b)) {
            return Err(ConfigError::new(format!("host.vswitch.beta_by_priority[{i}]"), "β is 0–1: 1 cuts as DCTCP, 0 by all of α"));
        }
        let slack = parse_window(&self.police_slack, mss, mtu).map_err(|e| ConfigError::new(f("police_slack"), e))?;
        let idle = parse_time(&self.idle_timeout).map_err(|e| ConfigError::new(f("idle_timeout"), e))?;
        if idle == 0 {
            return Err(ConfigError::new(f("idle_timeout"), "must be positive (default \"1s\")"));
        }
        Ok(Params {
            rwnd_min,
            mss,
            iw: self.init_cwnd as f64 * mss as f64,
            g: self.g,
            alpha_init: self.alpha_init,
            betas: self.beta_by_priority.clone(),
            beta: self.beta,
            police: self.police.then_some(slack),
            idle,
            mtu,
        })
    }
}

/// What the vSwitches of a run did (summed over hosts into `meta.acdc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// ACKs that left with the feedback option, and separate feedback-only ACKs.
    pub feedback_options: u64,
    pub feedback_only_acks: u64,
    /// Data segments made ECN-capable, and CE-marked payload bytes hidden from receiving guests.
    pub ect_set: u64,
    pub ce_bytes: u64,
    /// ACKs whose receive window AC/DC lowered.
    pub rwnd_rewrites: u64,
    /// DCTCP window cuts, cuts on three duplicate ACKs, and guest timeouts inferred.
    pub ecn_cuts: u64,
    pub loss_cuts: u64,
    pub timeouts: u64,
    /// Segments dropped by policing.
    pub policed: u64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.feedback_options += o.feedback_options;
        self.feedback_only_acks += o.feedback_only_acks;
        self.ect_set += o.ect_set;
        self.ce_bytes += o.ce_bytes;
        self.rwnd_rewrites += o.rwnd_rewrites;
        self.ecn_cuts += o.ecn_cuts;
        self.loss_cuts += o.loss_cuts;
        self.timeouts += o.timeouts;
        self.policed += o.policed;
    }
}

/// The sending end's state of one flow.
#[derive(Clone, Debug)]
pub struct Sender {
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The receiver's window-scale shift (its SYN-ACK); None until seen.
    pub wscale: Option<u8>,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub alpha: f64,
    win_end: u64,
    acked: u64,
    ce_acked: u64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    in_cwr: bool,
    cwr_end: u64,
    fb_total: u32,
    fb_ce: u32,
    pub beta: f64,
    /// The window (bytes past the ACK) last written into an ACK for the guest, and that ACK.
    pub adv_wnd: Option<(u64, u64)>,
    last: Time,
}

/// The receiving end's counters of one flow.
#[derive(Clone, Copy, Debug)]
pub struct Receiver {
    pub total: u32,
    pub ce: u32,
    last: Time,
}

type Map<V> = HashMap<u32, V, BuildHasherDefault<std::collections::hash_map::DefaultHasher>>;

/// One host's AC/DC vSwitch.
pub struct AcDc {
    pub p: Params,
    pub snd: Map<Sender>,
    pub rcv: Map<Receiver>,
    pub stats: Stats,
    next_sweep: Time,
}

impl AcDc {
    pub fn new(p: Params) -> AcDc {
        let next_sweep = p.idle;
        AcDc { p, snd: Map::default(), rcv: Map::default(), stats: Stats::default(), next_sweep }
    }

    fn sender(&mut self, now: Time, pkt: &Packet) -> &mut Sender {
        let p = &self.p;
        let s = self.snd.entry(pkt.flow).or_insert_with(|| Sender {
            snd_una: 0,
            snd_nxt: 0,
            wscale: None,
            cwnd: p.iw,
            ssthresh: f64::INFINITY,
            alpha: p.alpha_init,
            win_end: 0,
            acked: 0,
            ce_acked: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            in_cwr: false,
            cwr_end: 0,
            fb_total: 0,
            fb_ce: 0,
            beta: p.betas.get(pkt.prio as usize).copied().unwrap_or(p.beta),
            adv_wnd: None,
            last: now,
        });
        s.last = now;
        s
    }

    fn receiver(&mut self, now: Time, flow: u32) -> &mut Receiver {
        let r = self.rcv.entry(flow).or_insert(Receiver { total: 0, ce: 0, last: now });
        r.last = now;
        r
    }

    /// Forget flows idle for `idle_timeout` (checked at most once per `idle_timeout`).
    fn sweep(&mut self, now: Time) {
        if now < self.next_sweep {
            return;
        }
        let idle = self.p.idle;
        self.snd.retain(|_, s| now - s.last < idle);
        self.rcv.retain(|_, r| now - r.last < idle);
        self.next_sweep = now + idle;
    }

    /// A guest's data segment on its way out.
    fn egress_data(&mut self, now: Time, pkt: &mut Packet) -> Action {
        let (mss, rwnd_min, police) = (self.p.mss as f64, self.p.rwnd_min as f64, self.p.police);
        let s = self.sender(now, pkt);
        let end = pkt.seq + pkt.payload as u64;
        if let (Some(slack), Some((ack, wnd))) = (police, s.adv_wnd) {
            if end > ack.max(s.snd_una) + wnd + slack {
                self.stats.policed += 1;
                return Action::Drop;
            }
        }
        let timeout = pkt.seq == s.snd_una && pkt.seq < s.snd_nxt && !s.in_recovery && s.dupacks < 3;
        if timeout {
            // The guest resends its oldest unacknowledged byte without a fast retransmit: its RTO fired.
            s.ssthresh = (s.cwnd / 2.0).max(rwnd_min);
            s.cwnd = mss;
            s.in_recovery = true;
            s.recover = s.snd_nxt;
        }
        s.snd_nxt = s.snd_nxt.max(end);
        self.stats.timeouts += timeout as u64;
        if pkt.ecn == Ecn::NotEct {
            pkt.ecn = Ecn::Ect;
            pkt.flags |= flags::ACDC_ECT;
            self.stats.ect_set += 1;
        }
        Action::Pass
    }

    /// A guest's ACK on its way out: attach the flow's counters.
    fn egress_ack(&mut self, now: Time, pkt: &mut Packet, out: &mut ShimOut) {
        let mtu = self.p.mtu;
        let Some(r) = self.rcv.get_mut(&pkt.flow) else { return };
        r.last = now;
        let opt = TcpOpt::AcdcFeedback { total: r.total, ce: r.ce };
        if pkt.payload + HEADER_BYTES + opt.bytes() > mtu {
            let mut fb = *pkt;
            (fb.seq, fb.payload, fb.size, fb.ecn, fb.opt) = (0, 0, ACK_BYTES, Ecn::NotEct, opt);
            fb.flags = flags::ACK | flags::FEEDBACK_ONLY;
            out.inject.push((Toward::Network, fb));
            self.stats.feedback_only_acks += 1;
        } else {
            pkt.opt = opt;
            pkt.size = (pkt.payload + HEADER_BYTES + opt.bytes()).max(pkt.size);
            self.stats.feedback_options += 1;
        }
    }

    /// A data segment for a guest: count it and hide its CE mark.
    fn ingress_data(&mut self, now: Time, pkt: &mut Packet) {
        let r = self.receiver(now, pkt.flow);
        r.total = r.total.wrapping_add(pkt.payload);
        if pkt.ecn == Ecn::Ce {
            r.ce = r.ce.wrapping_add(pkt.payload);
            self.stats.ce_bytes += pkt.payload as u64;
        }
        if pkt.flags & flags::ACDC_ECT != 0 {
            pkt.ecn = Ecn::NotEct;
            pkt.flags &= !flags::ACDC_ECT;
        } else if pkt.ecn == Ecn::Ce {
            pkt.ecn = Ecn::Ect;
        }
    }

    /// An ACK for a guest: feedback, DCTCP, and the window the guest may use.
    fn ingress_ack(&mut self, now: Time, pkt: &mut Packet) -> Action {
        let p = &self.p;
        let (mss, rwnd_min, g) = (p.mss as f64, p.rwnd_min as f64, p.g);
        let (mut d_total, mut d_ce) = (0u64, 0u64);
        let s = self.sender(now, pkt);
        if let TcpOpt::AcdcFeedback { total, ce } = pkt.opt {
            d_total = total.wrapping_sub(s.fb_total) as u64;
            d_ce = ce.wrapping_sub(s.fb_ce) as u64;
            (s.fb_total, s.fb_ce) = (total, ce);
            pkt.opt = TcpOpt::None;
            pkt.size = (pkt.payload + HEADER_BYTES).max(ACK_BYTES);
        }
        if pkt.flags & flags::FEEDBACK_ONLY != 0 {
            s.acked += d_total;
            s.ce_acked += d_ce;
            return Action::Consume;
        }
        s.acked += d_total;
        s.ce_acked += d_ce;
        let a = pkt.ack;
        let (mut cut, mut loss) = (false, false);
        if a > s.snd_una {
            let newly = (a - s.snd_una) as f64;
            // The guest filled the window if what it had in flight when this ACK left, plus one segment,
            // reaches cwnd (its segments are whole MSS: it cannot fill the last fraction of one).
            let limited = s.snd_nxt.saturating_sub(s.snd_una) as f64 + mss >= s.cwnd;
            s.snd_una = a;
            s.dupacks = 0;
            if s.in_recovery && a >= s.recover {
                s.in_recovery = false;
            }
            if s.snd_una >= s.win_end {
                let f = s.ce_acked as f64 / s.acked.max(1) as f64;
                s.alpha = (1.0 - g) * s.alpha + g * f;
                (s.acked, s.ce_acked, s.win_end) = (0, 0, s.snd_nxt);
            }
            if d_ce > 0 && !s.in_cwr {
                s.cwnd = (s.cwnd * (1.0 - s.alpha * (1.0 - s.beta / 2.0))).max(rwnd_min);
                s.ssthresh = s.cwnd;
                (s.in_cwr, s.cwr_end) = (true, s.snd_nxt);
                cut = true;
            } else if limited && d_ce == 0 {
                s.cwnd += if s.cwnd < s.ssthresh { newly } else { mss * newly / s.cwnd };
            }
            if s.in_cwr && s.snd_una >= s.cwr_end {
                s.in_cwr = false;
            }
        } else if a == s.snd_una && pkt.payload == 0 && s.snd_nxt > s.snd_una {
            s.dupacks += 1;
            if s.dupacks == 3 && !s.in_recovery {
                s.ssthresh = (s.cwnd / 2.0).max(rwnd_min);
                s.cwnd = s.ssthresh;
                (s.in_recovery, s.recover) = (true, s.snd_nxt);
                loss = true;
            }
        }
        self.stats.ecn_cuts += cut as u64;
        self.stats.loss_cuts += loss as u64;
        self.write_rwnd(pkt);
        Action::Pass
    }

    /// RWND ← min(the receiver's, AC/DC's window), in the receiver's window scale; never 0 for a positive
    /// window, never above what the receiver offered.
    fn write_rwnd(&mut self, pkt: &mut Packet) {
        let rwnd_min = self.p.rwnd_min;
        let s = self.snd.get_mut(&pkt.flow).expect("the sender's state was just made");
        let Some(ws) = s.wscale else { return };
        let wnd = (s.cwnd as u64).max(rwnd_min);
        let field = wnd.div_ceil(1u64 << ws).min(u16::MAX as u64) as u16;
        if field < pkt.win {
            pkt.win = field;
            self.stats.rwnd_rewrites += 1;
        }
        s.adv_wnd = Some((pkt.ack, (pkt.win as u64) << ws));
    }
}

impl super::Build for AcDc {
    type Cfg = Cfg;
    fn build(cfg: &Cfg, mtu: u32) -> Result<AcDc, ConfigError> {
        Ok(AcDc::new(cfg.resolve(mtu)?))
    }
}

impl super::Shim for AcDc {
    fn egress(&mut self, now: Time, _id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
        self.sweep(now);
        if pkt.has(flags::SYN) {
            if !pkt.has(flags::ACK) {
                let s = self.sender(now, pkt);
                (s.snd_una, s.snd_nxt) = (pkt.seq, pkt.seq);
            }
            return Action::Pass;
        }
        if pkt.payload > 0 && self.egress_data(now, pkt) == Action::Drop {
            return Action::Drop;
        }
        if pkt.has(flags::ACK) {
            self.egress_ack(now, pkt, out);
        }
        Action::Pass
    }

    fn ingress(&mut self, now: Time, _id: PktId, pkt: &mut Packet, _out: &mut ShimOut) -> Action {
        self.sweep(now);
        if pkt.has(flags::SYN) {
            if pkt.has(flags::ACK) {
                // Without the option the connection does not scale its windows (RFC 7323 §2.2).
                let ws = if let TcpOpt::WScale(w) = pkt.opt { w } else { 0 };
                self.sender(now, pkt).wscale = Some(ws);
            } else {
                self.receiver(now, pkt.flow);
            }
            return Action::Pass;
        }
        if pkt.has(flags::ACK) && self.ingress_ack(now, pkt) == Action::Consume {
            return Action::Consume;
        }
        if pkt.payload > 0 {
            self.ingress_data(now, pkt);
        }
        Action::Pass
    }
}

#[cfg(test)]
#[path = "acdc_tests.rs"]
pub(crate) mod tests;
