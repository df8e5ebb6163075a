//! TCP: real sequence numbers, cumulative ACKs, NewReno fast retransmit/recovery without SACK (RFC 5681,
//! RFC 6582), RTO per RFC 6298 with a configurable minimum and exponential backoff, go-back-N after a
//! timeout, optional delayed ACKs, a receive window with window scaling (RFC 7323), ECN per RFC 3168 (or
//! DCTCP's exact CE echo). One `Conn` holds both ends of a flow; it never touches packets or the event
//! queue — it writes what to send into an outbox and keeps at most one deadline per timer.

pub mod cc;
pub mod config;

use super::{Out, TraceSample, Transport};
use crate::engine::timer::Timer;
use crate::net::packet::{flags, Packet};
use crate::units::{Time, SEC};
use cc::{AckInfo, CongestionControl, Rtt, Window};
pub use config::{Cfg, TcpParams};

pub struct Conn {
    pub flow: u32,
    /// Payload bytes the application has written (`u64::MAX`: long-lived); [`Conn::append`] adds to it.
    pub size: u64,
    pub p: TcpParams,
    // --- sender ---
    pub established: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub w: Window,
    pub cc: CongestionControl,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno `recover`, exclusive: the recovery ends on an ACK ≥ recover.
    recover: u64,
    /// No ECN reduction until snd_una passes this (once per window, RFC 3168 §6.1.2).
    ecn_recover: u64,
    send_cwr: bool,
    pub srtt: Time,
    rttvar: Time,
    /// Smallest RTT sample so far (0: none yet).
    min_rtt: Time,
    /// The sample the ACK being processed gave (0: none).
    last_rtt: Time,
    rto: Time,
    backoff: u32,
    peer_rwnd: u64,
    /// The largest window the peer has offered, Max(SND.WND) of RFC 1122's silly-window avoidance.
    max_wnd: u64,
    pub rto_timer: Timer,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Payload bytes of this connection held at its sending host (TSQ accounting).
    pub host_queued: u64,
    /// When the sender last sent a data segment (Linux's `lsndtime`; the idle restart measures from it).
    last_send: Time,
    /// Whether the window (not TSQ, not the application) stopped the last send: cwnd grows only then
    /// (RFC 7661; Linux's tcp_is_cwnd_limited).
    cwnd_limited: bool,
    // --- receiver ---
    /// The control's [`cc::Cc::ACCURATE_ECN`], looked up once.
    accurate_ecn: bool,
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    ce_state: bool,
    ece_latch: bool,
    unacked_segs: u32,
    unacked_ts: Time,
    pub delack_timer: Timer,
    pub finished_at: Option<Time>,
}

impl Conn {
    pub fn new(flow: u32, size: u64, p: TcpParams) -> Conn {
        let mss = p.mss as f64;
        let w = Window { cwnd: p.init_cwnd as f64 * mss, ssthresh: f64::INFINITY, mss, snd_una: 0, snd_nxt: 0 };
        Conn {
            flow,
            size,
            cc: CongestionControl::new(&p, 0),
            p,
            established: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            w,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            ecn_recover: 0,
            send_cwr: false,
            srtt: 0,
            rttvar: 0,
            min_rtt: 0,
            last_rtt: 0,
            rto: p.min_rto,
            backoff: 0,
            peer_rwnd: p.rwnd,
            max_wnd: p.rwnd,
            rto_timer: Timer::default(),
            retransmits: 0,
            timeouts: 0,
            host_queued: 0,
            last_send: 0,
            cwnd_limited: true,
            accurate_ecn: p.cc.accurate_ecn(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            ce_state: false,
            ece_latch: false,
            unacked_segs: 0,
            unacked_ts: 0,
            delack_timer: Timer::default(),
            finished_at: None,
        }
    }

    /// The application hands the flow to the transport.
    pub fn start(&mut self, now: Time, out: &mut Vec<Out>) {
        if self.p.handshake {
            out.push(Out::Seg { seq: 0, len: 0, flags: flags::SYN, ts: now });
            self.arm_rto(now);
        } else {
            self.established = true;
            self.try_send(now, out);
        }
    }

    /// The application writes `bytes` more (a persistent connection's next message): the receiver is not
    /// complete until it holds them too. A sender that has had nothing in flight for longer than its RTO
    /// first restarts its window (RFC 2861 §3 as Linux's `tcp_cwnd_restart`, with
    /// `slow_start_after_idle`): ssthresh ← max(ssthresh, ¾·cwnd), cwnd halved once per RTO idle but not
    /// below min(init_cwnd, cwnd). The control's own state (CUBIC's epoch, DCTCP's α) carries over.
    pub fn append(&mut self, bytes: u64, now: Time, out: &mut Vec<Out>) {
        if self.p.slow_start_after_idle && self.established && self.flight() == 0 && self.snd_max > 0 {
            self.idle_restart(now);
        }
        self.size = self.size.saturating_add(bytes);
        self.finished_at = None;
        self.try_send(now, out);
    }

    /// Linux `tcp_cwnd_restart` (outside recovery: after an idle period nothing is in flight).
    fn idle_restart(&mut self, now: Time) {
        let rto = self.current_rto();
        let mut idle = now.saturating_sub(self.last_send);
        if idle <= rto {
            return;
        }
        let mss = self.w.mss;
        let restart = (self.p.init_cwnd as f64 * mss).min(self.w.cwnd);
        self.w.ssthresh = self.w.ssthresh.max(0.75 * self.w.cwnd);
        let mut cwnd = self.w.cwnd;
        while idle > rto && cwnd > restart {
            idle -= rto;
            cwnd /= 2.0;
        }
        self.w.cwnd = cwnd.max(restart);
    }

    /// Payload bytes the receiver holds in order.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn sender_done(&self) -> bool {
        self.established && self.snd_una >= self.size
    }

