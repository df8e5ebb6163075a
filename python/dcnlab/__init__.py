"""dcnlab: a fast, faithful packet-level simulator for datacenter congestion control.

    >>> import dcnlab
    >>> res = dcnlab.run("experiments/demo.toml")
    >>> dcnlab.summary(res.flows)
"""

from __future__ import annotations

from ._core import ConfigError, __version__
from .results import TABLES, Result, estimate, load, run, schema, summary, validate

__all__ = ["ConfigError", "Result", "TABLES", "estimate", "load", "run", "schema", "summary", "validate", "__version__"]
