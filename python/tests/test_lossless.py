"""Lossless priorities through the Python front: `pauses` and `ports` as DataFrames, a failed run as
`SimulationFailed` with its records, `dcnlab run` exiting 3 with the cycle, and a bad PFC key exiting 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dcnlab

INCAST = """
name = "pfc incast"
seed = 3
stop = { all_flows_done = true, max_time = "50ms" }
[topology]
kind = "star"
hosts = 9
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "300KB"
pfc = { priorities = [0], xoff = "20KB" }
[host.transport]
kind = "tcp"
cc = "reno"
[[traffic]]
kind = "incast"
senders = [1, 2, 3, 4, 5, 6, 7, 8]
receiver = 0
size = "1MB"
at = "0us"
"""


def ring(tmp: Path, on_deadlock: str) -> Path:
    links = []
    for i in range(5):
        links.append(f'{{ a = "h{i}", b = "s{i}", rate = "10Gbps", delay = "1us" }}')
        links.append(f'{{ a = "s{i}", b = "s{(i + 1) % 5}", rate = "10Gbps", delay = "1us" }}')
    (tmp / "ring5.toml").write_text("hosts = 5\nswitches = 5\nlinks = [\n" + ",\n".join(links) + "\n]\n")
    flows = ", ".join(f'{{ src = {i}, dst = {(i + 2) % 5}, size = "10MB" }}' for i in range(5))
    p = tmp / "ring.toml"
    p.write_text(f"""
seed = 1
stop = {{ time = "5ms" }}
[topology]
kind = "file"
path = "ring5.toml"
[switch]
buffer = "1MB"
pfc = {{ priorities = [0], xoff = "20KB", deadlock_timeout = "500us", on_deadlock = "{on_deadlock}" }}
[host.transport]
kind = "tcp"
cc = "reno"
[[traffic]]
kind = "flows"
list = [{flows}]
""")
    return p


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcnlab", *args], capture_output=True, text=True)


def test_pauses_and_ports_are_dataframes():
    r = dcnlab.run(INCAST)
    assert r.meta["flows_finished"] == 8 and r.meta["drops"]["buffer"] == 0
    assert set(r.pauses["event"]) == {"pause", "resume"} and set(r.pauses["direction"]) == {"sent", "received"}
    sent = r.pauses[r.pauses.direction == "sent"]
    assert set(sent["node"]) == {"sw0"}
    hosts = r.ports[r.ports.node.str.startswith("h") & (r.ports.node != "h0")]
    assert len(hosts) == 8 and (hosts.paused_us > 0).all() and (hosts.pause_frames_received > 0).all()
    assert r.ports.pause_frames_sent.sum() == len(sent)


def test_a_deadlock_fails_the_run_with_its_records(tmp_path: Path):
    with pytest.raises(dcnlab.SimulationFailed, match="PFC deadlock") as e:
        dcnlab.run(dcnlab.FileScenario.open(ring(tmp_path, "fail")))
    assert e.value.result.meta["stop_reason"] == "failed"
    assert e.value.result.meta["flows_total"] == 5
    r = dcnlab.run(dcnlab.FileScenario.open(ring(tmp_path, "record")))
    assert len(r.meta["deadlocks"]) == 1 and r.meta["stop_reason"] == "time"


def test_cli_exits_3_on_a_deadlock_and_2_on_a_bad_key(tmp_path: Path):
    p = cli("run", str(ring(tmp_path, "fail")), "-o", str(tmp_path / "out"))
    assert p.returncode == 3, p.stderr
    assert "PFC deadlock" in p.stderr and "s0 port" in p.stderr and "Traceback" not in p.stderr
    assert (tmp_path / "out" / "pauses.parquet").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text(INCAST.replace('xoff = "20KB"', 'xoff = "20KB", mode = "sometimes"'))
    p = cli("run", str(bad))
    assert p.returncode == 2 and "switch.pfc.mode" in p.stderr and "Traceback" not in p.stderr
