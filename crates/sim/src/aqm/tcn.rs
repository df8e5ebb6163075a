//! TCN (Bai et al., "Enabling ECN over Generic Packet Scheduling", CoNEXT 2016): mark at dequeue when
//! the packet's sojourn time exceeds a threshold T = λ·RTT — the time form of DCTCP's K = λ·C·RTT. It
//! keeps no state beyond the enqueue timestamp, so it works per queue under any scheduler.

use super::Verdict;
use crate::units::Time;

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub threshold: Time,
}

#[derive(Clone, Copy, Debug)]
pub struct Tcn {
    pub params: Params,
}

impl Tcn {
    pub fn new(params: Params) -> Self {
        Tcn { params }
    }

    #[inline]
    pub fn on_dequeue(&self, sojourn: Time) -> Verdict {
        if sojourn > self.params.threshold {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn marks_strictly_above_threshold() {
        let t = Tcn::new(Params { threshold: 150_000_000 });
        assert_eq!(t.on_dequeue(150_000_000), Verdict::Pass);
        assert_eq!(t.on_dequeue(150_000_001), Verdict::Mark);
        assert_eq!(t.on_dequeue(0), Verdict::Pass);
    }
}
