#![allow(unexpected_cfgs)]
//! Thin PyO3 layer over dcnlab-sim: takes a scenario as TOML text (plus overrides) or a mapping, runs it
//! with the GIL released in slices (progress, Ctrl-C between them), hands back columnar records as numpy
//! arrays plus the run metadata as a dict. The tables and their columns come from the core's one
//! declaration (`records/tables.rs`); nothing here names a column.

use dcnlab_sim::records::{Column, ColumnData, TABLES};
use dcnlab_sim::sim::estimate::Estimate;
use dcnlab_sim::{Scenario, Sim};
use numpy::IntoPyArray;
use pyo3::create_exception;
use dcnlab_sim::config::source;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pythonize::depythonize;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod env;

create_exception!(_core, ConfigError, PyValueError, "A scenario error naming the field and the fix.");
create_exception!(
    _core,
    Interrupted,
    PyKeyboardInterrupt,
    "Ctrl-C during a run: `args[0]` holds the records until then (`meta.interrupted` is set)."
);

fn config_err(e: dcnlab_sim::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value_bound(py);
        let _ = v.setattr("field", e.field.clone());
        let _ = v.setattr("detail", e.message.clone());
    });
    err
}

const US: f64 = 1e6;

/// Wall time a slice of a run aims at, between two looks at Ctrl-C and the progress clock.
const SLICE_WALL_S: f64 = 0.03;

fn value_err(what: &str, e: impl std::fmt::Display) -> PyErr {
    config_err(dcnlab_sim::ConfigError::new("", format!("{what}: {e}")))
}

/// A scenario: TOML text (the user's file, with `overrides` written into it so that errors name the
/// user's lines) or a mapping (read as a TOML value), with its effective text. An override's value is a
/// string in the command line's rule (TOML syntax, else a bare string) or any other Python value as it is.
fn scenario_of(
    scenario: &Bound<'_, PyAny>,
    base_dir: Option<&str>,
    overrides: Option<Vec<(String, Bound<'_, PyAny>)>>,
) -> PyResult<(Scenario, String)> {
    let mut ov = Vec::new();
    for (k, v) in overrides.unwrap_or_default() {
        let value = match v.extract::<String>() {
            Ok(s) => source::parse_value(&s),
            Err(_) => {
                let tv: toml::Value = depythonize(&v).map_err(|e| value_err(&format!("the override of `{k}`"), e))?;
                source::value_of(&tv)
            }
        };
        ov.push((k, value));
    }
    let (mut sc, full) = if let Ok(text) = scenario.extract::<String>() {
        source::scenario(&text, &ov)
    } else {
        let table: toml::Table = depythonize(scenario).map_err(|e| value_err("this scenario cannot be read as TOML", e))?;
        if ov.is_empty() {
            source::scenario_from_value(table)
        } else {
            let text = toml::to_string(&table).map_err(|e| value_err("this scenario cannot be written as TOML", e))?;
            source::scenario(&text, &ov)
        }
    }
    .map_err(config_err)?;
    if let Some(b) = base_dir {
        sc.resolve_paths(std::path::Path::new(b));
    }
    Ok((sc, full))
}

/// The simulation of a scenario (see `scenario_of`), its `meta.config_hash` from the effective text.
fn build(scenario: &Bound<'_, PyAny>, base_dir: Option<&str>, overrides: Option<Vec<(String, Bound<'_, PyAny>)>>) -> PyResult<Sim> {
    let (sc, full) = scenario_of(scenario, base_dir, overrides)?;
    Sim::from_scenario(&sc, &full).map_err(config_err)
}

/// Parse and validate a scenario (TOML text or a mapping) without running it. `base_dir` resolves
/// relative paths; `overrides` as for `run`.
#[pyfunction]
#[pyo3(signature = (scenario, base_dir=None, overrides=None))]
fn validate(scenario: &Bound<'_, PyAny>, base_dir: Option<&str>, overrides: Option<Vec<(String, Bound<'_, PyAny>)>>) -> PyResult<()> {
    build(scenario, base_dir, overrides)?;
    Ok(())
}

