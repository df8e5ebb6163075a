//! Units at the edges: `"200us"`, `"10Gbps"`, `"9MB"`, `"64KiB"`, `"40pkt"`, `"inf"`.
//!
//! Parsing is exact decimal arithmetic on integers (no floating point), so `"1.5ms"` is exactly
//! 1 500 000 000 ps. A bare number where a unit is required is an error that lists the accepted units.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// Simulation time in integer picoseconds.
pub type Time = u64;
pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const SEC: Time = 1_000_000_000_000;

/// The latest time a scenario may name: 2⁶² ps (about 53 days). The clock is a 64-bit count of
/// picoseconds, and the engine adds a configured time (a delay, an interval, a timeout) to `now`, which
/// never passes the stop time: two such times always add up without overflow.
pub const MAX_TIME: Time = 1 << 62;
/// The largest size a scenario may name: 2⁶⁰ bytes (1 EiB; `"inf"` is an unlimited flow). Sizes get
/// headers added and are turned into bits; this leaves room for both in 64 bits.
pub const MAX_BYTES: u64 = 1 << 60;
/// The largest count of packets a size may name (`"…pkt"`): 10¹², so that × the largest MTU (65 000 B)
/// stays far inside 64 bits.
pub const MAX_PACKETS: u64 = 1_000_000_000_000;

/// Split `"1.5ms"` into ("1.5", "ms").
fn split_number(s: &str) -> (&str, &str) {
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (s[..idx].trim(), s[idx..].trim())
}

/// Exact `number × scale` for a decimal string, or an error text.
fn scaled(num: &str, scale: u128) -> Result<u128, String> {
    if num.is_empty() {
        return Err("missing number".into());
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(format!("`{num}` is not a number"));
    }
    let int_v: u128 = if int.is_empty() { 0 } else { int.parse().map_err(|_| format!("`{num}` is not a number"))? };
    let mut v = int_v.checked_mul(scale).ok_or("value too large")?;
    let mut div = 1u128;
    let mut fv = 0u128;
    for c in frac.chars() {
        div = div.checked_mul(10).ok_or("too many decimals")?;
        fv = fv * 10 + c.to_digit(10).ok_or(format!("`{num}` is not a number"))? as u128;
    }
    if div > 1 {
        let f = fv * scale;
        if f % div != 0 {
            return Err(format!("`{num}` is finer than the resolution of the unit"));
        }
        v += f / div;
    }
    Ok(v)
}

pub fn parse_time(s: &str) -> Result<Time, String> {
    let (num, unit) = split_number(s.trim());
    let scale = match unit {
        "ps" => PS,
        "ns" => NS,
        "us" | "µs" => US,
        "ms" => MS,
        "s" => SEC,
        "" => return Err(format!("`{s}` has no unit; use one of ps, ns, us, ms, s (e.g. \"200us\")")),
        u => return Err(format!("unknown time unit `{u}` in `{s}`; use one of ps, ns, us, ms, s")),
    };
    let v = scaled(num, scale as u128).map_err(|e| format!("bad time `{s}`: {e}"))?;
    if v > MAX_TIME as u128 {
        return Err(format!("time `{s}` is too large: at most {}s (2^62 ps, about 53 days)", MAX_TIME / SEC));
    }
    Ok(v as Time)
}

/// Rate in bits per second.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number(s.trim());
    let scale: u64 = match unit {
        "bps" => 1,
        "Kbps" | "kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        "Tbps" => 1_000_000_000_000,
        "" => return Err(format!("`{s}` has no unit; use one of bps, Kbps, Mbps, Gbps, Tbps (e.g. \"10Gbps\")")),
        u => return Err(format!("unknown rate unit `{u}` in `{s}`; use one of bps, Kbps, Mbps, Gbps, Tbps")),
    };
    let v = scaled(num, scale as u128).map_err(|e| format!("bad rate `{s}`: {e}"))?;
    let v = u64::try_from(v).map_err(|_| format!("rate `{s}` is too large"))?;
    if v == 0 {
        return Err(format!("rate `{s}` must be greater than zero"));
    }
    Ok(v)
}

/// A size as written in a scenario: bytes, MTU-sized packets, or unlimited (`"inf"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Packets(u64),
    Inf,
}

