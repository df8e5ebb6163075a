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
        port.paused & (1 << prio) != 0 && port.fc.paused_since[prio as usize] + timeout <= now
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
            if !qp.queues[prio as usize].fifo.iter().any(|&id| self.arena.get(id).in_port == in_local) {
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
