//! Ideal FCT (conventions.md): the flow alone on the empty network, on its actual path, by the engine's
//! own arithmetic.

use crate::net::packet::{ACK_BYTES, HEADER_BYTES};
use crate::sim::Sim;
use crate::transport::Params;
use crate::units::{tx_time_floor, Time};

impl Sim {
    /// Ideal FCT: the flow alone on the empty network with an unlimited window, on its actual path, with
    /// the engine's own serialisation arithmetic (rounded down) and the flow's extra host delays
    /// `[data, SYN, ACK]` (`host/mod.rs` `Slot`). Also the
    /// flow's base RTT (a full segment out and its ACK back on the empty network, extra host delays
    /// included) and HPCC's standalone FCT: base RTT + wire bytes at the bottleneck rate.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ideal_fct(&self, src: u32, dst: u32, hash: u32, rhash: u32, size: u64, delay: [Time; 3], tp: &Params) -> (Time, Time, Time) {
        let fwd = self.path(src, dst, hash);
        let mss = tp.mss() as u64;
        let back = self.path(dst, src, rhash);
        let [dd, dc, da] = delay;
        let mut t0 = dd;
        if tp.handshake() {
            t0 += dc + fwd.iter().map(|&(r, d)| tx_time_floor(ACK_BYTES as u64, r) + d).sum::<Time>();
            t0 += da + back.iter().map(|&(r, d)| tx_time_floor(ACK_BYTES as u64, r) + d).sum::<Time>();
        }
        let prop: Time = fwd.iter().map(|&(_, d)| d).sum();
        let bottleneck = fwd.iter().map(|&(r, _)| r).min().unwrap_or(1);
        let base_rtt = 2 * prop
            + dd
            + da
            + fwd.iter().map(|&(r, _)| tx_time_floor(self.net.mtu as u64, r)).sum::<Time>()
            + back.iter().map(|&(r, _)| tx_time_floor(ACK_BYTES as u64, r)).sum::<Time>();
        if size == u64::MAX {
            return (Time::MAX, Time::MAX, base_rtt);
        }
        let n = size.div_ceil(mss);
        let wire_total = size + n * HEADER_BYTES as u64;
        let standalone = base_rtt + tx_time_floor(wire_total, bottleneck);
        // Store-and-forward pipeline: packet j leaves hop h at max(arrival, previous departure) + ser.
        let mut free = vec![0 as Time; fwd.len()];
        let mut last_arrival = 0;
        for j in 0..n {
            let payload = if j + 1 == n { size - j * mss } else { mss };
            let wire = (payload + HEADER_BYTES as u64).max(ACK_BYTES as u64);
            let mut t = t0;
            for (h, &(r, d)) in fwd.iter().enumerate() {
                let start = t.max(free[h]);
                free[h] = start + tx_time_floor(wire, r);
                t = free[h] + d;
            }
            last_arrival = t;
        }
        (last_arrival, standalone, base_rtt)
    }

}
