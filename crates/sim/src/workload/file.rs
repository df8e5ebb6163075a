//! Flows read from a file, for replaying a trace or another simulator's workload exactly: dcnlab's CSV
//! (`src,dst,size,start[,tag]`) or HPCC's `flow.txt` (what HPCC `traffic_gen/traffic_gen.py` writes), so
//! that one flow list can drive both simulators.

use super::{NewFlow, Source, Tags};
use crate::config::kind::ConfigError;
use crate::units::{parse_size, parse_time};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowFileFormat {
    #[default]
    Dcnlab,
    Hpcc,
}

/// `{ kind = "file", path, format = "dcnlab"|"hpcc", tag }`; a relative path is taken from the scenario
/// file's folder. `tag` is for flows whose line names none (HPCC's format has no tag column).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cfg {
    pub path: String,
    #[serde(default)]
    pub format: FlowFileFormat,
    pub tag: Option<String>,
}

impl super::Kind for Cfg {
    fn resolve_paths(&mut self, fix: &dyn Fn(&mut String)) {
        fix(&mut self.path);
    }

    /// Every flow of the file in start order; the endpoints must exist and differ.
    fn build(&self, field: &str, b: &mut super::Build) -> Result<Source, ConfigError> {
        let (hosts, tags) = (b.hosts, &mut *b.tags);
        let (path, n) = (&self.path, hosts.n_hosts);
        let at = format!("{field}.path");
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(&at, format!("cannot read flow file `{path}`: {e}")))?;
        let tag = tags.id(&self.tag);
        let mut flows = match self.format {
            FlowFileFormat::Hpcc => parse_hpcc(&text, tag),
            FlowFileFormat::Dcnlab => parse_dcnlab(&text, tag, tags),
        }
        .map_err(|e| ConfigError::new(&at, format!("flow file `{path}`: {e}")))?;
        for (j, fl) in flows.iter().enumerate() {
            if fl.src >= n || fl.dst >= n || fl.src == fl.dst {
                return Err(ConfigError::new(
                    at,
                    format!("flow file `{path}`, flow {j}: endpoints {} → {} do not exist or are equal (hosts 0–{})", fl.src, fl.dst, n - 1),
                ));
            }
        }
        flows.sort_by_key(|f| f.start);
        Ok(Source::List { flows, next: 0 })
    }
}

/// HPCC's flow file: a count line, then `src dst priority_group dst_port size_bytes start_seconds`.
pub fn parse_hpcc(text: &str, tag: u16) -> Result<Vec<NewFlow>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or("empty file")?;
    let count: usize = first.trim().parse().map_err(|_| "first line must be the number of flows".to_string())?;
    let mut flows = Vec::with_capacity(count);
    for (i, l) in lines {
        let c: Vec<&str> = l.split_whitespace().collect();
        if c.len() < 6 {
            return Err(format!("line {}: expected `src dst pg dport size start_s`", i + 1));
        }
        let num = |s: &str| s.parse::<u64>().map_err(|_| format!("line {}: `{s}` is not a whole number", i + 1));
        let start = parse_time(&format!("{}s", c[5])).map_err(|e| format!("line {}: {e}", i + 1))?;
        let size = num(c[4])?;
        if size == 0 {
            return Err(format!("line {}: flow size must be greater than zero", i + 1));
        }
        flows.push(NewFlow { src: num(c[0])? as u32, dst: num(c[1])? as u32, size, start, tag, prio: 0, transport: 0, entry: 0 });
    }
    if flows.len() != count {
        return Err(format!("the first line says {count} flows but the file has {}", flows.len()));
    }
    Ok(flows)
}

/// dcnlab's CSV: header `src,dst,size,start[,tag]`; size with a unit or plain bytes, start with a unit or
/// plain microseconds.
pub fn parse_dcnlab(text: &str, default_tag: u16, tags: &mut Tags) -> Result<Vec<NewFlow>, String> {
    let mut flows = Vec::new();
    let mut header_seen = false;
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap().trim();
        if l.is_empty() {
            continue;
        }
        if !header_seen {
            header_seen = true;
            if l.starts_with("src") {
                continue;
            }
        }
        let c: Vec<&str> = l.split(',').map(|s| s.trim()).collect();
        if c.len() < 4 {
            return Err(format!("line {}: expected `src,dst,size,start[,tag]`", i + 1));
        }
        let host = |s: &str| s.parse::<u32>().map_err(|_| format!("line {}: `{s}` is not a host number", i + 1));
        let size = match c[2].parse::<u64>() {
            Ok(b) => b,
            Err(_) => parse_size(c[2]).map_err(|e| format!("line {}: {e}", i + 1))?.bytes(1500),
        };
        if size == 0 {
            return Err(format!("line {}: flow size must be greater than zero", i + 1));
        }
        let start = if c[3].chars().all(|ch| ch.is_ascii_digit() || ch == '.') {
            parse_time(&format!("{}us", c[3])).map_err(|e| format!("line {}: {e}", i + 1))?
        } else {
            parse_time(c[3]).map_err(|e| format!("line {}: {e}", i + 1))?
        };
        let tag = if c.len() > 4 && !c[4].is_empty() { tags.id(&Some(c[4].to_string())) } else { default_tag };
        flows.push(NewFlow { src: host(c[0])?, dst: host(c[1])?, size, start, tag, prio: 0, transport: 0, entry: 0 });
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn dcnlab_csv_file() {
        let mut tags = Tags::default();
        let text = "src,dst,size,start,tag\n0,3,5000,12.5\n1,2,64KB,1ms,query\n# comment\n2,1,inf,0\n";
        let f = parse_dcnlab(text, 0, &mut tags).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].src, f[0].dst, f[0].size, f[0].start, f[0].tag), (0, 3, 5000, 12_500_000, 0));
        assert_eq!((f[1].size, f[1].start), (64_000, 1_000_000_000));
        assert_eq!(tags.name(f[1].tag), "query");
        assert_eq!(f[2].size, u64::MAX);
        assert!(parse_dcnlab("0,1,0,5\n", 0, &mut tags).is_err());
        assert!(parse_dcnlab("0,1,10KB\n", 0, &mut tags).is_err());
        assert!(parse_dcnlab("0,1,10KB,5 parsecs\n", 0, &mut tags).is_err());
    }

    #[test]
    fn hpcc_file() {
        let f = parse_hpcc("2\n1 2 3 100 5000 2.000001\n2 1 3 100 70 2.5\n", 0).unwrap();
        assert_eq!(f[0].start, 2_000_001_000_000);
        assert_eq!(f[1].size, 70);
        assert!(parse_hpcc("3\n1 2 3 100 5000 2.0\n", 0).is_err());
    }
}
