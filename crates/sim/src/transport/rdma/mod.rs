//! RDMA over Converged Ethernet (RoCEv2), `spec/transports.md` Part C "Common RoCE model": one reliable
//! connection (queue pair) per flow, both ends in one `Conn`.
//!
//! - **Sender**: packets of `mss` payload bytes plus [`config::ROCE_HEADER_BYTES`], paced at the rate
//!   control's current rate R_C: the next packet may leave at `last departure + wire·8/R_C` (HPCC ns-3
//!   `UpdateNextAvail`; a rate change moves the pending departure, as `ChangeRate` does). At most one data
//!   packet of the queue pair waits in the host NIC at a time (the `departed` hook releases the next), so a
//!   FIFO NIC serves the eligible queue pairs in turn and a paused NIC priority holds one packet per queue
//!   pair, never an unbounded queue. Go-back-N on a NACK; a retransmission timeout (`rto`) for a lost
//!   tail, which also goes back to the first unacknowledged byte. Optional window (`window`).
//! - **Receiver**: accepts only the next expected packet (go-back-N: no reordering buffer); ACKs every
//!   `ack_interval` in-order packets and the last one; on a gap sends a NACK for the expected sequence, at
//!   most once per `nack_interval` for the same sequence (HPCC ns-3 `ReceiverCheckSeq`); the notification
//!   point sends a CNP for a CE-marked packet (`dcqcn::Np`). A CNP rides on the ACK or NACK the packet
//!   triggers (flags ACK|CNP), else it is a packet of its own; all of them go on `control_priority`.
//!
//! With HPCC (`hpcc.rs`) every data packet carries INT (`flags::INT`, `net/int.rs`) and its INT header
//! bytes; the receiver's ACK or NACK brings the records back (`Transport::at_sender_int`), and the rate
//! control sets both the pacing rate and the window.
//!
//! One engine timer carries every sender deadline but the RTO (the pacing departure, DCQCN's increase
//! timer and decrease check; α is lazy), the earliest of them; on expiry every due one is handled. The
//! second timer is the RTO.

pub mod config;
pub mod dcqcn;
pub mod hpcc;
pub mod ib_cc;
pub mod timely;

use super::{Out, TraceSample, Transport, MAX_TIMERS};
use crate::engine::timer::Timer;
use crate::net::int::Hop;
use crate::net::packet::{flags, Ecn, Packet};
use crate::units::Time;
pub use config::{Cfg, RdmaParams, ROCE_HEADER_BYTES};

/// The rate control of a queue pair: one variant per algorithm. HPCC's state holds the
/// previous ACK's INT records: boxed, so that a connection of any run stays small.
#[derive(Clone, Debug)]
pub enum RateControl {
    Dcqcn(dcqcn::Rp),
    Timely(timely::Rate),
    Hpcc(Box<hpcc::Hpcc>),
    IbCc(ib_cc::IbCc),
}

