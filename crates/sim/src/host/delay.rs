//! Extra delay at a host's NIC: how the papers make RTT variation (netem). One draw per host or per flow,
//! never per packet, so a flow's packets keep their order.

use crate::config::{tagged_enum, ConfigError};
use crate::rng::{self, Rng};
use crate::units::{Dur, Time};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelayPer {
    #[default]
    Host,
    Flow,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AppliesTo {
    /// Every packet the flow's sender sends: its data segments and its SYN.
    #[default]
    Data,
    /// Both directions: the sender's packets, and the receiver's ACKs (its SYN-ACK too).
    All,
    /// The sender's data segments only, not its SYN: what the ECN♯ authors' ns-3 delay element does (a
    /// flow's class is a tag on the application's data, so the handshake passes untagged).
    Payload,
}

tagged_enum! {
    /// Extra delay at the sending host's NIC, drawn once per host or once per flow.
    #[derive(Debug, Clone)]
    pub enum DelayCfg {
        Constant = "constant" {
            value: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        Uniform = "uniform" {
            min: Dur,
            max: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        /// Lognormal with the given median and sigma (of the underlying normal), clamped to [min, max].
        Lognormal = "lognormal" {
            median: Dur,
            sigma: f64,
            min: Dur,
            max: Dur,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        Choice = "choice" {
            values: Vec<Dur>,
            weights: Option<Vec<f64>>,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
        /// A CDF file: `delay_us cumulative_probability` per line.
        Cdf = "cdf" {
            path: String,
            #[serde(default)]
            per: DelayPer,
            #[serde(default)]
            applies_to: AppliesTo,
        },
    }
}

impl DelayCfg {
    pub fn per(&self) -> DelayPer {
        match self {
            DelayCfg::Constant { per, .. }
            | DelayCfg::Uniform { per, .. }
            | DelayCfg::Lognormal { per, .. }
            | DelayCfg::Choice { per, .. }
            | DelayCfg::Cdf { per, .. } => *per,
        }
    }
    pub fn applies_to(&self) -> AppliesTo {
        match self {
            DelayCfg::Constant { applies_to, .. }
            | DelayCfg::Uniform { applies_to, .. }
            | DelayCfg::Lognormal { applies_to, .. }
            | DelayCfg::Choice { applies_to, .. }
            | DelayCfg::Cdf { applies_to, .. } => *applies_to,
        }
    }
}

pub fn validate(d: &DelayCfg) -> Result<(), ConfigError> {
    match d {
        DelayCfg::Uniform { min, max, .. } if max.0 < min.0 => {
            Err(ConfigError::new("host.extra_delay.max", "max must be ≥ min"))
        }
        DelayCfg::Lognormal { min, max, sigma, median, .. } => {
            if max.0 < min.0 {
                return Err(ConfigError::new("host.extra_delay.max", "max must be ≥ min"));
            }
            if !(*sigma >= 0.0 && sigma.is_finite()) {
                return Err(ConfigError::new("host.extra_delay.sigma", "must be ≥ 0"));
            }
            if median.0 == 0 {
                return Err(ConfigError::new("host.extra_delay.median", "must be greater than zero"));
            }
            Ok(())
        }
        DelayCfg::Choice { values, weights, .. } => {
            if values.is_empty() {
                return Err(ConfigError::new("host.extra_delay.values", "give at least one value"));
            }
            if let Some(w) = weights {
                if w.len() != values.len() || w.iter().any(|x| !(*x >= 0.0)) || w.iter().sum::<f64>() <= 0.0 {
                    return Err(ConfigError::new(
                        "host.extra_delay.weights",
                        "one non-negative weight per value, not all zero",
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Draws extra host delays.
pub struct DelaySampler {
    kind: DelayKind,
}

enum DelayKind {
    Constant(Time),
    Uniform(Time, Time),
    Lognormal { median: f64, sigma: f64, min: Time, max: Time },
    Choice(Vec<Time>, Vec<f64>),
    Cdf(Vec<(f64, f64)>),
}

impl DelaySampler {
    pub fn new(cfg: &DelayCfg) -> Result<DelaySampler, ConfigError> {
        let kind = match cfg {
            DelayCfg::Constant { value, .. } => DelayKind::Constant(value.0),
            DelayCfg::Uniform { min, max, .. } => DelayKind::Uniform(min.0, max.0),
            DelayCfg::Lognormal { median, sigma, min, max, .. } => {
                DelayKind::Lognormal { median: median.0 as f64, sigma: *sigma, min: min.0, max: max.0 }
            }
            DelayCfg::Choice { values, weights, .. } => {
                let w = weights.clone().unwrap_or_else(|| vec![1.0; values.len()]);
                let total: f64 = w.iter().sum();
                let mut acc = 0.0;
                let cum = w.iter().map(|x| {
                    acc += x / total;
                    acc
                });
                DelayKind::Choice(values.iter().map(|v| v.0).collect(), cum.collect())
            }
            DelayCfg::Cdf { path, .. } => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError::new("host.extra_delay.path", format!("cannot read delay CDF `{path}`: {e}"))
                })?;
                let cdf = crate::workload::Cdf::parse(path, &text)
                    .map_err(|e| ConfigError::new("host.extra_delay.path", format!("delay CDF `{path}`: {e}")))?;
                // Values are microseconds; the largest must be a time the clock can hold.
                let max_us = cdf.points.iter().map(|p| p.0).fold(0.0, f64::max);
                if !(max_us * 1e6 <= crate::units::MAX_TIME as f64) {
                    let msg = format!("delay CDF `{path}`: its largest delay, {max_us} µs, is past the clock's 2^62 ps (53 days)");
                    return Err(ConfigError::new("host.extra_delay.path", msg));
                }
                DelayKind::Cdf(cdf.points)
            }
        };
        Ok(DelaySampler { kind })
    }

    pub fn draw(&self, r: &mut Rng) -> Time {
        use rand::Rng as _;
        match &self.kind {
            DelayKind::Constant(v) => *v,
            DelayKind::Uniform(a, b) => {
                if a == b {
                    *a
                } else {
                    r.gen_range(*a..=*b)
                }
            }
            DelayKind::Lognormal { median, sigma, min, max } => {
                // Box–Muller with libm so draws match across machines.
                let u1 = 1.0 - rng::unit(r);
                let u2 = rng::unit(r);
                let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2);
                let v = median * libm::exp(sigma * z);
                (v.max(0.0) as Time).clamp(*min, *max)
            }
            DelayKind::Choice(v, cum) => {
                let u = rng::unit(r);
                let i = cum.iter().position(|&c| u < c).unwrap_or(v.len() - 1);
                v[i]
            }
            DelayKind::Cdf(points) => {
                // Values in microseconds, linear interpolation.
                let u = rng::unit(r);
                let i = points[1..].iter().position(|p| u <= p.1).map(|i| i + 1).unwrap_or(points.len() - 1);
                let (x0, f0) = points[i - 1];
                let (x1, f1) = points[i];
                let x = if f1 > f0 { x0 + (x1 - x0) * (u - f0) / (f1 - f0) } else { x1 };
                (x * 1e6) as Time
            }
        }
    }
}

