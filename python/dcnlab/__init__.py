"""dcnlab: a fast, faithful packet-level simulator for datacenter congestion control.

    >>> import dcnlab
    >>> res = dcnlab.run("experiments/demo.toml")
    >>> dcnlab.summary(res.flows)
"""

from __future__ import annotations

from . import _core
from ._core import ConfigError, __version__

# The core's exceptions name their module `_core`; give them the importable name, so that an error raised
# in a worker process (sweeps, reproductions) pickles back to the parent.
for _e in (_core.ConfigError, _core.Interrupted):
    _e.__module__ = "dcnlab._core"
from .results import TABLES, Interrupted, Result, SimulationFailed, estimate, load, run, schema, summary, validate
from .scenario import FileScenario

__all__ = ["ConfigError", "FileScenario", "Interrupted", "Result", "SimulationFailed", "TABLES", "estimate", "load", "run", "schema",
           "summary", "validate", "__version__"]
