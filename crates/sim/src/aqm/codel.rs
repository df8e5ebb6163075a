//! CoDel (RFC 8289, Nichols & Jacobson), in drop mode or ECN-marking mode.
//!
//! The RFC's dequeue loop, written as one decision per dequeued packet: the port glue asks again, for the
//! next packet of the same queue at the same instant, after every drop — which is exactly the RFC's
//! `while (now >= drop_next && dropping)` loop. In marking mode at most one packet is marked per dequeue
//! and it is sent. `ok_to_drop`: the sojourn time has stayed at or above `target` for at least `interval`
//! (and more than one MTU is queued); the control law spaces actions by `interval / √count`.

use super::{Config, Hooks, NonEct, QueueCtx, Verdict};
use crate::config::ConfigError;
use crate::rng::Rng;
use crate::units::Dur;
use serde::Deserialize;
use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Drop,
    #[default]
    Ecn,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub target: Time,
    pub interval: Time,
    pub mode: Mode,
}

/// Where the decision for the next packet stands within one dequeue call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Step {
    /// A fresh dequeue.
    #[default]
    Start,
    /// The packet after the drop that entered the dropping state: it is sent.
    AfterEntryDrop(Time),
    /// The packet after a drop inside the dropping loop.
    InLoop(Time),
}

#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    /// 0 = not above target (the RFC's sentinel).
    pub first_above_time: Time,
    pub dropping: bool,
    pub drop_next: Time,
    pub count: u32,
    pub lastcount: u32,
    step: Step,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub drops: u64,
    pub marks: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Codel {
    pub params: Params,
    pub state: State,
    pub stats: Stats,
}

impl Codel {
    pub fn new(params: Params) -> Self {
        Codel { params, state: State::default(), stats: Stats::default() }
    }

    /// control_law(t) = t + interval / √count
    fn control_law(&self, t: Time) -> Time {
        t + (self.params.interval as f64 / libm::sqrt(self.state.count.max(1) as f64)) as Time
    }

    fn ok_to_drop(&mut self, sojourn: Time, queue_after: u64, mtu: u32, now: Time) -> bool {
        if sojourn < self.params.target || queue_after <= mtu as u64 {
            self.state.first_above_time = 0;
            return false;
        }
        if self.state.first_above_time == 0 {
            self.state.first_above_time = now + self.params.interval;
            return false;
        }
        now >= self.state.first_above_time
    }

