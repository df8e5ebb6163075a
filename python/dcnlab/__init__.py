"""dcnlab: a fast, faithful packet-level simulator for datacenter congestion control.

    >>> import dcnlab
    >>> res = dcnlab.run("experiments/demo.toml")
    >>> dcnlab.summary(res.flows)
"""

from __future__ import annotations

from ._core import ConfigError, __version__
from .results import TABLES, Interrupted, Result, estimate, load, run, schema, summary, validate
from .scenario import FileScenario

__all__ = ["ConfigError", "FileScenario", "Interrupted", "Result", "TABLES", "estimate", "load", "run", "schema",
           "summary", "validate", "__version__"]
