//! PFC deadlock detection: a cycle of switch ports, each paused (same priority) by the node it sends to
//! and holding packets that came in from the port before it in the cycle, every one paused for at least
//! `switch.pfc.deadlock_timeout`. Such a cycle cannot drain by itself: each port waits for the next. A
//! check runs `deadlock_timeout` after a port becomes paused (again while it stays paused and no cycle is
//! found); `on_deadlock = "fail"` stops the run with the cycle in the message, `"record"` adds it to
//! `meta.deadlocks` (once per cycle) and goes on.

use super::pfc::OnDeadlock;
use super::Owner;
use crate::sim::{Ev, Sim};
use crate::units::fmt_time;

impl Sim {
    /// The check for port `p`, priority `prio`.
    #[cold]
    pub(crate) fn deadlock_check(&mut self, p: u32, prio: u8) {
        let now = self.now();
        let pfc = self.net.pfc.as_deref().unwrap();
        let (timeout, on) = (pfc.deadlock_timeout, pfc.on_deadlock);
        if !self.stuck(p, prio, now, timeout) {
            return; // resumed since, or paused again later (that pause has its own check)
        }
        let Some(cycle) = self.cycle_from(p, prio, now, timeout) else {
            self.push(now + timeout, Ev::DeadlockCheck { port: p, prio });
            return;
        };
        let names = &self.rec.meta.node_names;
        let hops: Vec<String> =
            cycle.iter().map(|&q| format!("{} port {}", names[self.net.ports[q as usize].node as usize], self.net.ports[q as usize].local)).collect();
        let first = &names[self.net.ports[cycle[0] as usize].node as usize];
        let text = format!(
            "PFC deadlock at {}: priority {prio} paused around the cycle {} → {first} (each port paused by the next for ≥ {})",
            fmt_time(now),
            hops.join(" → "),
            fmt_time(timeout)
        );
        match on {
            OnDeadlock::Fail => self.fail(text),
            OnDeadlock::Record => {
                let mut key = cycle.clone();
                key.sort_unstable();
                if !self.net.deadlocks.contains(&key) {
                    self.net.deadlocks.push(key);
                    self.rec.meta.deadlocks.push(text);
                }
            }
        }
    }

    /// Port `p` has had `prio` paused since at least `timeout` ago.
    fn stuck(&self, p: u32, prio: u8, now: u64, timeout: u64) -> bool {
        let port = &self.net.ports[p as usize];
        port.paused & (1 << prio) != 0 && port.fc().paused_since[prio as usize] + timeout <= now
    }

    /// A cycle of stuck ports through `p`: from a port, the next is a stuck port of the node it sends to
    /// whose queue holds a packet that came in by the link from the port before (a depth-first search
    /// over the ports of each node; the first cycle found, in port order).
    fn cycle_from(&self, p: u32, prio: u8, now: u64, timeout: u64) -> Option<Vec<u32>> {
        let mut path = vec![p];
        let mut seen = vec![p];
        self.dfs(p, prio, now, timeout, &mut path, &mut seen).then_some(path)
    }

    fn dfs(&self, at: u32, prio: u8, now: u64, timeout: u64, path: &mut Vec<u32>, seen: &mut Vec<u32>) -> bool {
        let port = &self.net.ports[at as usize];
        let Owner::Switch(_) = port.peer_owner else { return false };
        // The link `at` sends on enters its peer by the peer's port `rev`.
        let in_local = self.net.ports[port.rev as usize].local as u16;
        let (p0, np) = self.net.node_ports[port.peer as usize];
        for q in p0..p0 + np {
            if !self.stuck(q, prio, now, timeout) {
                continue;
            }
            let qp = &self.net.ports[q as usize];
            // Lossless priorities are queue indexes (`PfcCfg::validate`).
            if !qp.queues[prio as usize].fifo.iter(&self.arena).any(|id| self.arena.get(id).in_port == in_local) {
                continue;
            }
            if q == path[0] {
                return true;
            }
            if seen.contains(&q) {
                continue;
            }
            seen.push(q);
            path.push(q);
            if self.dfs(q, prio, now, timeout, path, seen) {
                return true;
            }
            path.pop();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::net::packet::Packet;
    use crate::net::test_ring::{clockwise, ring, NOW};
    use crate::sim::{Ev, Sim};
    use crate::units::US;

    const TIMEOUT: u64 = 500 * US;

    /// Port `p` paused on priority 0 since t = 0 (stuck at 1 ms), holding a packet that came in to its
    /// switch by local port `in_port`.
    fn stick(s: &mut Sim, p: u32, in_port: u16) {
        let id = s.arena.alloc(Packet { in_port, ..Packet::blank() });
        let port = &mut s.net.ports[p as usize];
        port.paused |= 1;
        port.fc_mut().paused_since[0] = 0;
        port.queues[0].fifo.push_back(id, &mut s.arena);
    }

    #[test]
    fn a_cycle_needs_each_queue_to_hold_packets_from_the_port_before() {
        // Every clockwise port stuck, but holding only its own host's packets: nothing waits on the port
        // before, so there is no cycle.
        let mut s = ring();
        for i in 0..5 {
            let (p, from_host, _) = clockwise(&s, i);
            stick(&mut s, p, from_host);
        }
        let first = clockwise(&s, 0).0;
        assert_eq!(s.cycle_from(first, 0, NOW, TIMEOUT), None);
        // With a packet from the switch before in each, the five ports are a cycle, found in ring order.
        for i in 0..5 {
            let (p, _, from_ring) = clockwise(&s, i);
            s.net.ports[p as usize].queues[0].fifo.clear();
            stick(&mut s, p, from_ring);
        }
        let want: Vec<u32> = (0..5).map(|i| clockwise(&s, i).0).collect();
        assert_eq!(s.cycle_from(first, 0, NOW, TIMEOUT), Some(want));
        // Not before the timeout has run since each pause began.
        assert_eq!(s.cycle_from(first, 0, TIMEOUT - 1, TIMEOUT), None);
    }

    #[test]
    fn a_lone_stuck_port_is_no_cycle_whatever_its_number() {
        // Only the ports of the node a link enters are followed: a stuck port holding packets from the
        // right local port number but on another node (here: itself) does not continue the search.
        let base = ring();
        for p in 0..base.net.ports.len() as u32 {
            if !matches!(base.net.ports[p as usize].owner, crate::net::Owner::Switch(_)) {
                continue;
            }
            let mut s = ring();
            let in_local = s.net.ports[s.net.ports[p as usize].rev as usize].local as u16;
            stick(&mut s, p, in_local);
            assert_eq!(s.cycle_from(p, 0, NOW, TIMEOUT), None, "port {p}");
        }
    }

    #[test]
    fn a_stuck_port_without_a_cycle_is_checked_again_one_timeout_later() {
        let mut s = ring();
        let (p, _, from_ring) = clockwise(&s, 0);
        stick(&mut s, p, from_ring);
        let checks = |s: &Sim| -> Vec<u64> {
            s.eng.pending().filter(|(_, e)| matches!(e, Ev::DeadlockCheck { .. })).map(|(t, _)| t).collect()
        };
        let before = checks(&s);
        s.deadlock_check(p, 0);
        assert!(s.failure().is_none());
        let mut after = checks(&s);
        for t in before {
            after.remove(after.iter().position(|&x| x == t).unwrap());
        }
        assert_eq!(after, vec![NOW + TIMEOUT]);
        // A port no longer paused is not checked again.
        s.net.ports[p as usize].paused = 0;
        let n = checks(&s).len();
        s.deadlock_check(p, 0);
        assert_eq!(checks(&s).len(), n);
    }
}
