//! InfiniBand credit-based flow control (`spec/aqm.md` §10, "CBFC"), `switch.credit = { vl_buffer, vls }`:
//! the lossless alternative to PFC (the two are exclusive).
//!
//! Model [the spec's DEFAULT; the IBA specification was not opened]: every link direction has, per virtual
//! lane (VL), a credit counter at its sender, in 64-byte blocks, starting at the receiver's VL buffer
//! (`vl_buffer`). A packet may start only if its VL holds credits for all of its blocks (⌈size / 64⌉);
//! starting it spends them. The receiver frees the blocks when the packet leaves its buffer — a switch when
//! the packet is dequeued at its egress port (taken off the queue, whether it is then sent or dropped by a
//! dequeue-time AQM), a host at once — and the credits reach the sender one link delay later (credit
//! updates are not modelled as frames: they take no link time). So a switch never holds more than
//! `vl_buffer` per (ingress port, VL) and never drops for lack of buffer; there is no shared-buffer
//! admission (`switch.buffer` and `port_buffer` are refused with credits).
//!
//! A VL is a queue of the port: a packet of priority `p` uses VL `min(p, vls − 1)`, as it uses that queue
//! (`vls` = `switch.queues`, one queue per VL). A port whose VL has packets but too few credits for the
//! head one is **OFF** for that VL: it is paused exactly as a PFC PAUSE would pause it (`Sim::set_paused`),
//! so the scheduler skips that VL, its AQM's `on_pause` hook is told (TCD reads ON/OFF from it), and the
//! time counts as the port's `credit_stall_us` in the `ports` table. Credits coming back turn it ON once
//! the head packet fits.
//!
//! Not modelled: credit loops (a cyclic topology can deadlock with credits as with PFC; the PFC deadlock
//! detector does not watch credit stalls), VL arbitration tables (the port's scheduler serves the VLs), and
//! VL 15 (management traffic).

use super::packet::PktId;
use crate::aqm::Hooks;
use super::Owner;
use crate::config::{ConfigError, SwitchCfg};
use crate::sim::{Ev, Sim};
use crate::units::{Bytes, Size};
use serde::Deserialize;

/// Credits count 64-byte blocks.
pub const BLOCK: u64 = 64;

/// Blocks a packet of `size` bytes takes in the receiver's buffer.
#[inline]
pub fn blocks(size: u64) -> u64 {
    size.div_ceil(BLOCK)
}

/// `switch.credit = { vl_buffer = "64KB", vls = 1 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreditCfg {
    /// Receive buffer per (port, VL), at switches and host NICs alike: the credits a sender starts with.
    pub vl_buffer: Bytes,
    /// Data VLs; each is one queue of every port, so it must equal `switch.queues` (default: that).
    pub vls: Option<u32>,
}

/// What a run needs of `switch.credit`, resolved.
#[derive(Debug, Clone)]
pub struct Credit {
    /// Blocks per (link direction, VL).
    pub blocks: u64,
}

impl CreditCfg {
    /// Check the keys against the switch they configure.
    pub fn validate(&self, sw: &SwitchCfg) -> Result<(), ConfigError> {
        let mtu = sw.mtu as u64;
        if sw.pfc.is_some() {
            let msg = "InfiniBand credit flow control replaces PFC: keep one of switch.credit and switch.pfc";
            return Err(ConfigError::new("switch.credit", msg));
        }
        let buf = match self.vl_buffer.0 {
            Size::Inf => return Err(ConfigError::new("switch.credit.vl_buffer", "must be a finite size such as \"64KB\"")),
            s => s.bytes(mtu),
        };
        if buf / BLOCK < blocks(mtu) {
            let msg = format!("must hold at least one MTU ({mtu} B = {} blocks of 64 B), e.g. \"64KB\"", blocks(mtu));
            return Err(ConfigError::new("switch.credit.vl_buffer", msg));
        }
        if let Some(v) = self.vls {
            if !(1..=8).contains(&v) {
                return Err(ConfigError::new("switch.credit.vls", "give 1 to 8 data VLs"));
            }
            if v != sw.queues {
                let msg = format!("each VL is one queue of every port: set switch.queues = {v} (it is {})", sw.queues);
                return Err(ConfigError::new("switch.credit.vls", msg));
            }
        }
        if sw.buffer.is_some() {
            let msg = "with switch.credit a switch buffers vl_buffer per (port, VL) and admits what its credits allow: remove switch.buffer";
            return Err(ConfigError::new("switch.buffer", msg));
        }
        if sw.port_buffer.is_some() {
            let msg = "with switch.credit a switch buffers vl_buffer per (port, VL) and admits what its credits allow: remove switch.port_buffer";
            return Err(ConfigError::new("switch.port_buffer", msg));
        }
        for q in 0..sw.queues as usize {
            if sw.aqm.get(q).may_drop() {
                let field = if sw.aqm.len().is_some() { format!("switch.aqm[{q}]") } else { "switch.aqm".into() };
                let msg = "an InfiniBand fabric is lossless (switch.credit): its AQM must only mark (non_ect = \"pass\", mode = \"ecn\")";
                return Err(ConfigError::new(field, msg));
            }
        }
        Ok(())
    }

