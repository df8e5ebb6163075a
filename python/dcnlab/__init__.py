"""dcnlab: a fast, faithful packet-level simulator for datacenter congestion control.

    >>> import dcnlab
    >>> res = dcnlab.run("experiments/demo.toml")
    >>> dcnlab.summary(res.flows)
"""

from __future__ import annotations

from ._core import ConfigError, __version__
from .results import Result, load, run, summary, validate

__all__ = ["ConfigError", "Result", "load", "run", "summary", "validate", "__version__"]
