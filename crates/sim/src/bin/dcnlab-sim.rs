//! `dcnlab-sim run SCENARIO.toml [-o DIR] [--force]` / `dcnlab-sim validate SCENARIO.toml [--force]`: the
//! Rust core alone. Both print the memory estimate first and refuse a scenario whose estimate exceeds the
//! machine's available memory unless `--force`. The user-facing CLI is the Python `dcnlab`; this binary
//! is for benchmarks and for Rust-only use.

use dcnlab_sim::sim::estimate::{available_memory, human, Estimate};
use dcnlab_sim::{Scenario, Sim};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: dcnlab-sim run SCENARIO.toml [-o DIR] [--force] | dcnlab-sim validate SCENARIO.toml [--force]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return usage();
    }
    let (cmd, path) = (&args[0], &args[1]);
    let mut out = None;
    let mut force = false;
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "-o" | "--out" if i + 1 < args.len() => {
                out = Some(args[i + 1].clone());
                i += 2;
            }
            "--force" => {
                force = true;
                i += 1;
            }
            other => {
                eprintln!("error: unknown option `{other}`");
                return usage();
            }
        }
    }
    let sc = match Scenario::from_file(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if cmd != "validate" && cmd != "run" {
        return usage();
    }
    let est = match Estimate::count(&sc) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("estimate: {}", est.describe());
    if let Err(e) = est.limits(&sc) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if let Some(avail) = available_memory() {
        if est.bytes > avail && !force {
            eprintln!(
                "error: the scenario needs about {} but {} is available; make it smaller, or pass --force to try anyway",
                human(est.bytes),
                human(avail)
            );
            return ExitCode::from(2);
        }
    }
    match cmd.as_str() {
        "validate" => match Sim::new(&sc).map(|_| ()) {
            Ok(()) => {
                println!("ok: {path}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        "run" => {
            // meta.config_hash identifies the scenario file's text (as the Python front does).
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let sim = match Sim::from_scenario(&sc, &text) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let rec = sim.run();
            let m = &rec.meta;
            println!(
                "{}: {} flows ({} finished), {:.1} us simulated, {} events, {} packet-hops, {:.2} s CPU, {:.2} M hops/CPU-s, peak RSS {:.1} MB",
                m.name,
                m.flows_total,
                m.flows_finished,
                m.sim_time_us,
                m.events,
                m.packet_hops,
                m.cpu_s,
                m.packet_hops as f64 / m.cpu_s.max(1e-9) / 1e6,
                m.peak_rss_bytes as f64 / 1e6
            );
            println!("drops: {:?}; conservation holds: {}", m.drops, m.conservation.holds());
            if let Some(dir) = out {
                if let Err(e) = rec.write_dir(std::path::Path::new(&dir)) {
                    eprintln!("error: cannot write records to `{dir}`: {e}");
                    return ExitCode::from(1);
                }
            }
            if let Some(f) = &m.failure {
                // A lossless drop or a PFC deadlock: the records (if written) end there.
                eprintln!("error: {f}");
                return ExitCode::from(3);
            }
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}
