"""Sweeps on a Ray cluster (`--backend ray`): the same records and cache as the local process pool, progress,
a lost worker's run retried, the scenario's own errors raised once, and a running cluster joined by
address. Every cluster here is bound to 127.0.0.1 with usage statistics off."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="the optional extra dcnlab[ray]; `make test` installs it")

from dcnlab.ray_runner import RayRunner  # noqa: E402
from dcnlab.results import load  # noqa: E402
from dcnlab.scenario import ScenarioError  # noqa: E402
from dcnlab.sweep import cached_result  # noqa: E402

from test_cli import SMALL, cli  # noqa: E402

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# What `RayRunner` sets for a local instance, given to the `ray start` cluster too: every part of it
# listens on 127.0.0.1 only. A driver joining a cluster by address sends the cluster's token only in
# token mode (the token itself is in ~/.ray/auth_token, which `ray start` writes).
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token"}
# Ray's workers unpickle this module's functions by value: they cannot import the tests folder.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

GRID = ("--grid", "switch.aqm.threshold=[20KB,100KB]", "--seeds", "2")


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def _records(d: Path) -> dict[str, bytes]:
    return {f"{run.name}/{f.name}": f.read_bytes() for run in sorted((d / "runs").iterdir()) for f in sorted(run.glob("*.parquet"))}


def test_ray_sweep_matches_the_local_pool_and_shares_its_cache(scenario: Path, tmp_path: Path):
    local, remote = tmp_path / "local", tmp_path / "ray"
    r = cli("sweep", str(scenario), *GRID, "-j", "2", "-o", str(local))
    assert r.returncode == 0, r.stderr
    r = cli("sweep", str(scenario), *GRID, "-j", "2", "--backend", "ray", "-o", str(remote))
    assert r.returncode == 0, r.stderr
    assert "ray: 1 node, 2 CPUs" in r.stderr and "runs 4/4 (100 %)" in r.stderr, r.stderr
    assert "4 of 4 runs computed" in r.stderr
    a, b = (pd.read_csv(d / "runs.csv").drop(columns="wall_s") for d in (local, remote))
    pd.testing.assert_frame_equal(a, b)
    from dcnlab.results import TABLES

    assert len(_records(remote)) == 4 * len(TABLES)
    assert _records(local) == _records(remote), "Parquet records differ byte for byte"
    # The cache the Ray run wrote is the local pool's: nothing is run again.
    r = cli("sweep", str(scenario), *GRID, "-j", "2", "-o", str(remote))
    assert r.returncode == 0 and "0 of 4 runs computed, 4 from cache" in r.stderr, r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_joins_a_running_cluster_by_address(scenario: Path, tmp_path: Path):
    ray_bin = str(Path(sys.executable).with_name("ray"))
    port = _free_port()
    env = os.environ | LOOPBACK
    # Ray's sockets live under its temp folder, whose path must stay short (Unix sockets: 107 bytes).
    temp = tempfile.mkdtemp(prefix="dcnlab-ray-", dir="/tmp")
    start = [ray_bin, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "1",
             "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp]
    s = subprocess.run(start, capture_output=True, text=True, timeout=120, env=env)
    assert s.returncode == 0, s.stderr[-2000:]
    try:
        r = subprocess.run([sys.executable, "-m", "dcnlab", "sweep", str(scenario), "--grid", "switch.aqm.threshold=[20KB,100KB]",
                            "--backend", "ray", "--address", f"127.0.0.1:{port}", "-o", str(tmp_path / "out")],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "ray: 1 node, 1 CPUs" in r.stderr and "2 of 2 runs computed" in r.stderr, r.stderr
        assert len(list((tmp_path / "out" / "runs").iterdir())) == 2
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, timeout=120, env=env)
        shutil.rmtree(temp, ignore_errors=True)


def _dies_once(marker: Path):
    """A job function whose worker crashes the first time, as on a lost node; the second attempt runs the
    job. Attempts are counted in `marker` (the task's own cache folder is a scratch one)."""

    def fn(job):
        n = int(marker.read_text()) if marker.exists() else 0
        marker.write_text(str(n + 1))
        if n == 0:
            os._exit(1)
        return cached_result(job)

    return fn


def _fails(marker: Path):
    """A job function that raises the scenario's own error, counting its attempts in `marker`."""

    def fn(job):
        marker.write_text(str(int(marker.read_text()) + 1 if marker.exists() else 1))
        raise ScenarioError("traffic.0.load", "planted error")

    return fn


@pytest.fixture(scope="module")
def runner():
    r = RayRunner(jobs=2)
    yield r
    r.close()


def test_a_lost_worker_is_retried_and_its_run_kept(runner: RayRunner, tmp_path: Path):
    import tomllib

    job = (tomllib.loads(SMALL) | {"seed": 5}, str(tmp_path), str(tmp_path / "runs" / "a"))
    out = runner.map(_dies_once(tmp_path / "a.attempts"), [job])
    assert (tmp_path / "a.attempts").read_text() == "2", "the task ran once, died, and was run once more"
    assert out[0].meta["flows_finished"] == 150
    assert load(tmp_path / "runs" / "a").meta["flows_finished"] == 150, "the retried run is in the cache"


def test_a_scenario_error_is_raised_once_not_retried(runner: RayRunner, tmp_path: Path):
    job = ({}, str(tmp_path), str(tmp_path / "runs" / "b"))
    with pytest.raises(ScenarioError, match="planted error"):
        runner.map(_fails(tmp_path / "b.attempts"), [job])
    assert (tmp_path / "b.attempts").read_text() == "1"
    assert not (tmp_path / "runs" / "b").exists()
