"""The `dcnlab` command as a user runs it: run, summary, compare, plot, report (rendered in headless
Chromium), validate, sweep with its cache, and one clear line with exit code 2 for each class of error."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import dcnlab
from dcnlab.scenario import override, parse_value

ROOT = Path(__file__).resolve().parents[2]

SMALL = """
name = "cli test"
seed = 3
stop = { all_flows_done = true, max_time = "1s" }
[topology]
kind = "star"
hosts = 8
link = { rate = "10Gbps", delay = "2us" }
[switch]
buffer = "2MB"
aqm = { kind = "dctcp_red", threshold = "65KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.5
flows = 150
src = "0-6"
dst = 7
[record]
queue_sample_interval = "20us"
queues = [{ node = "sw0", port = 7 }]
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcnlab", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def test_issue_example_runs_as_written(tmp_path: Path):
    # The scenario of the front-end issue, verbatim except fewer flows to keep the test short.
    text = (ROOT / "python" / "tests" / "issue_example.toml").read_text().replace("flows = 2000", "flows = 300")
    r = dcnlab.run(text)
    assert r.meta["flows_total"] == 300 and r.meta["flows_finished"] == 300
    assert len(r.queues) > 0


def test_run_summary_compare_plot_report(scenario: Path, tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    r = cli("run", str(scenario), "-o", str(a))
    assert r.returncode == 0, r.stderr
    assert "all" in r.stdout and "(0B, 100KB]" in r.stdout and "150/150 flows" in r.stdout
    r = cli("run", str(scenario), "-o", str(b), "--set", "switch.aqm.threshold=20KB")
    assert r.returncode == 0, r.stderr
    assert dcnlab.load(a).flows["fct_us"].sum() != dcnlab.load(b).flows["fct_us"].sum()
    r = cli("summary", str(a))
    assert r.returncode == 0 and "slowdown" in r.stdout
    r = cli("compare", str(a), str(b))
    assert r.returncode == 0 and "×" in r.stdout and "sd_p99" in r.stdout
    plots = tmp_path / "plots"
    r = cli("plot", str(a), str(b), "-o", str(plots))
    assert r.returncode == 0, r.stderr
    for name in ("fct_cdf", "slowdown_by_bucket", "queue_occupancy", "link_utilization"):
        assert (plots / f"{name}.png").stat().st_size > 5000
        assert (plots / f"{name}.svg").read_text().startswith("<?xml")
    report = tmp_path / "report.html"
    r = cli("report", str(a), str(b), "-o", str(report))
    assert r.returncode == 0, r.stderr
    html = report.read_text()
    assert html.count("<img class='figure'") == 4 and "Comparison" in html
    assert "http://" not in html and "https://" not in html, "the page must be self-contained"
    check_rendered_in_chromium(report, tmp_path)


def check_rendered_in_chromium(report: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is needed (make test installs Debian's chromium package)"
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => { const imgs = [...document.images];"
        " const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100).length;"
        " document.body.setAttribute('data-rendered', ok + '/' + imgs.length); });</script>"
    )
    probe.write_text(report.read_text().replace("</body>", script + "</body>"))
    out = subprocess.run(
        [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'chrome'}", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    )
    m = re.search(r'data-rendered="(\d+)/(\d+)"', out.stdout)
    assert m, f"Chromium did not render the page: {out.stderr[-500:]}"
    assert m.group(1) == m.group(2) == "4", m.group(0)


def test_validate_and_errors_are_one_line_exit_2(scenario: Path, tmp_path: Path):
    assert cli("validate", str(scenario)).returncode == 0
    cases = {
        "unknown key": (SMALL.replace("hosts = 8", "hosts = 8\nhostz = 2"), "`topology.hostz`"),
        "unknown algorithm": (SMALL.replace('cc = "dctcp"', 'cc = "cubicc"'), "`host.transport.cc`"),
        "unknown topology": (SMALL.replace('kind = "star"', 'kind = "ring"'), "`topology.kind`"),
        "bad unit": (SMALL.replace('"2us"', '"2 fortnights"'), "`topology.link.delay`"),
        "missing unit": (SMALL.replace('"2us"', "2"), "`topology.link.delay`"),
        "zero rate": (SMALL.replace('"10Gbps"', '"0Gbps"'), "`topology.link.rate`"),
        "bad load": (SMALL.replace("load = 0.5", "load = 0"), "`traffic[0].load`"),
        "no such host": (SMALL.replace('dst = 7', 'dst = 70'), "`traffic[0].dst`"),
        "missing CDF file": (SMALL.replace('"web_search"', '"no/such.cdf"'), "`traffic[0].sizes`"),
        "not TOML": ("x = [", "not valid TOML"),
        "unknown trace tag": (SMALL.replace("[record]", '[record]\ntrace_tags = ["nope"]'), "`record.trace_tags[0]`"),
        "empty sample window": (SMALL.replace("[record]", '[record]\nsample_from = "2ms"\nsample_until = "1ms"'), "`record.sample_until`"),
        "traffic transport": (SMALL.replace("dst = 7", 'dst = 7\ntransport = { cc = "cubicc" }'), "`traffic[0].transport.cc`"),
        "traffic window": (SMALL.replace("dst = 7", 'dst = 7\nactive = { start = "2ms", stop = "1ms" }'), "`traffic[0].active.stop`"),
        "controller kind": (
            SMALL.replace('threshold = "65KB" }', 'threshold = "65KB" }\ncontroller = { kind = "schedule", changes = [{ at = "1ms", aqm = { kind = "tcn", threshold = "50us" } }] }'),
            "`switch.controller.changes[0].aqm.kind`",
        ),
        "unknown vswitch": (SMALL.replace('cc = "dctcp" }', 'cc = "dctcp" }\nvswitch = { kind = "acdcc" }'), "`host.vswitch.kind`"),
        "nic scheduling": (SMALL.replace('cc = "dctcp" }', 'cc = "dctcp" }\nnic = { scheduling = "rr" }'), "`host.nic.scheduling`"),
    }
    for what, (text, expect) in cases.items():
        p = tmp_path / "bad.toml"
        p.write_text(text)
        for cmd in ("validate", "run"):
            r = cli(cmd, str(p))
            assert r.returncode == 2, (what, cmd, r.stderr)
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], (what, r.stderr)
            assert "Traceback" not in r.stderr
    for args, expect in (
        (("run", str(tmp_path / "missing.toml")), "cannot read scenario file"),
        (("run", str(scenario), "--set", "oops"), "`--set`"),
        (("run", str(scenario), "--set", "traffic.4.load=0.1"), "`traffic.4`"),
        (("sweep", str(scenario), "--grid", "switch.aqm.threshold=20KB"), "`--grid`"),
        (("summary", str(tmp_path)), "holds no results"),
        (("reproduce", "ecn_flat"), "unknown paper"),
        (("reproduce", "ecn_sharp", "--scale", "huge"), "`--scale`"),
        (("reproduce", "ecn_sharp", "--only", "testbd"), "`--only`"),
    ):
        r = cli(*args)
        assert r.returncode == 2 and expect in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    r = cli("--debug", "validate", str(tmp_path / "missing.toml"))
    assert r.returncode != 0 and "Traceback" in r.stderr
    r = cli("frobnicate")
    assert r.returncode == 2 and "No such command" in r.stderr


def test_sweep_grid_seeds_and_cache(scenario: Path, tmp_path: Path):
    out = tmp_path / "sweep"
    args = ("sweep", str(scenario), "--grid", "switch.aqm.threshold=[20KB,100KB]", "--grid",
            "traffic.0.load=[0.3,0.6]", "--seeds", "2", "-j", "2", "-o", str(out))
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert "8 of 8 runs computed" in r.stderr
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 8 and set(runs["seed"]) == {3, 4}
    summ = pd.read_csv(out / "summary.csv")
    assert len(summ) == 4 and (summ["runs"] == 2).all()
    assert "all:sd_mean ±95%" in summ.columns and summ["all:sd_mean ±95%"].notna().all()
    # The same combination and seed gives the same numbers as a direct run.
    direct = dcnlab.run(override(dcnlab.scenario.load(scenario), {"switch.aqm.threshold": "20KB", "traffic.0.load": 0.3}))
    row = runs[(runs["switch.aqm.threshold"] == "20KB") & (runs["traffic.0.load"] == 0.3) & (runs["seed"] == 3)]
    assert row["all:fct_mean"].iloc[0] == pytest.approx(dcnlab.summary(direct).loc["all", "fct_mean"])
    # A re-run with one more value computes only the new combinations.
    r = cli(*args[:-2], "-o", str(out), "--grid", "host.transport.min_rto=[5ms]")
    assert r.returncode == 0, r.stderr
    r = cli("sweep", str(scenario), "--grid", "switch.aqm.threshold=[20KB,100KB,250KB]", "--grid",
            "traffic.0.load=[0.3,0.6]", "--seeds", "2", "-o", str(out))
    assert r.returncode == 0 and "4 of 12 runs computed, 8 from cache" in r.stderr, r.stderr


def test_override_and_values():
    base = dcnlab.scenario.load(ROOT / "experiments" / "demo.toml")
    v = override(base, {"switch.aqm.threshold": "100KB", "traffic.0.load": 0.6, "record.trace_flows": [1, 2]})
    assert v["switch"]["aqm"]["threshold"] == "100KB" and v["traffic"][0]["load"] == 0.6
    assert base["switch"]["aqm"]["threshold"] == "200KB", "the base is not modified"
    dcnlab.validate(v)
    assert parse_value("0.5") == 0.5 and parse_value("50KB") == "50KB" and parse_value("[1, 2]") == [1, 2]
    assert parse_value('{ kind = "sp" }') == {"kind": "sp"}


def test_summary_leaves_out_warmup(scenario: Path):
    text = SMALL.replace('seed = 3', 'seed = 3\nwarmup = "20ms"')
    r = dcnlab.run(text)
    s = dcnlab.summary(r)
    assert s.loc["all", "flows"] == int((r.flows["start_us"] >= 20_000).sum()) < len(r.flows)
    s2 = dcnlab.summary(r.flows, buckets=(0, 50_000, float("inf")))
    assert list(s2.index) == ["all", "(0B, 50KB]", "(50KB, inf]"]


def test_demo_compares_ecn_sharp_with_tail_and_avg(tmp_path: Path):
    r = cli("demo", "-o", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    assert "ECN# ×" in r.stdout and "DCTCP-RED-AVG ×" in r.stdout
    for d in ("DCTCP-RED-Tail", "DCTCP-RED-AVG", "ECNsharp"):
        assert (tmp_path / "demo" / d / "meta.json").exists()
    assert (tmp_path / "demo" / "report.html").read_text().count("<img class='figure'") == 4
    # What the demo shows (3000 web-search flows, 60 % load, 3× RTT variation): ECN♯ cuts short-flow FCT
    # against Tail (measured 0.80 avg, 0.88 p99), and AVG's low threshold costs large flows (1.09).
    s = {d: dcnlab.summary(dcnlab.load(tmp_path / "demo" / d)) for d in ("DCTCP-RED-Tail", "DCTCP-RED-AVG", "ECNsharp")}
    short, large = "(0B, 100KB]", "(10MB, inf]"
    tail, avg, sharp = s["DCTCP-RED-Tail"], s["DCTCP-RED-AVG"], s["ECNsharp"]
    assert sharp.loc[short, "fct_mean"] <= 0.9 * tail.loc[short, "fct_mean"]
    assert sharp.loc[short, "fct_p99"] < tail.loc[short, "fct_p99"]
    assert avg.loc[large, "fct_mean"] > tail.loc[large, "fct_mean"]
    assert all(x.loc["all", "unfinished"] == 0 for x in s.values())


def test_a_cached_run_of_another_records_version_is_computed_again(scenario: Path, tmp_path: Path):
    """The sweep cache keys runs by scenario; a fix that changes records bumps the core's RECORDS_VERSION,
    and an entry written by another version is run again instead of standing for this build's result."""
    import json

    from dcnlab import _core
    from dcnlab.sweep import cached_result, complete

    entry = tmp_path / "runs" / "one"
    job = (dcnlab.scenario.load(scenario), str(scenario.parent), str(entry))
    r = cached_result(job)
    assert r.meta["records_version"] == _core.RECORDS_VERSION >= 2 and complete(entry)
    meta = json.loads((entry / "meta.json").read_text())
    meta["records_version"] = _core.RECORDS_VERSION - 1
    meta["name"] = "written by an older build"
    (entry / "meta.json").write_text(json.dumps(meta))
    assert not complete(entry)
    again = cached_result(job)
    assert again.meta["records_version"] == _core.RECORDS_VERSION and again.meta["name"] != "written by an older build"
    assert complete(entry) and cached_result(job).meta["name"] == again.meta["name"]
    assert again.flows.equals(r.flows)