impl Size {
    /// Bytes, with packets converted by the MTU. `Inf` is `u64::MAX`.
    pub fn bytes(self, mtu: u64) -> u64 {
        match self {
            Size::Bytes(b) => b,
            // Within MAX_PACKETS × a valid MTU this never saturates.
            Size::Packets(p) => p.saturating_mul(mtu),
            Size::Inf => u64::MAX,
        }
    }
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    let t = s.trim();
    if t == "inf" {
        return Ok(Size::Inf);
    }
    let (num, unit) = split_number(t);
    let scale: u64 = match unit {
        "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "pkt" | "pkts" => {
            let v = scaled(num, 1).map_err(|e| format!("bad size `{s}`: {e}"))?;
            if v > MAX_PACKETS as u128 {
                return Err(format!("size `{s}` is too large: at most {MAX_PACKETS} packets"));
            }
            return Ok(Size::Packets(v as u64));
        }
        "" => return Err(format!("`{s}` has no unit; use one of B, KB, MB, GB, KiB, MiB, GiB, pkt (e.g. \"100KB\")")),
        u => return Err(format!("unknown size unit `{u}` in `{s}`; use one of B, KB, MB, GB, KiB, MiB, GiB, pkt")),
    };
    let v = scaled(num, scale as u128).map_err(|e| format!("bad size `{s}`: {e}"))?;
    if v > MAX_BYTES as u128 {
        return Err(format!("size `{s}` is too large: at most 1EiB (2^60 bytes); write \"inf\" for an unlimited flow"));
    }
    Ok(Size::Bytes(v as u64))
}

fn bare_number(v: &str, what: &str, hint: String) -> String {
    let hint = hint.split_once("; ").map(|(_, h)| h.to_string()).unwrap_or(hint);
    format!("bare number {v} where {what} with a unit is required; {hint}")
}

macro_rules! string_unit {
    ($name:ident, $inner:ty, $parse:ident, $what:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "{} as a string with a unit", $what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(bare_number(&v.to_string(), $what, $parse("").unwrap_err())))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(bare_number(&v.to_string(), $what, $parse("").unwrap_err())))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_unit!(Dur, Time, parse_time, "a time");
string_unit!(Rate, u64, parse_rate, "a rate");
string_unit!(Bytes, Size, parse_size, "a size");

/// Serialisation time of `bytes` at `rate` bps, rounded down (used for ideal FCTs, which must never exceed
/// the engine's own carried arithmetic).
pub fn tx_time_floor(bytes: u64, rate: u64) -> Time {
    ((bytes as u128 * 8 * SEC as u128) / rate as u128) as Time
}

pub fn fmt_time(t: Time) -> String {
    format!("{:.3}us", t as f64 / US as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_exactly() {
        assert_eq!(parse_time("1.5ms").unwrap(), 1_500_000_000);
        assert_eq!(parse_time("200us").unwrap(), 200 * US);
        assert_eq!(parse_time("500ps").unwrap(), 500);
        assert_eq!(parse_rate("2.5Gbps").unwrap(), 2_500_000_000);
        assert_eq!(parse_size("9MB").unwrap(), Size::Bytes(9_000_000));
        assert_eq!(parse_size("64KiB").unwrap(), Size::Bytes(65536));
        assert_eq!(parse_size("40pkt").unwrap(), Size::Packets(40));
        assert_eq!(parse_size("inf").unwrap(), Size::Inf);
        assert!(parse_time("200").unwrap_err().contains("no unit"));
        assert!(parse_time("200 parsecs").is_err());
        assert!(parse_rate("0Gbps").is_err());
        assert!(parse_size("-5KB").is_err());
        assert!(parse_time("1.0001ps").is_err());
        // The limits: the largest accepted values, and one past them.
        assert_eq!(parse_time("4611686s").unwrap(), 4_611_686 * SEC);
        assert!(parse_time("4611687s").unwrap_err().contains("at most 4611686s"));
        assert!(parse_time("20000000s").unwrap_err().contains("too large"));
        assert_eq!(parse_size("1000000000000pkt").unwrap(), Size::Packets(MAX_PACKETS));
        assert!(parse_size("1000000000001pkt").unwrap_err().contains("at most 1000000000000 packets"));
        assert!(parse_size("99999999999999999999999pkt").unwrap_err().contains("too large"));
        assert_eq!(parse_size("1024GiB").unwrap(), Size::Bytes(1 << 40));
        assert!(parse_size("1152921504606846977B").unwrap_err().contains("1EiB"));
        assert_eq!(Size::Packets(MAX_PACKETS).bytes(65_000), 65_000_000_000_000_000);
    }
    #[test]
    fn tx_time() {
        assert_eq!(tx_time_floor(1500, 10_000_000_000), 1_200_000);
    }
}
