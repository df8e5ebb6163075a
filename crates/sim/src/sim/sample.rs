//! Recording while the run goes (queue, link and flow-trace samples) and closing it (counters of
//! unfinished flows, conservation, metadata).

use super::{peak_rss_bytes, Ev, Sim};
use crate::records::{write_queue_row, LinkRow, QueueRow, Records, TraceRow};
use crate::transport::Transport;
use crate::units::SEC;
use std::io::Write;

impl Sim {
    #[cold]
    pub(crate) fn sample_queues(&mut self) {
        let now = self.now();
        for &p in &self.obs.sample_ports {
            let port = &mut self.net.ports[p as usize];
            for (qi, q) in port.queues.iter_mut().enumerate() {
                let row = QueueRow {
                    time: now,
                    node: port.node,
                    port: port.local,
                    queue: qi as u32,
                    bytes: q.bytes,
                    packets: q.fifo.len() as u32,
                    marks: q.s_marks,
                    drops: q.s_drops,
                };
                q.s_marks = 0;
                q.s_drops = 0;
                match self.obs.queue_stream.as_mut() {
                    Some(w) => {
                        write_queue_row(w, &row, &self.rec.meta.node_names).ok();
                    }
                    None => self.rec.queues.push(row),
                }
            }
        }
        let i = self.obs.sample_interval.unwrap();
        if now + i <= self.obs.sample_until {
            self.push(now + i, Ev::Sample);
        }
    }

    #[cold]
    pub(crate) fn sample_links(&mut self) {
        let now = self.now();
        let interval = self.obs.link_interval.unwrap();
        let primed = std::mem::replace(&mut self.obs.link_primed, true);
        for &p in &self.obs.sample_ports {
            let port = &mut self.net.ports[p as usize];
            let tx = port.tx_bytes - port.tx_bytes_link_sample;
            port.tx_bytes_link_sample = port.tx_bytes;
            if !primed {
                continue;
            }
            let util = tx as f64 * 8.0 * SEC as f64 / (port.rate as f64 * interval as f64);
            self.rec.links.push(LinkRow { time: now, node: port.node, port: port.local, tx_bytes: tx, utilization: util });
        }
        if now + interval <= self.obs.sample_until {
            self.push(now + interval, Ev::LinkSample);
        }
    }

    #[cold]
    pub(crate) fn sample_traces(&mut self) {
        let now = self.now();
        for i in 0..self.obs.trace_flows.len() {
            let f = self.obs.trace_flows[i];
            let Some(&sid) = self.hosts.flow_slot.get(f as usize) else { continue };
            if sid == u32::MAX {
                continue;
            }
            let t = self.hosts.slots[sid as usize].conn.trace();
            self.rec.flow_trace.push(TraceRow {
                time: now,
                flow_id: f,
                cwnd_bytes: t.cwnd_bytes,
                rate_bps: t.rate_bps,
                alpha: t.alpha,
                srtt: t.srtt,
                delivered_bytes: t.delivered_bytes,
            });
        }
        self.push(now + self.obs.trace_interval, Ev::Trace);
    }

    /// The `ports` table: every port's totals, pauses still in force counted up to now.
    fn record_ports(&mut self) {
        let now = self.now();
        let credit = self.net.credit.is_some();
        for port in &self.net.ports {
            let mut paused: u64 = port.queues.iter().map(|q| q.count.paused_ps).sum();
            for prio in 0..8 {
                if port.paused & (1 << prio) != 0 {
                    paused += now - port.fc().paused_since[prio];
                }
            }
            self.rec.ports.push(crate::records::PortRow {
                node: port.node,
                port: port.local,
                tx_bytes: port.tx_bytes,
                ce_marks: port.queues.iter().map(|q| q.count.marks).sum(),
                ue_marks: port.queues.iter().map(|q| q.count.ue_marks).sum(),
                drops: port.queues.iter().map(|q| q.count.drops).sum(),
                // With credits a port stops only for lack of them (no PFC): its stopped time is a credit stall.
                paused: if credit { 0 } else { paused },
                pause_frames_sent: port.fc().frames_sent,
                pause_frames_received: port.fc().frames_received,
                credit_stall: if credit { paused } else { 0 },
            });
        }
    }

    /// The `port_states` table: every TCD queue's state changes, in time order.
    fn record_port_states(&mut self) {
        for port in self.net.ports.iter_mut() {
            for (qi, q) in port.queues.iter_mut().enumerate() {
                if let crate::aqm::Aqm::Tcd(t) = &mut q.aqm {
                    for (time, state) in t.log.drain(..) {
                        self.rec.port_states.push(crate::records::PortStateRow { time, node: port.node, port: port.local, queue: qi as u32, state });
                    }
                }
            }
        }
        self.rec.port_states.sort_by_key(|r| r.time);
    }

