//! Drop-tail: no AQM decision; the buffer manager drops what does not fit. `aqm = { kind = "droptail" }`.

use super::Hooks;
use serde::Deserialize;

#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail;

impl Hooks for DropTail {}

/// No keys.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cfg {}

impl Cfg {
    pub fn build(&self, _mtu: u64) -> DropTail {
        DropTail
    }
}
