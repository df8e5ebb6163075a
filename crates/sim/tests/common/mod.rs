//! Helpers the end-to-end tests share: time units, a star scenario, an incast traffic entry, a port's
//! record row and Jain's fairness index. Each test binary uses some of them.
#![allow(dead_code)]

use dcnlab_sim::records::{PortRow, Records};

/// Picoseconds per microsecond and per millisecond.
pub const US: u64 = 1_000_000;
pub const MS: u64 = 1_000 * US;

/// A star of `hosts` hosts on 10 Gb/s, 1 µs links, seed 3: `switch` is the body of `[switch]`,
/// `transport` that of `[host.transport]`, `traffic` whole `[[traffic]]` entries.
pub fn star(hosts: u32, switch: &str, transport: &str, traffic: &str, stop: &str) -> String {
    format!(
        r#"
seed = 3
stop = {stop}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "10Gbps", delay = "1us" }}
[switch]
{switch}
[host.transport]
{transport}
{traffic}
"#
    )
}

/// Hosts 1..=n each send `size` to host 0 at time 0.
pub fn incast(n: u32, size: &str) -> String {
    let senders: Vec<String> = (1..=n).map(|h| h.to_string()).collect();
    format!("[[traffic]]\nkind = \"incast\"\nsenders = [{}]\nreceiver = 0\nsize = \"{size}\"\nat = \"0us\"\n", senders.join(", "))
}

/// The `ports` row of `node`'s port `port`.
pub fn port_row<'a>(r: &'a Records, node: &str, port: u32) -> &'a PortRow {
    let n = r.meta.node_names.iter().position(|x| x == node).unwrap() as u32;
    r.ports.iter().find(|p| p.node == n && p.port == port).unwrap()
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one takes everything.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}
