//! A timer with at most one pending event-queue entry (design.md, "Events").

use crate::units::Time;

/// A timer with at most one pending event-queue entry: moving the deadline only updates it; when the
/// entry fires, the timer expires or re-arms itself at the moved deadline (an RTO pushed back by every
/// ACK leaves no dead entry per ACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    pub deadline: Option<Time>,
    /// Time of the pending entry in the event queue.
    pending: Option<Time>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fire {
    /// Not this timer's current entry, or disarmed: nothing to do.
    Ignore,
    /// The deadline moved later: schedule a new entry at this time.
    Rearm(Time),
    Expired,
}

impl Timer {
    /// The time of a new event-queue entry, if the deadline needs one (none pending, or pending later).
    pub fn needs_entry(&mut self) -> Option<Time> {
        let d = self.deadline?;
        if self.pending.map_or(true, |p| p > d) {
            self.pending = Some(d);
            return Some(d);
        }
        None
    }

    /// An entry scheduled at `now` fired.
    pub fn fire(&mut self, now: Time) -> Fire {
        if self.pending != Some(now) {
            return Fire::Ignore; // superseded by an earlier entry
        }
        self.pending = None;
        match self.deadline {
            None => Fire::Ignore,
            Some(d) if d > now => {
                self.pending = Some(d);
                Fire::Rearm(d)
            }
            Some(_) => Fire::Expired,
        }
    }
}

