"""Fuzzing the command line (hypothesis): random `--set` overrides, grids, files and arguments given to
`validate`, `run`, `sweep` and the result commands. Whatever the input, the CLI returns an exit code —
0, or 2 with one `error:` line — and never lets a Python exception out (no traceback)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from dcnlab.cli import main

from test_cli import SMALL

KEYS = ["seed", "name", "stop.time", "stop.max_time", "topology.hosts", "topology.kind", "topology.link.rate",
        "topology.link.delay", "switch.buffer", "switch.mtu", "switch.queues", "switch.aqm", "switch.aqm.kind",
        "switch.aqm.threshold", "switch.ecmp", "host.transport.cc", "host.transport.init_cwnd",
        "host.extra_delay", "traffic.0.load", "traffic.0.flows", "traffic.0.sizes", "traffic.0.src",
        "traffic.0.dst", "traffic.1.load", "record.queue_sample_interval", "record.queues", "nope.key", "", "a..b"]
VALUES = ["0", "-1", "1", "3", "0.5", "1e300", "nan", "inf", "true", "[]", "[1, 2]", "{}", '{ kind = "red" }',
          '{ kind = "tcn", threshold = "10us" }', '"1ps"', "5us", "-5us", "10Gbps", "0Gbps", "65KB", "99999999999999pkt",
          "abc", "", "😀", "web_search", "0-3", "3-0", "dctcp", "cubic", '"unterminated', "[[", "= =", "\x00"]

sets = st.lists(st.tuples(st.sampled_from(KEYS), st.one_of(st.sampled_from(VALUES), st.text(max_size=12))), max_size=3)


def call(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, err.getvalue()


def check(code: int, err: str) -> None:
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err, err
    if code == 2:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        assert lines and lines[-1].startswith("error: "), err


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(sets=sets)
def test_run_with_random_overrides(tmp_path: Path, sets):
    p = tmp_path / "s.toml"
    p.write_text(SMALL)
    args = [a for k, v in sets for a in ("--set", f"{k}={v}")]
    # The last word on the run's length, so that every case is short.
    check(*call("run", str(p), *args, "--set", 'stop={ time = "200us" }', "--set", "topology.hosts=8"))


@SETTINGS
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_validate_random_files(tmp_path: Path, data: bytes):
    p = tmp_path / "f.toml"
    p.write_bytes(data)
    check(*call("validate", str(p)))


@SETTINGS
@given(key=st.sampled_from(KEYS), values=st.lists(st.one_of(st.sampled_from(VALUES), st.text(max_size=8)), max_size=3),
       seeds=st.one_of(st.none(), st.integers(-2, 3)))
def test_sweep_random_grids(tmp_path: Path, key, values, seeds):
    p = tmp_path / "s.toml"
    p.write_text(SMALL.replace("flows = 150", "flows = 5"))
    grid = f"{key}=[{','.join(values)}]"
    args = ["sweep", str(p), "--grid", grid, "-j", "1", "-o", str(tmp_path / "sw"), "--set", 'stop={ time = "100us" }']
    if seeds is not None:
        args += ["--seeds", str(seeds)]
    check(*call(*args))


@SETTINGS
@given(cmd=st.sampled_from(["summary", "plot", "report", "compare", "run", "validate", "sweep", "reproduce", "schema", "bogus"]),
       rest=st.lists(st.one_of(st.sampled_from(["--set", "--grid", "-o", "--seeds", "-j", "--only", "--scale", "x=1", "", "-"]),
                               st.text(max_size=6)), max_size=4))
def test_random_arguments(tmp_path: Path, cmd, rest):
    # Relative paths land in a fresh folder; reproduce only gets here with a bad paper or option.
    if cmd == "reproduce" and rest[:1] == ["ecn_sharp"]:
        return
    with contextlib.chdir(tmp_path):
        check(*call(cmd, *rest))
