#![allow(unexpected_cfgs)]
//! Thin PyO3 layer over dcnlab-sim: takes a scenario as TOML text, runs it with the GIL released, hands
//! back columnar records as numpy arrays plus the run metadata as a dict. The tables and their columns
//! come from the core's one declaration (`records/tables.rs`); nothing here names a column.

use dcnlab_sim::records::{Column, ColumnData, TABLES};
use dcnlab_sim::sim::estimate::Estimate;
use dcnlab_sim::{Scenario, Sim};
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(_core, ConfigError, PyValueError, "A scenario error naming the field and the fix.");

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

/// Parse and validate a scenario (TOML text) without running it. `base_dir` resolves relative paths.
#[pyfunction]
#[pyo3(signature = (text, base_dir=None))]
fn validate(text: &str, base_dir: Option<&str>) -> PyResult<()> {
    let mut sc = Scenario::from_toml(text).map_err(config_err)?;
    if let Some(b) = base_dir {
        sc.resolve_paths(std::path::Path::new(b));
    }
    Sim::new(&sc).map_err(config_err)?;
    Ok(())
}

/// What a scenario will hold, counted before anything is built (the core's `sim::estimate`): a dict of
/// counts (`hosts`, `switches`, `ports`, `flows`, `queue_samples`, …), `bytes` in all, `parts` (a list of
/// (structure, bytes), largest first), `text` (the same for people), and `limit`: None, or the error
/// (`field`, `message`) the engine would stop at whatever the memory. A bad scenario raises ConfigError.
#[pyfunction]
#[pyo3(signature = (text, base_dir=None))]
fn estimate(py: Python<'_>, text: &str, base_dir: Option<&str>) -> PyResult<PyObject> {
    let mut sc = Scenario::from_toml(text).map_err(config_err)?;
    if let Some(b) = base_dir {
        sc.resolve_paths(std::path::Path::new(b));
    }
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

/// Run a scenario (TOML text). `progress(sim_time_us, flows_finished, flows_started, events)` is called
/// every `progress_interval_us` of simulated time.
#[pyfunction]
#[pyo3(signature = (text, base_dir=None, progress=None, progress_interval_us=1000.0))]
fn run(
    py: Python<'_>,
    text: &str,
    base_dir: Option<&str>,
    progress: Option<PyObject>,
    progress_interval_us: f64,
) -> PyResult<PyObject> {
    let mut sc = Scenario::from_toml(text).map_err(config_err)?;
    if let Some(b) = base_dir {
        sc.resolve_paths(std::path::Path::new(b));
    }
    let mut sim = Sim::new(&sc).map_err(config_err)?;
    let wall = std::time::Instant::now();
    let cpu0 = dcnlab_sim::sim::cpu_seconds();
    let step = ((progress_interval_us.max(1.0)) * US) as u64;
    loop {
        let limit = sim.now().saturating_add(step);
        let (done, s) = py.allow_threads(move || {
            let d = sim.run_until(limit);
            (d, sim)
        });
        sim = s;
        if let Some(cb) = &progress {
            cb.call1(py, (sim.now() as f64 / US, sim.flows_finished(), sim.flows_started(), sim.events()))?;
        }
        py.check_signals()?;
        if done {
            break;
        }
    }
    let rec = sim.finish(wall.elapsed().as_secs_f64(), dcnlab_sim::sim::cpu_seconds() - cpu0);
    let out = PyDict::new_bound(py);
    for t in &TABLES {
        out.set_item(t.name, columns(py, t.data(&rec))?)?;
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
    m.add("ConfigError", m.py().get_type_bound::<ConfigError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
