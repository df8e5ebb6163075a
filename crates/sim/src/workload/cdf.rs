//! Flow-size distributions: the built-in tables of `data/cdf/` and CDF files, sampled by inverse
//! transform with linear interpolation inside each segment and averaged by the trapezoid rule — what both
//! reference generators do (HPCC `traffic_gen/custom_rand.py`, ECN♯ `rtt-variations/cdf.c`;
//! `workloads.md` §1), so that a load set here means what it means in the papers.

use crate::config::kind::ConfigError;
use crate::rng::{self, Rng};

/// A flow-size distribution: points (size, F) with linear interpolation (`workloads.md` §1).
#[derive(Debug, Clone)]
pub struct Cdf {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// The tables shipped in `data/cdf/` (each file names its source), by the names of `conventions.md`; any
/// other `sizes` string is a file path.
pub const BUILTIN_CDFS: &[(&str, &str)] = &[
    ("web_search", include_str!("../../../../data/cdf/web_search.txt")),
    ("data_mining", include_str!("../../../../data/cdf/data_mining.txt")),
    ("hadoop", include_str!("../../../../data/cdf/hadoop.txt")),
    ("storage", include_str!("../../../../data/cdf/storage.txt")),
    ("google_rpc", include_str!("../../../../data/cdf/google_rpc.txt")),
];

impl Cdf {
    /// Parse `x F` lines (`#` comments). F in [0, 1] or in percent (detected by a last value of 100).
    pub fn parse(name: &str, text: &str) -> Result<Cdf, String> {
        let mut pts = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.split('#').next().unwrap().trim();
            if l.is_empty() {
                continue;
            }
            let mut it = l.split(|c: char| c.is_whitespace() || c == ',').filter(|s| !s.is_empty());
            let (a, b) = (it.next(), it.next());
            let (Some(a), Some(b)) = (a, b) else {
                return Err(format!("line {}: expected two columns `size cumulative_probability`", i + 1));
            };
            let x: f64 = a.parse().map_err(|_| format!("line {}: `{a}` is not a number", i + 1))?;
            let f: f64 = b.parse().map_err(|_| format!("line {}: `{b}` is not a number", i + 1))?;
            if !x.is_finite() || !f.is_finite() || x < 0.0 || f < 0.0 {
                return Err(format!("line {}: values must be finite and ≥ 0", i + 1));
            }
            pts.push((x, f));
        }
        if pts.len() < 2 {
            return Err("a CDF needs at least two points".into());
        }
        let last = pts.last().unwrap().1;
        let scale = if (last - 100.0).abs() < 1e-6 {
            100.0
        } else if (last - 1.0).abs() < 1e-9 {
            1.0
        } else {
            return Err(format!("the last cumulative probability must be 1 (or 100 in percent), got {last}"));
        };
        for p in pts.iter_mut() {
            p.1 /= scale;
        }
        for w in pts.windows(2) {
            if w[1].0 < w[0].0 || w[1].1 < w[0].1 {
                return Err(format!(
                    "not monotone: ({}, {}) follows ({}, {}); sizes and probabilities must not decrease",
                    w[1].0, w[1].1, w[0].0, w[0].1
                ));
            }
        }
        Ok(Cdf { name: name.into(), points: pts })
    }

    /// A built-in name or a file path.
    pub fn load(spec: &str, field: &str) -> Result<Cdf, ConfigError> {
        if let Some((_, text)) = BUILTIN_CDFS.iter().find(|(n, _)| *n == spec) {
            return Cdf::parse(spec, text).map_err(|e| ConfigError::new(field, e));
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            let names: Vec<&str> = BUILTIN_CDFS.iter().map(|(n, _)| *n).collect();
            ConfigError::new(
                field,
                format!("`{spec}` is neither a built-in CDF ({}) nor a readable file: {e}", names.join(", ")),
            )
        })?;
        Cdf::parse(spec, &text).map_err(|e| ConfigError::new(field, format!("CDF file `{spec}`: {e}")))
    }

    /// Mean by the trapezoid rule, as the reference generators compute it.
    pub fn mean(&self) -> f64 {
        self.points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum()
    }

    /// Inverse-transform sample with linear interpolation; at least 1 byte.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let f0 = self.points[0].1;
        let u = f0 + rng::unit(rng) * (1.0 - f0);
        let i = self.points[1..].iter().position(|p| u <= p.1).map(|i| i + 1).unwrap_or(self.points.len() - 1);
        let (x0, f0) = self.points[i - 1];
        let (x1, f1) = self.points[i];
        let x = if f1 > f0 { x0 + (x1 - x0) * (u - f0) / (f1 - f0) } else { x1 };
        (x as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn builtin_means() {
        let ws = Cdf::load("web_search", "x").unwrap();
        assert!((ws.mean() - 1_711_250.0).abs() < 1.0, "{}", ws.mean());
        let dm = Cdf::load("data_mining", "x").unwrap();
        assert!((dm.mean() - 12_658_199.0).abs() / 12_658_199.0 < 0.001, "{}", dm.mean());
        let h = Cdf::load("hadoop", "x").unwrap();
        assert!((h.mean() - 120_421.0).abs() / 120_421.0 < 0.001, "{}", h.mean());
        for (n, _) in BUILTIN_CDFS {
            Cdf::load(n, "x").unwrap();
        }
    }
    #[test]
    fn sample_mean_matches() {
        let ws = Cdf::load("web_search", "x").unwrap();
        let mut r = rng::stream(1, "t", 0);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| ws.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((m / ws.mean() - 1.0).abs() < 0.02, "{m}");
    }
    #[test]
    fn rejects_non_monotone() {
        assert!(Cdf::parse("x", "0 0\n10 0.5\n5 0.7\n20 1").unwrap_err().contains("monotone"));
        assert!(Cdf::parse("x", "0 0\n10 0.5\n20 0.4\n30 1").unwrap_err().contains("monotone"));
        assert!(Cdf::parse("x", "0 0\n10 0.5").is_err());
    }
}
