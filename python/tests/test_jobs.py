"""Traffic made of jobs from Python: the `jobs` table reaches DataFrames and saved results, the IOPS and
training-speed summaries match their closed forms on an idle fabric, and the reduced storage and
training reproductions of ACC (§5.3) give what is robust: IOPS under the links' capacity, and the low
static thresholds (SECN1) slowing training against the high ones (SECN2) in the PS's 7:1 incast. Nothing
here asserts that ACC beats a static setting (experiments/acc/README.md says what we measured)."""

from __future__ import annotations

from importlib import import_module

import numpy as np
import pytest

from dcnlab import jobs as J
from dcnlab.results import load, run
from dcnlab.sweep import SerialRunner

# The modules (the package re-exports their entry functions under the same names).
S = import_module("dcnlab.reproduce.acc.storage")
T = import_module("dcnlab.reproduce.acc.training")

STAR = """
seed = 2
stop = {stop}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "25Gbps", delay = "1us" }}
[switch]
buffer = "16MB"
mtu = 1044
queues = 2
aqm = [{{ kind = "droptail" }}, {{ kind = "droptail" }}]
pfc = {{ priorities = [0, 1] }}
[host]
transport = {{ kind = "rdma", cc = "dcqcn", preset = "dcqcn_hpcc", control_priority = 0 }}
[[traffic]]
priority = 1
{traffic}
"""


def test_iops_at_depth_one_is_one_over_the_mean_io_time_and_the_table_is_saved(tmp_path):
    traffic = 'kind = "storage"\npattern = "video_streaming"\nservers = [1, 2]\nclients = [0]\nio_depth = 1'
    r = run(STAR.format(stop='{ time = "10ms" }', hosts=3, traffic=traffic))
    j = r.jobs
    assert list(j.columns)[:4] == ["job_id", "entry", "kind", "start_us"]
    done = j[j["finished"]]
    assert len(done) > 50 and set(done["kind"]) <= {"read", "write"}
    # One IO at a time, each issued as the previous completes: IOPS over the span of the finished IOs is
    # 1 / their mean time; a read moves 64 B + 64 KiB, a write 2 × 64 KiB + 64 B.
    a, b = done["start_us"].iloc[0], done["finish_us"].iloc[-1]
    assert J.iops(j, a, b + 1e-6) == pytest.approx(1e6 / done["duration_us"].mean(), rel=1e-6)
    assert set(done.loc[done["kind"] == "read", "bytes"]) == {65536 + 64}
    assert set(done.loc[done["kind"] == "write", "bytes"]) == {2 * 65536 + 64}
    # Each IO is at least its messages' serialisation at 25 Gb/s (64 KiB: 21 µs with headers).
    w = done.loc[done["kind"] == "write", "duration_us"]
    assert w.min() > 2 * 65536 * 8 / 25e3
    saved = load(r.save(tmp_path / "run"))
    assert saved.jobs.equals(r.jobs)


def test_training_speed_is_workers_times_batch_over_the_iteration_time():
    traffic = 'kind = "training"\nmodel = "alexnet"\ncompute = "2ms"\ngradient = "1MB"\niterations = 3'
    r = run(STAR.format(stop='{ all_flows_done = true, max_time = "1s" }', hosts=8, traffic=traffic))
    it = r.jobs
    assert list(it["kind"]) == ["iteration"] * 3 and it["finished"].all()
    assert (it["flows"] == 14).all() and (it["bytes"] == 14_000_000).all()
    # Compute, then 7 MB into the PS's link and 7 MB out of it at line rate (no marking here).
    ideal_us = 2000 + 2 * 7 * 1e6 * 1044 / 1000 * 8 / 25e3
    assert J.iteration_time(it) == pytest.approx(ideal_us, rel=0.03)
    assert J.training_speed(it) == pytest.approx(7 * 64 / (J.iteration_time(it) * 1e-6))
    assert J.training_speed(it, skip=1) == pytest.approx(448 / (it["duration_us"].iloc[1:].mean() * 1e-6))
    assert np.isnan(J.iteration_time(it, skip=3))


def test_reduced_storage_reproduction_stays_under_the_storage_nodes_capacity(tmp_path):
    raw, summary, change = S.storage("small", tmp_path, runner=SerialRunner(), patterns=["vdi"], depths=[16],
                                     schemes=["SECN"], measure_ms=5)
    row = raw.iloc[0]
    assert row["ios"] > 1000 and row["lat_mean_us"] > 0
    # VDI: 80 % writes, each block into a storage node twice (data, then its copy); reads take it out.
    # Six 25 Gb/s storage links bound the block bytes coming in.
    mean_block = np.mean([1024 * 2**i for i in range(7)])
    into_servers = row["iops"] * (1 - row["read_iops"] / row["iops"]) * 2 * mean_block * 8
    assert into_servers < 6 * 25e9, into_servers
    assert 0.1 < row["read_iops"] / row["iops"] < 0.3
    assert list(change.columns[:4]) == ["pattern", "io_depth", "SECN IOPS", "ACC IOPS"]


def test_reduced_training_reproduction_low_thresholds_slow_the_push_phase(tmp_path):
    raw, summary, change = T.training("small", tmp_path, runner=SerialRunner(), models=["resnet50"],
                                      schemes=["SECN1", "SECN2"], iterations=2, skip=1)
    by = summary.set_index("scheme")["images_per_s"]
    ideal = 7 * 64 / T.ideal_iteration_s("resnet50")
    assert (by <= ideal * 1.001).all(), (by, ideal)
    # SECN1's 5 KB Kmin marks the seven pushes into the PS early and DCQCN leaves the PS's link idle
    # part of the time; SECN2's 100 KB does not (8 % apart in our runs).
    assert by["SECN2"] > 1.02 * by["SECN1"], by
    assert by["SECN2"] > 0.95 * ideal
