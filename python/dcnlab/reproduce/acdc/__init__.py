"""AC/DC TCP reproductions (He et al., SIGCOMM 2016, §5), one module per experiment:
`experiments/acdc/README.md` says what each reproduces, what the paper reports, what we measure and the
tolerance; `experiments/acdc/scales.toml` holds the scale presets.

Runs are deterministic for a seed (the shuffle's orders, the staggered stride's start offsets and the
trace-driven messages come from it); schemes differ only in the guests'
control, the vSwitch and the switch's marking."""

from . import all_ports as _all_ports
from . import cc_table as _cc_table
from . import coexistence as _coexistence
from . import convergence as _convergence
from . import shuffle as _shuffle
from . import stride as _stride
from . import trace as _trace
from . import five_ccs as _five_ccs
from . import incast as _incast
from .all_ports import all_ports  # noqa: F401
from .cc_table import cc_table  # noqa: F401
from .coexistence import coexistence  # noqa: F401
from .convergence import convergence  # noqa: F401
from .common import SCHEMES  # noqa: F401
from .five_ccs import five_ccs  # noqa: F401
from .incast import incast  # noqa: F401
from .shuffle import shuffle  # noqa: F401
from .stride import stride  # noqa: F401
from .trace import trace  # noqa: F401

TITLE = "AC/DC TCP reproduction"

# Experiment name → its section (preset, out, runner) → HTML fragments. One line per experiment.
EXPERIMENTS = {
    "cc_table": _cc_table.section,
    "coexistence": _coexistence.section,
    "five_ccs": _five_ccs.section,
    "incast": _incast.section,
    "all_ports": _all_ports.section,
    "convergence": _convergence.section,
    "stride": _stride.section,
    "shuffle": _shuffle.section,
    "trace": _trace.section,
}