    /// Close the run: fill counters of unfinished flows, rows of flows that never started, conservation,
    /// metadata.
    pub fn finish(mut self, wall_s: f64, cpu_s: f64) -> Records {
        let done = crate::engine::Model::done(&self);
        self.record_open_losses();
        let mut in_flight = (0u64, 0u64);
        let mut count = |id: u32| {
            in_flight.0 += 1;
            in_flight.1 += self.arena.get(id).size as u64;
        };
        for port in &self.net.ports {
            for q in &port.queues {
                q.fifo.iter(&self.arena).for_each(&mut count);
            }
            if let crate::net::port::Sched::FlowRr(rr) = &port.sched {
                rr.iter().for_each(&mut count);
            }
            port.pipe.iter(&self.arena).for_each(&mut count);
            port.fc().ctl.iter().for_each(|&id| count(id));
        }
        // Packets a vSwitch holds are in flight.
        for h in &self.hosts.hosts {
            if let Some(vs) = &h.vswitch {
                use crate::host::vswitch::Shim;
                vs.held().into_iter().for_each(&mut count);
            }
        }
        if let Some(rx) = &self.hosts.rx {
            rx.hosts.iter().flat_map(|r| r.fifo.iter()).for_each(|&id| count(id));
        }
        // Packets held by the extra NIC delay are in flight too.
        for e in self.eng.pending().map(|(_, e)| e).chain(self.halted.iter()) {
            if let Ev::Release(id) = *e {
                count(id);
            }
        }
        if let Some(n) = self.obs.busiest {
            let ports = &self.net.ports;
            let mut tx: Vec<(u64, u32, u32)> = self
                .obs
                .sample_ports
                .iter()
                .map(|&p| (ports[p as usize].tx_bytes, ports[p as usize].node, ports[p as usize].local))
                .collect();
            tx.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            let keep: Vec<(u32, u32)> = tx.iter().take(n).map(|&(_, a, b)| (a, b)).collect();
            self.rec.queues.retain(|r| keep.contains(&(r.node, r.port)));
            self.rec.links.retain(|r| keep.contains(&(r.node, r.port)));
        }
        if let Some(w) = self.obs.queue_stream.as_mut() {
            w.flush().ok();
        }
        self.record_unstarted();
        self.rec.jobs = std::mem::take(&mut self.work.jobs);
        self.record_ports();
        self.record_port_states();
        self.end_controllers();
        let acdc = self.hosts.hosts.iter().filter_map(|h| h.vswitch.as_ref()?.acdc_stats());
        let acdc = acdc.fold(None, |sum: Option<crate::host::vswitch::acdc::Stats>, s| {
            let mut t = sum.unwrap_or_default();
            t += s;
            Some(t)
        });
        let m = &mut self.rec.meta;
        m.acdc = acdc;
        m.conservation.in_flight_packets = in_flight.0;
        m.conservation.in_flight_bytes = in_flight.1;
        m.name = self.name.clone();
        m.seed = self.seed;
        m.config_hash = self.config_hash.clone();
        m.version = env!("CARGO_PKG_VERSION").to_string();
        m.records_version = crate::records::RECORDS_VERSION;
        m.events = self.eng.events;
        m.packet_hops = self.packet_hops;
        m.wall_s = wall_s;
        m.cpu_s = cpu_s;
        m.sim_time_us = self.eng.now() as f64 / 1e6;
        m.flows_total = self.rec.flows.len() as u64;
        m.flows_finished = self.rec.flows.iter().filter(|f| f.finish.is_some()).count() as u64;
        m.peak_rss_bytes = peak_rss_bytes();
        m.warmup_us = self.warmup as f64 / 1e6;
        m.marks = self.net.ports.iter().flat_map(|p| p.queues.iter()).map(|q| q.count.marks).sum();
        m.interrupted = self.interrupted;
        m.failure = self.failure.as_ref().map(|f| f.1.clone());
        if let Some((t, _)) = self.failure {
            m.sim_time_us = t as f64 / 1e6;
        }
        m.stop_reason = if self.failure.is_some() {
            "failed".into()
        } else if self.interrupted {
            "interrupted".into()
        } else if done {
            "all_flows_done".into()
        } else {
            "time".into()
        };
        let tags = &self.obs.tags.0;
        m.tags = if tags.is_empty() { vec![String::new()] } else { tags.clone() };
        self.rec
    }
}
