//! Reno / NewReno (RFC 5681, RFC 6582). With `ecn = true` it is ECN* (Wu et al., CoNEXT 2012): RFC 3168
//! TCP that halves once per window on ECN-Echo. Increase: slow start, then one MSS per RTT.

use super::{Cc, NoKeys, TcpParams, Window};

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl Reno {
    /// ssthresh = max(FlightSize / 2, 2·MSS)  (RFC 5681 eq. 4)
    #[inline]
    pub fn ssthresh_on_loss(w: &Window, flight: f64) -> f64 {
        (flight / 2.0).max(2.0 * w.mss)
    }
}

impl Cc for Reno {
    type Cfg = NoKeys;
    fn build(_p: &TcpParams, _cfg: &NoKeys, _snd_nxt: u64) -> Self {
        Reno
    }
}
