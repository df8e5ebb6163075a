//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257). Once per window of data (≈ one RTT):
//!   alpha ← (1 − g)·alpha + g·F,  F = ECN-marked bytes / acked bytes in that window,  g = 1/16;
//! on ECN-Echo, at most once per window: cwnd ← max(cwnd·(1 − alpha/2), 2·MSS). alpha₀ = 1 (Linux).
//! Loss reactions and window growth are Reno's.

use super::{AckInfo, Cc, NoKeys, TcpParams, Window};
use crate::units::Time;

#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    pub g: f64,
    pub alpha: f64,
    window_end: u64,
    acked_bytes: u64,
    ecn_bytes: u64,
}

impl Dctcp {
    pub fn new(g: f64, snd_nxt: u64) -> Self {
        Dctcp { g, alpha: 1.0, window_end: snd_nxt, acked_bytes: 0, ecn_bytes: 0 }
    }

    #[inline]
    pub fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
        self.acked_bytes += ack.acked;
        self.ecn_bytes += ack.marked;
        if w.snd_una >= self.window_end {
            let f = self.ecn_bytes as f64 / self.acked_bytes.max(1) as f64;
            // alpha ← (1 − g)·alpha + g·F   (DCTCP paper eq. 1)
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.window_end = w.snd_nxt;
            self.acked_bytes = 0;
            self.ecn_bytes = 0;
        }
    }

    /// cwnd × (1 − alpha/2), floored at 2·MSS  (DCTCP paper eq. 2)
    #[inline]
    pub fn ssthresh_on_ece(&self, w: &Window) -> f64 {
        (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * w.mss)
    }
}

impl Cc for Dctcp {
    /// g is the transport key `dctcp_g`, which predates the `cc` table.
    type Cfg = NoKeys;
    const ACCURATE_ECN: bool = true;
    const NEEDS_ECN: bool = true;
    fn build(p: &TcpParams, _cfg: &NoKeys, snd_nxt: u64) -> Self {
        Dctcp::new(p.dctcp_g, snd_nxt)
    }
    #[inline]
    fn on_ack(&mut self, w: &Window, ack: &AckInfo) {
        Dctcp::on_ack(self, w, ack)
    }
    #[inline]
    fn ssthresh_on_ece(&mut self, w: &Window, _now: Time) -> f64 {
        Dctcp::ssthresh_on_ece(self, w)
    }
    fn min_cwnd(&self, w: &Window) -> f64 {
        2.0 * w.mss
    }
    fn alpha(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn info(acked: u64, ece: bool) -> AckInfo {
        AckInfo { now: 0, acked, marked: if ece { acked } else { 0 }, ece, rtt: Default::default() }
    }
    #[test]
    fn alpha_converges_to_mark_fraction() {
        let mss = 1000.0;
        let mut w = Window { cwnd: 10_000.0, ssthresh: 5_000.0, mss, snd_una: 0, snd_nxt: 10_000 };
        let mut d = Dctcp::new(1.0 / 16.0, 10_000);
        // A sliding window of 10 segments; 3 of every 10 ACKs carry ECE.
        for _win in 0..200 {
            for k in 0..10 {
                w.snd_una += 1000;
                w.snd_nxt = w.snd_una + 10_000;
                d.on_ack(&w, &info(1000, k < 3));
            }
        }
        assert!((d.alpha - 0.3).abs() < 0.01, "{}", d.alpha);
        let ss = d.ssthresh_on_ece(&w);
        assert!((ss - w.cwnd * (1.0 - d.alpha / 2.0)).abs() < 1e-9);
    }
    #[test]
    fn first_window_update_exact() {
        let mut w = Window { cwnd: 4000.0, ssthresh: f64::INFINITY, mss: 1000.0, snd_una: 0, snd_nxt: 4000 };
        let mut d = Dctcp::new(1.0 / 16.0, 4000);
        for k in 0..4 {
            w.snd_una += 1000;
            d.on_ack(&w, &info(1000, k == 0));
        }
        // F = 1/4: alpha = 15/16·1 + 1/16·1/4
        assert!((d.alpha - (15.0 / 16.0 + 1.0 / 64.0)).abs() < 1e-12);
    }
}