impl RateControl {
    #[inline]
    fn rate(&self) -> f64 {
        match self {
            RateControl::Dcqcn(rp) => rp.rc,
            RateControl::Timely(t) => t.rate,
            RateControl::Hpcc(h) => h.rate(),
            RateControl::IbCc(c) => c.rate(),
        }
    }
    /// DCQCN's α; TIMELY's gradient; HPCC's smoothed utilisation Û; IB CC's CCTI.
    fn alpha(&self) -> f64 {
        match self {
            RateControl::Dcqcn(rp) => rp.alpha,
            RateControl::Timely(t) => t.gradient(),
            RateControl::Hpcc(h) => h.u,
            RateControl::IbCc(c) => c.ccti as f64,
        }
    }
    /// Feedback reached the sender: a CNP (DCQCN; `ue` for TCD's UE notification), and for an ACK or
    /// NACK the RTT sample its echoed send time gives (TIMELY).
    #[inline]
    fn on_feedback(&mut self, now: Time, pkt: &Packet, snd_nxt: u64) {
        match self {
            RateControl::Dcqcn(rp) => {
                rp.touch(now);
                if pkt.has(flags::CNP) {
                    if pkt.has(flags::UE) {
                        rp.on_ue(now);
                    } else {
                        rp.on_cnp(now);
                    }
                }
            }
            RateControl::Timely(t) => {
                if pkt.has(flags::ACK | flags::NACK) {
                    let echo = if pkt.has(flags::ECE) {
                        timely::Echo::Ce
                    } else if pkt.has(flags::UE) {
                        timely::Echo::Ue
                    } else {
                        timely::Echo::None
                    };
                    t.on_ack(now, now - pkt.ts, pkt.ack, snd_nxt, echo);
                }
            }
            RateControl::Hpcc(_) => {} // its feedback is the INT an ACK brings (`Conn::on_int`)
            RateControl::IbCc(c) => {
                // A BECN rides the CNP machinery; with TCD, a UE one carries UE (cause = UE).
                if pkt.has(flags::CNP) {
                    if pkt.has(flags::UE) {
                        c.on_ue(now);
                    } else {
                        c.on_becn(now);
                    }
                }
            }
        }
    }
    #[inline]
    fn on_sent(&mut self, wire: u64, now: Time) {
        match self {
            RateControl::Dcqcn(rp) => rp.on_sent(wire, now),
            RateControl::Timely(_) | RateControl::Hpcc(_) | RateControl::IbCc(_) => {}
        }
    }
    #[inline]
    fn next_deadline(&self) -> Option<Time> {
        match self {
            RateControl::Dcqcn(rp) => rp.next_deadline(),
            RateControl::IbCc(c) => c.next_deadline(),
            RateControl::Timely(_) | RateControl::Hpcc(_) => None,
        }
    }
    fn on_time(&mut self, now: Time) {
        match self {
            RateControl::Dcqcn(rp) => {
                rp.on_time(now);
            }
            RateControl::IbCc(c) => c.on_time(now),
            RateControl::Timely(_) | RateControl::Hpcc(_) => {}
        }
    }
    #[inline]
    fn gap(&self, wire: u32) -> Time {
        match self {
            RateControl::Dcqcn(rp) => rp.gap(wire),
            RateControl::Timely(t) => t.gap(wire),
            RateControl::Hpcc(h) => h.gap(wire),
            RateControl::IbCc(c) => c.gap(wire),
        }
    }
    fn last_rtt(&self) -> Time {
        match self {
            RateControl::Dcqcn(_) | RateControl::Hpcc(_) | RateControl::IbCc(_) => 0,
            RateControl::Timely(t) => t.last_rtt,
        }
    }
}

/// What the receiver tells the sender about marks: DCQCN's notification point sends CNPs (with TCD, UE
/// ones too); TIMELY's receiver echoes each ACKed packet's mark in the ACK; HPCC's takes no marks (its
/// ACKs carry INT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    Cnp { tcd: bool },
    Echo,
    Int,
}

/// What a queue pair keeps of its transport's parameters (the rate control holds its own): a
/// connection stays no larger than a TCP one, so RDMA does not grow the slots of every run.
#[derive(Clone, Copy, Debug)]
pub struct QpParams {
    pub mss: u32,
    pub ack_interval: u32,
    pub nack_interval: Time,
    pub rto: Time,
    pub window: u64,
    pub cnp_interval: Time,
    pub control_priority: u8,
    pub feedback: Feedback,
    /// Header bytes of a data packet (RoCEv2, and HPCC's INT header) and its flags (HPCC: INT too).
    pub hdr: u32,
    pub data_flags: u16,
}

pub struct Conn {
    pub flow: u32,
    /// Payload bytes (`u64::MAX`: long-lived).
    pub size: u64,
    pub p: QpParams,
    // --- sender ---
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// A data packet of this queue pair waits in (or is being handed to) the host NIC.
    in_nic: bool,
    /// Departure time and wire size of the last data packet that left the NIC (`None`: none yet).
    last_departure: Option<(Time, u32)>,
    /// The pacing departure the sender waits for.
    pace_at: Option<Time>,
    pub rc: RateControl,
    /// Pacing and the rate control's deadlines, the earliest of them.
    pub cc_timer: Timer,
    pub rto_timer: Timer,
    pub retransmits: u32,
    pub timeouts: u32,
    // --- receiver ---
    pub rcv_nxt: u64,
    /// In-order packets not yet acknowledged.
    unacked: u32,
    /// The expected sequence the last NACK named, and when another NACK for it may go.
    last_nack: Option<(u64, Time)>,
    /// The strongest mark of the packets the next ACK acknowledges (`Feedback::Echo`).
    echo: Ecn,
    pub np: dcqcn::Np,
    pub finished_at: Option<Time>,
}

