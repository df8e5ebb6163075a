//! Flows read from a file, for replaying a trace or another simulator's draws exactly: dcnlab's CSV or
//! HPCC's `flow.txt` (what HPCC `traffic_gen/traffic_gen.py` writes), so that one flow list can drive both
//! simulators.
//!
//! **dcnlab's CSV.** When the first line (blank lines and `#` comments aside) is a header — its first cell
//! is not a number — the columns are found by name, in any order:
//! - `src`, `dst`, `size`, `start` (required): host numbers; the size in plain bytes or with a unit (`inf`
//!   for a long-lived flow); the start in plain microseconds or with a unit;
//! - `tag` (optional): an empty cell takes the entry's `tag`;
//! - `extra_delay` (optional): the flow's own extra delay at its sending host, in plain microseconds or
//!   with a unit. It replaces `host.extra_delay`'s draw for that flow, on the packets its `applies_to`
//!   names: the packets the sender sends wait exactly this long before the NIC (`"data"`, also the rule
//!   without `host.extra_delay`); its ACKs wait the same too (`"all"`, as a per-flow draw gives both
//!   directions); or only its data segments wait, not its SYN (`"payload"`). An empty cell leaves the flow
//!   to `host.extra_delay`. A per-flow draw is still made for a flow with its own delay, so the other
//!   flows' draws do not depend on which flows carry one (`host/mod.rs` `start_flow`).
//!
//! Every row then has one cell per header column. Without a header a row is `src,dst,size,start[,tag]`.

use super::{Carrier, NewFlow, Source, Tags};
use crate::config::kind::ConfigError;
use crate::units::{parse_size, parse_time, Time};
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
    // The count line is not trusted for an allocation: a file holds at most one flow per line.
    let mut flows = Vec::with_capacity(count.min(text.lines().count()));
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
        let at = |e: String| format!("line {}: {e}", i + 1);
        let (src, dst) = (host(c[0]).map_err(at)?, host(c[1]).map_err(at)?);
        flows.push(NewFlow { src, dst, size, start, tag, prio: 0, transport: 0, entry: 0, extra_delay: None, stop: None, worker: 0, carrier: Carrier::Own });
    }
    if flows.len() != count {
        return Err(format!("the first line says {count} flows but the file has {}", flows.len()));
    }
    Ok(flows)
}

/// A host number: a whole number that fits the engine's `u32` (a larger one is an error, never a wrap).
fn host(s: &str) -> Result<u32, String> {
    if !s.is_empty() && s.chars().all(|ch| ch.is_ascii_digit()) {
        let max = u32::MAX;
        return s.parse::<u32>().map_err(|_| format!("host `{s}` is too large (host numbers go up to {max})"));
    }
    Err(format!("`{s}` is not a host number"))
}

/// A time in plain microseconds (`12.5`) or with a unit (`1ms`).
fn time_us(s: &str) -> Result<Time, String> {
    if s.chars().all(|ch| ch.is_ascii_digit() || ch == '.') {
        parse_time(&format!("{s}us"))
    } else {
        parse_time(s)
    }
}

/// The columns of dcnlab's CSV: the required ones, then the optional ones.
const COLUMNS: [&str; 6] = ["src", "dst", "size", "start", "tag", "extra_delay"];
const REQUIRED: usize = 4;
const TAG: usize = 4;
const EXTRA_DELAY: usize = 5;

/// Where each of `COLUMNS` sits in a row, and how many cells a row has (`None`: header-less, 4 or 5).
struct Layout {
    at: [Option<usize>; COLUMNS.len()],
    cells: Option<usize>,
}

impl Layout {
    /// Without a header: `src,dst,size,start[,tag]`.
    fn positional() -> Layout {
        Layout { at: [Some(0), Some(1), Some(2), Some(3), Some(4), None], cells: None }
    }

