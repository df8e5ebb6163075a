"""The memory estimate: `dcnlab.estimate`, the CLI's refusal of what the machine cannot hold (`run`,
`validate`, `sweep`, with `--force`), the numbers too large for the engine as one line with exit 2, and
the estimate against the peak memory a run really takes."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dcnlab

BASE = """
stop = { time = "1ms" }
[topology]
kind = "star"
hosts = 17
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "1MB"
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 1, size = "100KB", start = "10us" }]
"""

STAR = BASE.replace("hosts = 17", "hosts = 200000000")
FAT_TREE_64 = BASE.replace('kind = "star"\nhosts = 17\nlink', 'kind = "fat_tree"\nk = 64\nlink')
FINE_SAMPLES = BASE.replace('time = "1ms"', 'time = "100s"') + '[record]\nqueue_sample_interval = "1ps"\nqueues = "all"\n'
INCAST = BASE.split("[[traffic]]")[0] + (
    '[[traffic]]\nkind = "incast"\nsenders = "0-15"\nreceiver = 16\nsize = "1KB"\nat = "0us"\nrepeat = 2000000000\nperiod = "1us"\n'
)


def cli(*args: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `dcnlab ARGS` in a child of a fresh interpreter; (result, seconds, the child's peak RSS in MiB)."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        f" r = subprocess.run([sys.executable, '-m', 'dcnlab', *{list(args)!r}], capture_output=True, text=True);"
        " print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024);"
        " sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); sys.exit(r.returncode)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    first, _, rest = r.stdout.partition("\n")
    secs, rss = map(float, first.split())
    return subprocess.CompletedProcess(r.args, r.returncode, rest, r.stderr), secs, rss


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_estimate_counts_a_scenario():
    e = dcnlab.estimate(BASE)
    assert (e["hosts"], e["switches"], e["ports"], e["flows"]) == (17, 1, 34, 1)
    assert e["limit"] is None and e["bytes"] == sum(b for _, b in e["parts"])
    assert "17 hosts" in e["text"]
    with pytest.raises(dcnlab.ConfigError, match="switch.buffer"):
        dcnlab.estimate(BASE.replace('"1MB"', '"1 MBB"'))
    e = dcnlab.estimate(FAT_TREE_64)
    assert e["route_next_hops"] == 8_590_000_128 and e["limit"][0] == "topology.k"


@pytest.mark.parametrize(
    "text, field",
    [
        (BASE.replace('buffer = "1MB"', 'buffer = "99999999999999pkt"'), "`switch.buffer`"),
        (BASE.replace('kind = "star"\nhosts = 17\nlink = { rate = "10Gbps", delay = "1us" }',
                      'kind = "leaf_spine"\nspines = 2\nleaves = 65536\nhosts_per_leaf = 65537\n'
                      'host_link = { rate = "10Gbps", delay = "1us" }\nfabric_link = { rate = "10Gbps", delay = "1us" }'),
         "`topology.hosts_per_leaf`"),
        (BASE + "[record]\ntrace_flows = [4294967296]\n", "`record.trace_flows[0]`"),
        (INCAST.replace('period = "1us"', 'period = "10ms"'), "`traffic[0].repeat`"),
        (BASE.replace('time = "1ms"', 'time = "20000000s"'), "`stop.time`"),
    ],
)
def test_numbers_too_large_for_the_engine_are_one_line_exit_2(tmp_path: Path, text: str, field: str):
    p = write(tmp_path, text)
    for cmd in ("validate", "run"):
        r, _, _ = cli(cmd, str(p))
        assert r.returncode == 2, (cmd, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0], (cmd, r.stderr)
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("text", [STAR, FAT_TREE_64, FINE_SAMPLES, INCAST], ids=["star_2e8", "fat_tree_64", "1ps_samples", "incast_2e9"])
def test_what_the_machine_cannot_hold_is_refused_before_anything_is_built(tmp_path: Path, text: str):
    p = write(tmp_path, text)
    for cmd in ("run", "validate"):
        r, secs, rss = cli(cmd, str(p))
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert "estimate for" in r.stdout and "hosts" in r.stdout, r.stdout
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
        # Quickly, and with no more memory than the interpreter itself takes.
        assert secs < 30 and rss < 400, (cmd, secs, rss)
    r, _, _ = cli("run", str(p))
    if "is available" in r.stderr:
        assert "--force" in r.stderr
    r, _, rss = cli("sweep", str(p), "--grid", "switch.buffer=[1MB,2MB]", "-o", str(tmp_path / "sweep"))
    assert r.returncode == 2 and "estimate for" in r.stdout and rss < 400, r.stderr
    assert not (tmp_path / "sweep").exists(), "nothing ran"


def test_force_builds_what_the_estimate_refuses(tmp_path: Path):
    # 10¹⁴ samples would be refused; validate builds the scenario without recording any.
    p = write(tmp_path, FINE_SAMPLES)
    r, _, _ = cli("validate", str(p), "--force")
    assert r.returncode == 0 and "ok:" in r.stdout, r.stderr


def test_validate_prints_the_estimate(tmp_path: Path):
    p = write(tmp_path, BASE)
    r, _, _ = cli("validate", str(p))
    assert r.returncode == 0, r.stderr
    assert "estimate for" in r.stdout and "17 hosts, 1 switches, 34 ports, 1 flows" in r.stdout and "ok:" in r.stdout


MEDIUM = """
seed = 5
stop = { time = "100ms" }
[topology]
kind = "leaf_spine"
spines = 4
leaves = 4
hosts_per_leaf = 8
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "40Gbps", delay = "1us" }
[switch]
buffer = "4MB"
aqm = { kind = "dctcp_red", threshold = "100KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.3
flows = 600
[[traffic]]
kind = "incast"
senders = "0-30"
receiver = 31
size = "2KB"
at = "1ms"
repeat = 1200
period = "80us"
[record]
queue_sample_interval = "4us"
queues = "all"
"""

TINY = BASE.replace('time = "1ms"', 'time = "20us"')


def test_estimate_is_within_a_factor_of_the_peak_memory_a_run_takes(tmp_path: Path):
    """A run through the CLI (records handed to Python as pandas frames) in a child process: its peak RSS
    less that of a tiny run (the interpreter, numpy, pandas) against the estimates' difference. Measured
    when written: 604 MiB against an estimate of 482 MiB (0.8×)."""
    medium, tiny = write(tmp_path, MEDIUM, "medium.toml"), write(tmp_path, TINY, "tiny.toml")
    (r, _, rss_medium), (r2, _, rss_tiny) = cli("run", str(medium)), cli("run", str(tiny))
    assert r.returncode == 0 and r2.returncode == 0, (r.stderr, r2.stderr)
    measured = (rss_medium - rss_tiny) * 2**20
    estimated = dcnlab.estimate(MEDIUM)["bytes"] - dcnlab.estimate(TINY)["bytes"]
    assert measured > 200 * 2**20, "the scenario must hold enough to measure"
    assert 0.3 <= estimated / measured <= 3, (estimated / 2**20, measured / 2**20)