impl Conn {
    pub fn new(flow: u32, size: u64, p: RdmaParams, line_rate: u64) -> Conn {
        let (rc, feedback) = match p.cc {
            config::CcKind::Dcqcn => (RateControl::Dcqcn(dcqcn::Rp::new(p.dcqcn.at(line_rate))), Feedback::Cnp { tcd: p.tcd }),
            config::CcKind::Timely => (RateControl::Timely(timely::Rate::new(p.timely.at(line_rate))), Feedback::Echo),
            config::CcKind::Hpcc => (RateControl::Hpcc(Box::new(hpcc::Hpcc::new(p.hpcc.at(line_rate)))), Feedback::Int),
            config::CcKind::IbCc => {
                let cc = ib_cc::IbCc::new(p.ib_cc, line_rate, p.mss + p.data_header_bytes());
                (RateControl::IbCc(cc), Feedback::Cnp { tcd: p.tcd })
            }
        };
        let window = match &rc {
            RateControl::Hpcc(h) => h.window_limit(p.mss),
            _ => p.window,
        };
        let (hdr, data_flags) = (p.data_header_bytes(), if feedback == Feedback::Int { flags::DATA | flags::INT } else { flags::DATA });
        let p = QpParams {
            mss: p.mss,
            ack_interval: p.ack_interval,
            nack_interval: p.nack_interval,
            rto: p.rto,
            window,
            cnp_interval: if p.cc == config::CcKind::IbCc { p.ib_cc.becn_interval } else { p.dcqcn.cnp_interval },
            control_priority: p.control_priority,
            feedback,
            hdr,
            data_flags,
        };
        Conn {
            flow,
            size,
            p,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            in_nic: false,
            last_departure: None,
            pace_at: None,
            rc,
            cc_timer: Timer::default(),
            rto_timer: Timer::default(),
            retransmits: 0,
            timeouts: 0,
            rcv_nxt: 0,
            unacked: 0,
            last_nack: None,
            echo: Ecn::NotEct,
            np: dcqcn::Np::default(),
            finished_at: None,
        }
    }

    pub fn sender_done(&self) -> bool {
        self.snd_una >= self.size
    }

    /// Send the next packet if the queue pair is eligible: nothing of it in the NIC, data left, the window
    /// open, and its pacing departure reached (else remember when it is).
    fn try_send(&mut self, now: Time, out: &mut Vec<Out>) {
        self.pace_at = None;
        if self.in_nic || self.snd_nxt >= self.size {
            return;
        }
        let len = (self.size - self.snd_nxt).min(self.p.mss as u64);
        if self.snd_nxt - self.snd_una + len > self.p.window {
            return; // an ACK reopens it
        }
        if let Some((t, wire)) = self.last_departure {
            let at = t + self.rc.gap(wire);
            if at > now {
                self.pace_at = Some(at);
                return;
            }
        }
        let seq = self.snd_nxt;
        if seq < self.snd_max {
            self.retransmits += 1;
        }
        out.push(Out::Seg { seq, len: len as u32, flags: self.p.data_flags, ts: now });
        self.in_nic = true;
        self.snd_nxt += len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.rc.on_sent(len + self.p.hdr as u64, now);
        if self.rto_timer.deadline.is_none() {
            self.rto_timer.deadline = Some(now + self.p.rto);
        }
    }

