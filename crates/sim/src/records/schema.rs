//! The machinery of the record tables: a column is declared once, with its name, type, unit and meaning
//! beside the one function that reads it from a row (the declarations are in `tables.rs`). The CSV
//! writer, the queue stream, the Python binding and `docs/records.md` all derive from the declarations,
//! so a column cannot be added to one of them and forgotten in another.

use super::{Meta, Records};
use crate::units::{Time, US};
use std::io::{self, Write};

/// A column's type as users see it; in a DataFrame `int` is int64, `float` float64, `bool` bool and `str`
/// Python strings (object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Bool => "bool",
            Ty::Str => "str",
        }
    }
}

/// One column, as the docs and `dcnlab.schema()` show it.
#[derive(Debug)]
pub struct Column {
    pub name: &'static str,
    pub ty: Ty,
    /// `us`, `bytes`, `bps`, `packets`…; empty for names, indices, flags and ratios.
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// One cell as read from a row. Strings are borrowed, so writing a CSV row allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'a str),
    /// Bytes where `u64::MAX` means unbounded (a long-lived flow's size): a float column, `inf` in the CSV
    /// and in arrays, exact digits in the CSV otherwise.
    Size(u64),
    /// A time where `Time::MAX` means unbounded (a long-lived flow's ideal FCT): +inf µs in arrays, while
    /// the CSV has always written the plain conversion of `Time::MAX` (18446744073709.55) and keeps
    /// doing so, because records must stay bit-identical across versions.
    UsOrInf(Time),
}

/// Picoseconds as the microseconds of the `*_us` columns.
pub fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

/// `None` (an unfinished flow's times) is NaN.
pub fn us_or_nan(t: Option<Time>) -> f64 {
    t.map(us).unwrap_or(f64::NAN)
}

impl Cell<'_> {
    pub fn ty(&self) -> Ty {
        match self {
            Cell::Int(_) => Ty::Int,
            Cell::Float(_) | Cell::Size(_) | Cell::UsOrInf(_) => Ty::Float,
            Cell::Bool(_) => Ty::Bool,
            Cell::Str(_) => Ty::Str,
        }
    }

    /// The CSV text: Rust's `Display` (floats as `{}`: shortest round-trip, `NaN`, `inf`), and strings
    /// quoted only when they hold a comma, a quote or a line break (RFC 4180), so that ordinary names are
    /// written as they always were.
    pub fn write_csv(&self, w: &mut impl Write) -> io::Result<()> {
        match *self {
            Cell::Int(v) => write!(w, "{v}"),
            Cell::Float(v) => write!(w, "{v}"),
            Cell::Bool(v) => write!(w, "{v}"),
            Cell::Str(s) if s.contains([',', '"', '\n', '\r']) => write!(w, "\"{}\"", s.replace('"', "\"\"")),
            Cell::Str(s) => w.write_all(s.as_bytes()),
            Cell::Size(u64::MAX) => w.write_all(b"inf"),
            Cell::Size(v) => write!(w, "{v}"),
            Cell::UsOrInf(t) => write!(w, "{}", us(t)),
        }
    }
}

