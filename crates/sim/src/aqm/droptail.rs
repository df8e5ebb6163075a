//! Drop-tail: no AQM decision; the buffer manager drops what does not fit. `aqm = { kind = "droptail" }`.

use super::{Config, Hooks, NonEct};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail {
    pub params: Params,
}

/// Drop-tail has no parameters (shown as nothing in `controller_steps`).
#[derive(Clone, Copy, Default)]
pub struct Params;

impl std::fmt::Debug for Params {
    fn fmt(&self, _f: &mut std::fmt::Formatter) -> std::fmt::Result {
        Ok(())
    }
}

impl Hooks for DropTail {
    fn acts_at_dequeue(&self) -> bool {
        false
    }
}

/// No keys.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cfg {}

impl Config for Cfg {
    type Algo = DropTail;
    fn build(&self, _mtu: u64) -> DropTail {
        DropTail::default()
    }
    fn non_ect(&self) -> NonEct {
        NonEct::Pass
    }
}
