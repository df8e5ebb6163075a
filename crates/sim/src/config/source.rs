//! Where a scenario comes from. A user's TOML file stays the user's text: overrides (`--set`, sweep grid
//! points) are written into that text with `toml_edit`, which keeps every other line as it was, so an
//! error names the line of the user's own file. A scenario built elsewhere (a Python mapping) arrives as
//! a TOML value and is read without lines.

use super::kind::{join_path, split_marked, ConfigError};
use super::Scenario;
use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

/// A value given as text: TOML syntax (`0.5`, `true`, `[1, 2]`, `{ kind = "sp" }`), else a bare string
/// (`100KB`, `dctcp`) — the rule of the command line's `--set key=value`.
pub fn parse_value(text: &str) -> Value {
    let t = text.trim();
    match format!("v = {t}").parse::<DocumentMut>() {
        Ok(doc) => match doc.get("v").and_then(|i| i.as_value()) {
            Some(v) => {
                let mut v = v.clone();
                v.decor_mut().clear();
                v
            }
            None => Value::from(t),
        },
        Err(_) => Value::from(t),
    }
}

/// A TOML value (from a mapping) as an editable value.
pub fn value_of(v: &toml::Value) -> Value {
    // `toml` writes any value as inline TOML, which `toml_edit` reads back exactly.
    parse_value(&v.to_string())
}

enum Node<'a> {
    Item(&'a mut Item),
    Table(&'a mut Table),
    Value(&'a mut Value),
}

fn index(key: &str, len: usize, here: &str) -> Result<usize, ConfigError> {
    match key.parse::<usize>() {
        Ok(i) if i < len => Ok(i),
        _ if len == 0 => Err(ConfigError::new(here, format!("`{key}` is not an index of this list (it is empty)"))),
        _ => Err(ConfigError::new(here, format!("`{key}` is not an index of this list (0–{})", len - 1))),
    }
}

/// Set one dotted key (`switch.aqm.threshold`, `traffic.0.load`) in a document: missing tables are
/// created, list entries are addressed by index.
pub fn set(doc: &mut DocumentMut, key: &str, value: Value) -> Result<(), ConfigError> {
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ConfigError::new(key, "an override key is a dotted path such as `switch.aqm.threshold`"));
    }
    let mut node = Node::Table(doc.as_table_mut());
    for (i, p) in parts.iter().enumerate() {
        let here = parts[..=i].join(".");
        let last = i + 1 == parts.len();
        if last {
            return put(node, p, value, &here);
        }
        node = match node {
            Node::Item(Item::Table(t)) | Node::Table(t) => {
                if !t.contains_key(p) {
                    t.insert(p, Item::Table(Table::new()));
                }
                Node::Item(t.get_mut(p).unwrap())
            }
            Node::Item(Item::ArrayOfTables(a)) => {
                let j = index(p, a.len(), &here)?;
                Node::Table(a.get_mut(j).unwrap())
            }
            Node::Item(Item::Value(v)) | Node::Value(v) => match v {
                Value::InlineTable(t) => {
                    if !t.contains_key(p) {
                        t.insert(*p, Value::InlineTable(InlineTable::new()));
                    }
                    Node::Value(t.get_mut(p).unwrap())
                }
                Value::Array(a) => {
                    let j = index(p, a.len(), &here)?;
                    Node::Value(a.get_mut(j).unwrap())
                }
                _ => return Err(ConfigError::new(here, "this value has no keys below it")),
            },
            Node::Item(Item::None) => return Err(ConfigError::new(here, "this value has no keys below it")),
        };
    }
    unreachable!("a key has at least one part")
}

fn put(node: Node, key: &str, value: Value, here: &str) -> Result<(), ConfigError> {
    match node {
        Node::Item(Item::Table(t)) | Node::Table(t) => {
            t.insert(key, Item::Value(value));
        }
        Node::Item(Item::ArrayOfTables(a)) => {
            let j = index(key, a.len(), here)?;
            match value {
                Value::InlineTable(t) => *a.get_mut(j).unwrap() = t.into_table(),
                _ => return Err(ConfigError::new(here, "an entry of this list is a table: give `{ … }`")),
            }
        }
        Node::Item(Item::Value(v)) | Node::Value(v) => match v {
            Value::InlineTable(t) => {
                t.insert(key, value);
            }
            Value::Array(a) => {
                let j = index(key, a.len(), here)?;
                a.replace(j, value);
            }
            _ => return Err(ConfigError::new(here, "this value has no keys below it")),
        },
        Node::Item(Item::None) => return Err(ConfigError::new(here, "this value has no keys below it")),
    }
    Ok(())
}

/// The user's text with each override written into it; every line it does not change stays as it was.
pub fn apply(text: &str, overrides: &[(String, Value)]) -> Result<String, ConfigError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc = text.parse::<DocumentMut>().map_err(|e| syntax_error(text, e.span(), e.message()))?;
    for (k, v) in overrides {
        set(&mut doc, k, v.clone())?;
    }
    Ok(doc.to_string())
}

