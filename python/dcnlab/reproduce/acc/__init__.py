"""ACC reproduction (Yan et al., *ACC: Automatic ECN Tuning for High-Speed Datacenter Networks*, SIGCOMM
2021, §5.4): `experiments/acc/README.md` says what it reproduces, what the paper reports, what we measure
and the tolerance; `experiments/acc/scales.toml` holds the scale presets, the ACC model file among them.

The three schemes of a workload, load and seed see the same flows (the traffic's draws come from their own
stream of the seed); ACC's agents start from the pre-trained model and go on learning during the run."""

from . import centralized as _centralized
from . import check as _check
from . import check_trained as _check_trained
from . import heterogeneous as _heterogeneous
from . import large_scale as _large_scale
from . import storage as _storage
from . import training as _training
from . import unseen as _unseen
from .centralized import centralized  # noqa: F401
from .check import check  # noqa: F401
from .check_trained import check_trained  # noqa: F401
from .heterogeneous import heterogeneous  # noqa: F401
from .common import SCHEMES  # noqa: F401
from .large_scale import large_scale  # noqa: F401
from .storage import storage  # noqa: F401
from .training import training  # noqa: F401
from .unseen import unseen  # noqa: F401

TITLE = ("ACC reproduction (large-scale simulation: SECN1, SECN2 and ACC; heterogeneous traffic; the check scenario; the check with a throughput to lose; "
         "distributed storage; distributed training; centralized vs distributed; unseen traffic)")

# Experiment name → its section (preset, out, runner) → HTML fragments. One line per experiment.
EXPERIMENTS = {
    "large_scale": _large_scale.section,
    "check": _check.section,
    "check_trained": _check_trained.section,
    "heterogeneous": _heterogeneous.section,
    "storage": _storage.section,
    "training": _training.section,
    "centralized": _centralized.section,
    "unseen": _unseen.section,
}