    /// The sender's engine timer: the earliest of the pacing departure and the rate control's deadlines.
    fn sync(&mut self) {
        let rc = if self.sender_done() { None } else { self.rc.next_deadline() };
        self.cc_timer.deadline = match (self.pace_at, rc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// ACKs, NACKs and CNPs at the sender.
    pub fn on_feedback(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
        self.rc.on_feedback(now, pkt, self.snd_nxt);
        self.acknowledge(now, pkt);
        self.try_send(now, out);
        self.sync();
    }

    /// An ACK or NACK with INT records at the sender (HPCC): acknowledge and go back as ns-3's
    /// `ReceiveAck` does, then update the rate and the window with the `snd_nxt` that leaves.
    pub fn on_int(&mut self, now: Time, pkt: &Packet, hops: &[Hop], out: &mut Vec<Out>) {
        self.acknowledge(now, pkt);
        if let RateControl::Hpcc(h) = &mut self.rc {
            if pkt.has(flags::ACK | flags::NACK) {
                h.on_ack(pkt.ack, self.snd_nxt, hops);
                self.p.window = h.window_limit(self.p.mss);
            }
        }
        self.try_send(now, out);
        self.sync();
    }

    /// What an ACK or NACK acknowledges; go-back-N on a NACK.
    #[inline]
    fn acknowledge(&mut self, now: Time, pkt: &Packet) {
        if pkt.has(flags::ACK | flags::NACK) && pkt.ack <= self.snd_max {
            let a = pkt.ack;
            if a > self.snd_una {
                self.snd_una = a;
                self.snd_nxt = self.snd_nxt.max(a);
                self.rto_timer.deadline = (self.snd_una < self.snd_max).then_some(now + self.p.rto);
            }
            if pkt.has(flags::NACK) && a == self.snd_una && a < self.snd_nxt {
                self.snd_nxt = a; // go-back-N
            }
        }
    }

    /// The retransmission timer: no progress for `rto`; go back to the first unacknowledged byte.
    pub fn on_rto(&mut self, now: Time, out: &mut Vec<Out>) {
        self.rto_timer.deadline = None;
        if self.snd_una >= self.snd_max {
            return;
        }
        self.timeouts += 1;
        self.snd_nxt = self.snd_una;
        self.rto_timer.deadline = Some(now + self.p.rto);
        self.try_send(now, out);
        self.sync();
    }

    /// A data packet at the receiver. Returns true when the flow just completed.
    pub fn on_data(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
        let cnp = self.notify(now, pkt.ecn);
        let (seq, end) = (pkt.seq, pkt.seq + pkt.payload as u64);
        let mut reply = None;
        if seq == self.rcv_nxt {
            self.rcv_nxt = end;
            self.unacked += 1;
            if self.unacked >= self.p.ack_interval || self.rcv_nxt >= self.size {
                reply = Some(flags::ACK);
            }
        } else if seq > self.rcv_nxt {
            // A gap: go-back-N drops the packet and names the expected sequence, once per interval.
            let due = match self.last_nack {
                Some((s, at)) => s != self.rcv_nxt || now >= at,
                None => true,
            };
            if due {
                self.last_nack = Some((self.rcv_nxt, now + self.p.nack_interval));
                reply = Some(flags::NACK);
            }
        } else {
            reply = Some(flags::ACK); // a duplicate (a spurious go-back): say again where we are
        }
        match reply {
            Some(f) => {
                self.unacked = 0;
                let echo = match std::mem::replace(&mut self.echo, Ecn::NotEct) {
                    Ecn::Ce => flags::ECE,
                    Ecn::Ue => flags::UE,
                    _ => 0,
                };
                // HPCC: the reply carries the data packet's INT back (`flags::INT`; the host copies it).
                let int = pkt.flags & flags::INT;
                out.push(Out::Ack { ack: self.rcv_nxt, flags: f | cnp | echo | int, ts_echo: pkt.ts, win: 0 });
            }
            None if cnp != 0 => out.push(Out::Ack { ack: self.rcv_nxt, flags: cnp, ts_echo: pkt.ts, win: 0 }),
            None => {}
        }
        if self.finished_at.is_none() && self.rcv_nxt >= self.size {
            self.finished_at = Some(now);
            return true;
        }
        false
    }
}

impl Conn {
    /// The receiver's notification for a data packet's mark: DCQCN's CNP flags (a UE CNP carries UE too),
    /// or TIMELY's echo kept for the next ACK (CE wins over UE).
    #[inline]
    fn notify(&mut self, now: Time, ecn: Ecn) -> u16 {
        match self.p.feedback {
            Feedback::Cnp { tcd } => match ecn {
                Ecn::Ce if self.np.on_ce(now, self.p.cnp_interval) => flags::CNP,
                Ecn::Ue if tcd && self.np.on_ue(now, self.p.cnp_interval) => flags::CNP | flags::UE,
                _ => 0,
            },
            Feedback::Echo => {
                if ecn as u8 > self.echo as u8 {
                    self.echo = ecn;
                }
                0
            }
            Feedback::Int => 0,
        }
    }
}

impl Transport for Conn {
    fn start(&mut self, now: Time, out: &mut Vec<Out>) {
        self.try_send(now, out);
        self.sync();
    }
    #[inline]
    fn at_sender(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
        self.on_feedback(now, pkt, out)
    }
    fn at_sender_int(&mut self, now: Time, pkt: &Packet, hops: &[Hop], out: &mut Vec<Out>) {
        self.on_int(now, pkt, hops, out)
    }
    #[inline]
    fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
        self.on_data(now, pkt, out)
    }
    /// The queue pair's packet left the NIC: the next one may follow at its pacing departure.
    #[inline]
    fn departed(&mut self, payload: u32, now: Time, out: &mut Vec<Out>) -> bool {
        self.in_nic = false;
        self.last_departure = Some((now, payload + self.p.hdr));
        self.try_send(now, out);
        self.sync();
        true
    }
    /// Timer 0: pacing and rate control; timer 1: retransmission timeout.
    #[inline]
    fn timer(&mut self, i: usize) -> Option<&mut Timer> {
        match i {
            0 => Some(&mut self.cc_timer),
            1 => Some(&mut self.rto_timer),
            _ => None,
        }
    }
    #[inline]
    fn due(&mut self) -> [Option<Time>; MAX_TIMERS] {
        [self.cc_timer.needs_entry(), self.rto_timer.needs_entry()]
    }
    fn on_timer(&mut self, i: usize, now: Time, out: &mut Vec<Out>) {
        match i {
            0 => {
                self.cc_timer.deadline = None;
                self.rc.on_time(now);
                self.try_send(now, out);
                self.sync();
            }
            _ => self.on_rto(now, out),
        }
    }
    #[inline]
    fn closed(&self) -> bool {
        self.sender_done() && self.finished_at.is_some()
    }
    fn losses(&self) -> (u32, u32) {
        (self.retransmits, self.timeouts)
    }
    /// TIMELY's last RTT sample (DCQCN takes none).
    fn last_rtt(&self) -> Time {
        self.rc.last_rtt()
    }
    /// `rate_bps` = R_C, `alpha` = α (TIMELY: the gradient; HPCC: Û), `cwnd_bytes` = the window (NaN
    /// without one; HPCC: W); no RTT estimate.
    fn trace(&self) -> TraceSample {
        TraceSample {
            cwnd_bytes: match &self.rc {
                RateControl::Hpcc(h) => h.w,
                _ if self.p.window == u64::MAX => f64::NAN,
                _ => self.p.window as f64,
            },
            rate_bps: self.rc.rate(),
            alpha: self.rc.alpha(),
            srtt: 0,
            delivered_bytes: self.rcv_nxt,
        }
    }
    #[inline]
    fn ect(&self) -> bool {
        true
    }
    fn end_data(&mut self, now: Time) -> (u64, bool) {
        self.size = self.size.min(self.snd_max.max(1));
        let done = self.finished_at.is_none() && self.rcv_nxt >= self.size;
        if done {
            self.finished_at = Some(now);
        }
        (self.size, done)
    }
    #[inline]
    fn header_bytes(&self) -> u32 {
        self.p.hdr
    }
    #[inline]
    fn control_prio(&self) -> Option<u8> {
        Some(self.p.control_priority)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod timely_tests;