    pub fn resolve(&self, mtu: u32) -> Credit {
        Credit { blocks: self.vl_buffer.0.bytes(mtu as u64) / BLOCK }
    }
}

impl Sim {
    /// Before port `p`'s scheduler picks: every VL whose head packet lacks the credits for it goes OFF
    /// (paused until credits come back), so the scheduler sees only VLs that can send.
    #[cold]
    pub(crate) fn credit_gate(&mut self, p: u32) {
        let port = &self.net.ports[p as usize];
        for vl in 0..port.queues.len() {
            let port = &self.net.ports[p as usize];
            let Some(head) = port.queues[vl].fifo.front() else { continue };
            if blocks(self.arena.get(head).size as u64) > port.fc().credits[vl] {
                self.set_paused(p, vl as u8, true); // no-op for a VL already OFF
            }
        }
    }

    /// Port `p` takes packet `id` off its VL `vl` to send it: it spends the packet's blocks, and at a
    /// switch the packet leaves the buffer it was charged to, so the port it came in by gets them back.
    #[cold]
    pub(crate) fn credit_dequeued(&mut self, p: u32, vl: usize, id: PktId) {
        let size = self.arena.get(id).size as u64;
        let port = &mut self.net.ports[p as usize];
        port.fc_mut().credits[vl] -= blocks(size);
        if let Owner::Switch(_) = port.owner {
            self.credit_release(p, id);
        }
    }

    /// Packet `id` leaves the buffer of the node it reached over the link from port `from` (a switch's
    /// ingress, or a host): its blocks go back to `from`, one link delay from now.
    #[cold]
    pub(crate) fn credit_return(&mut self, from: u32, id: PktId) {
        let pkt = self.arena.get(id);
        let port = &self.net.ports[from as usize];
        let vl = port.queue_for(pkt.prio) as u8;
        let ev = Ev::Credit { port: from, vl, blocks: blocks(pkt.size as u64) as u32 };
        let t = self.now() + port.delay;
        self.push(t, ev);
    }

    /// A switch dequeues packet `id` at its port `p`: the port it came in by gets its blocks back.
    #[cold]
    pub(crate) fn credit_release(&mut self, p: u32, id: PktId) {
        let node = self.net.ports[p as usize].node;
        let inp = self.net.node_ports[node as usize].0 + self.arena.get(id).in_port as u32;
        self.credit_return(self.net.ports[inp as usize].rev, id);
    }

    /// Credits for `blocks` of VL `vl` reach port `p`; the VL turns ON if its head packet now fits.
    pub(crate) fn credit_arrive(&mut self, p: u32, vl: u8, blocks_back: u32) {
        let port = &mut self.net.ports[p as usize];
        port.fc_mut().credits[vl as usize] += blocks_back as u64;
        if port.paused & (1 << vl) == 0 {
            return;
        }
        let fits = match port.queues[vl as usize].fifo.front() {
            Some(head) => blocks(self.arena.get(head).size as u64) <= port.fc().credits[vl as usize],
            None => true,
        };
        if fits {
            self.set_paused(p, vl, false);
        }
    }

    /// A packet reaches switch `s` over the link of port `from` in a credit-controlled fabric: no buffer
    /// admission (credits bound it), the AQM's enqueue decision (marks only), queued at its egress.
    #[cold]
    pub(crate) fn switch_receive_credit(&mut self, s: u32, id: PktId, from: u32, hop: u32) {
        let p = self.egress(s, id, hop);
        let now = self.now();
        let mtu = self.net.mtu;
        let inp = self.net.ports[self.net.ports[from as usize].rev as usize].local;
        let pkt = self.arena.get_mut(id);
        pkt.in_port = inp as u16;
        let (size, prio) = (pkt.size as u64, pkt.prio);
        let port = &mut self.net.ports[p as usize];
        let qi = port.queue_for(prio);
        let ctx = port.ctx(qi, now, mtu);
        let q = &mut port.queues[qi];
        let sw = &mut self.net.switches[s as usize];
        let v = q.aqm.on_enqueue(&ctx, &mut sw.rng);
        if q.apply(v, pkt) {
            // Validation admits only marking AQMs; a controller could still set one.
            self.rec.meta.drops.aqm += 1;
            self.credit_return(from, id);
            self.drop_pkt(id);
            let name = &self.rec.meta.node_names[self.net.node_id(Owner::Switch(s)) as usize];
            let msg = format!("a packet was dropped in a credit-controlled (lossless) fabric at {name} queue {qi}: its AQM dropped it; give it a marking-only AQM");
            self.fail(msg);
            return;
        }
        sw.used += size;
        self.port_push(p, qi, id);
    }
}

