//! dcnlab-sim: the Rust core of dcnlab, a packet-level simulator for datacenter congestion control.
//!
//! A scenario (TOML, see [`config::Scenario`]) is built into a [`Sim`] and run to [`records::Records`].
//! Time is integer picoseconds; packets live in an arena; dispatch is by enums; every run is deterministic
//! for a given scenario and seed. The folders are the model: `engine/` (time, events, the loop), `net/`
//! (links, ports, switches), `host/` (hosts, NIC, vSwitch slot), `transport/` (TCP and its congestion
//! controls), `aqm/`, `control/` (controllers), `workload/`, `records/`, `config/`; `sim/` composes them.

pub mod aqm;
pub mod config;
pub mod control;
pub mod engine;
pub mod host;
pub mod idvec;
pub mod net;
pub mod records;
pub mod rng;
pub mod sim;
pub mod transport;
pub mod units;
pub mod workload;

pub use config::{ConfigError, Scenario};
pub use records::Records;
pub use sim::Sim;

/// Parse, validate, build and run a scenario given as TOML text.
pub fn run_toml(text: &str) -> Result<Records, ConfigError> {
    Ok(Sim::from_toml(text)?.run())
}
