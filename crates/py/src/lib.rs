#![allow(unexpected_cfgs)]
//! Thin PyO3 layer over dcnlab-sim: takes a scenario as TOML text, runs it with the GIL released, hands
//! back columnar records as numpy arrays plus the run metadata as a dict.

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
            cb.call1(py, (sim.now() as f64 / US, sim.flows_finished(), sim.flows_started(), sim.events))?;
        }
        py.check_signals()?;
        if done {
            break;
        }
    }
    let rec = sim.finish(wall.elapsed().as_secs_f64(), dcnlab_sim::sim::cpu_seconds() - cpu0);
    let out = PyDict::new_bound(py);
    let ps = |t: u64| t as f64 / US;
    // flows
    let f = &rec.flows;
    let d = PyDict::new_bound(py);
    d.set_item("flow_id", f.iter().map(|x| x.flow_id as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("src", f.iter().map(|x| x.src as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("dst", f.iter().map(|x| x.dst as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item(
        "size",
        f.iter().map(|x| if x.size == u64::MAX { f64::INFINITY } else { x.size as f64 }).collect::<Vec<_>>().into_pyarray_bound(py),
    )?;
    d.set_item("tag", f.iter().map(|x| rec.tag_name(x.tag).to_string()).collect::<Vec<_>>())?;
    d.set_item("start_us", f.iter().map(|x| ps(x.start)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    let nan = f64::NAN;
    d.set_item("finish_us", f.iter().map(|x| x.finish.map(ps).unwrap_or(nan)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("fct_us", f.iter().map(|x| x.fct().map(ps).unwrap_or(nan)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    let big = |t: u64| if t == u64::MAX { f64::INFINITY } else { ps(t) };
    d.set_item("ideal_fct_us", f.iter().map(|x| big(x.ideal_fct)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("standalone_fct_us", f.iter().map(|x| big(x.standalone_fct)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("slowdown", f.iter().map(|x| x.slowdown().unwrap_or(nan)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("retransmits", f.iter().map(|x| x.retransmits as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("timeouts", f.iter().map(|x| x.timeouts as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("finished", f.iter().map(|x| x.finish.is_some()).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("base_rtt_us", f.iter().map(|x| ps(x.base_rtt)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    out.set_item("flows", d)?;
    // queues
    let names = &rec.meta.node_names;
    let q = &rec.queues;
    let d = PyDict::new_bound(py);
    d.set_item("time_us", q.iter().map(|x| ps(x.time)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("node", q.iter().map(|x| names[x.node as usize].clone()).collect::<Vec<_>>())?;
    d.set_item("port", q.iter().map(|x| x.port as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("queue", q.iter().map(|x| x.queue as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("bytes", q.iter().map(|x| x.bytes as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("packets", q.iter().map(|x| x.packets as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("marks", q.iter().map(|x| x.marks as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("drops", q.iter().map(|x| x.drops as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    out.set_item("queues", d)?;
    // links
    let l = &rec.links;
    let d = PyDict::new_bound(py);
    d.set_item("time_us", l.iter().map(|x| ps(x.time)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("node", l.iter().map(|x| names[x.node as usize].clone()).collect::<Vec<_>>())?;
    d.set_item("port", l.iter().map(|x| x.port as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("tx_bytes", l.iter().map(|x| x.tx_bytes as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("utilization", l.iter().map(|x| x.utilization).collect::<Vec<_>>().into_pyarray_bound(py))?;
    out.set_item("links", d)?;
    // flow_trace
    let t = &rec.flow_trace;
    let d = PyDict::new_bound(py);
    d.set_item("time_us", t.iter().map(|x| ps(x.time)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("flow_id", t.iter().map(|x| x.flow_id as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("cwnd_bytes", t.iter().map(|x| x.cwnd_bytes).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("rate_bps", t.iter().map(|x| x.rate_bps).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("alpha", t.iter().map(|x| x.alpha).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("srtt_us", t.iter().map(|x| ps(x.srtt)).collect::<Vec<_>>().into_pyarray_bound(py))?;
    d.set_item("delivered_bytes", t.iter().map(|x| x.delivered_bytes as i64).collect::<Vec<_>>().into_pyarray_bound(py))?;
    out.set_item("flow_trace", d)?;
    out.set_item("meta", serde_json::to_string(&rec.meta).unwrap())?;
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
    m.add("ConfigError", m.py().get_type_bound::<ConfigError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
