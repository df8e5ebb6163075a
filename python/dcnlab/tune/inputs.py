"""What the advisor reads: an RTT distribution (samples, or a CDF in `data/rtt/` format), the link rate,
the transport, the workload and the loads. Every bad input is a `ScenarioError` naming the option and
the fix, which the command line prints as one line with exit code 2."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import _core
from ..scenario import ScenarioError
from .rules import TAIL_PERCENTILE, TRANSPORTS, RttStats

# The core's built-in flow-size CDFs (`conventions.md`, `data/cdf/`).
WORKLOADS = ("web_search", "data_mining", "hadoop", "storage", "google_rpc")
FORMAT = "RTT samples in µs, one a line, or a CDF of `rtt_us cumulative_probability` lines (data/rtt/ format)"


@dataclass(frozen=True)
class RttDist:
    """An RTT distribution as points (rtt_us, F) of a piecewise-linear CDF starting at F = 0 — the form
    the core's `extra_delay = { kind = "cdf" }` draws from — and where it came from. Samples become a
    step CDF (two points per distinct value), so that draws are exactly the samples."""

    points: tuple[tuple[float, float], ...]
    source: str
    samples: int | None = None

    def quantile(self, q: float) -> float:
        """The value below which a fraction q lies (linear inside each segment, as the core draws)."""
        for (x0, f0), (x1, f1) in zip(self.points, self.points[1:]):
            if q <= f1 and f1 > f0:
                return x0 + (x1 - x0) * (max(q, f0) - f0) / (f1 - f0)
        return self.points[-1][0]

    def mean(self) -> float:
        """Mean by the trapezoid rule (exact for a piecewise-linear CDF; the core's `Cdf::mean`)."""
        return sum((x0 + x1) / 2 * (f1 - f0) for (x0, f0), (x1, f1) in zip(self.points, self.points[1:]))

    def stats(self, percentile: float = TAIL_PERCENTILE) -> RttStats:
        return RttStats(min_us=self.points[0][0], mean_us=self.mean(), tail_us=self.quantile(percentile / 100),
                        max_us=self.points[-1][0], percentile=percentile)

    def shifted(self, by_us: float) -> list[tuple[float, float]]:
        """The points less `by_us` (the extra host delay that makes these RTTs on a fabric whose own
        base RTT is `by_us`)."""
        return [(x - by_us, f) for x, f in self.points]


def _numbers(path: Path) -> list[tuple[int, list[float]]]:
    """(line number, values) of every line that is not blank or a `#` comment."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ScenarioError("--rtt", f"no file `{path}`; give {FORMAT}") from None
    except IsADirectoryError:
        raise ScenarioError("--rtt", f"`{path}` is a folder; give a file of {FORMAT}") from None
    except OSError as e:
        raise ScenarioError("--rtt", f"cannot read `{path}` ({e.strerror})") from None
    except UnicodeDecodeError:
        raise ScenarioError("--rtt", f"`{path}` is not UTF-8 text; give {FORMAT}") from None
    rows = []
    for i, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].replace(",", " ").split()
        if not body:
            continue
        vals = []
        for tok in body:
            try:
                v = float(tok)
            except ValueError:
                raise ScenarioError("--rtt", f"`{path}` line {i}: `{tok}` is not a number; give {FORMAT}") from None
            if not math.isfinite(v) or v < 0:
                raise ScenarioError("--rtt", f"`{path}` line {i}: `{tok}` must be a finite number ≥ 0")
            vals.append(v)
        rows.append((i, vals))
    return rows


def read_rtt(path: str | Path) -> RttDist:
    """An RTT file: one column (samples, µs) or two (a CDF, F in [0, 1] or in percent — the core's own
    `Cdf::parse` rule); the first data line decides which."""
    path = Path(path)
    rows = _numbers(path)
    if not rows:
        raise ScenarioError("--rtt", f"`{path}` holds no RTT values; give {FORMAT}")
    width = len(rows[0][1])
    if width not in (1, 2):
        raise ScenarioError("--rtt", f"`{path}` line {rows[0][0]}: {width} columns; give {FORMAT}")
    for i, vals in rows:
        if len(vals) != width:
            what = "a sample per line" if width == 1 else "two columns `rtt_us cumulative_probability`"
            raise ScenarioError("--rtt", f"`{path}` line {i}: {len(vals)} columns where the file started with {what}")
    if width == 1:
        return _from_samples(np.array([v[0] for _, v in rows]), path)
    return _from_cdf(rows, path)


def _from_samples(v: np.ndarray, path: Path) -> RttDist:
    if not (v > 0).all():
        raise ScenarioError("--rtt", f"`{path}`: an RTT of 0 µs; samples must be greater than zero")
    vals, counts = np.unique(v, return_counts=True)
    cum = np.cumsum(counts) / len(v)
    pts = [(float(vals[0]), 0.0)]
    for j, (x, c) in enumerate(zip(vals, cum)):
        if j:
            pts.append((float(x), float(cum[j - 1])))
        pts.append((float(x), float(c)))
    pts[-1] = (pts[-1][0], 1.0)
    return RttDist(tuple(pts), f"{path} ({len(v)} samples)", samples=len(v))


def _from_cdf(rows: list[tuple[int, list[float]]], path: Path) -> RttDist:
    if len(rows) < 2:
        raise ScenarioError("--rtt", f"`{path}`: a CDF needs at least two `rtt_us cumulative_probability` lines")
    last = rows[-1][1][1]
    scale = 100.0 if abs(last - 100.0) < 1e-6 else 1.0 if abs(last - 1.0) < 1e-9 else None
    if scale is None:
        raise ScenarioError("--rtt", f"`{path}` line {rows[-1][0]}: the last cumulative probability must be 1 (or 100 in percent), got {last:g}")
    pts = [(x, f / scale) for _, (x, f) in rows]
    for (i, _), (x0, f0), (x1, f1) in zip(rows[1:], pts, pts[1:]):
        if x1 < x0 or f1 < f0:
            raise ScenarioError("--rtt", f"`{path}` line {i}: not sorted — RTTs and probabilities must not decrease from one line to the next")
    if pts[0][1] > 0:  # a probability mass at the first value: make it a vertical step from F = 0
        pts.insert(0, (pts[0][0], 0.0))
    # Leading points at F = 0 hold no probability: the distribution starts at the last of them.
    while len(pts) > 2 and pts[1][1] == 0.0:
        pts.pop(0)
    if pts[-1][0] <= 0:
        raise ScenarioError("--rtt", f"`{path}`: every RTT is 0 µs; give RTTs in µs")
    return RttDist(tuple(pts), f"{path} (CDF, {len(rows)} points)")


def rate_bps(rate: str) -> float:
    """`--rate` in bits per second by the core's parser; a sign is refused here, by name."""
    s = str(rate).strip()
    if s.startswith("-"):
        raise ScenarioError("--rate", f"`{s}`: a link rate must be positive, e.g. 10Gbps")
    try:
        return float(_core.parse_rate_bps(s))
    except _core.ConfigError as e:
        raise ScenarioError("--rate", f"{e}") from None


def time_us(value: str, option: str) -> float:
    s = str(value).strip()
    if s.startswith("-"):
        raise ScenarioError(option, f"`{s}`: a time must not be negative, e.g. 1us")
    try:
        return float(_core.parse_time_us(s))
    except _core.ConfigError as e:
        raise ScenarioError(option, f"{e}") from None


def loads(text: str) -> list[float]:
    """`--loads 0.3,0.6,0.9`: each in (0, 1]."""
    out = []
    for tok in str(text).split(","):
        if not tok.strip():
            continue
        try:
            v = float(tok)
        except ValueError:
            raise ScenarioError("--loads", f"`{tok.strip()}` is not a number; give loads in (0, 1], e.g. 0.3,0.6,0.9") from None
        if not 0 < v <= 1:
            raise ScenarioError("--loads", f"`{tok.strip()}` is not in (0, 1]; give loads such as 0.3,0.6,0.9")
        out.append(v)
    if not out:
        raise ScenarioError("--loads", "no load given; e.g. 0.3,0.6,0.9")
    return out


def transport(name: str) -> str:
    if name not in TRANSPORTS:
        raise ScenarioError("--transport", f"unknown transport `{name}`; use one of: {', '.join(TRANSPORTS)}")
    return name


def workload(name: str) -> str:
    """A built-in flow-size CDF name, or a CDF file (as an absolute path, so the runs find it)."""
    if name in WORKLOADS:
        return name
    p = Path(name)
    if p.is_file():
        return str(p.resolve())
    raise ScenarioError("--workload", f"unknown workload `{name}`; use one of: {', '.join(WORKLOADS)}, or a flow-size CDF file")


def fabric(text: str) -> tuple[int, int, int]:
    """`--fabric SPINESxLEAVESxHOSTS` (e.g. 8x8x16, the ECN♯ large-scale leaf-spine)."""
    parts = str(text).lower().split("x")
    try:
        s, l, h = (int(p) for p in parts)
    except ValueError:
        raise ScenarioError("--fabric", f"`{text}` is not SPINESxLEAVESxHOSTS_PER_LEAF, e.g. 8x8x16") from None
    if min(s, l, h) < 1 or l < 2:
        raise ScenarioError("--fabric", f"`{text}`: needs at least 1 spine, 2 leaves and 1 host per leaf (flows cross racks)")
    # Every leaf port is listed for sampling: refuse before building that list (the memory check comes next).
    if l * (s + h) > MAX_LEAF_PORTS:
        raise ScenarioError("--fabric", f"`{text}` has {l * (s + h):,} leaf ports, more than the {MAX_LEAF_PORTS:,} this "
                            "verification samples; use a smaller fabric (the rules do not depend on its size)")
    return s, l, h


MAX_LEAF_PORTS = 100_000
