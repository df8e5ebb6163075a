//! A host slower than its link (`host.nic.rx_rate`): packets that reach the host wait in its NIC's
//! receive buffer (`rx_buffer`) and go up to the stack one at a time at `rx_rate` (PCIe, the driver, the
//! CPU). With PFC the host protects its lossless priorities as a switch does: when the buffer holds XOFF
//! bytes — the buffer less the link's headroom (`switch.pfc.headroom`, "auto" = 2·C·d + 2·MTU +
//! C·response_time) — it sends PAUSE for each lossless priority with bytes waiting, and RESUME once the
//! buffer is `resume_offset` below XOFF. A lossy packet that does not fit is dropped (`drops.nic_rx`); a
//! lossless one fails the run. Without `rx_rate` a host takes every packet the moment it arrives.

use crate::net::packet::PktId;
use crate::sim::{Ev, Sim};
use crate::units::{Time, SEC};
use std::collections::VecDeque;

/// One host's receive buffer.
#[derive(Debug, Default)]
pub struct Rx {
    pub fifo: VecDeque<PktId>,
    pub bytes: u64,
    /// Whether a packet is being taken up by the host (an `Ev::RxDone` is pending).
    pub busy: bool,
    /// Lossless priorities this host has paused (a PAUSE sent, no RESUME since).
    pub paused: u8,
    /// Timer mode: when each priority's refresh is due (0: none).
    pub refresh_at: [Time; 8],
    pub carry: u64,
    /// Most bytes it held at once.
    pub peak: u64,
}

/// The receive side of every host: rate and buffer, and per host its state.
#[derive(Debug)]
pub struct RxPath {
    pub rate: u64,
    pub capacity: u64,
    /// With PFC: PAUSE at `xoff` bytes held, RESUME at or below `xon`.
    pub xoff: u64,
    pub xon: u64,
    pub hosts: Vec<Rx>,
}

impl RxPath {
    /// Time to take `size` bytes up at the host's rate (remainder carried, as a port's serialisation).
    fn take_time(&mut self, h: u32, size: u64) -> Time {
        let rx = &mut self.hosts[h as usize];
        let bits_ps = size as u128 * 8 * SEC as u128 + rx.carry as u128;
        rx.carry = (bits_ps % self.rate as u128) as u64;
        (bits_ps / self.rate as u128) as Time
    }
}

impl Sim {
    /// A packet reaches host `h`'s NIC: into the receive buffer, PAUSE if it is now at XOFF.
    #[cold]
    pub(crate) fn rx_arrive(&mut self, h: u32, id: PktId) {
        let now = self.now();
        let pkt = self.arena.get(id);
        let (size, prio) = (pkt.size as u64, pkt.prio);
        let lossless = self.net.pfc.as_deref().is_some_and(|p| p.is_lossless(prio));
        let rx = self.hosts.rx.as_mut().unwrap();
        let (cap, xoff) = (rx.capacity, rx.xoff);
        let st = &mut rx.hosts[h as usize];
        if st.bytes + size > cap {
            let held = st.bytes;
            self.rec.meta.drops.nic_rx += 1;
            self.drop_pkt(id);
            if lossless {
                let msg = format!(
                    "a lossless packet was dropped at host {}'s receive buffer: it held {held} of {cap} B (XOFF {xoff} B) when a {size} B packet of priority {prio} arrived; raise host.nic.rx_buffer or switch.pfc.headroom",
                    self.rec.meta.node_names[h as usize]
                );
                self.fail(msg);
            }
            return;
        }
        st.fifo.push_back(id);
        st.bytes += size;
        st.peak = st.peak.max(st.bytes);
        let idle = !st.busy;
        if self.net.pfc.is_some() && st.bytes >= xoff {
            self.rx_pause(h);
        }
        if idle {
            self.rx_next(h, now);
        }
    }

    /// Pause every lossless priority with bytes in host `h`'s buffer that is not paused yet.
    fn rx_pause(&mut self, h: u32) {
        let pfc = self.net.pfc.as_deref().unwrap();
        let lossless = pfc.lossless;
        let timer = pfc.mode == crate::net::pfc::Mode::Timer;
        let st = &self.hosts.rx.as_ref().unwrap().hosts[h as usize];
        let mut waiting = 0u8;
        for &id in &st.fifo {
            waiting |= 1 << (self.arena.get(id).prio & 7);
        }
        let todo = waiting & lossless & !st.paused;
        for prio in (0..8u8).filter(|p| todo & (1 << p) != 0) {
            self.hosts.rx.as_mut().unwrap().hosts[h as usize].paused |= 1 << prio;
            let nic = self.net.nic(h);
            self.send_frame(nic, prio, true);
            if timer {
                self.rx_arm_refresh(h, prio);
            }
        }
    }