impl Sim {
    /// Check that no credit was made or lost (None without credits): for every link direction and VL, the
    /// sender's credits plus the blocks on the wire toward the receiver, held in the receiving switch's
    /// queues (charged to that ingress port) and on their way back as credit updates equal the VL buffer.
    /// A count above it (or a spent credit the sender did not have) is reported with the port and VL.
    pub fn credit_audit(&self) -> Option<Result<(), String>> {
        let full = self.net.credit.as_ref()?.blocks;
        let n = self.net.ports.len();
        let mut count: Vec<[u64; 8]> = self.net.ports.iter().map(|p| p.fc().credits).collect();
        for (i, p) in self.net.ports.iter().enumerate() {
            for id in p.pipe.iter(&self.arena) {
                let pkt = self.arena.get(id);
                count[i][p.queue_for(pkt.prio)] += blocks(pkt.size as u64);
            }
            if let Owner::Switch(_) = p.owner {
                let p0 = self.net.node_ports[p.node as usize].0;
                for q in &p.queues {
                    for id in q.fifo.iter(&self.arena) {
                        let pkt = self.arena.get(id);
                        let from = self.net.ports[(p0 + pkt.in_port as u32) as usize].rev as usize;
                        count[from][self.net.ports[from].queue_for(pkt.prio)] += blocks(pkt.size as u64);
                    }
                }
            }
        }
        for (_, e) in self.eng.pending() {
            if let Ev::Credit { port, vl, blocks } = *e {
                count[port as usize][vl as usize] += blocks as u64;
            }
        }
        for (i, c) in count.iter().enumerate().take(n) {
            let port = &self.net.ports[i];
            for (v, &b) in c.iter().enumerate().take(port.queues.len()) {
                if b != full {
                    let name = &self.rec.meta.node_names[port.node as usize];
                    return Some(Err(format!("{name} port {} VL {v}: {b} blocks accounted for, {full} expected", port.local)));
                }
            }
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Result<(), ConfigError> {
        let sw: SwitchCfg = toml::from_str(text).unwrap();
        sw.credit.as_ref().unwrap().validate(&sw)
    }

    #[test]
    fn blocks_round_up_to_64_bytes() {
        assert_eq!(blocks(1), 1);
        assert_eq!(blocks(64), 1);
        assert_eq!(blocks(65), 2);
        assert_eq!(blocks(1064), 17);
    }

    #[test]
    fn resolve_counts_whole_blocks() {
        let c = CreditCfg { vl_buffer: Bytes(Size::Bytes(64 * 1024 + 63)), vls: None };
        assert_eq!(c.resolve(1000).blocks, 1024);
    }

    #[test]
    fn bad_keys_name_the_field_and_the_fix() {
        assert!(cfg("credit = { vl_buffer = \"64KB\" }").is_ok());
        assert!(cfg("queues = 2\ncredit = { vl_buffer = \"64KB\", vls = 2 }").is_ok());
        let e = cfg("credit = { vl_buffer = \"64KB\", vls = 2 }").unwrap_err();
        assert_eq!(e.field, "switch.credit.vls");
        assert!(e.message.contains("switch.queues = 2"), "{}", e.message);
        assert_eq!(cfg("credit = { vl_buffer = \"1KB\" }").unwrap_err().field, "switch.credit.vl_buffer");
        assert_eq!(cfg("credit = { vl_buffer = \"inf\" }").unwrap_err().field, "switch.credit.vl_buffer");
        assert_eq!(cfg("credit = { vl_buffer = \"64KB\", vls = 9 }").unwrap_err().field, "switch.credit.vls");
        assert_eq!(cfg("buffer = \"4MB\"\ncredit = { vl_buffer = \"64KB\" }").unwrap_err().field, "switch.buffer");
        assert_eq!(cfg("port_buffer = \"4MB\"\ncredit = { vl_buffer = \"64KB\" }").unwrap_err().field, "switch.port_buffer");
        let e = cfg("credit = { vl_buffer = \"64KB\" }\npfc = { priorities = [0], xoff = \"40KB\" }").unwrap_err();
        assert_eq!(e.field, "switch.credit");
        let e = cfg("aqm = { kind = \"red\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01, non_ect = \"drop\" }\ncredit = { vl_buffer = \"64KB\" }").unwrap_err();
        assert_eq!(e.field, "switch.aqm");
    }
}
