"""The record tables come from the core's one declaration: DataFrames, saved results and docs/records.md
follow it, and the docs cannot drift from it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np

import dcnlab
from dcnlab.tables import KINDS, TABLES, markdown

ROOT = Path(__file__).resolve().parents[2]

# Rows in every table: two long-lived flows (traced) beside short ones of another transport, queue and
# link samples, a controller that lowers the threshold mid-run, and storage IOs (jobs).
EVERY_TABLE = """
seed = 3
stop = { time = "6ms" }
[topology]
kind = "dumbbell"
left = 4
right = 2
host_link = { rate = "10Gbps", delay = "2us" }
bottleneck_link = { rate = "10Gbps", delay = "2us" }
[switch]
buffer = "2MB"
queues = 2
aqm = [{ kind = "dctcp_red", threshold = "60KB" }, { kind = "tcd" }]
controller = { kind = "schedule", changes = [{ at = "2ms", aqm = { kind = "dctcp_red", threshold = "20KB" } }], queue = 0 }
pfc = { priorities = [0, 1], xoff = "20KB" }
[host]
transport = { kind = "tcp", cc = "dctcp", min_rto = "1ms" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 4, size = "inf", start = "0us", tag = "long" },
        { src = 1, dst = 4, size = "inf", start = "1ms", tag = "long" }]
[[traffic]]
kind = "flows"
list = [{ src = 2, dst = 5, size = "2MB", start = "0us", priority = 1, tag = "tcd" }]
[[traffic]]
kind = "poisson"
tag = "short"
sizes = "web_search"
load = 0.4
flows = 40
src = "0-3"
dst = "4-5"
transport = { cc = "reno", ecn = true }
[[traffic]]
kind = "storage"
pattern = "video_streaming"
servers = [4, 5]
clients = [3]
io_depth = 1
[record]
queue_sample_interval = "100us"
queues = "all"
trace_flows = [0, 1]
trace_interval = "100us"
rtt_samples = true
"""

# No controller, no traces: those tables are empty.
FEW_TABLES = """
seed = 1
stop = { all_flows_done = true, max_time = "100ms" }
[topology]
kind = "star"
hosts = 3
link = { rate = "10Gbps", delay = "1us" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "flows"
list = [{ src = 0, dst = 2, size = "100KB", start = "0us" }]
"""


def check_declared(r: dcnlab.Result) -> None:
    s = dcnlab.schema()
    for table, cols in s.groupby("table", sort=False):
        df = getattr(r, table)
        assert list(df.columns) == list(cols["column"]), table
        for name, ty in zip(cols["column"], cols["type"]):
            assert df[name].dtype.kind == KINDS[ty], f"{table}.{name}: {df[name].dtype} is not {ty}"


def test_docs_records_md_is_what_the_schema_generates():
    doc = ROOT / "docs" / "records.md"
    assert doc.read_text() == markdown(), "docs/records.md is stale: run `dcnlab schema --markdown > docs/records.md`"


def test_schema_lists_every_table_with_typed_documented_columns():
    s = dcnlab.schema()
    assert tuple(s["table"].unique()) == TABLES == dcnlab.TABLES
    assert TABLES[:5] == ("flows", "queues", "links", "flow_trace", "controller_steps")
    assert set(s["type"]) <= set(KINDS)
    assert s["meaning"].str.len().min() > 0
    assert (s.loc[s["column"].str.endswith("_us"), "unit"] == "us").all()
    assert not s.duplicated(["table", "column"]).any()


def test_every_declared_column_is_in_a_run_with_its_dtype():
    r = dcnlab.run(EVERY_TABLE)
    for t in TABLES:
        assert len(getattr(r, t)) > 0, t
    check_declared(r)
    f = r.flows
    assert set(f["transport"]) == {"tcp:dctcp", "tcp:reno+ecn"}
    assert (f.loc[f["tag"] == "long", "transport"] == "tcp:dctcp").all()
    long = f[f["size"] == np.inf]
    assert len(long) == 2 and (long["ideal_fct_us"] == np.inf).all() and long["fct_us"].isna().all()
    steps = r.controller_steps
    assert (steps["time_us"] == 2000.0).all() and steps["action"].str.startswith("dctcp_red").all()
    # RTT samples only of the traced flows, each at least the flow's base RTT.
    rtt = r.rtt_samples.merge(f[["flow_id", "base_rtt_us"]], on="flow_id")
    assert set(rtt["flow_id"]) == {0, 1} and (rtt["rtt_us"] >= rtt["base_rtt_us"] - 1e-6).all()


def test_empty_tables_keep_their_declared_dtypes_and_old_saves_load(tmp_path: Path):
    r = dcnlab.run(FEW_TABLES)
    assert len(r.flows) == 1 and len(r.queues) == 0 and len(r.controller_steps) == 0
    check_declared(r)
    r.save(tmp_path / "a")
    assert sorted(p.stem for p in (tmp_path / "a").glob("*.parquet")) == sorted(TABLES)
    check_declared(dcnlab.load(tmp_path / "a"))
    # A run saved before controller_steps existed still loads, with an empty table.
    (tmp_path / "a" / "controller_steps.parquet").unlink()
    old = dcnlab.load(tmp_path / "a")
    assert old.flows.equals(r.flows) and len(old.controller_steps) == 0
    check_declared(old)


def test_result_has_an_attribute_per_table_and_keeps_its_positional_fields():
    names = [f.name for f in dataclasses.fields(dcnlab.Result)]
    assert set(TABLES) <= set(names)
    assert names[:5] == ["flows", "queues", "links", "flow_trace", "meta"]


def test_schema_command_prints_the_docs():
    out = subprocess.run([sys.executable, "-m", "dcnlab", "schema", "--markdown"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == markdown()
    out = subprocess.run([sys.executable, "-m", "dcnlab", "schema"], capture_output=True, text=True)
    assert out.returncode == 0 and "controller_steps" in out.stdout and "transport" in out.stdout
