//! `dcnlab-bench`: runs the fixed benchmark scenarios on the Rust core, each in its own process (so peak
//! RSS is that scenario's), and asserts the speed and memory floors on benchmark 1. Two modes:
//!
//! - `dcnlab-bench [--out FILE] [--baseline FILE] [SCENARIO.toml ...]`: this build alone, once per
//!   scenario; prints events and packet-hops per CPU-second, wall time and peak memory, writes them as
//!   JSON and compares them with a JSON written earlier (by another commit, on another day: a rough guide).
//! - `dcnlab-bench --against OTHER_DCNLAB_BENCH [--base-name NAME] [--runs N] [--out FILE] [SCENARIO ...]`:
//!   this build side by side with another (`make bench` builds a baseline commit's with
//!   `bench/build_base.sh`), N runs of each interleaved, both processes alternating which goes first;
//!   prints per scenario the median packet-hops per CPU-second of each, their ratio and each one's peak
//!   RSS and peak data (anonymous memory, sampled: `run_one`), and writes them as JSON (default
//!   `bench-results/ab.json`). It asks the other build only for
//!   `--one SCENARIO`, which every dcnlab-bench since 0fb7fca answers with the same JSON.
//!
//! `--one SCENARIO` runs one scenario in this process and prints its JSON line.

use dcnlab_sim::{Scenario, Sim};
use serde_json::{json, Value};
use std::process::{Command, ExitCode, Stdio};

const DEFAULT: &[&str] = &[
    "bench/fattree_k8_websearch.toml",
    "bench/leaf_spine_128_websearch60.toml",
    "bench/incast_16to1.toml",
    "bench/sync_start_dumbbell.toml",
    "bench/fattree_k8_dcqcn_pfc.toml",
    "bench/leaf_spine_288_acc.toml",
];

/// Floors asserted on benchmark 1 (the side-by-side flow set) on any machine: packet-hops per
/// CPU-second and peak RSS. Speed against htsim or another commit is measured side by side, never from
/// a constant: see `data/bench/README.md` and `bench/README.md` for the dated figures.
const GOAL_HOPS_PER_CPU_S: f64 = 4.0e6;
const GOAL_PEAK_RSS: u64 = 100_000_000;
/// What `data/bench/README.md` records of htsim on this flow set, measured side by side (cited, not
/// measured here).
const HTSIM_CITED: &str = "htsim did 1.27–1.49 M packet-hops per CPU-second on these flows, interleaved with dcnlab 0fb7fca's \
                           5.37–6.15 M on one machine (2026-11-22, data/bench/README.md)";

const USAGE: &str = "usage: dcnlab-bench [--out FILE] [--baseline FILE] [SCENARIO.toml ...]\n       \
                     dcnlab-bench --against OTHER_DCNLAB_BENCH [--base-name NAME] [--runs N] [--out FILE] [SCENARIO.toml ...]\n       \
                     dcnlab-bench --one SCENARIO.toml";