/// A column's values for arrays (numpy in the binding).
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl ColumnData {
    fn with_capacity(ty: Ty, n: usize) -> Self {
        match ty {
            Ty::Int => ColumnData::I64(Vec::with_capacity(n)),
            Ty::Float => ColumnData::F64(Vec::with_capacity(n)),
            Ty::Bool => ColumnData::Bool(Vec::with_capacity(n)),
            Ty::Str => ColumnData::Str(Vec::with_capacity(n)),
        }
    }

    /// Append a cell; a cell of another type than the column's is a bug in a declaration (the unit tests
    /// read every column of every table).
    fn push(&mut self, c: Cell, column: &str) {
        match (self, c) {
            (ColumnData::I64(v), Cell::Int(x)) => v.push(x),
            (ColumnData::F64(v), Cell::Float(x)) => v.push(x),
            (ColumnData::F64(v), Cell::Size(x)) => v.push(if x == u64::MAX { f64::INFINITY } else { x as f64 }),
            (ColumnData::F64(v), Cell::UsOrInf(t)) => v.push(if t == Time::MAX { f64::INFINITY } else { us(t) }),
            (ColumnData::Bool(v), Cell::Bool(x)) => v.push(x),
            (ColumnData::Str(v), Cell::Str(x)) => v.push(x.to_string()),
            (_, c) => panic!("column `{column}` is declared with another type than its cells ({:?})", c.ty()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What cells need beyond their row: the names behind the indices rows hold.
#[derive(Clone, Copy, Default)]
pub struct Names<'a> {
    pub nodes: &'a [String],
    pub tags: &'a [String],
    pub transports: &'a [String],
}

impl<'a> Names<'a> {
    pub fn of(meta: &'a Meta) -> Self {
        Names { nodes: &meta.node_names, tags: &meta.tags, transports: &meta.transports }
    }
    pub fn node(&self, i: u32) -> &'a str {
        &self.nodes[i as usize]
    }
    /// An index without a name (a run without tags) reads as "".
    pub fn tag(&self, i: u16) -> &'a str {
        self.tags.get(i as usize).map(|s| s.as_str()).unwrap_or("")
    }
    pub fn transport(&self, i: u16) -> &'a str {
        self.transports.get(i as usize).map(|s| s.as_str()).unwrap_or("")
    }
}

/// A column and how to read it from a row of type `R`.
pub struct Col<R> {
    pub column: Column,
    pub get: for<'a> fn(&'a R, Names<'a>) -> Cell<'a>,
}

/// A row type of a record table.
pub trait Row: Sized + 'static {
    const NAME: &'static str;
    /// One line for the docs: what a row is.
    const MEANING: &'static str;
    /// In the order of the CSV and the DataFrame.
    const COLUMNS: &'static [Col<Self>];
    fn rows(rec: &Records) -> &[Self];
}

/// The CSV header of `R`'s table (no line end).
pub fn header<R: Row>() -> String {
    R::COLUMNS.iter().map(|c| c.column.name).collect::<Vec<_>>().join(",")
}

/// One CSV line.
pub fn write_row<R: Row>(w: &mut impl Write, r: &R, names: Names) -> io::Result<()> {
    for (i, c) in R::COLUMNS.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        (c.get)(r, names).write_csv(w)?;
    }
    w.write_all(b"\n")
}

fn write_csv<R: Row>(rec: &Records, mut w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{}", header::<R>())?;
    let names = Names::of(&rec.meta);
    R::rows(rec).iter().try_for_each(|r| write_row(&mut w, r, names))
}

fn columns<R: Row>() -> Vec<&'static Column> {
    R::COLUMNS.iter().map(|c| &c.column).collect()
}

fn data<R: Row>(rec: &Records) -> Vec<(&'static Column, ColumnData)> {
    let rows = R::rows(rec);
    let names = Names::of(&rec.meta);
    R::COLUMNS
        .iter()
        .map(|c| {
            let mut d = ColumnData::with_capacity(c.column.ty, rows.len());
            rows.iter().for_each(|r| d.push((c.get)(r, names), c.column.name));
            (&c.column, d)
        })
        .collect()
}

/// A table with its row type erased, so that every table can be listed in one array.
pub struct Table {
    pub name: &'static str,
    pub meaning: &'static str,
    columns: fn() -> Vec<&'static Column>,
    data: fn(&Records) -> Vec<(&'static Column, ColumnData)>,
    csv: fn(&Records, &mut dyn Write) -> io::Result<()>,
}

impl Table {
    pub const fn of<R: Row>() -> Table {
        Table { name: R::NAME, meaning: R::MEANING, columns: columns::<R>, data: data::<R>, csv: write_csv::<R> }
    }
    pub fn columns(&self) -> Vec<&'static Column> {
        (self.columns)()
    }
    /// Every column's values, in order.
    pub fn data(&self, rec: &Records) -> Vec<(&'static Column, ColumnData)> {
        (self.data)(rec)
    }
    /// Header and rows.
    pub fn write_csv(&self, rec: &Records, w: &mut dyn Write) -> io::Result<()> {
        (self.csv)(rec, w)
    }
}
