//! A host's NIC: one port (`net/port.rs`) whose queues are drop-tail and unlimited. By default it sends
//! in arrival order (`fifo`); with `round_robin` it serves the host's flows in turn, one packet each, as
//! htsim's hosts do — so a long flow's backlog at its own NIC does not delay a short flow behind it.

use crate::net::packet::{Arena, PktId};
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    #[default]
    Fifo,
    RoundRobin,
}

/// `host.nic = { scheduling = "fifo" | "round_robin", rx_rate, rx_buffer }`.
#[derive(Debug, Clone, Copy, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    #[serde(default)]
    pub scheduling: Scheduling,
    /// The rate at which the host takes packets off its NIC (`host/rx.rs`); absent = at once.
    pub rx_rate: Option<crate::units::Rate>,
    /// The NIC's receive buffer with `rx_rate` (default 1 MB).
    pub rx_buffer: Option<crate::units::Bytes>,
}

impl NicCfg {
    pub fn validate(&self, mtu: u64) -> Result<(), crate::config::ConfigError> {
        use crate::config::ConfigError;
        match (self.rx_rate, self.rx_buffer) {
            (None, Some(_)) => Err(ConfigError::new("host.nic.rx_buffer", "a receive buffer goes with a receive rate: set host.nic.rx_rate (e.g. \"8Gbps\")")),
            (Some(_), Some(b)) if b.0 == crate::units::Size::Inf || b.0.bytes(mtu) < mtu => {
                Err(ConfigError::new("host.nic.rx_buffer", format!("must be a finite size of at least one MTU ({mtu} B)")))
            }
            _ => Ok(()),
        }
    }

    /// Receive buffer bytes (with `rx_rate`).
    pub fn rx_capacity(&self, mtu: u64) -> u64 {
        self.rx_buffer.map(|b| b.0.bytes(mtu)).unwrap_or(1_000_000)
    }
}

/// Per-flow FIFOs served in turn. Connection slots index the FIFOs (slots are reused, so the FIFOs'
/// storage is too: no allocation per packet once the run has warmed up).
#[derive(Default)]
pub struct FlowRr {
    per_conn: Vec<VecDeque<PktId>>,
    /// Connections with packets waiting, in service order.
    turn: VecDeque<u32>,
}

impl FlowRr {
    pub fn push(&mut self, conn: u32, id: PktId) {
        let c = conn as usize;
        if self.per_conn.len() <= c {
            self.per_conn.resize_with(c + 1, VecDeque::new);
        }
        if self.per_conn[c].is_empty() {
            self.turn.push_back(conn);
        }
        self.per_conn[c].push_back(id);
    }

    /// The next flow's head packet; the flow goes to the back of the line if it has more.
    pub fn pop(&mut self, _arena: &Arena) -> PktId {
        let c = self.turn.pop_front().expect("round robin popped with nothing queued");
        let q = &mut self.per_conn[c as usize];
        let id = q.pop_front().unwrap();
        if !q.is_empty() {
            self.turn.push_back(c);
        }
        id
    }

    /// Every queued packet (conservation counts at the end).
    pub fn iter(&self) -> impl Iterator<Item = PktId> + '_ {
        self.per_conn.iter().flat_map(|q| q.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn serves_flows_in_turn() {
        let mut rr = FlowRr::default();
        let arena = Arena::new();
        // Flow 3 queues four packets, then flow 1 queues two: service alternates from flow 1's arrival.
        for id in [30, 31, 32, 33] {
            rr.push(3, id);
        }
        rr.push(1, 10);
        rr.push(1, 11);
        let order: Vec<PktId> = (0..6).map(|_| rr.pop(&arena)).collect();
        assert_eq!(order, vec![30, 10, 31, 11, 32, 33]);
        assert_eq!(rr.iter().count(), 0);
    }
}
