"""Reduced ECN♯ testbed reproduction: the paper's main effects, with the tolerances stated in
experiments/ecn_sharp/README.md."""

from __future__ import annotations

from pathlib import Path

from dcnlab.reproduce import ecn_sharp
from dcnlab.sweep import SerialRunner


def test_testbed_web_search_high_load(tmp_path: Path):
    n = ecn_sharp.testbed(
        "small", tmp_path, runner=SerialRunner(), flows=2000, loads=(0.9,), seeds=2,
        workloads=("web_search",), variations=("3x",),
    )
    row = {r["scheme"]: r for _, r in n.iterrows()}
    sharp, avg, codel = row["ECN#"], row["DCTCP-RED-AVG"], row["CoDel"]
    assert sharp["short avg"] <= 0.92, sharp
    assert sharp["short p99"] <= 0.95, sharp
    assert abs(sharp["large avg"] - 1.0) <= 0.10, sharp
    assert avg["short avg"] < min(sharp["short avg"], codel["short avg"]), (avg, sharp, codel)
    assert (tmp_path / "testbed_runs.csv").exists()
