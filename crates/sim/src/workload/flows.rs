//! An inline list of flows, each with its own endpoints, size, start, tag and priority: for tests and small
//! experiments that name every flow (a victim flow beside an incast, as in TCD's tests, `workloads.md`
//! §9.1).

use super::{Carrier, NewFlow, Source};
use crate::config::kind::ConfigError;
use crate::units::{Bytes, Dur};
use serde::Deserialize;

/// `{ kind = "flows", list = [{ src, dst, size, start, tag, priority, stop }, …] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub list: Vec<FlowSpec>,
}

/// One flow of the list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: Bytes,
    #[serde(default = "super::zero_time")]
    pub start: Dur,
    pub tag: Option<String>,
    /// Traffic class: the queue index at every port.
    #[serde(default)]
    pub priority: u8,
    /// The application stops writing at this time: the flow ends with what it has sent by then
    /// (AC/DC's convergence test removes long-lived flows this way).
    pub stop: Option<Dur>,
}

impl super::Kind for Cfg {
    fn validate(&self, field: &str) -> Result<(), ConfigError> {
        for (j, fl) in self.list.iter().enumerate() {
            super::check_size(&fl.size, &format!("{field}.list[{j}].size"))?;
        }
        Ok(())
    }

    fn flow_count(&self, _n_hosts: u64) -> Option<u64> {
        Some(self.list.len() as u64)
    }

    /// The flows in start order (a stable sort: equal starts keep the list's order).
    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (hosts, mtu, tags) = (b.hosts, b.mtu, &mut *b.tags);
        let mut flows = Vec::with_capacity(self.list.len());
        for (j, fl) in self.list.iter().enumerate() {
            let f = |k: &str| format!("{field}.list[{j}].{k}");
            hosts.check(fl.src, &f("src"))?;
            hosts.check(fl.dst, &f("dst"))?;
            if fl.src == fl.dst {
                return Err(ConfigError::new(f("dst"), "src and dst must differ"));
            }
            if fl.stop.is_some_and(|s| s.0 <= fl.start.0) {
                return Err(ConfigError::new(f("stop"), "must be after the flow's start"));
            }
            flows.push(NewFlow {
                src: fl.src,
                dst: fl.dst,
                size: fl.size.0.bytes(mtu),
                start: fl.start.0,
                tag: tags.id(&fl.tag),
                prio: fl.priority,
                transport: 0,
                entry: 0,
                extra_delay: None,
                stop: fl.stop.map(|s| s.0),
                worker: 0,
                carrier: Carrier::Own,
            });
        }
        flows.sort_by_key(|f| f.start);
        Ok(Source::List { flows, next: 0 })
    }
}