    fn act(&mut self) -> Verdict {
        match self.params.mode {
            Mode::Drop => {
                self.stats.drops += 1;
                Verdict::Drop
            }
            Mode::Ecn => {
                self.stats.marks += 1;
                Verdict::Mark
            }
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time) -> Verdict {
        let now = ctx.now;
        let ok = self.ok_to_drop(sojourn, ctx.queue_bytes, ctx.mtu, now);
        let step = std::mem::take(&mut self.state.step);
        match step {
            Step::AfterEntryDrop(t) if t == now => return Verdict::Pass,
            Step::InLoop(t) if t == now => {
                if !ok {
                    self.state.dropping = false;
                    return Verdict::Pass;
                }
                self.state.drop_next = self.control_law(self.state.drop_next);
                if now >= self.state.drop_next {
                    self.state.count += 1;
                    self.state.step = Step::InLoop(now);
                    return self.act();
                }
                return Verdict::Pass;
            }
            _ => {}
        }
        if self.state.dropping {
            if !ok {
                self.state.dropping = false;
                return Verdict::Pass;
            }
            if now >= self.state.drop_next {
                self.state.count += 1;
                let v = self.act();
                if self.params.mode == Mode::Drop {
                    self.state.step = Step::InLoop(now);
                } else {
                    // Marking mode sends the marked packet; the next action is a control-law step away.
                    self.state.drop_next = self.control_law(self.state.drop_next);
                }
                return v;
            }
            Verdict::Pass
        } else if ok {
            let v = self.act();
            self.state.dropping = true;
            // Resume near the previous rate if the last dropping state ended recently (RFC 8289 §5.5).
            let delta = self.state.count.wrapping_sub(self.state.lastcount);
            self.state.count = if delta > 1 && now.wrapping_sub(self.state.drop_next) < 16 * self.params.interval {
                delta
            } else {
                1
            };
            self.state.drop_next = self.control_law(now);
            self.state.lastcount = self.state.count;
            if self.params.mode == Mode::Drop {
                self.state.step = Step::AfterEntryDrop(now);
            }
            v
        } else {
            Verdict::Pass
        }
    }

    /// The queue ran dry at a dequeue. After a drop the RFC's loop dequeues again and finds nothing, which
    /// ends the dropping state; a sent packet leaves it to the next dequeue (or to `on_idle`). Without this a
    /// drop that empties one queue of a port whose link stays busy with another would keep the state.
    pub fn on_empty(&mut self) {
        if matches!(self.state.step, Step::AfterEntryDrop(_) | Step::InLoop(_)) {
            self.on_idle();
        }
    }

    /// The queue was found empty when the link became free (RFC: dequeue of an empty queue).
    pub fn on_idle(&mut self) {
        self.state.first_above_time = 0;
        self.state.dropping = false;
        self.state.step = Step::Start;
    }
}

impl Hooks for Codel {
    #[inline]
    fn on_dequeue(&mut self, ctx: &QueueCtx, sojourn: Time, _rng: &mut Rng) -> Verdict {
        Codel::on_dequeue(self, ctx, sojourn)
    }
    #[inline]
    fn on_empty(&mut self, _now: Time) {
        Codel::on_empty(self)
    }
    #[inline]
    fn on_idle(&mut self) {
        Codel::on_idle(self)
    }
}

/// `aqm = { kind = "codel", target, interval, mode = "ecn"|"drop", non_ect }`. Drop-capable: by default
/// it drops what it cannot mark.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub target: Dur,
    pub interval: Dur,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub non_ect: Option<NonEct>,
}

impl Config for Cfg {
    type Algo = Codel;

