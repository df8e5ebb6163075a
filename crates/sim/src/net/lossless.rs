//! The lossless path through a switch and PFC frames on the wire (the rules are in `pfc.rs`): admission of
//! a lossless packet to its (ingress port, priority), the release at dequeue, PAUSE and RESUME frames sent
//! ahead of queued data, their arrival at the upstream port, timer-mode expiry and refresh. Everything
//! here is off the lossy per-packet path: `switch.rs` and `port.rs` call in only for lossless priorities,
//! frames, or switches that run PFC.

use super::packet::{flags, Ecn, Packet, PktId, TcpOpt, ACK_BYTES};
use super::pfc::{shared, Mode, Pfc};
use super::switch::Switch;
use crate::aqm::Hooks;
use crate::engine::Engine;
use crate::records::PauseRow;
use crate::sim::{Ev, Sim};
use crate::units::{Time, SEC};

/// XOFF of a switch now: fixed, or alpha × the free shared pool.
#[inline]
fn xoff(pfc: &Pfc, sw: &Switch) -> u64 {
    pfc.xoff.unwrap_or_else(|| (pfc.alpha * sw.buffer.saturating_sub(sw.used) as f64) as u64)
}

/// Take a packet's bytes off switch `s`'s accounting at dequeue (lossy: the shared pool; lossless: its
/// ingress counter, headroom first). If the counter drained far enough, the RESUME goes out at this same
/// instant, as an `Ev::PfcResume` (the port is in the middle of sending).
#[cold]
pub fn release(pfc: &Option<Box<Pfc>>, sw: &mut Switch, s: u32, pkt: &Packet, size: u64, eng: &mut Engine<Ev>) {
    if let Some((inp, prio)) = drain(pfc.as_deref().unwrap(), sw, pkt.prio, pkt.in_port, size) {
        let now = eng.now();
        eng.schedule(now, Ev::PfcResume { switch: s, port: inp, prio });
    }
}

/// The accounting of `release`; returns the (ingress port, priority) to RESUME.
fn drain(pfc: &Pfc, sw: &mut Switch, prio: u8, in_port: u16, size: u64) -> Option<(u32, u8)> {
    if !pfc.is_lossless(prio) {
        sw.used -= size;
        return None;
    }
    let pi = pfc.index[prio as usize];
    let sp = sw.pfc.as_mut().unwrap();
    let c = sp.at(in_port as u32, pi);
    let from_h = c.hdrm.min(size);
    c.hdrm -= from_h;
    let old = shared(c.bytes, pfc.reserve);
    c.bytes -= size - from_h;
    let now_shared = shared(c.bytes, pfc.reserve);
    let resume = c.paused && c.hdrm == 0;
    sw.used -= old - now_shared;
    if resume && (now_shared == 0 || now_shared + pfc.resume_offset <= xoff(pfc, sw)) {
        sw.pfc.as_mut().unwrap().at(in_port as u32, pi).paused = false;
        return Some((in_port as u32, prio));
    }
    None
}