    /// From a header row (`line` is its 1-based number).
    fn header(cells: &[&str], line: usize) -> Result<Layout, String> {
        let mut at = [None; COLUMNS.len()];
        for (j, name) in cells.iter().enumerate() {
            let Some(k) = COLUMNS.iter().position(|c| c == name) else {
                return Err(format!(
                    "line {line}: unknown column `{name}`; the columns are {} (required) and {} (optional)",
                    COLUMNS[..REQUIRED].join(", "),
                    COLUMNS[REQUIRED..].join(", ")
                ));
            };
            if at[k].replace(j).is_some() {
                return Err(format!("line {line}: column `{name}` appears twice"));
            }
        }
        if let Some(k) = (0..REQUIRED).find(|&k| at[k].is_none()) {
            return Err(format!(
                "line {line}: the header has no `{}` column; it needs {} (any order)",
                COLUMNS[k],
                COLUMNS[..REQUIRED].join(", ")
            ));
        }
        Ok(Layout { at, cells: Some(cells.len()) })
    }

    /// The cells of a row are as many as the layout wants.
    fn check(&self, n: usize, line: usize) -> Result<(), String> {
        match self.cells {
            Some(want) if n != want => {
                Err(format!("line {line}: {n} cells, but the header names {want} columns (leave a cell empty, not out)"))
            }
            None if !(REQUIRED..=REQUIRED + 1).contains(&n) => Err(format!(
                "line {line}: expected `src,dst,size,start[,tag]` ({n} cells); a header row names other columns, such as extra_delay"
            )),
            _ => Ok(()),
        }
    }

    /// Column `k` of a row ("" when the layout has no such column).
    fn get<'a>(&self, row: &[&'a str], k: usize) -> &'a str {
        self.at[k].and_then(|j| row.get(j).copied()).unwrap_or("")
    }
}

