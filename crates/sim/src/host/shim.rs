//! A host's packets through its vSwitch slot (`vswitch/`): the calls into the shim on the way out and in,
//! and what its answer does to the run — conservation byte for byte, drops, what it injects or releases.

use super::vswitch::{Action, Shim, ShimOut, Toward, VSwitch};
use crate::net::packet::{Packet, PktId};
use crate::sim::Sim;
use crate::units::Time;

impl Sim {
    /// Show a packet leaving host `h`'s transports to its vSwitch; true if it goes on to the NIC.
    #[cold]
    pub(super) fn shim_egress(&mut self, h: u32, id: PktId) -> bool {
        self.shim_see(h, id, VSwitch::egress)
    }

    /// Show a packet arriving at host `h` to its vSwitch; true if it goes on to the transport.
    #[cold]
    pub(super) fn shim_ingress(&mut self, h: u32, id: PktId) -> bool {
        self.shim_see(h, id, VSwitch::ingress)
    }

    /// Host `h`'s vSwitch sees packet `id` through `hook` (its egress or ingress); then the packet's size
    /// change, the shim's action and what it emitted take effect. True if the packet goes on.
    #[cold]
    fn shim_see(&mut self, h: u32, id: PktId, hook: fn(&mut VSwitch, Time, PktId, &mut Packet, &mut ShimOut) -> Action) -> bool {
        let now = self.now();
        let mut out = std::mem::take(&mut self.hosts.shim_out);
        let vs = self.hosts.hosts[h as usize].vswitch.as_mut().unwrap();
        let pkt = self.arena.get_mut(id);
        let before = pkt.size;
        let action = hook(vs, now, id, pkt, &mut out);
        self.shim_resized(id, before);
        let pass = self.shim_action(action, id);
        self.shim_emit(h, &mut out);
        self.hosts.shim_out = out;
        pass
    }

    /// Bytes a shim adds to a packet (an option) or removes count as sent or taken back by it, so that
    /// conservation holds byte for byte.
    fn shim_resized(&mut self, id: PktId, before: u32) {
        let after = self.arena.get(id).size;
        let c = &mut self.rec.meta.conservation;
        c.sent_bytes = c.sent_bytes + after as u64 - before as u64;
    }

    /// A packet the shim holds stays in flight (it is counted at the end of a run through `Shim::held`).
    #[cold]
    fn shim_action(&mut self, action: Action, id: PktId) -> bool {
        match action {
            Action::Pass => true,
            Action::Hold => false,
            Action::Consume => {
                self.take_delivered(id);
                false
            }
            Action::Drop => {
                self.rec.meta.drops.vswitch += 1;
                self.drop_pkt(id);
                false
            }
        }
    }

    /// The extra delay a packet of this connection gets at its sending host.
    fn delay_of(&self, id: PktId) -> Time {
        let pkt = self.arena.get(id);
        match self.hosts.slots.get(pkt.conn as usize).filter(|s| s.live && s.flow == pkt.flow) {
            Some(s) if pkt.src == s.src => if pkt.payload == 0 { s.delay_ctl } else { s.delay_data },
            Some(s) => s.delay_ack,
            None => 0,
        }
    }

    /// Send what a shim injected or released.
    #[cold]
    fn shim_emit(&mut self, h: u32, out: &mut ShimOut) {
        let inject = std::mem::take(&mut out.inject);
        let release = std::mem::take(&mut out.release);
        let ids = inject.into_iter().map(|(to, pkt)| {
            let id = self.arena.alloc(pkt);
            self.count_sent(id);
            (to, id)
        });
        let all: Vec<(Toward, PktId)> = ids.collect::<Vec<_>>().into_iter().chain(release).collect();
        for (to, id) in all {
            match to {
                Toward::Network => {
                    let d = self.delay_of(id);
                    self.to_nic(id, d);
                }
                Toward::Transport => self.deliver(h, id),
            }
        }
    }
}
