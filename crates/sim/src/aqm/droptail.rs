//! Drop-tail: no AQM decision; the buffer manager drops what does not fit.

#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail;
