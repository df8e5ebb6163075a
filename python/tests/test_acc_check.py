"""ACC's check scenario (`experiments/acc/check.toml`): the sensitivity gate of issue 20 — before any claim
about a trained agent, fixed settings of ACC's action grid must spread the metric (mean FCT slowdown) by
at least 5 %, or no agent could show anything — and the two static baselines failing in opposite ways,
which is what the scenario is built for."""

from __future__ import annotations

import pytest

import dcnlab
from dcnlab.reproduce import experiments_dir
from dcnlab.scenario import FileScenario

CHECK = experiments_dir("acc") / "check.toml"

# Fixed (Kmin, Kmax, Pmax) settings: the two static baselines of acc.md §7 and grid points of acc.md §3
# from the most aggressive corner to the laxest.
SETTINGS = {
    "SECN1": ("5KB", "200KB", 0.01),
    "SECN2": ("100KB", "400KB", 0.2),
    "20KB/20KB/1.0": ("20KB", "20KB", 1.0),
    "40KB/80KB/0.2": ("40KB", "80KB", 0.2),
    "160KB/160KB/1.0": ("160KB", "160KB", 1.0),
    "640KB/2MB/0.05": ("640KB", "2MB", 0.05),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, float]]:
    return measure()


def measure() -> dict[str, dict[str, float]]:
    # A reduced run: half the simulated time and flows of the scenario file.
    base = FileScenario.open(CHECK).with_overrides({"stop.time": "500ms", "traffic.0.flows": 600, "seed": 2})
    out = {}
    for name, (kmin, kmax, pmax) in SETTINGS.items():
        r = dcnlab.run(base.with_overrides({"switch.aqm.1.kmin": kmin, "switch.aqm.1.kmax": kmax, "switch.aqm.1.pmax": pmax}))
        assert r.meta["drops"]["buffer"] == 0 and len(r.flows) == 600
        f = r.flows[r.flows["finished"]]
        assert len(f) == 600, f"{name}: {600 - len(f)} flows unfinished"
        out[name] = {
            "slowdown": f["slowdown"].mean(),
            "short_slowdown": f[f["size"] <= 100_000]["slowdown"].mean(),
            "large_fct_us": f[f["size"] > 1_000_000]["fct_us"].mean(),
        }
    return out


def test_sensitivity_gate_fixed_settings_spread_the_metric(runs):
    sd = {k: v["slowdown"] for k, v in runs.items()}
    spread = max(sd.values()) / min(sd.values()) - 1
    assert spread >= 0.05, f"fixed settings spread the mean slowdown by only {spread:.1%}: {sd}"
    # Not only the extreme corner: the baselines and the middle of the grid differ by ≥ 5 % too.
    middle = sd["40KB/80KB/0.2"]
    assert min(sd["SECN1"], sd["SECN2"]) >= 1.05 * middle, sd


def test_the_static_baselines_fail_in_opposite_ways(runs):
    s1, s2 = runs["SECN1"], runs["SECN2"]
    # SECN1 marks from 5 KB and starves the large flows; SECN2 keeps a standing queue the short flows wait in.
    assert s1["large_fct_us"] > 1.2 * s2["large_fct_us"], (s1, s2)
    assert s2["short_slowdown"] > 1.2 * s1["short_slowdown"], (s1, s2)