fn one(path: &str) -> ExitCode {
    let sc = match Scenario::from_file(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let sim = match Sim::new(&sc) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let r = sim.run();
    let m = &r.meta;
    if !m.conservation.holds() {
        eprintln!("error: conservation violated: {:?}", m.conservation);
        return ExitCode::from(1);
    }
    let v = json!({
        "scenario": path,
        "name": m.name,
        "sim_time_s": m.sim_time_us / 1e6,
        "flows": m.flows_total,
        "flows_finished": m.flows_finished,
        "events": m.events,
        "packet_hops": m.packet_hops,
        "cpu_s": m.cpu_s,
        "wall_s": m.wall_s,
        "events_per_cpu_s": m.events as f64 / m.cpu_s.max(1e-9),
        "hops_per_cpu_s": m.packet_hops as f64 / m.cpu_s.max(1e-9),
        "peak_rss_bytes": m.peak_rss_bytes,
    });
    println!("{v}");
    ExitCode::SUCCESS
}

/// `exe --one path` in its own process: its JSON, or what it said on failing. Where the machine tells
/// (`/proc/PID/smaps_rollup`, Linux), `peak_data_bytes` is added: the most anonymous memory the process
/// held — its heap, stacks and other private pages, what a run allocates — sampled every 20 ms. Peak RSS
/// also counts the mapped binary and libraries: the code resident grows with the binary's size and with
/// how its executed code lies in it (`bench/order/README.md`).
fn run_one(exe: &std::path::Path, path: &str) -> Result<Value, String> {
    use std::io::Read;
    let mut child = Command::new(exe)
        .args(["--one", path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    // Read both pipes beside the sampling, so a child that writes much never waits on a full pipe.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                r.read_to_end(&mut buf).ok();
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let rollup = format!("/proc/{}/smaps_rollup", child.id());
    let mut data: Option<u64> = None;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("waiting for {}: {e}", exe.display()))? {
            break s;
        }
        if let Some(b) = anonymous_bytes(&rollup) {
            data = Some(data.unwrap_or(0).max(b));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    if !status.success() {
        return Err(String::from_utf8_lossy(&stderr).trim().to_string());
    }
    let mut v: Value = serde_json::from_slice(&stdout).map_err(|e| format!("{}: not benchmark JSON: {e}", exe.display()))?;
    if let (Some(d), Some(o)) = (data, v.as_object_mut()) {
        o.insert("peak_data_bytes".into(), json!(d));
    }
    Ok(v)
}

/// The `Anonymous:` line of a `smaps_rollup` file, in bytes.
fn anonymous_bytes(rollup: &str) -> Option<u64> {
    let text = std::fs::read_to_string(rollup).ok()?;
    let line = text.lines().find(|l| l.starts_with("Anonymous:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// The size of section `name` in the ELF binary at `path` (64-bit, little-endian), if it has one.
fn section_size(path: &std::path::Path, name: &str) -> Option<u64> {
    let b = std::fs::read(path).ok()?;
    let at = |o: usize, n: usize| -> Option<u64> {
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b.get(o..o + n)?);
        Some(u64::from_le_bytes(v))
    };
    if b.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (shoff, shentsize, shnum, shstrndx) = (at(0x28, 8)? as usize, at(0x3a, 2)? as usize, at(0x3c, 2)?, at(0x3e, 2)? as usize);
    let header = |i: usize| shoff + i * shentsize;
    let names = at(header(shstrndx) + 0x18, 8)? as usize;
    (0..shnum as usize).find_map(|i| {
        let start = names + at(header(i), 4)? as usize;
        let end = start + b.get(start..)?.iter().position(|&c| c == 0)?;
        if &b[start..end] == name.as_bytes() {
            at(header(i) + 0x20, 8)
        } else {
            None
        }
    })
}

/// What a build's code order is: the size of its `.text.hot`, the functions `crates/sim/build.rs` links
/// first. Without it (a build whose symbols `crates/sim/link/hot.ld` does not name) the binary's code is
/// spread, and a run's peak RSS counts nearly all of it.
fn code_order(exe: &std::path::Path) -> String {
    match section_size(exe, ".text.hot") {
        Some(b) => format!("{} KB of hot code linked first", b / 1024),
        None => "no code linked first (no .text.hot)".into(),
    }
}

/// Megabytes of a JSON byte count, `—` where it is missing.
fn mb(v: &Value) -> String {
    v.as_u64().map_or("—".into(), |b| format!("{:.1}", b as f64 / 1e6))
}

fn git_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Today's date (UTC) as YYYY-MM-DD, from the Unix time (civil-from-days, H. Hinnant's algorithm).
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The floors on benchmark 1, given its packet-hops per CPU-second and peak RSS; true when met.
fn goals(hops: f64, rss: u64) -> bool {
    println!(
        "benchmark 1: {:.2} M packet-hops per CPU-second (floor {:.1} M); peak RSS {:.1} MB (goal < {} MB)",
        hops / 1e6,
        GOAL_HOPS_PER_CPU_S / 1e6,
        rss as f64 / 1e6,
        GOAL_PEAK_RSS / 1_000_000
    );
    println!("for comparison (cited, not measured now): {HTSIM_CITED}; compare builds side by side");
    if hops < GOAL_HOPS_PER_CPU_S || rss >= GOAL_PEAK_RSS {
        println!("FAIL: benchmark 1 misses its goal");
        false
    } else {
        println!("PASS: benchmark 1 meets its goal");
        true
    }
}

fn is_bench1(path: &str) -> bool {
    path.ends_with("fattree_k8_websearch.toml") && !path.contains("callgrind")
}

fn write_json(out: &str, doc: &Value) {
    if let Some(dir) = std::path::Path::new(out).parent() {
        std::fs::create_dir_all(dir).ok();
    }
    std::fs::write(out, serde_json::to_string_pretty(doc).unwrap()).expect("write bench JSON");
    println!("wrote {out}");
}

/// This build alone, once per scenario.
fn single(paths: &[String], out: &str, baseline: Option<&str>) -> ExitCode {
    let base: Option<Value> = baseline.and_then(|b| std::fs::read_to_string(b).ok()).and_then(|t| serde_json::from_str(&t).ok());
    let exe = std::env::current_exe().expect("own path");
    let mut results = Vec::new();
    println!(
        "{:<52} {:>9} {:>6} {:>10} {:>11} {:>7} {:>11} {:>11} {:>9} {:>9}",
        "scenario", "sim s", "flows", "events", "pkt-hops", "CPU s", "events/s", "hops/s", "peak MB", "data MB"
    );
    for p in paths {
        let v = match run_one(&exe, p) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{p}: failed\n{e}");
                return ExitCode::from(1);
            }
        };
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let name = v["name"].as_str().unwrap_or(p).chars().take(52).collect::<String>();
        print!(
            "{:<52} {:>9.3} {:>6} {:>9.1}M {:>10.1}M {:>7.2} {:>10.2}M {:>10.2}M {:>9.1} {:>9}",
            name,
            f("sim_time_s"),
            f("flows"),
            f("events") / 1e6,
            f("packet_hops") / 1e6,
            f("cpu_s"),
            f("events_per_cpu_s") / 1e6,
            f("hops_per_cpu_s") / 1e6,
            f("peak_rss_bytes") / 1e6,
            mb(&v["peak_data_bytes"])
        );
        if let Some(b) = base.as_ref().and_then(|b| b["results"].as_array()).and_then(|a| a.iter().find(|x| x["scenario"] == v["scenario"])) {
            let prev = b["hops_per_cpu_s"].as_f64().unwrap_or(f64::NAN);
            print!("   ×{:.2} vs baseline ({})", f("hops_per_cpu_s") / prev, base.as_ref().unwrap()["commit"]);
        }
        println!();
        results.push(v);
    }
    write_json(out, &json!({ "commit": git_commit(), "results": results }));
    println!("this build: {} (bench/order/README.md)", code_order(&exe));
    let mut ok = true;
    if let Some(b1) = results.iter().find(|v| v["scenario"].as_str().is_some_and(is_bench1)) {
        ok = goals(b1["hops_per_cpu_s"].as_f64().unwrap(), b1["peak_rss_bytes"].as_u64().unwrap());
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// One scenario's runs in the side-by-side mode: index 0 the other build, 1 this one.
struct Pair {
    path: String,
    name: String,
    hops_per_cpu_s: [Vec<f64>; 2],
    peak_rss: [u64; 2],
    /// The most anonymous memory seen (`run_one`), where the machine tells.
    peak_data: [Option<u64>; 2],
    packet_hops: [u64; 2],
    /// Why the other build could not run it (then only this build's figures are shown).
    base_error: Option<String>,
}

/// This build against `other`, `runs` interleaved runs of each scenario.
fn against(other: &str, base_name: &str, runs: usize, paths: &[String], out: &str) -> ExitCode {
    let exes = [std::path::PathBuf::from(other), std::env::current_exe().expect("own path")];
    let names = [base_name.to_string(), git_commit()];
    println!(
        "side by side: {} ({other}) against this tree ({}), {runs} interleaved runs per scenario",
        names[0], names[1]
    );
    let mut pairs: Vec<Pair> = paths
        .iter()
        .map(|p| Pair {
            path: p.clone(),
            name: p.clone(),
            hops_per_cpu_s: [Vec::new(), Vec::new()],
            peak_rss: [0; 2],
            peak_data: [None; 2],
            packet_hops: [0; 2],
            base_error: None,
        })
        .collect();
    for r in 0..runs {
        for pair in pairs.iter_mut() {
            // Alternate which build goes first, so neither always runs on the warmer (or busier) machine.
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            let mut line = format!("run {}/{runs} {:<40}", r + 1, pair.path.chars().take(40).collect::<String>());
            for i in order {
                if i == 0 && pair.base_error.is_some() {
                    continue;
                }
                match run_one(&exes[i], &pair.path) {
                    Ok(v) => {
                        let h = v["hops_per_cpu_s"].as_f64().unwrap_or(f64::NAN);
                        pair.hops_per_cpu_s[i].push(h);
                        pair.peak_rss[i] = pair.peak_rss[i].max(v["peak_rss_bytes"].as_u64().unwrap_or(0));
                        if let Some(d) = v["peak_data_bytes"].as_u64() {
                            pair.peak_data[i] = Some(pair.peak_data[i].unwrap_or(0).max(d));
                        }
                        pair.packet_hops[i] = v["packet_hops"].as_u64().unwrap_or(0);
                        if i == 1 {
                            pair.name = v["name"].as_str().unwrap_or(&pair.path).to_string();
                        }
                        line += &format!("  {}: {:.2} M", names[i], h / 1e6);
                    }
                    Err(e) if i == 0 => {
                        println!("{}: {} cannot run it: {e}", pair.path, names[0]);
                        pair.base_error = Some(e);
                    }
                    Err(e) => {
                        eprintln!("{}: failed\n{e}", pair.path);
                        return ExitCode::from(1);
                    }
                }
            }
            println!("{line}");
        }
    }
    println!(
        "\nmedian packet-hops per CPU-second over {runs} interleaved runs; ratio = this tree / {}; peak RSS and peak \
         data (anonymous memory: heap, stacks), MB, the most of any run\n{:<44} {:>12} {:>12} {:>8} {:>10} {:>10} {:>10} {:>10}",
        names[0], "scenario", names[0], names[1], "ratio", "RSS base", "RSS this", "data base", "data this"
    );
    let mut results = Vec::new();
    for p in &pairs {
        let med = [median(&p.hops_per_cpu_s[0]), median(&p.hops_per_cpu_s[1])];
        let ratio = med[1] / med[0];
        let data = p.peak_data.map(|d| mb(&json!(d)));
        if p.base_error.is_some() {
            println!(
                "{:<44} {:>12} {:>11.2}M {:>8} {:>10} {:>10.1} {:>10} {:>10}   ({} cannot run it)",
                p.name.chars().take(44).collect::<String>(),
                "—",
                med[1] / 1e6,
                "—",
                "—",
                p.peak_rss[1] as f64 / 1e6,
                "—",
                data[1],
                names[0]
            );
        } else {
            println!(
                "{:<44} {:>11.2}M {:>11.2}M {:>7.3}× {:>10.1} {:>10.1} {:>10} {:>10}",
                p.name.chars().take(44).collect::<String>(),
                med[0] / 1e6,
                med[1] / 1e6,
                ratio,
                p.peak_rss[0] as f64 / 1e6,
                p.peak_rss[1] as f64 / 1e6,
                data[0],
                data[1]
            );
        }
        if p.base_error.is_none() && p.packet_hops[0] != p.packet_hops[1] {
            println!("  note: the two builds simulate different work here ({} vs {} packet-hops)", p.packet_hops[0], p.packet_hops[1]);
        }
        let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        results.push(json!({
            "scenario": p.path,
            "name": p.name,
            "base_hops_per_cpu_s": p.hops_per_cpu_s[0],
            "hops_per_cpu_s": p.hops_per_cpu_s[1],
            "base_median_hops_per_cpu_s": num(med[0]),
            "median_hops_per_cpu_s": num(med[1]),
            "ratio": num(ratio),
            "base_peak_rss_bytes": p.peak_rss[0],
            "peak_rss_bytes": p.peak_rss[1],
            "base_peak_data_bytes": p.peak_data[0],
            "peak_data_bytes": p.peak_data[1],
            "base_packet_hops": p.packet_hops[0],
            "packet_hops": p.packet_hops[1],
            "base_error": p.base_error,
        }));
    }
    write_json(
        out,
        &json!({ "date": today(), "base": names[0], "base_exe": other, "commit": names[1], "runs": runs, "results": results }),
    );
    println!("{}: {}; {}: {} (bench/order/README.md)", names[0], code_order(&exes[0]), names[1], code_order(&exes[1]));
    let mut ok = true;
    if let Some(b1) = pairs.iter().find(|p| is_bench1(&p.path)) {
        ok = goals(median(&b1.hops_per_cpu_s[1]), b1.peak_rss[1]);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 2 && args[0] == "--one" {
        return one(&args[1]);
    }
    let mut out: Option<String> = None;
    let mut baseline: Option<String> = None;
    let mut other: Option<String> = None;
    let mut base_name: Option<String> = None;
    let mut runs = 5usize;
    let mut paths = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let next = args.get(i + 1).cloned();
        match (args[i].as_str(), next) {
            ("--out", Some(v)) => out = Some(v),
            ("--baseline", Some(v)) => baseline = Some(v),
            ("--against", Some(v)) => other = Some(v),
            ("--base-name", Some(v)) => base_name = Some(v),
            ("--runs", Some(v)) => match v.parse::<usize>() {
                Ok(n) if n > 0 => runs = n,
                _ => {
                    eprintln!("error: --runs takes a whole number of runs, at least 1 (got {v:?})");
                    return ExitCode::from(2);
                }
            },
            (a, _) if a.starts_with('-') => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
            (a, _) => {
                paths.push(a.to_string());
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    if paths.is_empty() {
        paths = DEFAULT.iter().map(|s| s.to_string()).collect();
    }
    match other {
        Some(o) => {
            let name = base_name.unwrap_or_else(|| o.clone());
            against(&o, &name, runs, &paths, out.as_deref().unwrap_or("bench-results/ab.json"))
        }
        None => single(&paths, out.as_deref().unwrap_or("bench-results/bench.json"), baseline.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use super::{anonymous_bytes, section_size};

    /// A binary's sections are found by name: this test binary has a `.text` (and no `.text.none`); a
    /// file that is not ELF has none.
    #[test]
    fn a_section_size_is_read_from_the_binary() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let text = section_size(&exe, ".text").expect("a .text");
        assert!(text > 100_000 && text < std::fs::metadata(&exe).unwrap().len(), "{text}");
        assert_eq!(section_size(&exe, ".text.none"), None);
        assert_eq!(section_size(std::path::Path::new("Cargo.toml"), ".text"), None);
    }

    /// Peak data is read from the `Anonymous:` line (kB), not from `Rss:` or `Anonymous` lines of
    /// other kinds.
    #[test]
    fn peak_data_reads_the_anonymous_line() {
        let dir = std::env::temp_dir().join(format!("dcnlab-bench-rollup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("smaps_rollup");
        let text = "55d0-7ffd ---p 00000000 00:00 0  [rollup]\nRss:                6800 kB\nPss_Anon:            900 kB\n\
                    Anonymous:          2524 kB\nAnonHugePages:         0 kB\n";
        std::fs::write(&f, text).unwrap();
        assert_eq!(anonymous_bytes(f.to_str().unwrap()), Some(2524 * 1024));
        std::fs::write(&f, "Rss: 6800 kB\n").unwrap();
        assert_eq!(anonymous_bytes(f.to_str().unwrap()), None);
        assert_eq!(anonymous_bytes(dir.join("missing").to_str().unwrap()), None);
        std::fs::remove_dir_all(&dir).ok();
        if cfg!(target_os = "linux") {
            assert!(anonymous_bytes("/proc/self/smaps_rollup").is_some_and(|b| b > 0));
        }
    }
}