impl Sim {
    /// A lossless packet arrives at switch `s` by local port `inp`, bound for egress `p` queue `qi`:
    /// charge it to its (ingress port, priority) — reserve, shared pool within XOFF, then headroom —, send
    /// PAUSE upstream if the counter is now above XOFF, run the AQM's enqueue decision (marks only), queue
    /// it. More than the headroom holds is a lossless drop: the run fails.
    #[cold]
    pub(crate) fn lossless_enqueue(&mut self, s: u32, inp: u32, id: PktId, p: u32, qi: usize) {
        let now = self.now();
        let mtu = self.net.mtu;
        let pfc = self.net.pfc.as_deref().unwrap();
        let pkt = self.arena.get_mut(id);
        let (prio, size) = (pkt.prio, pkt.size as u64);
        pkt.in_port = inp as u16;
        let pi = pfc.index[prio as usize];
        let sw = &mut self.net.switches[s as usize];
        let x = xoff(pfc, sw);
        let free = sw.buffer.saturating_sub(sw.used);
        let c = sw.pfc.as_mut().unwrap().at(inp, pi);
        let cap = c.cap;
        let new = c.bytes + size;
        let add = shared(new, pfc.reserve) - shared(c.bytes, pfc.reserve);
        if new <= pfc.reserve || (shared(new, pfc.reserve) <= x && add <= free) {
            c.bytes = new;
            sw.used += add;
        } else if c.hdrm + size <= cap {
            c.hdrm += size;
        } else {
            let (bytes, hdrm) = (c.bytes, c.hdrm);
            let msg = format!(
                "a lossless packet was dropped: {} port {inp} priority {prio} holds {bytes} B in its reserve and shared \
                 part (XOFF {x} B) and {hdrm} B of {cap} B headroom, and a {size} B packet arrived; raise \
                 switch.pfc.headroom (\"auto\" is 2·C·d + 2·MTU + C·response_time) or switch.buffer",
                self.rec.meta.node_names[self.net.node_id(super::Owner::Switch(s)) as usize],
            );
            self.net.ports[p as usize].queues[qi].count_drop();
            self.rec.meta.drops.buffer += 1;
            self.drop_pkt(id);
            self.fail(msg);
            return;
        }
        let c = *sw.pfc.as_mut().unwrap().at(inp, pi);
        if !c.paused && (c.hdrm > 0 || shared(c.bytes, pfc.reserve) >= x) {
            let gp = self.net.node_ports[self.net.node_id(super::Owner::Switch(s)) as usize].0 + inp;
            self.net.switches[s as usize].pfc.as_mut().unwrap().at(inp, pi).paused = true;
            self.send_frame(gp, prio, true);
            if self.net.pfc.as_ref().unwrap().mode == Mode::Timer {
                self.arm_refresh(s, inp, prio);
            }
        }
        let port = &mut self.net.ports[p as usize];
        let ctx = port.ctx(qi, now, mtu);
        let q = &mut port.queues[qi];
        let sw = &mut self.net.switches[s as usize];
        let pkt = self.arena.get_mut(id);
        let v = q.aqm.on_enqueue(&ctx, &mut sw.rng);
        if q.apply(v, pkt) {
            // Validation admits only marking AQMs on lossless queues; a controller could still set one.
            drain(self.net.pfc.as_deref().unwrap(), &mut self.net.switches[s as usize], prio, inp as u16, size);
            self.rec.meta.drops.aqm += 1;
            self.drop_pkt(id);
            self.lossless_drop(p, prio, "its AQM dropped it");
            return;
        }
        self.port_push(p, qi, id);
    }

    /// A packet of a lossless priority was dropped at port `p`: the run fails.
    #[cold]
    pub(crate) fn lossless_drop(&mut self, p: u32, prio: u8, why: &str) {
        let port = &self.net.ports[p as usize];
        let q = &port.queues[port.queue_for(prio)];
        let msg = format!(
            "a lossless packet was dropped at {} port {} priority {prio} ({why}; {} drops, {} packets sent there)",
            self.rec.meta.node_names[port.node as usize], port.local, q.count.drops, q.count.tx_pkts
        );
        self.fail(msg);
    }

    /// Queue a PFC frame (PAUSE, or RESUME = pause time 0) for priority `prio` on port `p`, ahead of its
    /// data; it goes on the wire as soon as the frame being sent (if any) is done.
    #[cold]
    pub(crate) fn send_frame(&mut self, p: u32, prio: u8, pause: bool) {
        let now = self.now();
        let pfc = self.net.pfc.as_deref().unwrap();
        let port = &self.net.ports[p as usize];
        let quanta = if pause { pfc.quanta(port.rate) } else { 0 };
        let record = pfc.record;
        let pkt = Packet {
            conn: u32::MAX,
            flow: u32::MAX,
            seq: quanta,
            ack: 0,
            ts: now,
            enq: now,
            src: port.node,
            dst: port.peer,
            hash: 0,
            size: ACK_BYTES,
            payload: 0,
            win: 0,
            flags: flags::PFC,
            ecn: Ecn::NotEct,
            prio,
            in_port: 0,
            opt: TcpOpt::None,
            next: 0,
            hop: super::link::NO_HOP,
        };
        if record {
            let row = PauseRow { time: now, node: port.node, port: port.local, priority: prio, pause, sent: true };
            self.rec.pauses.push(row);
        }
        let id = self.arena.alloc(pkt);
        self.count_sent(id);
        let port = &mut self.net.ports[p as usize];
        let fc = port.fc_mut();
        fc.ctl.push_back(id);
        fc.frames_sent += 1;
        port.ctl += 1;
        port.pkts += 1;
        if !port.wake_pending {
            if port.busy_until > now {
                port.wake_pending = true;
                let t = port.busy_until;
                self.push(t, Ev::Wake(p));
            } else {
                self.send_ctl(p);
            }
        }
    }