    fn validate(&self, field: &str, _mtu: u64) -> Result<(), ConfigError> {
        for (key, d) in [("target", self.target), ("interval", self.interval)] {
            if d.0 == 0 {
                return Err(ConfigError::new(format!("{field}.{key}"), "must be greater than zero, e.g. \"100us\""));
            }
        }
        Ok(())
    }
    fn build(&self, _mtu: u64) -> Codel {
        Codel::new(Params { target: self.target.0, interval: self.interval.0, mode: self.mode })
    }
    fn non_ect(&self) -> NonEct {
        self.non_ect.unwrap_or(NonEct::Drop)
    }
    fn drops(&self) -> bool {
        self.mode == Mode::Drop
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn ctx(now: Time, q: u64) -> QueueCtx {
        QueueCtx { now, queue_bytes: q, queue_pkts: 0, port_bytes: q, port_rate: 10_000_000_000, mtu: 1500 }
    }

    fn codel(mode: Mode) -> Codel {
        Codel::new(Params { target: 10 * US, interval: 100 * US, mode })
    }

    #[test]
    fn ecn_mode_state_machine() {
        let mut c = codel(Mode::Ecn);
        // Sojourn 50 µs from t = 0, one packet every 10 µs, a deep queue.
        let mut marks = vec![];
        for k in 0..100u64 {
            let t = k * 10 * US;
            if c.on_dequeue(&ctx(t, 100_000), 50 * US) == Verdict::Mark {
                marks.push(t);
            }
        }
        // first_above_time = 0 + interval at t = 0; the first mark at the first packet with now ≥ 100 µs.
        assert_eq!(marks[0], 100 * US);
        // Then drop_next = 100 + 100/√1 = 200 µs; the next mark at 200 µs, then 200 + 100/√2 = 270.7 →
        // 280 µs, then 270.7 + 100/√3 = 328.4 → 330 µs.
        assert_eq!(&marks[1..4], &[200 * US, 280 * US, 330 * US]);
        // A short queue (≤ one MTU) leaves the dropping state.
        assert_eq!(c.on_dequeue(&ctx(1000 * US, 1000), 50 * US), Verdict::Pass);
        assert!(!c.state.dropping);
    }

    /// Drop mode, sojourn 50 µs from t = 0: the entry drop at 100 µs (count 1, drop_next 200 µs).
    fn after_entry_drop() -> Codel {
        let mut c = codel(Mode::Drop);
        assert_eq!(c.on_dequeue(&ctx(0, 100_000), 50 * US), Verdict::Pass);
        assert_eq!(c.on_dequeue(&ctx(100 * US, 100_000), 50 * US), Verdict::Drop);
        c
    }

    /// ECN mode, sojourn 50 µs, a packet every 10 µs for 300 µs: dropping, marks at 100, 200 and 280 µs.
    fn marking() -> Codel {
        let mut c = codel(Mode::Ecn);
        for k in 0..30u64 {
            c.on_dequeue(&ctx(k * 10 * US, 100_000), 50 * US);
        }
        assert!(c.state.dropping && c.stats.marks == 3);
        c
    }

    #[test]
    fn drop_mode_drops_several_in_one_dequeue_when_late() {
        let mut c = after_entry_drop();
        // Entry: the next packet of the same dequeue is sent.
        assert_eq!(c.on_dequeue(&ctx(100 * US, 100_000), 50 * US), Verdict::Pass);
        assert_eq!(c.state.count, 1);
        // Much later (drop_next = 200 µs long past): drop, and keep dropping while now ≥ drop_next.
        let t = 400 * US;
        let mut v = vec![];
        for _ in 0..6 {
            v.push(c.on_dequeue(&ctx(t, 100_000), 50 * US));
        }
        // drop_next: 200 → 270.7 → 328.4 → 378.4 → 423.1 > 400: three drops in the loop after the first.
        assert_eq!(&v[..5], &[Verdict::Drop, Verdict::Drop, Verdict::Drop, Verdict::Drop, Verdict::Pass]);
        assert_eq!(c.stats.drops, 5);
    }

    #[test]
    fn the_packet_after_an_entry_drop_passes_only_within_the_same_dequeue() {
        let mut c = after_entry_drop();
        // The next dequeue comes later, past drop_next = 200 µs: the dropping state drops it.
        assert_eq!(c.on_dequeue(&ctx(400 * US, 100_000), 50 * US), Verdict::Drop);
        assert_eq!(c.state.count, 2);
    }

    #[test]
    fn the_entry_drop_enters_the_dropping_state_whatever_the_next_packet() {
        // RFC 8289: `drop(p); r = dodequeue(now); dropping = true` — the next packet's own verdict (here a
        // sojourn below target) resets first_above_time but does not cancel the entry.
        let mut c = after_entry_drop();
        assert_eq!(c.on_dequeue(&ctx(100 * US, 100_000), 5 * US), Verdict::Pass);
        assert!(c.state.dropping && c.state.first_above_time == 0);
        // A marking CoDel sends the marked packet: the next one, even at the same instant, is judged afresh.
        let mut m = codel(Mode::Ecn);
        m.on_dequeue(&ctx(0, 100_000), 50 * US);
        assert_eq!(m.on_dequeue(&ctx(100 * US, 100_000), 50 * US), Verdict::Mark);
        assert_eq!(m.on_dequeue(&ctx(100 * US, 100_000), 5 * US), Verdict::Pass);
        assert!(!m.state.dropping);
    }

    #[test]
    fn a_drop_that_empties_the_queue_ends_the_dropping_state() {
        // The entry drop and an in-loop drop, each the queue's last packet (the port calls `on_empty`).
        let mut c = after_entry_drop();
        Hooks::on_empty(&mut c, 100 * US);
        assert!(!c.state.dropping && c.state.first_above_time == 0);
        let mut c = after_entry_drop();
        c.on_dequeue(&ctx(100 * US, 100_000), 50 * US);
        assert_eq!(c.on_dequeue(&ctx(400 * US, 100_000), 50 * US), Verdict::Drop);
        Hooks::on_empty(&mut c, 400 * US);
        assert!(!c.state.dropping && c.state.first_above_time == 0);
        // A packet sent (marked or not) as the last one leaves the state to the next dequeue.
        let mut m = marking();
        Hooks::on_empty(&mut m, 290 * US);
        assert!(m.state.dropping && m.state.first_above_time != 0);
        let mut c = after_entry_drop();
        c.on_dequeue(&ctx(100 * US, 100_000), 50 * US);
        Hooks::on_empty(&mut c, 100 * US);
        assert!(c.state.dropping);
    }

    #[test]
    fn re_entry_resumes_the_count_only_within_sixteen_intervals() {
        let mut c = marking();
        assert_eq!(c.on_dequeue(&ctx(330 * US, 100_000), 50 * US), Verdict::Mark);
        assert_eq!(c.on_dequeue(&ctx(340 * US, 100_000), 5 * US), Verdict::Pass);
        assert!(!c.state.dropping);
        // count 4, lastcount 1: a re-entry soon after resumes at count 4 − 1 = 3 (RFC 8289 §5.5).
        assert_eq!((c.state.count, c.state.lastcount), (4, 1));
        let left = c.state.drop_next;
        let reenter = |gap: Time| {
            let mut r = c;
            let at = left + gap;
            r.on_dequeue(&ctx(at - 100 * US, 100_000), 50 * US);
            assert_eq!(r.on_dequeue(&ctx(at, 100_000), 50 * US), Verdict::Mark);
            r.state.count
        };
        assert_eq!(reenter(16 * 100 * US - 1), 3);
        assert_eq!(reenter(16 * 100 * US), 1);
    }

    #[test]
    fn an_empty_queue_ends_the_dropping_state() {
        let mut c = marking();
        // Through the hook the port calls when it finds the queue empty.
        Hooks::on_idle(&mut c);
        assert!(!c.state.dropping && c.state.first_above_time == 0);
    }

    #[test]
    fn keys_are_checked_and_reach_the_algorithm() {
        let cfg = |t: &str| toml::from_str::<Cfg>(t).unwrap();
        for (text, key) in [("target = \"0us\"\ninterval = \"100us\"", "target"), ("target = \"5us\"\ninterval = \"0us\"", "interval")] {
            assert_eq!(cfg(text).validate("switch.aqm", 1500).unwrap_err().field, format!("switch.aqm.{key}"));
        }
        let ecn = cfg("target = \"5us\"\ninterval = \"100us\"");
        assert!(ecn.validate("switch.aqm", 1500).is_ok());
        let p = ecn.build(1500).params;
        assert_eq!((p.target, p.interval, p.mode), (5 * US, 100 * US, Mode::Ecn));
        // Drop-capable: what it cannot mark is dropped unless `non_ect` says otherwise; only drop mode drops
        // ECT packets (a lossless queue refuses such an AQM).
        assert_eq!((ecn.non_ect(), ecn.drops()), (NonEct::Drop, false));
        let drop = cfg("target = \"5us\"\ninterval = \"100us\"\nmode = \"drop\"\nnon_ect = \"pass\"");
        assert_eq!((drop.build(1500).params.mode, drop.non_ect(), drop.drops()), (Mode::Drop, NonEct::Pass, true));
    }

    #[test]
    fn below_target_resets() {
        let mut c = marking();
        // A sojourn of exactly the target is not below it (RFC 8289: `sojourn_time < TARGET` resets).
        c.on_dequeue(&ctx(300 * US, 100_000), 10 * US);
        assert!(c.state.dropping && c.state.first_above_time != 0);
        assert_eq!(c.on_dequeue(&ctx(400 * US, 100_000), 5 * US), Verdict::Pass);
        assert!(!c.state.dropping && c.state.first_above_time == 0);
    }
}
