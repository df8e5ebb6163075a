//! Test scaffolding: a five-switch ring for the unit tests of PFC frames (`lossless.rs`) and deadlock
//! detection (`deadlock.rs`), which set pauses and queue contents by hand.

use crate::sim::Sim;
use crate::units::US;

/// The time the ring has run idle to when a test gets it.
pub(crate) const NOW: u64 = 1_000 * US;

/// Five switches in a ring, a host on each, PFC on priority 0 with a 500 µs deadlock timeout, no
/// traffic, run idle to 1 ms: the tests set pauses and queue contents by hand.
pub(crate) fn ring() -> Sim {
    ring_with("pfc = { priorities = [0], deadlock_timeout = \"500us\" }")
}

/// `ring` with other `switch` keys.
pub(crate) fn ring_with(switch: &str) -> Sim {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("dcnlab-deadlock-ring-{}-{k}.toml", std::process::id()));
    let mut links = vec![];
    for i in 0..5 {
        links.push(format!("{{ a = \"h{i}\", b = \"s{i}\", rate = \"10Gbps\", delay = \"1us\" }}"));
        links.push(format!("{{ a = \"s{i}\", b = \"s{}\", rate = \"10Gbps\", delay = \"1us\" }}", (i + 1) % 5));
    }
    std::fs::write(&path, format!("hosts = 5\nswitches = 5\nlinks = [\n{}\n]\n", links.join(",\n"))).unwrap();
    let text = format!(
        "stop = {{ time = \"10ms\" }}\n[topology]\nkind = \"file\"\npath = \"{}\"\n[switch]\nbuffer = \"1MB\"\n{switch}\n\
         [host]\ntransport = {{ kind = \"tcp\", cc = \"reno\" }}\n",
        path.display()
    );
    let mut s = Sim::from_toml(&text).unwrap();
    std::fs::remove_file(&path).ok();
    s.run_until(NOW);
    assert_eq!(s.now(), NOW);
    s
}

/// The global number of `node`'s port toward `peer`.
pub(crate) fn port(s: &Sim, node: &str, peer: &str) -> u32 {
    s.net.port_of(&s.rec.meta.node_names, node, s.port_to(node, peer).unwrap()).unwrap()
}

/// The clockwise ring port of `s{i}` and the local numbers, at its switch, of the ports that lead in
/// from the host and from the switch before it.
pub(crate) fn clockwise(s: &Sim, i: u32) -> (u32, u16, u16) {
    let (me, prev) = (format!("s{i}"), format!("s{}", (i + 4) % 5));
    (port(s, &me, &format!("s{}", (i + 1) % 5)), s.port_to(&me, &format!("h{i}")).unwrap() as u16, s.port_to(&me, &prev).unwrap() as u16)
}