/// dcnlab's CSV (the module's doc says the format): size with a unit or plain bytes, times with a unit or
/// plain microseconds.
pub fn parse_dcnlab(text: &str, default_tag: u16, tags: &mut Tags) -> Result<Vec<NewFlow>, String> {
    let mut flows = Vec::new();
    let mut layout = None;
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap().trim();
        if l.is_empty() {
            continue;
        }
        let line = i + 1;
        let c: Vec<&str> = l.split(',').map(|s| s.trim()).collect();
        if layout.is_none() && !c[0].starts_with(|ch: char| ch.is_ascii_digit()) {
            layout = Some(Layout::header(&c, line)?);
            continue;
        }
        let layout = layout.get_or_insert_with(Layout::positional);
        layout.check(c.len(), line)?;
        let cell = |k: usize| layout.get(&c, k);
        let at = |k: usize, e: String| format!("line {line}, {}: {e}", COLUMNS[k]);
        let size = match cell(2).parse::<u64>() {
            Ok(b) => b,
            Err(_) => parse_size(cell(2)).map_err(|e| at(2, e))?.bytes(1500),
        };
        if size == 0 {
            return Err(format!("line {line}: flow size must be greater than zero"));
        }
        let start = time_us(cell(3)).map_err(|e| at(3, e))?;
        let tag = match cell(TAG) {
            "" => default_tag,
            t => tags.id(&Some(t.to_string())),
        };
        let extra_delay = match cell(EXTRA_DELAY) {
            "" => None,
            d => Some(time_us(d).map_err(|e| at(EXTRA_DELAY, e))?),
        };
        let (src, dst) = (host(cell(0)).map_err(|e| at(0, e))?, host(cell(1)).map_err(|e| at(1, e))?);
        flows.push(NewFlow { src, dst, size, start, tag, prio: 0, transport: 0, entry: 0, extra_delay, stop: None, worker: 0, carrier: Carrier::Own });
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, US};

    fn err(text: &str) -> String {
        parse_dcnlab(text, 0, &mut Tags::default()).unwrap_err()
    }

    #[test]
    fn dcnlab_csv_file() {
        let mut tags = Tags::default();
        let text = "src,dst,size,start,tag\n0,3,5000,12.5,\n1,2,64KB,1ms,query\n# comment\n2,1,inf,0,\n";
        let f = parse_dcnlab(text, 0, &mut tags).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].src, f[0].dst, f[0].size, f[0].start, f[0].tag), (0, 3, 5000, 12_500_000, 0));
        assert_eq!((f[1].size, f[1].start), (64_000, 1_000_000_000));
        assert_eq!(tags.name(f[1].tag), "query");
        assert_eq!(f[2].size, u64::MAX);
        assert!(f.iter().all(|x| x.extra_delay.is_none()));
        assert!(parse_dcnlab("0,1,0,5\n", 0, &mut tags).is_err());
        assert!(parse_dcnlab("0,1,10KB\n", 0, &mut tags).is_err());
        assert!(parse_dcnlab("0,1,10KB,5 parsecs\n", 0, &mut tags).is_err());
    }

    #[test]
    fn header_columns_in_any_order_with_extra_delay() {
        let mut tags = Tags::default();
        let text = "# replayed\nextra_delay, start, tag, size, dst, src\n160us,19756.802,slow,4445,15,0\n20,1ms,,2KB,1,2\n,0,,1,3,4\n";
        let f = parse_dcnlab(text, 7, &mut tags).unwrap();
        assert_eq!((f[0].src, f[0].dst, f[0].size, f[0].start), (0, 15, 4445, 19_756_802_000));
        assert_eq!(tags.name(f[0].tag), "slow");
        // With a unit, and plain microseconds as `start`.
        assert_eq!((f[0].extra_delay, f[1].extra_delay), (Some(160 * US), Some(20 * US)));
        assert_eq!((f[1].src, f[1].dst, f[1].size, f[1].start, f[1].tag), (2, 1, 2000, MS, 7));
        // An empty cell: no delay of its own (host.extra_delay decides).
        assert_eq!(f[2].extra_delay, None);
        // Only the required columns.
        let f = parse_dcnlab("dst,src,start,size\n1,0,5,100\n", 0, &mut tags).unwrap();
        assert_eq!((f[0].src, f[0].dst, f[0].size, f[0].start, f[0].extra_delay), (0, 1, 100, 5 * US, None));
    }

    #[test]
    fn header_errors_name_the_column_or_the_line() {
        let e = err("src,dst,size,start,delay\n0,1,100,5,3\n");
        assert!(e.contains("line 1") && e.contains("unknown column `delay`") && e.contains("extra_delay"), "{e}");
        let e = err("src,dst,size,tag\n0,1,100,x\n");
        assert!(e.contains("no `start` column") && e.contains("src, dst, size, start"), "{e}");
        let e = err("src,dst,size,start,src\n0,1,100,5,2\n");
        assert!(e.contains("`src` appears twice"), "{e}");
        let e = err("src,dst,size,start,extra_delay\n0,1,100,5,1us\n\n0,1,100,5\n");
        assert!(e.contains("line 4") && e.contains("4 cells") && e.contains("5 columns"), "{e}");
        let e = err("src,dst,size,start,extra_delay\n0,1,100,5,soon\n");
        assert!(e.contains("line 2, extra_delay"), "{e}");
        let e = err("start,size,dst,src\n5,100,1,x\n");
        assert!(e.contains("line 2, src") && e.contains("not a host number"), "{e}");
    }

    #[test]
    fn positional_rows_without_a_header() {
        let mut tags = Tags::default();
        let f = parse_dcnlab("0,1,100,5,q\n2,3,1KB,2us\n", 0, &mut tags).unwrap();
        assert_eq!((f[0].start, tags.name(f[0].tag), f[1].size, f[1].tag), (5 * US, "q", 1000, 0));
        // A sixth cell needs a header to say what it is, rather than being ignored.
        let e = err("0,1,100,5,q,20us\n");
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
    }

    #[test]
    fn host_numbers_beyond_u32_are_errors_not_wraps() {
        let e = err("0,4294967296,100,5\n");
        assert!(e.contains("line 1, dst") && e.contains("too large"), "{e}");
        let e = parse_hpcc("1\n4294967297 2 3 100 5000 2.0\n", 0).unwrap_err();
        assert!(e.contains("line 2") && e.contains("too large"), "{e}");
    }

    #[test]
    fn hpcc_file() {
        let f = parse_hpcc("2\n1 2 3 100 5000 2.000001\n2 1 3 100 70 2.5\n", 0).unwrap();
        assert_eq!(f[0].start, 2_000_001_000_000);
        assert_eq!(f[1].size, 70);
        assert!(parse_hpcc("3\n1 2 3 100 5000 2.0\n", 0).is_err());
        // A huge count is a mismatch, not an allocation.
        let e = parse_hpcc("18446744073709551615\n1 2 3 100 5000 2.0\n", 0).unwrap_err();
        assert!(e.contains("says 18446744073709551615 flows but the file has 1"), "{e}");
    }
}
