"""TCD reproductions (Zhang et al., *Congestion Detection in Lossless Networks*, SIGCOMM 2021, §5.2 for
CEE and §5.2.2 for InfiniBand), one module per experiment: `experiments/tcd/README.md` says what each reproduces, what the paper
reports, what we measure and the tolerance; `experiments/tcd/scales.toml` holds the scale presets.

The micro-benchmarks run on the victim-flow topology of `crates/sim/tests/tcd.rs`
(`experiments/tcd/victim_topology.toml`) with fixed flow lists, so they are deterministic; the
realistic workloads draw their flows from the traffic stream, and the InfiniBand workload (`ib`) from its
preset's seed in Python, so compared schemes see the same flows."""

from . import burst as _burst
from . import fairness as _fairness
from . import ib as _ib
from . import realistic as _realistic
from . import victim as _victim
from .burst import burst  # noqa: F401
from .common import SCHEMES  # noqa: F401
from .fairness import fairness  # noqa: F401
from .ib import ib  # noqa: F401
from .realistic import realistic  # noqa: F401
from .victim import victim  # noqa: F401

TITLE = "TCD reproduction (CEE: DCQCN and TIMELY; InfiniBand: IB CC)"

# Experiment name → its section (preset, out, runner) → HTML fragments. One line per experiment.
EXPERIMENTS = {
    "victim": _victim.section,
    "burst": _burst.section,
    "fairness": _fairness.section,
    "realistic": _realistic.section,
    "ib": _ib.section,
}
