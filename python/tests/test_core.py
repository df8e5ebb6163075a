"""The Python front over the Rust core: runs, records as DataFrames, errors, determinism."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dcnlab

STAR = """
seed = 5
stop = { all_flows_done = true, max_time = "1s" }
[topology]
kind = "star"
hosts = 8
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "1MB"
aqm = { kind = "dctcp_red", threshold = "65KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.5
flows = 200
src = "0-6"
dst = 7
[record]
queue_sample_interval = "100us"
queues = "all"
"""


def test_run_returns_dataframes_with_convention_columns():
    r = dcnlab.run(STAR)
    assert list(r.flows.columns) == [
        "flow_id", "src", "dst", "size", "tag", "start_us", "finish_us", "fct_us", "ideal_fct_us",
        "standalone_fct_us", "slowdown", "retransmits", "timeouts", "finished", "base_rtt_us", "transport",
        "ce_marks", "ue_marks",
    ]
    assert len(r.flows) == 200 and r.flows["finished"].all()
    assert (r.flows["slowdown"] >= 1.0).all()
    # Every packet sent was delivered, dropped or is still in flight (the accounting would break first).
    c = r.meta["conservation"]
    assert c["sent_packets"] == c["delivered_packets"] + c["dropped_packets"] + c["in_flight_packets"] > 0
    assert c["sent_bytes"] == c["delivered_bytes"] + c["dropped_bytes"] + c["in_flight_bytes"]
    assert list(r.queues.columns) == ["time_us", "node", "port", "queue", "bytes", "packets", "marks", "drops"]
    assert len(r.queues) > 0 and set(r.queues["node"]) == {"sw0"}
    assert r.meta["flows_finished"] == 200 and r.meta["conservation"]["sent_packets"] > 0


def test_same_scenario_same_records(tmp_path: Path):
    a, b = dcnlab.run(STAR), dcnlab.run(STAR)
    assert a.flows.equals(b.flows) and a.queues.equals(b.queues)
    a.save(tmp_path / "a")
    c = dcnlab.load(tmp_path / "a")
    assert c.flows.equals(a.flows)


def test_summary_buckets_and_unfinished():
    r = dcnlab.run(STAR.replace('max_time = "1s"', 'max_time = "150ms"'))
    s = dcnlab.summary(r.flows)
    assert list(s.index) == ["all", "(0B, 100KB]", "(100KB, 10MB]", "(10MB, inf]"]
    assert s.loc["all", "flows"] == len(r.flows)
    assert s.loc["all", "unfinished"] == int((~r.flows["finished"]).sum())
    small = r.flows[(r.flows["size"] <= 100_000) & r.flows["finished"]]
    assert s.loc["(0B, 100KB]", "fct_mean"] == pytest.approx(small["fct_us"].mean())


def test_progress_callback_reports_time():
    seen = []
    dcnlab.run(STAR, progress=lambda t, done, started, ev: seen.append((t, done)), progress_every_s=0.0)
    # With no wall-clock spacing the callback comes after every slice of events, and once at the end.
    assert len(seen) >= 2 and seen[-1][1] == 200
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_dict_scenario():
    d = {
        "stop": {"time": "5ms"},
        "topology": {"kind": "star", "hosts": 2, "link": {"rate": "10Gbps", "delay": "1us"}},
        "traffic": [{"kind": "flows", "list": [{"src": 0, "dst": 1, "size": "10KB"}]}],
    }
    r = dcnlab.run(d)
    assert r.flows["slowdown"].iloc[0] == 1.0


def test_config_error_names_field():
    with pytest.raises(dcnlab.ConfigError) as e:
        dcnlab.run(STAR.replace('"10Gbps"', '"10Gbs"'))
    assert e.value.field == "topology.link.rate"
    assert "Gbps" in str(e.value)


def test_cli_error_is_one_line_exit_2(tmp_path: Path):
    p = tmp_path / "bad.toml"
    p.write_text(STAR.replace("load = 0.5", "load = 1.5"))
    r = subprocess.run([sys.executable, "-m", "dcnlab", "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == "error: `traffic[0].load`: load must be in (0, 1], got 1.5"
    assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "dcnlab", "validate", str(tmp_path / "missing.toml")], capture_output=True, text=True)
    assert r.returncode == 2 and "cannot read scenario file" in r.stderr


def test_gil_is_released_while_simulating():
    import threading

    long_run = STAR.replace("flows = 200", "flows = 3000").replace('max_time = "1s"', 'max_time = "20s"')
    done = threading.Event()
    t = threading.Thread(target=lambda: (dcnlab.run(long_run, progress_every_s=1e9), done.set()))
    ticks = 0
    t.start()
    while not done.is_set():
        ticks += 1
        done.wait(0.001)
    t.join()
    # With the GIL held for the whole run this loop could not advance until the run ended.
    assert ticks > 50, ticks


def test_rtt_helpers_follow_k_equals_lambda_c_rtt():
    from dcnlab import rtt

    # 7 senders, 17.5 µs links: base RTT 70 µs + serialisation; per-flow extra delay 0 or 140 µs.
    sc = STAR.replace('delay = "1us"', 'delay = "17.5us"').replace(
        'transport = { kind = "tcp", cc = "dctcp" }',
        'transport = { kind = "tcp", cc = "dctcp" }\nextra_delay = { kind = "choice", values = ["0us", "140us"], weights = [0.8, 0.2], per = "flow" }',
    )
    r = dcnlab.run(sc)
    s = rtt.stats(r)
    base = 70 + 2 * 1.2 + 2 * 0.0512  # propagation + MTU out + ACK back at 10 Gbps
    assert s["min"] == pytest.approx(base, abs=0.01)
    assert s["max"] == pytest.approx(base + 140, abs=0.01)
    frac = (r.flows["base_rtt_us"] > base + 1).mean()
    assert s["mean"] == pytest.approx(base + 140 * frac, rel=1e-9)
    assert abs(frac - 0.2) < 0.08
    assert rtt.threshold_bytes(200, "10Gbps") == pytest.approx(250_000)
    ta = rtt.tail_avg(r, "10Gbps")
    assert ta["tail"] == pytest.approx(rtt.threshold_bytes(s["p90"], 10e9))
    assert ta["avg"] == pytest.approx(rtt.threshold_bytes(s["mean"], 10e9))
    p = rtt.ecn_sharp_rule_of_thumb(r)
    assert p["ins_target_us"] == pytest.approx(s["p90"]) and p["pst_target_us"] == pytest.approx(s["mean"])


def test_core_errors_pickle_across_processes():
    # A ConfigError raised in a worker of a process pool must reach the parent as itself.
    import pickle

    e = pickle.loads(pickle.dumps(dcnlab.ConfigError("`x`: bad")))
    assert isinstance(e, dcnlab.ConfigError) and str(e) == "`x`: bad"


def test_acdc_from_python_counts_and_hides_ce():
    """AC/DC through the Python front: its counters reach `meta["acdc"]`, the CUBIC guests see no CE (no
    ECN reaction of their own, no retransmission), and the marking switch saw marks AC/DC fed back."""
    text = (
        STAR.replace('cc = "dctcp" }', 'cc = "cubic", handshake = true, wscale = 7, rwnd = "8MB" }\nvswitch = { kind = "acdc" }')
        .replace('flows = 200', 'flows = 100')
    )
    r = dcnlab.run(text)
    assert r.flows["finished"].all()
    a = r.meta["acdc"]
    assert a["ect_set"] > 0 and a["feedback_options"] > 0 and a["rwnd_rewrites"] > 0
    assert a["ce_bytes"] > 0 and a["ecn_cuts"] > 0
    assert r.meta["marks"] > 0
    plain = dcnlab.run(STAR)
    assert "acdc" not in plain.meta