pub(crate) fn syntax_error(text: &str, span: Option<std::ops::Range<usize>>, message: &str) -> ConfigError {
    let line = span.map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    let msg = message.trim().lines().next().unwrap_or("").to_string();
    ConfigError::new(
        "",
        match line {
            Some(l) => format!("not valid TOML: {msg} (line {l})"),
            None => format!("not valid TOML: {msg}"),
        },
    )
}

/// The line of `text` where the value at an error's field path (`topology.hosts`, `traffic[0].load`,
/// `switch.aqm[1].alpha`) is written — or of the deepest part of the path that is written. The toml
/// crate's own span is lost inside `kind`-tagged tables (they are buffered), so errors are placed here.
pub fn line_of(text: &str, path: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut parts = Vec::new();
    for seg in path.split('.') {
        let (name, rest) = seg.split_once('[').map_or((seg, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            parts.push(Step::Key(name));
        }
        for idx in rest.split('[') {
            if let Ok(i) = idx.trim_end_matches(']').parse::<usize>() {
                parts.push(Step::Index(i));
            }
        }
    }
    #[derive(Clone, Copy)]
    enum At<'a> {
        Item(&'a Item),
        Table(&'a Table),
        Value(&'a Value),
    }
    let mut at = At::Table(doc.as_table());
    let mut span = None;
    for step in parts {
        let next = match (at, step) {
            (At::Table(t), Step::Key(k)) | (At::Item(Item::Table(t)), Step::Key(k)) => {
                span = t.key(k).and_then(|key| key.span()).or(span);
                t.get(k).map(At::Item)
            }
            (At::Item(Item::ArrayOfTables(a)), Step::Index(i)) => a.get(i).map(At::Table),
            (At::Item(Item::Value(v)) | At::Value(v), step) => match (v, step) {
                (Value::InlineTable(t), Step::Key(k)) => {
                    span = t.key(k).and_then(|key| key.span()).or(span);
                    t.get(k).map(At::Value)
                }
                (Value::Array(a), Step::Index(i)) => a.get(i).map(At::Value),
                _ => None,
            },
            _ => None,
        };
        match next {
            Some(n) => {
                span = match &n {
                    At::Table(t) => t.span(),
                    At::Item(i) => i.span(),
                    At::Value(v) => v.span(),
                }
                .or(span);
                at = n;
            }
            None => break,
        }
    }
    span.map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A scenario from the user's text with overrides: errors in a key an override set say so instead of
/// pointing at a line the user did not write.
pub fn scenario(text: &str, overrides: &[(String, Value)]) -> Result<(Scenario, String), ConfigError> {
    let full = apply(text, overrides)?;
    match Scenario::from_toml(&full) {
        Ok(sc) => Ok((sc, full)),
        Err(mut e) => {
            // Error paths write list entries as `traffic[0]`, override keys as `traffic.0`.
            let field = e.field.replace('[', ".").replace(']', "");
            let last = field.rsplit('.').next().unwrap_or("");
            let set_by = |k: &str| {
                field == k
                    || field.starts_with(&format!("{k}."))
                    // A table the override made under a key the scenario does not have.
                    || (k.starts_with(&format!("{field}.")) && e.message.contains(&format!("`{last}`")))
            };
            if let Some((k, _)) = overrides.iter().find(|(k, _)| set_by(k)) {
                let m = e.message.rsplit_once(" (line ").map(|(m, _)| m.to_string()).unwrap_or(e.message.clone());
                e.message = format!("{m} (set by the override of `{k}`)");
            }
            Err(e)
        }
    }
}

/// A scenario from a TOML value (a mapping built in code): errors name the field, without lines.
pub fn scenario_from_value(v: toml::Table) -> Result<(Scenario, String), ConfigError> {
    let text = toml::to_string(&v).map_err(|e| ConfigError::new("", format!("cannot write this scenario as TOML: {e}")))?;
    let sc: Scenario = serde_path_to_error::deserialize(toml::Value::Table(v)).map_err(|e| {
        let outer = e.path().to_string();
        let (ipath, msg) = split_marked(&e.into_inner().to_string());
        let path = join_path(&outer, &ipath);
        let m = msg.trim().lines().next().unwrap_or("").trim().to_string();
        ConfigError::new(if path == "." { String::new() } else { path }, m)
    })?;
    Ok((sc, text))
}

/// The scenario's identity in `meta.config_hash`: 64-bit FNV-1a of its effective TOML text, as 16 hex
/// digits (the same on every machine).
pub fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# a comment\nname = \"x\"\nseed = 3\n\n[switch]\naqm = { kind = \"dctcp_red\", threshold = \"65KB\" }\n\n[[traffic]]\nkind = \"poisson\"\nload = 0.5\n";

    fn o(k: &str, v: &str) -> (String, Value) {
        (k.to_string(), parse_value(v))
    }

    #[test]
    fn overrides_keep_the_users_lines() {
        let out = apply(TEXT, &[o("switch.aqm.threshold", "100KB"), o("traffic.0.load", "0.7"), o("seed", "9")]).unwrap();
        let t: toml::Table = out.parse().unwrap();
        assert_eq!(t["switch"]["aqm"]["threshold"].as_str(), Some("100KB"));
        assert_eq!(t["traffic"][0]["load"].as_float(), Some(0.7));
        assert_eq!(t["seed"].as_integer(), Some(9));
        // Same number of lines, comment kept, each value on its own line as before.
        assert_eq!(out.lines().count(), TEXT.lines().count());
        assert!(out.starts_with("# a comment\n"));
        assert_eq!(out.lines().position(|l| l.contains("100KB")), TEXT.lines().position(|l| l.contains("65KB")));
    }

    #[test]
    fn overrides_create_tables_and_reject_bad_paths() {
        let out = apply(TEXT, &[o("record.queue_sample_interval", "10us"), o("host.transport", "{ kind = \"tcp\", cc = \"reno\" }")]).unwrap();
        let t: toml::Table = out.parse().unwrap();
        assert_eq!(t["record"]["queue_sample_interval"].as_str(), Some("10us"));
        assert_eq!(t["host"]["transport"]["cc"].as_str(), Some("reno"));
        let e = apply(TEXT, &[o("traffic.3.load", "1")]).unwrap_err();
        assert_eq!(e.field, "traffic.3");
        assert!(e.message.contains("0–0"), "{e}");
        let e = apply(TEXT, &[o("seed.x", "1")]).unwrap_err();
        assert_eq!(e.field, "seed.x");
        assert!(apply(TEXT, &[o("a..b", "1")]).is_err());
        let e = apply("a = [\n", &[o("seed", "1")]).unwrap_err();
        assert!(e.message.contains("line"), "{e}");
    }

    #[test]
    fn errors_in_what_an_override_set_name_the_override() {
        let base = "stop = { time = \"1ms\" }\n[topology]\nkind = \"star\"\nhosts = 2\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n[[traffic]]\nkind = \"flows\"\nlist = []\n";
        let err = |k: &str, v: &str| scenario(base, &[o(k, v)]).map(|_| ()).unwrap_err();
        let e = err("topology.link.rate", "10parsecs");
        assert!(e.message.contains("set by the override of `topology.link.rate`"), "{e}");
        let e = err("topology.lnk.rate", "10Gbps");
        assert!(e.message.contains("set by the override of `topology.lnk.rate`"), "{e}");
        let e = err("traffic.0.list", "7");
        assert!(e.message.contains("set by the override of `traffic.0.list`"), "{e}");
        // An error in the user's own text keeps its line.
        let bad = format!("{base}[switch]\nmtu = \"x\"\n");
        let e = scenario(&bad, &[o("topology.link.delay", "2us")]).map(|_| ()).unwrap_err();
        assert!(e.message.contains("(line 10)"), "{e}");
    }

    #[test]
    fn errors_inside_tagged_tables_name_the_keys_line() {
        let text = "stop = { time = \"1ms\" }\n[topology]\nkind = \"star\"\nhosts = \"two\"\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n";
        let e = Scenario::from_toml(text).unwrap_err();
        assert_eq!(e.field, "topology.hosts");
        assert!(e.message.ends_with("(line 4)"), "{e}");
        assert_eq!(line_of(text, "topology.link.rate"), Some(5));
        let t2 = "a = 1\n\n[[traffic]]\nkind = \"x\"\n\n[[traffic]]\nkind = \"poisson\"\nload = 7\n";
        assert_eq!(line_of(t2, "traffic[1].load"), Some(8));
        assert_eq!(line_of(t2, "traffic[1].nope"), Some(6), "the deepest part written: the entry");
        assert_eq!(line_of(t2, "traffic[5].load"), Some(3));
    }

    #[test]
    fn values_follow_the_command_line_rule() {
        assert_eq!(parse_value("0.5").as_float(), Some(0.5));
        assert_eq!(parse_value("true").as_bool(), Some(true));
        assert_eq!(parse_value("100KB").as_str(), Some("100KB"));
        assert_eq!(parse_value("\"quoted\"").as_str(), Some("quoted"));
        assert_eq!(parse_value("[1, 2]").as_array().map(|a| a.len()), Some(2));
        assert_eq!(parse_value("😀 name").as_str(), Some("😀 name"));
        assert_eq!(value_of(&toml::Value::String("a\"b".into())).as_str(), Some("a\"b"));
    }

    #[test]
    fn hash_is_fnv1a() {
        // FNV-1a 64 of the empty string and of "a" (published test vectors).
        assert_eq!(hash(""), "cbf29ce484222325");
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
    }
}