/// What a scenario will hold, counted before anything is built (the core's `sim::estimate`): a dict of
/// counts (`hosts`, `switches`, `ports`, `flows`, `queue_samples`, …), `bytes` in all, `parts` (a list of
/// (structure, bytes), largest first), `text` (the same for people), and `limit`: None, or the error
/// (`field`, `message`) the engine would stop at whatever the memory. A bad scenario raises ConfigError.
#[pyfunction]
#[pyo3(signature = (scenario, base_dir=None, overrides=None))]
fn estimate(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    base_dir: Option<&str>,
    overrides: Option<Vec<(String, Bound<'_, PyAny>)>>,
) -> PyResult<PyObject> {
    let (sc, _) = scenario_of(scenario, base_dir, overrides)?;
    let e = Estimate::count(&sc).map_err(config_err)?;
    let d = PyDict::new_bound(py);
    let counts = [
        ("hosts", e.hosts),
        ("switches", e.switches),
        ("links", e.links),
        ("ports", e.ports),
        ("route_next_hops", e.route_next_hops),
        ("routing_steps", e.routing_steps),
        ("flows", e.flows),
        ("open_flows", e.open_flows),
        ("queue_samples", e.queue_samples),
        ("link_samples", e.link_samples),
        ("trace_samples", e.trace_samples),
        ("packets", e.packets),
        ("events", e.events),
        ("bytes", e.bytes),
    ];
    for (k, v) in counts {
        d.set_item(k, v)?;
    }
    d.set_item("duration_us", e.duration as f64 / US)?;
    d.set_item("parts", e.parts.clone())?;
    d.set_item("text", e.describe())?;
    match e.limits(&sc) {
        Ok(()) => d.set_item("limit", py.None())?,
        Err(err) => d.set_item("limit", (err.field.clone(), err.to_string()))?,
    }
    Ok(d.into())
}

/// The memory available for a new run in bytes (`MemAvailable`), or None where the system does not say.
#[pyfunction]
fn available_memory() -> Option<u64> {
    dcnlab_sim::sim::estimate::available_memory()
}

/// Run a scenario (TOML text or a mapping; `overrides` = [(dotted key, value)]) with the GIL released,
/// in slices of simulated time of about 30 ms of wall time each. `progress(sim_time_us, flows_finished,
/// flows_started, events)` is called at most every `progress_every_s` seconds of wall time and once at the end. Ctrl-C stops the run within a
/// slice: the records so far are raised as `Interrupted(records)` (a KeyboardInterrupt) with
/// `meta.interrupted` set.
#[pyfunction]
#[pyo3(signature = (scenario, base_dir=None, overrides=None, progress=None, progress_every_s=0.5))]
fn run(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    base_dir: Option<&str>,
    overrides: Option<Vec<(String, Bound<'_, PyAny>)>>,
    progress: Option<PyObject>,
    progress_every_s: f64,
) -> PyResult<PyObject> {
    let mut sim = build(scenario, base_dir, overrides)?;
    let wall = std::time::Instant::now();
    let cpu0 = dcnlab_sim::sim::cpu_seconds();
    let every = std::time::Duration::from_secs_f64(progress_every_s.max(0.0));
    let mut last = std::time::Instant::now();
    let report = |sim: &Sim| -> PyResult<()> {
        match &progress {
            Some(cb) => cb.call1(py, (sim.now() as f64 / US, sim.flows_finished(), sim.flows_started(), sim.events())).map(|_| ()),
            None => Ok(()),
        }
    };
    // Slices are spans of simulated time (the engine's own loop, no per-event counter), sized from the
    // last slice's speed so that each takes about SLICE_WALL_S of wall time.
    let mut span: u64 = 10_000_000; // 10 µs of simulated time to start
    loop {
        let t0 = std::time::Instant::now();
        let limit = sim.now().saturating_add(span);
        let (done, s) = py.allow_threads(move || {
            let d = sim.run_until(limit);
            (d, sim)
        });
        sim = s;
        let took = t0.elapsed().as_secs_f64().max(1e-6);
        span = ((span as f64) * (SLICE_WALL_S / took).clamp(0.25, 4.0)).clamp(1_000.0, 1e15) as u64;
        let mut step = py.check_signals();
        if step.is_ok() && (done || last.elapsed() >= every) {
            last = std::time::Instant::now();
            step = report(&sim);
        }
        if let Err(e) = step {
            if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
                return Err(e);
            }
            sim.interrupt();
            let rec = sim.finish(wall.elapsed().as_secs_f64(), dcnlab_sim::sim::cpu_seconds() - cpu0);
            return Err(Interrupted::new_err((records(py, &rec)?,)));
        }
        if done {
            break;
        }
    }
    let rec = sim.finish(wall.elapsed().as_secs_f64(), dcnlab_sim::sim::cpu_seconds() - cpu0);
    records(py, &rec)
}

/// Every table as a dict of columns, and `meta` as JSON text.
fn records(py: Python<'_>, rec: &dcnlab_sim::Records) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    for t in &TABLES {
        out.set_item(t.name, columns(py, t.data(rec))?)?;
    }
    out.set_item("meta", serde_json::to_string(&rec.meta).unwrap())?;
    Ok(out.into())
}

/// A table's columns as a dict: numpy arrays for numbers and flags, lists of str for strings.
fn columns<'py>(py: Python<'py>, data: Vec<(&'static Column, ColumnData)>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    for (c, v) in data {
        match v {
            ColumnData::I64(v) => d.set_item(c.name, v.into_pyarray_bound(py))?,
            ColumnData::F64(v) => d.set_item(c.name, v.into_pyarray_bound(py))?,
            ColumnData::Bool(v) => d.set_item(c.name, v.into_pyarray_bound(py))?,
            ColumnData::Str(v) => d.set_item(c.name, v)?,
        }
    }
    Ok(d)
}

/// The record tables as declared in the core: `{table: [(column, type, unit, meaning), …]}` in column
/// order, types `int`, `float`, `bool`, `str`. Python takes the table names from here.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    for t in &TABLES {
        let cols: Vec<_> = t.columns().iter().map(|c| (c.name, c.ty.name(), c.unit, c.meaning)).collect();
        out.set_item(t.name, cols)?;
    }
    Ok(out.into())
}

/// One line per table saying what a row is.
#[pyfunction]
fn table_meanings(py: Python<'_>) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    for t in &TABLES {
        out.set_item(t.name, t.meaning)?;
    }
    Ok(out.into())
}

/// A time with a unit (`"1.5ms"`) in microseconds, by the core's own parser.
#[pyfunction]
fn parse_time_us(s: &str) -> PyResult<f64> {
    dcnlab_sim::units::parse_time(s).map(|t| t as f64 / US).map_err(|e| ConfigError::new_err(e))
}

/// A rate with a unit (`"10Gbps"`) in bits per second, by the core's own parser.
#[pyfunction]
fn parse_rate_bps(s: &str) -> PyResult<u64> {
    dcnlab_sim::units::parse_rate(s).map_err(|e| ConfigError::new_err(e))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_time_us, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(available_memory, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(table_meanings, m)?)?;
    m.add_class::<env::AccSession>()?;
    m.add("RECORDS_VERSION", dcnlab_sim::records::RECORDS_VERSION)?;
    m.add("ConfigError", m.py().get_type_bound::<ConfigError>())?;
    m.add("Interrupted", m.py().get_type_bound::<Interrupted>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
