"""The reproduction registry: every paper's package, presets and experiments fit together, and the
generic driver runs a paper's experiment end to end through the CLI."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from dcnlab import reproduce
from dcnlab.cli import main


@pytest.mark.parametrize("name", list(reproduce.PAPERS))
def test_every_paper_has_presets_for_every_experiment(name):
    mod = reproduce.paper(name)
    assert mod.TITLE and mod.EXPERIMENTS
    table = reproduce.scales(name)
    assert {"small", "paper"} <= set(table), table.keys()
    for scale in table:
        reproduce.check(name, scale, None)  # raises if an experiment has no preset at this scale
        for exp, section in mod.EXPERIMENTS.items():
            assert list(inspect.signature(section).parameters) == ["p", "out", "runner"], (name, exp)
            assert reproduce.preset(name, exp, scale)["scale"] == scale
    assert (reproduce.experiments_dir(name) / "README.md").exists()


def test_preset_overrides_and_unknown_names():
    p = reproduce.preset("ecn_sharp", "testbed", "small", flows=123, loads=None)
    assert p["flows"] == 123 and p["loads"] == reproduce.scales("ecn_sharp")["small"]["testbed"]["loads"]
    with pytest.raises(reproduce.UnknownName, match="small, medium, paper"):
        reproduce.check("ecn_sharp", "huge", None)
    with pytest.raises(reproduce.UnknownName, match="scheduler"):
        reproduce.check("ecn_sharp", "small", ["schedulr"])
    with pytest.raises(reproduce.UnknownName, match="ecn_sharp"):
        reproduce.paper("nope")


def test_cli_reproduces_one_experiment(tmp_path: Path, capsys):
    out = tmp_path / "rep"
    assert main(["reproduce", "ecn_sharp", "--only", "scheduler", "-j", "1", "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "Packet scheduler (Fig. 20)" in page and "<img" in page and "Testbed" not in page
    assert (out / "scheduler_runs.csv").read_text().count("\n") == 1 + 3  # one seed × three schemes