    /// Put port `p`'s oldest pending frame on the wire.
    #[cold]
    pub(crate) fn send_ctl(&mut self, p: u32) {
        let port = &mut self.net.ports[p as usize];
        let id = port.fc_mut().ctl.pop_front().unwrap();
        port.ctl -= 1;
        port.pkts -= 1;
        let size = self.arena.get(id).size as u64;
        self.transmit(p, id, size);
    }

    /// A PFC frame reaches the port `q` it pauses or resumes (the receiving node's port back toward the
    /// frame's sender).
    #[cold]
    pub(crate) fn frame_arrived(&mut self, q: u32, id: PktId) {
        let now = self.now();
        let pkt = self.take_delivered(id);
        let (prio, quanta) = (pkt.prio, pkt.seq);
        let pfc = self.net.pfc.as_deref().unwrap();
        let (mode, record, timeout) = (pfc.mode, pfc.record, pfc.deadlock_timeout);
        let port = &mut self.net.ports[q as usize];
        port.fc_mut().frames_received += 1;
        if record {
            let row = PauseRow { time: now, node: port.node, port: port.local, priority: prio, pause: quanta > 0, sent: false };
            self.rec.pauses.push(row);
        }
        let was = port.paused & (1 << prio) != 0;
        if quanta == 0 {
            port.fc_mut().pause_until[prio as usize] = 0;
            self.set_paused(q, prio, false);
            return;
        }
        if mode == Mode::Timer {
            let until = now + (quanta as u128 * 512 * SEC as u128).div_ceil(port.rate as u128) as Time;
            port.fc_mut().pause_until[prio as usize] = until;
            self.push(until, Ev::PauseExpire { port: q, prio });
        }
        self.set_paused(q, prio, true);
        if !was && matches!(self.net.ports[q as usize].owner, super::Owner::Switch(_)) {
            self.push(now + timeout, Ev::DeadlockCheck { port: q, prio });
        }
    }

    /// A timer-mode pause of port `q` ends, unless a later PAUSE extended it.
    #[cold]
    pub(crate) fn pause_expired(&mut self, q: u32, prio: u8) {
        let now = self.now();
        let fc = self.net.ports[q as usize].fc_mut();
        if fc.pause_until[prio as usize] == now {
            fc.pause_until[prio as usize] = 0;
            self.set_paused(q, prio, false);
        }
    }

    /// Timer mode: re-send the PAUSE of (switch `s`, port `inp`, `prio`) at half its pause time.
    fn arm_refresh(&mut self, s: u32, inp: u32, prio: u8) {
        let now = self.now();
        let pfc = self.net.pfc.as_deref().unwrap();
        let gp = self.net.node_ports[self.net.node_id(super::Owner::Switch(s)) as usize].0 + inp;
        let rate = self.net.ports[gp as usize].rate;
        let half = (pfc.quanta(rate) as u128 * 256 * SEC as u128).div_ceil(rate as u128) as Time;
        let pi = pfc.index[prio as usize];
        self.net.switches[s as usize].pfc.as_mut().unwrap().at(inp, pi).refresh_at = now + half;
        self.push(now + half, Ev::PfcRefresh { port: gp, prio });
    }

    /// Timer mode: a PAUSE still in force is sent again before it runs out.
    #[cold]
    pub(crate) fn pfc_refresh(&mut self, gp: u32, prio: u8) {
        let now = self.now();
        let port = &self.net.ports[gp as usize];
        let s = match port.owner {
            super::Owner::Switch(s) => s,
            super::Owner::Host(h) => return self.rx_refresh(h, prio),
        };
        let inp = port.local;
        let pi = self.net.pfc.as_deref().unwrap().index[prio as usize];
        let c = *self.net.switches[s as usize].pfc.as_mut().unwrap().at(inp, pi);
        if c.paused && c.refresh_at == now {
            self.send_frame(gp, prio, true);
            self.arm_refresh(s, inp, prio);
        }
    }

    /// After a dequeue at switch `s`: the RESUME its release called for.
    #[cold]
    pub(crate) fn send_resume(&mut self, s: u32, inp: u32, prio: u8) {
        let gp = self.net.node_ports[self.net.node_id(super::Owner::Switch(s)) as usize].0 + inp;
        self.send_frame(gp, prio, false);
    }
}

