"""Sweeps and reproductions on a Ray cluster: `--backend ray [--address …]` (the optional extra
`dcnlab[ray]`; docs/cluster.md).

Each job `(scenario, base_dir, cache_dir)` whose records are not yet in the cache runs as one Ray task:
the task computes `fn` on the worker against a scratch cache folder and sends back `fn`'s value and the
run's record files. This process writes those files into `cache_dir` (atomically, as `Result.save`
does), so the cache is the one a local sweep uses and workers need no shared filesystem. Jobs already
cached are computed here, without the cluster. A task whose worker dies (a crash, a lost node) is run
again by Ray, up to `retries` times; an error of the scenario itself is raised as it is, not retried.

Workers must import the same version of `dcnlab` and see the files a scenario names (flow files, CDFs)
at the same paths: one container image or virtual environment on every node."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from .scenario import ScenarioError

# Only the simulation's own failures are final; a worker that vanished is retried.
RETRIES = 3


def _ray(local: bool = False):
    """The `ray` module. For a local instance (`local`), the first import tells Ray to bind it to
    127.0.0.1 only: on Linux Ray otherwise replaces a loopback node address with the primary interface's
    and listens on every interface (the setting is the one Ray reads for single-machine use)."""
    if importlib.util.find_spec("ray") is None:
        raise ScenarioError("--backend", "`ray` needs the optional extra: pip install 'dcnlab[ray]'")
    if local and "ray" not in sys.modules:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    return ray


def reachable(address: str, timeout_s: float = 5.0) -> None:
    """A `HOST:PORT` or `ray://HOST:PORT` address that accepts a connection within `timeout_s`; Ray's own
    client would retry an unreachable one for minutes. `auto` is left to Ray (it fails at once)."""
    hostport = address.removeprefix("ray://")
    if address == "auto" or ":" not in hostport:
        return
    host, _, port = hostport.rpartition(":")
    fix = "start one with `ray start --head` or omit --address for a local one"
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except ValueError:
        raise ScenarioError("--address", f"`{address}` is not HOST:PORT; {fix}") from None
    except OSError as e:
        raise ScenarioError("--address", f"no Ray cluster answers at `{address}` ({e.strerror or e}); {fix}") from None


def run_remote(fn: Callable[[Any], Any], job: tuple) -> tuple[Any, dict[str, bytes] | None]:
    """On a worker: `fn` of the job with its cache folder swapped for a scratch one; returns fn's value
    (the scratch path, wherever fn puts it in its value, becomes the real one again) and the record
    files written."""
    scenario, base_dir, cache_dir = job
    with tempfile.TemporaryDirectory(prefix="dcnlab-ray-") as tmp:
        entry = Path(tmp) / "run"
        value = fn((scenario, base_dir, str(entry)))
        files = {p.name: p.read_bytes() for p in entry.iterdir()} if (entry / "meta.json").exists() else None
    return _swap(value, str(entry), cache_dir), files


def _swap(value: Any, scratch: str, real: str) -> Any:
    """`value` with every string or path equal to `scratch` replaced by `real` (reproductions return
    the cache folder, alone or in a row, to read records from it later)."""
    if isinstance(value, (str, Path)):
        return type(value)(real) if str(value) == scratch else value
    if isinstance(value, dict):
        return {k: _swap(v, scratch, real) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_swap(v, scratch, real) for v in value)
    return value


def store(cache_dir: str | Path, files: dict[str, bytes]) -> None:
    """Write a run's record files into its cache folder: a temporary sibling renamed into place."""
    d = Path(cache_dir)
    d.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.", suffix=".partial", dir=d.parent))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if d.exists():
            shutil.rmtree(d)
        tmp.rename(d)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class RayRunner:
    """Runs jobs as Ray tasks. `address`: None starts a Ray instance on this machine (bound to
    127.0.0.1, `jobs` CPUs, default all; see `_ray`) and stops it with `close()`; `"auto"` or `"HOST:PORT"` joins a
    running cluster; `"ray://HOST:10001"` goes through Ray Client. Usage statistics stay off unless
    `RAY_USAGE_STATS_ENABLED` says otherwise."""

    def __init__(self, address: str | None = None, jobs: int | None = None,
                 progress: Callable[[int, int], None] | None = None, log: Callable[[str], None] | None = None,
                 retries: int = RETRIES):
        _ray()  # a missing extra is an error before anything runs
        self.address, self.jobs, self.progress, self.log, self.retries = address, jobs, progress, log, retries
        self._started = False

    def _init(self):
        ray = _ray(local=self.address is None)
        if not ray.is_initialized():
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if self.address is None:
                kw |= {"num_cpus": self.jobs or os.cpu_count(), "_node_ip_address": "127.0.0.1"}
            else:
                reachable(self.address)
            try:
                ray.init(address=self.address, **kw)
            except (ConnectionError, ValueError, RuntimeError) as e:
                raise ScenarioError("--address", f"cannot reach a Ray cluster at `{self.address}` ({e}); start one "
                                    "with `ray start --head` or omit --address for a local one (a cluster with token "
                                    "authentication also needs RAY_AUTH_MODE=token here and its token)") from None
            self._started = self.address is None
        if self.log:
            nodes = [n for n in ray.nodes() if n.get("Alive")]
            cpus = ray.cluster_resources().get("CPU", 0)
            self.log(f"ray: {len(nodes)} node{'s' * (len(nodes) != 1)}, {cpus:g} CPUs")
        return ray

    def map(self, fn, items):
        from .sweep import complete

        items = list(items)
        out: list[Any] = [None] * len(items)
        done = 0
        todo = []
        for i, job in enumerate(items):
            if complete(job[2]):
                out[i] = fn(job)
                done += 1
            else:
                todo.append(i)
        if self.progress and done:
            self.progress(done, len(items))
        if not todo:
            return out
        ray = self._init()
        task = ray.remote(num_cpus=1, max_retries=self.retries, retry_exceptions=False)(run_remote)
        refs = {task.remote(fn, items[i]): i for i in todo}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
                for ref in ready:
                    i = refs[ref]
                    try:
                        value, files = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        # The scenario's own error (ConfigError, SimulationFailed, …), as a local run raises it.
                        raise (e.cause if e.cause is not None else e) from None
                    if files is not None:
                        store(items[i][2], files)
                    out[i] = value
                    done += 1
                    if self.progress:
                        self.progress(done, len(items))
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        return out

    def close(self) -> None:
        """Stop the Ray instance this runner started (a cluster it joined is left running)."""
        if self._started:
            _ray().shutdown()
            self._started = False

