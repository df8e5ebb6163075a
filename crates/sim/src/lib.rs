//! dcnlab-sim: the Rust core of dcnlab, a packet-level simulator for datacenter congestion control.
//!
//! A scenario (TOML, see [`config::Scenario`]) is built into a [`sim::Sim`] and run to [`records::Records`].
//! Time is integer picoseconds; packets live in an arena; dispatch is by enums; every run is deterministic
//! for a given scenario and seed.

pub mod aqm;
pub mod cc;
pub mod config;
pub mod packet;
pub mod queue;
pub mod records;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod units;
pub mod workload;

pub use config::{ConfigError, Scenario};
pub use records::Records;
pub use sim::Sim;

/// Parse, validate, build and run a scenario given as TOML text.
pub fn run_toml(text: &str) -> Result<Records, ConfigError> {
    Ok(Sim::from_toml(text)?.run())
}