impl Sim {
    /// The ingress counter of (switch `node`, local `port`, lossless `prio`): bytes in its reserve and
    /// shared part, bytes in its headroom, and whether its PAUSE is in force upstream. `None` for a host,
    /// a lossy priority or a run without PFC.
    pub fn ingress(&mut self, node: &str, port: u32, prio: u8) -> Option<(u64, u64, bool)> {
        self.ingress_and_xoff(node, port, prio).map(|(c, _)| c)
    }

    /// `ingress`, and the switch's XOFF at this moment (fixed, or alpha × the free shared pool).
    pub fn ingress_and_xoff(&mut self, node: &str, port: u32, prio: u8) -> Option<((u64, u64, bool), u64)> {
        let p = self.net.port_of(&self.rec.meta.node_names, node, port)?;
        let super::Owner::Switch(s) = self.net.ports[p as usize].owner else { return None };
        let pfc = self.net.pfc.as_deref()?;
        if !pfc.is_lossless(prio) {
            return None;
        }
        let pi = pfc.index[prio as usize];
        let x = xoff(pfc, &self.net.switches[s as usize]);
        let c = self.net.switches[s as usize].pfc.as_mut()?.at(port, pi);
        Some(((c.bytes, c.hdrm, c.paused), x))
    }
}

#[cfg(test)]
mod tests {
    use crate::net::packet::{flags, Packet};
    use crate::net::test_ring::{clockwise, ring_with, NOW};
    use crate::sim::{Ev, Sim};

    /// A PFC frame of `quanta` (0: RESUME) for `prio` reaches port `q` now.
    fn frame(s: &mut Sim, q: u32, prio: u8, quanta: u64) {
        let id = s.arena.alloc(Packet { seq: quanta, prio, flags: flags::PFC, ..Packet::blank() });
        s.frame_arrived(q, id);
    }

    #[test]
    fn only_the_first_pause_of_a_switch_port_arms_a_deadlock_check() {
        // Priority 1 of 2 queues (on priority 0 the paused bit 1 << p and 1 >> p agree): a second PAUSE,
        // as timer mode's refresh sends, finds the priority already paused and arms no second check.
        let mut s = ring_with("queues = 2\npfc = { priorities = [1], deadlock_timeout = \"500us\" }");
        let q = clockwise(&s, 0).0;
        let checks = |s: &Sim| s.eng.pending().filter(|(_, e)| matches!(e, Ev::DeadlockCheck { port, prio: 1 } if *port == q)).count();
        for k in 1..=2 {
            frame(&mut s, q, 1, 100);
            assert_eq!(s.net.ports[q as usize].paused, 0b10, "after PAUSE {k}");
            assert_eq!(checks(&s), 1, "after PAUSE {k}");
        }
        // A host's NIC is paused too, but deadlock detection looks at switch ports only.
        let nic = s.net.nic(0);
        frame(&mut s, nic, 1, 100);
        assert_eq!(s.net.ports[nic as usize].paused, 0b10);
        assert!(!s.eng.pending().any(|(_, e)| matches!(e, Ev::DeadlockCheck { port, .. } if *port == nic)));
    }

    #[test]
    fn a_timer_mode_pause_runs_out_after_its_quanta_and_a_resume_ends_it_at_once() {
        // 100 quanta of 512 bit times at 10 Gb/s: 5.12 µs.
        let mut s = ring_with("pfc = { priorities = [0], mode = \"timer\" }");
        let q = clockwise(&s, 0).0;
        frame(&mut s, q, 0, 100);
        let end = NOW + 5_120_000;
        let expiries: Vec<u64> = s.eng.pending().filter(|(_, e)| matches!(e, Ev::PauseExpire { port, prio: 0 } if *port == q)).map(|(t, _)| t).collect();
        assert_eq!(expiries, vec![end]);
        s.run_until(end - 1);
        assert_eq!(s.net.ports[q as usize].paused, 1);
        s.run_until(end);
        assert_eq!(s.net.ports[q as usize].paused, 0);
        assert_eq!(s.net.ports[q as usize].queues[0].count.paused_ps, 5_120_000);
        // Paused again, then resumed after 1 µs: the pending expiry no longer ends anything.
        frame(&mut s, q, 0, 100);
        s.run_until(end + 1_000_000);
        frame(&mut s, q, 0, 0);
        assert_eq!(s.net.ports[q as usize].paused, 0);
        assert_eq!(s.net.ports[q as usize].queues[0].count.paused_ps, 6_120_000);
    }
}