    fn flight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    fn current_rto(&self) -> Time {
        (self.rto << self.backoff.min(16)).min(self.p.max_rto)
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_timer.deadline = Some(now + self.current_rto());
    }

    /// RFC 6298 estimator, integer picoseconds.
    fn rtt_sample(&mut self, r: Time) {
        self.last_rtt = r;
        self.min_rtt = if self.min_rtt == 0 { r } else { self.min_rtt.min(r) };
        if self.srtt == 0 {
            self.srtt = r.max(1);
            self.rttvar = r / 2;
        } else {
            let diff = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + diff) / 4; // RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|
            self.srtt = (7 * self.srtt + r) / 8; // SRTT ← 7/8·SRTT + 1/8·R
        }
        self.rto = (self.srtt + 4 * self.rttvar).max(self.p.min_rto).min(self.p.max_rto);
    }

    /// A retransmission from `seq`: one MSS at most, and no more than the peer's window (segments may have
    /// been shorter than an MSS when the window was).
    fn resend_len(&self, seq: u64) -> u32 {
        (self.size - seq).min(self.p.mss as u64).min(self.peer_rwnd.max(1)) as u32
    }

    fn send_seg(&mut self, seq: u64, len: u32, now: Time, out: &mut Vec<Out>) {
        let mut f = flags::DATA;
        if self.send_cwr {
            f |= flags::CWR;
            self.send_cwr = false;
        }
        if seq < self.snd_max {
            self.retransmits += 1;
        }
        out.push(Out::Seg { seq, len, flags: f, ts: now });
        self.host_queued += len as u64;
        self.last_send = now;
        if self.rto_timer.deadline.is_none() {
            self.arm_rto(now);
        }
    }

    /// Send new (or go-back-N) data while the window allows ([`Conn::sendable`] says how much).
    pub fn try_send(&mut self, now: Time, out: &mut Vec<Out>) {
        if !self.established {
            return;
        }
        let wnd = (self.w.cwnd.min(self.peer_rwnd as f64)) as u64;
        self.cwnd_limited = false;
        while self.snd_nxt < self.size {
            let Some(len) = self.sendable(wnd) else {
                self.cwnd_limited = true;
                break;
            };
            if self.host_queued > 0 && self.host_queued + len > self.p.tsq_limit {
                break; // resumed when this connection's packets leave the NIC
            }
            let seq = self.snd_nxt;
            self.send_seg(seq, len as u32, now, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    /// How many bytes to send now, if any: RFC 1122 §4.2.3.4's sender-side silly-window avoidance (RFC 9293
    /// §3.8.6.2.1; `spec/acdc.md` §6). With U the usable window — min(cwnd, the peer's window) less the
    /// bytes in flight — and D the data not yet sent (all of it pushed: the application writes the whole
    /// flow at once), send
    ///   (1) one MSS if min(D, U) ≥ MSS;
    ///   (2) all of D if D ≤ U;
    ///   (3) U if U ≥ Fs·Max(SND.WND), Fs = 1/2 and Max(SND.WND) the largest window the peer offered;
    ///   (4) U if nothing is in flight: the RFC's override, which it times at 0.1–1 s, taken at once,
    ///       because with nothing in flight no ACK can come to open the window (acdc.md §6: a guest under
    ///       a sub-MSS window must send short segments or stall).
    /// Nagle's "[SND.NXT = SND.UNA and]" on (2) and (3) is left out: the TCP runs with Nagle off, as
    /// datacenter stacks do. With windows of at least one MSS this is the full-segment rule it replaced.
    #[inline]
    fn sendable(&self, wnd: u64) -> Option<u64> {
        let flight = self.flight();
        // (1) and (2) at once: min(D, MSS) fits in U — one MSS when D ≥ MSS, else all of D.
        let len = (self.size - self.snd_nxt).min(self.p.mss as u64);
        if flight + len <= wnd {
            Some(len)
        } else {
            self.short_segment(wnd, flight)
        }
    }

    /// Rules (3) and (4) of [`Conn::sendable`], when less than min(D, MSS) is usable.
    #[inline]
    fn short_segment(&self, wnd: u64, flight: u64) -> Option<u64> {
        let u = wnd.saturating_sub(flight);
        (u > 0 && (flight == 0 || 2 * u >= self.max_wnd)).then_some(u)
    }

    fn sync_window(&mut self) {
        self.w.snd_una = self.snd_una;
        self.w.snd_nxt = self.snd_nxt;
    }

    /// The sender receives an ACK (or SYN-ACK).
    fn ack_info(&self, now: Time, acked: u64, ece: bool) -> AckInfo {
        AckInfo {
            now,
            acked,
            marked: if ece { acked } else { 0 },
            ece,
            rtt: Rtt { latest: self.last_rtt, srtt: self.srtt, min: self.min_rtt },
        }
    }

    pub fn on_ack(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
        self.last_rtt = 0;
        if pkt.has(flags::SYN) {
            if !self.established {
                self.established = true;
                self.rtt_sample(now - pkt.ts);
                self.rto_timer.deadline = None;
                self.try_send(now, out);
            }
            return;
        }
        if !self.established {
            return;
        }
        self.peer_rwnd = (pkt.win as u64) << self.p.wscale;
        self.max_wnd = self.max_wnd.max(self.peer_rwnd);
        let a = pkt.ack;
        if a > self.snd_max {
            return;
        }
        let ece = self.p.ecn && pkt.has(flags::ECE);
        if a > self.snd_una {
            let newly = a - self.snd_una;
            self.rtt_sample(now.saturating_sub(pkt.ts));
            self.backoff = 0;
            self.snd_una = a;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.sync_window();
            let info = self.ack_info(now, newly, ece);
            self.cc.on_ack(&self.w, &info);
            let reduced = ece && self.react_to_ece(now);
            if self.in_recovery {
                if a >= self.recover {
                    // Full ACK: deflate to min(ssthresh, FlightSize + MSS)  (RFC 6582 §3.2 step 3)
                    self.w.cwnd = self.w.ssthresh.min(self.flight() as f64 + self.w.mss);
                    self.in_recovery = false;
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked, add back one MSS.
                    let s = self.snd_una;
                    self.send_seg(s, self.resend_len(s), now, out);
                    self.w.cwnd = (self.w.cwnd - newly as f64 + self.w.mss).max(self.w.mss);
                }
            } else if !reduced && self.cwnd_limited {
                self.cc.increase(&mut self.w, &info);
            }
            self.dupacks = 0;
            if self.snd_una >= self.snd_max {
                self.rto_timer.deadline = None;
            } else {
                self.arm_rto(now);
            }
            self.try_send(now, out);
        } else if a == self.snd_una && self.snd_una < self.snd_max && !pkt.has(flags::DATA) {
            self.sync_window();
            let info = self.ack_info(now, 0, ece);
            self.cc.on_ack(&self.w, &info);
            if ece {
                self.react_to_ece(now);
            }
            self.dupacks += 1;
            if self.dupacks == 3 && !self.in_recovery {
                if a >= self.recover {
                    let flight = (self.snd_max - self.snd_una) as f64;
                    self.w.ssthresh = self.cc.ssthresh_on_loss(&self.w, flight, now);
                    let s = self.snd_una;
                    self.send_seg(s, self.resend_len(s), now, out);
                    self.w.cwnd = self.w.ssthresh + 3.0 * self.w.mss;
                    self.recover = self.snd_max;
                    self.ecn_recover = self.snd_max;
                    self.in_recovery = true;
                }
            } else if self.in_recovery {
                self.w.cwnd += self.w.mss; // inflate: each dupack means a segment left the network
                self.try_send(now, out);
            }
        }
    }

    /// ECN-Echo: reduce at most once per window of data (RFC 3168; DCTCP uses alpha). Callers check ECE
    /// first, so that an ACK without it costs no call.
    #[inline(always)]
    fn react_to_ece(&mut self, now: Time) -> bool {
        if self.in_recovery || self.snd_una <= self.ecn_recover && self.ecn_recover != 0 {
            return false;
        }
        let ss = self.cc.ssthresh_on_ece(&self.w, now).max(self.cc.min_cwnd(&self.w));
        self.w.ssthresh = ss;
        self.w.cwnd = ss;
        self.ecn_recover = self.snd_nxt.max(1);
        self.send_cwr = true;
        true
    }

    /// One of this connection's data packets left its host's NIC (TSQ): send what was held back. Returns
    /// whether anything was held back (only then may it have sent).
    pub fn on_host_departure(&mut self, payload: u32, now: Time, out: &mut Vec<Out>) -> bool {
        let blocked = self.host_queued + self.p.mss as u64 > self.p.tsq_limit;
        self.host_queued -= payload as u64;
        if blocked {
            self.try_send(now, out);
        }
        blocked
    }

    /// The retransmission timer expired.
    pub fn on_rto(&mut self, now: Time, out: &mut Vec<Out>) {
        self.rto_timer.deadline = None;
        if !self.established {
            self.timeouts += 1;
            self.backoff += 1;
            out.push(Out::Seg { seq: 0, len: 0, flags: flags::SYN, ts: now });
            self.arm_rto(now);
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        self.timeouts += 1;
        self.sync_window();
        let flight = (self.snd_max - self.snd_una) as f64;
        self.w.ssthresh = self.cc.ssthresh_on_loss(&self.w, flight, now);
        self.cc.on_timeout(&self.w, now);
        self.w.cwnd = self.w.mss;
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        self.snd_nxt = self.snd_una; // go-back-N: no SACK
        self.backoff += 1;
        self.try_send(now, out);
        self.arm_rto(now);
    }

    fn ack_out(&mut self, extra: u16, ts_echo: Time) -> Out {
        let mut f = flags::ACK | extra;
        let ece = if self.accurate_ecn { self.ce_state } else { self.ece_latch };
        if ece && self.p.ecn {
            f |= flags::ECE;
        }
        let win = (self.p.rwnd >> self.p.wscale).min(u16::MAX as u64) as u16;
        Out::Ack { ack: self.rcv_nxt, flags: f, ts_echo, win }
    }

    /// The receiver gets a data segment (or SYN). Returns true when the flow just completed.
    pub fn on_data(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
        if pkt.has(flags::SYN) {
            out.push(self.ack_out(flags::SYN, pkt.ts));
            return false;
        }
        let ce = pkt.ecn == crate::net::packet::Ecn::Ce;
        if pkt.has(flags::CWR) {
            self.ece_latch = false;
        }
        let (seq, end) = (pkt.seq, pkt.seq + pkt.payload as u64);
        let had_hole = !self.ooo.is_empty();
        let mut immediate = self.p.delack <= 1;
        if self.accurate_ecn && ce != self.ce_state {
            // DCTCP receiver: on a CE flip, first ACK what came before with the old state (RFC 8257 §3.2).
            if self.unacked_segs > 0 {
                let ts = self.unacked_ts;
                out.push(self.ack_out(0, ts));
                self.unacked_segs = 0;
            }
            self.ce_state = ce;
            immediate = true;
        }
        if seq <= self.rcv_nxt && end > self.rcv_nxt {
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            if had_hole {
                immediate = true;
            }
        } else if seq > self.rcv_nxt {
            insert_range(&mut self.ooo, seq, end);
            immediate = true;
        } else {
            immediate = true; // duplicate
        }
        if !self.accurate_ecn && ce {
            self.ece_latch = true;
        }
        if self.unacked_segs == 0 {
            self.unacked_ts = pkt.ts;
        }
        self.unacked_segs += 1;
        if immediate || self.unacked_segs >= self.p.delack {
            let ts = self.unacked_ts;
            out.push(self.ack_out(0, ts));
            self.unacked_segs = 0;
            self.delack_timer.deadline = None;
        } else if self.delack_timer.deadline.is_none() {
            self.delack_timer.deadline = Some(now + self.p.delack_timeout);
        }
        if self.finished_at.is_none() && self.rcv_nxt >= self.size {
            self.finished_at = Some(now);
            return true;
        }
        false
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, _now: Time, out: &mut Vec<Out>) {
        self.delack_timer.deadline = None;
        if self.unacked_segs > 0 {
            let ts = self.unacked_ts;
            out.push(self.ack_out(0, ts));
            self.unacked_segs = 0;
        }
    }

    /// Rate estimate for traces: cwnd / srtt.
    pub fn rate_bps(&self) -> f64 {
        if self.srtt == 0 {
            return f64::NAN;
        }
        self.w.cwnd * 8.0 * SEC as f64 / self.srtt as f64
    }
}

impl Transport for Conn {
    #[inline]
    fn start(&mut self, now: Time, out: &mut Vec<Out>) {
        Conn::start(self, now, out)
    }
    #[inline]
    fn at_sender(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) {
        self.on_ack(now, pkt, out)
    }
    #[inline]
    fn at_receiver(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Out>) -> bool {
        self.on_data(now, pkt, out)
    }
    #[inline]
    fn departed(&mut self, payload: u32, now: Time, out: &mut Vec<Out>) -> bool {
        self.on_host_departure(payload, now, out)
    }
    /// Timer 0 is the retransmission timer, 1 the delayed-ACK timer.
    #[inline]
    fn timer(&mut self, i: usize) -> Option<&mut Timer> {
        match i {
            0 => Some(&mut self.rto_timer),
            1 => Some(&mut self.delack_timer),
            _ => None,
        }
    }
    #[inline]
    fn due(&mut self) -> [Option<Time>; super::MAX_TIMERS] {
        [self.rto_timer.needs_entry(), self.delack_timer.needs_entry()]
    }
    fn on_timer(&mut self, i: usize, now: Time, out: &mut Vec<Out>) {
        match i {
            0 => self.on_rto(now, out),
            _ => self.on_delack(now, out),
        }
    }
    #[inline]
    fn closed(&self) -> bool {
        self.sender_done() && self.finished_at.is_some()
    }
    fn losses(&self) -> (u32, u32) {
        (self.retransmits, self.timeouts)
    }
    fn trace(&self) -> TraceSample {
        TraceSample {
            cwnd_bytes: self.w.cwnd,
            rate_bps: self.rate_bps(),
            alpha: self.cc.alpha(),
            srtt: self.srtt,
            delivered_bytes: self.rcv_nxt,
        }
    }
    #[inline]
    fn ect(&self) -> bool {
        self.p.ecn
    }
    #[inline]
    fn wscale(&self) -> u8 {
        self.p.wscale
    }
    #[inline]
    fn ect_control(&self) -> bool {
        self.p.ect_control
    }
    #[inline]
    fn last_rtt(&self) -> Time {
        self.last_rtt
    }
    fn append(&mut self, bytes: u64, now: Time, out: &mut Vec<Out>) {
        Conn::append(self, bytes, now, out)
    }
    #[inline]
    fn delivered(&self) -> u64 {
        self.rcv_nxt
    }
    fn end_data(&mut self, now: Time) -> (u64, bool) {
        self.size = self.size.min(self.snd_max.max(1));
        let done = self.finished_at.is_none() && self.rcv_nxt >= self.size;
        if done {
            self.finished_at = Some(now);
        }
        (self.size, done)
    }
}

/// Insert [s, e) into sorted disjoint ranges, merging overlaps.
fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = v.partition_point(|r| r.1 < s);
    let mut ns = s;
    let mut ne = e;
    let mut j = i;
    while j < v.len() && v[j].0 <= ne {
        ns = ns.min(v[j].0);
        ne = ne.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, std::iter::once((ns, ne)));
}

#[cfg(test)]
mod tests;