    fn rx_arm_refresh(&mut self, h: u32, prio: u8) {
        let now = self.now();
        let nic = self.net.nic(h);
        let rate = self.net.ports[nic as usize].rate;
        let q = self.net.pfc.as_deref().unwrap().quanta(rate);
        let half = (q as u128 * 256 * SEC as u128).div_ceil(rate as u128) as Time;
        self.hosts.rx.as_mut().unwrap().hosts[h as usize].refresh_at[prio as usize] = now + half;
        self.push(now + half, Ev::PfcRefresh { port: nic, prio });
    }

    /// Timer mode: host `h` re-sends a PAUSE still in force.
    pub(crate) fn rx_refresh(&mut self, h: u32, prio: u8) {
        let now = self.now();
        let st = &self.hosts.rx.as_ref().unwrap().hosts[h as usize];
        if st.paused & (1 << prio) != 0 && st.refresh_at[prio as usize] == now {
            let nic = self.net.nic(h);
            self.send_frame(nic, prio, true);
            self.rx_arm_refresh(h, prio);
        }
    }

    /// Start taking up host `h`'s next packet.
    fn rx_next(&mut self, h: u32, now: Time) {
        let rx = self.hosts.rx.as_mut().unwrap();
        let Some(&id) = rx.hosts[h as usize].fifo.front() else {
            rx.hosts[h as usize].busy = false;
            return;
        };
        let t = rx.take_time(h, self.arena.get(id).size as u64);
        rx.hosts[h as usize].busy = true;
        self.push(now + t, Ev::RxDone(h));
    }

    /// Host `h` has taken up the packet at the head of its buffer: RESUME if the buffer drained below XON,
    /// hand the packet to the host, start the next.
    #[cold]
    pub(crate) fn rx_done(&mut self, h: u32) {
        let now = self.now();
        let rx = self.hosts.rx.as_mut().unwrap();
        let xon = rx.xon;
        let st = &mut rx.hosts[h as usize];
        let id = st.fifo.pop_front().unwrap();
        st.bytes -= self.arena.get(id).size as u64;
        if st.paused != 0 && st.bytes <= xon {
            let paused = std::mem::take(&mut st.paused);
            let nic = self.net.nic(h);
            for prio in (0..8u8).filter(|p| paused & (1 << p) != 0) {
                self.send_frame(nic, prio, false);
            }
        }
        self.rx_next(h, now);
        self.host_take(h, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Packet;

    #[test]
    fn take_time_carries_the_remainder_so_the_rate_is_exact() {
        // 1000 B at 3 Gb/s is 2 666 666.67 ps: whole picoseconds with the remainder carried, so three
        // packets take exactly 8 µs (a carry dropped or subtracted would lose or skew the fractions).
        let mut rx = RxPath { rate: 3_000_000_000, capacity: 0, xoff: 0, xon: 0, hosts: vec![Rx::default()] };
        let t: Vec<Time> = (0..3).map(|_| rx.take_time(0, 1000)).collect();
        assert_eq!(t, vec![2_666_666, 2_666_667, 2_666_667]);
        assert_eq!(rx.hosts[0].carry, 0);
    }

    #[test]
    fn a_packet_that_fills_the_buffer_exactly_fits() {
        // A 10 KB receive buffer (lossy: no PFC) that already holds 8 500 B takes a 1 500 B packet, not one
        // byte more.
        let text = "stop = { time = \"1ms\" }\n[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n\
                    [host.nic]\nrx_rate = \"5Gbps\"\nrx_buffer = \"10KB\"\n[host]\ntransport = { kind = \"tcp\", cc = \"reno\" }\n";
        let mut s = Sim::from_toml(text).unwrap();
        assert_eq!(s.hosts.rx.as_ref().unwrap().capacity, 10_000);
        s.hosts.rx.as_mut().unwrap().hosts[0].bytes = 8_500;
        let id = s.arena.alloc(Packet { size: 1_500, ..Packet::blank() });
        s.rx_arrive(0, id);
        assert_eq!((s.rec.meta.drops.nic_rx, s.hosts.rx.as_ref().unwrap().hosts[0].bytes), (0, 10_000));
        let id = s.arena.alloc(Packet { size: 1, ..Packet::blank() });
        s.rx_arrive(0, id);
        assert_eq!(s.rec.meta.drops.nic_rx, 1);
    }
}
