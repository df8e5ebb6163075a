//! `_core.AccSession`: a run whose ACC decisions come from Python (`dcnlab.rl`). The core pauses at each
//! of the controller's ticks (`Sim::env_next`); Python reads the agents' states and rewards there
//! (`view`) and gives one action per agent (`act`), applied at that instant. See `control/env.rs`.

use crate::{build, config_err, records, value_err};
use dcnlab_sim::control::env::EnvShape;
use dcnlab_sim::Sim;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

#[pyclass]
pub struct AccSession {
    sim: Option<Sim>,
    shape: EnvShape,
    wall: std::time::Instant,
    cpu0: f64,
}

impl AccSession {
    fn sim(&mut self) -> PyResult<&mut Sim> {
        self.sim.as_mut().ok_or_else(|| PyValueError::new_err("the run has finished; start a new session"))
    }
}

#[pymethods]
impl AccSession {
    /// Build the scenario (as `run` takes it) and hand its ACC controller's decisions to the caller.
    #[new]
    #[pyo3(signature = (scenario, base_dir=None, overrides=None))]
    fn new(scenario: &Bound<'_, PyAny>, base_dir: Option<&str>, overrides: Option<Vec<(String, Bound<'_, PyAny>)>>) -> PyResult<Self> {
        let mut sim = build(scenario, base_dir, overrides)?;
        let shape = sim
            .env_attach()
            .map_err(|e| config_err(dcnlab_sim::ConfigError::new("switch.controller", e)))?;
        Ok(AccSession { sim: Some(sim), shape, wall: std::time::Instant::now(), cpu0: dcnlab_sim::sim::cpu_seconds() })
    }

    /// Agents (owned queues), the length of each agent's state, the number of grid actions, Δt in µs.
    #[getter]
    fn shape(&self) -> (usize, usize, usize, f64) {
        (self.shape.agents, self.shape.state_len, self.shape.actions, self.shape.interval as f64 / 1e6)
    }

    /// Run to the next decision (the GIL released): True when one awaits, False when the run is over.
    fn next(&mut self, py: Python<'_>) -> PyResult<bool> {
        let mut sim = self.sim.take().ok_or_else(|| PyValueError::new_err("the run has finished; start a new session"))?;
        let (awaits, sim) = py.allow_threads(move || (sim.env_next(), sim));
        self.sim = Some(sim);
        py.check_signals()?;
        Ok(awaits)
    }

    /// At a decision: the agents' states (agents × state length, float32) and the rewards of their
    /// previous actions (NaN before the first); None when no decision awaits.
    fn view<'py>(&mut self, py: Python<'py>) -> PyResult<Option<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>)>> {
        let (agents, len) = (self.shape.agents, self.shape.state_len);
        let Some((states, rewards)) = self.sim()?.env_view() else { return Ok(None) };
        let states = states.into_pyarray_bound(py).reshape([agents, len])?;
        Ok(Some((states, rewards.into_pyarray_bound(py))))
    }

    /// One action per agent (a grid index, or −1 to keep its setting), applied at the decision's instant.
    fn act(&mut self, actions: Vec<i64>) -> PyResult<()> {
        self.sim()?.env_act(&actions).map_err(|e| value_err("act", e))
    }

    /// Simulated time (µs).
    fn now_us(&mut self) -> PyResult<f64> {
        Ok(self.sim()?.now() as f64 / 1e6)
    }

    /// End the run here and return its records (as `run` does); the session is then spent.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let sim = self.sim.take().ok_or_else(|| PyValueError::new_err("the run has finished; start a new session"))?;
        let rec = sim.finish(self.wall.elapsed().as_secs_f64(), dcnlab_sim::sim::cpu_seconds() - self.cpu0);
        records(py, &rec)
    }
}
