"""ECN♯ reproductions (Zhang, Bai, Chen, IEEE TCC 2022), one module per experiment:
`experiments/ecn_sharp/README.md` says what each reproduces, what the paper reports, what we measure and
the tolerance; `experiments/ecn_sharp/scales.toml` holds the scale presets.

Every scheme sees the same flows: only the AQM differs between runs of one (workload, load, seed), and
traffic draws from its own random stream."""

from . import dcqcn as _dcqcn
from . import large_scale as _large_scale
from . import microscopic as _microscopic
from . import motivation as _motivation
from . import pias as _pias
from . import scheduler as _scheduler
from . import sensitivity as _sensitivity
from . import testbed as _testbed
from .common import EXP, TESTBED_SCHEMES  # noqa: F401
from .dcqcn import DCQCN_SCHEMES, dcqcn  # noqa: F401
from .large_scale import LARGE_SCHEMES, large_scale  # noqa: F401
from .microscopic import microscopic  # noqa: F401
from .motivation import motivation  # noqa: F401
from .pias import pias  # noqa: F401
from .scheduler import scheduler  # noqa: F401
from .sensitivity import sensitivity  # noqa: F401
from .testbed import testbed  # noqa: F401

TITLE = "ECN♯ reproduction"

# Experiment name → its section (preset, out, runner) → HTML fragments. One line per experiment.
EXPERIMENTS = {
    "motivation": _motivation.section,
    "testbed": _testbed.section,
    "large_scale": _large_scale.section,
    "microscopic": _microscopic.section,
    "sensitivity": _sensitivity.section,
    "scheduler": _scheduler.section,
    "pias": _pias.section,
    "dcqcn": _dcqcn.section,
}
# Experiment name → the number of runs its preset sends to the runner (progress across the suite).
RUNS = {name: globals()[f"_{name}"].runs for name in EXPERIMENTS}
