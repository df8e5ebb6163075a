//! Drop-tail: no AQM decision; the buffer manager drops what does not fit. `aqm = { kind = "droptail" }`.

use super::{Config, Hooks, NonEct};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail;

impl Hooks for DropTail {
    fn take_params(&mut self, _new: Self) {}
    fn describe(&self) -> String {
        String::new()
    }
}

/// No keys.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cfg {}

impl Config for Cfg {
    type Algo = DropTail;
    fn build(&self, _mtu: u64) -> DropTail {
        DropTail
    }
    fn non_ect(&self) -> NonEct {
        NonEct::Pass
    }
}
